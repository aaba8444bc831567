"""The lecturer's pointer: a row and/or column of the heatmaps, highlighted in every view.

It is presentation, not the model: it lives here, one per window (reached
through the window's Studio), never in the state, so it is neither saved nor
undone. Clicking a row or column label or a cell sets it; clicking outside the
cells or Esc clears it.
"""

from __future__ import annotations

import weakref

from PySide6 import QtCore


class Highlight(QtCore.QObject):
    """The highlighted query row and key column (None: not highlighted); ``changed`` on every change."""

    changed = QtCore.Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.row: int | None = None
        self.col: int | None = None

    def set(self, row: int | None = None, col: int | None = None) -> None:
        """Highlight query row ``row`` and key column ``col`` (either may be None)."""
        if (row, col) != (self.row, self.col):
            self.row, self.col = row, col
            self.changed.emit()

    def clear(self) -> None:
        """Highlight nothing."""
        self.set(None, None)

    @property
    def active(self) -> bool:
        return self.row is not None or self.col is not None


_BY_STUDIO: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def highlight_for(studio) -> Highlight:
    """The one :class:`Highlight` of the window that shows ``studio`` (created on first use)."""
    try:
        return _BY_STUDIO[studio]
    except KeyError:
        highlight = _BY_STUDIO[studio] = Highlight()
        return highlight
    except TypeError:  # an object that cannot be weakly referenced: keep it on the object
        if not hasattr(studio, "_highlight"):
            studio._highlight = Highlight()
        return studio._highlight
