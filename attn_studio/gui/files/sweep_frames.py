"""The frames of an animation: a page figure drawn at each value of a sweep, one size, scales fixed.

Each frame is the figure ``export`` draws of the panel (:func:`~.panels.find_panel`), with the
swept value in its title. Nothing may jump but what changes, so the frames are drawn in two
passes:

1. Every value is set once and the window's heatmaps read: each heatmap's colour levels over
   the whole sweep (their union), the title of every frame, and the panel's size (at the first
   and last value; at every value when the sweep changes the figure's shape, as ``heads`` does).
2. Every value is set again and its figure drawn on one canvas: the title in a band as tall as
   the tallest title, the panel centred below it, each heatmap and colour bar at the union's
   levels (so the bar's labels are the same in every frame).

The frames come out as RGB arrays (for :func:`attn_studio.animation.write_animation`) or as
SVG documents (text stays text). The caller says how a frame's value is set
(``set_frame(i)``) and how the panel is found (``make_panel()``), so the command line and the
window's dialog draw the same frames.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Callable, Iterator

import numpy as np
from PySide6 import QtCore, QtGui

from ..views.heatmap import SHOWN_MARK, Heatmap, label_colour_bar, set_bar_levels
from ..widgets import settle
from . import figures
from .figures import MARGIN, TITLE_PAD_BOTTOM, TITLE_PAD_TOP, ExportError, Panel, done_with
from .panels import VIEW_OF

# The largest frame drawn (pixels a side): a frame is one image of a video, not a poster.
MAX_FRAME_SIDE = 3840


def level_views(window, panel_name: str) -> list:
    """The window's views whose heatmaps ``panel_name``'s figure is drawn from (their levels are fixed)."""
    # The whole window: its Attention view's heatmaps are the ones whose scales show.
    key = "heatmaps" if panel_name.startswith("head:") or panel_name == "window" else panel_name
    attr = VIEW_OF.get(key)
    view = getattr(window, attr, None) if attr else None
    return [view] if view is not None else []


def _heatmaps_in(view) -> list[Heatmap]:
    """Every :class:`Heatmap` a view holds (as an attribute, in a dict or in a list)."""
    found = []
    for value in vars(view).values():
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
        found += [item for item in items if isinstance(item, Heatmap)]
    return found


class SweepFrames:
    """The frames of one sweep of one panel of ``window`` (None: the figures need no window).

    ``count`` frames; ``set_frame(i)`` puts the window at frame ``i``'s values (the caller's
    sweep); ``make_panel()`` returns the figure's :class:`Panel` as it is now; ``title_of(i)``
    the frame's title (called after ``set_frame(i)``). ``views`` are the views whose heatmaps'
    colour levels are kept over the sweep. ``scale`` multiplies the figure's size; ``size``
    (width, height) instead fits the figure into frames of that many pixels, centred on white.
    ``reshapes``: the figure's shape changes with the value (measure every frame). ``quiet``: the
    window is not repainted while the frames are drawn (False when the figure is the window itself).
    ``refill(panel)``: for a figure drawn from numbers of its own (a trained model's page), puts the
    current frame's numbers into the figure built for the first frame and returns True, so that one
    figure serves every frame.
    """

    def __init__(self, window, count: int, set_frame: Callable[[int], None], make_panel: Callable[[], Panel],
                 title_of: Callable[[int], str], *, views=(), scale: float = 1.0,
                 size: tuple[int, int] | None = None, reshapes: bool = False, quiet: bool = True,
                 refill: Callable[[Panel], bool] | None = None):
        self.window = window
        self.count = int(count)
        self.set_frame = set_frame
        self.make_panel = make_panel
        self.title_of = title_of
        self.views = list(views)
        self.scale = float(scale)
        self.size = size
        self.reshapes = reshapes
        self.quiet = quiet
        self.refill = refill  # the caller's way to put a frame's numbers into the kept figure (False: it cannot)
        self.levels: dict[int, tuple[float, float]] = {}
        self.titles: list[str] = []
        self.panel_size = QtCore.QSize(0, 0)
        self.prepared = False
        self._kept: Panel | None = None
        self._canvas: tuple[int, int, float] | None = None
        self._follows: list[bool] = []

    # -- pass 1 ------------------------------------------------------------------------
    def _go(self, i: int) -> None:
        self.set_frame(i)
        if self.window is None:  # figures drawn from numbers alone (a training run's snapshots)
            return
        settle(self.window)
        for view in self.views:
            self.window.render_view(view)
            if self.prepared and not self.quiet:
                self._fix_in_place(view)

    def _fix_in_place(self, view) -> None:
        """The window itself is the figure: its own heatmaps and colour bars at the sweep's levels."""
        bars = getattr(view, "stage_bars", {})
        stages = getattr(view, "stages", {})
        for hm in _heatmaps_in(view):
            fixed, data = self.levels.get(id(hm)), hm.data
            if fixed is None or data is None or tuple(hm.levels) == fixed:
                continue
            hm.set_data(data.values, masked=data.masked, row_labels=list(data.row_labels),
                        col_labels=list(data.col_labels), levels=fixed, selected_row=data.selected_row)
            bar = next((bars.get(key) for key, stage in stages.items() if stage is hm), None)
            if bar is not None:
                set_bar_levels(bar, fixed)  # labelled at its ends, as the window labels it, for these levels
        settle(self.window)

    def prepare(self, progress: Callable[[int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None) -> bool:
        """Pass 1: the levels, titles and sizes over the whole sweep; False if cancelled."""
        measure = set(range(self.count)) if self.reshapes else {0, self.count - 1}
        quiet = self.quiet and self.window is not None and self.window.updatesEnabled()
        if quiet:
            self.window.setUpdatesEnabled(False)
        try:
            return self._prepare(measure, progress, cancelled)
        finally:
            if quiet:
                self.window.setUpdatesEnabled(True)

    def _prepare(self, measure, progress, cancelled) -> bool:
        for i in range(self.count):
            if cancelled is not None and cancelled():
                return False
            self._go(i)
            for view in self.views:
                for hm in _heatmaps_in(view):
                    lo, hi = (float(v) for v in hm.levels)
                    old = self.levels.get(id(hm))
                    self.levels[id(hm)] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
            self.titles.append(self.title_of(i))
            if i in measure:
                panel = self._fixed_panel()
                try:
                    rect = figures._source_rect(panel)
                    self.panel_size = self.panel_size.expandedTo(rect.size())
                finally:
                    done_with(panel)
            if progress is not None:
                progress(i + 1, self.count)
        if self.panel_size.isEmpty():
            raise ExportError("the panel has no size; show it and try again")
        self._canvas = None
        self.prepared = True
        return True

    # -- the canvas --------------------------------------------------------------------
    def _title_font(self) -> QtGui.QFont:
        return figures._title_font(self.panel_size.width() + 2 * MARGIN)

    def canvas(self) -> tuple[int, int, float]:
        """(width, height) of the page every frame is drawn on, in logical pixels, and the title band's height."""
        if self.prepared and self._canvas is not None:
            return self._canvas  # measured once: every title's height is asked of the font (a profile's 4 %)
        self._canvas = self._measure_canvas()
        return self._canvas

    def _measure_canvas(self) -> tuple[int, int, float]:
        width = self.panel_size.width() + 2 * MARGIN
        metrics = QtGui.QFontMetricsF(self._title_font())
        flags = int(QtCore.Qt.AlignHCenter | QtCore.Qt.TextWordWrap)
        band = max((metrics.boundingRect(QtCore.QRectF(0, 0, width - 2 * MARGIN, 10_000), flags, t).height()
                    for t in self.titles if t), default=0.0)
        top = TITLE_PAD_TOP + math.ceil(band) + TITLE_PAD_BOTTOM if band else MARGIN
        return width, int(top + self.panel_size.height() + MARGIN), band

    def pixel_size(self) -> tuple[int, int]:
        """(width, height) of each frame in pixels."""
        if self.size is not None:
            return int(self.size[0]), int(self.size[1])
        w, h, _ = self.canvas()
        return math.ceil(w * self.scale), math.ceil(h * self.scale)

    # -- pass 2 ------------------------------------------------------------------------
    def _reusable(self, panel: Panel) -> bool:
        if self.refill is not None:
            return not self.reshapes
        """True when ``panel`` is a sheet of the window's own heatmaps that later frames can refill
        (the figure's shape does not change): its heatmaps take the next frame's numbers instead of a
        new sheet being built a frame (building one costs most of a frame's time)."""
        heatmaps = getattr(panel.widget, "heatmaps", None)
        return (not self.reshapes and bool(heatmaps)
                and all(id(getattr(hm, "source", None)) in self.levels for hm in heatmaps))

    def _refill(self, panel: Panel) -> Panel:
        """The kept sheet with each heatmap showing its source's numbers now, at the sweep's levels."""
        if self.refill is not None:
            if not self.refill(panel):
                raise ExportError("the figure changed its shape during the sweep")
            return panel
        for hm, follows in zip(panel.widget.heatmaps, self._follows):
            src, data = hm.source, hm.source.data
            if data is None or data.values.shape != hm.data.values.shape:
                raise ExportError("the figure changed its shape during the sweep")
            if follows:
                title = src.title
                hm.set_title(title[: -len(SHOWN_MARK)] if title.endswith(SHOWN_MARK) else title)
            hm.set_data(data.values, masked=data.masked, row_labels=list(hm.data.row_labels),
                        col_labels=list(hm.data.col_labels), levels=self.levels[id(src)],
                        selected_row=hm.data.selected_row)
        return panel

    def _keep(self, panel: Panel) -> None:
        self._kept = panel
        if self.refill is not None:
            return
        self._follows = [hm.title == (hm.source.title[: -len(SHOWN_MARK)] if hm.source.title.endswith(SHOWN_MARK)
                                      else hm.source.title) for hm in panel.widget.heatmaps]

    def release(self) -> None:
        """Free the sheet kept between frames (after the last frame, or when the drawing stops)."""
        if self._kept is not None:
            done_with(self._kept)
            self._kept = None

    def _fixed_panel(self) -> Panel:
        """The panel now, its heatmaps and colour bars at the sweep's levels."""
        if self._kept is not None:
            return self._refill(self._kept)
        panel = self.make_panel()
        sheet = panel.widget
        heatmaps = getattr(sheet, "heatmaps", None)
        if not heatmaps or not self.levels:
            return panel
        changed = False
        for hm in heatmaps:
            fixed = self.levels.get(id(getattr(hm, "source", None)))
            data = hm.data
            if fixed is None or data is None or tuple(hm.levels) == fixed:
                continue
            hm.set_data(data.values, masked=data.masked, row_labels=list(data.row_labels),
                        col_labels=list(data.col_labels), levels=fixed, selected_row=data.selected_row)
            bar = getattr(hm, "bar", None)
            if bar is not None:
                bar.setLevels(values=fixed)
                label_colour_bar(bar, fixed)
            changed = True
        if changed and hasattr(sheet, "lay_out"):
            sheet.lay_out()  # a colour bar's labels may be wider at the sweep's levels
        return panel

    def _layout(self, panel: Panel, title: str):
        width, height, band = self.canvas()
        source = figures._source_rect(panel)
        layout = SimpleNamespace(panel=panel, source=source, title=title, font=self._title_font(),
                                 width=width, height=height, plain_title=" ".join(title.split()))
        layout.title_rect = QtCore.QRectF(MARGIN, TITLE_PAD_TOP, width - 2 * MARGIN, band)
        top = TITLE_PAD_TOP + math.ceil(band) + TITLE_PAD_BOTTOM if band else MARGIN
        x = MARGIN + (self.panel_size.width() - source.width()) // 2
        layout.panel_pos = QtCore.QPoint(int(x), int(top))
        return layout

    def _frames(self, draw, progress, cancelled):
        if not self.prepared:
            raise ExportError("the frames are drawn after prepare()")
        window = self.window
        # The window's own views need not be painted while the frames are drawn (each frame's figure
        # is drawn from their numbers): about half of a frame's time went to repainting them.
        quiet = self.quiet and window is not None and window.updatesEnabled()
        if quiet:
            window.setUpdatesEnabled(False)
        try:
            for i in range(self.count):
                if cancelled is not None and cancelled():
                    return
                self._go(i)
                panel = self._fixed_panel()
                keep = panel is self._kept or (self._kept is None and self._reusable(panel))
                if keep and self._kept is None:
                    self._keep(panel)
                try:
                    yield draw(self._layout(panel, self.titles[i]))
                finally:
                    if not keep:
                        done_with(panel)
                if progress is not None:
                    progress(i + 1, self.count)
        finally:
            self.release()
            if quiet:
                window.setUpdatesEnabled(True)

    def images(self, progress=None, cancelled=None) -> Iterator[np.ndarray]:
        """Pass 2: each frame as an ``H×W×3`` ``uint8`` array, all of :meth:`pixel_size`."""
        return self._frames(self._image, progress, cancelled)

    def svgs(self, progress=None, cancelled=None) -> Iterator[bytes]:
        """Pass 2: each frame as an SVG document (the canvas's logical size; text stays text)."""
        return self._frames(self._svg, progress, cancelled)

    def _image(self, layout) -> np.ndarray:
        width, height = self.pixel_size()
        if not (1 <= width <= MAX_FRAME_SIDE and 1 <= height <= MAX_FRAME_SIDE):
            raise ExportError(f"a frame of {width}×{height} pixels is too large; at most {MAX_FRAME_SIDE} a side "
                              "(choose a smaller --scale or --size)")
        scale = min(width / layout.width, height / layout.height)
        image = QtGui.QImage(width, height, QtGui.QImage.Format_RGB32)
        image.fill(QtCore.Qt.white)
        painter = QtGui.QPainter(image)
        try:
            painter.translate((width - layout.width * scale) / 2, (height - layout.height * scale) / 2)
            painter.scale(scale, scale)
            painter.setClipRect(QtCore.QRectF(0, 0, layout.width, layout.height))
            figures._paint_figure(painter, layout, max(scale, 1.0))
        finally:
            painter.end()
        return rgb_array(image)

    def _svg(self, layout) -> bytes:
        from PySide6 import QtSvg

        data = QtCore.QByteArray()
        buffer = QtCore.QBuffer(data)
        buffer.open(QtCore.QIODevice.WriteOnly)
        generator = QtSvg.QSvgGenerator()
        generator.setOutputDevice(buffer)
        size = QtCore.QSize(layout.width, layout.height)
        generator.setSize(size)
        generator.setViewBox(QtCore.QRect(QtCore.QPoint(0, 0), size))
        generator.setResolution(figures._logical_dpi(layout.panel.widget))
        generator.setTitle(layout.plain_title or "Attention Studio figure")
        generator.setDescription(f"Attention Studio animation frame: {layout.panel.name or 'panel'}")
        painter = QtGui.QPainter()
        if not painter.begin(generator):
            raise ExportError("Qt could not start an SVG drawing")
        try:
            figures._paint_figure(painter, layout, 1.0)
        finally:
            painter.end()
        buffer.close()
        return bytes(data.data())


def rgb_array(image: QtGui.QImage) -> np.ndarray:
    """``image`` as an ``H×W×3`` ``uint8`` RGB array (a copy)."""
    image = image.convertToFormat(QtGui.QImage.Format_RGB888)
    w, h, line = image.width(), image.height(), image.bytesPerLine()
    raw = np.frombuffer(image.constBits(), np.uint8, count=line * h).reshape(h, line)
    return raw[:, : w * 3].reshape(h, w, 3).copy()


__all__ = ["SweepFrames", "level_views", "rgb_array", "MAX_FRAME_SIDE"]
