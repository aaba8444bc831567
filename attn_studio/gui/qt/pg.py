"""pyqtgraph, configured once before any item is created, and what figures change in it while drawing.

``ExportMode`` reaches into pyqtgraph items (pens kept in ``opts``, an axis's
``_pen``): those patches live here, next to the configuration, and nowhere else.
"""

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

# Arrays are (rows = queries, columns = keys), as the seeds print them.
pg.setConfigOptions(imageAxisOrder="row-major", antialias=True, background="w", foreground="k")

__all__ = ["pg", "cache_static", "remember_pictures", "wider_pen", "ExportMode"]

_update_axis_label = pg.AxisItem._updateLabel


def _update_axis_label_if_changed(axis) -> None:
    # pyqtgraph sets an axis label's HTML again on every range change (updateAutoSIPrefix), and Qt
    # lays the rich text out anew each time: tens of thousands of times while a window draws and
    # redraws. The same HTML set again changes nothing, so only the size and picture are renewed.
    # A hidden label (most axes hide theirs: top and right axes, heatmaps without titles) takes
    # no room and is not drawn: its HTML is set when it is shown (about 60% of the HTML set while
    # a window is made).
    html = axis.labelString()
    if axis.__dict__.get("_shown_label_html") == html or not axis.label.isVisibleTo(axis):
        axis._label_html_pending = axis.__dict__.get("_shown_label_html") != html
        axis._adjustSize()
        axis.picture = None
        axis.update()
        return
    _update_axis_label(axis)
    axis._shown_label_html = html
    axis._label_html_pending = False


_show_axis_label = pg.AxisItem.showLabel


def _show_axis_label_with_its_html(axis, show: bool = True) -> None:
    if show and axis.__dict__.get("_label_html_pending"):
        html = axis.labelString()
        axis.label.setHtml(html)
        axis._shown_label_html = html
        axis._label_html_pending = False
        axis.resizeEvent(None)  # the label is placed by its size, as on the axis's last resize
    _show_axis_label(axis, show)


_draw_axis_picture = pg.AxisItem.drawPicture


def _draw_axis_picture_with_grid_as_spans(axis, painter, axis_spec, tick_specs, text_specs) -> None:
    # A grid line is a thin translucent tick across the plot, and Qt draws such a line (not smoothed)
    # pixel by pixel, blending each: 8-20 ms for a 50-line grid across a 1200 px plot, on every paint
    # of the axis (a third of a scene's time on the stage). Level with its axis, the same line is a
    # one-pixel rectangle, which Qt fills a row at a time (0.1 ms). Drawn first, as the ticks were.
    thin, rest = [], []
    for spec in tick_specs:
        pen, p1, p2 = spec
        level = p1.x() == p2.x() or p1.y() == p2.y()
        if level and pen.style() == QtCore.Qt.SolidLine and pen.widthF() <= 1 and pen.color().alpha() < 255:
            thin.append(spec)
        else:
            rest.append(spec)
    if thin:
        painter.setRenderHint(QtGui.QPainter.Antialiasing, False)
        for pen, p1, p2 in thin:
            if p1.y() == p2.y():
                rect = QtCore.QRectF(min(p1.x(), p2.x()), p1.y() - 0.5, abs(p2.x() - p1.x()), 1.0)
            else:
                rect = QtCore.QRectF(p1.x() - 0.5, min(p1.y(), p2.y()), 1.0, abs(p2.y() - p1.y()))
            painter.fillRect(rect, pen.color())
    _draw_axis_picture(axis, painter, axis_spec, rest, text_specs)


PICTURES_KEPT = 32  # axis pictures remembered (remember_pictures)
_PICTURES: dict = {}  # what an axis draws (_picture_key) -> its recorded picture
_paint_axis = pg.AxisItem.paint


def _picture_key(axis) -> tuple:
    """Everything an axis's picture shows: its ticks and range, its size, pens, title and style."""
    style = tuple(sorted((name, value.key() if isinstance(value, QtGui.QFont) else repr(value))
                         for name, value in axis.style.items()))
    pens = tuple((pen.color().rgba(), pen.widthF(), int(pen.style().value)) for pen in (axis.pen(), axis.textPen()))
    return (repr(axis._tickLevels), tuple(axis.range), axis.size().toTuple(), axis.orientation,
            axis.labelString() if axis.label.isVisible() else "", pens, style)


def _paint_axis_remembered(axis, painter, *args) -> None:
    # An axis that remembers its pictures (a colour bar's) plays one it drew before for the same labels, size
    # and style, rather than work its ticks and texts out again. Only on the screen: a figure (no item cache)
    # draws its own, as before.
    if axis.__dict__.get("_remembers") and axis.picture is None \
            and axis.cacheMode() != QtWidgets.QGraphicsItem.NoCache:
        key = _picture_key(axis)
        known = _PICTURES.get(key)
        if known is not None:
            axis.picture = known
        else:
            _paint_axis(axis, painter, *args)
            if axis.picture is not None:
                if len(_PICTURES) >= PICTURES_KEPT:
                    _PICTURES.pop(next(iter(_PICTURES)))
                _PICTURES[key] = axis.picture
            return
    _paint_axis(axis, painter, *args)


def remember_pictures(*axes) -> None:
    """Let these axes reuse a picture drawn before (by any of them) for the same labels, size and style: a new
    sentence relabels the scores' and logits' colour bars (±20 → ±30 → ±20 …), and working their labels out
    again cost a millisecond or two per bar before the new sentence was on the screen."""
    for axis in axes:
        axis._remembers = True


