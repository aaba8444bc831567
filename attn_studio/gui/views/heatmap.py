"""Attention heatmaps: one image per matrix, token labels, values in the cells.

Each ``ImageItem`` is created once and updated with ``setImage``. The values
in the cells and the masked-cell hatching are drawn by one item per heatmap
(``CellOverlay``) in a single ``paint`` call, so a repaint costs one pass over
the cells rather than one graphics item per cell.
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...formatting import CELL_DIGITS, format_number
from .. import presentation
from .._pg import cache_static, pg

WEIGHTS_CMAP = "viridis"
SCORES_CMAP = "CET-CBD1"  # colour-blind-safe diverging map for signed scores
TEXT_PX = 13.0      # cell values at zoom 1, in screen pixels, when the cell is large enough
MIN_TEXT_PX = 7.0   # below this the values are not drawn (the colours still are)
OVERFLOW_FILL = QtGui.QColor(200, 30, 30)
SHOWN_MARK = " ◀"   # after the title of the head the stages show: an on-screen pointer, not in figures
MIN_EXPORT_LABEL_SCALE = 0.6  # a figure's token labels may shrink this far before some are left out

_export_depth = 0
_heatmaps: "weakref.WeakSet[Heatmap]" = weakref.WeakSet()


@contextlib.contextmanager
def exporting():
    """While a figure is drawn: none of the on-screen-only marks, every token label.

    Inside this context every heatmap leaves out the selected row's outline and
    the shown head's ``◀``, and its axes draw every token label, in a smaller
    font if that makes them fit (down to ``MIN_EXPORT_LABEL_SCALE``), instead
    of every n-th. Everything is as it was when the context ends.
    """
    global _export_depth
    _export_depth += 1
    if _export_depth == 1:
        _redraw_marks()
    try:
        yield
    finally:
        _export_depth -= 1
        if _export_depth == 0:
            _redraw_marks()


def is_exporting() -> bool:
    """True inside :func:`exporting`."""
    return _export_depth > 0


def _redraw_marks() -> None:
    for heatmap in list(_heatmaps):
        try:
            heatmap.redraw_marks()
        except RuntimeError:  # its Qt items were deleted with their window
            pass


def _blend(a: str, b: str, t: float) -> QtGui.QColor:
    ca, cb = QtGui.QColor(a), QtGui.QColor(b)
    return QtGui.QColor(*(round(x + (y - x) * t) for x, y in ((ca.red(), cb.red()), (ca.green(), cb.green()),
                                                             (ca.blue(), cb.blue()))))


DARK_DIM = 0.82  # on a dark theme colour maps are drawn this much darker: no glaring light cells


def themed_colormap(name: str):
    """Colour map ``name`` for the current theme: as it is on light themes; on the dark theme
    every colour scaled by DARK_DIM, so that the map's bright end (viridis' yellow, the
    near-white middle of the diverging scores map) does not glare on a projector. The
    colour bar shows the same dimmed map, so colours still read against it."""
    cmap = pg.colormap.get(name)
    if presentation.STYLE.theme.name != "dark":
        return cmap
    colors = cmap.getColors(mode="byte").astype(np.float64)
    colors[:, :3] *= DARK_DIM
    return pg.ColorMap(cmap.pos, np.round(colors).astype(np.uint8), name=cmap.name)


def mask_colours() -> tuple[QtGui.QColor, QtGui.QColor]:
    """(fill, hatch) of masked cells in the current theme: a quiet tone between the canvas
    and the ink (light grey on white; dark grey, not a glaring light patch, on dark)."""
    theme = presentation.STYLE.theme
    return _blend(theme.canvas, theme.ink, 0.22), _blend(theme.canvas, theme.ink, 0.5)


HIGHLIGHT_FILL = QtGui.QColor(255, 200, 0, 70)   # the pointer's band: a soft amber tint...
HIGHLIGHT_EDGE = QtGui.QColor(255, 170, 0, 230)  # ...with a clear edge
LABEL_SLACK = 0.06  # labels may be this much closer than their full spacing before some are left out
LABEL_EM = 8  # a token label is elided past this many font heights (the full word is in the tooltip)


def nice_ceil(m: float) -> float:
    """``m`` rounded up to 1, 1.5, 2, 3, 4, 5, 6, 8 or 10 times a power of ten.

    Colour scales end at such a number, so that they hold still while a
    lecturer edits (instead of changing with every keystroke) and read cleanly.
    """
    if not np.isfinite(m) or m <= 0:
        return 1.0
    power = 10.0 ** np.floor(np.log10(m))
    for step in (1, 1.5, 2, 3, 4, 5, 6, 8, 10):
        if step * power >= m * (1 - 1e-12):
            return float(step * power)
    return float(10 * power)


def symmetric_levels(*arrays) -> tuple[float, float]:
    """Colour levels (-m, m) around 0 covering every finite value of ``arrays``, m a nice number."""
    finite = [np.asarray(a)[np.isfinite(a)] for a in arrays]
    finite = [f for f in finite if f.size]
    m = nice_ceil(max((float(np.abs(f).max()) for f in finite), default=1.0))
    return -m, m


def format_value(value: float, digits: int = CELL_DIGITS) -> str:
    """A cell value: ``digits`` fixed decimals, a true minus, overflow as ``+inf`` / ``NaN``."""
    return format_number(value, digits, fixed=True, short=True)


@dataclass(frozen=True)
class HeatmapData:
    """What a heatmap shows: its values (rows = queries), masked cells, labels, colour levels, selection."""

    values: np.ndarray
    masked: np.ndarray
    row_labels: list
    col_labels: list
    levels: tuple
    selected_row: int | None


class HeatmapImage(pg.ImageItem):
    """pyqtgraph's ImageItem, drawn from a premultiplied ARGB copy of its QImage.

    pyqtgraph renders a colour-mapped image as an 8-bit indexed QImage; Qt scales such an
    image several times slower than a premultiplied ARGB one (it converts it on every
    paint). Converting once per new image (a few microseconds for a heatmap) keeps every
    colour and the transparent masked cells as they were.
    """

    def render(self, *args, **kwargs):
        super().render(*args, **kwargs)
        qimage = self.qimage
        if qimage is not None and qimage.format() != QtGui.QImage.Format_ARGB32_Premultiplied:
            self.qimage = qimage.convertToFormat(QtGui.QImage.Format_ARGB32_Premultiplied)


def _runs_path(cells: np.ndarray) -> QtGui.QPainterPath:
    """One rectangle per run of True cells in a row (a causal row is one run)."""
    path = QtGui.QPainterPath()
    for i in np.flatnonzero(cells.any(axis=1)) if cells.size else []:
        edges = np.flatnonzero(np.diff(np.concatenate(([0], cells[i].astype(np.int8), [0]))))
        for start, stop in zip(edges[0::2], edges[1::2]):
            path.addRect(QtCore.QRectF(start - 0.5, i - 0.5, stop - start, 1.0))
    return path


class CellOverlay(pg.GraphicsObject):
    """Cell values, masked-cell hatching and the selected-row outline of one heatmap."""

    def __init__(self):
        super().__init__()
        self._values = np.zeros((0, 0))
        self._masked = np.zeros((0, 0), dtype=bool)
        self._dark_text = np.zeros((0, 0), dtype=bool)
        self._texts: list[list[str]] = []
        self._selected_row: int | None = None
        self._chars = 4
        self._mask_path = QtGui.QPainterPath()
        self._overflow_path = QtGui.QPainterPath()
        self._overflow = np.zeros((0, 0), dtype=bool)
        self.show_values = True
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
            self._chars = self._widest()
            self.update()

    def _widest(self) -> int:
        finite = self._values[np.isfinite(self._values)]
        if not finite.size:
            return 4
        return max(len(format_value(v, self.digits)) for v in (finite.min(), finite.max()))

    def set_presentation(self, zoom: float, outline: QtGui.QColor):
        """Text size of the cell values follows the app's zoom; the outline the theme."""
        self.zoom = zoom
        self.outline = outline
        if self.restyled is not None:
            self.restyled()
        self.update()

    def set_data(self, values: np.ndarray, masked: np.ndarray, dark_text: np.ndarray, selected_row: int | None,
                 overflow: np.ndarray | None = None):
        """Replace what is drawn: ``values`` (T, S), ``masked`` cells, text colour per cell,
        and ``overflow`` cells (a naive softmax that produced inf/inf), drawn red and labelled."""
        if values.shape != self._values.shape:
            self.prepareGeometryChange()
        overflow = overflow if overflow is not None else np.zeros_like(masked)
        # An edit of a number rarely changes which cells are masked or overflowed:
        # their paths are rebuilt only when those cells change.
        if not np.array_equal(masked, self._masked):
            self._mask_path = _runs_path(masked)
        if not np.array_equal(overflow, self._overflow):
            self._overflow_path = _runs_path(overflow)
        self._values = values
        self._masked = masked
        self._dark_text = dark_text
        self._selected_row = selected_row
        # Format lazily: only when a paint finds the cells large enough.
        self._texts = []
        self._overflow = overflow
        # The widest value string decides how small the text must be to fit.
        self._chars = self._widest()
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
        if not self._texts:
            self._texts = [[format_value(v, self.digits) for v in row] for row in self._values]
        return self._texts[i][j]

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
        # The largest text the cell holds: digits are about 0.6 em wide.
        fit = min(cell_h * 0.42, cell_w / (0.6 * self._chars + 0.6)) / scale
        px = min(fit, TEXT_PX * self.zoom)
        self.last_text_px = px if self.show_values and px >= MIN_TEXT_PX else 0.0
        px *= scale
        if self.last_text_px:
            font = QtGui.QFont(painter.font())
            font.setPixelSize(int(px))
            painter.setFont(font)
            light, dark = QtGui.QColor(255, 255, 255), QtGui.QColor(20, 20, 20)
            flags = QtCore.Qt.AlignCenter
            for i in range(rows):
                for j in range(cols):
                    if self._masked[i, j]:
                        continue
                    rect = transform.mapRect(QtCore.QRectF(j - 0.5, i - 0.5, 1, 1))
                    if self._overflow[i, j]:
                        painter.setPen(light)
                        painter.drawText(rect, flags, "overflow" if cell_w > px * 5 else "∞/∞")
                        continue
                    painter.setPen(dark if self._dark_text[i, j] else light)
                    painter.drawText(rect, flags, self.cell_text(i, j))
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
        if self._selected_row is not None and 0 <= self._selected_row < rows and not is_exporting():
            rect = transform.mapRect(QtCore.QRectF(-0.5, self._selected_row - 0.5, cols, 1))
            pen = QtGui.QPen(self.outline, max(2.0, cell_h * 0.06))
            painter.setPen(pen)
            painter.setBrush(QtCore.Qt.NoBrush)
            painter.drawRect(rect)
        painter.restore()


