"""Zoom that enlarges everything together and scrolls, and the precision setting; both kept between runs."""

from __future__ import annotations

import pytest
from PySide6 import QtCore

from attn_studio.formatting import format_number
from attn_studio.gui import presentation
from attn_studio.gui.window import MainWindow
from gui_helpers import settle


@pytest.fixture
def make_window(qtbot):
    made = []

    def make(**kwargs):
        w = MainWindow(**kwargs)
        qtbot.addWidget(w)
        w.show()
        w.fit_to_screen(QtCore.QRect(0, 0, 1280, 720))  # laid out as on a 1280×720 projector
        w.resize(1280, 720)
        qtbot.waitExposed(w)
        settle(w)
        made.append(w)
        return w

    yield make
    for w in made:
        w.restore_settings = False  # the test's windows leave the settings file as the test left it
        w.lecture.set_zoom(1.0, quiet=True)
    if hasattr(presentation.STYLE, "digits"):
        presentation.STYLE.digits = None


def weights_canvas(w):
    return w.heatmap_view.canvases["weights"]


def test_zoom_enlarges_cell_values_and_labels_together_and_is_remembered(make_window):
    w = make_window()
    hm = w.heatmap_view.stages["weights"]
    before_px = hm.overlay.last_text_px
    before_tick = hm.left_axis.style["tickFont"].pointSizeF()
    before_size = weights_canvas(w).size()
    assert before_px > 0
    w.lecture.zoom_in_action.trigger()
    settle(w)
    zoom = presentation.STYLE.zoom
    assert zoom > 1.0
    hm.overlay.update()
    weights_canvas(w).grab()  # paint: the cell values are sized when drawn
    assert hm.left_axis.style["tickFont"].pointSizeF() == pytest.approx(before_tick * zoom)
    assert hm.overlay.last_text_px >= 0.97 * zoom * before_px
    after = weights_canvas(w).size()
    assert after.width() >= before_size.width() and after.height() >= before_size.height()
    # The views keep their layout and the central area scrolls instead of squashing them.
    assert w.central_scroll.horizontalScrollBar().maximum() > 0 or w.central_scroll.verticalScrollBar().maximum() > 0
    w.save_settings()

    again = make_window()
    assert presentation.STYLE.zoom == pytest.approx(zoom)
    assert again.view_tabs.minimumWidth() > 0  # zoomed: the views are larger than the area they scroll in


def test_precision_menu_sets_cells_and_tooltips_and_is_remembered(make_window):
    w = make_window(preset="bank")
    hm = w.heatmap_view.stages["scores"]
    canvas = w.heatmap_view.canvases["scores"]
    model = w.models["output"]
    value = float(w.studio.result.scores[w.studio.state.shown_head][0, 1])
    out = float(w.studio.result.output[0, 0])
    assert value > 0
    actions = {a.data(): a for a in w.lecture.precision_actions.actions()}
    actions[2].trigger()
    settle(w)
    assert actions[2].isChecked() and not actions[4].isChecked()
    assert hm.overlay.cell_text(0, 1) == f"{value:.2f}"
    assert format_number(value, 2) in canvas.tooltip_text(0, 1)
    assert format_number(value, 4) not in canvas.tooltip_text(0, 1)
    assert model.data(model.index(0, 0)) == format_number(out, 2)

    actions[4].trigger()
    settle(w)
    assert hm.overlay.cell_text(0, 1) == f"{value:.4f}"
    assert format_number(value, 4) in canvas.tooltip_text(0, 1)
    assert model.data(model.index(0, 0)) == format_number(out, 4)
    w.save_settings()

    again = make_window(preset="bank")
    assert again.lecture.digits == 4
    assert {a.data(): a for a in again.lecture.precision_actions.actions()}[4].isChecked()
    assert again.heatmap_view.stages["scores"].overlay.cell_text(0, 1) == f"{value:.4f}"
    assert format_number(value, 4) in again.heatmap_view.canvases["scores"].tooltip_text(0, 1)


@pytest.mark.parametrize("stored", ["7", "two", "-2"])
def test_a_stored_precision_that_makes_no_sense_is_ignored(stored, tmp_path):
    from attn_studio.gui import settings

    store = settings.settings()
    store.setValue("digits", stored)
    store.sync()
    assert settings.load().digits is None
    store.setValue("digits", "4")
    store.sync()
    assert settings.load().digits == 4
