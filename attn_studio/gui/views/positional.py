"""The sinusoidal positional encoding of the current sentence: the matrix, the formula, and whether it is on.

Rows are positions (labelled with their tokens), columns are dimensions
(``sin i`` / ``cos i`` for frequency index ``i``). A small plot beside it
follows a few sine columns down the positions: low dimensions turn fast,
high dimensions slowly, so every position gets its own pattern. The numbers
come from :func:`attn_studio.engine.sinusoidal_positions` and nowhere else.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...engine import POSITION_BASE, position_periods, sinusoidal_positions
from ...formatting import DEFAULT_DIGITS, format_number
from ..qt.pg import cache_static, pg
from .heatmap import SCORES_CMAP, Heatmap, relabel_bar, set_bar_levels
from .heatmap_canvas import HeatmapCanvas
from .. import presentation
from ..widgets import view_layout

LEVELS = (-1.0, 1.0)
# Okabe-Ito: colour-blind-safe curve colours for the frequencies followed.
CURVE_COLOURS = ("#d55e00", "#0072b2", "#009e73", "#cc79a7")
MAX_CURVES = len(CURVE_COLOURS)
MAX_COLUMN_LABELS = 16
ROW_TITLE, SHORT_ROW_TITLE, COLUMN_TITLE = "position: token", "position", "dimension"
ON_COLOUR = "#007a4d"
OFF_COLOUR = "#8a5a00"


def column_labels(dim: int) -> list[str]:
    """``["sin 0", "cos 0", "sin 1", "cos 1", ...]``: column ``2i`` is a sine of frequency ``i``, ``2i+1`` its cosine."""
    return [f"{'sin' if j % 2 == 0 else 'cos'} {j // 2}" for j in range(dim)]


def followed_columns(dim: int) -> list[int]:
    """The sine columns the line plot follows: up to four frequencies, from fastest to slowest."""
    n_freq = (dim + 1) // 2
    freqs = np.unique(np.round(np.linspace(0, n_freq - 1, min(MAX_CURVES, n_freq))).astype(int))
    return [int(2 * i) for i in freqs]


class PositionAxis(pg.AxisItem):
    """The curves' axis of positions: each position is a token's, so its numbers are drawn as large as
    the token labels (``presentation.restyle`` gives an axis that can ``relabel()`` the token font)."""

    def relabel(self) -> None:
        """Nothing to do: the ticks are set by the view (one per position)."""


class PositionalView(QtWidgets.QWidget):
    """The positional-encoding matrix (positions × dimensions) of the current sentence length and d_model.

    Call :meth:`render` after every studio change. Public pieces:
    ``heatmap`` (a :class:`Heatmap`; ``heatmap.image.image`` is the matrix),
    ``caption`` (objectName "positionalCaption": formula and on/off status),
    ``status`` (objectName "positionalStatus"), ``curves`` (the line plot's
    curves, one per followed sine column), ``matrix`` (the numbers shown) and
    ``row_labels`` / ``col_labels``.
    """

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.setObjectName("positionalView")
        self.studio = studio
        self.matrix = np.zeros((0, 1))
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.periods = np.zeros(0)
        self.digits = DEFAULT_DIGITS  # decimals of the cell formulas (the precision setting)
        outer = view_layout(self, spacing=4)

        self.status = QtWidgets.QLabel()
        self.status.setObjectName("positionalStatus")
        self.status.setTextFormat(QtCore.Qt.RichText)
        self.status.setWordWrap(True)
        font = self.status.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        self.status.setFont(font)
        outer.addWidget(self.status)

        row = QtWidgets.QHBoxLayout()
        row.setSpacing(4)
        outer.addLayout(row, 1)
        self.heatmap = Heatmap("positional encoding PE(pos, dim)", SCORES_CMAP)
        self.heatmap.set_axis_titles(ROW_TITLE, COLUMN_TITLE)
        for axis in (self.heatmap.left_axis, self.heatmap.bottom_axis):
            axis.enableAutoSIPrefix(False)  # no "(x0.001)" on the titles of an empty sentence
        self.canvas = HeatmapCanvas(self.heatmap)
        self.canvas.tooltip_provider = self.cell_formula
        if self.canvas.bar is not None:
            set_bar_levels(self.canvas.bar, LEVELS, self.digits)
        row.addWidget(self.canvas, 3)

        self.lines = pg.PlotWidget(axisItems={"bottom": PositionAxis("bottom")})
        self.lines.getPlotItem().getAxis("bottom").setStyle(tickFont=presentation.token_font())
        self.lines.setObjectName("positionalCurves")
        plot = self.lines.getPlotItem()
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        plot.showGrid(x=True, y=True, alpha=0.2)
        plot.setLabel("bottom", "position")
        plot.setLabel("left", "PE")
        plot.setTitle("sine columns vs position")
        plot.setYRange(-1.1, 1.1, padding=0)
        cache_static(plot.getAxis("left"))
        self.curves: list[pg.PlotDataItem] = []
        for colour in CURVE_COLOURS:
            curve = plot.plot([], [], pen=pg.mkPen(colour, width=2.5), symbol="o", symbolSize=8,
                              symbolBrush=colour, symbolPen=None)
            self.curves.append(curve)
        self._followed: list[int] = []
        # The legend is a label under the plot: inside it would hide the curves.
        self.legend = QtWidgets.QLabel()
        self.legend.setObjectName("positionalLegend")
        self.legend.setTextFormat(QtCore.Qt.RichText)
        self.legend.setWordWrap(True)
        side = QtWidgets.QVBoxLayout()
        side.setSpacing(2)
        side.addWidget(self.lines, 1)
        side.addWidget(self.legend)
        row.addLayout(side, 2)

        self.caption = QtWidgets.QLabel()
        self.caption.setObjectName("positionalCaption")
        self.caption.setTextFormat(QtCore.Qt.RichText)
        self.caption.setWordWrap(True)
        font = self.caption.font()
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.caption.setFont(font)
        outer.addWidget(self.caption)
        self.render()

    def _rows(self) -> tuple[int, list[str]]:
        """How many positions to show and their labels ("0: Your", ...)."""
        state = self.studio.state
        keys, queries = state.key_tokens, state.query_tokens
        if not state.cross:
            return len(keys), [f"{i}: {t}" for i, t in enumerate(keys)]
        n = max(len(keys), len(queries))
        labels = []
        for i in range(n):
            parts = [t[i] for t in (keys, queries) if i < len(t)]
            labels.append(f"{i}: " + " / ".join(parts))
        return n, labels

    def _fit_row_title(self) -> None:
        # Where the rows are thinned (11 positions at 1280 × 720), the rows' title is shortened so that the
        # "1 in n" note beside it is whole (it was cut to "1 in"); the labels say "position: token".
        axis = self.heatmap.left_axis
        thinned = axis.linkedView() is not None and axis.visible_step() > 1
        self.heatmap.set_axis_titles(SHORT_ROW_TITLE if thinned else ROW_TITLE, COLUMN_TITLE)

    def resizeEvent(self, event):
        super().resizeEvent(event)
        QtCore.QTimer.singleShot(0, self, self._fit_row_title)  # once the heatmap has its new size

    def set_digits(self, digits: int):
        """Write the cell formulas with ``digits`` decimals (the precision setting)."""
        self.digits = int(digits)
        self.heatmap.set_digits(self.digits)
        relabel_bar(self.canvas.bar, self.digits)

    def cell_formula(self, heatmap, pos: int, column: int) -> str:
        """The encoding of one cell with its numbers: PE(pos, 2i) = sin(pos / 10000^(2i/d))."""
        d = self.matrix.shape[1]
        i = column // 2
        fn = "sin" if column % 2 == 0 else "cos"
        index = f"2·{i}" if fn == "sin" else f"2·{i}+1"
        value = format_number(self.matrix[pos, column], self.digits)
        return (f"position {pos}, dimension {column + 1} ({fn} {i})\n"
                f"PE({pos}, {index}) = {fn}({pos} / {_base_text()}^({2 * i}/{d})) = {value}")

    def render(self):
        """Redraw from the studio's current state."""
        state = self.studio.state
        d = state.d_model
        n, row_labels = self._rows()
        pe = sinusoidal_positions(n, d, base=POSITION_BASE)
        self.matrix = pe
        self.periods = position_periods(d, POSITION_BASE)
        self.row_labels, self.col_labels = row_labels, column_labels(d)
        selected = state.query_index if (n and not state.cross) else None
        self.heatmap.set_data(pe, masked=np.zeros(pe.shape, dtype=bool), row_labels=row_labels,
                              col_labels=self._sparse(self.col_labels), levels=LEVELS, selected_row=selected)
        self.heatmap.set_title(f"PE: {n} position{'s' if n != 1 else ''} × {d} dims")
        QtCore.QTimer.singleShot(0, self, self._fit_row_title)

        followed = followed_columns(d)
        positions = np.arange(n, dtype=np.float64)
        for k, curve in enumerate(self.curves):
            if k < len(followed):
                curve.setData(positions, pe[:, followed[k]])
                curve.show()
            else:
                curve.setData([], [])
                curve.hide()
        if followed != self._followed:
            self._followed = followed
            entries = []
            for k, col in enumerate(followed):
                i = col // 2
                entries.append(f"<span style='color:{CURVE_COLOURS[k]}; font-weight:bold'>━━&nbsp;sin&nbsp;{i}</span>"
                               f"&nbsp;(period&nbsp;{self._period(self.periods[i])})")
            self.legend.setText("&nbsp;&nbsp; ".join(entries))
        plot = self.lines.getPlotItem()
        plot.setXRange(-0.3, max(n - 1, 1) + 0.3, padding=0)
        # Positions are whole numbers: tick each one while they fit.
        step = max(1, int(np.ceil(max(n, 1) / 12)))
        plot.getAxis("bottom").setTicks([[(float(p), str(p)) for p in range(0, max(n, 2), step)]])

        if state.positional:
            status = (f"<b style='color:{ON_COLOUR}'>Added to the token vectors</b> (positional encoding is on): "
                      "x = embedding + PE, so the same word at two positions gets two different vectors.")
        else:
            status = (f"<b style='color:{OFF_COLOUR}'>Not added</b>: switch on “positional encoding” to add it. "
                      "Without it, attention alone cannot tell word order (only a causal mask can).")
        self.status.setText(status)
        frac = "<sup>2i/d</sup>"
        base = _base_text()
        self.caption.setText(
            f"PE(pos, 2i) = sin(pos / {base}{frac}), PE(pos, 2i+1) = cos(pos / {base}{frac}), d = {d}: "
            "column “sin i” / “cos i” is frequency i; low i turn fast, high i slowly. Values lie in [−1, 1]."
            + (" In cross-attention each sentence gets the same rows, from position 0." if state.cross else ""))

    @staticmethod
    def _sparse(labels: list[str]) -> list[str]:
        """At most ~16 column labels (every k-th sine), so that slanted labels never overlap."""
        n = len(labels)
        if n <= MAX_COLUMN_LABELS:
            return labels
        step = int(np.ceil(n / MAX_COLUMN_LABELS))
        step += step % 2  # keep to the sine columns
        return [label if j % step == 0 else "" for j, label in enumerate(labels)]

    @staticmethod
    def _period(period: float) -> str:
        """A period in positions (from :func:`~attn_studio.engine.position_periods`), to three figures."""
        return format_number(period, 2 if period < 10 else 1 if period < 100 else 0)


def _base_text() -> str:
    """The encoding's base as the formula writes it: 10000."""
    return format_number(POSITION_BASE, 0)
