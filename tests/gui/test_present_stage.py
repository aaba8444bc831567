"""Present (F5): every view as a stage for the room, read as a viewer sees it.

The stage is laid out for a 1280×720 projector (its sizes follow its own height), and every text it
draws is measured in an SVG rendering (``stage_measure``): token labels at least 30 px, cell values
at least 24 px, titles at least as large as the labels, the control strip within 12 % of the height.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.gui.files import export
from attn_studio.gui.lecture import present as present_module
from gui_helpers import settle
from stage_measure import drawn_texts

WINDOW_PRESET = "animal"
WINDOW_SIZE = (1280, 720)
PROJECTOR = QtCore.QRect(0, 0, 1280, 720)
FULL_HD = QtCore.QRect(0, 0, 1920, 1080)
NUMBER = re.compile(r"^[−-]?\d+\.\d+$")


@pytest.fixture
def window(shared_window):
    w = shared_window
    yield w
    w.present.leave()
    settle(w)


def present(w, view, rect=PROJECTOR):
    stage = w.present.enter(view, geometry=rect)
    settle(w)
    return stage


def sizes(stage, tokens):
    texts = drawn_texts(stage)
    labels = [px for t, px in texts if t in tokens]
    values = [px for t, px in texts if NUMBER.match(t)]
    return texts, labels, values


@pytest.mark.parametrize("view", ["Attention", "Heads → output", "Compare", "Positions"])
@pytest.mark.parametrize("rect", [PROJECTOR, FULL_HD], ids=["720p", "1080p"])
def test_heatmap_views_read_from_the_back_row(window, view, rect):
    w = window
    w.studio.update(heads=2)
    settle(w)
    stage = present(w, view, rect)
    assert stage.size() == rect.size()
    tokens = set(w.studio.state.query_tokens)
    texts, labels, values = sizes(stage, tokens)
    scale = rect.height() / 720
    assert labels and min(labels) >= 30 * scale - 0.5, (view, sorted(labels)[:5])
    assert values and min(values) >= 24 * scale - 0.5, (view, sorted(values)[:5])
    title = stage.findChild(QtWidgets.QLabel, "presentTitle")
    assert title.font().pixelSize() >= min(labels)
    # Every row and column shown is labelled, and the figure is whole inside the body.
    sheet = w.present.sheet
    for hm in sheet.heatmaps:
        rows, cols = hm.data.values.shape
        assert len(hm.left_axis.labels()) == rows or not hm.left_axis.style["showValues"]
        assert len(hm.bottom_axis.labels()) == cols
        assert hm.left_axis.visible_step() == 1 and hm.bottom_axis.visible_step() == 1
    body = stage.findChild(QtWidgets.QWidget, "presentBody")
    holder = sheet.parentWidget()
    assert body.rect().contains(QtCore.QRect(holder.mapTo(body, QtCore.QPoint(0, 0)), holder.size()))


def test_the_attention_stage_shows_the_engine_s_weights_and_pages_through_the_stages(window):
    w = window
    stage = present(w, "Attention")
    p = w.present
    titles = []
    for _ in range(p.pages):
        hm = p.sheet.heatmaps[0]
        titles.append(hm.title)
        QTest.keyClick(stage, QtCore.Qt.Key_Right)
        settle(w)
    assert p.pages == 3 and titles[0].startswith("scores") and titles[-1].startswith("weights")
    # The weights page: the cells are the model's weights, in the window of rows it names.
    hm = p.sheet.heatmaps[0]
    shown = hm.data.values
    q = w.studio.state.query_index
    row = list(hm.data.row_labels).index(w.studio.state.query_tokens[q])
    start = q - row
    full = w.studio.result.weights[w.studio.state.shown_head]
    # The columns too are a window of the keys (around the query where the cells are wide, at four
    # decimals): the one whose labels the figure names and whose cells are the model's weights.
    keys, cols = list(w.studio.state.key_tokens), shown.shape[1]
    windows = [c for c in range(len(keys) - cols + 1) if keys[c:c + cols] == list(hm.data.col_labels)
               and np.array_equal(shown, full[start:start + shown.shape[0], c:c + cols])]
    assert windows, (list(hm.data.col_labels), keys)


def test_a_long_sentence_is_windowed_around_the_query_never_shrunk(window):
    w = window
    w.studio.update(sentence="one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                             "fifteen sixteen seventeen eighteen nineteen twenty")
    settle(w)
    w.studio.select(query=14)
    stage = present(w, "Attention")
    caption = stage.findChild(QtWidgets.QLabel, "presentCaption").text()
    assert re.search(r"queries \d+–\d+, keys \d+–\d+ of 20", caption)  # both ranges said
    hm = w.present.sheet.heatmaps[0]
    assert "fifteen" in hm.data.row_labels and len(hm.data.row_labels) < 20
    _, labels, _ = sizes(stage, set(w.studio.state.query_tokens))
    assert min(labels) >= 29.5
    QTest.keyClick(stage, QtCore.Qt.Key_Down)
    settle(w)
    assert w.studio.state.query_index == 15
    assert "sixteen" in w.present.sheet.heatmaps[0].data.row_labels


def test_step_by_step_shows_one_whole_step_at_a_time(window):
    w = window
    stage = present(w, "Step by step")
    title = stage.findChild(QtWidgets.QLabel, "presentTitle")
    first = title.text()
    assert first.startswith("Step 1 of")
    QTest.keyClick(stage, QtCore.Qt.Key_Right)
    QTest.keyClick(stage, QtCore.Qt.Key_Right)
    settle(w)
    assert title.text().startswith("Step 3 of") and w.pipeline_view.current_step == 2
    table = w.present.steps_table
    for r in range(table.rowCount()):
        text = table.item(r, 0).text()
        assert "…" not in text
        width = table.fontMetrics().horizontalAdvance(text)
        assert width <= table.columnWidth(0) or table.rowHeight(r) > table.fontMetrics().height() * 1.5
    texts = drawn_texts(stage)
    keys = set(w.studio.state.key_tokens)
    labels = [px for t, px in texts if t in keys]
    numbers = [px for t, px in texts if re.search(r"\d\.\d", t) and t != title.text()]
    assert labels and min(labels) >= 29.5
    assert numbers and min(numbers) >= 23.5


@pytest.mark.parametrize("view", ["Geometry", "Why divide by √d_k"])
def test_lent_views_come_to_the_stage_large_and_go_back(window, view):
    w = window
    widget = w.geometry_view if view == "Geometry" else w.variance_plot
    parent = widget.parentWidget()
    stage = present(w, view)
    assert stage.isAncestorOf(widget)
    texts = drawn_texts(stage)
    if view == "Geometry":
        tokens = set(w.studio.state.query_tokens)
        labels = [px for t, px in texts if t in tokens]
        assert labels and min(labels) >= 29.5
    ticks = [px for t, px in texts if re.match(r"^[−-]?\d+(\.\d+)?$", t)]
    assert ticks and min(ticks) >= 23.5
    w.present.leave()
    settle(w)
    assert widget.parentWidget() is parent


def test_strip_controls_change_the_model_and_keys_work(window):
    w = window
    stage = present(w, "Attention")
    strip = stage.findChild(QtWidgets.QFrame, "presentStrip")
    assert strip.height() <= 0.12 * stage.height()
    heads = strip.findChild(QtWidgets.QSpinBox, "present_heads")
    heads.setValue(4)
    settle(w)
    assert w.studio.state.heads == 4
    causal = strip.findChild(QtWidgets.QCheckBox, "present_causal")
    causal.setChecked(True)
    settle(w)
    assert w.studio.state.causal
    assert w.present.sheet.heatmaps[0].data.masked.any()
    stage.setFocus()
    QTest.keyClick(stage, QtCore.Qt.Key_C)
    settle(w)
    assert not w.studio.state.causal
    scale = w.studio.state.scale
    QTest.keyClick(stage, QtCore.Qt.Key_S)
    settle(w)
    assert w.studio.state.scale != scale
    QTest.keyClick(stage, QtCore.Qt.Key_3)
    settle(w)
    assert w.studio.state.shown_head == 2
    QTest.keyClick(stage, QtCore.Qt.Key_Z, QtCore.Qt.ControlModifier)
    settle(w)
    assert w.studio.state.scale == scale
    QTest.keyClick(stage, QtCore.Qt.Key_H)
    settle(w)
    assert not strip.isVisible()
    QTest.keyClick(stage, QtCore.Qt.Key_H)
    settle(w)
    assert strip.isVisible()
    sentence = strip.findChild(QtWidgets.QLineEdit, "presentSentence")
    sentence.setText("A man has kept money in the bank")
    sentence.textEdited.emit(sentence.text())
    settle(w)
    assert w.studio.state.sentence == "A man has kept money in the bank"
    assert "bank" in w.present.sheet.heatmaps[0].data.col_labels


def test_pagedown_goes_to_the_next_view_and_esc_leaves(window):
    w = window
    stage = present(w, "Attention")
    views = w.present.views()
    assert views[:2] == ["Attention", "Step by step"]
    assert any(v.startswith("Training: ") for v in views)
    pages = w.present.pages
    for _ in range(pages):  # the view's pages first (a clicker's PageDown), then the next view
        QTest.keyClick(stage, QtCore.Qt.Key_PageDown)
        settle(w)
    assert w.present.view == "Step by step"
    QTest.keyClick(stage, QtCore.Qt.Key_PageUp)
    settle(w)
    assert w.present.view == "Attention" and w.present.page == pages - 1
    QTest.keyClick(stage, QtCore.Qt.Key_Escape)
    settle(w)
    assert not w.present.active and not w.present_action.isChecked()


def test_f5_presents_the_current_tab_and_edits_in_the_window_follow(window):
    w = window
    w.view_tabs.setCurrentWidget(w.compare_view)
    settle(w)
    action = w.findChild(type(w.present_action), "presentAction")
    assert action is w.present_action and action.shortcut().toString() == "F5"
    action.trigger()
    settle(w)
    assert w.present.active and w.present.view == "Compare"
    before = w.present.sheet.heatmaps[0].data.values.copy()
    w.studio.update(temperature=0.5)
    settle(w)
    after = w.present.sheet.heatmaps[0].data.values
    assert not np.array_equal(before, after)


def test_a_training_panel_plays_on_the_stage_and_goes_back(window, qtbot):
    w = window
    name = next(v for v in w.present.views() if v.startswith("Training: "))
    stage = present(w, name)
    panel = w.present.training_panel(name)
    assert stage.isAncestorOf(panel)
    step = stage.findChild(QtWidgets.QPushButton, "present_step")
    step.click()
    qtbot.waitUntil(lambda: panel.runner.step_count >= 1 if hasattr(panel.runner, "step_count") else True,
                    timeout=10_000)
    texts = drawn_texts(stage)
    title = stage.findChild(QtWidgets.QLabel, "presentTitle")
    assert title.font().pixelSize() >= 30
    ticks = [px for t, px in texts if re.match(r"^[−-]?\d+(\.\d+)?$", t)]
    assert ticks and min(ticks) >= 23.5
    w.present.leave()
    settle(w)
    assert not stage.isAncestorOf(panel) and w.window().isAncestorOf(panel)
    panel.pause()


def test_a_training_plot_s_legend_is_a_key_under_it_on_the_stage_not_over_its_curves(window, qtbot):
    from attn_studio.gui.qt.pg import pg

    w = window
    name = next(v for v in w.present.views() if v.startswith("Training: ") and "two layers" in v)
    stage = present(w, name)
    panel = w.present.training_panel(name)
    legends = [item for view in panel.findChildren(pg.GraphicsView) for item in view.scene().items()
               if isinstance(item, pg.LegendItem)]
    assert legends
    shown = [legend for legend in legends if legend.isVisible() and legend.parentItem().isVisible()]
    assert not shown, "a legend is drawn over the curves on the stage"
    texts = drawn_texts(stage)
    key = [(t, px) for t, px in texts if "two layers, repeat" in t or "one layer, repeat" in t]
    assert key and min(px for _, px in key) >= 23.5, key
    w.present.move_page(1)  # the next plot: its own key
    settle(w)
    second = [t for t, _ in drawn_texts(stage)]
    assert "two layers, induction" in second and "two layers, repeat" not in second, second
    w.present.leave()
    settle(w)
    assert all(legend.isVisible() for legend in legends), "the window's legends come back"


def test_stage_sizes_follow_the_screen_height():
    small, large = present_module.stage_sizes(720), present_module.stage_sizes(2160)
    assert small["label"] >= 30 and small["value"] >= 24 and small["title"] >= small["label"]
    assert large["label"] == pytest.approx(3 * small["label"], abs=3)
    assert present_module.token_window(20, 7, 14) == (11, 18)
    assert present_module.token_window(5, 7, 3) == (0, 5)


def dark_share(image: QtGui.QImage) -> float:
    """The share of an image's pixels that are (nearly) black."""
    grey = image.convertToFormat(QtGui.QImage.Format_Grayscale8)
    pixels = np.frombuffer(grey.constBits(), np.uint8).reshape(grey.height(), grey.bytesPerLine())[:, :grey.width()]
    return float((pixels < 20).mean())


