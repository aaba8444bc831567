"""Putting a module's shared window back where the shared reset (tests/gui/conftest.py) does not reach.

``shared_window`` undoes the Studio's state and restores the size and the shown tab. A module whose
tests also change the lecture settings (text size, theme, colour map, full screen, the play walk),
open and save files, or leave a large change computing off the GUI thread uses these as well, from
its own ``window`` fixture, and checks that each reset held.
"""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets

from attn_studio.gui import presentation, settings
from gui_helpers import settle

PLAY_INTERVAL_S = 1.5  # what a new window's play spin box shows


def document_start(w) -> dict:
    """What a window's document opened as (taken before any test changes it)."""
    doc = w.document
    return {"path": doc.path, "preset_name": doc.preset_name, "preset_state": doc.preset_state,
            "recent_files": list(doc.recent_files), "title": w.windowTitle()}


def quiet(w, qtbot) -> None:
    """Nothing left running from the last test: no save being written, no typing waiting for its
    pause, no play walk, no change computing off the GUI thread, no heatmap half drawn, no dialog
    left open."""
    w.files.saves.wait()
    w.controls.typing_timer.stop()
    w.play_button.setChecked(False)
    qtbot.waitUntil(lambda: not w.studio.computing(), timeout=60_000)
    w.finish_drawing()
    for dialog in w.findChildren(QtWidgets.QDialog):
        if dialog.isVisible():
            dialog.close()
    settle(w)


def activate(w, qtbot) -> None:
    """The window made the active one again (shortcuts reach the active window only; a test that
    opened a window of its own may have left another active). Checked."""
    w.activateWindow()
    qtbot.waitUntil(lambda: QtWidgets.QApplication.activeWindow() is w)


def reset_presentation(w, qtbot) -> None:
    """Text size, theme and colour map as a new window with no saved settings has them; not full
    screen; the play walk stopped at its first interval. Checked."""
    if w.isFullScreen():
        w.lecture.toggle_full_screen(False)
        qtbot.waitUntil(lambda: not w.isFullScreen())
    defaults = settings.Preferences()
    shown = (presentation.STYLE.theme.name, presentation.STYLE.zoom, presentation.STYLE.weights_cmap,
             [a.data() for a in w.theme_actions.actions() if a.isChecked()],
             [a.data() for a in w.lecture.colormap_actions.actions() if a.isChecked()])
    if shown != (defaults.theme, defaults.zoom, defaults.colormap, [defaults.theme], [defaults.colormap]):
        w.lecture.apply(defaults.theme, defaults.zoom, defaults.colormap)  # restyles every plot: only when needed
    w.play_button.setChecked(False)
    w.play_interval_spin.setValue(PLAY_INTERVAL_S)
    settle(w)
    assert not w.isFullScreen() and not w.full_screen_action.isChecked()
    assert presentation.STYLE.zoom == defaults.zoom
    assert presentation.STYLE.theme.name == defaults.theme
    assert presentation.STYLE.weights_cmap == defaults.colormap
    palette = QtWidgets.QApplication.instance().palette()
    assert palette.color(QtGui.QPalette.Window) == QtGui.QColor(presentation.THEMES[defaults.theme].window)
    assert [a.data() for a in w.theme_actions.actions() if a.isChecked()] == [defaults.theme]
    assert [a.data() for a in w.lecture.colormap_actions.actions() if a.isChecked()] == [defaults.colormap]
    assert w.heatmap_view.stages["weights"].bar.colorMap().name == defaults.colormap
    # The precision setting cannot be undone in a window's tables once set (None means "each
    # view's own"): these modules never set it, and a test that did would fail here.
    assert presentation.STYLE.digits is None and w.lecture.digits is None
    assert not w.play_button.isChecked() and not w.lecture.play_timer.isActive()
    assert w.lecture.play_timer.interval() == int(PLAY_INTERVAL_S * 1000)


def reset_document(w, start: dict) -> None:
    """The document the window opened with: no file, its example, its recent files, no message, the
    title it had. Checked."""
    doc = w.document
    doc.path = start["path"]
    doc.recent_files = list(start["recent_files"])
    doc.preset_name, doc.preset_state = start["preset_name"], start["preset_state"]
    w.clear_message()
    w.controls.sync(doc.preset_name, doc.preset_edited())
    w.studio.mark_saved()
    w._update_title()  # as the window does itself after it loads an example
    settle(w)
    assert w.current_path == start["path"] and w.recent_files() == start["recent_files"]
    assert not w.message_label.isVisible()
    assert w.windowTitle() == start["title"] and not w.isWindowModified()
    assert not w.controls.typing_timer.isActive()
    assert w.sentence_edit.text() == w.studio.state.sentence
