"""Every background job of the window, one way: superqt's workers (napari's).

A trained model's load and forward pass, a large toy edit, the Head Lab's importance and
flow, a background save and a training run all go through this module, and nothing else in
the package starts a thread (``tests/gui/test_one_worker.py`` greps for it).

- **Hand-over.** A :class:`Job` runs a function on a thread of the application's pool and
  delivers its outcome on the GUI thread through the worker's own queued signal, exactly once:
  ``on_result(value)``, ``on_error(exception)``, ``on_cancel()`` or ``on_stale()``. A caller
  that must have the outcome now (a save when the window closes, an edit that must be
  installed before the next one) calls :meth:`Job.take`, which waits and delivers on the
  calling thread; the queued delivery then does nothing.
- **Cancel.** :meth:`Job.quit` (superqt's): a function that can stop early polls
  ``cancelled()``; a result that comes back anyway is handed to ``on_cancel``, never to
  ``on_result``.
- **Stale results.** A job made with ``current=`` asks it on the GUI thread just before
  delivering; ``False`` drops the outcome (``on_stale``). This is the one place a stale result
  is dropped.
- **Training runs.** A :class:`Run` is superqt's ``GeneratorWorker``: every ``yield`` of the
  generator reaches the GUI thread as ``yielded``, and ``quit()`` ends it before its next step.

Both classes run as superqt's do, without its ``warnings.catch_warnings()`` around the work:
that context swaps ``warnings.showwarning`` and the filters of the whole process, not of the
thread, so a training run that lasts minutes would swallow the GUI thread's warnings and, when
it ends, put back filters that a test harness had since changed.
"""

from __future__ import annotations

import gc
import threading
import time
import traceback
from typing import Any, Callable

import shiboken6
from PySide6 import QtCore
from superqt.utils import FunctionWorker, GeneratorWorker
from superqt.utils._qthreading import GeneratorWorkerSignals, WorkerBaseSignals

__all__ = ["Job", "Run", "collect_on_gui_thread", "one_blas_thread", "wait_all"]

# Threads of the application's pool. Jobs of one kind run one at a time (each owner keeps its
# own queue), but kinds must not wait for each other: a playing training run holds a thread for
# as long as it plays, and a model pass must still start at once beside up to three of them.
POOL_THREADS = 8


class _JobSignals(WorkerBaseSignals):
    progressed = QtCore.Signal(int, int)


class _RunSignals(GeneratorWorkerSignals):
    pass


def _run(worker) -> None:
    """superqt's ``WorkerBase.run`` without the process-wide warnings context (see above)."""
    worker.started.emit()
    worker._running = True
    try:
        worker.value = worker.work()
    except Exception as exc:  # delivered on the GUI thread; the window keeps running
        worker.error = exc
    worker._running = False
    worker.finished.emit()
    worker._finished.emit(worker)  # superqt forgets the started worker (on the GUI thread)
    # Set last: whoever waits for it (a window closing, then the application) finds the signals sent.
    worker._ended.set()


def _start(worker) -> None:
    pool = QtCore.QThreadPool.globalInstance()
    if pool.maxThreadCount() < POOL_THREADS:
        pool.setMaxThreadCount(POOL_THREADS)
    # superqt's start(), without its one-millisecond timer when an event loop runs: a job taken at
    # once (Job.take, an edit that must be installed before the next) would wait for a timer that
    # cannot fire while the GUI thread waits.
    worker._worker_set.add(worker)
    worker._finished.connect(worker._set_discard)
    pool.start(worker)


# Ended workers, held until the pool has deleted their C++ side. The pool deletes a runnable on
# its own thread right after ``run`` returns, and the binding drops its reference to the Python
# object there: were that the last one, the worker's signals (a QObject living on the GUI thread)
# would be destroyed on the pool's thread. Held here, the last reference goes on the GUI thread.
_ENDED: list = []


def _park(worker) -> None:
    """Keep ``worker`` until its C++ side is gone, and let go of the earlier ones that are (GUI thread)."""
    _ENDED[:] = [w for w in _ENDED if shiboken6.isValid(w)]
    _ENDED.append(worker)


