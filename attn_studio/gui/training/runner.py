"""One experiment of the training lab, stepped off the GUI thread (a ``gui.worker.Run``).

The worker owns the experiment: it builds it, steps it and measures what the panel shows beyond
the history (``extras``: a histogram, an alignment, accuracy by length...). The GUI thread never
steps, never computes; it reads what the worker published (:meth:`Runner.snapshot`) and draws it,
at most ~12 times a second whatever the step rate.

Reading the history while the worker appends to it is safe: ``history`` lists only grow, the
published step count is set after a step has appended every value, and a slice of a list is
taken whole under the interpreter lock. A reset publishes a new experiment object; the old one is
never touched again.

Commands (play, pause, step, reset, new inputs, a new learning rate) go to the worker under one
condition variable; the worker looks at them before every step, so a pause takes effect before
the next step and never in the middle of one. The run is a generator on superqt's
``GeneratorWorker``: it yields after each piece of work it publishes, and the yield reaches the
GUI thread as ``changed``; ``quit()`` ends it. superqt's own pause is not used: while paused it
polls every 10 ms and runs nothing, but a paused lab must still take a single step, rebuild on a
reset and measure new inputs, so the generator waits on the condition instead (no polling).
"""

from __future__ import annotations

import threading  # a Condition and a Lock: the commands' hand-over; the thread is gui.worker's
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from PySide6 import QtCore

from ...training.settings import SPEEDS
from ..qt.worker import Run, one_blas_thread

__all__ = ["Runner", "Snapshot", "SPEEDS"]

# SPEEDS: the steps per second a panel offers (0 = as fast as the machine goes), `training.settings`'s.
# Light extras (a histogram, one sequence's attention) at most this often while playing...
LIGHT_INTERVAL = 0.1
# ...heavy ones (accuracy at 20 input lengths) at most this often, and whenever the run stops.
HEAVY_INTERVAL = 1.5


@dataclass(frozen=True)
class Snapshot:
    """What the worker last published: the experiment, the steps taken, the extras measured."""

    exp: object = None
    steps: int = 0
    extras: dict = field(default_factory=dict)
    playing: bool = False
    error: str = ""


@dataclass(frozen=True)
class _Called:
    """What a :meth:`Runner.call` gave, on its way to the GUI thread."""

    on_done: Callable
    result: object
    error: BaseException | None


