"""What every panel of the training lab shares.

A bar of controls as TensorFlow Playground has them (play / pause, one step, reset, speed,
learning rate, seed, and the panel's own settings), a figure (`figure.LabFigure`: the curves and
pictures, the one sentence that reads them), a message line, and the exports: the figure drawn
again for the page (`figures.page_figure`) as PNG, SVG or PDF through the window's figure machinery
(`gui.files.figures`), the history as CSV (`training.report`).

The panel draws from its runner's snapshot, the whole figure at most every ``DRAW_INTERVAL_MS`` and
while a run plays one plot or picture per turn of the event loop (`LabPanel.draw_parts`), and only
while it can be seen: a panel on a hidden tab is drawn when it is shown, its run going on meanwhile.
It never evaluates a model: what it shows beyond the history the worker measured (``extras``).
"""

from __future__ import annotations

import threading  # a lock: the headless training's progress; the threads are gui.worker's
import time
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from ...training.experiment import TrainingError
from ...training.settings import DEFAULT_SPEEDS, MAX_SEED, check_panel_settings
from ...training.report import history_table, write_csv
from ..files import figures
from ..files.sheet import breathe
# The curves' names, also where they were first found (panel.X).
from .curves import (COLOURS, MAX_BOLD_POINTS, MAX_FAINT_POINTS, SMOOTH, CurvePlot, nice_extent,  # noqa: F401
                     outward, peaks, recent, smoothed, thinned)
from .figure import LabFigure, TimedGraphics  # noqa: F401 (TimedGraphics: first found here)
from .figures import page_figure
from .flow import FlowLayout, group
from .model_buttons import ModelButtons
from .runner import SPEEDS, Runner
from .turns import TURNS, Headless, HeadlessTurns  # noqa: F401 (HeadlessTurns: first found here)

__all__ = ["LabPanel", "CurvePlot", "COLOURS", "SMOOTH", "smoothed", "peaks", "thinned"]

MAX_RECORDED = 2000  # extras kept for an animation of the run
DRAW_INTERVAL_MS = 80  # at most 12.5 redraws a second, whatever the step rate
PLAY_TO_PIECE = 25  # steps of a scene's run trained headless between two looks at whether the window closes
AHEAD_PIECE = 2  # steps of a run trained ahead between two looks: the stage may want the machine back (quiet)
LEARNING_RATES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)




