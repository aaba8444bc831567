"""The geometry of attention: token vectors (or queries and keys) as arrows, and one pair's angle.

The seeds' intuition is that a dot product is large when two vectors point
the same way ("money · bank"). This view draws the vectors attention works
with as arrows from the origin:

- "token vectors x": the rows of ``studio.x_kv`` (embeddings, plus positions
  when positional encoding is on), and in cross-attention the chosen query
  token's vector from the other sentence;
- "q and k of head h": every key ``k`` of the chosen head and the query ``q``
  of the chosen query token, in their own ``d_k``-dimensional space.

2-d (and 1-d) vectors are drawn exactly, with equal axes, so angles on the
screen are the true angles. Longer vectors are projected by
:func:`attn_studio.engine.projection.pca_2d` onto the plane through the origin
that keeps the most of them (``center=False``: arrows start at the true
origin, so the drawn angles approximate the real ones); the caption says how
much is kept. The pair readout is always computed in the full dimension.
"""

from __future__ import annotations

import html
import math

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...engine.projection import pca_2d, vector_pair
from ...formatting import CELL_DIGITS, format_number
from .._pg import cache_static, pg
from ..widgets import no_widen, short_token, view_layout

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

MODE_X = "x"
MODE_QK = "qk"


def _vector_text(values: np.ndarray, digits: int = CELL_DIGITS) -> str:
    shown = [format_number(v, digits, fixed=True) for v in values[:MAX_TOOLTIP_VALUES]]
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
        font = self._font(QtGui.QFont(), LABEL_PX * s, True)
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
        base_font = QtGui.QFont()
        fonts = {False: self._font(base_font, LABEL_PX * s, False), True: self._font(base_font, PAIR_LABEL_PX * s, True)}
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


def _default_key(weights_row: np.ndarray, exclude: int | None) -> int | None:
    """The key a query attends to most (other than ``exclude`` when there is another)."""
    n = weights_row.shape[0]
    if n == 0:
        return None
    row = np.array(weights_row, dtype=np.float64)
    if exclude is not None and n > 1 and 0 <= exclude < n:
        row[exclude] = -np.inf
    return int(np.argmax(row))


