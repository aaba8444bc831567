"""Why scale by 1/sqrt(d_k): the variance of q·k and the saturation of softmax against d_k."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...formatting import DEFAULT_DIGITS, SIZE_NOTE, format_number, format_size
from ..qt.pg import cache_static, pg
from ..widgets import OutsideLayouts

RAW = "#d55e00"      # Okabe-Ito vermillion: unscaled (colour-blind safe pair)
SCALED = "#0072b2"   # Okabe-Ito blue: scaled
RAW_PEN = pg.mkPen(RAW, width=2.5)
SCALED_PEN = pg.mkPen(SCALED, width=2.5)
THEORY_PEN = pg.mkPen("#222222", width=2, style=QtCore.Qt.DashLine)
# The same brush objects on every redraw: pyqtgraph's symbol atlas knows a marker by its
# brush object, so a new brush per edit would render (and store) the marker again each time.
RAW_BRUSH = pg.mkBrush(RAW)
# Past the last d_k (1024) on the log axis: room for half its label, or the axis leaves it out (on the stage,
# at 26 px and more, a tenth of a decade was too little and the axis ended unlabelled).
RIGHT_ROOM = 0.22
SCALED_BRUSH = pg.mkBrush(SCALED)


def _span(colour: str, text: str) -> str:
    return f"<span style='color:{colour}; font-weight:bold'>{text}</span>"


def _log2_ticks(dims) -> list[list[tuple[float, str]]]:
    """Ticks at 1, 4, 16, 64, ... on a log10 axis: the dimensions people use."""
    top = int(np.log2(max(dims)))
    return [[(np.log10(2.0**e), f"{2 ** e}") for e in range(0, top + 1, 2)]]


def variance_text(raw: float, scaled: float, d_k: int, digits: int) -> str:
    """The measured variances at the precision setting; both as powers of ten, said so, when one is too
    small for ``digits`` decimals (it would read 0.00 on a log axis where its size is the point)."""
    if min(abs(raw), abs(scaled)) < 0.5 * 10.0 ** -digits:
        return (f"{format_size(raw, digits)} unscaled, {format_size(scaled, digits)} after ÷√{d_k} "
                f"({SIZE_NOTE})")
    return f"{format_number(raw, digits)} unscaled, {format_number(scaled, digits)} after ÷√{d_k}"


class VariancePlot(QtWidgets.QWidget):
    """var(q·k) against d_k (log axes) beside the softmax saturation curve, with this model marked."""

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.digits = DEFAULT_DIGITS  # decimals of the caption's numbers (the precision setting)
        self.setObjectName("variancePlot")
        self.studio = studio
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.canvas = pg.GraphicsLayoutWidget()
        layout.addWidget(self.canvas)
        self.caption = QtWidgets.QLabel()
        self.caption.setObjectName("varianceCaption")
        self.caption.setWordWrap(True)
        # Two lines, outside the layouts: the measured numbers change on every edit, and a label in
        # a layout lays out the whole window again when its text changes, even at a fixed height.
        self.caption.setFixedHeight(self.caption.fontMetrics().lineSpacing() * 2 + 6)
        layout.addWidget(OutsideLayouts(self.caption))

        curve = studio.variance_curve()
        dims = curve.dims.astype(float)
        self.variance = self.canvas.addPlot(row=0, col=0, title=(
            f"var(q·k): {_span(RAW, 'unscaled')} and {_span(SCALED, 'scaled ÷√d_k')}; "
            "dashed: theory"))
        self.variance.setLogMode(x=True, y=True)
        self.variance.setLabel("bottom", "d_k")
        self.variance.setLabel("left", "var(q·k)")
        self.variance.showGrid(x=True, y=True, alpha=0.25)
        self.variance.setMenuEnabled(False)
        self.variance.setMouseEnabled(x=False, y=False)
        self.variance.hideButtons()
        self.variance.getAxis("bottom").setTicks(_log2_ticks(dims))
        # A log axis's ticks are powers of ten, written as such (0.01, 0.1, 1, 10), not at the precision setting.
        self.variance.getAxis("left").setTicks([[(e, f"{10.0 ** e:g}") for e in range(-2, 4)]])
        # Never "(x1e+09)" on a log axis: its ticks are fixed powers of ten and a value past them is
        # drawn at the edge with its number (below), so the scale never moves.
        self.variance.getAxis("left").enableAutoSIPrefix(False)
        self.theory_raw = self.variance.plot(dims, curve.theory_raw, pen=THEORY_PEN, name="theory: d_k")
        self.theory_scaled = self.variance.plot(dims, curve.theory_scaled, pen=THEORY_PEN, name="theory: 1")
        self.raw_curve = self.variance.plot(dims, curve.raw, pen=RAW_PEN, name="unscaled")
        self.scaled_curve = self.variance.plot(dims, curve.scaled, pen=SCALED_PEN, name="scaled ÷√d_k")
        # Fixed ranges: auto-ranging on every moved marker would redraw every curve.
        self._y_range = [np.log10(0.005), np.log10(3000.0)]
        self.variance.disableAutoRange()
        self.variance.setRange(xRange=(-0.06, np.log10(dims.max()) + RIGHT_ROOM), yRange=self._y_range, padding=0)
        # Theory on top: where the measured curve follows it, the dashes must still show.
        for line in (self.theory_raw, self.theory_scaled):
            line.setZValue(5)
        self.model_points = pg.ScatterPlotItem(size=13, pen=pg.mkPen("k", width=1.5))
        self.model_points.setZValue(10)
        self.variance.addItem(self.model_points)
        # Right of the upper marker, above both curves' region at small d_k.
        self.model_label = pg.TextItem(anchor=(-0.12, 1.1), color="k")
        self.variance.addItem(self.model_label)
        # A measured variance off the fixed scale (a naive softmax fed X = 1000): its marker sits at the
        # edge as an arrow, and its number is written beside it ("2.7e10 ↑"), in its curve's colour.
        self.off_scale = {key: pg.TextItem(anchor=(-0.15, 0.5), color=colour) for key, colour in (("raw", RAW), ("scaled", SCALED))}
        for label in self.off_scale.values():
            label.setZValue(11)
            self.variance.addItem(label)

        sat = studio.saturation_curve()
        self.saturation = self.canvas.addPlot(row=0, col=1, title=(
            "softmax of 16 keys: largest weight (solid), gradient (dashed)"))
        self.saturation.setLogMode(x=True, y=False)
        self.saturation.setLabel("bottom", "d_k")
        self.saturation.setLabel("left", "weight / gradient")
        self.saturation.setYRange(0, 1.02, padding=0)
        self.saturation.showGrid(x=True, y=True, alpha=0.25)
        self.saturation.setMenuEnabled(False)
        self.saturation.setMouseEnabled(x=False, y=False)
        self.saturation.hideButtons()
        self.saturation.getAxis("bottom").setTicks(_log2_ticks(dims))
        self.max_raw = self.saturation.plot(dims, sat.max_weight_raw, pen=RAW_PEN, name="max weight, unscaled")
        self.max_scaled = self.saturation.plot(dims, sat.max_weight_scaled, pen=SCALED_PEN, name="max weight, scaled")
        self.grad_raw = self.saturation.plot(dims, sat.grad_norm_raw, pen=pg.mkPen("#d55e00", width=1.5, style=QtCore.Qt.DashLine), name="softmax gradient, unscaled")
        self.grad_scaled = self.saturation.plot(dims, sat.grad_norm_scaled, pen=pg.mkPen("#0072b2", width=1.5, style=QtCore.Qt.DashLine), name="softmax gradient, scaled")
        self.dk_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("k", width=1.5, style=QtCore.Qt.DotLine),
                                       label="this model", labelOpts={"position": 0.88, "color": "k"})
        self.saturation.addItem(self.dk_line)
        self.saturation.disableAutoRange()  # the moving d_k line must not re-range the curves
        self.saturation.setRange(xRange=(-0.06, np.log10(dims.max()) + RIGHT_ROOM), yRange=(0, 1.04), padding=0)

        for plot in (self.variance, self.saturation):
            cache_static(*(plot.getAxis(n) for n in ("left", "bottom", "top", "right")), plot.titleLabel)
        cache_static(self.theory_raw, self.theory_scaled, self.raw_curve, self.scaled_curve,
                     self.max_raw, self.max_scaled, self.grad_raw, self.grad_scaled)

    def changeEvent(self, event):
        # Text zoom changes the font: give the two-line caption room for it.
        if event.type() == QtCore.QEvent.FontChange:
            self.caption.setFixedHeight(self.caption.fontMetrics().lineSpacing() * 2 + 6)
        super().changeEvent(event)

    def set_digits(self, digits: int):
        """Write the caption's numbers with ``digits`` decimals (the precision setting)."""
        self.digits = int(digits)
        self.render()

    def render(self):
        """Mark the current model (its d_k and measured score variance) on both plots."""
        state = self.studio.state
        d_k = state.d_k
        raw, scaled = self.studio.measured_score_variance()
        xs, ys, brushes, symbols = [], [], [], []
        low, high = self._y_range
        # Two arrows at one edge: the second a line of text inside the first, so their numbers never overlap.
        try:
            per_pixel = float(self.variance.vb.viewPixelSize()[1])
        except Exception:  # not laid out yet (no size): a tenth of the scale
            per_pixel = 0.0
        # A text item's box (in pixels) is its line plus its margins.
        line = max(self.off_scale["raw"].boundingRect().height(), 1.5 * QtGui.QFontMetricsF(self.font()).lineSpacing())
        edge = line * per_pixel if per_pixel > 0 else 0.1 * (high - low)
        for i, (key, value, brush) in enumerate((("raw", raw, RAW_BRUSH), ("scaled", scaled, SCALED_BRUSH))):
            label = self.off_scale[key]
            if not (np.isfinite(value) and value > 0):
                label.setText("")
                continue
            y, symbol, arrow = np.log10(value), "o", ""
            # Half a line inside the edge, so the number beside the arrow is whole.
            if y > high:
                y, symbol, arrow = high - (0.6 + i) * edge, "t1", "↑"   # "t1": a triangle pointing up
            elif y < low:
                y, symbol, arrow = low + (0.6 + i) * edge, "t", "↓"
            xs.append(np.log10(d_k))
            ys.append(y)
            brushes.append(brush)
            symbols.append(symbol)
            text = f"{format_size(value, 1)} {arrow}" if arrow else ""
            if label.toPlainText() != text:
                label.setText(text)
            label.setPos(np.log10(d_k), y)
        self.model_points.setData(xs, ys, brush=brushes, symbol=symbols)
        if ys:
            text = f"▲ this model, d_k = {d_k}"
            if self.model_label.toPlainText() != text:  # re-typeset only when d_k changed
                self.model_label.setText(text)
            # At the bottom of the plot, under the markers: the curves never go there.
            self.model_label.setAnchor((0.1, 1.0))
            self.model_label.setPos(np.log10(d_k), self._y_range[0] + 0.05)
        elif self.model_label.toPlainText():
            self.model_label.setText("")
        self.dk_line.setValue(np.log10(d_k))
        # What the engine did: additive scores are never scaled, whatever the switch says.
        if self.studio.result.scale_factor != 1.0:
            scaled_word = "scaled"
        elif state.score == "additive":
            scaled_word = "unscaled (additive scores are not divided by √d_k)"
        else:
            scaled_word = "unscaled (scaling is off)"
        # Which variance: the population variance (ddof 0) of every score, as np.var gives it; a
        # student computing the sample variance (ddof 1) of the journey's 36 scores gets 0.1111, not 0.1081.
        count = int(self.studio.result.scores.size)
        measured = (f"this model: var(q·k) = {variance_text(raw, scaled, d_k, self.digits)}, the population "
                    f"variance (ddof 0) of its {count} scores" if np.isfinite(raw) else "this model: too few tokens to measure")
        self.caption.setText(
            f"With random unit-variance q and k, var(q·k) grows like d_k, so softmax saturates and its gradient "
            f"vanishes; dividing by √d_k keeps the variance near 1. {measured.capitalize()}; the heatmaps are {scaled_word}."
        )
