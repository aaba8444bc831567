"""Lecture mode: full screen, zoom of every text, themes, colour maps, keys, play, settings kept."""

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.gui import MainWindow, presentation
from attn_studio.gui.qt.pg import pg
from gui_helpers import finish
from window_reset import activate, reset_presentation


WINDOW_PRESET = "animal"
WINDOW_SIZE = (1366, 768)


@pytest.fixture(scope="module", autouse=True)
def _look_put_back(_module_window):
    yield
    # The look is application-wide: put back for the modules that follow.
    presentation.apply(QtWidgets.QApplication.instance(), _module_window[0], theme="light", zoom=1.0)
    presentation.set_weights_colormap("viridis")


@pytest.fixture
def win(document_window, qtbot):
    # One window serves the module. Before each test: nothing left running, then (after the shared
    # reset of the state, size and tab) the text size, theme, colour map, full screen, play walk
    # and document put back and checked, and the window made the active one again.
    w = document_window
    reset_presentation(w, qtbot)
    activate(w, qtbot)
    w.bridge.flush()
    return w


def _tick_point_size(w):
    axis = w.heatmap_view.stages["weights"].left_axis
    return axis.style["tickFont"].pointSizeF()


def test_f11_toggles_full_screen(win, qtbot):
    qtbot.keyClick(win, QtCore.Qt.Key_F11)
    qtbot.waitUntil(win.isFullScreen)
    assert win.full_screen_action.isChecked()
    qtbot.keyClick(win, QtCore.Qt.Key_F11)
    qtbot.waitUntil(lambda: not win.isFullScreen())


def test_zoom_reaches_tables_axes_titles_and_cell_values(win, qtbot):
    table = win.tables["embeddings"]
    before_font = table.font().pointSizeF()
    before_tick = _tick_point_size(win)
    before_row = table.verticalHeader().defaultSectionSize()
    overlay = win.heatmap_view.stages["weights"].overlay
    qtbot.keyClick(win, QtCore.Qt.Key_Equal, QtCore.Qt.ControlModifier)
    qtbot.keyClick(win, QtCore.Qt.Key_Equal, QtCore.Qt.ControlModifier)
    assert presentation.STYLE.zoom > 1.2
    assert table.font().pointSizeF() > before_font * 1.2
    assert table.verticalHeader().defaultSectionSize() > before_row
    assert _tick_point_size(win) > before_tick * 1.2
    assert overlay.zoom == presentation.STYLE.zoom
    title_html = win.heatmap_view.stages["weights"].plot.titleLabel.item.toHtml()
    assert f"font-size:{presentation.BASE_TITLE_PT * presentation.STYLE.zoom:g}pt" in title_html
    caption = win.variance_plot.caption
    assert caption.font().pointSizeF() > before_font * 1.2
    qtbot.keyClick(win, QtCore.Qt.Key_0, QtCore.Qt.ControlModifier)
    assert presentation.STYLE.zoom == 1.0
    assert table.font().pointSizeF() == pytest.approx(before_font)
    assert _tick_point_size(win) == pytest.approx(before_tick)
    qtbot.keyClick(win, QtCore.Qt.Key_Minus, QtCore.Qt.ControlModifier)
    assert presentation.STYLE.zoom < 1.0


def test_zoomed_cell_values_are_drawn_larger(win, qtbot):
    w = win
    w.load_preset("journey")
    w.bridge.flush()
    canvas = w.heatmap_view.canvases["weights"]
    overlay = w.heatmap_view.stages["weights"].overlay

    def drawn_px():
        canvas.grab()  # paints the scene
        return overlay.last_text_px

    w.resize(2400, 1100)  # cells large enough that the zoom, not the cell, sets the size
    w.bridge.flush()
    w.set_zoom(0.8)
    small = drawn_px()
    w.set_zoom(1.3)
    large = drawn_px()
    assert small > 0 and large == pytest.approx(small * 1.3 / 0.8, rel=0.05)


def test_themes_recolour_the_window_and_the_plots(win):
    win.set_theme("dark")
    window_colour = QtWidgets.QApplication.instance().palette().color(QtGui.QPalette.Window)
    assert window_colour == QtGui.QColor(presentation.THEMES["dark"].window)
    canvas = win.heatmap_view.canvases["weights"]
    assert canvas.backgroundBrush().color() == QtGui.QColor(presentation.THEMES["dark"].canvas)
    axis = win.heatmap_view.stages["weights"].left_axis
    assert axis.textPen().color() == QtGui.QColor(presentation.THEMES["dark"].ink)
    win.set_theme("high contrast")
    assert win.heatmap_view.stages["weights"].overlay.outline == QtGui.QColor("#ffff00")
    checked = [a.data() for a in win.theme_actions.actions() if a.isChecked()]
    assert checked == ["high contrast"]