class LabPanel(QtWidgets.QWidget):
    """The base of the three panels: controls, a runner, a figure, exports.

    A subclass sets ``figure_class`` (its figure: the plots, their drawing, what the worker
    measures for them), adds its controls in ``_add_controls`` (``self.controls_row`` is the bar)
    and the inputs its figure is drawn for under the figure in ``_add_inputs``, and makes
    experiments in ``_make``. The figure's plots and pictures are found on the panel by their names
    (``panel.loss_plot``, ``panel.heatmaps``...).
    """

    figure_class: type[LabFigure] = LabFigure
    experiment_name = ""  # the figure's (a subclass copies them: menus read them off the class)
    title = ""
    default_lr = 1e-3
    # The arms that open as models in the studio (arm -> the menus' label); none: no model buttons.
    model_arms: dict = {}
    # The window's: open a model folder in the studio (set by the window; None outside one).
    open_in_studio = None

    def __getattr__(self, name):
        # Only for names the panel lacks: the figure's plots and pictures (panel.loss_plot...).
        figure = self.__dict__.get("figure")
        if figure is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(figure, name)

    @property
    def default_speed(self) -> int:
        """Steps per second when the window opens (the lab's defaults say which, per panel)."""
        return DEFAULT_SPEEDS[self.experiment_name]

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName(f"training_{self.experiment_name}")
        self._seed = 0
        self._lr = self.default_lr
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.setSpacing(4)
        # The bar wraps onto a second line where the width runs out (a 1280-pixel projector beside the
        # Model panel): in one row it asked for 1,000 px and widened the whole window.
        self.controls_row = FlowLayout(spacing=6)
        outer.addLayout(self.controls_row)
        self._build_controls()
        self.message_label = QtWidgets.QLabel()
        self.message_label.setObjectName("trainingMessage")
        self.message_label.setStyleSheet("color: #b00020;")
        self.message_label.setWordWrap(True)
        self.message_label.hide()
        outer.addWidget(self.message_label)
        self.figure = self.figure_class()
        outer.addWidget(self.figure, 1)
        self._add_inputs(outer)

        self.runner = Runner(self._make, self.extras, self)
        self.runner.changed.connect(self._schedule_draw)
        self._draw_timer = QtCore.QTimer(self)
        self._draw_timer.setSingleShot(True)
        self._draw_timer.timeout.connect(self._draw_now)
        self._last_draw = 0.0
        # The gap between redraws: DRAW_INTERVAL_MS shared among the figure's parts, or twice what the
        # last redraw and paint cost when that is more (a loaded machine): the GUI thread then spends
        # at most a third of its time drawing and the worker keeps the interpreter the rest of the time.
        self._interval_ms = float(DRAW_INTERVAL_MS)
        self._stale = True
        # What the worker measured beyond the history (extras), by step, as the run played: an animation
        # of the run replays them (training/animation.py). Kept for one run, at most MAX_RECORDED.
        self.recorded: dict[int, dict] = {}
        self.recorded_exp = None
        self.runner.changed.connect(self._record)
        self.animation = None  # the animation of this run being written, if any
        self.draw_count = 0  # whole figures drawn so far (the tests check that a run is drawn, not every step)
        # The scene's run trained headless (play_to): its target, set on the GUI thread, and how far it is,
        # written by the worker between pieces and read by the stage's card; both under the lock.
        self._headless_lock = threading.Lock()
        self._headless: tuple[int, int] | None = None
        self._progress: Headless | None = None
        self._headless_run = None  # the run it trained, once finished

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
        self.speed_combo.setCurrentIndex(SPEEDS.index(self.default_speed))
        self.speed_combo.setToolTip("Steps per second while playing (the figure is redrawn at most 12 times a second)")
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
            self.add_control(label, widget)
        self._add_controls()
        if self.model_arms:  # "Open in the studio" and "Save model", a menu of the arms each
            self.model_buttons = ModelButtons(self)
            row.addWidget(group(self.model_buttons.open_button, self.model_buttons.save_button, spacing=6))
        row.addStretch(1)
        self.step_label = QtWidgets.QLabel("step 0")
        self.step_label.setObjectName("trainingStepCount")
        self.step_label.setMinimumWidth(self.step_label.fontMetrics().horizontalAdvance("step 000000"))
        self.export_button = QtWidgets.QToolButton()
        self.export_button.setText("Export")
        self.export_button.setObjectName("trainingExport")
        self.export_button.setPopupMode(QtWidgets.QToolButton.InstantPopup)
        menu = QtWidgets.QMenu(self.export_button)
        menu.addAction("Figure as PNG, SVG or PDF…", self.export_figure_dialog)
        menu.addAction("History as CSV…", self.export_csv_dialog)
        menu.addAction("Animation of this run…", self.export_animation_dialog).setObjectName("trainingAnimation")
        self.export_button.setMenu(menu)
        # The step count and Export stay together at the right end, wrapped or not.
        row.addWidget(group(self.step_label, self.export_button, spacing=6))

    def _add_controls(self):
        """Subclasses add their own settings here (:meth:`add_control`)."""

    def _add_inputs(self, layout: QtWidgets.QVBoxLayout) -> None:
        """Subclasses add the inputs the figure is drawn for (a sequence to type) under the figure:
        controls, never part of the figure."""

    def add_control(self, label: str, widget: QtWidgets.QWidget) -> None:
        """``widget`` with its ``label`` in the bar; the two stay together when the bar wraps."""
        self.controls_row.addWidget(group(QtWidgets.QLabel(label), widget))

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
        """Pause and rebuild the experiment from the current settings (a scene's run trained headless
        meanwhile stops at its next piece: this one replaces it)."""
        self.pause()
        self.clear_message()
        with self._headless_lock:
            self._headless = self._progress = self._headless_run = None
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
    def _make(self, seed: int | None = None):
        """A fresh experiment from the panel's settings (``seed``: another seed than the panel's, for a
        scene that saved its run's)."""
        raise NotImplementedError

    def play_to(self, seed: int, steps: int, ahead: int | None = None) -> bool:
        """Show the run a scene saved: ``seed`` trained to ``steps``, headless on the worker (the figure
        follows when it is there). The run shown is kept when it is that one already, and trained on
        from where it is when it is that seed at fewer steps; a run on its way there already goes on.
        Returns True when it has to train.

        One headless training at a time among the panels (:data:`TURNS`): this run first (a caller
        waits for it), or with ``ahead`` (a scene's index) trained ahead of time, after the runs waited
        for and the earlier scenes'. :meth:`training_progress` says how far it is."""
        seed, steps = int(seed), int(steps)
        target = (seed, steps)
        snap = self.runner.snapshot()
        exp = snap.exp
        with self._headless_lock:
            # A training asked before is on its way until the run it trained is the one the panel shows.
            pending = self._headless is not None and (self._headless_run is None or exp is not self._headless_run)
            under_way, other = pending and self._headless == target, pending and self._headless != target
        if ahead is None:
            TURNS.first(self)
        else:
            TURNS.ahead(self, ahead, keep_higher=under_way)
        if under_way:
            return True  # asked again (the scene shown again, or trained ahead of it): the same training goes on
        if exp is not None and self._seed == seed and exp.seed == seed and snap.steps == steps and not snap.playing \
                and not other:
            return False
        self.pause()
        if self._seed != seed:
            self._seed = seed
            self.seed_spin.blockSignals(True)
            self.seed_spin.setValue(seed)
            self.seed_spin.blockSignals(False)
        kept = exp if exp is not None and exp.seed == seed and exp.lr == self._lr else None
        with self._headless_lock:
            self._headless, self._progress, self._headless_run = target, Headless(seed, steps), None

        def report(done: int, waiting: bool = False, run=None) -> None:
            with self._headless_lock:
                if self._headless == target:  # not a training another one replaced
                    self._progress = Headless(seed, steps, done, waiting, run is not None)
                    self._headless_run = run

        def given_up() -> bool:  # the window closes, or another run replaced this one
            return self.runner.stopping() or self._headless != target

        def trained():  # on the worker, between steps; one piece at a time, the progress said between pieces
            run = kept if kept is not None and kept.step_count <= steps else self._make(seed)
            try:
                while run.step_count < steps and not given_up():
                    report(run.step_count)
                    if not TURNS.wait_turn(self, given_up, lambda on: report(run.step_count, waiting=on)):
                        break
                    try:
                        piece = PLAY_TO_PIECE if TURNS.waited_for(self) else AHEAD_PIECE
                        run.run(min(piece, steps - run.step_count))
                    finally:
                        TURNS.done(self)
            finally:
                TURNS.leave(self)
            report(run.step_count, run=run if run.step_count >= steps else None)
            return run

        self.step_label.setText(f"training to step {steps:,}…")
        self.runner.reset(trained)
        return True

    def training_progress(self) -> Headless | None:
        """The scene's run trained headless now or last (:meth:`play_to`): its seed, steps, the steps
        done so far; None when none was asked since the last reset."""
        with self._headless_lock:
            return self._progress

    def when_ready(self, on_ready, seed: int | None = None, steps: int | None = None) -> bool:
        """Call ``on_ready()`` once the panel shows a run, drawn whole: at once when it does; else when
        the worker has built it (a panel never shown yet) or, with ``seed`` and ``steps``, trained the
        run a scene saved (:meth:`play_to`). Returns True when it waits (a scene on the stage keeps the
        scene before until then)."""
        target = None
        if seed is not None and steps is not None and self.play_to(seed, steps):
            target = (int(seed), int(steps))
        self.runner.start()

        def there() -> bool:
            snap = self.runner.snapshot()
            if snap.exp is None or (target is not None and (snap.exp.seed, snap.steps) != target):
                return False
            self.redraw()
            return True

        if there():
            on_ready()
            return False

        def changed():
            if there():
                self.runner.changed.disconnect(changed)
                on_ready()

        self.runner.changed.connect(changed)
        return True

    def extras(self, exp, inputs: dict, heavy: bool) -> dict:
        """What the panel shows beyond the history, measured on the worker thread (the figure's
        ``measure``)."""
        return self.figure_class.measure(exp, inputs, heavy)

    # -------------------------------------------------------------------- recording
    def _record(self) -> None:
        snap = self.runner.snapshot()
        if snap.exp is None:
            return
        if snap.exp is not self.recorded_exp:  # a new run, or a reset: its own record
            self.recorded, self.recorded_exp = {}, snap.exp
        last = self.recorded.get(max(self.recorded)) if self.recorded else None
        if snap.extras and snap.extras is not last:
            self.recorded[snap.steps] = snap.extras
            if len(self.recorded) > MAX_RECORDED:  # every other one goes: the record stays spread over the run
                self.recorded = dict(sorted(self.recorded.items())[1::2])

    # -------------------------------------------------------------------- drawing
    def _schedule_draw(self):
        if not self.isVisible():
            self._stale = True
            return
        if self._draw_timer.isActive():
            return
        wait = self._interval_ms - (time.monotonic() - self._last_draw) * 1000.0
        self._draw_timer.start(max(0, int(wait)))

    def _draw_now(self, whole: bool = False):
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
        parts = self.draw_parts()
        if whole or not snap.playing or len(parts) == 1:
            for part in parts:
                part(snap)
            self._next_part = 0
        else:
            # While a run plays, one part (one plot or picture) per turn of the event loop: each
            # turn then paints one region of the figure, never the whole of it.
            parts[self._next_part % len(parts)](snap)
            self._next_part = (self._next_part + 1) % len(parts)
        self.sentence.setText(self.reading(snap))
        # This part's cost and the last paint's (painting comes later, in the event loop). A whole
        # figure is drawn at most every DRAW_INTERVAL_MS, whatever the number of parts.
        cost_ms = (time.monotonic() - self._last_draw) * 1000.0 + self.graphics.paint_ms
        self._interval_ms = max(float(DRAW_INTERVAL_MS) / len(parts), 2.0 * cost_ms)
        if self._next_part == 0:
            self.draw_count += 1
        elif not self._draw_timer.isActive():  # finish the figure even if no new step comes
            self._draw_timer.start(int(self._interval_ms))

    def set_digits(self, digits: int) -> None:
        """Write the sentence under the figure again at the precision setting (``presentation.set_digits``)."""
        snap = self.runner.snapshot()
        if snap.exp is not None:
            self.sentence.setText(self.reading(snap))

    def redraw(self):
        """Draw the latest snapshot now, every part of the figure (exports, tests)."""
        self._draw_now(whole=True)

    def showEvent(self, event):
        super().showEvent(event)
        self.runner.start()
        if self._stale:
            self._schedule_draw()

    def draw(self, snap) -> None:
        """Draw every part of the figure from ``snap`` (the sentence is the caller's)."""
        for part in self.draw_parts():
            part(snap)

    def draw_parts(self) -> tuple:
        """The figure's redraw as parts (`LabFigure.draw_parts`), drawn one per turn of the event
        loop while a run plays."""
        return self.figure.draw_parts()

    def reading(self, snap) -> str:
        """The one sentence under the figure that reads the run's state off its numbers."""
        return self.figure.reading(snap)

    _next_part = 0  # the part of the figure the next redraw draws while playing

    # -------------------------------------------------------------------- messages
    def show_message(self, text: str, error: bool = True):
        """A line over the figure: what went wrong (red), or with ``error`` False what was done."""
        self.message_label.setStyleSheet("color: #b00020;" if error else "")
        self.message_label.setText(text)
        self.message_label.show()

    def clear_message(self):
        self.message_label.hide()
        self.message_label.clear()

    # -------------------------------------------------------------------- exports
    def figure_panel(self) -> figures.Panel:
        """The figure of the run shown, drawn again for the page (`figures.page_figure`: the figure
        ``attn-studio train --png`` writes), with a title that states the run."""
        return page_figure(self.experiment_name, self.wait_built())

    def wait_built(self, timeout: float = 10.0):
        """The latest snapshot, once the worker has built the experiment: a panel that was never shown
        has not started its worker, and an export of it must not find nothing to write."""
        snap = self.runner.snapshot()
        if snap.exp is None:
            self.runner.start()
            deadline = time.monotonic() + timeout
            while snap.exp is None and time.monotonic() < deadline:
                breathe()  # the window's export lets its event loop run meanwhile (else nothing)
                time.sleep(0.005)  # building takes tens of milliseconds
                snap = self.runner.snapshot()
        return snap

    def export_figure(self, path, fmt: str | None = None, scale: float = 2.0) -> None:
        """Write the figure to ``path`` (PNG, SVG or PDF by its suffix or ``fmt``)."""
        panel = self.figure_panel()
        figures.export_figure(panel, path, fmt=fmt, scale=scale)
        figures.done_with(panel)

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

    def export_animation_dialog(self):
        """Ask for an animation of this run (a frame every k steps, from 0 to the last step taken) and
        start writing it; returns the export, or None."""
        from ..files import animation_actions, animation_dialog
        from .animation import RunReplay, steps_control

        if self.animation is not None and self.animation.running:
            self.show_message("An animation of this run is being written; wait for it or cancel it first")
            return None
        snap = self.wait_built()
        if snap.exp is None or snap.steps < 1:
            self.show_message("Train first: an animation of the run has a frame every k steps, from step 0 "
                              "to the last step taken")
            return None
        path = Path.home() / f"{self.experiment_name}-run.gif"
        request = animation_dialog.ask(self, f"{self.title} as the run goes", [steps_control(snap.steps)], path)
        if request is None:
            return None
        try:
            animation_dialog.check_request(request)
        except figures.ExportError as exc:
            self.show_message(str(exc))
            return None
        self.clear_message()
        values = request.control.values(request.start, request.stop, request.frames)
        window = self.window()
        status = window.statusBar().showMessage if isinstance(window, QtWidgets.QMainWindow) else (lambda *a: None)
        self.animation = animation_actions.run_export(self, RunReplay(self, values, request.scale), request,
                                                      self.show_message, status, f"Animating {self.title}…")
        return self.animation

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
