"""An animation written from the window: frames drawn on the GUI thread a piece at a time, encoded on
the worker, with progress and Cancel.

Figures are widgets, so frames are drawn on the GUI thread, one per turn of the event loop (and a
few colour-level measurements per turn before them): the window answers between them. The frames go
through a short queue to ``animation.write_animation``, which runs as a ``qt.worker.Job`` and writes
the file atomically; Cancel stops the drawing and tells the writer, which then writes nothing.

A frame source is anything with ``count`` (frames), ``preparing`` (units of work before the first
frame), ``prepare(i)``, ``frame(i) -> (H, W, 3) uint8`` (frames asked in order) and ``close()``:
``animation_frames.FrameMaker`` (a view over a control) and ``training.animation.RunReplay`` (a
training run replayed) are the two.
"""

from __future__ import annotations

import math
import os
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from ...matrices import ExportError, check_output_path

# Formats the writer knows, by suffix, as the dialog offers them.
ANIMATION_FORMATS = {".gif": "GIF (loops in slides and browsers)", ".mp4": "MP4 video (H.264)",
                     ".webm": "WebM video", ".png": "Animated PNG"}
MAX_FPS = 60.0
MAX_HOLD = 60.0
PIECE_BUDGET = 0.015  # seconds of preparation per turn of the event loop
QUEUED_FRAMES = 3     # frames drawn ahead of the encoder, at most (memory: 3 frames)
_END, _FAILED, _CANCELLED = object(), object(), object()


class _Stopped(Exception):
    """Raised into the writer when the frames stop coming (Cancel, or a frame that failed): it then
    removes its temporary file and writes nothing."""


