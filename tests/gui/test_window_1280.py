"""The window on a mirrored 1280×720 projector, read as a viewer sees it.

Every text is read from the window rendered into an SVG at 96 dpi (DESIGN.md, "Known traps"):
each ``<text>`` is what was drawn, its ``font-size`` its pixel size times the scale of the
groups around it. An elided number shows there as "−0…"; a shrunken label as its real size.
"""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtGui

from attn_studio.gui import presentation
from gui_helpers import settle
from stage_measure import drawn_texts as svg_texts

PRESETS = ("journey", "animal", "bank")
# The zoom ladder as a lecturer walks it: 100 %, Ctrl+= three times, back to 100 % and Ctrl+- once.
ZOOM_WALK = ("in", "in", "in", "reset", "out")
MIN_TOKEN_PX = 14.0


@pytest.fixture
def window(shared_window):
    w = shared_window
    w.fit_to_screen(QtCore.QRect(0, 0, 1280, 720))  # the layout the window chooses on such a screen
    w.resize(1280, 720)
    settle(w)
    yield w
    w.lecture.set_zoom(1.0, quiet=True)
    w.variance_dock.raise_()
    settle(w)


def walk_zoom(w):
    """Yield at 100 % and after each step of ZOOM_WALK (the zoom level reached)."""
    yield presentation.STYLE.zoom
    for step in ZOOM_WALK:
        if step == "in":
            w.lecture.zoom_in_action.trigger()
        elif step == "out":
            w.lecture.zoom_out_action.trigger()
        else:
            w.lecture.zoom_reset_action.trigger()
        settle(w)
        if step != "reset":
            yield presentation.STYLE.zoom


def words(text: str) -> list[str]:
    return text.split()


# -- tables: never "−0…" ------------------------------------------------------------------------------

def shown_tables(w):
    """The Numbers panel's tables a lecturer can open: (key, table), each brought to the top in turn."""
    tabs = w.numbers.table_tabs
    for key, table in w.numbers.tables.items():
        index = tabs.indexOf(table)
        if not tabs.isTabVisible(index) or not table.isEnabled():
            continue
        tabs.setCurrentIndex(index)
        settle(w)
        table.finish_fitting()
        settle(w)
        yield key, table


@pytest.mark.parametrize("preset", PRESETS)
def test_table_cells_stay_whole_at_every_zoom_step(window, preset):
    w = window
    assert w.load_preset(preset)
    # On a 1280-pixel screen the Numbers step aside for the Attention tab: read beside Step by step.
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    w.tables_dock.raise_()
    settle(w)
    for zoom in walk_zoom(w):
        for key, table in shown_tables(w):
            cut = [text for text, _ in svg_texts(table) if "…" in text]
            assert not cut, f"{preset} at {zoom:.0%}: {key} shows {cut[:5]}"
            # The same by measure: every column is as wide as the delegate needs for its numbers.
            model = table.model()
            for c in range(model.columnCount()):
                widest = max(table.sizeHintForIndex(model.index(r, c)).width() for r in range(model.rowCount()))
                assert table.columnWidth(c) >= widest, (preset, zoom, key, c, model.display_text(0, c))
        w.numbers.table_tabs.setCurrentIndex(0)


# -- step by step: whole vectors ----------------------------------------------------------------------

def assert_steps_whole(w, label: str) -> None:
    """Every text the step table draws is a piece of one of its cells or headers (a line of a wrapped
    vector; never "(0.44…"), and the cells of the first column in sight are drawn with every number."""
    view = w.pipeline_view
    table, model = view.table, view.model
    known = [model.cell_text(r, c) for r in range(model.rowCount()) for c in range(model.columnCount())]
    known += [str(model.headerData(c, QtCore.Qt.Horizontal)) for c in range(model.columnCount())]
    known += [str(model.headerData(r, QtCore.Qt.Vertical)) for r in range(model.rowCount())]
    drawn = [text.strip() for text, _ in svg_texts(table) if text.strip()]
    strange = [text for text in drawn if not any(text in whole for whole in known)]
    assert not strange, f"{label}: the step table draws {strange[:6]}"
    # The first key's column (always in sight) shows every number of the rows in sight whole.
    drawn_words = {word for text in drawn for word in words(text)}
    viewport = table.viewport().rect()
    for r in range(model.rowCount()):
        cell = table.visualRect(model.index(r, 0))
        if viewport.contains(cell):
            missing = [word for word in words(model.cell_text(r, 0)) if word not in drawn_words]
            assert not missing, f"{label}: step {r + 1} lacks {missing}"


@pytest.mark.parametrize("preset", PRESETS)
def test_step_by_step_shows_whole_vectors_at_every_zoom_step(window, preset):
    w = window
    assert w.load_preset(preset)
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    for zoom in walk_zoom(w):
        assert_steps_whole(w, f"{preset} at {zoom:.0%}")
    # Every step highlighted in turn (the highlighted one is bold, so wider).
    for step in range(len(w.pipeline_view.steps)):
        w.pipeline_view.set_current_step(step)
        settle(w)
        assert_steps_whole(w, f"{preset}, step {step + 1} highlighted")


