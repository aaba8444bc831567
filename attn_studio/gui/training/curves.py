"""The training lab's curves: a plot with a faint curve (every step) and a bold one (the mean of the
last SMOOTH steps) per series, and how a long run is thinned to what a plot can show.

No panel logic: `panel` and the three panels draw with these.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui

from ..files.sheet import breathe
from ..qt.pg import cache_static, pg

__all__ = ["CurvePlot", "COLOURS", "SMOOTH", "MAX_FAINT_POINTS", "MAX_BOLD_POINTS", "smoothed", "peaks",
           "thinned", "nice_extent", "outward", "recent"]

SMOOTH = 20            # curves: each step faint, the mean of the last SMOOTH steps bold
# Points drawn per curve, however long the run: the faint curve keeps each bin's lowest and highest
# step (its envelope, a point or two per pixel of a wide plot); the bold mean is smooth, and a
# wide antialiased pen costs several microseconds a point, so a point every two or three pixels.
MAX_FAINT_POINTS = 1000
MAX_BOLD_POINTS = 240
# One colour per arm, in the arms' order (colour-blind safe: Okabe & Ito), as the PNG figures.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7")


def smoothed(values: np.ndarray, window: int = SMOOTH) -> np.ndarray:
    """The mean of the last ``window`` values at each step (fewer at the start)."""
    if values.size == 0:
        return values
    sums = np.cumsum(np.concatenate([[0.0], values]))
    idx = np.arange(1, values.size + 1)
    lo = np.maximum(idx - window, 0)
    return (sums[idx] - sums[lo]) / (idx - lo)


def _bin_width(n: int, max_points: int, per_bin: int) -> int:
    """The smallest power of two w with ``per_bin`` · n / w <= ``max_points``. Powers of two keep
    the bins where they were as the run grows, so a drawn curve does not shimmer between redraws."""
    width = 1
    while per_bin * n > max_points * width:
        width *= 2
    return width


def peaks(y: np.ndarray, max_points: int = MAX_FAINT_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` to draw for values ``y`` (one per step, x = 0, 1, ...) with at most about
    ``max_points`` points: every step when there are few; else, per bin of whole steps, the
    lowest and the highest in the order they came, and the last unfinished bin whole, so the
    envelope of the noise is kept and the curve ends at the last recorded value. NaN (a value a
    log axis cannot show) is kept where a bin holds nothing else."""
    y = np.asarray(y, dtype=float)
    n = y.size
    width = _bin_width(n, max_points, 2)
    if width == 1:
        return np.arange(n, dtype=float), y
    full = n - n % width
    blocks = y[:full].reshape(-1, width)
    starts = np.arange(0, full, width)[:, None]
    low = np.argmin(np.where(np.isnan(blocks), np.inf, blocks), axis=1)[:, None]
    high = np.argmax(np.where(np.isnan(blocks), -np.inf, blocks), axis=1)[:, None]
    index = np.concatenate([(starts + np.sort(np.hstack([low, high]), axis=1)).ravel(), np.arange(full, n)])
    return index.astype(float), y[index]


