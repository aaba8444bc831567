"""At a projector's 1280×720 and 1366×768 nothing is cut: every tab title, the Play button, the Model panel."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets

from gui_helpers import settle, fully_shown


@pytest.fixture
def window(shared_window):
    return shared_window


def title_fits(bar: QtWidgets.QTabBar, i: int) -> bool:
    text_width = bar.fontMetrics().horizontalAdvance(bar.tabText(i))
    return bar.tabRect(i).width() >= text_width


def tabs_reachable(bar: QtWidgets.QTabBar) -> bool:
    inside = all(bar.rect().contains(bar.tabRect(i)) for i in range(bar.count()) if bar.isTabVisible(i))
    buttons = [b for b in bar.findChildren(QtWidgets.QToolButton) if b.isVisible()]
    return inside or len(buttons) == 2


@pytest.mark.parametrize("size", [(1280, 720), (1366, 768)])
def test_nothing_is_cut_at_projector_sizes(window, size, qtbot):
    w = window
    w.fit_to_screen(QtCore.QRect(0, 0, *size))  # the layout the window chooses on such a screen
    w.resize(*size)
    settle(w)
    assert w.size() == QtCore.QSize(*size)
    bar = w.view_tabs.tabBar()
    assert bar.count() >= 6
    for i in range(bar.count()):
        if bar.isTabVisible(i):  # the trained-model tabs are hidden with the toy model
            assert title_fits(bar, i), bar.tabText(i)  # never elided
    assert tabs_reachable(bar)
    w.view_tabs.setCurrentWidget(w.pipeline_view)  # beside which the Numbers are shown (not the Attention tab's)
    w.tables_dock.raise_()  # the Numbers panel's table tabs
    settle(w)
    table_bar = w.table_tabs.tabBar()
    assert table_bar.isVisible() and tabs_reachable(table_bar)
    w.variance_dock.raise_()

    scroll = w.controls_scroll
    assert scroll.verticalScrollBarPolicy() != QtCore.Qt.ScrollBarAlwaysOff
    play = w.play_button
    scroll.ensureWidgetVisible(play)
    settle(w)
    top_left = play.mapTo(scroll.viewport(), QtCore.QPoint(0, 0))
    assert scroll.viewport().rect().contains(QtCore.QRect(top_left, play.size()))
    # Every row of the Model panel is as wide as the panel shows (nothing cut at the right).
    for child in w.controls.findChildren(QtWidgets.QWidget):
        if child.isVisibleTo(w.controls) and child.parentWidget() is w.controls:
            right = child.mapTo(scroll.viewport(), QtCore.QPoint(child.width(), 0)).x()
            assert right <= scroll.viewport().width() + 1, child.objectName()


@pytest.mark.parametrize("size", [(1280, 720), (1366, 768)])
def test_the_three_stages_show_whole_with_their_values_at_projector_sizes(window, size):
    w = window
    w.fit_to_screen(QtCore.QRect(0, 0, *size))
    w.resize(*size)
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    # The Numbers share the bottom with the variance plot, so the views get the width (and they step aside
    # for the Attention tab, which gets the height too).
    assert w.tabifiedDockWidgets(w.variance_dock) == [w.tables_dock]
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    settle(w)
    assert not w.tables_dock.isVisible() and not w.variance_dock.isVisible()
    for key in ("scores", "logits", "weights"):
        canvas = w.heatmap_view.canvases[key]
        assert fully_shown(canvas, w), key  # not scrolled out of sight
        canvas.grab()
        assert w.heatmap_view.stages[key].overlay.last_text_px > 0, key  # cell values drawn
    w.reset_layout()
    settle(w)
