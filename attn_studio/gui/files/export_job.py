"""A figure exported or copied from the window in steps, so that the window never freezes.

File → Export and Copy figure of a large figure (Compare of an 80-token sentence is a 3758 × 10764
image at 2×) used to hold the GUI thread for seconds: building the figure's heatmaps, painting
them, compressing the PNG. A :class:`FigureExport` does the same work in pieces, one piece per
event-loop turn, each a few tens of milliseconds:

1. the figure is built (``find_panel``); a sheet of heatmaps lets the event loop run a turn
   between its heatmaps (``sheet.breathing``), user input held back until it is whole;
2. a raster figure (PNG, the clipboard's image) is painted band by band (``banded_image.BandedImage``:
   the very pixels ``render_panel`` paints, up to the image scaler's rounding where a band starts);
3. SVG and PDF are drawn in steps too (``vector_figure.SteppedVector``: the figure first, its
   heatmaps' values and token axes after it, a few at a time);
4. the PNG is compressed and every file written atomically on a worker thread (``qt.worker.Job``).

The window's :class:`~.export_actions.ExportActions` runs one export at a time and queues the
next; the status line says how far it is. A window closed meanwhile ends the export quietly.
"""

from __future__ import annotations

import gc
import time
from typing import Callable

import shiboken6
from PySide6 import QtCore, QtWidgets

from ...matrices import ExportError, check_output_path, write_output
from . import export, figures
from . import sheet as sheets
from .banded_image import BandedImage
from .vector_figure import SteppedVector

BREATH_S = 0.01  # while a figure is built, the event loop runs a turn at most this often
BAND_S = 0.015  # CPU seconds a band of a raster figure aims at (a turn of the event loop stays well under 50 ms)


YOUNG_PASSES = 2  # the young objects' collection runs once this many passes over the youngest are behind it


def _young_due() -> bool:
    """True when the two young generations are due for collection: the youngest has been collected
    ``YOUNG_PASSES`` times since.

    A figure built and dropped (the sheets not chosen, the numbers' holders, the figure once written)
    leaves tens of thousands of objects in reference cycles. The window's collector
    (``qt.worker.collect_on_gui_thread``) takes the second generation after ten passes over the first,
    and an export's garbage then went in one pass of 60 to 120 ms; collected this often, each pass
    holds a sheet's worth or less. The oldest generation is left to the window's collector."""
    if gc.isenabled():
        return False  # Python collects by itself (no window's collector): nothing piles up
    return gc.get_count()[1] >= YOUNG_PASSES


