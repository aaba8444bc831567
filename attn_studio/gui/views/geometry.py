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
from dataclasses import dataclass

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...engine.projection import pca_2d, vector_pair
from ...formatting import CELL_DIGITS, format_number
from ..qt.pg import cache_static, pg
from ..widgets import no_widen, short_token, view_layout
from .arrows import PAIR_A, PAIR_B, VectorLayer

MODE_X = "x"
MODE_QK = "qk"
ASK_QK = ": show “q and k” to see its scores"  # a pointer to the Show box: on screen only


@dataclass(frozen=True)
class GeometryDrawing:
    """What the view draws, as numbers and texts: the arrows' tips (the plane's coordinates),
    labels, roles ("a", "b", "plain") and full vectors, the pair's arc, what space is shown, the
    caption and the pair's readout (rich text, without pointers to the view's controls)."""

    tips: np.ndarray
    labels: list
    roles: list
    vectors: list
    arc: tuple | None
    space: str
    caption: str
    readout: str


def _default_key(weights_row: np.ndarray, exclude: int | None) -> int | None:
    """The key a query attends to most (other than ``exclude`` when there is another)."""
    n = weights_row.shape[0]
    if n == 0:
        return None
    row = np.array(weights_row, dtype=np.float64)
    if exclude is not None and n > 1 and 0 <= exclude < n:
        row[exclude] = -np.inf
    return int(np.argmax(row))


def vector_plot() -> tuple[pg.GraphicsLayoutWidget, pg.PlotItem, VectorLayer]:
    """A canvas with one plot for arrows from the origin: equal axes (angles on screen are the
    true ones), the axes through the origin drawn, no mouse; and its :class:`VectorLayer`."""
    canvas = pg.GraphicsLayoutWidget()
    canvas.ci.layout.setContentsMargins(2, 2, 8, 2)
    plot = canvas.addPlot()
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.setMouseEnabled(x=False, y=False)
    plot.setAspectLocked(True, ratio=1.0)
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.vb.disableAutoRange()
    tick_font = QtGui.QFont()
    tick_font.setPixelSize(13)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setStyle(tickFont=tick_font)
        axis.setPen(pg.mkPen("#444444", width=1))
        axis.setTextPen(pg.mkPen("#222222"))
    zero_pen = pg.mkPen("#b0b0b0", width=1.2)
    plot.addItem(pg.InfiniteLine(0.0, angle=0, pen=zero_pen, movable=False))
    plot.addItem(pg.InfiniteLine(0.0, angle=90, pen=zero_pen, movable=False))
    arrows = VectorLayer()
    arrows.setZValue(10)
    plot.addItem(arrows)
    cache_static(plot.getAxis("left"), plot.getAxis("bottom"))
    return canvas, plot, arrows


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

        self.canvas, self.plot, self.arrows = vector_plot()
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
                arc = (index_a, index_b, f"{format_number(pair.angle, 1)}°")
        tips_arr = np.array(tips, dtype=np.float64).reshape(-1, 2)
        self.arrows.set_data(tips_arr, labels, roles, vectors, arc)
        self.readout.setText(readout)
        caption = self._caption_text(space, dim, projection, mode, state, len(tips))
        self.caption.setText(caption)
        self._fit(tips_arr, (mode, dim, projection.exact, tuple(labels)))
        # What a figure for the page draws again (`geometry_page`): the numbers, not the widgets.
        self.drawing = GeometryDrawing(tips_arr, labels, roles, vectors, arc, space, caption,
                                       readout.replace(ASK_QK, ""))

    def set_digits(self, digits: int):
        """Write the readout and hover numbers with ``digits`` decimals (the precision setting)."""
        self.digits = self.arrows.digits = int(digits)
        self.render()

    def _readout_text(self, a_name, b_name, pair, mode, head, a, b) -> str:
        state, result = self.studio.state, self.studio.result
        n = lambda x: format_number(x, self.digits)  # noqa: E731
        dot, cos, angle = pair.dot, pair.cosine, pair.angle
        a_name, b_name = html.escape(a_name), html.escape(b_name)  # tokens may be "<" or "&"
        name_a = f"<span style='color:{PAIR_A}; font-weight:bold'>{a_name}</span>"
        name_b = f"<span style='color:{PAIR_B}; font-weight:bold'>{b_name}</span>"
        if cos is None:
            first = (f"{name_a} · {name_b} = {n(dot)} ; cos and angle undefined: "
                     "a zero vector has no direction")
        else:
            first = (f"{name_a} · {name_b} = {n(dot)} ; cos = {n(cos)} ; "
                     f"angle = {format_number(angle, 1)}°")
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
            second += " — attention compares q·k, not x·x" + ASK_QK
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
            head = (f"PCA projection of {dim}-dimensional vectors: {format_number(pct, 0)}% of the variance shown; "
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
        x_range, y_range = frame(tips)
        self.plot.setRange(xRange=x_range, yRange=y_range, padding=0)


def frame(tips: np.ndarray) -> tuple[tuple[float, float], tuple[float, float]]:
    """(x range, y range) that frame the origin and every tip, with room around them for labels."""
    pts = np.vstack([np.asarray(tips, dtype=np.float64).reshape(-1, 2), np.zeros((1, 2))])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    span = float(np.max(hi - lo))
    if not span > 0:
        span = 1.0
    centre = (lo + hi) / 2.0
    half = np.maximum((hi - lo) / 2.0, span * 0.1) + span * 0.25
    return ((centre[0] - half[0], centre[0] + half[0]), (centre[1] - half[1], centre[1] + half[1]))