def thinned(y: np.ndarray, max_points: int = MAX_BOLD_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` to draw for a smooth curve ``y`` (one value per step) with at most about
    ``max_points`` points: every step when there are few; else the mean of each bin of whole
    steps at its middle, then the last unfinished bin whole, so the curve ends at the last value.
    (A bin's mean, not one step in it: sampling would alias the remaining noise into a zigzag.)"""
    y = np.asarray(y, dtype=float)
    n = y.size
    width = _bin_width(n, max_points, 1)
    if width == 1:
        return np.arange(n, dtype=float), y
    full = n - n % width
    middles = np.arange(0, full, width) + (width - 1) / 2.0
    return (np.concatenate([middles, np.arange(full, n, dtype=float)]),
            np.concatenate([y[:full].reshape(-1, width).mean(axis=1), y[full:]]))


_X_STEPS = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def nice_extent(n: float, least: float = 10.0) -> float:
    """The smallest of 1, 1.5, 2, 3, 4, 5, 6, 8 × 10^k that is at least ``n`` (and ``least``)."""
    n = max(float(n), least)
    power = 10.0 ** math.floor(math.log10(n))
    return next(f * power for f in _X_STEPS if f * power >= n - 1e-9)


def outward(low: float, high: float) -> tuple[float, float]:
    """[low, high] widened to round numbers (a tenth of its span's power of ten)."""
    span = high - low if high > low else max(abs(high), 1.0)
    step = 10.0 ** math.floor(math.log10(span)) / 2.0
    return math.floor(low / step) * step, math.ceil(high / step) * step


def recent(values, window: int = SMOOTH) -> float:
    """The mean of the last ``window`` values (nan when there are none)."""
    values = values[-window:]
    return float(np.mean(values)) if len(values) else math.nan


class CurvePlot:
    """A pyqtgraph PlotItem with one faint (every step) and one bold (mean of the last 20) curve
    per series, reference lines and a legend."""

    def __init__(self, title: str, ylabel: str, log_y: bool = False, y_range: tuple | None = None,
                 legend_offset: tuple | None = (-8, 8), legend_columns: int = 1):
        """``legend_offset`` None: no legend in the plot (a page figure has its key above the plots)."""
        self.plot = pg.PlotItem(enableMenu=False)
        self.plot.setTitle(title, size="10pt")
        self.plot.setLabel("bottom", "step")
        self.plot.setLabel("left", ylabel)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        for name in ("left", "bottom"):  # "norm (x0.001)" on a log axis reads badly: plain numbers
            self.plot.getAxis(name).enableAutoSIPrefix(False)
        self.legend = (self.plot.addLegend(offset=legend_offset, labelTextSize="8pt", colCount=legend_columns)
                       if legend_offset is not None else None)
        self.log_y = log_y
        if log_y:
            self.plot.setLogMode(y=True)
            # The log axis's labels follow the range shown, however it was set (by the data, or fixed
            # over a whole run by an animation): powers of ten, never piled (see log_ticks).
            axis = self.plot.getAxis("left")
            self.plot.vb.sigYRangeChanged.connect(lambda _, span: axis.setTicks(log_ticks(*span)))
        # The axes change only when the data leave their round range, not at every step: an axis is
        # then painted from its cache, and painting the axes is most of what a redraw costs.
        self.plot.disableAutoRange()
        self.fixed_y = y_range is not None
        if y_range is not None:
            self.plot.setYRange(*y_range, padding=0.02)
        cache_static(self.plot.getAxis("left"), self.plot.getAxis("bottom"))
        breathe()  # a figure built for the window's export: a turn of its event loop between its plots
        self._x_max = 0.0
        self._n = 0
        self._y_span: tuple[float, float] | None = None
        self._curves: dict[str, tuple] = {}
        self.lines: dict[str, pg.InfiniteLine] = {}
        self._placing_hooked = False

    def add_series(self, key: str, label: str, colour: str, style=QtCore.Qt.SolidLine):
        breathe()
        faint = QtGui.QColor(colour)
        faint.setAlpha(55)
        raw = self.plot.plot(pen=pg.mkPen(faint, width=1))
        bold = self.plot.plot(pen=pg.mkPen(colour, width=2.2, style=style), name=label if self.legend is not None else None)
        self._curves[key] = (raw, bold)

    def add_line(self, key: str, value: float, label: str, angle: int = 0, colour: str = "#555555"):
        """A dashed reference line (``angle`` 0: horizontal at y = ``value``; 90: vertical at a step) with
        ``label`` beside it, placed where no curve, legend or other label is (:meth:`place_labels`)."""
        line = pg.InfiniteLine(pos=value, angle=angle, pen=pg.mkPen(colour, width=1.4, style=QtCore.Qt.DashLine),
                               label=label, labelOpts={"position": 0.06 if angle == 0 else 0.96,
                                                       "color": colour,
                                                       # below a horizontal line (it is often the plot's top);
                                                       # from the top of a vertical one down, so that at a
                                                       # stage's text size it stays inside the plot
                                                       "anchors": [(0, 0), (0, 0)]})
        self.plot.addItem(line)
        self.lines[key] = line
        if not self._placing_hooked:
            # The labels' room changes with the plot's size and range too (a page laid out offscreen).
            self.plot.vb.sigResized.connect(self.place_labels)
            self.plot.vb.sigRangeChanged.connect(self.place_labels)
            self._placing_hooked = True
        return line

    def place_labels(self, *_) -> None:
        """Put each shown reference line's label where it covers no curve, no legend and no other label:
        the first free place of a few along the line, on either side of it (the least covered when none
        is free). A label that only moved along with its line keeps its place if that is still free."""
        vb = self.plot.vb
        if vb.pixelVectors()[0] is None:
            # Not in a view yet (a page figure being built): placed once it is (sigResized). Asked of
            # viewPixelSize, Qt's bindings refused the missing vector with an error whose message scanned
            # every module loaded: 60 ms, in a turn of the window's export.
            return
        try:
            dx, dy = (float(v) for v in vb.viewPixelSize())
        except Exception:  # not laid out yet: placed when it is (sigResized)
            return
        if not (dx > 0 and dy > 0):
            return
        (x0, x1), (y0, y1) = vb.viewRange()
        # (x, y, weight): a bold mean under a label hides more than the faint steps around it.
        curves = [(*c.getData(), weight) for pair in self._curves.values() for c, weight in zip(pair, (1, 3))
                  if c.isVisible()]
        curves = [(np.asarray(x, float), np.asarray(y, float), weight) for x, y, weight in curves
                  if x is not None and len(x) > 1]
        taken = []
        if self.legend is not None and self.legend.isVisible() and self.legend.items:
            box = vb.mapSceneToView(self.legend.sceneBoundingRect()).boundingRect()
            taken.append((box.left(), box.right(), box.top(), box.bottom()))
        for line in self.lines.values():
            if not line.isVisible() or not line.label.toPlainText():
                continue
            label = line.label
            rect = label.boundingRect()
            w, h = rect.width() * dx, rect.height() * dy
            best = None
            for where, anchor in _candidates(line.angle):
                box = _label_box(line, where, anchor, w, h, (x0, x1), (y0, y1))
                left, right, low, high = box
                outside = left < x0 or right > x1 or low < y0 or high > y1
                cost = 1000 * outside + 100 * sum(_overlap(box, t) for t in taken) + _curve_hits(box, curves, dx)
                if best is None or cost < best[0]:
                    best = (cost, where, anchor, box)
                if cost == 0:
                    break
            _, where, anchor, box = best
            if label.orthoPos != where or label.anchors[0] != anchor:
                label.setPosition(where)
                label.anchors = [anchor, anchor]
                label.updatePosition()
            taken.append(box)

    def set(self, key: str, values) -> None:
        """Show ``values`` (one per step) as series ``key``."""
        raw, bold = self._curves[key]
        y = np.asarray(values, dtype=float)
        if self.log_y:
            y = np.where(y > 0, y, np.nan)
        if y.size == 0:
            raw.setData([], [])
            bold.setData([], [])
            # An empty plot still shows steps: 0 … 10 (its default 0 … 1 read "step 0.2, 0.4").
            if self._x_max != nice_extent(0):
                self._x_max = nice_extent(0)
                self.plot.setXRange(0.0, self._x_max, padding=0.02)
                if self.log_y and self._y_span is None:  # three decades, labelled as a log axis is
                    self.plot.setYRange(-3.0, 0.0, padding=0.02)
            return
        # Long runs are drawn thinned (`peaks`, `thinned`): what a redraw costs stays bounded.
        raw.setData(*peaks(y), connect="finite")
        bold.setData(*thinned(smoothed(np.nan_to_num(y, nan=np.nanmean(y) if np.isfinite(y).any() else 0.0))))
        self._fit(y)
        if self.lines:
            self.place_labels()

    def restart(self) -> None:
        """Forget the ranges (a new run): the next data set them afresh."""
        self._x_max = 0.0
        self._y_span = None

    def _fit(self, y: np.ndarray) -> None:
        if y.size < self._n:  # fewer steps than drawn before: a new run
            self.restart()
        self._n = y.size
        x_max = nice_extent(y.size - 1)
        if x_max != self._x_max:
            self._x_max = x_max
            self.plot.setXRange(0.0, x_max, padding=0.02)
        if self.fixed_y:
            return
        finite = y[np.isfinite(y)]
        if not finite.size:
            return
        values = np.log10(finite) if self.log_y else finite
        low, high = float(values.min()), float(values.max())
        if self._y_span is not None and self._y_span[0] <= low and high <= self._y_span[1]:
            return
        if self._y_span is not None:
            low, high = min(low, self._y_span[0]), max(high, self._y_span[1])
        self._y_span = outward(low, high) if not self.log_y else (math.floor(low * 2) / 2, math.ceil(high * 2) / 2)
        if self._y_span[1] <= self._y_span[0]:
            self._y_span = (self._y_span[0], self._y_span[0] + 0.5)
        self.plot.setYRange(*self._y_span, padding=0.02)

    def data(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of series ``key``'s faint curve as drawn (every step, or `peaks` of a long run)."""
        x, y = self._curves[key][0].getData()
        return (np.asarray(x if x is not None else []), np.asarray(y if y is not None else []))


# Where a reference line's label may go: (fraction along the line, anchor of its text at that point).
# Horizontal: under the line (anchor (0, 0)) or over it ((0, 1)), from the left. Vertical: right of
# the line ((0, 0)) or left of it ((1, 0)), from the top down.
_ALONG_H = (0.04, 0.2, 0.36, 0.52, 0.68, 0.8)
_ALONG_V = (0.96, 0.7, 0.45, 0.2)


def _candidates(angle: float):
    if angle % 180 == 0:
        return [(p, a) for p in _ALONG_H for a in ((0, 0), (0, 1))]
    return [(p, a) for p in _ALONG_V for a in ((0, 0), (1, 0))]


def _label_box(line, where, anchor, w, h, xr, yr) -> tuple[float, float, float, float]:
    """(left, right, low, high) in view coordinates of ``line``'s label at ``where`` with ``anchor``
    (its text ``w`` × ``h`` in view units; y grows upwards in the view, downwards in the text)."""
    if line.angle % 180 == 0:
        x, y = xr[0] + where * (xr[1] - xr[0]), float(line.value())
    else:
        x, y = float(line.value()), yr[0] + where * (yr[1] - yr[0])
    left = x - anchor[0] * w
    top = y + anchor[1] * h
    return left, left + w, top - h, top


def _overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def _curve_hits(box, curves, dx) -> int:
    """How much curve passes through ``box``: each curve's weight if it does (sampled every two pixels)."""
    left, right, low, high = box
    xs = np.arange(left, right + dx, 2 * dx)
    hits = 0
    for x, y, weight in curves:
        inside = (xs >= x[0]) & (xs <= x[-1])
        if not inside.any():
            continue
        ys = np.interp(xs[inside], x, y)
        hits += weight * int(np.any((ys >= low) & (ys <= high)))
    return hits


def log_ticks(low: float, high: float) -> list:
    """Ticks of a log axis spanning 10^low … 10^high: every power of ten labelled; 2 and 5 times one
    labelled too when the span is under two decades (else a plot of one decade had one label);
    the other multiples unlabelled (pyqtgraph labelled 0.0006, 0.0007, 0.0008 … piled on each other)."""
    major, minor = [], []
    few = high - low < 2
    for e in range(math.floor(low) - 1, math.ceil(high) + 1):
        if low - 1e-9 <= e <= high + 1e-9:
            major.append((float(e), f"{10.0 ** e:g}"))
        for d in range(2, 10):
            v = e + math.log10(d)
            if low - 1e-9 <= v <= high + 1e-9:
                minor.append((v, f"{d * 10.0 ** e:g}" if few and d in (2, 5) else ""))
    return [major, minor]
