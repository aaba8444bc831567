"""Trained-model work off the GUI thread: loading a checkpoint, running it, stale results dropped.

A forward pass of a trained model takes tens to hundreds of milliseconds and
loading one takes a second or more; done on the GUI thread, either freezes
the window while the lecturer types. :class:`ModelWorker` runs such work on
one background job at a time (``gui.worker.Job``), which hands the result
back on the GUI thread.

Every request gets a generation number. Only the newest request of its kind
("load" or "run") may deliver: an older one still running finishes and is
dropped, and an older one still waiting never starts (typing five letters
while a pass runs costs one more pass, not five). Loads and runs are kinds
apart, so typing while a model loads does not cancel the load.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass
from typing import Callable

from PySide6 import QtCore

from ..qt.worker import Job, one_blas_thread

LOAD = "load"
RUN = "run"
MEASURE = "measure"  # a measure of the model beside its runs (the Head Lab's detector): queued after them
INTACT = "intact"  # the unedited model's run beside an edited one, left for after the edit is drawn: queued last
SWITCH_INTERVAL = 0.001  # seconds: how often a thread holding Python's lock lets another take it
BUSY_WORDS = ("Loading ", "Opening ", "Training ")  # how a model load's label begins: said while it runs, cleared after


@dataclass
class _Request:
    kind: str
    generation: int
    work: Callable[[], object]
    on_result: Callable[[object], None] | None
    on_error: Callable[[str], None] | None
    label: str


def error_message(exc: BaseException) -> str:
    """A one-line message for a person: a ``ValueError``'s own words (``ModelError``,
    ``EngineError`` are written for people), the type and text of anything else."""
    if isinstance(exc, ValueError):
        return str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _work(work: Callable[[], object]):
    with one_blas_thread():
        return work()


class ModelWorker(QtCore.QObject):
    """Runs model work on one background thread; results come back on the GUI thread.

    Signals: ``busy(bool)`` when work starts and when the last of it ends (for
    a busy indicator); ``progress(str)`` what is being done ("Loading
    all-MiniLM-L6-v2…"); ``resultReady(str kind, int generation, object)``
    and ``failed(str kind, str message)`` for the newest request of a kind;
    ``modelLoaded(object)`` for a loaded model.
    """

    busy = QtCore.Signal(bool)
    progress = QtCore.Signal(str)
    resultReady = QtCore.Signal(str, int, object)
    failed = QtCore.Signal(str, str)
    modelLoaded = QtCore.Signal(object)

    def __init__(self, parent=None):
        # BLAS threads: the app's entry points (attn_studio.cli) set OPENBLAS_NUM_THREADS=1 before
        # NumPy loads; one model thread doing single-threaded BLAS keeps the window responsive.
        super().__init__(parent)
        self._switch_interval = sys.getswitchinterval()  # Python's own, given back when no pass runs
        self._latest = {LOAD: 0, RUN: 0, MEASURE: 0, INTACT: 0}
        self._pending: dict[str, _Request] = {}
        self._running: _Request | None = None
        self._job: Job | None = None  # one at a time: runs queue instead of fighting for the GUI's cores
        self._busy = False
        self.dropped = 0  # stale results thrown away (a figure for tests and benchmarks)

    # -- requests ------------------------------------------------------------------------

    def submit(self, work: Callable[[], object], on_result=None, on_error=None, *,
               kind: str = RUN, label: str = "") -> int:
        """Run ``work()`` off the GUI thread; returns the request's generation.

        ``on_result(result)`` or ``on_error(message)`` is called on the GUI
        thread, and only if no newer request of the same ``kind`` was made
        meanwhile. ``work`` must not touch widgets; it gets what it needs from
        its closure (an immutable state, a model run).
        """
        if kind not in self._latest:
            raise ValueError(f"kind must be {LOAD!r}, {RUN!r}, {MEASURE!r} or {INTACT!r}, got {kind!r}")
        self._latest[kind] += 1
        request = _Request(kind, self._latest[kind], work, on_result, on_error, label)
        # A waiting request of the same kind is now stale: it never starts.
        if kind in self._pending:
            self.dropped += 1
        self._pending[kind] = request
        self._start_next()
        return request.generation

    def load_model(self, path=None, on_result=None, on_error=None, *, name: str | None = None) -> int:
        """Load a trained model (``pretrained.load_pretrained(path)``) off the GUI thread.

        Emits ``progress`` with what is loading, then ``modelLoaded(model)``
        (and ``on_result(model)``) or ``failed("load", message)``.
        """
        from ...pretrained import DEFAULT_MODEL, load_pretrained

        what = name or (DEFAULT_MODEL if path is None else str(path))

        def done(model):
            self.modelLoaded.emit(model)
            if on_result is not None:
                on_result(model)

        return self.submit(lambda: load_pretrained(path), done, on_error, kind=LOAD, label=f"Loading {what}…")

    def is_busy(self) -> bool:
        """True while a request runs or waits."""
        return self._running is not None or bool(self._pending)

    def latest(self, kind: str = RUN) -> int:
        """The generation of the newest request of ``kind`` (0 before any)."""
        return self._latest[kind]

    def cancel(self, kind: str = RUN) -> None:
        """Make every request of ``kind`` made so far stale (e.g. when the model changes)."""
        self._latest[kind] += 1
        if self._pending.pop(kind, None) is not None:
            self.dropped += 1
            if self._running is None:
                self._set_busy(False)

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the request running has ended (for closing the window and for scripts)."""
        job = self._job
        return job is None or job.wait(msecs / 1000)

    # -- the queue -----------------------------------------------------------------------

    def _start_next(self) -> None:
        if self._running is not None or not self._pending:
            return
        # A model load goes first: the runs waiting behind it are for the model it brings.
        kind = next(k for k in (LOAD, RUN, MEASURE, INTACT) if k in self._pending)
        request = self._pending.pop(kind)
        self._running = request
        # While a model pass runs, the GUI thread hands Python's lock over every millisecond, not every five:
        # between its NumPy calls the pass waits for the lock, and a new sentence's layout on the GUI thread
        # (tens of milliseconds of Python, made meanwhile) held each call up to 5 ms, the 40 ms pass then
        # taking 70. A load is Python through and through: there the short interval let it take the GUI
        # thread's turns (stalls of 55-120 ms instead of 30), so it runs with Python's own.
        sys.setswitchinterval(self._switch_interval if kind == LOAD else min(SWITCH_INTERVAL, self._switch_interval))
        self._set_busy(True)
        if request.label:
            self.progress.emit(request.label)
        self._job = Job(_work, request.work, current=lambda: request.generation == self._latest[request.kind],
                        on_result=lambda result: self._on_result(request, result),
                        on_error=lambda exc: self._on_error(request, exc),
                        on_stale=self._on_stale, on_end=self._on_end).submit()

    def _on_result(self, request: _Request, result) -> None:
        self.resultReady.emit(request.kind, request.generation, result)
        if request.on_result is not None:
            request.on_result(result)

    def _on_error(self, request: _Request, exc: BaseException) -> None:
        message = error_message(exc)
        if not isinstance(exc, ValueError):
            traceback.print_exception(exc)
        self.failed.emit(request.kind, message)
        if request.on_error is not None:
            request.on_error(message)

    def _on_stale(self) -> None:
        self.dropped += 1

    def _on_end(self) -> None:
        self._running = self._job = None
        if self._pending:
            self._start_next()
        else:
            sys.setswitchinterval(self._switch_interval)
            self.progress.emit("")
            self._set_busy(False)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy.emit(busy)
