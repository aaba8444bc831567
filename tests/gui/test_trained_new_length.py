"""A trained model's sentence of another length, typed as a person types it and Enter: the Attention tab
and the Model view paint the new size whole (every cell, every label, every head), nothing is left
unpainted, the heads keep their size when the stages above widen, and a model pass does not flash the
Model panel's moving bar. Skipped where all-MiniLM-L6-v2 is not installed."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6 import QtCore, QtTest, QtWidgets

from attn_studio.pretrained import default_model_zip
from gui_helpers import settle, wait_idle

pytestmark = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")

WINDOW_SIZE = (1366, 768)
# 16, 12, 20 and 15 tokens with [CLS] and [SEP]: each a few tokens longer or shorter than the one before.
SENTENCES = ("She read the letter twice before she answered it.",
             "Our neighbour grows tomatoes, beans and sunflowers in a tiny garden behind the house.",
             "I sat on the bank of the river and watched the water.")


@pytest.fixture
def trained(shared_window, qtbot, minilm):
    """The module's window on MiniLM ("animal", 16 tokens), at 1366 × 768; the toy model back afterwards."""
    from attn_studio.trained import TrainedStudio

    w = shared_window
    w.resize(*WINDOW_SIZE)
    w.trained.room.set_studio(TrainedStudio(minilm))
    wait_idle(qtbot, w)
    yield w
    wait_idle(qtbot, w)
    w.trained.room.use_toy()
    wait_idle(qtbot, w)


def type_and_enter(qtbot, w, text: str) -> None:
    """Type ``text`` over the sentence box and press Enter; wait until the window has drawn it in steps
    (as the window draws a trained model, one heatmap per turn), not at once."""
    box = w.findChild(QtWidgets.QLineEdit, "sentenceEdit")
    box.setText(text)
    box.textEdited.emit(text)  # what typing sends (keyClicks of a whole sentence is slow offscreen)
    QtTest.QTest.keyClick(box, QtCore.Qt.Key_Return)
    room = w.trained.room
    qtbot.waitUntil(lambda: w.studio.state.sentence == text and not room.worker.is_busy(), timeout=60_000)
    qtbot.waitUntil(lambda: not w.drawing() and not w.drawer.timer.isActive(), timeout=60_000)
    QtWidgets.QApplication.processEvents()


