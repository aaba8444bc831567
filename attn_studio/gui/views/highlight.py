"""The lecturer's pointer: a row and/or column of the heatmaps, highlighted in every view.

It is presentation, not the model: it lives here, one per window (reached
through the window's Studio), never in the state, so it is neither saved nor
undone. Clicking a row or column label or a cell sets it; clicking outside the
cells or Esc clears it.
"""

from __future__ import annotations

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


def highlight_for(studio) -> Highlight:
    """The one :class:`Highlight` of the window that shows ``studio`` (created on first use).

    Kept on the studio object itself, so it lives exactly as long as the window's studio
    (a module-level table would keep every closed window's views alive through it).
    """
    highlight = getattr(studio, "_gui_highlight", None)
    if highlight is None:
        highlight = Highlight()
        studio._gui_highlight = highlight
    return highlight