class Job(FunctionWorker):
    """``func(*args, **kwargs)`` on a background thread, its outcome delivered once on the GUI thread.

    ``controls=True`` passes ``(progress, cancelled)`` first: ``progress(done, total)`` reaches
    ``on_progress`` on the GUI thread, ``cancelled()`` is True once :meth:`quit` was called.
    ``current()`` (GUI thread) says whether the outcome is still wanted; ``on_end()`` runs
    after whichever outcome, stale ones included. Call :meth:`submit` to start it.
    """

    def __init__(self, func: Callable, *args, on_result: Callable[[Any], None] | None = None,
                 on_error: Callable[[BaseException], None] | None = None,
                 on_cancel: Callable[[], None] | None = None, on_stale: Callable[[], None] | None = None,
                 on_progress: Callable[[int, int], None] | None = None, on_end: Callable[[], None] | None = None,
                 current: Callable[[], bool] | None = None, controls: bool = False, **kwargs):
        if controls:
            args = (self.report, self.cancelled, *args)
        super().__init__(func, *args, **kwargs)
        self.signals = _JobSignals()
        self.value = self.error = None
        self._ended = threading.Event()
        self._delivered = False
        self._callbacks = (on_result, on_error, on_cancel, on_stale, on_end)
        self._current = current
        self._on_progress = on_progress
        if on_progress is not None:
            self.signals.progressed.connect(self._progressed)
        self.signals.finished.connect(self.deliver)

    run = _run

    def submit(self) -> "Job":
        """Start the job on the application's pool; returns it."""
        _start(self)
        return self

    # -- any thread -----------------------------------------------------------------
    def report(self, done: int, total: int) -> None:
        """Progress, from the function (any thread); ``on_progress`` gets it on the GUI thread."""
        self.signals.progressed.emit(int(done), int(total))

    def cancelled(self) -> bool:
        """True once :meth:`quit` was called: a function that can stop early polls this."""
        return self.abort_requested

    def done(self) -> bool:
        """True when the function has returned or raised (delivered or not)."""
        return self._ended.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the function has returned or raised; False after ``timeout`` seconds."""
        return self._ended.wait(timeout)

    # -- GUI thread -------------------------------------------------------------------
    def stale(self) -> bool:
        """True when the owner no longer wants this outcome (see ``current``)."""
        return self._current is not None and not self._current()

    def take(self) -> None:
        """Wait for the function and deliver its outcome now, on this thread (if not yet delivered)."""
        self.wait()
        self.deliver()

    def deliver(self) -> None:
        """Hand the outcome to its callback, once; the queued ``finished`` signal calls this."""
        if self._delivered:
            return
        self._ended.wait()  # sent just before the end is marked: microseconds at most
        self._delivered = True
        _park(self)
        on_result, on_error, on_cancel, on_stale, on_end = self._callbacks
        self._callbacks = (None,) * 5  # the closures go with the delivery, not with the job
        try:
            if self.stale():
                if on_stale is not None:
                    on_stale()
            elif self.abort_requested:
                if on_cancel is not None:
                    on_cancel()
            elif self.error is not None:
                if on_error is not None:
                    on_error(self.error)
                else:
                    traceback.print_exception(self.error)
            elif on_result is not None:
                on_result(self.value)
        finally:
            if on_end is not None:
                on_end()

    def _progressed(self, done: int, total: int) -> None:
        if not self._delivered and not self.abort_requested and not self.stale():
            self._on_progress(done, total)


class Run(GeneratorWorker):
    """A generator stepped on a background thread: each ``yield`` is emitted as ``yielded`` on the
    GUI thread, :meth:`quit` ends it before its next step, :meth:`wait` blocks until it has ended."""

    def __init__(self, func: Callable, *args, **kwargs):
        super().__init__(func, *args, SignalsClass=_RunSignals, **kwargs)
        self.value = self.error = None
        self._ended = threading.Event()
        self.signals.finished.connect(self._parked)

    run = _run

    def _parked(self) -> None:
        _park(self)

    def submit(self) -> "Run":
        """Start the generator on the application's pool; returns it."""
        _start(self)
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the generator has returned (or raised); False after ``timeout`` seconds."""
        return self._ended.wait(timeout)


def wait_all(msecs: int = 30_000) -> bool:
    """Block until every job of the application's pool has ended (closing, scripts)."""
    return QtCore.QThreadPool.globalInstance().waitForDone(msecs)


_BLAS = None