def cell_colour(canvas, image, i: int, j: int) -> tuple[int, int, int]:
    rect = canvas.mapFromScene(canvas.heatmap.cell_scene_rect(i, j)).boundingRect()
    # Near the cell's top left corner, clear of its outline and of the value written in its middle
    # (where the layout gives the cells room for their numbers).
    inset = max(2, min(rect.width(), rect.height()) // 6)
    colour = image.pixelColor(rect.topLeft() + QtCore.QPoint(inset, inset))
    return colour.red(), colour.green(), colour.blue()


def assert_painted_as(canvas, values: np.ndarray) -> None:
    """The canvas as painted now shows ``values`` (weights, 0..1) in their cells: the new size's last cell too."""
    lut = canvas.heatmap.colormap.getLookupTable(nPts=256, alpha=False).astype(int)
    image = canvas.grab().toImage()
    T = values.shape[0]
    for i, j in ((T - 1, T - 1), (T - 1, 0), (T // 2, T - 2)):
        got = np.array(cell_colour(canvas, image, i, j))
        index = int(np.clip(values[i, j], 0, 1) * 255)
        near = lut[max(index - 3, 0): index + 4]
        assert np.abs(near - got).max(axis=1).min() <= 6, (canvas.heatmap.title, i, j, got, lut[index])


def test_a_new_length_is_painted_whole_on_the_attention_tab(trained, qtbot):
    w = trained
    view = w.heatmap_view
    w.view_tabs.setCurrentWidget(view)
    wait_idle(qtbot, w)
    sizes = set()
    for text in SENTENCES:
        type_and_enter(qtbot, w, text)
        studio = w.studio.target
        tokens, T = list(studio.state.tokens), len(studio.state.tokens)
        sizes.add(T)
        head = studio.state.head_index
        for key in ("scores", "logits", "weights"):
            hm = view.stages[key]
            assert hm.image.image.shape == (T, T)
            # Every label, as painted: each stage keeps all of a sentence this long.
            w.grab()
            rows, cols = hm.labels()
            assert len(rows) == T and len(cols) == T and cols[0] == "[CLS]" and cols[-1] == "[SEP]", key
            assert [c.rstrip("…") for c in cols] == [t[: len(c.rstrip("…"))] for t, c in zip(tokens, cols)]
        assert_painted_as(view.canvases["weights"], studio.result.weights[head])
        for i, (hm, canvas) in enumerate(zip(view.head_maps[: view.heads_shown], view.head_canvases)):
            assert canvas.updatesEnabled(), f"head {i + 1} left unpainted"
            assert hm.image.image.shape == (T, T) and list(hm.data.col_labels) == tokens
        for i in range(2):  # the first heads, in sight below the stages
            assert_painted_as(view.head_canvases[i], studio.result.weights[i])
        assert all(c.updatesEnabled() for c in view.canvases.values())
    assert len(sizes) == 3  # three lengths, each drawn


class PaintCounter(QtCore.QObject):
    """Counts the paint events each watched widget receives."""

    def __init__(self, widgets):
        super().__init__()
        self.counts = {widget: 0 for widget in widgets}
        for widget in widgets:
            widget.installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
        if event.type() == QtCore.QEvent.Paint and obj in self.counts:
            self.counts[obj] += 1
        return False


def test_each_stage_is_painted_once_when_a_new_length_turns_its_column_labels(trained, qtbot):
    """A new sentence whose column labels stand upright where the last one's were slanted (or the other way
    round): each stage is painted once, at the height its labels need, not painted, grown and painted again."""
    w = trained
    view = w.heatmap_view
    w.view_tabs.setCurrentWidget(view)
    type_and_enter(qtbot, w, SENTENCES[0])
    stages = [view.canvases[key] for key in ("scores", "logits", "weights")]
    angles, turned = [], 0
    for text in SENTENCES[1:] + SENTENCES[:1]:
        before = [c.heatmap.bottom_axis.shown_angle for c in stages]
        counter = PaintCounter([c.viewport() for c in stages])
        type_and_enter(qtbot, w, text)
        after = [c.heatmap.bottom_axis.shown_angle for c in stages]
        angles.append(after)
        turned += after != before
        painted = [counter.counts[c.viewport()] for c in stages]
        assert painted == [1, 1, 1], (text, before, after, painted)
        for canvas in stages:  # painted at the height the labels need: each label whole, none cut
            axis = canvas.heatmap.bottom_axis
            assert axis.height() == axis._heights[90 if axis.shown_angle >= 90 else axis.ANGLE], canvas.heatmap.title
    assert turned, f"no sentence turned the column labels: {angles}"


class EventCounter(QtCore.QObject):
    """Counts the events of the given kinds each watched object receives."""

    def __init__(self, objects, kinds):
        super().__init__()
        self.kinds = kinds
        self.counts = {obj: 0 for obj in objects}
        for obj in objects:
            obj.installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
        if event.type() in self.kinds and obj in self.counts:
            self.counts[obj] += 1
        return False


def test_a_new_sentence_leaves_the_numbers_of_the_trained_head_as_they_are(trained, qtbot):
    """The Numbers beside the Attention tab show the head's W_Q, which a new sentence does not change: the
    tables a trained model fixes stay disabled and the note stays written (enabled and disabled again, and
    the note rewritten, after every edit, the whole dock was laid out and painted before the new sentence)."""
    w = trained
    numbers = w.numbers
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    type_and_enter(qtbot, w, SENTENCES[0])
    fixed = [numbers.tables[key] for key in ("embeddings", "w_o")]
    note = numbers.table_note.text()
    assert note.startswith("W_Q, W_K, W_V of layer 1, head 1 of all-MiniLM-L6-v2")
    counter = EventCounter(fixed + [numbers.table_note], (QtCore.QEvent.EnabledChange, QtCore.QEvent.Paint))
    for text in SENTENCES[1:]:
        type_and_enter(qtbot, w, text)
        assert not any(table.isEnabled() for table in fixed)
        assert numbers.table_note.text() == note
    assert all(count == 0 for count in counter.counts.values()), {
        getattr(obj, "objectName", lambda: "")() or type(obj).__name__: n for obj, n in counter.counts.items()}
    # Another head: the note follows it.
    w.trained.room.select(head=2)
    wait_idle(qtbot, w)
    assert "layer 1, head 3 of all-MiniLM-L6-v2" in numbers.table_note.text()


class EventOrder(QtCore.QObject):
    """The order in which watched objects receive events of the given kinds: [(name, kind), ...]."""

    def __init__(self, named: dict, kinds):
        super().__init__()
        self.kinds, self.named, self.seen = kinds, named, []
        for obj in named:
            obj.installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
        if event.type() in self.kinds and obj in self.named:
            self.seen.append((self.named[obj], event.type()))
        return False


def test_a_new_length_paints_the_stages_before_the_heads_are_laid_out_again(trained, qtbot):
    """A shorter sentence leaves room for the heads' grid under the stages and resizes every head's map: once
    the numbers come, the three stages are painted first, and only then are the heads still to lay out
    resized (a dozen plots laid out in the turn that laid out the stages made it a stall of 40-60 ms before
    the new sentence showed); no stage is painted before its numbers come."""
    w = trained
    view = w.heatmap_view
    w.view_tabs.setCurrentWidget(view)
    settle(w)
    # The Numbers brought back beside the tab (they step aside for it on a laptop), so that the heads' grid
    # has little height and a sentence's length changes the heads' maps.
    for dock in (w.tables_dock, w.variance_dock):
        button = w.statusBar().findChild(QtWidgets.QToolButton, f"{dock.objectName()}Back")
        if button is not None and button.isVisible():
            button.click()
    settle(w)
    try:
        _stages_then_heads(w, qtbot, view)
    finally:
        w.reset_layout()
        w.resize(*WINDOW_SIZE)
        settle(w)


def _stages_then_heads(w, qtbot, view) -> None:
    type_and_enter(qtbot, w, SENTENCES[1])  # 20 tokens
    heads = view.head_canvases[: view.heads_shown]
    named = {view.canvases[key].viewport(): key for key in ("scores", "logits", "weights")}
    named.update({canvas: f"head {i + 1}" for i, canvas in enumerate(heads)})
    order = EventOrder(named, (QtCore.QEvent.Paint, QtCore.QEvent.Resize))
    # The heads in sight may be laid out while the model runs (before its numbers come); from the numbers on
    # (the shown layer's, drawn before the pass ends, or the install), the stages are painted before any head
    # is resized.
    room = w.trained.room
    real_early = room.draw_early

    def draw_early(state, result, drawn):
        order.seen.append(("installed", None))
        return real_early(state, result, drawn)

    room.draw_early = draw_early
    unsubscribe = w.studio.target.subscribe(lambda change: order.seen.append(("installed", None)))
    sizes = [canvas.size() for canvas in heads]
    try:
        type_and_enter(qtbot, w, SENTENCES[0])  # 12 tokens: the stages shorter, the heads' maps resized
    finally:
        unsubscribe()
        room.draw_early = real_early
    assert [canvas.size() for canvas in heads] != sizes, "the heads kept their size: nothing to order"
    installed = next(i for i, (name, _) in enumerate(order.seen) if name == "installed")
    assert not any(kind == QtCore.QEvent.Paint and not name.startswith("head")
                   for name, kind in order.seen[:installed]), "a stage was painted before its numbers came"
    order.seen = order.seen[installed + 1:]
    stage_paints = [i for i, (name, kind) in enumerate(order.seen)
                    if kind == QtCore.QEvent.Paint and not name.startswith("head")]
    head_resizes = [i for i, (name, kind) in enumerate(order.seen)
                    if kind == QtCore.QEvent.Resize and name.startswith("head")]
    assert {order.seen[i][0] for i in stage_paints} == {"scores", "logits", "weights"}
    assert head_resizes and max(stage_paints) < min(head_resizes), order.seen
    assert view.heads_widget.isVisible() == view.heads_scroll.isVisible()  # the heads back in their place
    for i, canvas in enumerate(heads[:2]):  # the first heads, in sight, painted with the new sentence's numbers
        if canvas.visibleRegion().isEmpty():
            continue
        assert_painted_as(canvas, w.studio.target.result.weights[i])


def test_the_heads_keep_their_size_when_a_longer_sentence_widens_the_stages(trained, qtbot):
    w = trained
    view = w.heatmap_view
    w.view_tabs.setCurrentWidget(view)
    type_and_enter(qtbot, w, SENTENCES[0])
    short = [c.width() for c in view.head_canvases[: view.heads_shown]]
    assert short and min(short) > 0
    type_and_enter(qtbot, w, SENTENCES[1])  # 12 → 20 tokens: the stages' labels need more room
    assert [c.width() for c in view.head_canvases[: view.heads_shown]] == short
    # The heads' grid is as wide as the view shows (or its least width), not as the stages above.
    grid = view.heads_widget
    assert grid.width() <= max(view.scroll.viewport().width(), grid.minimumSizeHint().width())


def test_a_new_length_is_painted_whole_on_the_model_view(trained, qtbot):
    w = trained
    room = w.trained.room
    view = room.model_view
    w.view_tabs.setCurrentWidget(view)
    wait_idle(qtbot, w)
    for text in SENTENCES[:2]:
        type_and_enter(qtbot, w, text)
        studio = w.studio.target
        T = len(studio.state.tokens)
        layers, heads = studio.model.layers, studio.model.heads
        assert list(view.data.tokens) == list(studio.state.tokens)
        gap = max(1, T // 8)
        assert view.image.image.shape == (layers * (T + gap) - gap, (heads + 1) * (T + gap) - gap)
        assert f"{T} tokens" in view.header.text()
        # The last head's cell of the last layer, painted: it ends where T says, the gap after it is empty.
        image = view.canvas.grab().toImage()
        cell = view.cell_rect(layers - 1, heads - 1)

        def pixel(x, y):
            point = view.canvas.mapFromScene(view.plot.vb.mapViewToScene(QtCore.QPointF(x, y)))
            colour = image.pixelColor(point)
            return colour.red(), colour.green(), colour.blue()

        inside = pixel(cell.right() - 0.5, cell.bottom() - 0.5)
        right_gap = pixel(cell.right() + gap / 2, cell.bottom() - 0.5)
        lower_gap = pixel(cell.right() - 0.5, cell.top() - gap / 2)  # between this layer and the one above
        assert right_gap == lower_gap and inside != right_gap


def test_a_model_pass_does_not_flash_the_moving_bar_but_a_long_one_shows_it(trained, qtbot):
    w = trained
    room = w.trained.room
    bar = w.findChild(QtWidgets.QProgressBar, "modelBusy")
    release = threading.Event()
    room.worker.submit(lambda: release.wait(30), kind="run")
    try:
        assert room.worker.is_busy() and not bar.isVisibleTo(w)  # a pass of a sentence: no bar, no relayout
        qtbot.waitUntil(lambda: bar.isVisibleTo(w), timeout=10_000)  # still working a while later: it says so
    finally:
        release.set()
    qtbot.waitUntil(lambda: not room.worker.is_busy(), timeout=10_000)
    assert not bar.isVisibleTo(w)


class HeldCompute:
    """Every model pass of the studio off the GUI thread waits until ``release()`` (or raises ``error`` when
    set): the window as it stands while a new sentence is being computed."""

    def __init__(self, monkeypatch, studio):
        self.go, self.error, self.started = threading.Event(), None, threading.Event()
        real = type(studio).compute

        def compute(inner, pending, **kwargs):
            if threading.current_thread() is threading.main_thread():
                return real(inner, pending, **kwargs)  # a selection alone, installed at once: nothing to hold
            self.started.set()
            self.go.wait(30)
            if self.error is not None:
                raise self.error
            return real(inner, pending, **kwargs)

        monkeypatch.setattr(type(studio), "compute", compute)

    def release(self) -> None:
        self.go.set()


def _type(w, text: str) -> None:
    box = w.findChild(QtWidgets.QLineEdit, "sentenceEdit")
    box.setText(text)
    box.textEdited.emit(text)
    QtTest.QTest.keyClick(box, QtCore.Qt.Key_Return)


def _stage_labels(view) -> list:
    return [list(view.stages[key].bottom_axis._full) for key in ("scores", "logits", "weights")]


def test_a_new_sentence_is_laid_out_while_it_is_computed_and_painted_once_its_numbers_come(
        trained, qtbot, monkeypatch):
    """While the model runs on a new sentence, the Attention tab is already laid out for its tokens (the
    labels, the stages' sizes) and shows nothing of it unpainted-over: the stages are held, no paint reaches
    them, until the numbers come; then each is painted with the new sentence's numbers."""
    w = trained
    view = w.heatmap_view
    w.view_tabs.setCurrentWidget(view)
    type_and_enter(qtbot, w, SENTENCES[0])  # 12 tokens
    stages = [view.canvases[key] for key in ("scores", "logits", "weights")]
    old_tokens = list(w.studio.state.tokens)
    held = HeldCompute(monkeypatch, w.studio.target)
    counter = PaintCounter([c.viewport() for c in stages])
    _type(w, SENTENCES[1])  # 20 tokens
    try:
        assert held.started.wait(10)
        for _ in range(6):  # the turns the layout takes, while the model still runs
            QtWidgets.QApplication.processEvents()
        new_tokens = list(w.studio.target.model.encode(SENTENCES[1]).tokens)
        assert list(w.studio.state.tokens) == old_tokens  # the numbers have not come
        assert _stage_labels(view) == [new_tokens] * 3
        assert not any(c.updatesEnabled() for c in stages)
        assert all(counter.counts[c.viewport()] == 0 for c in stages)
        # The whole panel keeps its last picture: no half-laid-out frame (old cells, blank places) shows.
        assert not view.updatesEnabled() and not view.heads_scroll.updatesEnabled()
        assert view.canvases["scores"].minimumHeight() > 0
    finally:
        held.release()
    qtbot.waitUntil(lambda: w.studio.state.sentence == SENTENCES[1] and not w.trained.room.worker.is_busy(),
                    timeout=30_000)
    wait_idle(qtbot, w)
    assert all(c.updatesEnabled() for c in stages) and view.updatesEnabled() and view.heads_scroll.updatesEnabled()
    assert all(counter.counts[c.viewport()] >= 1 for c in stages)
    assert_painted_as(view.canvases["weights"], w.studio.target.result.weights[w.studio.state.shown_head])


def test_a_sentence_that_fails_or_is_typed_back_leaves_the_tab_as_it_was(trained, qtbot, monkeypatch):
    """Laid out for a sentence whose numbers never come (the model fails, or the lecturer types the old
    sentence back before they come): the stages show the old sentence's labels again, painted, nothing held."""
    w = trained
    view = w.heatmap_view
    w.view_tabs.setCurrentWidget(view)
    type_and_enter(qtbot, w, SENTENCES[0])
    stages = [view.canvases[key] for key in ("scores", "logits", "weights")]
    old_labels = _stage_labels(view)
    room = w.trained.room

    # The model fails: said, and the old sentence's labels back.
    held = HeldCompute(monkeypatch, w.studio.target)
    held.error = ValueError("the model could not run this")
    _type(w, SENTENCES[1])
    assert held.started.wait(10)
    QtWidgets.QApplication.processEvents()
    assert _stage_labels(view) != old_labels
    held.release()
    qtbot.waitUntil(lambda: not room.worker.is_busy(), timeout=30_000)
    wait_idle(qtbot, w)
    assert w.studio.state.sentence == SENTENCES[0]
    assert _stage_labels(view) == old_labels
    assert all(c.updatesEnabled() for c in stages) and view.updatesEnabled()
    assert "could not run" in room.panel.status.text()

    # Typed back while the new one is computed: the new one's numbers never show.
    held.error, held.go, held.started = None, threading.Event(), threading.Event()
    _type(w, SENTENCES[2])
    assert held.started.wait(10)
    QtWidgets.QApplication.processEvents()
    _type(w, SENTENCES[0])
    held.release()
    qtbot.waitUntil(lambda: not room.worker.is_busy(), timeout=30_000)
    wait_idle(qtbot, w)
    for _ in range(5):
        QtWidgets.QApplication.processEvents()
    assert w.studio.state.sentence == SENTENCES[0]
    assert _stage_labels(view) == old_labels
    assert all(c.updatesEnabled() for c in stages)


def test_the_shown_layer_is_drawn_before_the_pass_ends_and_not_drawn_again_when_installed(trained, qtbot):
    """A new sentence on MiniLM's first layer: its heatmaps are drawn from that layer's numbers while the
    rest of the pass waits (the studio still holds the old sentence), with the new tokens and the numbers
    the install then brings; the install draws nothing again."""
    w = trained
    view = w.heatmap_view
    w.view_tabs.setCurrentWidget(view)
    type_and_enter(qtbot, w, SENTENCES[0])
    room, studio = w.trained.room, w.studio.target
    assert studio.state.layer_index == 0
    real_early = room.draw_early
    seen = []

    def draw_early(state, result, drawn):
        def check():  # the drawing done: the pass still waits for it, nothing installed yet
            seen.append((studio.state.sentence, state, result, _stage_labels(view),
                         np.array(view.stages["scores"].data.values), np.array(view.head_maps[5].data.values)))
            drawn()
        return real_early(state, result, check)

    room.draw_early = draw_early
    drawn = []
    real_set_data = type(view.stages["scores"]).set_data

    def set_data(heatmap, *args, **kwargs):
        if heatmap is view.stages["scores"]:
            drawn.append(heatmap)
        return real_set_data(heatmap, *args, **kwargs)

    type(view.stages["scores"]).set_data = set_data
    try:
        type_and_enter(qtbot, w, SENTENCES[2])
    finally:
        room.draw_early = real_early
        type(view.stages["scores"]).set_data = real_set_data
    assert len(seen) == 1, "the first layer was not drawn before the pass ended"
    shown_sentence, state, result, labels, scores, head_6 = seen[0]
    assert shown_sentence == SENTENCES[0]  # drawn while the studio still held the old sentence
    tokens = list(studio.state.tokens)
    assert state is studio.state and labels == [tokens] * 3
    assert result is studio.result  # the very numbers installed after it
    np.testing.assert_array_equal(scores, studio.result.scores[studio.state.shown_head])
    np.testing.assert_array_equal(head_6, studio.result.weights[5])
    assert len(drawn) == 1, "the install drew the stages again"
    assert_painted_as(view.canvases["weights"], studio.result.weights[studio.state.shown_head])


def test_a_sentence_drawn_early_whose_pass_then_fails_leaves_the_tab_as_it_was(trained, qtbot, monkeypatch):
    """The shown layer drawn early, then the rest of the pass fails: the Attention tab shows the studio's own
    sentence again, and says why."""
    from attn_studio.trained import TrainedStudio

    w = trained
    view = w.heatmap_view
    w.view_tabs.setCurrentWidget(view)
    type_and_enter(qtbot, w, SENTENCES[0])
    old_labels = _stage_labels(view)
    old_scores = np.array(view.stages["scores"].data.values)
    real = TrainedStudio.compute
    early = []

    def compute(studio, pending, shown=None):
        def failing(result):
            shown(result)
            early.append(result)
            raise ValueError("the model failed after its first layer")
        return real(studio, pending, shown=None if shown is None else failing)

    monkeypatch.setattr(TrainedStudio, "compute", compute)
    _type(w, SENTENCES[1])
    room = w.trained.room
    qtbot.waitUntil(lambda: bool(early) and not room.worker.is_busy(), timeout=30_000)
    wait_idle(qtbot, w)
    for _ in range(5):
        QtWidgets.QApplication.processEvents()
    assert w.studio.state.sentence == SENTENCES[0]
    assert _stage_labels(view) == old_labels
    np.testing.assert_array_equal(view.stages["scores"].data.values, old_scores)
    assert view.drawing.early is None
    assert "failed after its first layer" in room.panel.status.text()
