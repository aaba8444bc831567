"""What every panel of the training lab shares.

A bar of controls as TensorFlow Playground has them (play / pause, one step, reset, speed,
learning rate, seed, and the panel's own settings), a figure (the curves and pictures, the one
sentence that reads them), a message line, and the exports: the figure as PNG, SVG or PDF through
the window's figure machinery (`gui.files.figures`), the history as CSV (`training.report`).

The panel draws from its runner's snapshot, at most every ``DRAW_INTERVAL_MS``, and only while it
can be seen: a panel on a hidden tab is drawn when it is shown, its run going on meanwhile.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...training.experiment import TrainingError
from ...training.settings import DEFAULT_SPEED, MAX_SEED, check_panel_settings
from ...training.report import history_table, write_csv
from .._pg import cache_static, pg
from ..files import figures
from ..widgets import caption_label
from .runner import SPEEDS, Runner

__all__ = ["LabPanel", "CurvePlot", "COLOURS", "SMOOTH", "smoothed"]

DRAW_INTERVAL_MS = 50  # at most 20 redraws a second, whatever the step rate
SMOOTH = 20            # curves: each step faint, the mean of the last SMOOTH steps bold
# One colour per arm, in the arms' order (colour-blind safe: Okabe & Ito), as the PNG figures.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7")
LEARNING_RATES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)


def smoothed(values: np.ndarray, window: int = SMOOTH) -> np.ndarray:
    """The mean of the last ``window`` values at each step (fewer at the start)."""
    if values.size == 0:
        return values
    sums = np.cumsum(np.concatenate([[0.0], values]))
    idx = np.arange(1, values.size + 1)
    lo = np.maximum(idx - window, 0)
    return (sums[idx] - sums[lo]) / (idx - lo)


_X_STEPS = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def nice_extent(n: float, least: float = 10.0) -> float:
    """The smallest of 1, 1.5, 2, 3, 4, 5, 6, 8 × 10^k that is at least ``n`` (and ``least``)."""
    n = max(float(n), least)
    power = 10.0 ** math.floor(math.log10(n))
    return next(f * power for f in _X_STEPS if f * power >= n - 1e-9)


def _outward(low: float, high: float) -> tuple[float, float]:
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
                 legend_offset: tuple = (-8, 8), legend_columns: int = 1):
        self.plot = pg.PlotItem(enableMenu=False)
        self.plot.setTitle(title, size="10pt")
        self.plot.setLabel("bottom", "step")
        self.plot.setLabel("left", ylabel)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        for name in ("left", "bottom"):  # "norm (x0.001)" on a log axis reads badly: plain numbers
            self.plot.getAxis(name).enableAutoSIPrefix(False)
        self.legend = self.plot.addLegend(offset=legend_offset, labelTextSize="8pt", colCount=legend_columns)
        self.log_y = log_y
        if log_y:
            self.plot.setLogMode(y=True)
        # The axes change only when the data leave their round range, not at every step: an axis is
        # then painted from its cache, and painting the axes is most of what a redraw costs.
        self.plot.disableAutoRange()
        self.fixed_y = y_range is not None
        if y_range is not None:
            self.plot.setYRange(*y_range, padding=0.02)
        cache_static(self.plot.getAxis("left"), self.plot.getAxis("bottom"))
        self._x_max = 0.0
        self._n = 0
        self._y_span: tuple[float, float] | None = None
        self._curves: dict[str, tuple] = {}
        self.lines: dict[str, pg.InfiniteLine] = {}

    def add_series(self, key: str, label: str, colour: str, style=QtCore.Qt.SolidLine):
        faint = QtGui.QColor(colour)
        faint.setAlpha(55)
        raw = self.plot.plot(pen=pg.mkPen(faint, width=1))
        bold = self.plot.plot(pen=pg.mkPen(colour, width=2.2, style=style), name=label)
        self._curves[key] = (raw, bold)

    def add_line(self, key: str, value: float, label: str, angle: int = 0, colour: str = "#555555"):
        line = pg.InfiniteLine(pos=value, angle=angle, pen=pg.mkPen(colour, width=1.4, style=QtCore.Qt.DashLine),
                               label=label, labelOpts={"position": 0.06 if angle == 0 else 0.9,
                                                       "color": colour,
                                                       # below a horizontal line (it is often the plot's top)
                                                       "anchors": [(0, 0), (0, 0)] if angle == 0 else [(0, 1), (0, 1)]})
        self.plot.addItem(line)
        self.lines[key] = line
        return line

    def set(self, key: str, values) -> None:
        """Show ``values`` (one per step) as series ``key``."""
        raw, bold = self._curves[key]
        y = np.asarray(values, dtype=float)
        x = np.arange(y.size, dtype=float)
        if self.log_y:
            y = np.where(y > 0, y, np.nan)
        if y.size == 0:
            raw.setData([], [])
            bold.setData([], [])
            return
        raw.setData(x, y, connect="finite")
        bold.setData(x, smoothed(np.nan_to_num(y, nan=np.nanmean(y) if np.isfinite(y).any() else 0.0)))
        self._fit(y)

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
        self._y_span = _outward(low, high) if not self.log_y else (math.floor(low * 2) / 2, math.ceil(high * 2) / 2)
        if self._y_span[1] <= self._y_span[0]:
            self._y_span = (self._y_span[0], self._y_span[0] + 0.5)
        self.plot.setYRange(*self._y_span, padding=0.02)

    def data(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of series ``key`` as drawn (every step)."""
        x, y = self._curves[key][0].getData()
        return (np.asarray(x if x is not None else []), np.asarray(y if y is not None else []))