def test_the_window_under_the_stage_is_drawn_again_when_it_is_seen(window):
    """On one screen the stage hides the window: an edit made meanwhile draws the stage at once, and the
    window (its tab and its tables) once it is brought in front of the stage, or the stage is left."""
    w = window
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    w.numbers.table_tabs.setCurrentIndex(0)  # the embeddings X
    settle(w)
    embeddings = w.numbers.models["embeddings"]
    word = w.studio.state.key_tokens[0]

    def edit(heads: int, value: float) -> None:
        w.studio.set_embedding(word, 0, str(value))
        w.studio.update(heads=heads)
        settle(w)
        # The stage follows the edit at once: its heatmaps are the engine's numbers (a window of the tokens).
        assert f"of {heads}" in w.present.stage.title.text()
        shown = w.present.sheet.heatmaps[0].data.values  # the page's first: scores (or all three when they fit)
        scores = w.studio.result.scores[w.studio.state.head_index]
        (r, c), (n, m) = shown.shape, scores.shape
        assert any(np.allclose(shown, scores[i:i + r, j:j + c]) for i in range(n - r + 1) for j in range(m - c + 1))

    def window_shows(heads: int, value: float) -> bool:
        return (f"of {heads}" in w.pipeline_view.header.text()
                and float(embeddings.data(embeddings.index(0, 0), QtCore.Qt.EditRole)) == value)

    assert window_shows(2, float(w.studio.embeddings([word])[0, 0]))
    stage = present(w, "Attention")
    assert w.present.covers_window()
    edit(3, 1.25)
    assert not window_shows(3, 1.25)  # hidden: it waits
    w.activateWindow()  # brought in front of the stage: drawn now, and live while in front
    QtWidgets.QApplication.processEvents()  # a turn of the event loop (settle would draw whatever waits)
    assert not w.present.covers_window() and w.updatesEnabled()
    assert window_shows(3, 1.25)
    stage.activateWindow()  # back to the stage: the window is hidden again
    settle(w)
    assert w.present.covers_window() and not w.updatesEnabled()
    edit(4, -0.75)
    assert not window_shows(4, -0.75)
    # A picture of the window taken meanwhile (grabbed, or File → Export → Whole window) shows it drawn
    # and up to date, not the black boxes of widgets that were not painted.
    assert dark_share(w.grab().toImage()) < 0.05 and window_shows(4, -0.75)
    stage.activateWindow()
    settle(w)
    assert w.present.covers_window() and not w.updatesEnabled()
    edit(5, 0.5)
    picture = export.render_panel(export.find_panel(w, "window"), scale=1, title="")
    assert dark_share(picture) < 0.05 and window_shows(5, 0.5)
    w.present.leave()
    QtWidgets.QApplication.processEvents()
    assert w.updatesEnabled() and window_shows(5, 0.5)


