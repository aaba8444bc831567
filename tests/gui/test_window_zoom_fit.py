"""The window at 1280×720 and 1920×1080 through the zoom steps a lecturer takes (100 %, Ctrl+= three
times, back to 100 % and Ctrl+- once), read as a viewer sees it:

- every control of the Model panel is whole inside the panel's viewport, with the toy model and with
  all-MiniLM-L6-v2 (it was cut at the right from 115 % on, behind a sideways scroll bar);
- the Heads tab's heatmaps label every token at 14 px or more (they drew 12 px);
- Heads → output labels every column of each map (the narrow "= output" labelled 1 in 2).

Text sizes are read from an SVG rendering (``stage_measure.drawn_texts``). The trained-model tests are
skipped where the model is not installed.
"""

from __future__ import annotations

from collections import Counter

import pytest
from PySide6 import QtCore, QtWidgets

from attn_studio.gui import presentation
from attn_studio.pretrained import default_model_zip
from gui_helpers import fit_screen, fully_shown, settle, showing_minilm
from stage_measure import drawn_texts

SIZES = [(1280, 720), (1920, 1080)]
ZOOM_WALK = ("in", "in", "in", "reset", "out")
MIN_TOKEN_PX = 14.0
needs_minilm = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")
CONTROLS = (QtWidgets.QAbstractButton, QtWidgets.QComboBox, QtWidgets.QAbstractSpinBox, QtWidgets.QLineEdit,
            QtWidgets.QLabel)


@pytest.fixture
def window(shared_window):
    w = shared_window
    yield w
    w.lecture.set_zoom(1.0, quiet=True)
    settle(w)


fit = fit_screen  # the layout the window chooses on a screen of that size, at that size


def walk_zoom(w):
    """Yield at 100 % and after each step of ZOOM_WALK (the zoom level reached)."""
    yield presentation.STYLE.zoom
    for step in ZOOM_WALK:
        action = {"in": w.lecture.zoom_in_action, "out": w.lecture.zoom_out_action,
                  "reset": w.lecture.zoom_reset_action}[step]
        action.trigger()
        settle(w)
        settle(w)  # the application font reaches the widgets one turn later
        if step != "reset":
            yield presentation.STYLE.zoom


def cut_controls(w) -> list[str]:
    """The Model panel's controls not whole in its viewport, each scrolled to first (scrolling down is
    what a person does; only what no vertical scrolling brings into view counts as cut)."""
    scroll = w.controls_scroll
    viewport, bar = scroll.viewport(), scroll.verticalScrollBar()
    cut = []
    for child in scroll.widget().findChildren(QtWidgets.QWidget):
        if not isinstance(child, CONTROLS) or not child.isVisibleTo(w) or child.isWindow():
            continue
        if isinstance(child, QtWidgets.QLabel) and not child.text():
            continue
        if isinstance(child.parentWidget(), QtWidgets.QAbstractSpinBox):
            continue  # a spin box's own line edit: the spin box is checked
        bar.setValue(bar.value() + child.mapTo(viewport, QtCore.QPoint(0, 0)).y())  # its top at the viewport's top
        if not fully_shown(child, viewport):
            cut.append(child.objectName() or f"{type(child).__name__} {getattr(child, 'text', lambda: '')()!r}")
    bar.setValue(0)
    return cut


@pytest.fixture
def trained(window, qtbot, minilm):
    """The module's window showing MiniLM on its "animal" sentence; back to the toy model afterwards."""
    with showing_minilm(window, qtbot, minilm):
        yield window
        window.lecture.set_zoom(1.0, quiet=True)


# -- the Model panel ----------------------------------------------------------------------------------

def assert_model_panel_whole(w, size, what: str) -> None:
    fit(w, size)
    scroll = w.controls_scroll
    for zoom in walk_zoom(w):
        assert w.width() == size[0], (what, zoom)  # the panel never pushes the window wider
        assert not scroll.horizontalScrollBar().isVisible(), (what, size, zoom)  # nothing hidden at the right
        assert cut_controls(w) == [], (what, size, zoom)


