"""A raster figure painted band by band, a band per turn of the event loop (the window answers between them)."""

from __future__ import annotations

import contextlib
import math
import time

import shiboken6
from PySide6 import QtCore, QtGui

from ...matrices import ExportError
from ..qt.pg import ExportMode
from ..views.heatmap import exporting
from ..views.token_axis import registered_heatmaps as heatmap_registry
from .figures import MAX_IMAGE_BYTES, _as_panel, _check_scale, _Layout, _logical_dpi, _paint_figure, _scenes
from .filled_dashes import FilledDashes, dashed
from .layouts_held import LayoutsHeld


BAND_PACES = 3  # a band's height follows the slowest rows of this many bands before it


class BandedImage:
    """The figure :func:`render_panel` draws, painted band by band: each :meth:`step` paints the next
    rows of the image and returns, so that the window's event loop runs between bands.

    Every pixel is painted once, by the band whose rows hold it, with the transform the whole figure
    is painted with: the image is the one :func:`render_panel` makes (tests compare them pixel for
    pixel). A band's height follows the time the last ones took (``budget`` seconds a step)."""

    def __init__(self, panel, scale: float = 2.0, title: str | None = None, budget: float = 0.035):
        scale = _check_scale(scale)
        self.panel = _as_panel(panel)
        self.layout = _Layout(self.panel, title)
        self.scale, self.budget = scale, budget
        width, height = math.ceil(self.layout.width * scale), math.ceil(self.layout.height * scale)
        if width * height * 4 > MAX_IMAGE_BYTES:
            raise ExportError(f"a {width}×{height} image is too large; choose a smaller scale")
        self.image = QtGui.QImage(width, height, QtGui.QImage.Format_ARGB32_Premultiplied)
        if self.image.isNull():
            raise ExportError(f"not enough memory for a {width}×{height} image; choose a smaller scale")
        dots = round(_logical_dpi(self.layout.panel.widget) / 0.0254)
        self.image.setDotsPerMeterX(dots)
        self.image.setDotsPerMeterY(dots)
        self.done_rows = 0
        # A band starts on a whole page pixel: Qt turns the painter's clip into whole pixels of the page
        # when the panel's widget is drawn, so a band starting between two would lose its first row. With
        # a scale of whole numbers (the menu's) any page row will do; else the nearest that falls on a
        # device row, and with none such the figure is one band.
        sy = height / self.layout.height
        page_rows = next((n for n in range(1, 65) if abs(n * sy - round(n * sy)) < 1e-7), None)
        self.step_rows = round(page_rows * sy) if page_rows else height
        # A figure made for the page (a sheet, a plot drawn again offscreen) stays in export mode from its
        # first band to its last: nothing on screen paints it. A part of the window itself (the whole
        # window) is painted in one piece: it may change between two turns of the event loop.
        top = self.panel.widget.window()
        self._offscreen = top.testAttribute(QtCore.Qt.WA_DontShowOnScreen)
        if not self._offscreen or dashed(_scenes(self.panel), scale):
            # A dashed line that Qt strokes cut by a band's edge would start its dashes again there (see
            # FilledDashes); one this class cannot paint in bands leaves the figure in one piece.
            self.step_rows = height
        self.rows = max(self.step_rows, 64 - 64 % self.step_rows)  # the first band; then from the time taken
        self._pace: list[float] = []  # seconds per row of the last bands
        self.tops: list[int] = []  # the first row of each band painted
        self._held: contextlib.ExitStack | None = None

    def _hold(self) -> None:
        scenes = _scenes(self.panel)
        own = [h for h in heatmap_registry() if shiboken6.isValid(h.plot) and h.plot.scene() in scenes]
        self._held = contextlib.ExitStack()
        if self.step_rows < self.image.height():
            self._held.enter_context(LayoutsHeld(scenes, self.panel.widget))
        self._held.enter_context(ExportMode(scenes, self.scale))
        if self.step_rows < self.image.height():
            self._held.enter_context(FilledDashes(scenes))
        for heatmap in own:  # their labels and titles as a figure shows them (what exporting() redraws)
            heatmap.redraw_marks()

    def close(self) -> None:
        """Put the panel back out of export mode (done, or given up half way)."""
        if self._held is not None:
            held, self._held = self._held, None
            held.close()

    @property
    def progress(self) -> float:
        """The share of the image painted (0 to 1)."""
        return self.done_rows / max(self.image.height(), 1)

    def done(self) -> bool:
        return self.done_rows >= self.image.height()

    def step(self) -> bool:
        """Paint the next band; True once the whole image is painted."""
        if self.done():
            return True
        image, layout = self.image, self.layout
        top = self.done_rows
        rows = min(self.rows, image.height() - top)
        self.tops.append(top)
        if self._offscreen and self._held is None and self.step_rows < image.height():
            self._hold()  # a piece of its own: every item of the figure is put in export mode
            return False
        start = time.thread_time()  # the work, not the waits for a core on a busy machine
        painter = QtGui.QPainter(image)
        try:
            device_band = QtCore.QRect(0, top, image.width(), rows)
            # What QImage.fill(white) does for the whole image in render_panel, for these rows.
            painter.setCompositionMode(QtGui.QPainter.CompositionMode_Source)
            painter.fillRect(device_band, QtGui.QColor(255, 255, 255))
            painter.setCompositionMode(QtGui.QPainter.CompositionMode_SourceOver)
            sx, sy = image.width() / layout.width, image.height() / layout.height
            painter.scale(sx, sy)
            band = QtCore.QRectF(0, top / sy, layout.width, rows / sy)
            if self._offscreen and self._held is None:  # one band: held for it alone
                self._hold()
            if self._held is not None:
                with exporting(keep_query=self.panel.name == "window", heatmaps=()):
                    _paint_figure(painter, layout, self.scale, band, held=True)
            else:  # the whole figure at once, as render_panel paints it
                _paint_figure(painter, layout, self.scale)
        finally:
            painter.end()
        self.done_rows = top + rows
        if self.done():
            self.close()
        spent = max(time.thread_time() - start, 1e-4)
        # The next band as tall as the budget allows at the slowest pace of the last bands, and at most half as
        # tall again: a figure's rows are not alike (a training panel's band of axes and labels took three times
        # as long a row as the plot area above it, and a band twice as tall as the last took 38-46 ms).
        self._pace = (self._pace + [spent / rows])[-BAND_PACES:]
        self.rows = int(max(64, min(1.5 * rows, self.budget / max(self._pace))))
        self.rows = max(self.rows - self.rows % self.step_rows, self.step_rows)
        return self.done()
