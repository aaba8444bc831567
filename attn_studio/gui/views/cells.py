"""The cells of a heatmap: their values, the masked cells' hatching, the pointer and the selected row.

One item per heatmap (``CellOverlay``) draws every cell in a single ``paint``
call, so a repaint costs one pass over the cells rather than one graphics item
per cell. A value is drawn whenever it fits its cell (measured with the font, not
guessed from its length).
"""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui

from ...formatting import CELL_DIGITS, format_fixed, format_number
from .. import presentation
from ..qt.pg import pg
from .heatmap_image import runs
from .token_axis import is_exporting, laid_out, query_outlined

TEXT_PX = 13.0      # cell values at zoom 1, in screen pixels, when the cell is large enough
MIN_TEXT_PX = 7.0   # below this the values are not drawn (the colours still are)
OVERFLOW_FILL = QtGui.QColor(200, 30, 30)
HIGHLIGHT_FILL = QtGui.QColor(255, 200, 0, 70)   # the pointer's band: a soft amber tint...
HIGHLIGHT_EDGE = QtGui.QColor(255, 170, 0, 230)  # ...with a clear edge


def _blend(a: str, b: str, t: float) -> QtGui.QColor:
    ca, cb = QtGui.QColor(a), QtGui.QColor(b)
    return QtGui.QColor(*(round(x + (y - x) * t) for x, y in ((ca.red(), cb.red()), (ca.green(), cb.green()),
                                                             (ca.blue(), cb.blue()))))


def mask_colours() -> tuple[QtGui.QColor, QtGui.QColor]:
    """(fill, hatch) of masked cells in the current theme: a quiet tone between the canvas
    and the ink (light grey on white; dark grey, not a glaring light patch, on dark)."""
    theme = presentation.STYLE.theme
    return _blend(theme.canvas, theme.ink, 0.22), _blend(theme.canvas, theme.ink, 0.5)


def format_value(value: float, digits: int = CELL_DIGITS) -> str:
    """A cell value: ``digits`` fixed decimals, a true minus, overflow as ``+inf`` / ``NaN``."""
    return format_number(value, digits, short=True)


def widest_em(values: np.ndarray, digits: int = CELL_DIGITS) -> float:
    """The width of the widest of ``values`` written with ``digits`` decimals, in ems of the cell font
    (measured, not guessed from its length): the smallest and the largest value are the widest."""
    finite = values[np.isfinite(values)]
    texts = [format_value(v, digits) for v in (finite.min(), finite.max())] if finite.size else ["0.00"]
    return max(_em_width(t) for t in texts)


def _runs_path(cells: np.ndarray, found=None) -> QtGui.QPainterPath:
    """One rectangle per run of True cells in a row (a causal row is one run); ``found``: the runs
    (:func:`.heatmap_image.runs`) when already known."""
    path = QtGui.QPainterPath()
    rows, starts, stops = found if found is not None else runs(cells)
    add, rect = path.addRect, QtCore.QRectF
    for i, start, stop in zip(rows.tolist(), starts.tolist(), stops.tolist()):
        add(rect(start - 0.5, i - 0.5, stop - start, 1.0))
    return path


_last_path: list = [np.zeros((0, 0), dtype=bool), QtGui.QPainterPath()]  # (mask, its path), the last built

# Cell values are laid out once per font and text (QStaticText) and, on the screen, drawn once per
# colour into a small picture that each cell showing that text copies: the values of a changed
# model are mostly texts already seen ("0.07", "−1.25"), and drawText laid out and rasterised each
# one again on every paint (the values of two heads were a quarter of a small edit's time).
# Figures draw the laid-out texts (an SVG or PDF keeps them as text). Up to DRAWN_TEXTS are kept.
DRAWN_TEXTS = 20_000
_drawn_texts: dict = {}  # (font key, colour, pixel ratio) or font key -> {text: what draws it}


def _drawn(key) -> dict:
    """The texts kept for ``key`` (see ``_drawn_texts``): text -> (what to draw, its offset from the centre)."""
    texts = _drawn_texts.get(key)
    if texts is None:
        if sum(len(t) for t in _drawn_texts.values()) >= DRAWN_TEXTS:
            _drawn_texts.clear()
        texts = _drawn_texts[key] = {}
    return texts


_em_widths: dict = {}  # (the application's font, text) -> the text's width in ems of it