def one_blas_thread():
    """A context in which BLAS uses one thread (threadpoolctl), for work on a background thread: it
    must leave the other core to the GUI thread, whatever OPENBLAS_NUM_THREADS was when NumPy loaded."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController()  # finds the loaded BLAS libraries once (a few ms)
    return _BLAS.limit(limits=1, user_api="blas")


# -- quiet: the machine to the GUI while it draws what a person waits for -----------------------

_QUIET_UNTIL = [0.0]  # time.monotonic(); a list: set on the GUI thread, read by workers (one float, atomic)


def keep_quiet(seconds: float) -> None:
    """The GUI draws what a person waits for (a key on the stage, a scene asked for): background work that
    can wait (the runs a lecture trains ahead) waits ``seconds`` from now. Beside such a training, a scene
    took twice as long to draw: the training's Python took the interpreter's lock from the drawing."""
    _QUIET_UNTIL[0] = max(_QUIET_UNTIL[0], time.monotonic() + seconds)


def quiet_left() -> float:
    """Seconds until background work that can wait may go on (0 when it may now); any thread."""
    return max(0.0, _QUIET_UNTIL[0] - time.monotonic())


# -- the cycle collector ------------------------------------------------------------------------
#
# Python's automatic collection runs in whichever thread crosses an allocation threshold. A job
# that allocates (a model pass, a save's lists, a training step) would then finalize the cycles
# the GUI thread left behind (a closed dialog, a plot and its items) on the job's thread: a Qt
# object destroyed off its thread, which Qt warns about (timers) or crashes on (a paint under
# way). So while the window runs, automatic collection is off and the GUI thread collects from
# a timer, generation by generation when the counts pass the thresholds, as pyqtgraph's
# GarbageCollector does. Refcount frees are not affected: a job must never hold the last
# reference to a Qt object (the workers above are released on the GUI thread, see _park).
#
# A full pass walks every object that Python tracks, and after the imports that is about 96,000
# (Qt's bindings, NumPy, SciPy, pyqtgraph: functions, descriptors, dicts), which took 40-50 ms of
# a turn before it even reached the garbage, 100-330 ms with a model loaded on a busy machine. So
# the collector starts by moving what is alive then (the loaded modules, before any window) out
# of the collector's sight (gc.freeze): they live as long as the application. Full passes then
# walk only what was made since, a few ms, and come every few seconds, so each frees little.
# The cost: an object alive at the start that later becomes garbage in a cycle is never freed
# while the collector runs; that is bounded by what was alive once, and it does not grow.

COLLECT_INTERVAL_MS = 500
FULL_PASS_SPACING_S = 2.0  # at least this long between two full passes (and 20 times a pass's length)


class _Collector(QtCore.QObject):
    def __init__(self, app):
        super().__init__(app)
        self.thresholds = gc.get_threshold()
        self.next_full = 0.0
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self.check)
        gc.disable()
        gc.collect()  # what is garbage now is freed, not kept for good
        gc.freeze()  # what is alive now (the loaded modules) is left out of every pass (see above)
        self.timer.start(COLLECT_INTERVAL_MS)
        app.aboutToQuit.connect(self.stop)

    def check(self) -> None:
        """Collect the generations whose counts passed their thresholds (GUI thread)."""
        if gc.isenabled():  # turned back on meanwhile (a save that paused collections and resumed)
            gc.disable()
        counts = gc.get_count()
        for generation in (2, 1, 0):  # the oldest generation due takes the younger ones with it
            # The oldest is due once anything reached it: with the loaded modules frozen a full pass
            # walks only the objects made since, and an export's figure, dropped, waits in it.
            if counts[generation] <= (0 if generation == 2 else self.thresholds[generation]):
                continue
            if generation == 2 and time.monotonic() < self.next_full:
                continue  # spaced so that full passes take <= 5% of the time, and each frees little
            start = time.monotonic()
            gc.collect(generation)
            if generation == 2:
                took = time.monotonic() - start
                self.next_full = time.monotonic() + max(FULL_PASS_SPACING_S, 20 * took)
            break
        _ENDED[:] = [w for w in _ENDED if shiboken6.isValid(w)]

    def stop(self) -> None:
        """Automatic collection back on (the application is quitting, or its window is gone); once."""
        if getattr(self, "stopped", False):
            return
        self.stopped = True
        self.timer.stop()
        gc.unfreeze()  # what was kept out of sight is collected again, as Python does by itself
        gc.enable()
        self.setParent(None)  # a later window of the same application may start one again
        self.deleteLater()


def collect_on_gui_thread(app=None):
    """Turn automatic garbage collection off and collect on the GUI thread from a timer, once per
    application (``attn-studio`` and every window call this; the application's ``aboutToQuit`` or the
    returned collector's ``stop()`` turns it back on). What is alive when it starts is kept out of the
    collector's passes until it stops. Returns the collector, or None if one was running."""
    app = app or QtCore.QCoreApplication.instance()
    if app is None or app.findChild(_Collector) is not None:
        return None
    return _Collector(app)
