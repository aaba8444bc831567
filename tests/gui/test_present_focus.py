"""Focus mode: one panel fills the window with every label; arrow keys move the query; Esc restores the window."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from gui_helpers import settle

WINDOW_PRESET = "animal"
WINDOW_SIZE = (1280, 720)


@pytest.fixture
def window(shared_window, qtbot):
    w = shared_window
    w.studio.update(projections=True, heads=4)
    settle(w)
    yield w
    w.focus.leave()
    settle(w)


def test_focus_on_head_2_fills_the_window_with_every_label(window, qtbot):
    w = window
    w.view_tabs.setCurrentWidget(w.positional_view)
    w.tables_dock.hide()
    settle(w)
    tab, docks = w.view_tabs.currentIndex(), [d.isVisible() for d in (w.controls_dock, w.tables_dock,
                                                                       w.variance_dock)]
    geometry = w.geometry()
    panel = w.focus.enter(("weights", 1))
    settle(w)
    assert w.findChild(QtWidgets.QFrame, "focusPanel") is panel and panel.isVisible()
    assert panel.geometry() == w.rect()
    canvas = panel.content
    assert canvas.width() >= 0.9 * w.width() and canvas.height() >= 0.75 * w.height()
    heatmap = canvas.heatmap
    state = w.studio.state
    assert [t for _, t in heatmap.bottom_axis.labels()] == state.key_tokens
    assert [t for _, t in heatmap.left_axis.labels()] == state.query_tokens
    assert heatmap.bottom_axis.visible_step() == 1 and heatmap.left_axis.visible_step() == 1
    assert heatmap.data.values.tolist() == w.studio.result.weights[1].tolist()
    assert heatmap.overlay.last_text_px > w.heatmap_view.stages["weights"].overlay.last_text_px
    assert "query" in panel.caption.text()

    start = state.query_index
    panel.setFocus()
    QTest.keyClick(panel, QtCore.Qt.Key_Down)
    settle(w)
    assert w.studio.state.query_index == start + 1
    assert heatmap.overlay.selected_row == start + 1
    QTest.keyClick(panel, QtCore.Qt.Key_Up)
    QTest.keyClick(panel, QtCore.Qt.Key_Up)
    settle(w)
    assert w.studio.state.query_index == start - 1

    QTest.keyClick(panel, QtCore.Qt.Key_Escape)
    settle(w)
    assert not w.focus.active and w.findChild(QtWidgets.QFrame, "focusPanel") is None
    assert w.view_tabs.currentIndex() == tab
    assert [d.isVisible() for d in (w.controls_dock, w.tables_dock, w.variance_dock)] == docks
    assert not w.isFullScreen() and w.geometry() == geometry
    w.tables_dock.show()


def test_f_focuses_the_current_tab_and_the_menu_names_every_panel(window):
    w = window
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    w.focus_action.trigger()
    settle(w)
    assert w.focus.target == ("step",)
    step = w.focus.panel.content.current_step
    QTest.keyClick(w.focus.panel, QtCore.Qt.Key_Right)
    assert w.focus.panel.content.current_step == step + 1
    w.focus_action.trigger()  # F again leaves
    settle(w)
    assert not w.focus.active
    w.focus.menu.aboutToShow.emit()
    texts = [a.text() for a in w.focus.menu.actions()]
    assert texts == [f"Weights of head {i}" for i in range(1, 5)] + ["Step by step", "Why divide by √d_k"]
    w.focus.menu.actions()[-1].trigger()
    settle(w)
    assert w.focus.target == ("variance",) and w.focus.panel.content.isVisible()


def test_the_pointer_follows_the_mouse_over_the_focused_panel_only_in_focus_mode(window, qtbot):
    w = window
    panel = w.focus.enter(("weights", 0))
    settle(w)
    pointer = panel.pointer
    assert pointer.testAttribute(QtCore.Qt.WA_TransparentForMouseEvents)
    assert pointer.geometry() == panel.rect()
    target = QtCore.QPoint(panel.content.width() // 2, panel.content.height() // 3)
    QTest.mouseMove(panel.content, target)
    settle(w)
    assert pointer.centre == panel.content.mapTo(panel, target)
    image = panel.grab().toImage()
    centre = pointer.centre * image.devicePixelRatio()
    # The circle tints the cell under it yellow: more red and green than blue.
    colour = image.pixelColor(centre)
    plain = panel.content.grab().toImage().pixelColor(panel.content.mapFrom(panel, pointer.centre))
    assert colour != plain and colour.red() > plain.red()
    w.focus.leave()
    settle(w)
    assert w.findChild(QtWidgets.QWidget, "focusPointer") is None  # no pointer outside focus mode


def test_a_focused_cell_explains_itself_with_its_formula(window):
    from attn_studio.explain import cell_tooltip

    w = window
    panel = w.focus.enter(("weights", 2))
    settle(w)
    text = panel.content.tooltip_text(1, 3)
    assert text == cell_tooltip(w.studio.state, w.studio.result, "weights", 2, 1, 3, digits=w.heatmap_view.digits)
    assert text != cell_tooltip(w.studio.state, w.studio.result, "weights", 0, 1, 3, digits=w.heatmap_view.digits)


def test_typing_f_in_the_sentence_box_types_it(window, qtbot):
    w = window
    w.controls_dock.show()
    w.activateWindow()
    edit = w.sentence_edit
    edit.setFocus()
    qtbot.waitUntil(edit.hasFocus)
    edit.end(False)
    QTest.keyClick(edit, QtCore.Qt.Key_F)
    settle(w)
    assert not w.focus.active
    assert edit.text().endswith("f") and w.studio.state.sentence.endswith("f")
    view = w.view_tabs.currentWidget()
    view.setFocus()
    QTest.keyClick(view, QtCore.Qt.Key_F)  # elsewhere F is focus mode
    settle(w)
    assert w.focus.active