class TimedGraphics(pg.GraphicsLayoutWidget):
    """A GraphicsLayoutWidget that remembers how long its last paint took (the redraw's pace)."""

    paint_ms = 0.0

    def paintEvent(self, event):  # noqa: N802 (Qt's name)
        start = time.perf_counter()
        super().paintEvent(event)
        self.paint_ms = (time.perf_counter() - start) * 1000.0


class LabPanel(QtWidgets.QWidget):
    """The base of the three panels: controls, a runner, a figure, exports.

    A subclass sets ``experiment_name`` and ``title``, adds its controls in ``_add_controls``
    (``self.controls_row`` is the bar), builds ``self.figure``'s content in ``_build_figure``,
    makes experiments in ``_make`` and measures its extras in ``extras`` (on the worker), and
    draws a snapshot in ``draw``.
    """

    experiment_name = ""
    title = ""
    default_lr = 1e-3

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName(f"training_{self.experiment_name}")
        self._seed = 0
        self._lr = self.default_lr
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.setSpacing(4)
        self.controls_row = QtWidgets.QHBoxLayout()
        self.controls_row.setSpacing(6)
        outer.addLayout(self.controls_row)
        self._build_controls()
        self.message_label = QtWidgets.QLabel()
        self.message_label.setObjectName("trainingMessage")
        self.message_label.setStyleSheet("color: #b00020;")
        self.message_label.setWordWrap(True)
        self.message_label.hide()
        outer.addWidget(self.message_label)
        self.figure = QtWidgets.QWidget()
        self.figure.setObjectName(f"{self.experiment_name}Figure")
        self.figure.setAutoFillBackground(True)
        pal = self.figure.palette()
        pal.setColor(self.figure.backgroundRole(), QtCore.Qt.white)
        self.figure.setPalette(pal)
        self.figure_layout = QtWidgets.QVBoxLayout(self.figure)
        self.figure_layout.setContentsMargins(2, 2, 2, 2)
        self.figure_layout.setSpacing(2)
        self.graphics = TimedGraphics()
        self.graphics.setObjectName(f"{self.experiment_name}Graphics")
        self.graphics.ci.layout.setSpacing(4)
        self.figure_layout.addWidget(self.graphics, 1)
        self.sentence = caption_label("trainingSentence")
        self.sentence.setTextFormat(QtCore.Qt.RichText)
        self._build_figure()
        self.figure_layout.addWidget(self.sentence)
        outer.addWidget(self.figure, 1)

        self.runner = Runner(self._make, self.extras, self)
        self.runner.changed.connect(self._schedule_draw)
        self._draw_timer = QtCore.QTimer(self)
        self._draw_timer.setSingleShot(True)
        self._draw_timer.timeout.connect(self._draw_now)
        self._last_draw = 0.0
        # The gap between redraws: DRAW_INTERVAL_MS, or twice what the last redraw and paint cost when that is
        # more (a loaded machine): the GUI thread then spends at most a third of its time drawing
        # and the worker keeps the interpreter the rest of the time.
        self._interval_ms = float(DRAW_INTERVAL_MS)
        self._stale = True
        self.draw_count = 0  # redraws so far (the tests check that a run is drawn, not every step)

    # -------------------------------------------------------------------- controls
    def _build_controls(self):
        row = self.controls_row
        self.play_button = QtWidgets.QPushButton("▶ Play")
        self.play_button.setObjectName("trainingPlay")
        self.play_button.setCheckable(True)
        self.play_button.setToolTip("Train continuously; press again to pause before the next step")
        self.play_button.toggled.connect(self._play_toggled)
        self.step_button = QtWidgets.QPushButton("Step")
        self.step_button.setObjectName("trainingStep")
        self.step_button.setToolTip("One optimiser step of every model")
        self.step_button.clicked.connect(self.single_step)
        self.reset_button = QtWidgets.QPushButton("Reset")
        self.reset_button.setObjectName("trainingReset")
        self.reset_button.setToolTip("Start again from the seed: the same run plays again")
        self.reset_button.clicked.connect(self.reset)
        for button in (self.play_button, self.step_button, self.reset_button):
            row.addWidget(button)
        self.speed_combo = QtWidgets.QComboBox()
        self.speed_combo.setObjectName("trainingSpeed")
        for speed in SPEEDS:
            self.speed_combo.addItem(f"{speed} steps/s" if speed else "as fast as it goes", speed)
        self.speed_combo.setCurrentIndex(SPEEDS.index(DEFAULT_SPEED))
        self.speed_combo.setToolTip("Steps per second while playing (the curves are redrawn at most 20 times a second)")
        self.speed_combo.currentIndexChanged.connect(lambda i: self.runner.set_speed(self.speed))
        self.lr_combo = QtWidgets.QComboBox()
        self.lr_combo.setObjectName("trainingLr")
        self.lr_combo.setToolTip("Adam's learning rate, from the next step on (Reset plays the run again with it)")
        self._fill_lr(self.default_lr)
        self.lr_combo.currentIndexChanged.connect(self._lr_chosen)
        self.seed_spin = QtWidgets.QSpinBox()
        self.seed_spin.setObjectName("trainingSeed")
        self.seed_spin.setRange(0, MAX_SEED)
        self.seed_spin.setToolTip("The seed of the initial weights and of every batch; a new seed starts a new run")
        self.seed_spin.valueChanged.connect(self._seed_chosen)
        for label, widget in (("Speed", self.speed_combo), ("Learning rate", self.lr_combo), ("Seed", self.seed_spin)):
            row.addWidget(QtWidgets.QLabel(label))
            row.addWidget(widget)
        self._add_controls()
        row.addStretch(1)
        self.step_label = QtWidgets.QLabel("step 0")
        self.step_label.setObjectName("trainingStepCount")
        self.step_label.setMinimumWidth(self.step_label.fontMetrics().horizontalAdvance("step 000000"))
        row.addWidget(self.step_label)
        self.export_button = QtWidgets.QToolButton()
        self.export_button.setText("Export")
        self.export_button.setObjectName("trainingExport")
        self.export_button.setPopupMode(QtWidgets.QToolButton.InstantPopup)
        menu = QtWidgets.QMenu(self.export_button)
        menu.addAction("Figure as PNG, SVG or PDF…", self.export_figure_dialog)
        menu.addAction("History as CSV…", self.export_csv_dialog)
        self.export_button.setMenu(menu)
        row.addWidget(self.export_button)

    def _add_controls(self):
        """Subclasses add their own settings to ``self.controls_row`` here."""

    def _fill_lr(self, lr: float):
        self.lr_combo.blockSignals(True)
        self.lr_combo.clear()
        values = sorted(set(LEARNING_RATES) | {lr})
        for value in values:
            self.lr_combo.addItem(f"{value:g}" + (" (default)" if value == self.default_lr else ""), value)
        self.lr_combo.setCurrentIndex(values.index(lr))
        self.lr_combo.blockSignals(False)

    @property
    def speed(self) -> float:
        return float(self.speed_combo.currentData())

    def _play_toggled(self, on: bool):
        self.play_button.setText("❚❚ Pause" if on else "▶ Play")
        if on:
            self.clear_message()
            self.runner.set_speed(self.speed)
            self.runner.play()
        else:
            self.runner.pause()

    def play(self):
        """Train continuously until :meth:`pause`."""
        self.play_button.setChecked(True)

    def pause(self):
        """Stop before the next step."""
        self.play_button.setChecked(False)

    def single_step(self):
        """Pause, then one step."""
        self.pause()
        self.runner.single_step()

    def reset(self):
        """Pause and rebuild the experiment from the current settings."""
        self.pause()
        self.clear_message()
        self.runner.reset(self._make)

    def _lr_chosen(self, index: int):
        self._lr = float(self.lr_combo.itemData(index))
        self.runner.set_lr(self._lr)

    def _seed_chosen(self, seed: int):
        self._seed = int(seed)
        self.reset()

    # -------------------------------------------------------------------- settings
    def settings(self) -> dict:
        """The run's settings as plain values (sessions keep them)."""
        return {"seed": self._seed, "lr": self._lr, "speed": self.speed}

    def apply_settings(self, values: dict) -> None:
        """Set seed, lr and speed (and a subclass's own) from ``values``, then reset; a bad value
        raises a TrainingError naming it and changes nothing."""
        checked = self.check_settings(values)
        self.pause()
        for widget in (self.seed_spin, self.speed_combo):
            widget.blockSignals(True)
        try:
            self._seed = checked.get("seed", self._seed)
            self.seed_spin.setValue(self._seed)
            if "speed" in checked:
                self.speed_combo.setCurrentIndex(SPEEDS.index(checked["speed"]))
                self.runner.set_speed(self.speed)
            if "lr" in checked:
                self._lr = checked["lr"]
                self._fill_lr(self._lr)
            self._apply_own(checked)
        finally:
            for widget in (self.seed_spin, self.speed_combo):
                widget.blockSignals(False)
        self.reset()

    def check_settings(self, values: dict) -> dict:
        """``values`` checked by the lab's one set of rules (`training.settings`); a TrainingError
        naming the bad field."""
        return check_panel_settings(self.experiment_name, values)

    def _apply_own(self, checked: dict) -> None:
        """Subclasses set their own settings (d_k...) from checked values."""

    # -------------------------------------------------------------------- the worker's side
    def _make(self):
        raise NotImplementedError

    def extras(self, exp, inputs: dict, heavy: bool) -> dict:
        """What the panel shows beyond the history, measured on the worker thread."""
        return {}

    # -------------------------------------------------------------------- drawing
    def _schedule_draw(self):
        if not self.isVisible():
            self._stale = True
            return
        if self._draw_timer.isActive():
            return
        wait = self._interval_ms - (time.monotonic() - self._last_draw) * 1000.0
        self._draw_timer.start(max(0, int(wait)))

    def _draw_now(self):
        self._last_draw = time.monotonic()
        self._stale = False
        snap = self.runner.snapshot()
        if snap.exp is None:
            return
        self.step_label.setText(f"step {snap.steps:,}")
        if snap.error:
            self.show_message(snap.error)
            self.play_button.blockSignals(True)
            self.play_button.setChecked(False)
            self.play_button.setText("▶ Play")
            self.play_button.blockSignals(False)
        self.draw(snap)
        # This redraw's cost and the last paint's (painting comes later, in the event loop).
        cost_ms = (time.monotonic() - self._last_draw) * 1000.0 + self.graphics.paint_ms
        self._interval_ms = max(float(DRAW_INTERVAL_MS), 2.0 * cost_ms)
        self.draw_count += 1

    def redraw(self):
        """Draw the latest snapshot now (exports, tests)."""
        self._draw_now()

    def showEvent(self, event):
        super().showEvent(event)
        self.runner.start()
        if self._stale:
            self._schedule_draw()

    def draw(self, snap) -> None:
        raise NotImplementedError

    @staticmethod
    def history(snap, arm: str, metric: str) -> list:
        """The first ``snap.steps`` values of one metric (the worker may have appended more)."""
        return snap.exp.history[arm][metric][:snap.steps]

    # -------------------------------------------------------------------- messages
    def show_message(self, text: str):
        self.message_label.setText(text)
        self.message_label.show()

    def clear_message(self):
        self.message_label.hide()
        self.message_label.clear()

    # -------------------------------------------------------------------- exports
    def figure_panel(self) -> figures.Panel:
        """The figure as the window's export machinery draws it, with a title that states the run."""
        snap = self.runner.snapshot()
        return figures.Panel(self.figure, name=f"training:{self.experiment_name}",
                             title=f"{self.title}: {self.describe()}, step {snap.steps:,}")

    def describe(self) -> str:
        return f"seed {self._seed}, lr {self._lr:g}"

    def wait_built(self, timeout: float = 10.0):
        """The latest snapshot, once the worker has built the experiment: a panel that was never shown
        has not started its worker, and an export of it must not find nothing to write."""
        snap = self.runner.snapshot()
        if snap.exp is None:
            self.runner.start()
            deadline = time.monotonic() + timeout
            while snap.exp is None and time.monotonic() < deadline:
                time.sleep(0.005)  # building takes milliseconds
                snap = self.runner.snapshot()
        return snap

    def export_figure(self, path, fmt: str | None = None, scale: float = 2.0) -> None:
        """Write the figure to ``path`` (PNG, SVG or PDF by its suffix or ``fmt``)."""
        self.wait_built()
        self.redraw()
        figures.export_figure(self.figure_panel(), path, fmt=fmt, scale=scale)

    def export_csv(self, path) -> None:
        """Write the history (one row per step, a column per arm and metric) as CSV."""
        snap = self.wait_built()
        if snap.exp is None:
            raise TrainingError("nothing to write yet: the experiment is still being built")
        header, rows = history_table(snap.exp)
        write_csv(path, header, rows[:snap.steps])

    def export_figure_dialog(self):
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, f"Export {self.title}", f"{self.experiment_name}.png", "PNG (*.png);;SVG (*.svg);;PDF (*.pdf)")
        if path:
            self._guarded(self.export_figure, path)

    def export_csv_dialog(self):
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save the history", f"{self.experiment_name}.csv",
                                                        "CSV (*.csv)")
        if path:
            self._guarded(self.export_csv, path)

    def _guarded(self, action, path):
        try:
            action(Path(path))
        except (TrainingError, figures.ExportError, OSError) as exc:
            self.show_message(str(exc))
        else:
            self.clear_message()

    def close_run(self):
        """Stop the worker (the window is closing)."""
        self.runner.stop()
