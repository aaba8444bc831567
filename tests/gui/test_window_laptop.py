"""The window on a projector (1280×720) and on a student's laptop (1366×768), in the layout it chooses on
such a screen (``fit_to_screen``), read as a viewer sees it: the Attention tab's scores, logits and weights
whole with their colour bars and no scroll bar at any head count, every cell's value written, every token
label at least 14 px (the heatmaps, the Numbers tables, Step by step, Positions), a head's small map naming
its query row, and MiniLM's Model panel whole.

Texts are read off the widgets rendered into an SVG at 96 dpi (DESIGN.md, "Known traps"): each text's
``font-size`` is its pixel size on the screen.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets

from attn_studio.gui.views.cells import MIN_TEXT_PX
from attn_studio.gui.views.heatmap import WEIGHTS_CMAP, Heatmap
from attn_studio.pretrained import default_model_zip
from gui_helpers import fit_screen, fully_shown, settle, showing_minilm, shown_canvas
from stage_measure import drawn_texts

MIN_TOKEN_PX = 14.0
STAGES = ("scores", "logits", "weights")
VALUE = re.compile(r"^[−-]?\d+\.\d+$")
needs_minilm = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")


@pytest.fixture
def window(shared_window):
    return shared_window


def fit(w, size) -> None:
    """The layout the window chooses on a screen of ``size``, at that size, on the Attention tab."""
    fit_screen(w, size, w.heatmap_view)


def rect_in(widget: QtWidgets.QWidget, top: QtWidgets.QWidget, rect: QtCore.QRectF | None = None) -> QtCore.QRect:
    """``rect`` of ``widget`` (its whole rectangle by default) in ``top``'s coordinates."""
    rect = QtCore.QRectF(widget.rect()) if rect is None else rect
    return QtCore.QRect(widget.mapTo(top, rect.toRect().topLeft()), rect.toRect().size())


def assert_stages_whole(w, label: str) -> None:
    """The three stages and their colour bars (with their labels) inside the view's viewport, no scroll bar."""
    view = w.heatmap_view
    scroll = view.scroll
    assert not scroll.verticalScrollBar().isVisible() and not scroll.horizontalScrollBar().isVisible(), label
    viewport = scroll.viewport()
    area = viewport.rect()
    for key in STAGES:
        canvas = view.canvases[key]
        assert canvas.isVisible(), (label, key)
        assert area.contains(rect_in(canvas, viewport)), (label, key, rect_in(canvas, viewport), area)
        bar = view.stage_bars[key]
        # The bar and its tick labels (its axis' whole box) as the canvas draws them.
        for item in (bar, bar.axis):
            box = canvas.mapFromScene(item.mapRectToScene(item.rect())).boundingRect()
            assert area.contains(rect_in(canvas, viewport, QtCore.QRectF(box))), (label, key, type(item).__name__)
    # The weights' bar is labelled at its ends (its axis is inside the viewport, above).
    texts = {text for text, _ in drawn_texts(view.figure_widget())}
    ends = [text for _, text in view.stage_bars["weights"].axis._tickLevels[0]]
    assert ends == ["0", "1"] and set(ends) <= texts, (label, ends, sorted(texts)[:20])


def token_labels(widget, tokens) -> list[tuple[str, float]]:
    return [(text, px) for text, px in drawn_texts(widget) if text in tokens]


# -- A: the stages whole at 1280×720, every head count ------------------------------------------------------

@pytest.mark.parametrize("heads", [1, 4, 8, 12])
def test_the_stages_are_whole_at_1280x720_at_every_head_count(window, heads):
    w = window
    fit(w, (1280, 720))
    assert w.load_preset("animal")
    w.studio.update(projections=True, heads=heads)
    settle(w)
    w.finish_drawing()
    settle(w)
    view = w.heatmap_view
    assert_stages_whole(w, f"{heads} heads")
    # Every token on both axes of each stage, at 14 px or more.
    tokens = set(w.studio.state.key_tokens)
    labels = token_labels(view.figure_widget(), tokens)
    assert len(labels) >= 3 * 2 * len(w.studio.state.key_tokens), (heads, len(labels))
    assert min(px for _, px in labels) >= MIN_TOKEN_PX - 0.01
    # Every head one click away: the head bar, one tab a head.
    bar = view.head_bar
    assert bar.isVisible() == (heads > 1)
    if heads > 1:
        assert bar.count() == heads and [bar.tabText(i) for i in range(heads)] == [str(i + 1) for i in range(heads)]
        bar.setCurrentIndex(heads - 1)  # what clicking the last tab does
        settle(w)
        assert w.studio.state.head_index == heads - 1
        np.testing.assert_allclose(view.stages["weights"].data.values, w.studio.result.weights[heads - 1])
        assert_stages_whole(w, f"{heads} heads, the last shown")
        bar.setCurrentIndex(0)
        settle(w)