def test_a_table_of_the_hidden_window_written_to_is_read_first(window):
    """A table waiting under the stage (a shorter sentence since) and written to by a script: the edit
    goes to the table as it is now, and a row that is gone is refused, without an error."""
    w = window
    w.numbers.table_tabs.setCurrentIndex(0)  # the embeddings X
    settle(w)
    embeddings = w.numbers.models["embeddings"]
    rows = embeddings.rowCount()
    present(w, "Attention")
    assert w.present.covers_window()
    w.studio.update(sentence="three short words")
    settle(w)
    assert embeddings.rowCount() == rows > 3  # it waits, as painted before
    assert not embeddings.setData(embeddings.index(rows - 1, 0), "1.5")
    assert embeddings.rowCount() == 3
    assert embeddings.setData(embeddings.index(2, 0), "1.5")
    assert w.studio.embeddings(["words"])[0, 0] == 1.5


def test_a_soft_pointer_follows_the_mouse_on_the_stage(window):
    w = window
    stage = present(w, "Attention")
    pointer = stage.findChild(QtWidgets.QWidget, "presentPointer")
    assert pointer.centre is None and pointer.geometry() == stage.rect()
    body = stage.findChild(QtWidgets.QWidget, "presentBody")
    # A move sent to the stage's own widget (the offscreen platform has no window stacking for
    # QTest.mouseMove to find the stage above the window by).
    local = QtCore.QPointF(200, 150)
    move = QtGui.QMouseEvent(QtCore.QEvent.MouseMove, local, QtCore.QPointF(body.mapToGlobal(local.toPoint())),
                             QtCore.Qt.NoButton, QtCore.Qt.NoButton, QtCore.Qt.NoModifier)
    QtWidgets.QApplication.sendEvent(body, move)
    settle(w)
    assert pointer.centre == body.mapTo(stage, QtCore.QPoint(200, 150))
    image = stage.grab().toImage()
    colour = image.pixelColor(pointer.centre)
    assert colour.red() > colour.blue() + 20  # a yellow tint where the pointer is