def _em_width(text: str) -> float:
    """The width of ``text`` in ems of the application's font (measured once per font and text)."""
    font = QtGui.QFont()
    key = (font.key(), text)
    width = _em_widths.get(key)
    if width is None:
        if len(_em_widths) >= DRAWN_TEXTS:
            _em_widths.clear()
        font.setPixelSize(100)
        width = _em_widths[key] = QtGui.QFontMetricsF(font).horizontalAdvance(text) / 100.0
    return width


def _rasterise(text: str, font: QtGui.QFont, colour: QtGui.QColor, ratio: float) -> tuple:
    """``text`` drawn in ``font`` and ``colour`` on a transparent pixmap for a screen of pixel ratio
    ``ratio``: (QPixmap, half its width, half its height), the text centred in it as drawText centres it."""
    static, half_w, half_h = laid_out(text, font)
    width, height = math.ceil(2 * half_w) + 2, math.ceil(2 * half_h) + 2
    pixmap = QtGui.QPixmap(math.ceil(width * ratio), math.ceil(height * ratio))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(QtCore.Qt.transparent)
    painter = QtGui.QPainter(pixmap)
    painter.setFont(font)
    painter.setPen(colour)
    painter.drawStaticText(QtCore.QPointF(width / 2 - half_w, height / 2 - half_h), static)
    painter.end()
    return pixmap, width / 2, height / 2


def _shared_runs_path(cells: np.ndarray, found=None) -> QtGui.QPainterPath:
    """:func:`_runs_path`, built once for the same cells (the stages and heads of a result all show
    its mask: a causal mask at 2,000 tokens is 2,000 rectangles; comparing costs well under a ms)."""
    if not np.array_equal(_last_path[0], cells):
        _last_path[:] = [cells.copy(), _runs_path(cells, found)]
    return QtGui.QPainterPath(_last_path[1])