pg.AxisItem._updateLabel = _update_axis_label_if_changed
pg.AxisItem.paint = _paint_axis_remembered
pg.AxisItem.showLabel = _show_axis_label_with_its_html
pg.AxisItem.drawPicture = _draw_axis_picture_with_grid_as_spans

# Plots build their right-click menus on first use (a third of a window's build time went to
# menus nobody opens): the patch lives in its own module.
from . import pg_menus  # noqa: E402,F401  (applied on import)



def cache_static(*items) -> None:
    """Paint ``items`` from a device pixmap cache: axes and fixed curves change
    rarely, and replaying their drawing on every repaint costs a frame."""
    for item in items:
        item.setCacheMode(QtWidgets.QGraphicsItem.DeviceCoordinateCache)
        if isinstance(item, pg.PlotDataItem):
            # A PlotDataItem draws nothing itself: its curve and symbols (children) do. Cached on
            # the parent alone, the √d_k plot's eight curves were stroked again on every edit
            # (the model's marker sits on them), a tenth of a small edit's time.
            item.curve.setCacheMode(QtWidgets.QGraphicsItem.DeviceCoordinateCache)
            item.scatter.setCacheMode(QtWidgets.QGraphicsItem.DeviceCoordinateCache)


def wider_pen(pen, factor: float, flat: bool = False):
    """``pen`` ``factor`` times as wide if it is cosmetic (else as it is)."""
    if not isinstance(pen, QtGui.QPen) or not pen.isCosmetic() or pen.style() == QtCore.Qt.NoPen:
        return pen
    pen = QtGui.QPen(pen)
    pen.setWidthF(max(pen.widthF(), 1.0) * factor)
    if flat:
        # Axes draw zero-length ticks (TokenAxis): a wide square cap would turn them into dots.
        pen.setCapStyle(QtCore.Qt.FlatCap)
    return pen


class ExportMode:
    """While drawing a figure: no item caches, pyqtgraph export mode, cosmetic pens × ``pen_scale``.

    Everything is put back in ``__exit__``, whatever happened.
    """

    def __init__(self, scenes, pen_scale: float):
        self.scenes = scenes
        self.pen_scale = pen_scale
        self._undo: list = []

    def __enter__(self):
        try:
            self._enter()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _enter(self):
        factor = self.pen_scale
        for scene in self.scenes:
            for item in scene.items():
                mode = item.cacheMode()
                if mode != QtWidgets.QGraphicsItem.NoCache:
                    item.setCacheMode(QtWidgets.QGraphicsItem.NoCache)
                    self._undo.append(lambda item=item, mode=mode: item.setCacheMode(mode))
                if isinstance(item, pg.GraphicsItem) and hasattr(item, "setExportMode"):
                    # resolutionScale stays 1: inside QWidget.render the export scale is part of the
                    # painter's base transform, which survives the items' resetTransform().
                    item.setExportMode(True, {"antialias": True, "resolutionScale": 1.0})
                    self._undo.append(lambda item=item: item.setExportMode(False))
                if factor == 1.0:
                    continue
                if isinstance(item, pg.PlotDataItem):
                    # Its options are the curve's source: a view change while drawing re-applies them.
                    keys = [k for k in ("pen", "shadowPen", "symbolPen") if isinstance(item.opts.get(k), QtGui.QPen)]
                    old = {k: item.opts[k] for k in keys}
                    item.opts.update({k: wider_pen(v, factor) for k, v in old.items()})

                    def restore(item=item, old=old):
                        item.opts.update(old)
                    self._undo.append(restore)
                elif isinstance(item, pg.AxisItem):
                    pen, tick = item._pen, item._tickPen
                    item._pen = wider_pen(item.pen(), factor, flat=True)
                    item._tickPen = wider_pen(item.tickPen(), factor, flat=True) if tick is not None else None
                    item.picture = None
                    item.update()

                    def restore(item=item, pen=pen, tick=tick):
                        item._pen, item._tickPen = pen, tick
                        item.picture = None
                        item.update()
                    self._undo.append(restore)
                elif isinstance(item, pg.PlotCurveItem):
                    pen, shadow = item.opts.get("pen"), item.opts.get("shadowPen")
                    item.opts["pen"], item.opts["shadowPen"] = wider_pen(pen, factor), wider_pen(shadow, factor)
                    item.update()

                    def restore(item=item, pen=pen, shadow=shadow):
                        item.opts["pen"], item.opts["shadowPen"] = pen, shadow
                        item.update()
                    self._undo.append(restore)
                elif isinstance(item, pg.InfiniteLine):
                    pen, current = item.pen, item.currentPen
                    item.pen, item.currentPen = wider_pen(pen, factor), wider_pen(current, factor)
                    item.update()

                    def restore(item=item, pen=pen, current=current):
                        item.pen, item.currentPen = pen, current
                        item.update()
                    self._undo.append(restore)
                elif isinstance(item, pg.ScatterPlotItem):
                    pen = item.opts.get("pen")
                    spots = item.data["pen"].copy()
                    item.opts["pen"] = wider_pen(pen, factor)
                    item.data["pen"] = np.array([wider_pen(p, factor) for p in spots] + [None], dtype=object)[:-1]
                    item.invalidate()

                    def restore(item=item, pen=pen, spots=spots):
                        item.opts["pen"] = pen
                        if len(item.data) == len(spots):
                            item.data["pen"] = spots
                        item.invalidate()
                    self._undo.append(restore)
        return self

    def __exit__(self, *exc):
        while self._undo:
            undo = self._undo.pop()
            try:
                undo()
            except RuntimeError:  # the item was deleted meanwhile: nothing to restore
                pass
        return False
