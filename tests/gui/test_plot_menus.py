"""Plots build their right-click menus on first use (gui/qt/pg.py): what a person can do is unchanged.

A right-click still opens pyqtgraph's menu with all its entries, and every call that goes through
the Plot Options form (log mode, grid, downsampling, saved state) still does what it did.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtTest, QtWidgets

from attn_studio.gui.qt import pg_menus as _pg
from attn_studio.gui.qt.pg import pg


@pytest.fixture(autouse=True)
def _app(qapp):
    return qapp


@pytest.fixture
def plot_widget(qtbot):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.resize(320, 240)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    for menu in QtWidgets.QApplication.topLevelWidgets():
        if isinstance(menu, QtWidgets.QMenu) and menu.isVisible():
            menu.close()


def _built(plot) -> bool:
    return _pg._plot_options_built(plot)


def _entries(menu) -> list[str]:
    return [action.text() for action in menu.actions() if not action.isSeparator()]


# The patch applies only to the pyqtgraph source it was copied from; any other version keeps its
# eager menus (slower, and correct): the tests of what the patch defers run only where it applies,
# the tests of what a person can do with a plot run everywhere.
patched = pytest.mark.skipif(not _pg.MENUS_ON_FIRST_USE,
                             reason="this pyqtgraph builds plot menus as plots are made (the patch does not apply)")


def _unbuilt(plot) -> bool:
    """True when the plot's menus are not built yet, where the patch applies (always, elsewhere)."""
    return not _pg.MENUS_ON_FIRST_USE or not _built(plot)


def test_the_patch_applies_to_no_other_source():
    # pyqtgraph's functions are now the patched ones: a second check sees another source and refuses.
    assert _pg._menus_on_first_use() is False


@patched
def test_a_new_plot_builds_no_menu():
    plot = pg.PlotItem()
    assert _unbuilt(plot)
    assert plot.vb.__dict__["_menu"] is _pg._PENDING_MENU


def test_right_click_opens_the_full_menu(plot_widget, qtbot):
    plot = plot_widget.getPlotItem()
    plot.plot([0.0, 1.0, 2.0], [1.0, 3.0, 2.0])
    assert _unbuilt(plot)
    centre = plot_widget.mapFromScene(plot.vb.sceneBoundingRect().center())
    QtTest.QTest.mouseClick(plot_widget.viewport(), QtCore.Qt.RightButton, QtCore.Qt.NoModifier, centre)
    menu = plot.vb.menu
    qtbot.waitUntil(menu.isVisible, timeout=2000)
    entries = _entries(menu)
    for entry in ("View All", "X axis", "Y axis", "Mouse Mode", "Plot Options", "Export..."):
        assert entry in entries, entries
    options = [a.menu() for a in menu.actions() if a.text() == "Plot Options"][0]
    assert _entries(options) == ["Transforms", "Downsample", "Average", "Alpha", "Grid", "Points"]
    # The menu shows the view's state: X is auto-ranged.
    assert plot.vb.menu.ctrl[0].autoRadio.isChecked()


def test_view_all_from_the_menu_still_works(plot_widget):
    plot = plot_widget.getPlotItem()
    plot.plot([0.0, 10.0], [0.0, 5.0])
    plot.setXRange(3.0, 4.0, padding=0)
    plot.vb.menu.viewAll.trigger()
    (x0, x1), _ = plot.viewRange()
    assert x0 <= 0.0 and x1 >= 10.0


def test_set_log_mode_on_an_unbuilt_plot():
    plot = pg.PlotItem()
    before = plot.plot([1.0, 10.0, 100.0], [1.0, 2.0, 3.0])
    plot.setLogMode(x=True, y=False)
    after = plot.plot([1.0, 10.0], [1.0, 2.0])
    assert before.opts["logMode"] == [True, False]
    assert after.opts["logMode"] == [True, False]
    assert plot.getAxis("bottom").logMode
    assert plot.ctrl.logXCheck.isChecked() and not plot.ctrl.logYCheck.isChecked()


def test_show_grid_and_downsampling_on_an_unbuilt_plot():
    plot = pg.PlotItem()
    curve = plot.plot(np.arange(100.0))
    plot.showGrid(x=True, y=False, alpha=0.5)
    assert plot.getAxis("bottom").grid == pytest.approx(0.5 * 255, abs=1)
    assert plot.getAxis("left").grid is False
    plot.setDownsampling(ds=4, mode="mean")
    assert curve.opts["downsample"] == 4 and curve.opts["downsampleMethod"] == "mean"
    eager = pg.PlotItem()
    _pg._build_plot_options(eager)
    eager.setDownsampling(ds=4, mode="mean")
    assert plot.downsampleMode() == eager.downsampleMode() != (1, False, "peak")