class CellOverlay(pg.GraphicsObject):
    """Cell values, masked-cell hatching and the selected-row outline of one heatmap."""

    def __init__(self):
        super().__init__()
        self._values = np.zeros((0, 0))
        self._masked = np.zeros((0, 0), dtype=bool)
        self._dark_text = np.zeros((0, 0), dtype=bool)
        self._dark_text_of = None  # or how to find it, when it is first needed
        self._texts: list[str] = []  # every cell's text, row after row (made when first drawn)
        self._centres_of: tuple = (None, [], [])  # (grid and transform, x, y): see _centres
        self._selected_row: int | None = None
        self._chars_known = 2.5  # the widest value, in ems (None: not measured yet)
        self._all_chars = None  # the widest of all the values, written or not (all_chars)
        self._mask_path = QtGui.QPainterPath()
        self._overflow_path = QtGui.QPainterPath()
        self._overflow = np.zeros((0, 0), dtype=bool)
        self.show_values = True
        # Which cells write their value (None: every cell). The stage, where numbers do not fit every
        # cell, writes the query row's and the pinned cell's only: the others show their colour.
        self.written_cells: np.ndarray | None = None
        self.line_share = 0.62  # the most of a cell's height its value's font takes
        self.pinned: tuple[int, int] | None = None  # a cell outlined (a scene's pinned cell)
        self.zoom = 1.0
        self.outline = QtGui.QColor(255, 64, 64)
        self.last_text_px = 0.0  # pixel size of the values at the last paint (0: not drawn)
        self.digits = CELL_DIGITS
        self.highlight: tuple[int | None, int | None] = (None, None)  # the pointer's row and column
        self.pointer_shown = True  # False while drawing a figure: slides show no pointer
        self.restyled = None  # called after a theme or zoom change (the heatmap recolours)

    def set_digits(self, digits: int):
        """Write the cell values with ``digits`` decimals (the precision setting)."""
        digits = int(digits)
        if digits != self.digits:
            self.digits = digits
            self._texts = []
            self._chars_known = self._all_chars = None
            self.update()

    @property
    def _chars(self) -> float:
        # Measured when a paint first needs it: at 2,000 tokens no value is ever written.
        if self._chars_known is None:
            self._chars_known = self._widest()
        return self._chars_known

    def _widest(self) -> float:
        """Width of the widest value, in ems of the cell font (measured, not guessed from its length)."""
        values = self._values
        if self.written_cells is not None and self.written_cells.shape == values.shape:
            values = values[self.written_cells]
        return widest_em(values, self.digits)

    @property
    def all_chars(self) -> float:
        """The widest of all the values (written or not), in ems of the cell font."""
        if self._all_chars is None:
            self._all_chars = widest_em(self._values, self.digits)
        return self._all_chars

    def set_presentation(self, zoom: float, outline: QtGui.QColor):
        """Text size of the cell values follows the app's zoom; the outline the theme."""
        self.zoom = zoom
        self.outline = outline
        if self.restyled is not None:
            self.restyled()
        self.update()

    def set_data(self, values: np.ndarray, masked: np.ndarray, dark_text, selected_row: int | None,
                 overflow: np.ndarray | None = None, runs_found: tuple | None = None):
        """Replace what is drawn: ``values`` (T, S), ``masked`` cells, text colour per cell
        (``dark_text``: booleans, or a function of ``values`` giving them, called only when the
        values are written), and ``overflow`` cells (a naive softmax that produced inf/inf),
        drawn red and labelled. ``runs_found``: (masked runs, overflow runs) when already worked
        out (:func:`.heatmap_image.runs`, off the GUI thread)."""
        if values.shape != self._values.shape:
            self.prepareGeometryChange()
        overflow = overflow if overflow is not None else np.zeros_like(masked)
        # An edit of a number rarely changes which cells are masked or overflowed:
        # their paths are rebuilt only when those cells change.
        mask_runs, overflow_runs = runs_found if runs_found is not None else (None, None)
        if not np.array_equal(masked, self._masked):
            self._mask_path = _shared_runs_path(masked, mask_runs)
        if not np.array_equal(overflow, self._overflow):
            self._overflow_path = _runs_path(overflow, overflow_runs)
        self._values = values
        self._masked = masked
        if callable(dark_text):
            self._dark_text, self._dark_text_of = None, dark_text
        else:
            self._dark_text, self._dark_text_of = dark_text, None
        self._selected_row = selected_row
        # Format lazily: only when a paint finds the cells large enough.
        self._texts = []
        self._overflow = overflow
        # The widest value string decides how small the text must be to fit (measured when needed).
        self._chars_known = self._all_chars = None
        self.update()

    @property
    def masked(self) -> np.ndarray:
        """Which cells are drawn hatched (masked), (T, S) booleans; read-only."""
        return self._read_only(self._masked)

    @property
    def overflow(self) -> np.ndarray:
        """Which cells are drawn red as an overflow (inf/inf), (T, S) booleans; read-only."""
        return self._read_only(self._overflow)

    @property
    def selected_row(self) -> int | None:
        """The outlined query row (None: none)."""
        return self._selected_row

    @staticmethod
    def _read_only(array: np.ndarray) -> np.ndarray:
        view = array.view()
        view.flags.writeable = False
        return view
    def set_written(self, cells: np.ndarray | None):
        """Write the values of ``cells`` only ((T, S) booleans; None: of every cell that holds one)."""
        self.written_cells = None if cells is None else np.asarray(cells, dtype=bool)
        self._chars_known = None  # the widest value written may be another
        self.update()

    def set_pinned(self, cell: tuple[int, int] | None):
        """Outline cell (row, column) as pinned (None: none)."""
        self.pinned = None if cell is None else (int(cell[0]), int(cell[1]))
        self.update()

    def set_highlight(self, row: int | None, col: int | None):
        """Tint query row ``row`` and key column ``col`` (the lecturer's pointer; None: none)."""
        if (row, col) != self.highlight:
            self.highlight = (row, col)
            self.update()

    def set_selected_row(self, row: int | None):
        """Outline query row ``row`` (None: no outline)."""
        self._selected_row = row
        self.update()

    def boundingRect(self) -> QtCore.QRectF:
        rows, cols = self._values.shape
        return QtCore.QRectF(-0.5, -0.5, max(cols, 1), max(rows, 1))

    def cell_text(self, i: int, j: int) -> str:
        """The text cell (``i``, ``j``) shows when it is large enough (formatted on first use)."""
        return self._all_texts()[i * self._values.shape[1] + j]

    def _all_texts(self) -> list[str]:
        """Every cell's text, row after row (formatted on first use, all at once)."""
        if not self._texts:
            self._texts = format_fixed(self._values, self.digits, short=True)
        return self._texts

    def _centres(self, transform: QtGui.QTransform) -> tuple[list, list]:
        """Every cell's centre on the device, row after row, as lists of x and y (kept while the
        grid and the transform stay: an edit changes the numbers, rarely where they go)."""
        rows, cols = self._values.shape
        key = (rows, cols, transform.m11(), transform.m12(), transform.m21(), transform.m22(),
               transform.dx(), transform.dy())
        if self._centres_of[0] != key:
            # The paint's transform maps the cell grid affinely: cell (i, j)'s centre is (j, i) mapped.
            j, i = np.arange(cols)[None, :], np.arange(rows)[:, None]
            x = (key[2] * j + key[4] * i + key[6]).ravel().tolist()
            y = (key[3] * j + key[5] * i + key[7]).ravel().tolist()
            self._centres_of = (key, x, y)
        return self._centres_of[1], self._centres_of[2]

    def _draw_values(self, painter: QtGui.QPainter, transform: QtGui.QTransform, cell_w: float, px: float):
        """Write each cell's value centred in it (device pixels), in the colour that reads on its fill."""
        rows, cols = self._values.shape
        if self._dark_text is None:
            self._dark_text = self._dark_text_of(self._values)
        x, y = self._centres(transform)
        texts, font, point = self._all_texts(), painter.font(), QtCore.QPointF
        # On the screen (a raster painter, no figure being made) each text is copied from its picture.
        on_screen = not is_exporting() and painter.paintEngine().type() == QtGui.QPaintEngine.Raster
        ratio = painter.device().devicePixelRatioF() if on_screen else 1.0
        written = ~(self._masked | self._overflow)
        if self.written_cells is not None and self.written_cells.shape == written.shape:
            written &= self.written_cells
        dark = np.asarray(self._dark_text, dtype=bool)
        clip = painter.clipBoundingRect() if painter.hasClipping() else None
        system = painter.paintEngine().systemClip() if not on_screen else QtGui.QRegion()
        if not system.isEmpty():
            # A figure drawn into a region (painted band by band, one band per event-loop turn): the region
            # is the engine's clip, in device pixels, which the painter's clip does not show.
            inverse, invertible = painter.deviceTransform().inverted()
            if invertible:
                region = inverse.mapRect(QtCore.QRectF(system.boundingRect()))
                clip = region if clip is None else clip.intersected(region)
        if clip is not None:
            # Only the cells near the clip (a figure painted band by band, one band per event-loop
            # turn): a value whose cell lies a whole cell outside it cannot reach into it.
            xs, ys = np.asarray(x).reshape(rows, cols), np.asarray(y).reshape(rows, cols)
            reach_x, reach_y = abs(cell_w) + 1, abs(transform.mapRect(QtCore.QRectF(0, 0, 1, 1)).height()) + 1
            written &= ((xs > clip.left() - reach_x) & (xs < clip.right() + reach_x)
                        & (ys > clip.top() - reach_y) & (ys < clip.bottom() + reach_y))
        # One pen per colour, not one per cell.
        for colour, cells in ((QtGui.QColor(20, 20, 20), written & dark), (QtGui.QColor(255, 255, 255), written & ~dark)):
            painter.setPen(colour)
            if on_screen:
                drawn, draw = _drawn((font.key(), colour.rgba(), ratio)), painter.drawPixmap
                make = lambda text: _rasterise(text, font, colour, ratio)  # noqa: E731
            else:
                drawn, draw = _drawn(font.key()), painter.drawStaticText
                make = lambda text: laid_out(text, font)  # noqa: E731
            for k in np.flatnonzero(cells).tolist():
                text = texts[k]
                found = drawn.get(text)
                if found is None:
                    found = drawn[text] = make(text)
                what, half_w, half_h = found
                draw(point(x[k] - half_w, y[k] - half_h), what)
        for k in np.flatnonzero(self._overflow & ~self._masked).tolist():
            row, col = divmod(k, cols)
            rect = transform.mapRect(QtCore.QRectF(col - 0.5, row - 0.5, 1, 1))
            painter.drawText(rect, QtCore.Qt.AlignCenter, "overflow" if cell_w > px * 5 else "∞/∞")

    def paint(self, painter: QtGui.QPainter, *args):
        rows, cols = self._values.shape
        if rows == 0 or cols == 0:
            return
        transform = painter.transform()
        painter.save()
        # Draw in device pixels so that text and hatching stay crisp; the device
        # includes any export scale, so an exported figure scales them too.
        painter.resetTransform()
        if not self._mask_path.isEmpty():
            device_path = transform.map(self._mask_path)
            fill, hatch = mask_colours()
            painter.fillPath(device_path, fill)
            painter.fillPath(device_path, QtGui.QBrush(hatch, QtCore.Qt.BDiagPattern))
        if not self._overflow_path.isEmpty():
            device_path = transform.map(self._overflow_path)
            painter.fillPath(device_path, OVERFLOW_FILL)
            painter.fillPath(device_path, QtGui.QBrush(QtGui.QColor(255, 255, 255, 90), QtCore.Qt.CrossPattern))
        cell = transform.mapRect(QtCore.QRectF(0, 0, 1, 1))
        cell_w, cell_h = abs(cell.width()), abs(cell.height())
        # Sizes are decided in screen pixels and then multiplied by the export
        # scale (how much larger this paint is than the one on screen), so that
        # an exported figure shows the same text, only sharper.
        views = self.scene().views() if self.scene() is not None else []
        on_screen = self.deviceTransform(views[0].viewportTransform()).m11() if views else transform.m11()
        scale = abs(transform.m11() / on_screen) if on_screen else 1.0
        # The largest text the cell holds: its widest value with a little room each side,
        # one line high with room above and below.
        # Measuring the widest value needs every value: not when the cells cannot hold even the
        # narrowest a value can be, zero with the precision's decimals ("0.00"; the stages of a
        # dozen tokens at 1366 × 768 cannot, and measured theirs on every edit).
        least = _em_width(format_value(0.0, self.digits))
        share = self.line_share
        narrowest = min(cell_h * share, (cell_w - 3 * scale) / (least + 0.15)) / scale
        if narrowest < MIN_TEXT_PX or not self.show_values:
            fit = narrowest
        else:
            fit = min(cell_h * share, (cell_w - 3 * scale) / (self._chars + 0.15)) / scale
        px = min(fit, TEXT_PX * self.zoom)
        self.last_text_px = px if self.show_values and px >= MIN_TEXT_PX else 0.0
        px *= scale
        if self.last_text_px:
            font = QtGui.QFont(painter.font())
            font.setPixelSize(int(px))
            painter.setFont(font)
            self._draw_values(painter, transform, cell_w, px)
        row, col = self.highlight
        # Figures show no pointer.
        drawn = self.pointer_shown and not is_exporting()
        if drawn and (row is not None or col is not None):
            # A soft band with a strong edge: it reads on a projector without hiding the numbers.
            pen = QtGui.QPen(HIGHLIGHT_EDGE, max(3.0, cell_w * 0.08))
            for band in ((QtCore.QRectF(-0.5, row - 0.5, cols, 1) if row is not None and 0 <= row < rows else None),
                         (QtCore.QRectF(col - 0.5, -0.5, 1, rows) if col is not None and 0 <= col < cols else None)):
                if band is None:
                    continue
                rect = transform.mapRect(band)
                painter.fillRect(rect, HIGHLIGHT_FILL)
                painter.setPen(pen)
                painter.setBrush(QtCore.Qt.NoBrush)
                painter.drawRect(rect)
        if self._selected_row is not None and 0 <= self._selected_row < rows and query_outlined():
            rect = transform.mapRect(QtCore.QRectF(-0.5, self._selected_row - 0.5, cols, 1))
            pen = QtGui.QPen(self.outline, max(2.0, cell_h * 0.06))
            painter.setPen(pen)
            painter.setBrush(QtCore.Qt.NoBrush)
            painter.drawRect(rect)
        if self.pinned is not None and 0 <= self.pinned[0] < rows and 0 <= self.pinned[1] < cols:
            # The pinned cell: a thick dark frame with a white one inside it, which reads on every colour
            # of the map (and on the query row's outline around it).
            i, j = self.pinned
            rect = transform.mapRect(QtCore.QRectF(j - 0.5, i - 0.5, 1, 1))
            width = max(4.0, min(cell_w, cell_h) * 0.14)
            painter.setBrush(QtCore.Qt.NoBrush)
            # On the cell's edge, half of it over the neighbours: the value inside stays clear.
            painter.setPen(QtGui.QPen(QtGui.QColor(0, 0, 0), width, QtCore.Qt.SolidLine, QtCore.Qt.SquareCap,
                                      QtCore.Qt.MiterJoin))
            painter.drawRect(rect)
            painter.setPen(QtGui.QPen(QtGui.QColor(255, 255, 255), width * 0.4, QtCore.Qt.SolidLine,
                                      QtCore.Qt.SquareCap, QtCore.Qt.MiterJoin))
            painter.drawRect(rect)
        painter.restore()

