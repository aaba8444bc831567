"""Studio callbacks -> one Qt signal per event-loop turn."""

from __future__ import annotations

from PySide6 import QtCore


class StudioBridge(QtCore.QObject):
    """Collects the studio's changes and emits ``changed`` once per event-loop turn.

    A burst of edits (a spin box held down, fast typing) thus costs one
    repaint, not one per edit. ``changed`` carries the union of changed fields.
    """

    changed = QtCore.Signal(frozenset)

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.studio = studio
        self._pending: set[str] = set()
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.flush)
        self._unsubscribe = studio.subscribe(self._on_change)

    def _on_change(self, change):
        self._pending |= change.changed
        if not self._timer.isActive():
            self._timer.start()

    def flush(self):
        """Emit now whatever has changed since the last emission (tests and exports call this)."""
        self._timer.stop()
        if self._pending:
            fields = frozenset(self._pending)
            self._pending.clear()
            self.changed.emit(fields)

    def close(self):
        self._unsubscribe()
