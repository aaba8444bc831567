"""What a lecturer sees in front of a room: true labels, lasting tooltips, a pinned formula,
an even grid of heads, every label at a dozen tokens, bounded long words, the pointer."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtTest, QtWidgets

from attn_studio.gui import presentation
from attn_studio.gui.views.heatmap_view import TOOLTIP_MS
from gui_helpers import find, settle
from window_reset import activate, reset_presentation

Qt = QtCore.Qt


@pytest.fixture(scope="module", autouse=True)
def _look_put_back(_module_window):
    yield
    # The look is application-wide: put back for the modules that follow.
    presentation.apply(QtWidgets.QApplication.instance(), _module_window[0], theme="light", zoom=1.0)
    presentation.set_weights_colormap("viridis")


@pytest.fixture
def window(document_window, qtbot):
    # One window serves the module. Before each test: nothing left running, then (after the shared
    # reset of the state, size and tab) the theme, the document, the pointer (the highlighted row
    # and column) and the pinned formula put back and checked, and the window made the active one.
    w = document_window
    reset_presentation(w, qtbot)
    view = w.heatmap_view
    view.highlight.clear()
    view.pinned = None
    view._show_pinned()
    settle(w)
    assert not view.highlight.active
    assert all(hm.highlighted == (None, None) for hm in list(view.stages.values()) + view.head_maps)
    assert view.formula_text().startswith("Click a cell to keep its formula here")
    activate(w, qtbot)
    w.bridge.flush()
    return w


def shown_heatmaps(view):
    """(name, Heatmap, canvas) of every heatmap of the Attention tab that is on screen."""
    out = [(key, view.stages[key], view.canvases[key]) for key in view.stages if view.canvases[key].isVisible()]
    out += [(f"head {i + 1}", hm, c) for i, (hm, c) in enumerate(zip(view.head_maps, view.head_canvases))
            if c.isVisible()]
    return out


def assert_labels_are_the_tokens(w, tag):
    settle(w)
    state = w.studio.state
    view = w.heatmap_view
    checked = 0
    for name, hm, canvas in shown_heatmaps(view):
        canvas.grab()  # paint: what the axes draw now
        rows, cols = hm.labels()
        assert rows == list(state.query_tokens), f"{tag}: {name} row labels {rows}"
        assert cols == list(state.key_tokens), f"{tag}: {name} column labels {cols}"
        checked += 1
    assert checked >= 3, tag


def big_window(w, width=1900, height=1000):
    # After the window restored its settings: the offscreen screen would clamp it to 800×800.
    w.resize(width, height)
    settle(w)


def test_every_heatmap_shows_the_current_tokens_after_every_change(window):
    w = window
    big_window(w)
    w.load_preset("animal")
    assert_labels_are_the_tokens(w, "animal")
    w.studio.update(projections=True, heads=4)
    assert_labels_are_the_tokens(w, "animal, 4 heads")
    w.load_preset("journey")
    w.studio.update(projections=True, heads=4)
    assert_labels_are_the_tokens(w, "journey, 4 heads")
    # Same number of tokens, other words: nothing may be kept from the last sentence.
    w.studio.update(sentence="one step starts with your journey")
    assert_labels_are_the_tokens(w, "same length")
    w.studio.update(causal=True)
    assert_labels_are_the_tokens(w, "causal")
    w.studio.update(heads=8)
    assert_labels_are_the_tokens(w, "8 heads")
    w.studio.update(sentence="the cat sat on the mat because it was warm there")
    assert_labels_are_the_tokens(w, "11 tokens")
    w.studio.update(heads=2, causal=False)
    assert_labels_are_the_tokens(w, "2 heads")
    big_window(w, 1366, 768)
    assert_labels_are_the_tokens(w, "1366×768")
    w.load_preset("journey")
    assert_labels_are_the_tokens(w, "journey again")


def test_heads_are_an_even_grid_of_equal_cells(window):
    # One window for all four head counts (each window costs the suite memory).
    w = window
    big_window(w)
    for heads, shape in ((4, (2, 2)), (8, (2, 4)), (12, (3, 4)), (16, (4, 4))):
        w.studio.update(projections=True, d_model=32, d_head=2, heads=heads)
        settle(w)
        view = w.heatmap_view
        grid = find(w, QtWidgets.QWidget, "headsGrid")
        canvases = [c for c in view.head_canvases if c.isVisible()]
        assert len(canvases) == heads
        assert view.grid_shape == shape
        layout = grid.layout()
        cells = {layout.getItemPosition(layout.indexOf(c))[:2] for c in canvases}
        assert cells == {(r, c) for r in range(shape[0]) for c in range(shape[1])}
        widths = [c.width() for c in canvases]
        sizes = [c.height() for c in canvases]
        assert max(widths) - min(widths) <= 2 and max(sizes) - min(sizes) <= 2, heads
        # Square-ish: no slivers.
        assert 0.5 <= canvases[0].height() / canvases[0].width() <= 2.0, heads
        # The plots inside are equal too (each head carries the same axes).
        plot_widths = [hm.plot.vb.width() for hm in view.head_maps[:heads]]
        assert max(plot_widths) - min(plot_widths) <= 2, heads


def test_a_dozen_tokens_show_every_label_and_equal_stages(window):
    w = window
    w.resize(1280, 720)
    settle(w)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    for n in (6, 9, 12):
        w.studio.update(sentence=" ".join(words[:n]))
        settle(w)
        view = w.heatmap_view
        for key in ("scores", "logits", "weights"):
            view.canvases[key].grab()
            rows, cols = view.stages[key].labels()
            assert rows == words[:n] and cols == words[:n], (n, key)
        widths = [view.stages[key].plot.vb.width() for key in ("scores", "logits", "weights")]
        assert max(widths) - min(widths) <= 2, widths  # the scores heatmap is as wide as the others
        # When they do not fit beside each other, the panel scrolls with a visible bar.
        scroll = find(w, QtWidgets.QScrollArea, "heatmapScroll")
        if scroll.widget().width() > scroll.viewport().width():
            assert scroll.horizontalScrollBar().isVisible()


def test_a_20000_character_word_is_elided_and_the_tabs_still_render(fresh_window):
    # A window of its own: it shows every tab, the training lab's among them, and a lab once built
    # stays (its page keeps the window wider than 1280 pixels; no reset takes it down again).
    w = fresh_window
    big_window(w, 1280, 720)
    word = "x" * 19_990  # the sentence limit is 20,000 characters
    w.studio.update(sentence=f"a {word} b")
    settle(w)
    view = w.heatmap_view
    for name, hm, canvas in shown_heatmaps(view):
        canvas.grab()
        rows, cols = hm.labels()
        assert rows[0] == "a" and cols[2] == "b"
        assert cols[1].endswith("…") and len(cols[1]) < 200
        for axis in (hm.left_axis, hm.bottom_axis):
            assert axis.widest_label_px() <= axis.max_label_px() + 1
            assert axis.width() < 400 and axis.height() < 400
        # The whole word is in the label's tooltip.
        assert hm.bottom_axis.full_label(1) == word
    tabs = [t for t in w.findChildren(QtWidgets.QTabWidget) if t.indexOf(w.pipeline_view) >= 0][0]
    for index in range(tabs.count()):
        tabs.setCurrentIndex(index)
        settle(w)
        image = tabs.currentWidget().grab()
        assert image.width() < 4000 and not image.isNull()
    assert w.width() < 2000


def _click(canvas, scene_pos, button=Qt.LeftButton):
    point = canvas.mapFromScene(scene_pos)
    QtTest.QTest.mouseClick(canvas.viewport(), button, Qt.NoModifier, point)
    settle(canvas.window())


def _cell_center(hm, i, j):
    return hm.cell_scene_rect(i, j).center()


def test_a_hovered_formula_stays_and_a_click_pins_it(window, monkeypatch):
    w = window
    big_window(w)
    w.load_preset("bank")
    settle(w)
    view = w.heatmap_view
    hm, canvas = view.stages["weights"], view.canvases["weights"]
    shown = []
    # Record what would be shown (the offscreen platform cannot raise a tooltip window).
    monkeypatch.setattr(QtWidgets.QToolTip, "showText", lambda *args: shown.append(args))
    monkeypatch.setattr(QtWidgets.QToolTip, "isVisible", lambda: bool(shown))
    centre = _cell_center(hm, 2, 3)
    canvas.scene().sigMouseMoved.emit(centre)
    assert shown, "no tooltip"
    pos, text, widget, rect, msec = shown[-1]
    assert text == view.tooltip_for(hm, 2, 3)
    assert msec >= TOOLTIP_MS >= 60_000  # not Qt's short default: it stays while the pointer rests
    assert rect.contains(canvas.mapFromScene(centre))  # tied to the cell it explains
    # Moving within the same cell neither hides nor re-shows it (no flicker).
    count = len(shown)
    canvas.scene().sigMouseMoved.emit(centre + QtCore.QPointF(1, 1))
    assert len(shown) == count

    panel = find(w, QtWidgets.QPlainTextEdit, "formulaPanel")
    assert panel.isReadOnly() and panel.textInteractionFlags() & Qt.TextSelectableByMouse
    assert panel.font().pointSizeF() >= 12
    _click(canvas, centre)
    assert w.studio.state.query_index == 2  # a click still selects the query
    assert view.tooltip_for(hm, 2, 3) in panel.toPlainText()
    assert panel.toPlainText().startswith("Pinned, weights: query 3")
    # New numbers: the pinned formula follows.
    before = panel.toPlainText()
    w.studio.update(temperature=2.0)
    settle(w)
    assert panel.toPlainText() != before and view.tooltip_for(hm, 2, 3) in panel.toPlainText()
    # Another cell replaces it.
    _click(canvas, _cell_center(hm, 0, 1))
    assert view.tooltip_for(hm, 0, 1) in panel.toPlainText()
    # A cell that no longer exists says so.
    view.pin_formula("weights", 7, 7)
    w.studio.update(sentence="two words")
    settle(w)
    assert "no longer exists" in panel.toPlainText()


def test_clicking_labels_highlights_rows_and_columns_everywhere_and_esc_clears(window):
    w = window
    big_window(w)
    w.studio.update(projections=True, heads=4)
    settle(w)
    view = w.heatmap_view
    compare = w.compare_view
    hm, canvas = view.stages["scores"], view.canvases["scores"]
    canvas.grab()
    query = w.studio.state.query_index
    # A column label: x of the column, just below the image, where its slanted label starts.
    col_rect = hm.cell_scene_rect(len(w.studio.state.query_tokens) - 1, 3)
    label_point = QtCore.QPointF(col_rect.center().x() - 2, hm.bottom_axis.sceneBoundingRect().top() + 4)
    assert hm.label_hit(label_point) == ("col", 3)
    _click(canvas, label_point)
    every = [h for _, h, _ in shown_heatmaps(view)] + list(getattr(compare, "maps", {}).values())
    assert all(h.highlighted == (None, 3) for h in every)
    assert w.studio.state.query_index == query  # a label click does not move the query
    row_point = QtCore.QPointF(hm.left_axis.sceneBoundingRect().right() - 6, hm.cell_scene_rect(4, 0).center().y())
    assert hm.label_hit(row_point) == ("row", 4)
    _click(canvas, row_point)
    assert all(h.highlighted == (4, None) for h in every)
    summary = w.heads_summary_view.maps
    assert summary["concat"].highlighted == (4, None) and summary["output"].highlighted == (4, None)
    # A click outside the cells and labels clears it...
    _click(canvas, canvas.mapToScene(QtCore.QPoint(3, 3)))
    assert all(h.highlighted == (None, None) for h in every)
    # ...and so does Esc.
    _click(canvas, row_point)
    assert all(h.highlighted == (4, None) for h in every)
    QtTest.QTest.keyClick(view, Qt.Key_Escape)
    settle(w)
    assert all(h.highlighted == (None, None) for h in every)
    # Not part of the model: nothing to save or undo.
    assert not hasattr(w.studio.state, "highlight")
    # The band is drawn: the pixels of the highlighted column change, the others' do not.
    hm, canvas = view.stages["weights"], view.canvases["weights"]
    before = canvas.grab().toImage()
    view.highlight.set(None, 2)
    settle(w)
    after = canvas.grab().toImage()
    band = canvas.mapFromScene(hm.cell_scene_rect(0, 2).center())
    other = canvas.mapFromScene(hm.cell_scene_rect(0, 4).center() + QtCore.QPointF(0, 8))
    assert before.pixelColor(band) != after.pixelColor(band)
    assert before.pixelColor(other) == after.pixelColor(other)
    hm.overlay.pointer_shown = False  # figures show no pointer
    hm.overlay.update()
    exported = canvas.grab().toImage()
    assert exported.pixelColor(band) == before.pixelColor(band)
    hm.overlay.pointer_shown = True


def _attention_texts(w):
    settle(w)
    view = w.heatmap_view
    texts = [view.header.text()] + [hm.title for _, hm, _ in shown_heatmaps(view)]
    pipeline = w.pipeline_view
    pipeline.render()
    model = pipeline.model
    texts += [pipeline.header.text(), pipeline.explanation.text()]
    texts += [model.headerData(r, Qt.Vertical) for r in range(model.rowCount())]
    return " | ".join(texts)


def test_captions_say_scaled_only_when_the_engine_scaled_and_pairs_count_from_one(window):
    w = window
    for score, scale in ((s, c) for s in ("dot", "additive") for c in (False, True)):
        w.studio.update(projections=True, score=score)
        for temperature in (1.0, 2.0):
            w.studio.update(scale=scale, temperature=temperature)
            text = _attention_texts(w)
            scaled = w.studio.result.scale_factor != 1.0
            assert scaled == (scale and score == "dot")
            tag = f"{score}, scale={scale}, T={temperature}: {text}"
            assert ("scaled logits" in text) == scaled, tag
            assert ("÷ √" in text or "÷√" in text) == scaled, tag
            assert ("÷ T" in text) == (temperature != 1.0), tag
            if not scaled:
                assert "scaled" not in text.replace("unscaled", "").replace("not scaled", ""), tag
    # One indexing convention: Geometry's pair list counts from 1, like the query list.
    w.load_preset("journey")
    settle(w)
    w.geometry_view.render()
    pair_a = find(w, QtWidgets.QComboBox, "geometryPairA")
    pair_b = find(w, QtWidgets.QComboBox, "geometryPairB")
    tokens = w.studio.state.tokens
    for combo in (pair_a, pair_b):
        assert [combo.itemText(i) for i in range(combo.count())] == [f"{i + 1}: {t}" for i, t in enumerate(tokens)]
    queries = find(w, QtWidgets.QComboBox, "queryCombo")
    assert queries.itemText(0).startswith("1")


def _show_tab(w, view):
    tabs = [t for t in w.findChildren(QtWidgets.QTabWidget) if t.indexOf(view) >= 0][0]
    tabs.setCurrentWidget(view)
    settle(w)


def test_the_step_view_shows_every_key_at_projector_sizes(window):
    w = window
    w.load_preset("journey")
    _show_tab(w, w.pipeline_view)
    for size in ((1280, 720), (1366, 768)):
        w.resize(*size)  # after the window restored its settings
        settle(w)
        table = find(w, QtWidgets.QTableView, "pipelineTable")
        n_keys = len(w.studio.state.key_tokens)
        assert n_keys == 6
        viewport = table.viewport().width()
        for c in range(n_keys):
            left = table.columnViewportPosition(c)
            assert 0 <= left and left + table.columnWidth(c) <= viewport, f"{size}: key column {c + 1} is cut"
        assert w.width() == size[0]


@pytest.fixture
def light_again(window):
    yield
    window.set_theme("light")  # the theme is application-wide: leave it as the next test expects


def test_the_dark_theme_has_no_glaring_areas_and_stays_legible(window, light_again):
    w = window
    big_window(w)
    w.studio.update(causal=True)
    settle(w)
    view = w.heatmap_view
    hm, canvas = view.stages["weights"], view.canvases["weights"]

    def looks():
        settle(w)
        image = canvas.grab().toImage()
        masked = image.pixelColor(canvas.mapFromScene(hm.cell_scene_rect(0, 5).center()))
        brightest = hm.image.lut[:, :3].max()
        bar = hm.bar.colorMap().getLookupTable(nPts=256)[:, :3]
        return masked.lightness(), brightest, bar, hm.image.lut[:, :3]

    light_mask, light_max, _, _ = looks()
    w.set_theme("dark")
    dark_mask, dark_max, bar, lut = looks()
    theme = presentation.THEMES["dark"]
    assert QtGui.QColor(theme.canvas).lightness() >= 30  # dark grey, not black
    assert QtGui.QColor(theme.text).lightness() <= 225 and QtGui.QColor(theme.ink).lightness() <= 225
    assert light_mask > 170 and dark_mask < 110  # masked cells: no light patch on a dark canvas
    assert dark_max < light_max  # the colour map's bright end is toned down...
    np.testing.assert_array_equal(bar, lut)  # ...and the colour bar shows the same colours
    # The step view's highlighted row: a dark background, light text.
    model = w.pipeline_view.model
    current = model.index(w.pipeline_view.current_step, 0)
    bg = model.data(current, Qt.BackgroundRole)
    fg = model.data(current, Qt.ForegroundRole)
    assert bg.lightness() < 128 and fg.lightness() > 160
    explanation = find(w, QtWidgets.QLabel, "pipelineExplanation")
    w.pipeline_view.render()
    assert explanation.palette().color(QtGui.QPalette.Window).lightness() < 128
    w.set_theme("light")
    settle(w)
    assert model.data(current, Qt.BackgroundRole).lightness() > 160
