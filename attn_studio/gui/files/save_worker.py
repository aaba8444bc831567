"""Saves and autosaves off the window's thread, one at a time.

Writing the largest session the studio allows (a million edited weight cells,
some 45 MB of JSON) takes seconds; on the GUI thread the window would freeze
for all of them, every few seconds while autosave runs. :class:`SaveQueue`
runs each :class:`~attn_studio.document.SaveJob` off the GUI thread as a
``gui.worker.Job`` (the state is immutable, so it can be serialised there
while the person keeps editing), whose outcome comes back on the GUI thread.

Jobs run one at a time, in order, and the next starts only after the last
one's outcome was handled, so an autosave never runs into the next autosave,
nor into a save. A queued autosave is taken from the document when it starts
(``make`` is called then), so a newer state supersedes an older one that had
not started yet, and only one autosave waits at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from PySide6 import QtCore

from ...document import SaveJob
from ...session import SessionError
from ..qt.worker import Job


@dataclass
class _Task:
    make: Callable[[], SaveJob | None]  # called when the task starts: the job, or None for nothing to do
    on_done: Callable[[SaveJob, str | None], None]  # (job, error message or None), on the GUI thread
    autosave: bool
    job: SaveJob | None = None
    error: str | None = None
    worker: Job | None = None


def _write(task: _Task) -> None:
    """The background half: write the file; a failure is kept on the task as a message for a person."""
    try:
        task.job.run()
    except SessionError as exc:
        task.error = str(exc)
    except OSError as exc:
        task.error = f"cannot write {task.job.path}: {exc.strerror or exc}"
    except Exception as exc:  # a bug must not leave the queue stuck: report it like a failed save
        task.error = f"the file could not be written ({type(exc).__name__}: {exc})"


class SaveQueue(QtCore.QObject):
    """Runs save jobs one at a time on a background thread; outcomes arrive on the GUI thread."""

    busy_changed = QtCore.Signal(bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._pending: list[_Task] = []
        self._running: _Task | None = None

    @property
    def busy(self) -> bool:
        """True while a job runs or waits."""
        return self._running is not None or bool(self._pending)

    def submit(self, make: Callable[[], SaveJob | None], on_done: Callable[[SaveJob, str | None], None], *,
               autosave: bool = False) -> None:
        """Queue a job; ``make`` builds it when it starts. A waiting autosave is replaced by a newer one."""
        if autosave:
            self._pending = [t for t in self._pending if not t.autosave]
        self._pending.append(_Task(make, on_done, autosave))
        self._start_next()

    def _start_next(self) -> None:
        was_busy = self._running is not None
        while self._running is None and self._pending:
            task = self._pending.pop(0)
            task.job = task.make()
            if task.job is None:
                continue  # nothing to write any more (the work was saved meanwhile)
            self._running = task
            task.worker = Job(_write, task, on_end=lambda task=task: self._deliver(task)).submit()
        if was_busy != (self._running is not None):
            self.busy_changed.emit(self._running is not None)

    def _deliver(self, task: _Task) -> None:
        if task is not self._running:
            return  # already handled by wait()
        self._running = None
        try:
            task.on_done(task.job, task.error)
        finally:
            self._start_next()
            if self._running is None:
                self.busy_changed.emit(False)

    def wait(self, *, drop_autosaves: bool = False) -> None:
        """Finish every job now, on this thread (closing the window); waiting autosaves may be dropped."""
        if drop_autosaves:
            self._pending = [t for t in self._pending if not t.autosave]
        while self._running is not None:
            self._running.worker.take()  # delivered here, on this thread
            if drop_autosaves:
                self._pending = [t for t in self._pending if not t.autosave]