def test_a_narrowed_step_column_scrolls_rather_than_cuts(window):
    w = window
    assert w.load_preset("animal")
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    view = w.pipeline_view
    table = view.table
    # The eleven keys do not fit beside the steps' titles at 1280 px: the table scrolls sideways.
    assert table.horizontalScrollBar().maximum() > 0
    font = QtGui.QFont(table.font())
    font.setBold(True)
    metrics = QtGui.QFontMetrics(font)
    for c in range(view.model.columnCount()):
        longest = max(metrics.horizontalAdvance(word) for r in range(view.model.rowCount())
                      for word in words(view.model.cell_text(r, c)))
        assert table.columnWidth(c) >= longest + 6, (c, table.columnWidth(c), longest)


# -- heatmaps, Heads → output, Compare: nothing cut, token labels 14 px ---------------------------------

@pytest.mark.parametrize("preset", PRESETS)
def test_token_labels_are_at_least_14_px_and_whole(window, preset):
    w = window
    assert w.load_preset(preset)
    state = w.studio.state
    tokens = set(state.key_tokens) | set(state.query_tokens)
    for view in (w.heatmap_view, w.heads_summary_view, w.compare_view):
        w.view_tabs.setCurrentWidget(view)
        settle(w)
        for zoom in walk_zoom(w):
            texts = svg_texts(view)
            labels = [(text, px) for text, px in texts if text in tokens]
            assert labels, (preset, type(view).__name__, zoom)
            small = sorted({round(px, 2) for _, px in labels if px < MIN_TOKEN_PX * min(zoom, 1.0) - 0.01})
            assert not small, f"{preset} {type(view).__name__} at {zoom:.0%}: token labels of {small} px"
            cut = [text for text, _ in texts if "…" in text]
            assert not cut, f"{preset} {type(view).__name__} at {zoom:.0%}: {cut[:5]}"


def test_every_token_of_the_stages_is_labelled_at_14_px(window):
    w = window
    assert w.load_preset("animal")
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    settle(w)
    tokens = w.studio.state.key_tokens
    for key, heatmap in w.heatmap_view.stages.items():
        if not w.heatmap_view.canvases[key].isVisible():
            continue
        for axis in (heatmap.left_axis, heatmap.bottom_axis):
            axis.picture = None
        w.heatmap_view.canvases[key].grab()  # paints the axes
        for axis in (heatmap.left_axis, heatmap.bottom_axis):
            assert [text for _, text in axis.drawn] == tokens, key  # every token, whole, none thinned
            assert axis.shown_step == 1 and axis.shown_scale == 1.0


# -- the trained model -----------------------------------------------------------------------------------

def _minilm_installed() -> bool:
    from attn_studio.pretrained import default_model_zip

    return default_model_zip() is not None


@pytest.mark.skipif(not _minilm_installed(), reason="all-MiniLM-L6-v2 is not installed")
def test_minilm_labels_and_steps_are_whole(window, qtbot):
    from attn_studio.pretrained import load_pretrained
    from attn_studio.trained import TrainedStudio
    from gui_helpers import wait_idle

    w = window
    room = w.trained.room
    room.set_studio(TrainedStudio(load_pretrained()))
    try:
        wait_idle(qtbot, w)
        tokens = set(w.studio.state.key_tokens)
        assert "[CLS]" in tokens and "animal" in tokens
        w.view_tabs.setCurrentWidget(w.heatmap_view)
        wait_idle(qtbot, w)
        for zoom in walk_zoom(w):
            wait_idle(qtbot, w)
            texts = svg_texts(w.heatmap_view.figure_widget())  # the stages whole, also where scrolled
            labels = [(text, px) for text, px in texts if text in tokens]
            # Every token labelled on both axes of each of the three stages, none below 14 px.
            assert len(labels) >= 3 * 2 * len(w.studio.state.key_tokens) - 3, (zoom, len(labels))
            small = sorted({round(px, 2) for _, px in labels if px < MIN_TOKEN_PX * min(zoom, 1.0) - 0.01})
            assert not small, f"MiniLM at {zoom:.0%}: token labels of {small} px"
        w.view_tabs.setCurrentWidget(w.pipeline_view)
        wait_idle(qtbot, w)
        for zoom in walk_zoom(w):
            wait_idle(qtbot, w)
            assert_steps_whole(w, f"MiniLM at {zoom:.0%}")
        w.tables_dock.raise_()
        for zoom in walk_zoom(w):
            for key, table in shown_tables(w):
                cut = [text for text, _ in svg_texts(table) if "…" in text]
                assert not cut, (f"MiniLM at {zoom:.0%}: {key} shows {cut[:5]}", table.columnWidth(0), table.horizontalHeader().defaultSectionSize(), table.model().columnCount())
            w.numbers.table_tabs.setCurrentIndex(0)
    finally:
        room.use_toy()
        wait_idle(qtbot, w)
