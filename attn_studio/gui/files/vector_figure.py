"""A figure drawn to SVG or PDF in steps, so that the window's event loop runs between them.

Drawn in one piece (:func:`figures.svg_bytes`), Compare of an 80-token sentence held the GUI thread
for a second or more: nearly all of it is writing the cells' values, 6,400 texts a heatmap, each one
an SVG ``<text>`` element or a PDF text object. :class:`SteppedVector` draws the same figure onto
the SVG generator or PDF writer with one painter kept open across several event-loop turns:

1. the figure in one piece, every heatmap's values and token axes left out (the cells, titles,
   colour bars: a few tens of milliseconds);
2. what was left out, with the painter as the figure's paint had it there (transform, clip, font,
   pen), each turn as much as ``budget`` seconds allow: an axis at a time (a plot's as well as a
   heatmap's tokens: a training panel's ten axes took 55-60 ms drawn with the rest), and the values a
   few rows of cells at a time, each value written once by the heatmap's own code
   (``CellOverlay._draw_values``), so every text lands where a one-piece drawing puts it;
3. the painter ended (the SVG or PDF engine writes the file's bytes), and the file written by a
   worker thread.

Why not record a ``QPicture`` and play it onto the generator on a worker thread: PySide holds
Python's lock through ``QPicture.play`` and ``QPainter.end``, so the GUI thread waited for the whole
playing (0.3–0.5 s for Compare of 80 tokens), as it waited for Qt's PNG encoder.

The values and the axes come after the rest of the figure in the file (a one-piece drawing writes
them before the items painted after them), in the order a one-piece drawing has them: nothing of a
page figure painted after them is drawn over a cell's value or a token's label (the tests compare
the two drawings' pixels). A heatmap that draws over its values (a pinned cell's frame, the query row's outline) or
writes an overflow label keeps its values in step 1; a part of the window itself (the whole window)
is drawn in one piece, as it may change between two turns.
"""

from __future__ import annotations

import contextlib
import time

import numpy as np
import shiboken6
from PySide6 import QtCore, QtGui

from ...matrices import ExportError
from ..qt.pg import ExportMode, pg
from .layouts_held import LayoutsHeld
from ..views.cells import CellOverlay
from ..views.heatmap import exporting
from ..views.token_axis import TokenAxis, query_outlined, registered_heatmaps
from . import figures
from .panels import as_panel

KINDS = ("svg", "pdf")


class _PainterState:
    """What an item's paint finds in its painter, noted to paint it the same way later."""

    def __init__(self, painter: QtGui.QPainter):
        # The device transform holds the view's and the page's offsets (QWidget.render's redirection).
        self.device = QtGui.QTransform(painter.deviceTransform())
        self.clip = QtGui.QPainterPath(painter.clipPath()) if painter.hasClipping() else None
        self.font = QtGui.QFont(painter.font())
        self.pen, self.brush = QtGui.QPen(painter.pen()), QtGui.QBrush(painter.brush())
        self.opacity = painter.opacity()
        self.hints = painter.renderHints()

    @contextlib.contextmanager
    def on(self, painter: QtGui.QPainter):
        painter.save()
        try:
            painter.setWorldTransform(self.device)
            if self.clip is not None:
                painter.setClipPath(self.clip)
            painter.setFont(self.font)
            painter.setPen(self.pen)
            painter.setBrush(self.brush)
            painter.setOpacity(self.opacity)
            painter.setRenderHints(self.hints)
            yield
        finally:
            painter.restore()


class _Values:
    """One heatmap's values, written a few rows of cells at a time by its own code."""

    def __init__(self, overlay: CellOverlay, painter: QtGui.QPainter, args: tuple):
        self.overlay, self.args, self.state = overlay, args, _PainterState(painter)
        written = overlay.written_cells
        rows, cols = np.shape(overlay.overflow)
        self.written = (np.asarray(written, dtype=bool) if written is not None and np.shape(written) == (rows, cols)
                        else np.ones((rows, cols), dtype=bool))
        self.size, self.done_rows = rows, 0

    def draw(self, painter: QtGui.QPainter, rows: int) -> int:
        """Write the values of the next ``rows`` rows of cells; returns how many rows were written."""
        top, bottom = self.done_rows, min(self.size, self.done_rows + max(1, rows))
        chunk = np.zeros_like(self.written)
        chunk[top:bottom] = self.written[top:bottom]
        overlay, kept = self.overlay, self.overlay.written_cells
        with self.state.on(painter):
            overlay.written_cells = chunk  # set directly: set_written would ask for a repaint
            try:
                _WRITE_VALUES(overlay, painter, *self.args)
            finally:
                overlay.written_cells = kept
        self.done_rows = bottom
        return bottom - top

    def done(self) -> bool:
        return self.done_rows >= self.size

    @property
    def work(self) -> tuple[int, int]:
        return self.done_rows, self.size