def docks_brought_back(w) -> None:
    """The Numbers and √d_k docks brought back beside the Attention tab with their status-bar buttons (they
    step aside for it on a 1280-px screen); ``w.reset_layout()`` sets them aside again."""
    for dock in (w.tables_dock, w.variance_dock):
        button = w.statusBar().findChild(QtWidgets.QToolButton, f"{dock.objectName()}Back")
        if dock.isHidden() and button is not None and button.isVisible():
            button.click()
    settle(w)
    assert w.tables_dock.isVisible() or w.variance_dock.isVisible()


def bar_colours(w, key: str) -> list[tuple[int, int, int]]:
    """The colours down the middle of stage ``key``'s colour bar, as the window shows it (grabbed whole)."""
    view = w.heatmap_view
    canvas, strip = view.canvases[key], view.stage_bars[key].bar  # the bar's strip of colours (an image)
    box = canvas.mapFromScene(strip.mapRectToScene(strip.boundingRect())).boundingRect()
    image = w.grab().toImage()
    x = canvas.mapTo(w, box.center()).x()
    top, bottom = canvas.mapTo(w, box.topLeft()).y(), canvas.mapTo(w, box.bottomLeft()).y()
    return [image.pixelColor(x, y).getRgb()[:3] for y in range(top, bottom)]


@pytest.mark.parametrize("docks", ["aside", "beside"])
@pytest.mark.parametrize("heads", [4, 8, 12])
def test_nothing_covers_a_stage_or_its_colour_bar_at_1280x720(window, heads, docks):
    """With 4, 8 or 12 heads on the animal sentence (projections on), in the layout a 1280×720 screen gets (the
    docks aside) and with the docks brought back beside the tab: no scroll bar of the Attention tab lies over a stage or its colour bar (the heads'
    grid scrolls in its own place under the stages), and the weights' bar shows its whole colour map as
    painted, from dark at 0 to bright at 1."""
    w = window
    fit(w, (1280, 720))
    assert w.load_preset("animal")
    w.studio.update(projections=True, heads=heads)
    assert not w.tables_dock.isVisible() and not w.variance_dock.isVisible()
    if docks == "beside":
        docks_brought_back(w)
    settle(w)
    w.finish_drawing()
    settle(w)
    view = w.heatmap_view
    assert_stages_whole(w, f"{heads} heads, docks {docks}")
    shown = [view.canvases[key] for key in STAGES]
    boxes = [rect_in(c, w) for c in shown]
    bars = [bar for bar in view.findChildren(QtWidgets.QScrollBar) if bar.isVisible()]
    for bar in bars:
        for key, box in zip(STAGES, boxes):
            assert not rect_in(bar, w).intersects(box), (heads, docks, key, bar.parentWidget().objectName())
    if view.heads_scroll.isVisible():  # the heads' place starts below the stages' bottom
        assert rect_in(view.heads_scroll, w).top() >= max(box.bottom() for box in boxes)
    colours = bar_colours(w, "weights")
    lut = view.stages["weights"].colormap.getLookupTable(nPts=256, alpha=False).astype(int)
    inside = colours[3:-3]  # clear of the bar's frame
    assert len(inside) > 100, len(inside)
    top, bottom = np.array(inside[0]), np.array(inside[-1])
    assert np.abs(top - lut[-1]).max() <= 12 and np.abs(bottom - lut[0]).max() <= 12, (top, bottom, lut[0], lut[-1])
    if docks == "beside":
        w.reset_layout()
        settle(w)


@needs_minilm
@pytest.mark.xfail(strict=True, reason="known gap (issue 38, item 4): MiniLM's 16 tokens labelled at 14 px need "
                   "stages about 1,190 px wide in a row (the Attention tab has 955 with the docks aside) or about 760 "
                   "px tall two above two (it has 627): the stages scroll rather than thin or shrink their labels")
def test_minilm_stages_are_whole_at_1280x720(window, qtbot, minilm):
    w = window
    with showing_minilm(w, qtbot, minilm):
        fit(w, (1280, 720))
        assert not w.tables_dock.isVisible() and not w.variance_dock.isVisible()  # aside for the Attention tab
        w.finish_drawing()
        settle(w)
        assert w.heatmap_view.head_bar.count() == 12
        assert_stages_whole(w, "MiniLM, 12 heads")