def test_a_training_panel_s_heatmaps_are_pages_with_every_token_labelled(window, qtbot):
    w = window
    name = next(v for v in w.present.views() if v.startswith("Training: ") and "two layers" in v)
    stage = present(w, name)
    panel = w.present.training_panel(name)
    for _ in range(3):
        stage.findChild(QtWidgets.QPushButton, "present_step").click()
        qtbot.wait(50)
    qtbot.waitUntil(lambda: panel.heatmaps[1][0].data is not None, timeout=20_000)
    settle(w)
    w.present.render()
    pages = w.present.pages
    assert pages >= 2 + 4  # the curves, then the four heads
    for _ in range(pages - 1):
        QTest.keyClick(stage, QtCore.Qt.Key_Right)
    settle(w)
    assert not stage.isAncestorOf(panel.graphics) or not panel.graphics.isVisible()
    hm = w.present.sheet.heatmaps[0]
    assert hm.title.startswith("two layers: layer 2 head 2")
    assert len(hm.data.row_labels) < 32 and hm.left_axis.visible_step() == 1 and hm.bottom_axis.visible_step() == 1
    texts = drawn_texts(stage)
    letters = [px for t, px in texts if len(t) == 1 and t.isalnum() and t in set(hm.data.row_labels)]
    assert letters and min(letters) >= 29.5
    first = list(hm.data.row_labels)
    QTest.keyClick(stage, QtCore.Qt.Key_Down)
    settle(w)
    moved = list(w.present.sheet.heatmaps[0].data.row_labels)
    assert moved != first or len(first) == 32
    w.present.leave()
    settle(w)
    assert panel.graphics.isVisibleTo(panel)
    panel.pause()


