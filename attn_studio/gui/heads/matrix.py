"""A labelled matrix drawn with QPainter: cells, a fixed colour scale, token labels on both axes.

The Head Lab's pictures (one head's weights or norms, raw attention beside
rollout and flow, importance per layer and head, the roles of every head) are
small matrices that must read from the back of a room: every cell coloured on
a scale that is stated (``vmin`` to ``vmax``, drawn as a bar with its numbers),
the rows and columns named. Drawing them with one painter keeps the figure whole
when it is grabbed for export.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...formatting import format_number
from .. import presentation
from ..widgets import short_token

# viridis at five stops: dark for 0, yellow for the top of the scale (readable in grey too).
RAMP = np.array([(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)], dtype=np.float64)
STALE = QtGui.QColor(200, 200, 200)
HIGHLIGHT = QtGui.QColor(230, 60, 20)


def ramp_colour(value: float) -> QtGui.QColor:
    """The colour of ``value`` in [0, 1] (clipped) on the viridis ramp."""
    if not np.isfinite(value):
        return QtGui.QColor(255, 255, 255)
    x = min(max(float(value), 0.0), 1.0) * (len(RAMP) - 1)
    i = min(int(x), len(RAMP) - 2)
    c = RAMP[i] + (RAMP[i + 1] - RAMP[i]) * (x - i)
    return QtGui.QColor(int(c[0]), int(c[1]), int(c[2]))


class MatrixCanvas(QtWidgets.QWidget):
    """One matrix with its title, row and column labels and a colour bar.

    ``set_matrix(values, rows, cols, vmin, vmax)`` draws it; ``colours``
    (optional, an (R, C) array of QColor) paints categories instead (the role
    grid), with ``legend`` as (name, colour) pairs, and ``marks`` (optional, an (R, C) array of
    short strings) writes a letter in cells (the head detector's kinds). Clicking a cell emits
    ``cellClicked(row, col)``; ``set_highlight(row, col)`` outlines a cell (or a
    whole row with ``col=None``). ``stale=True`` greys the cells and says so.
    """

    cellClicked = QtCore.Signal(int, int)

    def __init__(self, title: str = "", parent=None, *, row_title: str = "", col_title: str = ""):
        super().__init__(parent)
        self.title = title
        self.row_title, self.col_title = row_title, col_title
        self.values: np.ndarray | None = None
        self.rows: list[str] = []
        self.cols: list[str] = []
        self.vmin, self.vmax = 0.0, 1.0
        self.colours = None
        self.marks = None
        self.legend: list = []
        self.stale = False
        self.note = ""
        self.highlight: tuple | None = None
        self.show_bar = True          # False: a neighbour on the same scale carries the bar
        self.show_row_labels = True   # False: a neighbour on the left names the rows
        # Decimals of this matrix's numbers whatever the precision setting (importance: 4, as the
        # command line writes it); None: the precision setting.
        self.fixed_digits: int | None = None
        self.setMinimumSize(120, 160)
        self.setMouseTracking(True)
        self.setSizePolicy(QtWidgets.QSizePolicy.Expanding, QtWidgets.QSizePolicy.Expanding)

    # -- data ----------------------------------------------------------------------------
    def set_matrix(self, values, rows, cols, vmin: float = 0.0, vmax: float = 1.0, *, title: str | None = None,
                   colours=None, legend=(), note: str = "", marks=None) -> None:
        """Show ``values (R, C)`` on the fixed scale ``vmin`` to ``vmax``; None clears the canvas."""
        self.values = None if values is None else np.asarray(values, dtype=np.float64)
        self.marks = None if marks is None else np.asarray(marks, dtype=object)
        self.rows, self.cols = [short_token(str(r), 12) for r in rows], [short_token(str(c), 12) for c in cols]
        self.vmin, self.vmax = float(vmin), float(vmax) if vmax > vmin else float(vmin) + 1.0
        self.colours, self.legend, self.note = colours, list(legend), note
        if title is not None:
            self.title = title
        self.update()

    def number(self, value: float) -> str:
        """A value of this matrix or its scale as text, at the precision setting."""
        digits = presentation.digits() if self.fixed_digits is None else self.fixed_digits
        return format_number(value, digits)

    def set_digits(self, digits: int) -> None:
        """Draw the scale's numbers again at the precision setting (``presentation.set_digits``)."""
        self.update()

    def _cells_image(self) -> QtGui.QImage:
        """The values as an RGB image on the ramp (greyed when stale), one pixel per cell."""
        span = self.vmax - self.vmin
        x = np.clip(np.nan_to_num((self.values - self.vmin) / span, nan=0.0), 0.0, 1.0) * (len(RAMP) - 1)
        i = np.minimum(x.astype(int), len(RAMP) - 2)
        rgb = RAMP[i] + (RAMP[i + 1] - RAMP[i]) * (x - i)[..., None]
        if self.stale:
            rgb = np.repeat((0.55 + 0.4 * rgb.max(axis=-1, keepdims=True) / 255) * 255, 3, axis=-1)
        data = np.ascontiguousarray(rgb.astype(np.uint8))
        rows, cols = self.values.shape
        return QtGui.QImage(data.data, cols, rows, 3 * cols, QtGui.QImage.Format_RGB888).copy()

    def set_stale(self, stale: bool) -> None:
        self.stale = bool(stale)
        self.update()

    def set_highlight(self, row: int | None, col: int | None = None) -> None:
        self.highlight = None if row is None else (row, col)
        self.update()

    # -- geometry ------------------------------------------------------------------------
    @staticmethod
    def label_font() -> QtGui.QFont:
        """The font of the row and column labels: the window's token labels' (``presentation.token_font``,
        14 px at 100 %), larger than the widget's own text, which the titles and the colour bar use."""
        return presentation.token_font()

    def label_metrics(self) -> QtGui.QFontMetrics:
        """The metrics of :meth:`label_font` (what the labels take, and how tall a cell must be for
        every row to be named)."""
        return QtGui.QFontMetrics(self.label_font(), self)

    def _frame(self) -> tuple[float, float, float, float]:
        """(left, top, right, bottom): the pixels the labels, titles, bar and legend take around the cells."""
        fm = self.fontMetrics()
        lm = self.label_metrics()
        line = fm.height()
        left = 4
        if self.show_row_labels:
            left = max([lm.horizontalAdvance(r) for r in self.rows] + [0]) + 8 + (line if self.row_title else 0)
        bottom_labels = max([lm.horizontalAdvance(c) for c in self.cols] + [0]) + 8
        top = line * 2 + 4
        bar = 0 if self.colours is not None or not self.show_bar else max(fm.horizontalAdvance(self.number(v)) for v in (self.vmin, self.vmax)) + 28
        legend = (line + 4) * len(self._legend_lines()) + 2 if self.colours is not None and self.legend else 0
        bottom = bottom_labels + (line if self.col_title else 0) + legend + (line if self.note else 0) + 4
        return left, top, bar + 8, bottom

    def _layout(self):
        left, top, right, bottom = self._frame()
        w = self.width() - left - right
        h = self.height() - top - bottom
        n_rows, n_cols = (self.values.shape if self.values is not None else (1, 1))
        cell = max(2.0, min(w / max(n_cols, 1), h / max(n_rows, 1)))
        return left, top, cell, right - 8

    def chrome(self) -> QtCore.QSize:
        """The pixels around the cells (labels, titles, colour bar) at the widget's current labels:
        the widget must be this much wider and taller than the cells it is to show."""
        left, top, right, bottom = self._frame()
        return QtCore.QSize(int(np.ceil(left + right)), int(np.ceil(top + bottom)))

    def plot_rect(self) -> QtCore.QRectF:
        """Where the cells are drawn, in widget pixels (empty when nothing is shown)."""
        if self.values is None:
            return QtCore.QRectF()
        left, top, cell, _ = self._layout()
        rows, cols = self.values.shape
        return QtCore.QRectF(left, top, cols * cell, rows * cell)

    def labelled(self) -> bool:
        """True when every row and column is named (the labels are not thinned to every n-th)."""
        if self.values is None:
            return False
        return self._label_step() == 1

    def _label_step(self) -> int:
        # Labels taller than a cell: every step-th one.
        _, _, cell, _ = self._layout()
        return max(1, int(np.ceil(self.label_metrics().height() / cell)))

    def _legend_lines(self) -> list[list]:
        # The legend's entries, wrapped to the width of the widget.
        fm = self.fontMetrics()
        lines, x = [[]], 0
        for name, colour in self.legend:
            w = fm.height() + fm.horizontalAdvance(name) + 10
            if lines[-1] and x + w > self.width() - 8:
                lines.append([])
                x = 0
            lines[-1].append((name, colour))
            x += w
        return lines

    def cell_at(self, pos: QtCore.QPointF) -> tuple[int, int] | None:
        """The (row, col) under ``pos`` (widget coordinates), or None."""
        if self.values is None:
            return None
        left, top, cell, _ = self._layout()
        c, r = int((pos.x() - left) // cell), int((pos.y() - top) // cell)
        rows, cols = self.values.shape
        return (r, c) if 0 <= r < rows and 0 <= c < cols and pos.x() >= left and pos.y() >= top else None

    def cell_center(self, row: int, col: int) -> QtCore.QPoint:
        left, top, cell, _ = self._layout()
        return QtCore.QPoint(int(left + (col + 0.5) * cell), int(top + (row + 0.5) * cell))

    # -- events --------------------------------------------------------------------------
    def mousePressEvent(self, event):
        hit = self.cell_at(event.position())
        if hit is not None and event.button() == QtCore.Qt.LeftButton:
            self.cellClicked.emit(*hit)
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event):
        hit = self.cell_at(event.position())
        if hit is None:
            self.setToolTip("")
        else:
            r, c = hit
            value = self.values[r, c]
            self.setToolTip(f"{self.row_title or 'row'} {self.rows[r]}, {self.col_title or 'column'} "
                            f"{self.cols[c]}: {self.number(value)}")
        super().mouseMoveEvent(event)

    def _paint_marks(self, p: QtGui.QPainter, left: float, top: float, cell: float) -> None:
        """The marks, one letter a cell in bold at about half the cell's height, dark on light cells
        and white on dark ones."""
        font = QtGui.QFont(self.label_font())
        font.setBold(True)
        font.setPixelSize(max(8, int(cell * 0.5)))
        p.setFont(font)
        for (r, c), text in np.ndenumerate(self.marks):
            if not text:
                continue
            colour = self.colours[r][c] if self.colours is not None else QtGui.QColor(255, 255, 255)
            p.setPen(QtGui.QColor(20, 20, 20) if colour.lightnessF() > 0.55 else QtGui.QColor(255, 255, 255))
            p.drawText(QtCore.QRectF(left + c * cell, top + r * cell, cell, cell), QtCore.Qt.AlignCenter, str(text))
        p.setFont(self.font())
        p.setPen(self.palette().windowText().color())

    def paintEvent(self, event):
        p = QtGui.QPainter(self)
        p.setRenderHint(QtGui.QPainter.Antialiasing, False)
        pal = self.palette()
        p.fillRect(self.rect(), pal.window())
        fm = self.fontMetrics()
        line = fm.height()
        bold = QtGui.QFont(self.font())
        bold.setBold(True)
        p.setFont(bold)
        p.setPen(pal.windowText().color())
        p.drawText(QtCore.QRectF(0, 2, self.width(), line + 2), QtCore.Qt.AlignHCenter, self.title)
        p.setFont(self.font())
        if self.values is None:
            p.drawText(self.rect(), QtCore.Qt.AlignCenter, self.note or "Nothing to show yet.")
            return
        left, top, cell, bar = self._layout()
        rows, cols = self.values.shape
        span = self.vmax - self.vmin
        if self.colours is not None:
            for r in range(rows):
                for c in range(cols):
                    colour = self.colours[r][c]
                    if self.stale:
                        colour = QtGui.QColor.fromHsvF(0, 0, 0.55 + 0.4 * colour.valueF())
                    p.fillRect(QtCore.QRectF(left + c * cell, top + r * cell, cell, cell), colour)
            if self.marks is not None:
                self._paint_marks(p, left, top, cell)
        else:
            # One image, one cell per pixel, drawn scaled without smoothing: a 128-token head costs
            # one drawImage, not 16 000 rectangles.
            p.drawImage(QtCore.QRectF(left, top, cols * cell, rows * cell), self._cells_image())
        # labels: rows at the left, columns turned at the bottom, in the token labels' font
        step = self._label_step()
        lm = self.label_metrics()
        p.setFont(self.label_font())
        for r, text in enumerate(self.rows):
            if not self.show_row_labels or r % step:
                continue
            p.drawText(QtCore.QRectF(0, top + r * cell, left - 4, cell), QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter,
                       text)
        base = top + rows * cell + 4
        for c, text in enumerate(self.cols):
            if c % step:
                continue
            p.save()
            p.translate(left + (c + 0.5) * cell - (lm.ascent() - lm.descent()) / 2, base)  # centred on its column
            p.rotate(90)
            p.drawText(0, 0, text)
            p.restore()
        p.setFont(self.font())
        y = base + max([lm.horizontalAdvance(c) for c in self.cols] + [0]) + 8
        if self.col_title:
            p.drawText(QtCore.QRectF(left, y, cols * cell, line), QtCore.Qt.AlignHCenter, self.col_title)
            y += line
        if self.row_title and self.show_row_labels:
            p.save()
            p.translate(2, top + rows * cell / 2)
            p.rotate(-90)
            p.drawText(QtCore.QRectF(-rows * cell / 2, 0, rows * cell, line), QtCore.Qt.AlignHCenter, self.row_title)
            p.restore()
        if self.highlight is not None:
            r, c = self.highlight
            pen = QtGui.QPen(HIGHLIGHT, 2)
            p.setPen(pen)
            p.setBrush(QtCore.Qt.NoBrush)
            if c is None:
                p.drawRect(QtCore.QRectF(left, top + r * cell, cols * cell, cell))
            else:
                p.drawRect(QtCore.QRectF(left + c * cell, top + r * cell, cell, cell))
            p.setPen(pal.windowText().color())
        if self.colours is None and self.show_bar:
            # the colour bar: the fixed scale, its ends and middle written out
            x0 = left + cols * cell + 8
            h = rows * cell
            gradient = QtGui.QLinearGradient(0, top + h, 0, top)
            for k in range(len(RAMP)):
                gradient.setColorAt(k / (len(RAMP) - 1), ramp_colour(k / (len(RAMP) - 1)))
            p.fillRect(QtCore.QRectF(x0, top, 10, h), gradient)
            for frac in (0.0, 0.5, 1.0):
                v = self.vmin + frac * span
                p.drawText(QtCore.QPointF(x0 + 14, top + h - frac * (h - line) - 2), self.number(v))
        elif self.colours is not None and self.legend:
            for entries in self._legend_lines():
                x = 4
                for name, colour in entries:
                    p.fillRect(QtCore.QRectF(x, y + 3, line - 4, line - 4), colour)
                    p.setPen(QtGui.QColor(120, 120, 120))
                    p.drawRect(QtCore.QRectF(x, y + 3, line - 4, line - 4))
                    p.setPen(pal.windowText().color())
                    x += line
                    p.drawText(QtCore.QPointF(x, y + line - 3), name)
                    x += fm.horizontalAdvance(name) + 10
                y += line + 4
        if self.note:
            p.drawText(QtCore.QRectF(0, y, self.width(), line + 2), QtCore.Qt.AlignHCenter, self.note)
        if self.stale:
            p.setPen(HIGHLIGHT)
            p.drawText(QtCore.QRectF(left, top, cols * cell, rows * cell), QtCore.Qt.AlignCenter | QtCore.Qt.TextWordWrap,
                       "stale: the model or the sentence changed; run again")
        p.end()