# -- C: every value written at 1366×768 (and 1280×720) ------------------------------------------------------

@pytest.mark.parametrize("size", [(1366, 768), (1280, 720)])
@pytest.mark.parametrize("preset", ["journey", "animal"])
def test_every_cell_value_is_written_on_a_laptop(window, size, preset):
    w = window
    fit(w, size)
    assert w.load_preset(preset)
    settle(w)
    view = w.heatmap_view
    # The Numbers share the bottom with the √d_k plots (a tab each) and step aside for the Attention tab.
    assert w.dockWidgetArea(w.tables_dock) == QtCore.Qt.BottomDockWidgetArea
    w.finish_drawing()
    settle(w)
    assert not w.tables_dock.isVisible() and not w.variance_dock.isVisible()
    assert_stages_whole(w, f"{preset} at {size}")
    state = w.studio.state
    t_q, t_k = len(state.query_tokens), len(state.key_tokens)
    tokens = set(state.key_tokens)
    texts = drawn_texts(view.figure_widget())
    values = [text for text, _ in texts if VALUE.match(text)]
    # Every cell's value of the three stages (the colour bars' tick labels are a few more).
    assert len(values) >= 3 * t_q * t_k, (preset, size, len(values), 3 * t_q * t_k)
    for key in STAGES:
        view.canvases[key].grab()
        heatmap = view.stages[key]
        assert heatmap.overlay.last_text_px >= MIN_TEXT_PX, (preset, size, key, heatmap.overlay.last_text_px)
        shown = [heatmap.overlay.cell_text(i, j) for i in range(t_q) for j in range(t_k)]
        missing = [v for v in shown if v not in values]
        assert not missing, (preset, size, key, missing[:5])
    labels = [(text, px) for text, px in texts if text in tokens]
    assert len(labels) >= 3 * (t_q + t_k) and min(px for _, px in labels) >= MIN_TOKEN_PX - 0.01, labels[:4]
    # The docks come back with the other tabs, a tab each at the bottom.
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    assert w.variance_dock.isVisible() or w.tables_dock.isVisible()
    assert w.tables_dock in w.tabifiedDockWidgets(w.variance_dock)
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    settle(w)


def test_values_that_want_the_other_shape_are_laid_out_before_they_are_painted(window, monkeypatch):
    # Whether the stages stand in a row or two above two follows their values' widest text: "−18.75" needs
    # half as wide again a cell as "0.94". Chosen at the drawing's end, from the values just drawn, a
    # trained model's sentence typed a key at a time laid the whole panel out again and painted it in
    # one 60-80 ms turn, after each stage had been painted in its own step.
    w = window
    fit(w, (1366, 768))
    assert w.load_preset("journey")
    settle(w)
    w.finish_drawing()
    view = w.heatmap_view
    assert not view.wrapped  # "Your journey starts with one step": values like 0.94 are readable in a row
    monkeypatch.setattr(w, "_render_visible", lambda: None)  # this test advances the drawing itself
    for i in range(w.studio.state.d_model):
        w.studio.set_embedding("journey", i, 2.5)
        w.studio.set_embedding("step", i, -2.5)
    assert w.studio.result.scores.min() < -10  # the same tokens, wider values
    steps = view.render_steps()
    assert next(steps) == "layout" and view.wrapped  # laid out before any stage is painted
    sizes = {key: canvas.minimumSize() for key, canvas in view.canvases.items()}
    names = list(steps)
    assert "scores" in names and view.wrapped
    assert {key: canvas.minimumSize() for key, canvas in view.canvases.items()} == sizes  # nothing at the end
    monkeypatch.undo()
    assert w.load_preset("journey")
    settle(w)
    w.finish_drawing()
    assert not view.wrapped  # and back in a row for small values


# -- B: token labels of 14 px in the tables, Step by step and Positions --------------------------------------

