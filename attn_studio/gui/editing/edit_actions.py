"""The Edit menu: undo and redo from anywhere in the window, copy and paste.

A line edit or a spin box claims Ctrl+Z for its own text undo; here the app's
undo wins once a value is committed, and uncommitted typing is taken back first.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ..widgets import keys


class EditActions(QtCore.QObject):
    """Undo, redo, copy and paste for ``window`` (its ``studio``, ``controls``, ``numbers``, ``export_actions``)."""

    def __init__(self, window, status):
        super().__init__(window)
        self.window = window
        self._status = status

    def fill_edit_menu(self, menu: QtWidgets.QMenu) -> None:
        """Put Undo, Redo, Copy and Paste in ``menu``."""
        std = QtGui.QKeySequence
        self.undo_action = menu.addAction("&Undo", self.undo)
        self.undo_action.setObjectName("undoAction")
        self.undo_action.setShortcuts(keys(std.Undo, "Ctrl+Z"))
        self.redo_action = menu.addAction("&Redo", self.redo)
        self.redo_action.setObjectName("redoAction")
        self.redo_action.setShortcuts(keys(std.Redo, "Ctrl+Shift+Z", "Ctrl+Y"))
        QtWidgets.QApplication.instance().focusChanged.connect(self._watch_undo_keys)
        menu.addSeparator()
        self.copy_action = menu.addAction("&Copy", self.copy)
        self.copy_action.setShortcut(std.Copy)
        self.copy_action.setToolTip("Copy the selected table cells, or the figure of the current view")
        self.paste_action = menu.addAction("&Paste into the table", self.paste)
        self.paste_action.setShortcut(std.Paste)

    def refresh(self) -> None:
        """Enable and name Undo and Redo after the studio changed ("Undo load example 'bank'")."""
        studio = self.window.studio
        self.undo_action.setEnabled(studio.can_undo)
        self.redo_action.setEnabled(studio.can_redo)
        self.undo_action.setText(f"&Undo {studio.undo_label}".rstrip())
        self.redo_action.setText(f"&Redo {studio.redo_label}".rstrip())

    def undo(self) -> bool:
        """Ctrl+Z from anywhere: first uncommitted typing in the focused box is taken back, then the app's last edit."""
        return self._revert_typing() or self.window.studio.undo()

    def redo(self) -> bool:
        """Ctrl+Shift+Z from anywhere: the app's last undone edit again."""
        return self.window.studio.redo()

    def _revert_typing(self) -> bool:
        # Typing that is not committed yet (a spin box before Enter, a refused sentence, a table
        # cell being edited) is what the person means by undo; once committed, the app's undo acts.
        focus = QtWidgets.QApplication.focusWidget()
        if focus is None or not self.window.isAncestorOf(focus):
            return False
        spin = focus if isinstance(focus, QtWidgets.QAbstractSpinBox) else focus.parentWidget()
        if isinstance(spin, QtWidgets.QAbstractSpinBox) and hasattr(spin, "textFromValue"):
            committed = spin.prefix() + spin.textFromValue(spin.value()) + spin.suffix()
            if spin.text() == committed:
                return False
            spin.findChild(QtWidgets.QLineEdit).setText(committed)
            return True
        if not isinstance(focus, QtWidgets.QLineEdit):
            return False
        controls = self.window.controls
        for binding in controls.bindings:
            if binding.widget is focus:
                if focus.text() == getattr(self.window.studio.state, binding.field):
                    return False
                controls.sync()
                return True
        if focus.isUndoAvailable():  # an editor open in a table
            focus.undo()
            return True
        return False

    def _watch_undo_keys(self, old, new) -> None:
        if isinstance(new, (QtWidgets.QLineEdit, QtWidgets.QAbstractSpinBox)) and self.window.isAncestorOf(new):
            new.removeEventFilter(self)
            new.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        # Refuse a text box's claim on the undo and redo keys, so that the Edit menu's actions fire.
        if event.type() == QtCore.QEvent.ShortcutOverride:
            key = QtGui.QKeySequence(event.keyCombination())
            if any(key == k for k in self.undo_action.shortcuts() + self.redo_action.shortcuts()):
                event.ignore()
                return True
        return False

    def copy(self) -> None:
        """Ctrl+C: the selected cells of the focused table, else the current view's figure."""
        focus = QtWidgets.QApplication.focusWidget()
        if self.window.numbers.copy():
            self._status("Cells copied (tab-separated)", 3000)
        elif not isinstance(focus, (QtWidgets.QLineEdit, QtWidgets.QAbstractSpinBox)):
            self.window.export_actions.copy_current_figure()

    def paste(self) -> None:
        """Ctrl+V: paste a block of numbers into the focused table at its current cell."""
        if self.window.numbers.paste():
            self._status("Pasted", 3000)
