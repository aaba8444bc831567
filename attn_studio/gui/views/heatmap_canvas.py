"""One heatmap as a widget: the image with its colour bar, hover tooltips that explain a
cell, and the right-click menu the window offers (every heatmap view builds on it)."""

from __future__ import annotations

from PySide6 import QtWidgets

from ...formatting import DEFAULT_DIGITS, format_number
from ..qt.pg import cache_static, pg, remember_pictures
from .heatmap import Heatmap

TOOLTIP_MS = 10 * 60 * 1000  # a formula stays while the pointer rests on its cell (Qt's default is ~10 s)


class HeatmapCanvas(pg.GraphicsLayoutWidget):
    """One heatmap with its colour bar, as a widget (Qt layouts share space predictably).

    Right-click asks the window that holds it (``show_heatmap_menu``) to offer
    saving or copying the matrix.
    """

    def __init__(self, heatmap: Heatmap, with_bar: bool = True):
        super().__init__()
        self.heatmap = heatmap
        # Room above and below for the colour bar's end labels ("1.0", "0").
        self.ci.layout.setContentsMargins(2, 8, 2, 6)
        self.addItem(heatmap.plot, row=0, col=0)
        self.bar = None
        if with_bar:
            self.bar = pg.ColorBarItem(values=(0, 1), colorMap=heatmap.colormap, interactive=False, width=10)
            heatmap.bar = self.bar
            cache_static(self.bar, *(self.bar.getAxis(n) for n in ("left", "right", "top", "bottom")))
            remember_pictures(self.bar.axis)
            self.addItem(self.bar, row=0, col=1)
        self.setSizePolicy(QtWidgets.QSizePolicy.Expanding, QtWidgets.QSizePolicy.Expanding)
        self.setMinimumSize(120, 120)
        # Hovering a cell explains it: ``tooltip_provider(heatmap, i, j)`` when a
        # view gives one (formulas), else the cell's labels and exact value.
        self.tooltip_provider = None
        self.digits = DEFAULT_DIGITS  # decimals of the tooltip's number
        self._hovered = None  # the cell whose tooltip is up
        self.scene().sigMouseMoved.connect(self._on_hover)
        # Images, cell rectangles and hatching gain nothing from antialiasing (text
        # keeps its own); without it a repaint of the canvas costs a third less.
        self.setAntialiasing(False)

    def tooltip_text(self, i: int, j: int) -> str:
        """What hovering cell (row ``i``, column ``j``) shows."""
        if self.tooltip_provider is not None:
            return self.tooltip_provider(self.heatmap, i, j)
        data = self.heatmap.data
        if data is None:
            return ""
        rows, cols = data.row_labels, data.col_labels
        where = f"{rows[i] if i < len(rows) else i + 1} → {cols[j] if j < len(cols) else j + 1}"
        if data.masked[i, j]:
            return f"{self.heatmap.title}\n{where}: masked"
        return f"{self.heatmap.title}\n{where}: {format_number(data.values[i, j], self.digits)}"

    def _on_hover(self, scene_pos):
        cell = self.heatmap.cell_at(scene_pos)
        if cell is None:
            self._hovered = None
            token = self.heatmap.label_at(scene_pos)
            if token:  # an axis label: the whole word (labels of long tokens are elided)
                QtWidgets.QToolTip.showText(self.mapToGlobal(self.mapFromScene(scene_pos)), token, self)
            else:
                QtWidgets.QToolTip.hideText()
            return
        if cell == self._hovered and QtWidgets.QToolTip.isVisible():
            return  # already shown: re-showing on every move makes it flicker and time out
        text = self.tooltip_text(*cell)
        if text:
            self._hovered = cell
            # Tied to the cell's rectangle and shown for minutes: it stays while the
            # pointer rests on the cell, however long the lecturer talks.
            rect = self.mapFromScene(self.heatmap.cell_scene_rect(*cell)).boundingRect()
            QtWidgets.QToolTip.showText(self.mapToGlobal(self.mapFromScene(scene_pos)), text, self, rect,
                                        TOOLTIP_MS)

    def contextMenuEvent(self, event):
        # The window that holds this canvas offers to save or copy its matrix.
        handler = getattr(self.window(), "show_heatmap_menu", None)
        if handler is not None:
            handler(self, event.pos())
        event.accept()