@pytest.mark.parametrize("size", [(1280, 720), (1366, 768)])
def test_every_token_label_of_the_window_is_at_least_14_px(window, size):
    w = window
    fit(w, size)
    assert w.load_preset("animal")
    w.view_tabs.setCurrentWidget(w.pipeline_view)  # a tab beside which the Numbers are shown
    w.tables_dock.raise_()
    settle(w)
    tokens = set(w.studio.state.key_tokens)
    tabs = w.numbers.table_tabs
    seen = 0
    for key, table in w.numbers.tables.items():
        index = tabs.indexOf(table)
        if not tabs.isTabVisible(index) or not table.isEnabled():
            continue
        tabs.setCurrentIndex(index)
        settle(w)
        labels = token_labels(table, tokens)
        if key in ("embeddings", "output"):
            assert len(labels) >= 5, (key, labels)
        small = sorted({px for _, px in labels if px < MIN_TOKEN_PX - 0.01})
        assert not small, f"Numbers {key}: token labels of {small} px"
        seen += len(labels)
    assert seen
    tabs.setCurrentIndex(0)
    for view in (w.pipeline_view, w.positional_view, w.heatmap_view, w.heads_summary_view, w.compare_view):
        w.view_tabs.setCurrentWidget(view)
        settle(w)
        texts = drawn_texts(view)
        if view is w.positional_view:
            # Rows are "position: token"; the curves' axis counts the positions.
            labels = [(t, px) for t, px in texts if re.match(r"^\d+: ", t) and t.split(": ", 1)[1] in tokens]
            ticks = [px for t, px in drawn_texts(view.lines) if t.isdigit()]
            assert ticks and min(ticks) >= MIN_TOKEN_PX - 0.01, ticks
            # Thinned rows say so whole ("1 in 2", never cut to "1 in"), in a readable hand.
            notes = [(t, px) for t, px in texts if t.startswith("1 in")]
            assert all(re.match(r"^1 in \d+( labelled)?$", t) and px >= 10 for t, px in notes), notes
        else:
            labels = [(t, px) for t, px in texts if t in tokens]
        assert labels, type(view).__name__
        small = sorted({round(px, 2) for _, px in labels if px < MIN_TOKEN_PX - 0.01})
        assert not small, f"{type(view).__name__}: token labels of {small} px"
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    settle(w)


# -- D: a head's small map, and MiniLM's Model panel ---------------------------------------------------------

def test_a_small_head_map_names_its_query_row_and_says_1_in_n_whole(qtbot):
    words = "[CLS] the animal didn ' t cross the street because it was too tired . [SEP]".split()
    n = len(words)
    heatmap = Heatmap("head 3", WEIGHTS_CMAP)
    heatmap.show_row_labels(True)
    heatmap.set_axis_titles("query", "key")
    heatmap.show_row_title(False)  # as the Attention tab's heads have it
    values = np.full((n, n), 1.0 / n)
    heatmap.set_data(values, masked=np.zeros((n, n), dtype=bool), row_labels=words, col_labels=words,
                     levels=(0.0, 1.0), selected_row=10)
    heatmap.left_axis.keep({10})  # the query "it"
    heatmap.bottom_axis.keep({2})  # the pinned column "animal"
    holder = QtWidgets.QWidget()  # drawn_texts reads the canvases inside a widget, their caches off
    qtbot.addWidget(holder)
    canvas = shown_canvas(qtbot, heatmap, 200, 200)
    canvas.setParent(holder)
    canvas.move(0, 0)
    holder.resize(200, 200)
    holder.show()
    qtbot.waitExposed(holder)
    canvas.grab()
    rows, cols = heatmap.left_axis, heatmap.bottom_axis
    assert rows.shown_step > 1 and cols.shown_step > 1  # too small for 16 labels: thinned ...
    assert 10 in [int(v) for v, _ in rows.drawn] and 2 in [int(v) for v, _ in cols.drawn]  # ... but these named
    assert "it" in [t for _, t in rows.drawn]
    texts = drawn_texts(holder)
    # Thinned labels never overlap the kept one: neighbours at least a step apart.
    drawn_rows = sorted(int(v) for v, _ in rows.drawn)
    assert all(b - a >= min(rows.shown_step, 2) for a, b in zip(drawn_rows, drawn_rows[1:])), drawn_rows
    # The note, whole: "1 in n" (or "1 in n labelled"), never cut to "1 in".
    notes = [t for t, _ in texts if t.startswith("1 in")]
    assert notes and all(re.match(r"^1 in \d+( labelled)?$", t) for t in notes), notes
    start, end, text = rows.thinned_note_rect
    assert text in notes and end - start >= 60  # the whole axis' length, not a sliver beside a title
    note_px = [px for t, px in texts if t == text]
    assert note_px and min(note_px) >= 10  # a readable hand
    # Labels no larger than the heatmaps' token labels.
    assert max(px for t, px in texts if t in words) <= MIN_TOKEN_PX + 0.01