def test_curves_are_set_up_as_with_a_built_menu():
    # The unbuilt form answers from the defaults: a curve gets the options a built form gives it.
    lazy, eager = pg.PlotItem(), pg.PlotItem()
    _pg._build_plot_options(eager)
    a = lazy.plot([0.0, 1.0], [2.0, 3.0], params={"run": 1})
    b = eager.plot([0.0, 1.0], [2.0, 3.0], params={"run": 1})
    assert _unbuilt(lazy)
    keys = ("alphaHint", "alphaMode", "logMode", "fftMode", "subtractMeanMode", "downsample",
            "autoDownsample", "downsampleMethod", "clipToView")
    assert {k: a.opts[k] for k in keys} == {k: b.opts[k] for k in keys}
    assert lazy.paramList == eager.paramList == {"run": False}
    # Built later, the form lists the curves' parameters as the eager one does.
    assert lazy.ctrlMenu is not None and _built(lazy)
    assert lazy.ctrl.avgParamList.count() == eager.ctrl.avgParamList.count() == 1


def test_saved_state_round_trips_through_a_lazy_plot():
    source = pg.PlotItem()
    source.setLogMode(x=False, y=True)
    source.showGrid(x=True)
    target = pg.PlotItem()
    target.restoreState(source.saveState())
    assert target.ctrl.logYCheck.isChecked() and target.ctrl.xGridCheck.isChecked()


def test_menus_stay_off_when_disabled(plot_widget):
    plot = plot_widget.getPlotItem()
    plot.setMenuEnabled(False)
    assert plot.vb.menu is None
    plot.setMenuEnabled(True)
    assert "View All" in _entries(plot.vb.menu)


def test_a_lazily_built_menu_lists_the_named_views():
    first = pg.PlotItem(name="menu-test-first")
    second = pg.PlotItem(name="menu-test-second")
    combo = second.vb.menu.ctrl[0].linkCombo
    names = [combo.itemText(i) for i in range(combo.count())]
    assert "menu-test-first" in names and "menu-test-second" not in names
    first.vb.unregister()
    second.vb.unregister()


def test_closing_an_unbuilt_plot_builds_nothing():
    widget = pg.PlotWidget()  # not given to qtbot: PlotWidget.close() cannot run twice
    plot = widget.getPlotItem()
    widget.close()
    assert _unbuilt(plot)
    assert plot.ctrlMenu is None and plot.vb is None
    widget.deleteLater()


def test_grid_and_log_mode_set_before_the_form_is_built_are_in_it():
    plot = pg.PlotItem()
    curve = plot.plot([1.0, 10.0], [1.0, 2.0])
    plot.showGrid(x=True, y=True, alpha=0.3)
    plot.setLogMode(x=True, y=False)
    assert _unbuilt(plot)  # kept aside, applied without the form
    assert plot.getAxis("left").grid == pytest.approx(0.3 * 255, abs=1)
    form = _pg._build_plot_options(plot)
    assert form.xGridCheck.isChecked() and form.yGridCheck.isChecked() and form.logXCheck.isChecked()
    assert form.gridAlphaSlider.value() == int(0.3 * form.gridAlphaSlider.maximum())
    # The built form drives the plot: unticking "Log X" in the menu turns log mode off.
    form.logXCheck.setChecked(False)
    assert curve.opts["logMode"] == [False, False]
    assert plot.getAxis("left").grid == pytest.approx(0.3 * 255, abs=1)


def test_a_hidden_axis_label_shows_its_latest_text():
    # Hidden labels are typeset only when shown (gui/qt/pg.py): shown, a label says what was set last.
    plot = pg.PlotItem()
    axis = plot.getAxis("left")
    axis.setLabel("first")
    axis.showLabel(False)
    axis.labelText = "second"
    axis._updateLabel()
    assert "second" not in axis.label.toPlainText()  # hidden: not typeset
    axis.showLabel(True)
    assert axis.label.toPlainText().strip() == "second"
    # Placed by its new size, as pyqtgraph places a label on a resize.
    assert axis.label.pos().y() == int(axis.size().height() / 2 + axis.label.boundingRect().width() / 2)