def check_animation_path(path) -> Path:
    """``path`` if an animation can be written there (a known suffix, an existing writable folder, not a
    folder itself); else ``ExportError`` with the reason."""
    if not str(path).strip():
        raise ExportError("choose a file to write the animation to")
    path = Path(path)
    if path.suffix.lower() not in ANIMATION_FORMATS:
        raise ExportError(f"{path.name}: an animation is written as {', '.join(ANIMATION_FORMATS)}; "
                          f"“{path.suffix or 'no suffix'}” is none of them")
    path = check_output_path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ExportError(f"cannot write {path}: the folder {folder} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise ExportError(f"cannot write {path}: the file is read-only")
    return path


def check_timing(fps, hold) -> tuple[float, float]:
    """``(fps, hold)`` checked: 0 < fps ≤ 60 frames a second, 0 ≤ hold ≤ 60 seconds; else ``ExportError``."""
    fps, hold = float(fps), float(hold)
    if not (math.isfinite(fps) and 0 < fps <= MAX_FPS):
        raise ExportError(f"the frame rate must be above 0 and at most {MAX_FPS:g} frames a second, got {fps:g}")
    if not (math.isfinite(hold) and 0 <= hold <= MAX_HOLD):
        raise ExportError(f"the last frame is held 0 to {MAX_HOLD:g} seconds, got {hold:g}")
    return fps, hold


@dataclass(frozen=True)
class Timing:
    """How the frames play: ``fps``, the last frame held ``hold`` seconds, ``loop`` (GIF and APNG)."""

    fps: float = 10.0
    hold: float = 1.0
    loop: bool = True


class AnimationExport(QtCore.QObject):
    """One animation being written: ``source``'s frames to ``path``. Call :meth:`start`.

    ``progressed(done, total, text)`` as it goes; ``ended(ok, message)`` once, when the file is written
    (ok), or not: cancelled, or refused (the message says why; nothing was written either way).
    """

    progressed = QtCore.Signal(int, int, str)
    ended = QtCore.Signal(bool, str)

    def __init__(self, source, path, timing: Timing, parent=None):
        super().__init__(parent)
        self.source, self.path, self.timing = source, Path(path), timing
        self.frames: queue.Queue = queue.Queue(QUEUED_FRAMES)
        self.prepared = self.drawn = self.encoded = 0
        self.job = None
        self.result: tuple[bool, str] | None = None
        self._cancelled = False
        # Set when no more frames will come (Cancel, a failure, the window or the application gone):
        # the writer waiting for a frame then stops and writes nothing.
        self.stopped = threading.Event()
        stopped = self.stopped
        if parent is not None:
            parent.destroyed.connect(lambda *_: stopped.set())  # a Python event: safe once Qt's side is gone
        app = QtCore.QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.cancel)
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(0)
        self.timer.timeout.connect(self._piece)

    @property
    def total(self) -> int:
        """Units of work: the preparation, then each frame drawn."""
        return self.source.preparing + self.source.count

    @property
    def running(self) -> bool:
        return self.result is None

    def start(self) -> None:
        self.progressed.emit(0, self.total, "Measuring the colour scales…")
        self.timer.start()

    # -- the GUI thread's pieces --------------------------------------------------------
    def _piece(self) -> None:
        try:
            if self.prepared < self.source.preparing:
                deadline = time.monotonic() + PIECE_BUDGET
                while self.prepared < self.source.preparing and time.monotonic() < deadline:
                    self.source.prepare(self.prepared)
                    self.prepared += 1
                self.progressed.emit(self.prepared, self.total, "Measuring the colour scales…")
                return
            if self.job is None:
                self._start_writer()
            if self.drawn < self.source.count:
                if self.frames.full():
                    self.timer.setInterval(10)  # the encoder is behind: wait for it, the window stays live
                    return
                self.timer.setInterval(0)
                self.frames.put(self.source.frame(self.drawn))  # one frame per turn of the event loop
                self.drawn += 1
                self.progressed.emit(self.source.preparing + self.drawn, self.total,
                                     f"Frame {self.drawn} of {self.source.count}")
                if self.drawn == self.source.count:
                    self.frames.put(_END)
                    self.timer.stop()
                    self.progressed.emit(self.total, self.total, "Encoding the last frames…")
        except (ExportError, ValueError) as exc:
            self._fail(str(exc))
        except Exception as exc:  # a figure that cannot be drawn: said, nothing written, the window goes on
            self._fail(f"a frame could not be drawn ({type(exc).__name__}: {exc})")

    def _start_writer(self) -> None:
        from ...animation import write_animation
        from ..qt.worker import Job

        count, timing, path = self.source.count, self.timing, self.path

        job_box = []

        def frames():
            while True:
                try:
                    item = self.frames.get(timeout=0.5)
                except queue.Empty:
                    if self.stopped.is_set() or (job_box and job_box[0].cancelled()):
                        raise _Stopped("cancelled")  # no frame is coming any more
                    continue
                if item is _CANCELLED or (job_box and job_box[0].cancelled()):
                    raise _Stopped("cancelled")  # an end of the frames would be written as a shorter file
                if item is _FAILED:
                    raise _Stopped("the frames could not be drawn")
                if item is _END:
                    return
                yield item

        def write(progress, cancelled):
            return write_animation(frames(), path, fps=timing.fps, hold=timing.hold, loop=timing.loop,
                                   total=count, progress=progress, cancelled=cancelled)

        self.job = Job(write, controls=True, on_result=self._written, on_error=self._refused,
                       on_cancel=self._cancelled_late,
                       on_progress=self._encoded)
        job_box.append(self.job)
        self.job.submit()

    def _cancelled_late(self) -> None:
        if self.job.error is None and self.job.value:  # Cancel came after the last frame had gone in
            self._end(True, f"Wrote {self.job.value} frames to {self.path} (Cancel came after the last frame)")
        else:
            self._end(False, "Cancelled: nothing was written")

    def _encoded(self, done: int, total: int) -> None:
        self.encoded = done

    # -- endings --------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop drawing and tell the writer: nothing is written."""
        if not self.running or self._cancelled:
            return
        self._cancelled = True
        self.stopped.set()
        self.timer.stop()
        if self.job is None:
            self._end(False, "Cancelled: nothing was written")
            return
        self.job.quit()
        self._unblock(_CANCELLED)

    def _fail(self, message: str) -> None:
        self.stopped.set()
        self.timer.stop()
        if self.job is None:
            self._end(False, message)
            return
        self._message = message
        self.job.quit()  # nothing is written
        self._unblock(_FAILED)

    def _unblock(self, item) -> None:
        # The writer may be waiting for a frame: empty the queue and give it the end.
        while True:
            try:
                self.frames.get_nowait()
            except queue.Empty:
                break
        self.frames.put(item)

    def _written(self, count) -> None:
        self._end(True, f"Wrote {self.source.count} frames to {self.path}")

    def _refused(self, exc: BaseException) -> None:
        self._end(False, str(exc))

    def _end(self, ok: bool, message: str) -> None:
        if self.result is not None:
            return
        message = getattr(self, "_message", None) or message
        self.result = (ok, message)
        self.timer.stop()
        self.source.close()
        self.ended.emit(ok, message)

    def wait(self, timeout: float = 60.0) -> bool:
        """Run the event loop until the animation has ended (scripts, tests); False after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while self.running and time.monotonic() < deadline:
            QtWidgets.QApplication.processEvents(QtCore.QEventLoop.AllEvents, 50)
            time.sleep(0.001)  # not a busy loop: the writer's thread needs the other core
            if self.job is not None and self.job.done():
                self.job.deliver()
        return not self.running


class ProgressDialog(QtWidgets.QProgressDialog):
    """The animation's progress and its Cancel button; not modal, so the window stays in use."""

    def __init__(self, export: AnimationExport, title: str, parent=None):
        super().__init__(title, "Cancel", 0, max(export.total, 1), parent)
        self.setObjectName("animationProgress")
        self.setWindowTitle("Export animation")
        self.setWindowModality(QtCore.Qt.NonModal)
        self.setMinimumDuration(0)
        self.setAutoClose(False)
        self.setAutoReset(False)
        self.export = export
        self.canceled.connect(export.cancel)
        export.progressed.connect(self._progressed)
        export.ended.connect(lambda ok, message: self.close())

    def _progressed(self, done: int, total: int, text: str) -> None:
        self.setMaximum(max(total, 1))
        self.setValue(done)
        self.setLabelText(text)


__all__ = ["AnimationExport", "ProgressDialog", "Timing", "ANIMATION_FORMATS", "check_animation_path",
           "check_timing"]