class FigureExport(QtCore.QObject):
    """Panel ``name`` of ``window`` (or the figure ``make_panel()`` builds) exported to ``path`` as ``kind``
    ("png", "svg", "pdf"), or put on the clipboard ("copy"), one piece per event-loop turn. ``on_end(ok, message)`` is called once, on the
    GUI thread, when it is over; ``status(text, ms)`` shows its progress."""

    ended = QtCore.Signal()

    def __init__(self, window, name: str, kind: str, path=None, scale: float = 2.0,
                 status: Callable[[str, int], None] | None = None,
                 on_end: Callable[[bool, str], None] | None = None, make_panel: Callable | None = None):
        super().__init__()
        self._make_panel = make_panel  # builds the figure (else the panel called ``name``)
        self.window, self.name, self.kind, self.scale = window, name, kind, float(scale)
        self.path = check_output_path(path) if kind != "copy" else None
        self._status = status or (lambda text, ms=0: None)
        self._on_end = on_end
        self.ok: bool | None = None  # None while it runs
        self.message = ""
        self.panel = None
        self._banded: BandedImage | None = None
        self._vector: SteppedVector | None = None
        self._steps = self._work()
        self._waiting = None  # a worker job the next piece waits for
        self._last_breath = 0.0

    # -- running -------------------------------------------------------------------
    def start(self) -> "FigureExport":
        """Begin with the next event-loop turn."""
        QtCore.QTimer.singleShot(0, self._turn)
        return self

    def running(self) -> bool:
        return self.ok is None

    def _alive(self) -> bool:
        return shiboken6.isValid(self.window)

    def _turn(self) -> None:
        if self.ok is not None:
            return
        if _young_due():
            # A turn of its own: a young pass walks the figure being built (up to 25 ms), and with a piece
            # after it made turns of 50-60 ms.
            gc.collect(1)
            QtCore.QTimer.singleShot(1, self._turn)
            return
        if not self._alive():
            self._end(False, "")  # the window is gone: nothing to tell
            return
        try:
            waiting = next(self._steps)
        except StopIteration:
            return
        except ExportError as exc:
            self._end(False, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 (a figure that fails says so; the window keeps running)
            self._end(False, f"the figure could not be drawn: {exc}")
            return
        if waiting is None:
            # The next piece after a millisecond, not at once: a zero timer re-armed from its own
            # turn can run again before the window's other timers that are due.
            QtCore.QTimer.singleShot(1, self._turn)

    def _work(self):
        """The pieces: each ``yield`` lets the event loop run; a yielded worker job is waited for."""
        from ..qt.worker import Job

        what = "Copying the figure" if self.kind == "copy" else f"Exporting {self.name} as {self.kind.upper()}"
        self._status(f"{what}…", 0)
        with sheets.breathing(self._breathe):
            panel = self.panel = (self._make_panel() if self._make_panel is not None
                                  else export.find_panel(self.window, self.name))
        export.show_panel(panel)
        yield None
        drawing = None
        if self.kind in ("svg", "pdf", "copy"):
            # First for a copy: its layouts held while it is drawn, the SVG is the one drawn at once.
            vector = self._vector = SteppedVector(panel, "svg" if self.kind == "copy" else self.kind)
            while not vector.step():
                share = vector.progress / 2 if self.kind == "copy" else vector.progress
                self._status(f"{what}… {round(100 * share)} %", 0)
                yield None
            drawing = vector.data()
        image = None
        if self.kind in ("png", "copy"):
            banded = self._banded = BandedImage(panel, self.scale, budget=BAND_S)
            while not banded.step():
                share = 0.5 + banded.progress / 2 if self.kind == "copy" else banded.progress
                self._status(f"{what}… {round(100 * share)} %", 0)
                yield None
            image = banded.image
        yield None  # the last piece drawn was a turn's work; freeing the figure (deleting its items) is another
        deleted = self._free_panel()
        while not figures.break_apart(deleted, BAND_S):  # its Python side, piece by piece
            yield None
        dpi = self.scale * figures.BASE_DPI
        if self.kind == "png":
            self._status(f"Writing {self.name} to {self.path}…", 0)
            yield from self._on_worker(Job, figures.write_png_image, image, self.path, dpi)
            self._end(True, f"Exported {self.name} as PNG to {self.path}")
        elif self.kind in ("svg", "pdf"):
            self._status(f"Writing {self.name} to {self.path}…", 0)
            yield from self._on_worker(Job, write_output, self.path, drawing)
            self._end(True, f"Exported {self.name} as {self.kind.upper()} to {self.path}")
        else:
            png = yield from self._on_worker(Job, figures.png_off_the_gui_thread, image, dpi)
            figures.put_on_clipboard(image, png, drawing)
            self._end(True, "Figure copied")

    def _on_worker(self, job_class, func, *args):
        """Run ``func(*args)`` on a worker thread; the next piece comes when it is done. Returns its value."""
        outcome = {}

        def result(value):
            outcome["value"] = value
            self._resume()

        def error(exc):
            outcome["error"] = exc
            self._resume()

        job = self._waiting = job_class(func, *args, on_result=result, on_error=error, on_stale=self._resume,
                                        current=lambda: self.ok is None)
        job.submit()
        yield job
        self._waiting = None
        if "error" in outcome:
            exc = outcome["error"]
            if isinstance(exc, OSError):
                raise ExportError(f"cannot write {self.path}: {exc.strerror or exc}")
            raise ExportError(str(exc))
        return outcome.get("value")

    def _resume(self) -> None:
        QtCore.QTimer.singleShot(0, self._turn)

    def _breathe(self) -> None:
        """Between two parts of the figure being built: let the window paint and its timers run."""
        now = time.perf_counter()
        young = _young_due()
        if young or now - self._last_breath >= BREATH_S:
            QtWidgets.QApplication.processEvents(QtCore.QEventLoop.ExcludeUserInputEvents)
            if young:  # between two turns of the event loop, not added to a part of the figure
                gc.collect(1)
                QtWidgets.QApplication.processEvents(QtCore.QEventLoop.ExcludeUserInputEvents)
            self._last_breath = time.perf_counter()

    # -- ending ----------------------------------------------------------------------
    def _free_panel(self) -> list:
        """Delete the figure's C++ side; returns the Python objects of what was deleted."""
        if self._banded is not None:
            self._banded.close()
        if self._vector is not None:
            self._vector.close()
        if self.panel is not None:
            panel, self.panel = self.panel, None
            return export.done_with(panel, empty=False)
        return []

    def wait(self, timeout: float = 120.0) -> bool:
        """Run the event loop until the export is over (the window stays live); False after ``timeout`` s."""
        if self.ok is None:
            loop = QtCore.QEventLoop()
            self.ended.connect(loop.quit)
            limit = QtCore.QTimer(loop)  # goes with the loop: never fires on a loop that is gone
            limit.setSingleShot(True)
            limit.timeout.connect(loop.quit)
            limit.start(int(timeout * 1000))
            if self.ok is None:
                loop.exec()
            self.ended.disconnect(loop.quit)
        return self.ok is not None

    def _end(self, ok: bool, message: str) -> None:
        if self.ok is not None:
            return
        self.ok, self.message = ok, message
        try:
            self._free_panel()
        except RuntimeError:  # deleted with its window meanwhile
            pass
        if not self._steps.gi_running:  # ended from outside its own pieces (an error, a closed window)
            self._steps.close()
        # The pieces' frame holds this export: let go of them and of what drew the figure, else the
        # export and the deleted items its drawings noted wait for the collector's next full pass.
        self._steps, self._vector, self._banded = iter(()), None, None
        if self._on_end is not None:
            self._on_end(ok, message)
        self.ended.emit()