def _ticks(labels: list[str]) -> list[list[tuple[int, str]]]:
    # Every label; TokenAxis shows as many as fit when it paints.
    return [[(i, label) for i, label in enumerate(labels)]]


class TokenAxis(pg.AxisItem):
    """An axis of token labels; on the bottom they are drawn at 45° so long words never overlap.

    pyqtgraph drops tick text whose upright box does not fit; tokens must all
    show, so this axis places its labels itself, one per tick, at the tick.
    """

    ANGLE = 45

    def __init__(self, orientation: str):
        self._labels: list[tuple[float, str]] = []
        self._full: list[str] = []  # the tokens before eliding
        self.shown_step = 1  # every n-th label was drawn at the last paint
        self.drawn: list[tuple[float, str]] = []  # (position, text) of the labels drawn at the last paint
        super().__init__(orientation)
        # Token positions need no SI prefix; pyqtgraph would otherwise re-typeset the axis
        # title on every range change (a window build sets ranges hundreds of times).
        self.enableAutoSIPrefix(False)
        self.setStyle(tickLength=0, tickFont=presentation.tick_font())

    def max_label_px(self) -> float:
        """The widest a label may be drawn, in pixels: longer tokens are elided with "…"."""
        metrics = QtGui.QFontMetricsF(self.style.get("tickFont") or QtGui.QFont())
        return LABEL_EM * metrics.height()

    def set_labels(self, ticks: list[tuple[int, str]]):
        """Label position ``v`` with token ``t`` for each ``(v, t)``; long tokens are elided."""
        metrics = QtGui.QFontMetricsF(self.style.get("tickFont") or QtGui.QFont())
        self._full = [str(t) for _, t in ticks]
        limit = self.max_label_px()
        # A 20,000-character word would make the axis (and every repaint) hundreds of
        # thousands of pixels wide: measure and draw at most a bounded prefix.
        self._labels = [(float(v), metrics.elidedText(t[:400], QtCore.Qt.ElideRight, limit)
                         if len(t) > 4 else t) for (v, _), t in zip(ticks, self._full)]
        # No tick marks or texts of pyqtgraph's own: this axis draws the labels.
        self.setTicks([[(v, "") for v, _ in ticks]])
        widest = max((metrics.horizontalAdvance(t) for _, t in self._labels), default=0.0)
        if self.orientation == "bottom":
            self.setHeight(int(widest * np.sin(np.radians(self.ANGLE)) + metrics.height() + 8))
            self._adjust_label()
        elif self.style["showValues"]:
            label = self.label.boundingRect().height() + 4 if self.label.isVisible() else 0
            self.setWidth(int(widest + label + 8))
        self.picture = None

    def relabel(self):
        """Recompute the room the slanted labels need (after a font change)."""
        if self._labels:
            self.set_labels([(int(v), t) for (v, _), t in zip(self._labels, self._full)])

    def boundingRect(self):
        # Slanted labels reach left of the axis (the first token's label hangs
        # below the row labels); include that area so it is painted.
        rect = super().boundingRect()
        if self.orientation == "bottom" and self._labels:
            rect = rect.adjusted(-self.height(), 0, 0, 0)
        return rect

    def _adjust_label(self):
        # Keep the axis title below the slanted labels.
        if self.label.isVisible():
            self.label.setPos(self.label.pos().x(), self.height() - self.label.boundingRect().height() + 2)

    def labels(self) -> list[tuple[float, str]]:
        """(position, label) of every label this axis has, as drawn (elided; some may be thinned)."""
        return list(self._labels)

    def full_label(self, index: int) -> str:
        """The whole token at position ``index`` (its label may be elided)."""
        return self._full[index] if 0 <= index < len(self._full) else ""

    def widest_label_px(self) -> float:
        """Width in pixels of the widest label as drawn."""
        metrics = QtGui.QFontMetricsF(self.style.get("tickFont") or QtGui.QFont())
        return max((metrics.horizontalAdvance(t) for _, t in self._labels), default=0.0)

    def label_spacing(self, font: QtGui.QFont | None = None) -> float:
        """Pixels between neighbouring labels for all of them to show without touching."""
        metrics = QtGui.QFontMetricsF(font or self.style.get("tickFont") or QtGui.QFont())
        # Slanted labels need their line height / sin(45°) along the axis (then parallel
        # labels just do not touch); upright ones their line height.
        slant = np.sin(np.radians(self.ANGLE)) if self.orientation == "bottom" else 1.0
        return metrics.height() / slant - 0.5

    def visible_step(self) -> int:
        """Label every n-th token: as many as fit without overlapping at the current size."""
        # A few per cent short of the full spacing still reads (the slanted words only touch
        # at their descenders): show them all rather than every other one.
        return max(1, int(np.ceil(self._crowding() - LABEL_SLACK)))

    def _crowding(self, font: QtGui.QFont | None = None) -> float:
        """Room the labels need over the room they have (above 1: they would overlap)."""
        view = self.linkedView()
        if view is None or len(self._labels) < 2:
            return 0.0
        a = self.mapFromScene(view.mapViewToScene(QtCore.QPointF(self._labels[0][0], self._labels[0][0])))
        b = self.mapFromScene(view.mapViewToScene(QtCore.QPointF(self._labels[1][0], self._labels[1][0])))
        spacing = abs(b.x() - a.x()) if self.orientation == "bottom" else abs(b.y() - a.y())
        return self.label_spacing(font) / max(spacing, 1e-6)

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        super().drawPicture(p, axisSpec, tickSpecs, [])
        view = self.linkedView()
        if view is None or not self.style["showValues"]:
            return
        font = self.style.get("tickFont")
        if font is not None:
            p.setFont(font)
        step = self.visible_step()
        if step > 1 and is_exporting():
            # A figure carries every token: a smaller font rather than every n-th label, if that fits.
            shrink = 1.0 / self._crowding(p.font())
            if shrink >= MIN_EXPORT_LABEL_SCALE:
                small = QtGui.QFont(p.font())
                if small.pixelSize() > 0:
                    small.setPixelSize(max(1, int(small.pixelSize() * shrink)))
                else:
                    small.setPointSizeF(small.pointSizeF() * shrink)
                p.setFont(small)
                step = 1
        p.setPen(self.textPen())
        metrics = QtGui.QFontMetricsF(p.font())
        bounds = self.boundingRect()
        self.shown_step = step
        self.drawn = []
        for value, text in self._labels[::step]:
            point = self.mapFromScene(view.mapViewToScene(QtCore.QPointF(value, value)))
            if self.orientation != "bottom":
                if point.y() < bounds.top() - 1 or point.y() > bounds.bottom() + 1:
                    continue
                rect = QtCore.QRectF(0, point.y() - metrics.height() / 2, self.width() - 4, metrics.height())
                if self.label.isVisible():
                    rect.setLeft(self.label.boundingRect().height() + 2)
                p.drawText(rect, int(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter), text)
                self.drawn.append((value, text))
                continue
            x = point.x()
            if x < bounds.left() - 1 or x > bounds.right() + 1:
                continue
            p.save()
            p.translate(x + metrics.height() * 0.3, 3)
            p.rotate(-self.ANGLE)
            width = metrics.horizontalAdvance(text) + 2
            p.drawText(QtCore.QRectF(-width, -metrics.height() / 2, width, metrics.height()),
                       int(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter), text)
            p.restore()
            self.drawn.append((value, text))

    def resizeEvent(self, ev=None):
        super().resizeEvent(ev)
        if self.orientation == "bottom" and self._labels:
            self._adjust_label()
        self.picture = None  # the spacing changed: thin the labels again