class GeometryView(QtWidgets.QWidget):
    """Token vectors (or one query and every key) as arrows, and the true angle of a pair.

    Call :meth:`render` after every studio change. Public pieces: ``mode``
    (a combo, objectName "geometryMode": token vectors x / q and k of the
    chosen head), ``pair_a`` / ``pair_b`` (combos "geometryPairA" /
    "geometryPairB"), ``caption`` ("geometryCaption"), ``readout``
    ("geometryReadout"), ``plot`` (the pyqtgraph PlotItem), ``arrows`` (the
    :class:`VectorLayer`), ``projection`` (the current ``Projection2D``) and
    ``pair_numbers`` (``(dot, cos, angle)`` of the pair, cos/angle None for a
    zero vector; None without a pair).

    The pair defaults to the selected query token and the key it attends to
    most (in the token-vector mode, the most attended key other than itself:
    a vector paired with itself always has angle 0). A pair the lecturer picks
    stays until the sentence or the selected query changes.
    """

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.setObjectName("geometryView")
        self.studio = studio
        self.projection = None
        self.pair_numbers: tuple[float, float | None, float | None] | None = None
        # Decimals of the readout and hover texts (the precision setting); fixed,
        # so that numbers keep their place while a value is dragged.
        self.digits = CELL_DIGITS
        self._override: tuple[int, int, tuple] | None = None
        self._fit_key = None
        self._combo_items: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

        outer = view_layout(self, spacing=4)

        controls = QtWidgets.QHBoxLayout()
        controls.setSpacing(6)
        controls.addWidget(QtWidgets.QLabel("Show"))
        self.mode = QtWidgets.QComboBox()
        self.mode.setObjectName("geometryMode")
        self.mode.addItem("token vectors x (what attention sees)", MODE_X)
        self.mode.addItem("q and k of head 1", MODE_QK)
        self.mode.setToolTip("Draw the token vectors, or the chosen query's q and every key's k of the chosen head")
        controls.addWidget(self.mode)
        controls.addStretch(1)
        pair_label = QtWidgets.QLabel("Pair")
        controls.addWidget(pair_label)
        self.pair_a = QtWidgets.QComboBox()
        self.pair_a.setObjectName("geometryPairA")
        self.pair_a.setToolTip("The first vector of the pair (a query token)")
        self.pair_b = QtWidgets.QComboBox()
        self.pair_b.setObjectName("geometryPairB")
        self.pair_b.setToolTip("The second vector of the pair (a key token)")
        for combo in (self.pair_a, self.pair_b):
            combo.setSizeAdjustPolicy(QtWidgets.QComboBox.AdjustToContents)
            combo.setMinimumContentsLength(6)
        controls.addWidget(self.pair_a)
        controls.addWidget(QtWidgets.QLabel("·"))
        controls.addWidget(self.pair_b)
        outer.addLayout(controls)

        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.ci.layout.setContentsMargins(2, 2, 8, 2)
        self.plot = self.canvas.addPlot()
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setAspectLocked(True, ratio=1.0)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.plot.vb.disableAutoRange()
        tick_font = QtGui.QFont()
        tick_font.setPixelSize(13)
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setStyle(tickFont=tick_font)
            axis.setPen(pg.mkPen("#444444", width=1))
            axis.setTextPen(pg.mkPen("#222222"))
        zero_pen = pg.mkPen("#b0b0b0", width=1.2)
        self.plot.addItem(pg.InfiniteLine(0.0, angle=0, pen=zero_pen, movable=False))
        self.plot.addItem(pg.InfiniteLine(0.0, angle=90, pen=zero_pen, movable=False))
        self.arrows = VectorLayer()
        self.arrows.setZValue(10)
        self.plot.addItem(self.arrows)
        outer.addWidget(self.canvas, 1)

        self.caption = QtWidgets.QLabel()
        self.caption.setObjectName("geometryCaption")
        self.caption.setWordWrap(True)
        self.caption.setToolTip(
            "Vectors of more than 2 dimensions are projected onto the plane through the origin that keeps\n"
            "the most of their squared lengths (PCA without centring), so arrows still start at 0.\n"
            "The dot product, cosine and angle in the readout are computed in the full dimension.")
        caption_font = self.caption.font()
        caption_font.setPointSizeF(caption_font.pointSizeF() * 1.1)
        self.caption.setFont(caption_font)
        # Room for two lines: a caption that wraps differently does not move the plot.
        self.caption.setMinimumHeight(QtGui.QFontMetrics(caption_font).lineSpacing() * 2 + 4)
        self.caption.setAlignment(QtCore.Qt.AlignLeft | QtCore.Qt.AlignTop)
        outer.addWidget(self.caption)
        self.readout = QtWidgets.QLabel()
        self.readout.setObjectName("geometryReadout")
        self.readout.setTextFormat(QtCore.Qt.RichText)
        self.readout.setWordWrap(True)
        self.readout.setTextInteractionFlags(QtCore.Qt.TextSelectableByMouse)
        readout_font = self.readout.font()
        readout_font.setPointSizeF(readout_font.pointSizeF() * 1.45)
        self.readout.setFont(readout_font)
        # Two lines of the large font: the label never changes height while editing.
        self.readout.setMinimumHeight(QtGui.QFontMetrics(readout_font).lineSpacing() * 2 + 8)
        outer.addWidget(self.readout)
        for label in (self.caption, self.readout):
            no_widen(label)
        cache_static(self.plot.getAxis("left"), self.plot.getAxis("bottom"))

        self.mode.currentIndexChanged.connect(self._on_mode)
        self.pair_a.activated.connect(self._on_pair)
        self.pair_b.activated.connect(self._on_pair)
        self.render()

    # -- interaction ---------------------------------------------------------------
    @property
    def current_mode(self) -> str:
        return self.mode.currentData() or MODE_X

    def set_mode(self, mode: str) -> None:
        """Show token vectors (``"x"``) or the chosen head's q and k (``"qk"``)."""
        index = self.mode.findData(mode)
        if index < 0:
            raise ValueError(f"unknown geometry mode {mode!r}; use 'x' or 'qk'")
        self.mode.setCurrentIndex(index)  # renders through _on_mode

    def set_pair(self, a: int, b: int) -> None:
        """Choose the pair: query token ``a`` and key token ``b`` (indices)."""
        state = self.studio.state
        if not (0 <= a < len(state.query_tokens) and 0 <= b < len(state.key_tokens)):
            raise IndexError(f"no such pair ({a}, {b})")
        self._override = (int(a), int(b), self._context())
        self.render()

    def _on_mode(self, _index=None):
        self.render()

    def _on_pair(self, _index=None):
        a, b = self.pair_a.currentIndex(), self.pair_b.currentIndex()
        if a >= 0 and b >= 0:
            self._override = (a, b, self._context())
        self.render()

    def _context(self) -> tuple:
        state = self.studio.state
        return (tuple(state.query_tokens), tuple(state.key_tokens), state.query_index)

    # -- rendering -----------------------------------------------------------------
    def _pair_indices(self, head: int, mode: str) -> tuple[int | None, int | None]:
        state, result = self.studio.state, self.studio.result
        n_q, n_k = len(state.query_tokens), len(state.key_tokens)
        if self._override is not None:
            a, b, context = self._override
            if context == self._context() and a < n_q and b < n_k:
                return a, b
            self._override = None
        if n_q == 0:
            return None, None
        a = min(state.query_index, n_q - 1)
        # A vector paired with itself is trivial (angle 0): look past it when q = k.
        same_space = mode == MODE_X or not state.projections
        exclude = a if (same_space and not state.cross) else None
        return a, _default_key(result.weights[head, a], exclude)

    def _sync_combos(self, a: int | None, b: int | None):
        state = self.studio.state
        # 1-based, as the query list and the notes count tokens.
        items = (tuple(f"{i + 1}: {short_token(t)}" for i, t in enumerate(state.query_tokens)),
                 tuple(f"{i + 1}: {short_token(t)}" for i, t in enumerate(state.key_tokens)))
        for k, (combo, index) in enumerate(((self.pair_a, a), (self.pair_b, b))):
            blocker = QtCore.QSignalBlocker(combo)
            if items[k] != self._combo_items[k]:
                combo.clear()
                combo.addItems(list(items[k]))
            combo.setCurrentIndex(-1 if index is None else index)
            combo.setEnabled(bool(items[k]))
            blocker.unblock()
        self._combo_items = items

    def render(self):
        """Redraw from the studio's current state and result."""
        state, result, studio = self.studio.state, self.studio.result, self.studio
        head = state.shown_head
        self.mode.setItemText(1, f"q and k of head {head + 1}" if state.projections
                              else "q and k (projections off: q = k = x)")
        mode = self.current_mode
        q_tokens = [short_token(t) for t in state.query_tokens]
        k_tokens = [short_token(t) for t in state.key_tokens]
        a, b = self._pair_indices(head, mode)
        self._sync_combos(a, b)

        if mode == MODE_QK:
            queries, keys = result.q[head], result.k[head]
            fit = np.vstack([queries, keys])
            a_name = f"q({q_tokens[a]})" if a is not None else ""
            key_names = [f"k({t})" for t in k_tokens]
            space = f"q and k of head {head + 1}" if state.projections else "q = k = x (projections off)"
        else:
            queries, keys = studio.x, studio.x_kv
            fit = np.vstack([keys, queries]) if state.cross else keys
            a_name = (f"{q_tokens[a]} (query)" if state.cross else q_tokens[a]) if a is not None else ""
            key_names = list(k_tokens)
            space = "token vectors x" + (" (embedding + position)" if state.positional else "")
        dim = fit.shape[1]
        projection = pca_2d(fit, center=False)
        self.projection = projection
        # Rows of `fit`: in q/k mode all queries then all keys; in x mode keys first.
        if mode == MODE_QK:
            query_tips = projection.coords[: len(queries)]
            key_tips = projection.coords[len(queries):]
        else:
            key_tips = projection.coords[: len(keys)]
            query_tips = projection.coords[len(keys):] if state.cross else key_tips

        tips, labels, roles, vectors = [], [], [], []
        for j, name in enumerate(key_names):
            role = "plain"
            if j == b:
                role = "b"
            if mode == MODE_X and not state.cross and j == a:
                role = "a"
            tips.append(key_tips[j])
            labels.append(name)
            roles.append(role)
            vectors.append(keys[j])
        index_a = None
        if a is not None:
            if mode == MODE_X and not state.cross:
                index_a = a
            else:
                index_a = len(tips)
                tips.append(query_tips[a])
                labels.append(a_name)
                roles.append("a")
                vectors.append(queries[a])
        index_b = b

        # The pair, in the full dimension.
        self.pair_numbers = None
        readout = "No pair: the sentence has no tokens." if not k_tokens or a is None else ""
        arc = None
        if a is not None and b is not None:
            va, vb = queries[a], keys[b]
            b_name = key_names[b]
            pair = vector_pair(va, vb)  # the engine's dot, lengths, cosine and angle
            self.pair_numbers = (pair.dot, pair.cosine, pair.angle)
            readout = self._readout_text(a_name, b_name, pair, mode, head, a, b)
            if projection.exact and pair.angle is not None and index_a != index_b:
                arc = (index_a, index_b, f"{format_number(pair.angle, 1, fixed=True)}°")
        tips_arr = np.array(tips, dtype=np.float64).reshape(-1, 2)
        self.arrows.set_data(tips_arr, labels, roles, vectors, arc)
        self.readout.setText(readout)
        self.caption.setText(self._caption_text(space, dim, projection, mode, state, len(tips)))
        self._fit(tips_arr, (mode, dim, projection.exact, tuple(labels)))

    def set_digits(self, digits: int):
        """Write the readout and hover numbers with ``digits`` decimals (the precision setting)."""
        self.digits = self.arrows.digits = int(digits)
        self.render()

    def _readout_text(self, a_name, b_name, pair, mode, head, a, b) -> str:
        state, result = self.studio.state, self.studio.result
        n = lambda x: format_number(x, self.digits, fixed=True)  # noqa: E731
        dot, cos, angle = pair.dot, pair.cosine, pair.angle
        a_name, b_name = html.escape(a_name), html.escape(b_name)  # tokens may be "<" or "&"
        name_a = f"<span style='color:{PAIR_A}; font-weight:bold'>{a_name}</span>"
        name_b = f"<span style='color:{PAIR_B}; font-weight:bold'>{b_name}</span>"
        if cos is None:
            first = (f"{name_a} · {name_b} = {n(dot)} ; cos and angle undefined: "
                     "a zero vector has no direction")
        else:
            first = (f"{name_a} · {name_b} = {n(dot)} ; cos = {n(cos)} ; "
                     f"angle = {format_number(angle, 1, fixed=True)}°")
        second = f"= |{a_name}| × |{b_name}| × cos = {n(pair.norm_a)} × {n(pair.norm_b)} × " \
                 f"{n(cos) if cos is not None else '?'}"
        additive = getattr(state, "score", "dot") == "additive"
        raw_score = mode == MODE_QK or not state.projections
        if raw_score and not additive:
            weight = float(result.weights[head, a, b])
            second += f" — the raw score; attention weight {n(weight)}"
        elif raw_score and additive:
            second += " — additive scores are on: attention does not use this dot product"
        else:
            second += " — attention compares q·k, not x·x: show “q and k” to see its scores"
        return f"{first}<br><span style='font-size:small'>{second}</span>"

    @staticmethod
    def _caption_text(space, dim, projection, mode, state, n_arrows) -> str:
        if n_arrows == 0:
            return "No tokens: type a sentence to see its vectors."
        if projection.exact:
            head = ("Exact 1-d vectors (on the horizontal axis)" if dim == 1
                    else "Exact 2-d vectors: lengths and angles on screen are the true ones")
        else:
            pct = 100.0 * projection.shown
            head = (f"PCA projection of {dim}-dimensional vectors: {format_number(pct, 0, fixed=True)}% of the variance shown; "
                    "angles and lengths are approximate (the numbers below are exact)")
        notes = []
        if mode == MODE_QK:
            notes.append(f"{space}: the chosen query's q, every key's k")
        elif state.positional:
            notes.append("x = embedding + position")
        return f"{head}." + (f" {'; '.join(notes)}." if notes else "")

    def _fit(self, tips: np.ndarray, key):
        """Frame the origin and every tip; keep the frame while edits stay inside it."""
        pts = np.vstack([tips, np.zeros((1, 2))])
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        if key == self._fit_key:
            (x0, x1), (y0, y1) = self.plot.vb.viewRange()
            mx, my = 0.08 * (x1 - x0), 0.08 * (y1 - y0)
            if lo[0] >= x0 + mx and hi[0] <= x1 - mx and lo[1] >= y0 + my and hi[1] <= y1 - my:
                return
        self._fit_key = key
        span = float(np.max(hi - lo))
        if not span > 0:
            span = 1.0
        centre = (lo + hi) / 2.0
        half = np.maximum((hi - lo) / 2.0, span * 0.1) + span * 0.25
        self.plot.setRange(xRange=(centre[0] - half[0], centre[0] + half[0]),
                           yRange=(centre[1] - half[1], centre[1] + half[1]), padding=0)
