"""What random use of the window broke, each kept fixed: a hidden view never breaks a slot (Compare
with a trained model), the dark theme's colour maps built once, a refused edit on a long token never
widens the window."""

from __future__ import annotations

import pytest
from PySide6 import QtWidgets

from attn_studio.gui import presentation
from attn_studio.gui._pg import pg
from gui_helpers import finish, settle


@pytest.fixture
def light_again():
    """The look is application-wide: back to the light theme for the tests that follow."""
    yield
    app = QtWidgets.QApplication.instance()
    for top in app.topLevelWidgets():
        presentation.apply(app, top, theme="light")
        break


def test_the_dark_theme_builds_each_colour_map_once(window, qtbot, monkeypatch, light_again):
    # 16 heads, every view drawn once: about 30 heatmaps, two colour maps between them.
    window.studio.update(projections=True, d_model=64, heads=16)
    finish(window, qtbot)
    for index in range(window.view_tabs.count()):
        if window.view_tabs.isTabVisible(index) and window.view_tabs.widget(index) is not window.training.page:
            window.view_tabs.setCurrentIndex(index)
            finish(window, qtbot)
    heatmaps = [hm for hm in _heatmaps(window) if hm.image.image is not None]
    assert len(heatmaps) >= 25
    built = []
    original = pg.ColorMap.__init__

    def counting(self, *args, **kwargs):
        built.append(kwargs.get("name"))
        original(self, *args, **kwargs)

    monkeypatch.setattr(pg.ColorMap, "__init__", counting)
    actions = {a.data(): a for a in window.lecture.theme_actions.actions()}
    for theme in ("dark", "light", "dark"):
        actions[theme].trigger()
        settle(window)
    names = {hm._cmap_name for hm in heatmaps}
    # One dimmed map per colour map (the first switch), none on the switches after it.
    assert len(built) <= len(names), built
    for name in names:
        shared = {id(hm.colormap) for hm in heatmaps if hm._cmap_name == name}
        assert len(shared) == 1, f"{name}: {len(shared)} colour map objects for one map and theme"
    weights = next(hm for hm in heatmaps if hm._cmap_name == "viridis")
    assert weights._lut[-1, 0] < 255 * 0.83  # dimmed on the dark theme: viridis' yellow is no longer full red
    actions["light"].trigger()
    settle(window)
    assert weights._lut[-1, 0] > 250


def _heatmaps(window):
    from attn_studio.gui.views import token_axis

    return [hm for hm in list(token_axis._heatmaps) if window.isAncestorOf(hm.plot.getViewWidget() or window)]