@pytest.mark.parametrize("rect", [PROJECTOR, FULL_HD], ids=["720p", "1080p"])
def test_the_root_dk_plots_come_one_at_a_time_with_their_whole_caption(window, rect):
    w = window
    stage = present(w, "Why divide by √d_k", rect)
    p = w.present
    assert p.pages == 2
    plot = w.variance_plot
    titles = []
    for page in range(2):
        p.page = page
        p.render()
        settle(w)
        shown = [item for item in (plot.variance, plot.saturation) if item.isVisible()]
        assert len(shown) == 1
        titles.append(shown[0])
        # Nothing of the plot's explanation is cut: its label is as tall as its words need.
        caption = plot.caption
        assert caption.height() >= caption.heightForWidth(caption.width())
        line = stage.findChild(QtWidgets.QLabel, "presentCaption")
        assert line.fontMetrics().horizontalAdvance(line.text()) <= line.width()
    assert titles[0] is not titles[1]
    w.present.leave()
    settle(w)
    assert plot.variance.isVisible() and plot.saturation.isVisible()


@pytest.mark.parametrize("rect", [PROJECTOR, FULL_HD], ids=["720p", "1080p"])
def test_the_sqrt_dk_plot_on_the_stage_labels_its_last_d_k(window, rect):
    """The √d_k plots end at d_k 1024: at the stage's text size the axis still has room for its label."""
    stage = present(window, "Why divide by √d_k", rect)
    texts = [t for t, _ in drawn_texts(stage)]
    assert {"1", "4", "16", "64", "256", "1024"} <= set(texts), texts