class Runner(QtCore.QObject):
    """A worker thread playing one experiment.

    ``make()`` builds a fresh experiment (called on the worker); ``extras(exp, inputs, heavy)``
    returns a dict of what the panel shows beyond the history (called on the worker after steps,
    ``heavy`` when it may take longer). ``changed`` is emitted (queued to the GUI thread) when a
    new snapshot is published.
    """

    changed = QtCore.Signal()

    def __init__(self, make: Callable[[], object], extras: Callable[[object, dict, bool], dict] | None = None,
                 parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self._make = make
        self._extras = extras
        self._cond = threading.Condition()
        self._commands: deque = deque()
        self._playing = False
        self._single = 0
        self._speed = 20.0
        self._stopping = False
        self._busy = True  # building the first experiment
        self._inputs: dict = {}
        self._snapshot = Snapshot()
        self._publish_lock = threading.Lock()  # both threads publish (play/pause here, steps there)
        self._extras_due = False
        self._commands.append(("reset", make))
        # Started at the first command or when the panel is first shown: a window that never shows
        # the training lab builds no experiment and runs no thread.
        self._run: Run | None = None

    def start(self) -> None:
        """Start the worker (building the experiment) if it is not running yet."""
        if self._run is None and not self._stopping:
            self._run = Run(self._loop)
            self._run.yielded.connect(self._yielded)
            self._run.submit()

    # ------------------------------------------------------------------ GUI thread
    def _yielded(self, value) -> None:
        if isinstance(value, _Called):  # the answer of a call(): to its caller, on this (the GUI) thread
            value.on_done(value.result, value.error)
            return
        self.changed.emit()

    def snapshot(self) -> Snapshot:
        """The last published state (an immutable record; its history lists only grow)."""
        return self._snapshot

    @property
    def playing(self) -> bool:
        return self._playing

    def play(self) -> None:
        """Step continuously at the chosen speed until paused."""
        self.start()
        with self._cond:
            self._playing = True
            self._cond.notify_all()
        self._publish(playing=True)
        self.changed.emit()

    def pause(self) -> None:
        """Stop before the next step (a step under way finishes; none starts after it)."""
        self.start()
        with self._cond:
            self._playing = False
            self._single = 0
            self._extras_due = True
            self._cond.notify_all()
        self._publish(playing=False)
        self.changed.emit()

    def single_step(self) -> None:
        """Pause, then take exactly one step."""
        self.start()
        with self._cond:
            self._playing = False
            self._single += 1
            self._cond.notify_all()

    def reset(self, make: Callable[[], object] | None = None) -> None:
        """Pause and rebuild the experiment (from ``make``, or the last one given): the same seed
        plays the same run again."""
        self.start()
        with self._cond:
            if make is not None:
                self._make = make
            self._playing = False
            self._single = 0
            self._commands.append(("reset", self._make))
            self._cond.notify_all()

    def set_speed(self, steps_per_second: float) -> None:
        """Steps per second while playing; 0 = as fast as it goes."""
        self.start()
        with self._cond:
            self._speed = float(steps_per_second)
            self._cond.notify_all()

    def set_lr(self, lr: float) -> None:
        """Adam's learning rate from the next step on (every arm)."""
        self.start()
        with self._cond:
            self._commands.append(("lr", float(lr)))
            self._cond.notify_all()

    def set_inputs(self, **inputs) -> None:
        """What the extras are measured on (a typed sequence...); measured again at once."""
        self.start()
        with self._cond:
            self._commands.append(("inputs", dict(inputs)))
            self._cond.notify_all()

    def call(self, work: Callable[[object], object], on_done: Callable[[object, BaseException | None], None]) -> None:
        """Run ``work(exp)`` on the worker between two steps (never in the middle of one: the
        arrays it reads are whole), playing or not; ``on_done(result, error)`` is called on the GUI
        thread (error None when it worked). Saving a model while its run goes on uses this."""
        self.start()
        with self._cond:
            self._commands.append(("call", work, on_done))
            self._cond.notify_all()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until the worker has nothing to do (paused, every command done). For tests and
        closing; the window never calls it while playing."""
        self.start()
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._busy or self._commands or self._single or self._extras_due or self._playing:
                left = deadline - time.monotonic()
                if left <= 0 or self._playing:
                    return False
                self._cond.wait(left)
        return True

    def stopping(self) -> bool:
        """True once :meth:`stop` was called: long work on the worker (a scene's run trained headless)
        checks it between its pieces."""
        return self._stopping

    def stop(self) -> None:
        """End the worker thread (after the step under way)."""
        with self._cond:
            self._stopping = True
            self._playing = False
            self._cond.notify_all()
        if self._run is not None:
            self._run.quit()
            self._run.wait(5.0)

    # ------------------------------------------------------------------ worker thread
    def _publish(self, **changes) -> None:
        """A new snapshot. The GUI thread emits ``changed`` after it; the worker yields, and the
        yield is emitted as ``changed`` on the GUI thread."""
        with self._publish_lock:
            old = self._snapshot
            values = {"exp": old.exp, "steps": old.steps, "extras": old.extras, "playing": self._playing,
                      "error": old.error}
            values.update(changes)
            self._snapshot = Snapshot(**values)

    def _next_work(self, next_step: float):
        with self._cond:
            while True:
                if self._stopping:
                    return None
                if self._commands:
                    return self._commands.popleft()
                if self._single:
                    self._single -= 1
                    self._extras_due = True
                    return ("step",)
                if self._playing:
                    wait = next_step - time.monotonic() if self._speed > 0 else 0.0
                    if wait <= 0:
                        return ("step",)
                    self._cond.wait(wait)
                    continue
                if self._extras_due:
                    self._extras_due = False
                    return ("extras",)
                self._busy = False
                self._cond.notify_all()
                self._cond.wait()
                self._busy = True

    def _loop(self):
        with one_blas_thread():
            next_step = 0.0
            last_light = last_heavy = 0.0
            # Heavy extras (accuracy at 20 lengths) at most every HEAVY_INTERVAL, and never more than a
            # fifth of the worker's time: the next waits four times what the last one took.
            heavy_every = HEAVY_INTERVAL
            exp = None
            while True:
                work = self._next_work(next_step)
                if work is None:
                    return
                try:
                    kind = work[0]
                    if kind == "reset":
                        exp = work[1]()
                        self._publish(exp=exp, steps=exp.step_count, extras=self._measure(exp, True), error="")
                        yield
                        last_light = last_heavy = time.monotonic()
                        continue
                    if kind == "call":
                        try:
                            answer = _Called(work[2], work[1](exp), None)
                        except Exception as exc:  # a folder that cannot be written: the caller says why
                            answer = _Called(work[2], None, exc)
                        yield answer
                        continue
                    if exp is None:
                        continue
                    if kind == "lr":
                        exp.set_lr(work[1])  # a change after step 0 means a saved model names no recipe
                        continue
                    if kind == "inputs":  # a new sequence to show: the light extras are measured on it
                        self._inputs = work[1]
                        self._publish(extras=self._measure(exp, False))
                        yield
                        continue
                    if kind == "extras":
                        self._publish(extras=self._measure(exp, True))
                        yield
                        last_light = last_heavy = time.monotonic()
                        continue
                    # One step.
                    now = time.monotonic()
                    if self._speed > 0:
                        next_step = max(next_step + 1.0 / self._speed, now)
                    exp.step()
                    now = time.monotonic()
                    heavy = now - last_heavy >= heavy_every
                    if heavy or now - last_light >= LIGHT_INTERVAL:
                        extras = self._measure(exp, heavy)
                        if heavy:
                            heavy_every = max(HEAVY_INTERVAL, 4.0 * (time.monotonic() - now))
                        last_light = now
                        if heavy:
                            last_heavy = now
                        self._publish(steps=exp.step_count, extras=extras)
                        yield
                    else:
                        self._publish(steps=exp.step_count)
                        yield
                except Exception as exc:  # a bad input or a numerical failure: stop and say so
                    with self._cond:
                        self._playing = False
                    self._publish(error=f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc))
                    yield

    def _measure(self, exp, heavy: bool) -> dict:
        if self._extras is None:
            return {}
        extras = dict(self._snapshot.extras) if self._snapshot.exp is exp else {}
        extras.update(self._extras(exp, self._inputs, heavy))
        return extras