@pytest.mark.parametrize("size", SIZES)
def test_every_control_of_the_toy_model_panel_is_whole_at_every_zoom_step(window, size):
    assert_model_panel_whole(window, size, "toy")


@needs_minilm
@pytest.mark.parametrize("size", SIZES)
def test_every_control_of_the_model_panel_is_whole_at_every_zoom_step_with_minilm(trained, size):
    w = trained
    assert_model_panel_whole(w, size, "MiniLM")
    # The model's name whole in its box at the largest step of the walk (it read "all-MiniLM-L6-v2 (train").
    w.lecture.set_zoom(1.5, quiet=True)
    settle(w)
    combo = w.trained.room.panel.model_combo
    option = QtWidgets.QStyleOptionComboBox()
    combo.initStyleOption(option)
    field = combo.style().subControlRect(QtWidgets.QStyle.CC_ComboBox, option,
                                         QtWidgets.QStyle.SC_ComboBoxEditField, combo)
    assert combo.fontMetrics().horizontalAdvance(combo.currentText()) <= field.width()


def test_the_model_panel_follows_the_window_not_the_screen(window):
    """The offscreen screen is 800 px wide: the panel's limit comes from the window fitted to 1920 px."""
    w = window
    fit(w, (1920, 1080))
    w.lecture.set_zoom(1.5, quiet=True)
    settle(w)
    scroll = w.controls_scroll
    assert scroll.minimumWidth() > 0.3 * 800  # was held to 307 px (30 % of 1024)
    assert scroll.widget().minimumSizeHint().width() <= scroll.viewport().width()


# -- the Heads tab ------------------------------------------------------------------------------------

@needs_minilm
@pytest.mark.parametrize("size", SIZES)
def test_the_heads_tab_labels_every_token_at_14_px(trained, size):
    w = trained
    fit(w, size)
    lab = w.heads_tab
    lab.pages.setCurrentIndex(0)  # "Find the head": the selected head's heatmap
    w.view_tabs.setCurrentWidget(lab)
    settle(w)
    tokens = list(w.studio.target.computed.run.tokens)
    assert "animal" in tokens and tokens[0] == "[CLS]"
    head = lab.head_map
    assert head.labelled()
    texts = drawn_texts(head)
    labels = [(text, px) for text, px in texts if text in set(tokens)]
    # Every token named twice (its row and its column), and no more: no label left out.
    assert Counter(text for text, _ in labels) == Counter(tokens * 2)
    small = sorted({(text, round(px, 1)) for text, px in labels if px < MIN_TOKEN_PX})
    assert not small, small  # was 12 px
    # The role grid's layer and head numbers too.
    grid = [(text, px) for text, px in drawn_texts(lab.role_grid) if text.isdigit()]
    assert grid and min(px for _, px in grid) >= MIN_TOKEN_PX


# -- Heads → output -----------------------------------------------------------------------------------

@pytest.mark.parametrize("preset", ["journey", "animal", "bank"])
def test_every_column_of_heads_output_is_labelled(window, preset):
    w = window
    fit(w, (1280, 720))
    assert w.load_preset(preset)
    view = w.heads_summary_view
    w.view_tabs.setCurrentWidget(view)
    settle(w)
    for zoom in walk_zoom(w):
        for key, canvas in view.canvases.items():
            if canvas.isHidden():
                continue
            data = view.maps[key].data
            axis = view.maps[key].plot.getAxis("bottom")
            texts = drawn_texts(canvas)  # paints it: the axis thins its labels as drawn
            assert axis.shown_step == 1 and not axis.thinned_note, (preset, zoom, key, axis.thinned_note)
            assert [t for _, t in axis.drawn] == [str(c) for c in data.col_labels], (preset, zoom, key)
            assert not [t for t, _ in texts if t.startswith("1 in")], (preset, zoom, key)