class _Axis:
    """An axis (its line, ticks and labels: a token axis or a plot's), painted in one piece."""

    def __init__(self, axis: pg.AxisItem, painter: QtGui.QPainter, args: tuple):
        self.axis, self.args, self.state = axis, args, _PainterState(painter)
        self.paint = _PAINT_AXIS if isinstance(axis, TokenAxis) else _PAINT_PLOT_AXIS
        self.painted = False

    def draw(self, painter: QtGui.QPainter, rows: int) -> int:
        with self.state.on(painter):
            self.paint(self.axis, painter, *self.args)
        self.painted = True
        return 0

    def done(self) -> bool:
        return self.painted

    @property
    def work(self) -> tuple[int, int]:
        return int(self.painted) * 8, 8  # an axis is about as much work as 8 rows of values


_WRITE_VALUES = CellOverlay._draw_values
_PAINT_AXIS = TokenAxis.paint
_PAINT_PLOT_AXIS = pg.AxisItem.paint
_notes: list = []  # while a figure is painted for SteppedVector: what notes a piece left for later


def _values_or_note(overlay, painter, *args):
    if not (_notes and _notes[-1](overlay, painter, args)):
        _WRITE_VALUES(overlay, painter, *args)


def _paint_or_note(axis, painter, *args):
    if not (_notes and _notes[-1](axis, painter, args)):
        _PAINT_AXIS(axis, painter, *args)


def _plot_axis_or_note(axis, painter, *args):
    if not (_notes and _notes[-1](axis, painter, args)):
        _PAINT_PLOT_AXIS(axis, painter, *args)


@contextlib.contextmanager
def _noting(note):
    """While the figure is painted (one call): its heatmaps' values and token axes go to ``note``
    (which returns True when it keeps one for later) instead of being drawn.

    Put on the classes for that call and taken off after it. Module functions, never freed:
    shiboken keeps the last Python override of a C++ virtual (``paint``) it found without a
    reference, and a function made for one paint and freed after it crashed the next paint."""
    _notes.append(note)
    CellOverlay._draw_values, TokenAxis.paint, pg.AxisItem.paint = _values_or_note, _paint_or_note, _plot_axis_or_note
    try:
        yield
    finally:
        CellOverlay._draw_values, TokenAxis.paint, pg.AxisItem.paint = _WRITE_VALUES, _PAINT_AXIS, _PAINT_PLOT_AXIS
        _notes.remove(note)


def _deferrable(overlay: CellOverlay) -> bool:
    """True when nothing the heatmap draws after its values lies over them (so they may come last)."""
    return (overlay.pinned is None and not bool(np.any(overlay.overflow))
            and (overlay.selected_row is None or not query_outlined()))