@needs_minilm
@pytest.mark.parametrize("size", [(1366, 768), (1280, 720)])
def test_the_model_panel_is_whole_with_minilm_on_a_laptop(window, qtbot, minilm, size):
    w = window
    with showing_minilm(w, qtbot, minilm):
        fit(w, size)
        scroll = w.controls_scroll
        assert not scroll.horizontalScrollBar().isVisible()
        panel = w.trained.room.panel
        viewport = scroll.viewport()
        shown = [c for c in panel.findChildren(QtWidgets.QWidget) if c.isVisibleTo(w) and not c.isWindow()]
        for child in shown:
            assert fully_shown(child, viewport), (child.objectName() or type(child).__name__, child.geometry())
        # The sentence box and the head's scale, whole.
        for name in ("headScaleSpin",):
            child = panel.findChild(QtWidgets.QWidget, name)
            assert child is not None and fully_shown(child, viewport), name




def test_a_refused_edit_is_said_above_the_views_while_the_numbers_are_aside(window, qtbot):
    """On a laptop the Numbers step aside for the Attention tab; a refused value is still said in the window
    (above the views, where the person is looking), not only in a panel that is not there."""
    w = window
    fit(w, (1366, 768))
    assert not w.tables_dock.isVisible()
    before = w.studio.state
    edit = w.sentence_edit
    edit.setFocus()
    edit.setText("word " * 3000)  # pasted: more tokens than the toy model takes
    edit.textEdited.emit(edit.text())
    qtbot.keyClick(edit, QtCore.Qt.Key_Return)
    settle(w)
    label = w.message_label
    assert label.isVisible() and "token" in label.text(), label.text()
    assert not w.tables_dock.isAncestorOf(label) and w.centralWidget().isAncestorOf(label)
    assert fully_shown(label, w)
    assert w.studio.state.sentence == before.sentence  # the old value kept
    edit.setText("a b c")
    edit.textEdited.emit(edit.text())
    qtbot.keyClick(edit, QtCore.Qt.Key_Return)
    settle(w)
    assert not label.isVisible()  # an accepted edit takes the message away


def test_numbers_brought_back_beside_the_attention_tab_stay(window):
    """On a laptop the Numbers step aside for the Attention tab, with a button each in the status bar; the
    button (as View → Numbers) brings them back, and they stay there (a lecturer editing weights while
    watching the heatmaps), until the layout is reset."""
    w = window
    fit(w, (1366, 768))
    try:
        assert not w.tables_dock.isVisible()
        button = w.statusBar().findChild(QtWidgets.QToolButton, "tablesDockBack")
        assert button is not None and button.isVisible() and button.text().startswith("Numbers")
        assert fully_shown(button, w)
        button.click()
        settle(w)
        assert w.tables_dock.isVisible() and not button.isVisible()
        w.view_tabs.setCurrentWidget(w.pipeline_view)
        settle(w)
        w.view_tabs.setCurrentWidget(w.heatmap_view)
        settle(w)
        assert w.tables_dock.isVisible()
        assert_stages_whole(w, "with the Numbers")  # the stages fit the shorter view (a row, or scrolled labels)
    finally:
        w.reset_layout()
        settle(w)


@needs_minilm
def test_the_sqrt_dk_plot_stays_away_for_a_trained_model_chosen_while_the_docks_are_aside(window, qtbot, minilm):
    """A trained model hides the √d_k plot (it is about the toy's random vectors). Chosen while the plot has
    stepped aside for the Attention tab, the plot must not come back with the Numbers on the next tab, nor
    keep its button; back on the toy model it is there again."""
    w = window
    fit(w, (1366, 768))
    assert not w.variance_dock.isVisible()  # aside for the Attention tab
    with showing_minilm(w, qtbot, minilm):
        w.view_tabs.setCurrentWidget(w.pipeline_view)
        settle(w)
        assert w.tables_dock.isVisible() and not w.variance_dock.isVisible()
        button = w.statusBar().findChild(QtWidgets.QToolButton, "varianceDockBack")
        assert button is None or not button.isVisible()
        w.view_tabs.setCurrentWidget(w.heatmap_view)
        settle(w)
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    assert w.variance_dock.isVisible() or w.tables_dock.isVisible()
    assert w.tables_dock in w.tabifiedDockWidgets(w.variance_dock) and not w.variance_dock.isHidden()
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    settle(w)
    assert not w.variance_dock.isVisible() and not w.tables_dock.isVisible()