def test_colour_map_choice_recolours_weights_heatmaps_and_bars(win):
    hm = win.heatmap_view.stages["weights"]
    before = hm.image.lut.copy()
    win.set_colormap("cividis")
    expected = pg.colormap.get("cividis").getLookupTable(nPts=256)
    np.testing.assert_array_equal(hm.image.lut, expected)
    assert not np.array_equal(before, hm.image.lut)
    assert hm.bar.colorMap().name == "cividis"
    # scores keep their diverging map
    assert win.heatmap_view.stages["scores"].colormap.name != "cividis"
    # a head heatmap created afterwards follows the choice too
    win.studio.update(heads=5)
    win.bridge.flush()
    np.testing.assert_array_equal(win.heatmap_view.head_maps[4].image.lut, expected)


def test_arrow_keys_move_the_selected_query(win, qtbot):
    win.heatmap_view.setFocus()
    start = win.studio.state.query_index
    qtbot.keyClick(win.heatmap_view, QtCore.Qt.Key_Down)
    assert win.studio.state.query_index == start + 1
    qtbot.keyClick(win.heatmap_view, QtCore.Qt.Key_Up)
    qtbot.keyClick(win.heatmap_view, QtCore.Qt.Key_Up)
    assert win.studio.state.query_index == start - 1
    # Alt+Down works wherever the focus is
    win.sentence_edit.setFocus()
    qtbot.keyClick(win.sentence_edit, QtCore.Qt.Key_Down, QtCore.Qt.AltModifier)
    assert win.studio.state.query_index == start


def test_play_walks_the_query_through_the_sentence(win, qtbot):
    win.play_interval_spin.setValue(0.2)
    start = win.studio.state.query_index
    win.play_button.click()
    assert win.play_button.isChecked()
    qtbot.waitUntil(lambda: win.studio.state.query_index != start, timeout=2000)
    win.play_button.click()
    stopped_at = win.studio.state.query_index
    qtbot.wait(450)
    assert win.studio.state.query_index == stopped_at
    # playing is not an edit
    assert not win.studio.can_undo


def test_standard_shortcuts_are_bound(win):
    assert win.undo_action.shortcut() == QtGui.QKeySequence(QtGui.QKeySequence.Undo)
    assert QtGui.QKeySequence(QtGui.QKeySequence.Redo) in win.redo_action.shortcuts() or \
        win.redo_action.shortcut() == QtGui.QKeySequence(QtGui.QKeySequence.Redo)
    assert win.open_action.shortcut() == QtGui.QKeySequence(QtGui.QKeySequence.Open)
    assert win.save_action.shortcut() == QtGui.QKeySequence(QtGui.QKeySequence.Save)
    assert QtGui.QKeySequence(QtCore.Qt.Key_F11) in win.full_screen_action.shortcuts()


def test_help_lists_the_keyboard_shortcuts(win):
    dialog = win.show_shortcuts()
    table = dialog.findChild(QtWidgets.QTableWidget)
    texts = {table.item(i, 1).text() for i in range(table.rowCount())}
    assert {"Undo", "Full screen", "Zoom in", "Previous / next query token"} <= texts
    dialog.close()


def test_the_keyboard_shortcuts_dialog_is_whole(win):
    """Every row's keys and words fit their columns: nothing cut on the right (it was, at 560 px)."""
    dialog = win.show_shortcuts()
    table = dialog.findChild(QtWidgets.QTableWidget, "shortcutsTable")
    QtWidgets.QApplication.processEvents()
    fm = table.fontMetrics()
    for column in (0, 1):
        widest = max(fm.horizontalAdvance(table.item(i, column).text()) for i in range(table.rowCount()))
        assert table.columnWidth(column) >= widest
    assert table.horizontalScrollBar().maximum() == 0  # no sideways scrolling
    assert table.columnWidth(0) + table.columnWidth(1) <= table.viewport().width() + 1
    texts = {table.item(i, 1).text() for i in range(table.rowCount())}
    assert "Training lab: Why two layers" in texts
    assert dialog.width() <= 1366
    dialog.close()


