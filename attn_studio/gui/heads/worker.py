"""The Head Lab's long measures off the GUI thread: importance (seconds) and attention flow (about one).

:class:`HeadJob` runs one function on its own ``QThread`` and hands its
progress, result, failure or cancellation back to the GUI thread by queued
signals, so the window keeps painting while every head of a model is ablated.
Cancelling sets an event the function polls (``head_importance``'s ``cancel``).
"""

from __future__ import annotations

import threading
import traceback
from typing import Callable

from PySide6 import QtCore

from ...pretrained.heads import Cancelled


class _Thread(QtCore.QThread):
    progressed = QtCore.Signal(int, int)
    succeeded = QtCore.Signal(object)
    failed = QtCore.Signal(str)
    cancelled = QtCore.Signal()

    def __init__(self, work, stop: threading.Event, parent=None):
        super().__init__(parent)
        self._work, self._stop = work, stop

    def run(self) -> None:
        try:
            result = self._work(lambda done, total: self.progressed.emit(done, total), self._stop.is_set)
        except Cancelled:
            self.cancelled.emit()
        except Exception as exc:  # every failure becomes a message; the window keeps running
            if not isinstance(exc, ValueError):
                traceback.print_exc()
            self.failed.emit(str(exc) or type(exc).__name__)
        else:
            if self._stop.is_set():
                self.cancelled.emit()
            else:
                self.succeeded.emit(result)


class HeadJob(QtCore.QObject):
    """One measure at a time, on a thread of its own.

    ``start(work, tag)`` runs ``work(progress, cancel)`` (``progress(done,
    total)``, ``cancel() -> bool``); a new start cancels the job running and
    its result is dropped. Signals, on the GUI thread: ``progress(done,
    total)``, ``finished(tag, result)``, ``failed(tag, message)``,
    ``cancelled(tag)``, ``running(bool)``.
    """

    progress = QtCore.Signal(int, int)
    finished = QtCore.Signal(object, object)
    failed = QtCore.Signal(object, str)
    cancelled = QtCore.Signal(object)
    running = QtCore.Signal(bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._thread: _Thread | None = None
        self._stop: threading.Event | None = None
        self._generation = 0
        # Every thread started, held until it has ended: a QThread let go of while it runs aborts the program.
        self._alive: list = []

    def is_running(self) -> bool:
        return self._thread is not None

    def start(self, work: Callable, tag=None) -> None:
        """Run ``work`` off the GUI thread (cancelling a job still running)."""
        self.cancel(quiet=True)
        self._generation += 1
        generation = self._generation
        stop = threading.Event()
        thread = _Thread(work, stop)
        current = lambda: generation == self._generation  # noqa: E731
        thread.progressed.connect(lambda d, t: current() and self.progress.emit(d, t), QtCore.Qt.QueuedConnection)
        thread.succeeded.connect(lambda r: self._end(current(), lambda: self.finished.emit(tag, r)),
                                 QtCore.Qt.QueuedConnection)
        thread.failed.connect(lambda m: self._end(current(), lambda: self.failed.emit(tag, m)),
                              QtCore.Qt.QueuedConnection)
        thread.cancelled.connect(lambda: self._end(current(), lambda: self.cancelled.emit(tag)),
                                 QtCore.Qt.QueuedConnection)
        thread.finished.connect(lambda: self._forget(thread), QtCore.Qt.QueuedConnection)
        self._alive.append(thread)
        self._thread, self._stop = thread, stop
        self.running.emit(True)
        thread.start()

    def _end(self, current: bool, emit) -> None:
        if not current:
            return
        self._thread, self._stop = None, None
        self.running.emit(False)
        emit()

    def _forget(self, thread) -> None:
        thread.wait()  # "finished" is sent just before the thread ends: let it end
        if thread in self._alive:
            self._alive.remove(thread)

    def cancel(self, quiet: bool = False) -> None:
        """Ask the running job to stop; it says ``cancelled`` when it has (``quiet``: drop it silently)."""
        if self._thread is None:
            return
        self._stop.set()
        if quiet:
            self._generation += 1
            self._thread, self._stop = None, None
            self.running.emit(False)

    def wait(self, msecs: int = 30_000) -> None:
        """Stop and wait for every thread (the window closing)."""
        if self._stop is not None:
            self._stop.set()
        for thread in list(self._alive):
            thread.wait(msecs)
