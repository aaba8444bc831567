"""The Head Lab's long measures off the GUI thread: importance (seconds) and attention flow (about one).

:class:`HeadJob` runs one function at a time as a ``gui.worker.Job``, whose progress, result,
failure or cancellation come back on the GUI thread, so the window keeps painting while every
head of a model is ablated. Cancelling asks the function to stop (``head_importance``'s
``cancel`` polls it).
"""

from __future__ import annotations

from typing import Callable

import shiboken6
from PySide6 import QtCore

from ...pretrained.heads import Cancelled
from ..qt.worker import Job


class HeadJob(QtCore.QObject):
    """One measure at a time, off the GUI thread.

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
        self._job: Job | None = None
        self._generation = 0
        self._alive: list[Job] = []  # every job started and not ended: the window waits for them on closing

    def is_running(self) -> bool:
        return self._job is not None

    def start(self, work: Callable, tag=None) -> None:
        """Run ``work`` off the GUI thread (cancelling a job still running)."""
        self.cancel(quiet=True)
        self._generation += 1
        generation = self._generation
        job = Job(work, controls=True, current=lambda: generation == self._generation,
                  on_progress=self.progress.emit,
                  on_result=lambda result: self._end(lambda: self.finished.emit(tag, result)),
                  on_error=lambda exc: self._failed(tag, exc),
                  on_cancel=lambda: self._end(lambda: self.cancelled.emit(tag)),
                  on_end=lambda: self._forget(job))
        self._alive.append(job)
        self._job = job
        self.running.emit(True)
        job.submit()

    def _failed(self, tag, exc: BaseException) -> None:
        if isinstance(exc, Cancelled):
            self._end(lambda: self.cancelled.emit(tag))
            return
        if not isinstance(exc, ValueError):  # a bug: its traceback; a refused input: its message alone
            import traceback

            traceback.print_exception(exc)
        self._end(lambda: self.failed.emit(tag, str(exc) or type(exc).__name__))

    def _end(self, emit) -> None:
        if not shiboken6.isValid(self):  # the window closed while the job ran: nobody to tell
            return
        self._job = None
        self.running.emit(False)
        emit()

    def _forget(self, job: Job) -> None:
        if job in self._alive:
            self._alive.remove(job)

    def cancel(self, quiet: bool = False) -> None:
        """Ask the running job to stop; it says ``cancelled`` when it has (``quiet``: drop it silently)."""
        if self._job is None:
            return
        self._job.quit()
        if quiet:
            self._generation += 1
            self._job = None
            self.running.emit(False)

    def wait(self, msecs: int = 30_000) -> None:
        """Stop and wait for every job (the window closing)."""
        for job in list(self._alive):
            job.quit()
            job.wait(msecs / 1000)
