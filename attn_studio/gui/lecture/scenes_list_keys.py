"""The Scenes list's own keys, taken before the window's shortcuts while the list has the focus:
Alt+↑ / Alt+↓ move the selected scene (elsewhere they move the query), Delete deletes it (undoably)."""

from __future__ import annotations

from PySide6 import QtCore

MOVE_KEYS = {QtCore.Qt.Key_Up: -1, QtCore.Qt.Key_Down: +1}
DELETE_KEYS = (QtCore.Qt.Key_Delete, QtCore.Qt.Key_Backspace)


class SceneListKeys(QtCore.QObject):
    """An event filter on ``panel.list``: its Alt+↑ / Alt+↓ call ``panel.move``, its Delete ``panel.delete``."""

    def __init__(self, panel) -> None:
        super().__init__(panel)
        self.panel = panel
        panel.list.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt's name)
        """The list's Alt+↑ / Alt+↓ (move the selected scene) and Delete, before the window's shortcuts."""
        panel = self.panel
        if obj is panel.list and event.type() in (QtCore.QEvent.ShortcutOverride, QtCore.QEvent.KeyPress):
            key, mods = event.key(), event.modifiers() & ~QtCore.Qt.KeypadModifier
            # Only with a scene selected: an empty list leaves Alt+↑ / Alt+↓ to the query.
            ours = panel.lecture is not None and panel.list.currentRow() >= 0 and (
                (key in MOVE_KEYS and mods == QtCore.Qt.AltModifier) or (key in DELETE_KEYS and not mods))
            if ours and event.type() == QtCore.QEvent.ShortcutOverride:
                event.accept()  # the list's, not the window's (Alt+↑ / Alt+↓ move the query elsewhere)
                return True
            if ours:
                if key in MOVE_KEYS:
                    panel.move(MOVE_KEYS[key])
                else:
                    panel.delete()
                event.accept()
                return True
        return super().eventFilter(obj, event)
