"""Arrows from the origin, drawn for reading on a projector: each vector an arrow with its
label, labels placed so they cover neither each other nor (for few arrows) any arrow, the
angle arc of a pair, and the full vector on hover.

:class:`VectorLayer` is one pyqtgraph item painted in device pixels, so line widths, arrow
heads and labels stay readable at any zoom and scale with an exported figure. It draws the
tips it is given and computes nothing; :class:`~attn_studio.gui.views.geometry.GeometryView`
chooses the vectors and the pair.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui

from ...formatting import CELL_DIGITS, format_number
from ..qt.pg import pg

# Okabe-Ito colours (colour-blind safe), as in the variance plot.
PAIR_A = "#d55e00"   # vermillion: the first vector of the pair (the query side)
PAIR_B = "#0072b2"   # blue: the second vector of the pair (the key side)
PLAIN = "#7a7a7a"    # every other arrow
PLAIN_TEXT = "#303030"
ARC = "#202020"

# Painting order and style per role: (z order, colour, line width px, head length px, head half-width px).
_STYLE = {
    "plain": (0, PLAIN, 2.5, 15.0, 6.0),
    "b": (1, PAIR_B, 4.5, 21.0, 8.5),
    "a": (2, PAIR_A, 4.5, 21.0, 8.5),
}
LABEL_PX = 16          # label font size in pixels (projector-readable)
PAIR_LABEL_PX = 18
MAX_LABELS = 60        # beyond this many arrows only the pair is labelled
AVOID_ALL_ARROWS = 30  # up to this many arrows, labels avoid covering any of them
MAX_TOOLTIP_VALUES = 16

def _vector_text(values: np.ndarray, digits: int = CELL_DIGITS) -> str:
    shown = [format_number(v, digits) for v in values[:MAX_TOOLTIP_VALUES]]
    more = f", … ({values.size} values)" if values.size > MAX_TOOLTIP_VALUES else ""
    return "[" + ", ".join(shown) + more + "]"


class VectorLayer(pg.GraphicsObject):
    """Arrows from the origin to ``tips`` with labels, and optionally the angle arc of a pair.

    Everything is painted in device pixels in one ``paint`` call, so line
    widths, arrow heads and label sizes stay readable whatever the zoom, and an
    exported figure at a higher scale scales them with it.

    Read-only attributes for callers and tests: ``tips`` ``(n, 2)`` (data
    coordinates), ``labels``, ``roles`` (``"a"``, ``"b"`` or ``"plain"``),
    ``vectors`` (the full vectors, for the hover text of :meth:`tooltip`) and
    ``arc`` (``(i, j, text)`` or None).
    """

    def __init__(self):
        super().__init__()
        self.tips = np.zeros((0, 2))
        self.labels: list[str] = []
        self.roles: list[str] = []
        self.vectors: list[np.ndarray] = []
        self.arc: tuple[int, int, str] | None = None
        self._label_rects: list[tuple[QtCore.QRectF, int]] = []
        self.digits = CELL_DIGITS  # decimals of the hover text
        self.text_scale = 1.0  # the labels' size relative to LABEL_PX (a stage for the room: larger)
        self.setAcceptHoverEvents(True)

    def set_data(self, tips: np.ndarray, labels: list[str], roles: list[str], vectors: list[np.ndarray],
                 arc: tuple[int, int, str] | None = None):
        self.prepareGeometryChange()
        self.tips = np.asarray(tips, dtype=np.float64).reshape(-1, 2)
        self.labels = list(labels)
        self.roles = list(roles)
        self.vectors = list(vectors)
        self.arc = arc
        self.update()

    # -- geometry -----------------------------------------------------------------
    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        values = np.concatenate([self.tips[:, ax], [0.0]])
        return float(values.min()), float(values.max())

    def boundingRect(self) -> QtCore.QRectF:
        # Labels and heads are drawn in pixels around the tips: claim the whole
        # visible area (the view box clips its children to it anyway).
        vb = self.getViewBox()
        if vb is not None:
            return vb.viewRect()
        lo = np.minimum(self.tips.min(axis=0, initial=0.0), 0.0) if len(self.tips) else np.zeros(2)
        hi = np.maximum(self.tips.max(axis=0, initial=0.0), 0.0) if len(self.tips) else np.zeros(2)
        return QtCore.QRectF(lo[0] - 1, lo[1] - 1, hi[0] - lo[0] + 2, hi[1] - lo[1] + 2)

    def viewRangeChanged(self):
        self.prepareGeometryChange()
        super().viewRangeChanged()

    def _screen_transform(self) -> QtGui.QTransform | None:
        """Item to on-screen pixels, or None when not shown.

        (QGraphicsItem.deviceTransform needs the viewport transform: called
        without it, PySide6 crashes.)
        """
        view = self.getViewWidget()
        if view is None:
            return None
        transform = self.deviceTransform(view.viewportTransform())
        return transform if transform.determinant() != 0 else None

    def _export_scale(self, transform: QtGui.QTransform) -> float:
        """How much larger than on screen this paint is (1 on screen, e.g. 4 in a 4x export)."""
        device = self._screen_transform()
        if device is None:
            return 1.0
        a, b = abs(transform.determinant()), abs(device.determinant())
        if a <= 0 or b <= 0:
            return 1.0
        return max(1.0, math.sqrt(a / b))

    # -- painting -----------------------------------------------------------------
    def paint(self, painter: QtGui.QPainter, *args):
        transform = painter.transform()
        s = self._export_scale(transform)
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QtGui.QPainter.Antialiasing, True)
        origin = transform.map(QtCore.QPointF(0.0, 0.0))
        ends = [transform.map(QtCore.QPointF(float(x), float(y))) for x, y in self.tips]
        bounds = self.getViewBox().viewRect() if self.getViewBox() is not None else None
        view = transform.mapRect(bounds) if bounds is not None else None
        # Layout first (the pair's labels choose their places first), then paint
        # in layers: other arrows and their labels below, the pair on top.
        arc = self._arc_geometry(origin, ends, s)
        labels = self._layout_labels(origin, ends, [arc[-1]] if arc else [], view, s)
        pair = [i for i in range(len(ends)) if self.roles[i] != "plain"]
        pair.sort(key=lambda i: _STYLE[self.roles[i]][0])
        for i in range(len(ends)):
            if self.roles[i] == "plain":
                self._arrow_with_style(painter, origin, ends[i], i, s)
        for rect, i, font in labels:
            if self.roles[i] == "plain":
                self._leader(painter, ends[i], rect, QtGui.QColor(PLAIN), s)
                self._text_box(painter, rect, self.labels[i], font, QtGui.QColor(PLAIN_TEXT))
        painter.setPen(QtCore.Qt.NoPen)
        painter.setBrush(QtGui.QColor(ARC))
        painter.drawEllipse(origin, 4.0 * s, 4.0 * s)  # the origin: where every vector starts
        for i in pair:
            self._arrow_with_style(painter, origin, ends[i], i, s)
        if arc:
            self._draw_arc(painter, arc, s)
        for rect, i, font in labels:
            if self.roles[i] != "plain":
                self._leader(painter, ends[i], rect, QtGui.QColor(_STYLE[self.roles[i]][1]), s)
                self._text_box(painter, rect, self.labels[i], font, QtGui.QColor(_STYLE[self.roles[i]][1]))
        if abs(s - 1.0) < 1e-6:  # an on-screen paint (not an export): remember for hovering
            self._label_rects = [(rect, i) for rect, i, _ in labels]
        painter.restore()

    def _arrow_with_style(self, painter, origin, end, i, s):
        _, colour, width, head, half = _STYLE[self.roles[i]]
        self._draw_arrow(painter, origin, end, QtGui.QColor(colour), width * s, head * s, half * s)

    @staticmethod
    def _draw_arrow(painter, start: QtCore.QPointF, end: QtCore.QPointF, colour: QtGui.QColor,
                    width: float, head: float, half: float):
        dx, dy = end.x() - start.x(), end.y() - start.y()
        length = math.hypot(dx, dy)
        if length < 1.0:
            # A zero vector: a ring at the origin, so that it is visibly "there".
            painter.setPen(QtGui.QPen(colour, width * 0.6))
            painter.setBrush(QtCore.Qt.NoBrush)
            painter.drawEllipse(end, head * 0.5, head * 0.5)
            return
        ux, uy = dx / length, dy / length
        shrink = min(1.0, length * 0.6 / head)  # short arrows get smaller heads
        head, half = head * shrink, half * shrink
        base = QtCore.QPointF(end.x() - ux * head, end.y() - uy * head)
        pen = QtGui.QPen(colour, width)
        pen.setCapStyle(QtCore.Qt.FlatCap)
        painter.setPen(pen)
        # The shaft stops inside the head so that the thick line never pokes past the tip.
        shaft_end = QtCore.QPointF(base.x() + ux * head * 0.3, base.y() + uy * head * 0.3)
        painter.drawLine(start, shaft_end)
        nx, ny = -uy, ux
        polygon = QtGui.QPolygonF([
            end,
            QtCore.QPointF(base.x() + nx * half, base.y() + ny * half),
            QtCore.QPointF(base.x() - nx * half, base.y() - ny * half),
        ])
        painter.setPen(QtCore.Qt.NoPen)
        painter.setBrush(colour)
        painter.drawPolygon(polygon)

    def set_presentation(self, zoom: float, outline) -> None:
        """The text zoom in force (``presentation.restyle``): labels grow with it past the size a
        tick label has at that zoom, never below LABEL_PX."""
        scale = max(1.0, zoom * 12.0 / LABEL_PX)
        if scale != self.text_scale:
            self.text_scale = scale
            self.update()

    def _font(self, painter_font: QtGui.QFont, px: float, bold: bool) -> QtGui.QFont:
        font = QtGui.QFont(painter_font)
        font.setPixelSize(max(1, int(round(px))))
        font.setBold(bold)
        return font

    def _arc_geometry(self, origin, ends, s):
        """(box, start angle, sweep, text, font, text rect) of the pair's angle arc, or None."""
        if self.arc is None:
            return None
        i, j, text = self.arc
        if not (0 <= i < len(ends) and 0 <= j < len(ends)):
            return None
        va = (ends[i].x() - origin.x(), origin.y() - ends[i].y())  # y up, as Qt's arc angles
        vb = (ends[j].x() - origin.x(), origin.y() - ends[j].y())
        la, lb = math.hypot(*va), math.hypot(*vb)
        if la < 1.0 or lb < 1.0:
            return None
        ang_a = math.degrees(math.atan2(va[1], va[0]))
        ang_b = math.degrees(math.atan2(vb[1], vb[0]))
        sweep = (ang_b - ang_a + 180.0) % 360.0 - 180.0
        if abs(sweep) < 0.5:  # (nearly) the same direction: no arc to draw
            return None
        if abs(sweep) >= 179.999:  # opposite vectors: a half circle
            sweep = 180.0
        radius = min(max(0.3 * min(la, lb), 26.0 * s), 0.75 * min(la, lb), 90.0 * s)
        box = QtCore.QRectF(origin.x() - radius, origin.y() - radius, 2 * radius, 2 * radius)
        font = self._font(QtGui.QFont(), LABEL_PX * s * self.text_scale, True)
        metrics = QtGui.QFontMetricsF(font)
        w, h = metrics.horizontalAdvance(text) + 6 * s, metrics.height()
        mid = math.radians(ang_a + sweep / 2.0)
        gap = radius + 6 * s
        ux, uy = math.cos(mid), -math.sin(mid)
        cx, cy = origin.x() + ux * gap, origin.y() + uy * gap
        rect = QtCore.QRectF(cx - w * (0.5 - 0.5 * ux), cy - h * (0.5 - 0.5 * uy), w, h)
        return box, ang_a, sweep, text, font, rect

    def _draw_arc(self, painter, arc, s):
        box, start, sweep, text, font, rect = arc
        painter.setPen(QtGui.QPen(QtGui.QColor(ARC), 2.0 * s))
        painter.setBrush(QtCore.Qt.NoBrush)
        painter.drawArc(box, int(round(start * 16)), int(round(sweep * 16)))
        self._text_box(painter, rect, text, font, QtGui.QColor(ARC))

    @staticmethod
    def _leader(painter, tip: QtCore.QPointF, rect: QtCore.QRectF, colour: QtGui.QColor, s: float):
        """A thin dotted line from a tip to its label when the label had to move away."""
        x = min(max(tip.x(), rect.left()), rect.right())
        y = min(max(tip.y(), rect.top()), rect.bottom())
        if math.hypot(x - tip.x(), y - tip.y()) <= 12.0 * s:
            return
        pen = QtGui.QPen(colour, 1.3 * s, QtCore.Qt.DotLine)
        painter.setPen(pen)
        painter.drawLine(tip, QtCore.QPointF(x, y))

    @staticmethod
    def _text_box(painter, rect: QtCore.QRectF, text: str, font: QtGui.QFont, colour: QtGui.QColor):
        painter.setPen(QtCore.Qt.NoPen)
        painter.setBrush(QtGui.QColor(255, 255, 255, 215))
        painter.drawRoundedRect(rect, 3, 3)
        painter.setFont(font)
        painter.setPen(colour)
        painter.drawText(rect, int(QtCore.Qt.AlignCenter), text)

    def _layout_labels(self, origin, ends, placed: list[QtCore.QRectF], view, s):
        """Where each label goes: ``[(rect, arrow index, font)]`` in device pixels."""
        n = len(ends)
        # The pair first, so that its labels get the best places.
        order = sorted(range(n), key=lambda i: -_STYLE[self.roles[i]][0])
        if n > MAX_LABELS:
            order = [i for i in order if self.roles[i] != "plain"]
        # Labels keep off the arrows (points sampled along each shaft): off every
        # arrow while there are few, off the pair's always.
        avoid = []
        for i in range(n):
            if self.roles[i] != "plain" or n <= AVOID_ALL_ARROWS:
                for t in np.linspace(0.1, 1.0, 10):
                    avoid.append(QtCore.QPointF(origin.x() + t * (ends[i].x() - origin.x()),
                                                origin.y() + t * (ends[i].y() - origin.y())))
            if self.roles[i] != "plain":
                # The pair's heads too, every few pixels: a label beside the tip of another arrow
                # that ends where the pair does (q = k with projections off) is not painted over.
                length = math.hypot(ends[i].x() - origin.x(), ends[i].y() - origin.y())
                if length >= 1.0:
                    for back in np.arange(0.0, min(_STYLE["a"][3] * s, length), 3.0 * s):
                        t = 1.0 - back / length
                        avoid.append(QtCore.QPointF(origin.x() + t * (ends[i].x() - origin.x()),
                                                    origin.y() + t * (ends[i].y() - origin.y())))
        base_font = QtGui.QFont()
        fonts = {False: self._font(base_font, LABEL_PX * s * self.text_scale, False),
                 True: self._font(base_font, PAIR_LABEL_PX * s * self.text_scale, True)}
        out = []
        placed = list(placed)
        for i in order:
            text = self.labels[i]
            if not text:
                continue
            font = fonts[self.roles[i] != "plain"]
            metrics = QtGui.QFontMetricsF(font)
            w, h = metrics.horizontalAdvance(text) + 8 * s, metrics.height() + 2 * s
            dx, dy = ends[i].x() - origin.x(), ends[i].y() - origin.y()
            angle = math.atan2(dy, dx) if math.hypot(dx, dy) >= 1.0 else 0.0
            rect = self._place(ends[i], angle, w, h, placed, avoid, view, s)
            placed.append(rect)
            out.append((rect, i, font))
        return out

    @staticmethod
    def _place(tip: QtCore.QPointF, base: float, w: float, h: float, placed, avoid, view, s) -> QtCore.QRectF:
        """A label box beyond the tip, turned around it until it overlaps no other label or pair arrow."""
        first = fallback = None
        for gap in (7.0 * s, 26.0 * s, 48.0 * s):
            for turn in (0, 35, -35, 70, -70, 110, -110, 150, -150, 180):
                a = base + math.radians(turn)
                ux, uy = math.cos(a), math.sin(a)
                cx, cy = tip.x() + ux * gap, tip.y() + uy * gap
                rect = QtCore.QRectF(cx - w * (0.5 - 0.5 * ux), cy - h * (0.5 - 0.5 * uy), w, h)
                if first is None:
                    first = rect
                inside = view is None or view.contains(rect)
                free = not any(rect.intersects(other) for other in placed)
                clear = not any(rect.contains(p) for p in avoid)
                if inside and free and clear:
                    return rect
                if fallback is None and inside and free:
                    fallback = rect
        return fallback or first

    # -- hover: the full vector of the arrow under the mouse ------------------------
    def hoverEvent(self, ev):
        if ev.isExit():
            self.setToolTip("")
            return
        device = self._screen_transform()
        if device is None or not len(self.tips):
            return
        point = device.map(ev.pos())
        for rect, i in self._label_rects:
            if rect.contains(point):
                self.setToolTip(self.tooltip(i))
                return
        best, best_d = None, 14.0
        for i, (x, y) in enumerate(self.tips):
            p = device.map(QtCore.QPointF(float(x), float(y)))
            d = math.hypot(p.x() - point.x(), p.y() - point.y())
            if d < best_d:
                best, best_d = i, d
        self.setToolTip(self.tooltip(best) if best is not None else "")

    def tooltip(self, i: int) -> str:
        """The hover text of arrow ``i``: its label and full vector (formatted only when asked)."""
        return f"{self.labels[i]} = {_vector_text(np.asarray(self.vectors[i]), self.digits)}"