class Heatmap:
    """One labelled heatmap: a PlotItem holding an ImageItem and a CellOverlay."""

    def __init__(self, title: str = "", cmap: str = WEIGHTS_CMAP):
        self._last = None  # the last set_data call, to redraw after a colour-map change
        self.left_axis = TokenAxis("left")
        self.bottom_axis = TokenAxis("bottom")
        # No context menus (the canvas offers its own): built without them, not built and then dropped.
        self.plot = pg.PlotItem(axisItems={"left": self.left_axis, "bottom": self.bottom_axis}, enableMenu=False)
        self.plot.setMenuEnabled(False)
        # Equal preferred sizes so that the layout's stretch factors share the
        # space evenly, whatever the titles' lengths.
        self.plot.setSizePolicy(QtWidgets.QSizePolicy.Expanding, QtWidgets.QSizePolicy.Expanding)
        self.plot.setPreferredSize(80, 80)
        # A long title must not widen the plot past its share of the panel
        # (pyqtgraph's LabelItem makes its text width a minimum width).
        label = self.plot.titleLabel

        def update_min(label=label):
            height = label.itemRect().height()
            label.setMinimumWidth(0)
            label.setMinimumHeight(height)
            label._sizeHint = {QtCore.Qt.SizeHint.MinimumSize: (0, height),
                               QtCore.Qt.SizeHint.PreferredSize: (0, height),
                               QtCore.Qt.SizeHint.MaximumSize: (-1, -1),
                               QtCore.Qt.SizeHint.MinimumDescent: (0, 0)}
            label.updateGeometry()

        label.updateMin = update_min
        label.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Fixed)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.invertY(True)
        self.plot.setAspectLocked(False)
        cache_static(*(self.plot.getAxis(n) for n in ("left", "bottom", "top", "right")))
        for name in ("top", "right"):  # hidden, titleless: an SI prefix would never show
            self.plot.getAxis(name).enableAutoSIPrefix(False)
        self.image = HeatmapImage()
        self._cmap_name = cmap
        self._set_lut(themed_colormap(cmap))
        self.plot.addItem(self.image)
        self.overlay = CellOverlay()
        self.overlay.restyled = self._restyled
        self.overlay.setZValue(10)
        self.plot.addItem(self.overlay)
        self.title = title
        self.plot.setTitle(title, size=presentation.title_size(), color=presentation.STYLE.theme.ink)
        _heatmaps.add(self)
        self.bar = None  # the colour bar beside it, if any (set by its canvas)
        self.role = "weights" if cmap == WEIGHTS_CMAP else "scores"
        if self.role == "weights":
            presentation.register_weights_heatmap(self)
            if presentation.STYLE.weights_cmap != cmap:
                self.set_colormap(presentation.STYLE.weights_cmap)
        self.levels = (0.0, 1.0)
        self._shape = (-1, -1)
        self._rect_shape = (-1, -1)  # (rows, columns) the image's rectangle was set for
        self._drawn = np.zeros((0, 0))  # the values drawn at the last set_data
        self._labels: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    def set_colormap(self, name: str):
        """Draw with colour map ``name`` (and recolour the attached colour bar)."""
        self._cmap_name = name
        self._set_lut(themed_colormap(name))
        if self.bar is not None:
            self.bar.setColorMap(self.colormap)
        if self._last is not None:
            last, self._last = self._last, None  # the same numbers, drawn again in the new colours
            self.set_data(*last[0], **last[1])

    def _set_lut(self, colormap) -> None:
        self.colormap = colormap
        self._lut = colormap.getLookupTable(nPts=256)
        self.image.setLookupTable(self._lut)
        # Brightness of each of the 256 colours, for the cell text's colour (kept, not
        # recomputed on every edit).
        rgb = colormap.getLookupTable(nPts=256, alpha=False).astype(np.float64)
        self._luminance = rgb @ np.array([0.299, 0.587, 0.114])

    def _restyled(self):
        # A theme change: colours dim on a dark theme (see themed_colormap).
        if self._lut.tobytes() != themed_colormap(self._cmap_name).getLookupTable(nPts=256).tobytes():
            self.set_colormap(self._cmap_name)

    def set_axis_titles(self, rows: str, cols: str):
        if self.left_axis.style["showValues"] and self.left_axis.labelText != rows:
            self.plot.setLabel("left", rows, **presentation.label_style())
            self.left_axis.relabel()  # the title takes room beside the labels
        if self.bottom_axis.labelText != cols:
            self.plot.setLabel("bottom", cols, **presentation.label_style())
            self.bottom_axis.relabel()

    def show_row_labels(self, on: bool):
        """Row labels on the first heatmap of a row only: the others share its rows."""
        self.left_axis.setStyle(showValues=on)
        self.left_axis.showLabel(on)
        if not on:
            self.left_axis.setWidth(4)
        else:
            self.left_axis.setWidth(None)

    @property
    def data(self) -> HeatmapData | None:
        """What the heatmap shows now (the arguments of the last :meth:`set_data`), or None."""
        if self._last is None:
            return None
        (values,), kwargs = self._last
        return HeatmapData(values, **kwargs)

    @property
    def digits(self) -> int:
        """Decimals of the cell values (the precision setting)."""
        return self.overlay.digits

    def set_digits(self, digits: int):
        """Write the cell values with ``digits`` decimals."""
        self.overlay.set_digits(digits)

    def set_title(self, title: str):
        if title != self.title:
            self.title = title
            self._show_title()

    def _show_title(self):
        title = self.title
        if is_exporting() and title.endswith(SHOWN_MARK):
            title = title[: -len(SHOWN_MARK)]
        self.plot.setTitle(title, size=presentation.title_size(), color=presentation.STYLE.theme.ink)

    def redraw_marks(self):
        """Draw the title, outline and labels again for the screen or a figure (see :func:`exporting`)."""
        if self.title.endswith(SHOWN_MARK):
            self._show_title()
        for axis in (self.left_axis, self.bottom_axis):
            axis.picture = None
            axis.update()
        self.overlay.update()

    def set_data(self, values: np.ndarray, *, masked: np.ndarray, row_labels: list[str], col_labels: list[str],
                 levels: tuple[float, float], selected_row: int | None = None):
        """Show ``values`` (rows = queries, columns = keys); masked cells are hatched, not coloured.

        The same data as last time changes nothing (and repaints nothing).
        """
        values = np.asarray(values, dtype=np.float64)
        masked = np.asarray(masked, dtype=bool)
        if self._unchanged(values, masked, row_labels, col_labels, levels, selected_row):
            return
        self._last = ((values,), dict(masked=masked, row_labels=row_labels, col_labels=col_labels,
                                      levels=levels, selected_row=selected_row))
        # A copy: the caller may reuse its array, and the comparison above must see the numbers drawn.
        self._drawn = values.copy()
        shown = np.where(masked | ~np.isfinite(values), np.nan, values)
        lo, hi = levels
        if not hi > lo:
            hi = lo + 1.0
        self.levels = (lo, hi)
        rows, cols = values.shape
        if rows and cols:
            self.image.setImage(shown, levels=(lo, hi), autoLevels=False)
        else:
            self.image.setImage(np.full((1, 1), np.nan), levels=(lo, hi), autoLevels=False)
        if (rows, cols) != self._rect_shape:
            self._rect_shape = (rows, cols)
            self.image.setRect(QtCore.QRectF(-0.5, -0.5, max(cols, 1), max(rows, 1)))
        # Text colour: dark on the bright end of the colour map (masked cells: the map's low end).
        with np.errstate(invalid="ignore"):
            index = np.clip((shown - lo) * (255.0 / (hi - lo)), 0, 255)
        index[np.isnan(index)] = 0
        dark_text = self._luminance[index.astype(np.intp)] > 140
        overflow = ~np.isfinite(values) & ~masked
        self.overflow = overflow
        self.overlay.set_data(values, masked, dark_text, selected_row, overflow)
        labels = (tuple(row_labels), tuple(col_labels))
        if labels != self._labels:
            self._labels = labels
            self.left_axis.set_labels(_ticks(list(row_labels))[0])
            self.bottom_axis.set_labels(_ticks(list(col_labels))[0])
        if (rows, cols) != self._shape:
            self._shape = (rows, cols)
            self.plot.setXRange(-0.5, max(cols, 1) - 0.5, padding=0)
            self.plot.setYRange(-0.5, max(rows, 1) - 0.5, padding=0)

    def _unchanged(self, values, masked, row_labels, col_labels, levels, selected_row) -> bool:
        if self._last is None:
            return False
        kwargs = self._last[1]
        return (kwargs["selected_row"] == selected_row and tuple(kwargs["levels"]) == tuple(levels)
                and list(kwargs["row_labels"]) == list(row_labels) and list(kwargs["col_labels"]) == list(col_labels)
                and np.array_equal(kwargs["masked"], masked)
                and np.array_equal(self._drawn, values, equal_nan=True))

    def labels(self) -> tuple[list[str], list[str]]:
        """(row labels, column labels) as drawn at the last paint, in order (elided tokens end in "…")."""
        return [t for _, t in self.left_axis.drawn], [t for _, t in self.bottom_axis.drawn]

    def label_hit(self, scene_pos) -> tuple[str, int] | None:
        """("row", i) or ("col", j) when a scene position is on an axis label, else None."""
        rows, cols = self._shape
        for kind, axis in (("row", self.left_axis), ("col", self.bottom_axis)):
            if not axis.isVisible() or not axis.sceneBoundingRect().contains(scene_pos):
                continue
            if kind == "row":
                index, count = int(np.floor(self.plot.vb.mapSceneToView(scene_pos).y() + 0.5)), rows
            else:
                # Labels slant down-left from their column: follow the slant back up.
                local = axis.mapFromScene(scene_pos)
                back = QtCore.QPointF(scene_pos.x() + max(local.y() - 3, 0), scene_pos.y())
                index, count = int(np.floor(self.plot.vb.mapSceneToView(back).x() + 0.5)), cols
            if 0 <= index < count:
                return kind, index
        return None

    def label_at(self, scene_pos) -> str | None:
        """The whole token whose axis label is under a scene position, or None."""
        hit = self.label_hit(scene_pos)
        if hit is None:
            return None
        axis = self.left_axis if hit[0] == "row" else self.bottom_axis
        return axis.full_label(hit[1])

    def set_highlight(self, row: int | None, col: int | None):
        """Tint row ``row`` and column ``col`` (the lecturer's pointer)."""
        self.overlay.set_highlight(row, col)

    @property
    def highlighted(self) -> tuple[int | None, int | None]:
        """(row, column) tinted by the pointer."""
        return self.overlay.highlight

    def cell_scene_rect(self, i: int, j: int) -> QtCore.QRectF:
        """Cell (row ``i``, column ``j``) in scene coordinates."""
        return self.plot.vb.mapViewToScene(QtCore.QRectF(j - 0.5, i - 0.5, 1, 1)).boundingRect()

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        """The (row, column) under a scene position, or None outside the image."""
        vb = self.plot.vb
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        i, j = int(np.floor(p.y() + 0.5)), int(np.floor(p.x() + 0.5))
        rows, cols = self._shape
        if 0 <= i < rows and 0 <= j < cols:
            return i, j
        return None
