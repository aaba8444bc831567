"""The window's menu bar: File, Edit, View, Help (the rooms fill their own menus; the training
lab adds its own before Help)."""

from __future__ import annotations

from PySide6 import QtGui

from ..files.animation_actions import AnimationActions
from ..lecture.mode import keys as lecture_keys
from . import help


def add_action(menu, text: str, slot, shortcut=None, name: str = "") -> QtGui.QAction:
    """An action ``text`` in ``menu`` calling ``slot``, with an optional shortcut and objectName."""
    action = menu.addAction(text, slot)
    if shortcut is not None:
        action.setShortcut(QtGui.QKeySequence(shortcut))
    if name:
        action.setObjectName(name)
    return action


def build_menus(w) -> None:
    """Fill the menu bar of ``w`` (a MainWindow) from its rooms."""
    keys, bar = QtGui.QKeySequence, w.menuBar()
    file_menu = bar.addMenu("&File")
    w.files.fill_file_menu(file_menu)
    w.save_action, w.open_action = w.files.save_action, w.files.open_action
    file_menu.addSeparator()
    file_menu.addMenu(w.export_actions.export_menu)
    w.animation = AnimationActions(w, w.show_message, w._status)  # File → Export animation…
    file_menu.addAction(w.animation.action)
    file_menu.addSeparator()
    add_action(file_menu, "&Quit", w.close, keys.Quit)
    w.edit.fill_edit_menu(bar.addMenu("&Edit"))
    view = bar.addMenu("&View")
    w.lecture.fill_view_menu(view)
    view.addMenu(w.present.stage_precision_menu)  # beside the window's Precision: the stage keeps its own
    view.addSeparator()
    view.addAction(w.present_action)
    view.addAction(w.present.scene_action())  # Shift+F5: from the lecture's current scene
    view.addMenu(w.present.menu)
    view.addAction(w.focus_action)
    view.addMenu(w.present.focus_menu)
    view.addSeparator()
    for dock in (w.controls_dock, w.tables_dock, w.variance_dock):
        view.addAction(dock.toggleViewAction())
    add_action(view, "&Reset layout", w.reset_layout, name="resetLayoutAction")
    help_menu = bar.addMenu("&Help")
    add_action(help_menu, "&Getting started", lambda: help.getting_started(w), name="gettingStartedAction")
    shortcuts = add_action(help_menu, "&Keyboard shortcuts", w.show_shortcuts, name="shortcutsAction")
    # F1 everywhere: some platforms (and the offscreen one) bind no key to HelpContents.
    shortcuts.setShortcuts(lecture_keys(keys.HelpContents, "F1"))
    add_action(help_menu, "&About Attention Studio", lambda: help.about(w))


# The names scripts and tests reach the rooms' parts by, on the window (the rooms own them):
# (room attribute of the window, names).
ROOM_NAMES = (
    ("numbers", "models tables table_tabs message_label"),
    ("controls", "preset_combo sentence_edit target_edit d_model_spin heads_spin d_head_spin seed_spin "
                 "randomize_button scale_check causal_check positional_check projections_check "
                 "temperature_spin softmax_combo score_combo head_combo query_combo"),
    ("lecture", "play_button play_interval_spin full_screen_action theme_actions set_zoom zoom_by "
                "set_theme set_colormap toggle_full_screen move_query"),
    ("files", "new_session open_file open_dialog save save_to save_as_dialog recent_files "
              "confirm_discard ask_unsaved autosave"),
    ("export_actions", "export_panel export_panel_dialog copy_current_figure ask_png_dpi "
                       "current_panel_name show_heatmap_menu"),
    ("edit", "undo redo copy paste undo_action redo_action copy_action paste_action"),
    ("layout_room", "fit_to_screen"),
)


def name_parts(w) -> None:
    """Give ``w`` the names of its rooms' parts (``w.sentence_edit``, ``w.undo`` ...)."""
    for room, names in ROOM_NAMES:
        for name in names.split():
            setattr(w, name, getattr(getattr(w, room), name))