def test_getting_started_leads_the_first_five_minutes(win, qtbot):
    """Help → Getting started: five steps, whole on a laptop's screen, each button doing what it says."""
    action = win.findChild(QtGui.QAction, "gettingStartedAction")
    assert action is not None and action.text().replace("&", "") == "Getting started"
    action.trigger()
    dialog = win.getting_started_dialog
    qtbot.waitExposed(dialog)
    assert dialog.isVisible() and not dialog.isModal()  # beside the window, which stays usable
    texts = " ".join(label.text() for label in dialog.findChildren(QtWidgets.QLabel))
    for needed in ("type a sentence", "Attention tab", "colour", "Example lecture", "all-MiniLM-L6-v2",
                   "Training menu"):
        assert needed.lower() in texts.lower(), needed
    # Whole: within a 1366×768 screen, and every paragraph as tall as its wrapped text needs.
    assert dialog.width() <= 1366 and dialog.frameGeometry().height() <= 768 - 40
    for label in dialog.findChildren(QtWidgets.QLabel):
        assert label.height() >= label.heightForWidth(label.width()), label.text()[:40]
    win.view_tabs.setCurrentIndex(1)
    dialog.findChild(QtWidgets.QPushButton, "tour_attention").click()
    assert win.view_tabs.currentIndex() == 0
    dialog.findChild(QtWidgets.QPushButton, "tour_journey").click()
    assert win.studio.state.sentence == "Your journey starts with one step"
    assert dialog.findChild(QtWidgets.QPushButton, "tour_lecture") is not None
    dialog.close()


def test_every_control_explains_itself(win):
    panel = win.findChild(QtWidgets.QWidget, "controlsPanel")
    controls = panel.findChildren(QtWidgets.QAbstractButton) + panel.findChildren(QtWidgets.QComboBox) + \
        panel.findChildren(QtWidgets.QAbstractSpinBox) + panel.findChildren(QtWidgets.QLineEdit)
    controls = [c for c in controls if not c.objectName().startswith("qt_")]
    assert len(controls) >= 16
    missing = [c.objectName() or type(c).__name__ for c in controls if not c.toolTip().strip()]
    assert not missing


def test_settings_are_kept_across_a_restart(qtbot):
    first = MainWindow()
    qtbot.addWidget(first)
    first.show()
    first.set_theme("dark")
    first.set_zoom(1.15)
    first.set_colormap("magma")
    first.resize(1250, 760)  # above the minimum, within the (offscreen) screen: kept exactly
    # Closed beside Step by step (at 1250 px the Numbers step aside for the Attention tab by themselves).
    first.view_tabs.setCurrentWidget(first.pipeline_view)
    first.tables_dock.hide()
    size = first.size()
    geometry = first.saveGeometry()
    assert first.close()
    second = MainWindow()
    qtbot.addWidget(second)
    second.show()
    try:
        assert presentation.STYLE.theme.name == "dark"
        assert presentation.STYLE.zoom == pytest.approx(1.15)
        assert presentation.STYLE.weights_cmap == "magma"
        from attn_studio.gui.settings import settings
        assert settings().value("geometry") == geometry
        # The offscreen screen is 800 px wide, so Qt clamps a restored width to
        # fit it; the height fits and comes back exactly.
        assert second.size().height() == size.height() == 760
        assert not second.tables_dock.isVisible()
        second.reset_layout()
        assert second.tables_dock.isVisible()
    finally:
        presentation.apply(QtWidgets.QApplication.instance(), second, theme="light", zoom=1.0)
        presentation.set_weights_colormap("viridis")


def _paragraph(n):
    words = "the lecturer pasted a long paragraph about attention so every token attends to every other".split()
    return " ".join(words[i % len(words)] for i in range(n))


def test_a_pasted_paragraph_of_600_tokens_is_shown_thinned_with_a_notice(win, qtbot):
    text = _paragraph(640)
    win.sentence_edit.setText(text)
    win.sentence_edit.textEdited.emit(text)
    finish(win, qtbot)  # 640 tokens: computed off the GUI thread, then drawn
    n = len(win.studio.state.tokens)
    assert n == 640
    hm = win.heatmap_view.stages["weights"]
    assert hm.image.image.shape == (n, n)
    for key in ("scores", "weights"):
        win.heatmap_view.canvases[key].grab()  # paint: the axes decide how many labels fit
    rows = win.heatmap_view.stages["scores"].left_axis  # the first stage carries the row labels
    assert hm.bottom_axis.shown_step > 10 and rows.shown_step > 10
    assert hm.overlay.last_text_px == 0.0  # cells far too small for numbers
    assert "Long input (640 tokens)" in win.heatmap_view.header.text()
    # an edit at that size still goes through to the heatmaps
    model = win.models["embeddings"]
    assert model.setData(model.index(3, 0), "2.5")
    win.bridge.flush()
    np.testing.assert_allclose(hm.image.image, win.studio.result.weights[win.studio.state.head_index])


def test_short_sentences_label_every_token(win):
    win.load_preset("journey")
    win.bridge.flush()
    for key in ("scores", "weights"):
        win.heatmap_view.canvases[key].grab()
    assert win.heatmap_view.stages["scores"].left_axis.shown_step == 1
    assert win.heatmap_view.stages["weights"].bottom_axis.shown_step == 1
    assert "Long input" not in win.heatmap_view.header.text()