class SteppedVector:
    """The figure :func:`figures.svg_bytes` / :func:`figures.pdf_bytes` draws, recorded in steps: each
    :meth:`step` does the next piece and returns True once :meth:`data` holds the file's bytes.

    ``budget``: CPU seconds a step aims at (the rows of values written in a step follow the pace of
    the last ones)."""

    def __init__(self, panel, kind: str, title: str | None = None, budget: float = 0.02):
        if kind not in KINDS:
            raise ExportError(f"a stepped vector figure is SVG or PDF, not {kind!r}")
        self.kind, self.budget = kind, budget
        self.panel = as_panel(panel)
        self.layout = figures._Layout(self.panel, title)
        self.page = figures.VectorPage.of(self.layout, kind)
        self._data = QtCore.QByteArray()
        self._buffer = QtCore.QBuffer(self._data)
        self._buffer.open(QtCore.QIODevice.WriteOnly)
        self.device, self.painter = figures.vector_device(self.page, self._buffer)
        self._bytes: bytes | None = None
        self.left: list = []  # what the figure's paint left for later, in its order
        self.rows = 4  # rows of values in the next step; then from the pace of the last ones
        self.pace = 400.0  # rows of values written a second (measured as they are written)
        self.axis_cost = 0.0  # seconds the last token axis took to paint
        self.steps = 0
        self._held: contextlib.ExitStack | None = None
        self._whole = False
        self._drawn = False
        top = self.panel.widget.window()
        # A figure made for the page stays as it is between two turns (nothing on screen paints it);
        # a part of the window itself is drawn in one piece.
        self.stepped = top.testAttribute(QtCore.Qt.WA_DontShowOnScreen)

    # -- steps ---------------------------------------------------------------------
    def step(self) -> bool:
        """Do the next piece; True once the file is whole (:meth:`data`)."""
        if self._whole:
            return True
        self.steps += 1
        if self.stepped and self._held is None and not self._drawn:
            # A piece of its own: every item of the figure put in export mode, the heatmaps' marks
            # redrawn as a figure shows them (and laid out by the event loop before they are painted).
            self._hold(figures._scenes(self.panel))
        elif not self._drawn:
            self._draw_figure()
            self._drawn = True
        elif not all(piece.done() for piece in self.left):
            self._draw_left()
        else:
            # A piece of its own: ending the painter writes the file (a PDF's page compressed, its fonts
            # embedded: some tens of milliseconds for Compare of 80 tokens).
            self.close()
            self._buffer.close()
            self._bytes = bytes(self._data.data())
            self._whole = True
        return self._whole

    @property
    def progress(self) -> float:
        """The share of the work done (0 to 1)."""
        if self._whole:
            return 1.0
        if not self._drawn:
            return 0.0
        done = sum(piece.work[0] for piece in self.left)
        total = sum(piece.work[1] for piece in self.left)
        return 0.1 + 0.9 * done / max(total, 1)

    def data(self) -> bytes:
        """The file's bytes (once :meth:`step` returned True)."""
        if self._bytes is None:
            raise ExportError("the figure is not drawn yet")
        return self._bytes

    def _draw_figure(self) -> None:
        scenes = figures._scenes(self.panel)
        ours = {id(item) for scene in scenes for item in scene.items() if isinstance(item, (CellOverlay, pg.AxisItem))}
        failed: list = []

        def note(item, painter, args) -> bool:
            # Inside Qt's paint an exception must not escape (the process would crash): kept for after it.
            try:
                if failed or id(item) not in ours:
                    return False
                if isinstance(item, CellOverlay):
                    if not _deferrable(item):
                        return False
                    self.left.append(_Values(item, painter, args))
                else:
                    self.left.append(_Axis(item, painter, args))
                return True
            except Exception as exc:  # noqa: BLE001
                failed.append(exc)
                return False

        with contextlib.ExitStack() as modes:
            if self.stepped:
                modes.enter_context(exporting(heatmaps=()))
                modes.enter_context(_noting(note))
            figures.paint_vector(self.painter, self.layout, held=self.stepped)
        if failed:
            raise failed[0]

    def _draw_left(self) -> None:
        start = time.thread_time()  # the work, not the waits for a core on a busy machine
        rows = spent_on_rows = pieces = 0
        with exporting(heatmaps=()):
            for piece in self.left:
                if piece.done():
                    continue
                spent = time.thread_time() - start
                if pieces and isinstance(piece, _Axis) and spent + self.axis_cost > self.budget:
                    break  # an axis is one piece: it waits for the next step rather than make this one long
                left = min(self.rows - rows, int(self.pace * (self.budget - spent)))
                if pieces and isinstance(piece, _Values) and left < 1:
                    break
                pieces += 1  # every step draws something, however small its budget
                begun = time.thread_time()
                drawn = piece.draw(self.painter, left)
                took = time.thread_time() - begun
                if drawn:
                    rows += drawn
                    spent_on_rows += took
                else:
                    self.axis_cost = max(0.8 * self.axis_cost, took)
                if time.thread_time() - start >= self.budget or rows >= self.rows:
                    break
        if rows and spent_on_rows > 0.002:
            # The next step as many rows as the budget allows at this one's pace (at most twice as many).
            self.pace = rows / spent_on_rows
            self.rows = int(max(1, min(2 * self.rows, self.pace * self.budget)))

    # -- holding the figure ------------------------------------------------------------
    def _hold(self, scenes) -> None:
        own = [h for h in registered_heatmaps() if shiboken6.isValid(h.plot) and h.plot.scene() in scenes]
        self._held = contextlib.ExitStack()
        self._held.enter_context(ExportMode(scenes, 1.0))
        self._held.enter_context(figures.no_background_cache(self.panel))
        self._held.enter_context(LayoutsHeld(scenes))
        for heatmap in own:  # their labels and titles as a figure shows them (what exporting() redraws)
            heatmap.redraw_marks()

    def close(self) -> None:
        """End the painter and put the figure out of export mode (done, or given up half way)."""
        if self.painter.isActive():
            with figures.quiet_pdf():
                self.painter.end()
        if self._held is not None:
            held, self._held = self._held, None
            held.close()

