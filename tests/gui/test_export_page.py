"""A figure is laid out for the page, and the stage fits a projector.

The figures' labels are read back out of the exported SVG (text stays text):
every token once per heatmap axis, at any window size, with no hint text and
no scroll bar. On screen at 1280×720 the three stages are whole, heads are equal
cells, Compare draws every label, and a table never elides a number.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets

from attn_studio import cli
from attn_studio.gui.files import export
from attn_studio.gui.views.heatmap import Heatmap
from attn_studio.gui.views.heatmap_view import HeatmapCanvas
from gui_helpers import settle

WINDOW_PRESET = "animal"
SVG_NS = "{http://www.w3.org/2000/svg}"
# What the window says to a person at the screen, never on a slide.
HINTS = ("Click", "click", "hover", "Hover", "Press", "Pin current", "Pinned", "▶ previous", "next ▶", "◀")
SIZES = [(1600, 900), (1280, 720), (800, 600)]  # the command's default, a projector, a small laptop window


@pytest.fixture
def window(shared_window):
    return shared_window


def texts_of(svg: bytes) -> list[str]:
    return ["".join(t.itertext()).strip() for t in ET.fromstring(svg).iter(f"{SVG_NS}text")]


def screen(window, width, height):
    window.fit_to_screen(QtCore.QRect(0, 0, width, height))  # the layout the window picks on such a screen
    window.resize(width, height)
    settle(window)


def assert_every_token_on_every_axis(texts, tokens, heatmaps, tag):
    for token in set(tokens):
        assert texts.count(token) == 2 * heatmaps * tokens.count(token), (tag, token, texts.count(token))
    hints = [t for t in texts if any(h in t for h in HINTS)]
    assert not hints, (tag, hints)


def assert_laid_out_for_the_page(panel):
    widget = panel.widget
    window = widget.window()
    assert window is widget, "a figure is its own page, not a part of the window"
    assert not widget.findChildren(QtWidgets.QScrollBar) or not any(
        bar.isVisibleTo(widget) for bar in widget.findChildren(QtWidgets.QScrollBar))


# -- figures ------------------------------------------------------------------------


def test_the_heatmaps_figure_is_whole_and_the_same_at_every_window_size(window):
    tokens = window.studio.state.tokens
    heads = window.studio.result.weights.shape[0]
    assert heads == 2
    figures = {}
    for size in SIZES:
        screen(window, *size)
        panel = export.find_panel(window, "heatmaps")
        assert_laid_out_for_the_page(panel)
        texts = texts_of(export.svg_bytes(panel))
        assert_every_token_on_every_axis(texts, tokens, 3 + heads, size)
        # Every title whole, the weights' too (it was cut at "soft" in a grabbed viewport).
        for title in ("scores q·k", "weights: softmax", "head 1", "head 2"):
            assert title in texts, (size, title)
        for hm in panel.widget.heatmaps:
            label = hm.plot.titleLabel
            assert label.item.boundingRect().width() <= hm.plot.width() + 1, (size, hm.title)
        figures[size] = (texts, export.render_panel(panel, scale=1).size())
    first = figures[SIZES[0]]
    assert all(f == first for f in figures.values()), "the figure changed with the window's size"


def test_every_tab_exports_without_hint_text(window):
    tokens = window.studio.state.tokens
    for name, heatmaps in (("compare", 3), ("outputs", 1), ("positions", 0)):
        panel = export.find_panel(window, name)
        assert_laid_out_for_the_page(panel)
        texts = texts_of(export.svg_bytes(panel))
        hints = [t for t in texts if any(h in t for h in HINTS)]
        assert not hints, (name, hints)
        if heatmaps:  # compare: A, B and B − A; outputs: rows of the concatenation and of the output
            factor = 2 * heatmaps if name == "compare" else 2
            for token in set(tokens):
                assert texts.count(token) == factor * tokens.count(token), (name, token)
    positions = texts_of(export.svg_bytes(export.find_panel(window, "positions")))
    assert all(f"{i}: {token}" in positions for i, token in enumerate(tokens)) and "sin 0" in positions
    # The step table: every key, no buttons or explanation, wrapped into rows rather than a long strip.
    panel = export.find_panel(window, "steps")
    texts = texts_of(export.svg_bytes(panel))
    assert not [t for t in texts if any(h in t for h in HINTS)]
    assert all(token in texts for token in tokens) and "result" in texts
    image = export.render_panel(panel, scale=1)
    assert image.width() / image.height() < 2.5, image.size()
    assert texts.count("9. output z =") >= 2  # the row titles repeat on the second row of the wrap


def test_the_export_menu_offers_every_tab(window):
    actions = window.export_actions
    actions._fill_export_menu()
    texts = [a.text() for a in actions.export_menu.actions()]
    for text in ("Step-by-step table…", "Heads → output…", "Compare…", "Positions…", "Geometry…"):
        assert text in texts, texts
    window.view_tabs.setCurrentWidget(window.compare_view)
    assert actions.current_panel_name() == "compare"


def test_the_readme_example_from_the_command_line_is_whole(window, tmp_path, capsys):
    out = tmp_path / "f.svg"
    assert cli.main(["export", "--preset", "animal", "--panel", "heatmaps", "--width", "800", "--height", "600",
                     "--out", str(out)]) == 0
    texts = texts_of(out.read_bytes())
    assert_every_token_on_every_axis(texts, window.studio.state.tokens, 5, "cli 800×600")
    assert "weights: softmax" in texts


def test_a_minilm_head_exports_with_its_tokens_on_both_axes(tmp_path, capsys):
    from attn_studio.pretrained import default_model_zip

    if default_model_zip() is None:  # found without importing the package (importing it prints a line)
        pytest.skip("all-MiniLM-L6-v2 is not installed")
    out = tmp_path / "head.svg"
    text = "The animal didn't cross the street because it was too tired."
    assert cli.main(["export", "--model", "all-MiniLM-L6-v2", "--text", text, "--layer", "4", "--head", "2",
                     "--panel", "head:2", "--out", str(out)]) == 0
    texts = texts_of(out.read_bytes())
    for token in ("it", "animal", "[CLS]", "tired"):
        assert texts.count(token) == 2, (token, texts.count(token))


# -- the stage on a projector ---------------------------------------------------------------


def inside(widget, viewport) -> bool:
    top_left = widget.mapTo(viewport, QtCore.QPoint(0, 0))
    return viewport.rect().contains(QtCore.QRect(top_left, widget.size()))


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)])
@pytest.mark.parametrize("sentence", [None, "one two three four five six seven eight nine ten eleven twelve"])
def test_the_three_stages_are_whole_on_a_projector(window, size, sentence):
    if sentence:
        window.studio.update(sentence=sentence)
    screen(window, *size)
    window.view_tabs.setCurrentWidget(window.heatmap_view)
    settle(window)
    view = window.heatmap_view
    tokens = window.studio.state.tokens
    for key in ("scores", "logits", "weights"):
        canvas = view.canvases[key]
        assert inside(canvas, view.scroll.viewport()), (size, key, canvas.geometry())
        assert inside(canvas, window), (size, key)
        canvas.grab()
        rows, cols = view.stages[key].labels()
        assert rows == tokens and cols == tokens, (size, key, rows, cols)


def test_at_1920_the_stage_gets_the_space(window):
    window.studio.update(heads=8, d_model=16)
    screen(window, 1920, 1080)
    view = window.heatmap_view
    stage = view.canvases["weights"]
    assert stage.height() > view.head_canvases[0].height()
    assert inside(stage, view.scroll.viewport())


@pytest.mark.parametrize("heads", [8, 12, 16])
def test_heads_are_equal_squareish_cells(window, heads):
    window.studio.update(heads=heads, d_model=24)
    screen(window, 1280, 720)
    view = window.heatmap_view
    # At 1280×720 the stages keep the height and the head bar reaches every head; the grid shows in a
    # taller window of that width.
    assert view.head_bar.count() == heads and not view.heads_scroll.isVisible()
    window.resize(1280, 1500)
    settle(window)
    assert view.heads_scroll.isVisible()
    sizes = {(c.width(), c.height()) for c in view.head_canvases[:view.heads_shown]}
    assert view.heads_shown == heads
    widths, heights = {w for w, _ in sizes}, {h for _, h in sizes}
    assert max(widths) - min(widths) <= 1 and max(heights) - min(heights) <= 1, sizes
    w, h = next(iter(sizes))
    assert 0.6 <= h / w <= 1.4, sizes


def test_compare_draws_every_label_at_1280(window):
    screen(window, 1280, 720)
    window.view_tabs.setCurrentWidget(window.compare_view)
    settle(window)
    tokens = window.studio.state.tokens
    for key, hm in window.compare_view.maps.items():
        window.compare_view.canvases[key].grab()
        assert hm.labels() == (tokens, tokens), key


def test_the_sqrt_dk_plots_are_tall_enough_at_720(window):
    window.view_tabs.setCurrentWidget(window.pipeline_view)  # the plots step aside for the Attention tab
    screen(window, 1280, 720)
    window.variance_dock.raise_()
    settle(window)
    for plot in (window.variance_plot.variance, window.variance_plot.saturation):
        assert plot.size().height() >= 200


def test_present_fills_its_screen_and_leaves_the_window_as_it_was(window):
    screen(window, 1280, 720)
    geometry = window.geometry()
    stage = window.present.enter("Attention")
    settle(window)
    try:
        assert stage.size() == stage.screen().geometry().size()
    finally:
        window.present.leave()
        settle(window)
    assert window.geometry() == geometry


@pytest.mark.xfail(strict=True, reason="known bug: with the Numbers tabbed beside the plot at 1280x720, the first "
                   "zoom in and back leaves the bottom dock 3 px shorter (284 -> 281 px); later cycles are stable")
def test_zooming_in_and_back_restores_the_layout(window):
    window.view_tabs.setCurrentWidget(window.pipeline_view)  # beside which the bottom docks are shown
    screen(window, 1280, 720)
    settle(window)  # the docks take their final sizes a turn after the window's resize
    parts = (window.controls_dock, window.variance_dock, window.pipeline_view, window.central_scroll)
    before = [p.size() for p in parts]
    window.set_zoom(1.5)
    settle(window)
    window.set_zoom(1.0)
    settle(window)
    assert [p.size() for p in parts] == before


# -- numbers and labels ---------------------------------------------------------------------------


def test_a_table_shows_a_small_number_at_the_precision_and_every_digit_in_its_editor(window):
    model, table = window.models["embeddings"], window.tables["embeddings"]
    assert model.setData(model.index(0, 1), "-6.038e-5", QtCore.Qt.EditRole)
    settle(window)
    text = model.data(model.index(0, 1))
    # As a person reads it at four decimals, with a true minus sign; the editor holds every digit typed.
    assert model.digits == 4 and text == "\u22120.0001"
    assert model.data(model.index(0, 1), QtCore.Qt.EditRole) == "-6.038e-05"
    needed = table.fontMetrics().horizontalAdvance(text)
    assert table.columnWidth(1) >= needed + 4, (table.columnWidth(1), needed)


def test_thousands_of_tokens_draw_a_few_labels_and_say_they_are_thinned(qtbot):
    heatmap = Heatmap("long")
    canvas = HeatmapCanvas(heatmap)
    qtbot.addWidget(canvas)
    canvas.resize(400, 400)
    tokens = [f"t{i}" for i in range(2000)]
    heatmap.set_data(np.zeros((2000, 16)), masked=np.zeros((2000, 16), dtype=bool), row_labels=tokens,
                     col_labels=tokens[:16], levels=(0.0, 1.0))
    canvas.show()
    qtbot.waitExposed(canvas)
    canvas.grab()
    rows, cols = heatmap.labels()
    assert 5 <= len(rows) <= 100, len(rows)  # never thousands of texts
    assert heatmap.left_axis.thinned_note.startswith("1 in ")
    assert cols == tokens[:16]  # sixteen columns all fit
    assert heatmap.bottom_axis.thinned_note == ""


def test_a_small_thinned_heatmap_says_so_beside_its_axis_titles_not_over_them(qtbot):
    """A head's heatmap at 1280 × 720 is some 110 px a side: the "1 in n" note lies beside
    "query" and "key", shortened where the whole note does not fit."""
    heatmap = Heatmap("head 1")
    heatmap.set_axis_titles("query", "key")
    canvas = HeatmapCanvas(heatmap, with_bar=False)
    qtbot.addWidget(canvas)
    canvas.resize(230, 230)
    tokens = [f"token{i}" for i in range(40)]
    heatmap.set_data(np.zeros((40, 40)), masked=np.zeros((40, 40), dtype=bool), row_labels=tokens,
                     col_labels=tokens, levels=(0.0, 1.0))
    canvas.show()
    qtbot.waitExposed(canvas)
    canvas.grab()
    for axis in (heatmap.left_axis, heatmap.bottom_axis):
        assert axis.thinned_note.startswith("1 in ")
        start, end, text = axis.thinned_note_rect
        title = axis.label.mapRectToParent(axis.label.boundingRect())
        first, last = (title.left(), title.right()) if axis.orientation == "bottom" else (title.top(), title.bottom())
        assert end <= first or start >= last, (axis.orientation, start, end, first, last)  # beside the title
        assert text in (axis.thinned_note, axis.thinned_note.replace(" labelled", ""))


def test_at_1280x720_every_stage_title_is_whole(qtbot):
    """A stage's title is as wide as its heatmap with its row labels: over the cells alone, a
    narrow stage cut "logits (unscaled)" and "weights: softmax" at the colour bar beside them."""
    from attn_studio.gui.window import MainWindow

    window = MainWindow(restore_settings=False)  # the window a new user opens: six short tokens
    qtbot.addWidget(window)
    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)
    settle(window)
    assert window.heatmap_view.stages["logits"].title == "logits = scores"
    for key in ("scores", "logits", "weights"):
        hm = window.heatmap_view.stages[key]
        label = hm.plot.titleLabel
        text_width = label.item.boundingRect().width()
        assert label.geometry().width() >= text_width, (key, hm.title, label.geometry().width(), text_width)
        # and it lies over its own plot, not the colour bar beside it
        assert label.geometry().right() <= hm.plot.boundingRect().right() + 1
    window.close()
