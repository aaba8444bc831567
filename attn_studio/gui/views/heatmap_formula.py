"""The heatmap panel's pinned formula: a clicked cell's formula, filled in with its numbers, kept large and
selectable under the heatmaps until another cell is clicked (hovering a cell shows its formula too)."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

HINT = "Click a cell to keep its formula here; hover a cell to see it."


class PinnedFormula:
    """Part of a :class:`~.heatmap_view.HeatmapView` (``view``): ``panel`` the read-only text that shows the
    formula, ``pinned`` the cell it is of, ``(heatmap key, query, key)`` or None; :meth:`show` writes it
    again for the view's current numbers (a cell gone with a shorter sentence says so)."""

    def __init__(self, view):
        self.view = view
        self.pinned: tuple[str, int, int] | None = None
        # Read-only text: selectable, and it scrolls when a wide model's formula is long, instead of
        # squeezing the heatmaps.
        panel = self.panel = QtWidgets.QPlainTextEdit()
        panel.setObjectName("formulaPanel")
        panel.setReadOnly(True)
        panel.setTextInteractionFlags(QtCore.Qt.TextSelectableByMouse | QtCore.Qt.TextSelectableByKeyboard)
        panel.setLineWrapMode(QtWidgets.QPlainTextEdit.WidgetWidth)
        panel.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Fixed)
        font = QtGui.QFont(panel.font())
        font.setPointSizeF(max(font.pointSizeF() * 1.2, 12.0))
        panel.setFont(font)
        lines = 3  # the usual formula (where, score, weight); a longer one scrolls
        panel.setFixedHeight(int(QtGui.QFontMetrics(font).lineSpacing() * lines + 14))

    def text(self) -> str:
        """What the panel shows."""
        return self.panel.toPlainText()

    def pin(self, key: str, i: int, j: int) -> None:
        """Keep the formula of cell (query ``i``, key ``j``) of heatmap ``key``."""
        self.pinned = (key, int(i), int(j))
        self.show()

    def show(self) -> None:
        """Write the pinned cell's formula with the view's current numbers (or the hint, or why it is gone)."""
        if self.pinned is None:
            self._set(HINT)
            return
        view = self.view
        key, i, j = self.pinned
        result = view.studio.result
        heads = result.weights.shape[0]
        t_q, t_k = result.weights.shape[1:]
        head_gone = key.startswith("head ") and (heads < 2 or int(key.split()[1]) > heads)
        stage_gone = key == "stable" and view.canvases["stable"].isHidden()
        if head_gone or stage_gone or not (i < t_q and j < t_k):
            self._set(f"The pinned cell ({key}, query {i + 1}, key {j + 1}) no longer exists: click another cell.")
            return
        # The tooltip's first line names the query and key; "pinned" says why it stays.
        self._set(f"Pinned, {key}: " + view.tooltip_for(view.heatmap_for(key), i, j))

    def _set(self, text: str) -> None:
        # Unchanged text is left alone: a selection the lecturer made survives a redraw.
        if self.panel.toPlainText() != text:
            self.panel.setPlainText(text)
