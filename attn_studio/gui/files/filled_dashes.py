"""Dashed curves in a figure painted band by band.

``QWidget.render`` of a band makes the band the paint engine's system clip, and Qt's dash stroker is clipped
to it: a dashed line cut by a band's edge starts its dashes again there. While a figure is painted in bands,
:class:`FilledDashes` has its dashed curves fill the outline of their dashes instead (the same pixels as the
curve stroked in one piece); :func:`dashed` says whether a figure holds a dashed line that could not be
painted so (it is then painted in one piece).
"""

from __future__ import annotations

import pyqtgraph as pg
import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets


_PLAIN = (QtCore.Qt.SolidLine, QtCore.Qt.NoPen)


def _dashed_pen(pen) -> bool:
    return isinstance(pen, QtGui.QPen) and pen.style() not in _PLAIN


def dashed(scenes, scale: float | None = None) -> bool:
    """True when an item of ``scenes`` draws a dashed or dotted line; with ``scale`` (a raster figure's),
    one whose dashes :class:`BandedImage` could not keep across a band's edge: all but the curves
    :class:`FilledDashes` paints (and the straight lines Qt dashes from their start, ``InfiniteLine``)."""
    for scene in scenes:
        for item in scene.items():
            if scale is not None and (isinstance(item, pg.InfiniteLine) or _fillable_curve(item, scale)
                                      or (isinstance(item, pg.PlotDataItem) and _fillable_curve(item.curve, scale))):
                continue  # (a PlotDataItem draws its line by its curve)
            pens = [getattr(item, "opts", {}).get(k) for k in ("pen", "shadowPen")] if isinstance(
                getattr(item, "opts", None), dict) else []
            pen = getattr(item, "pen", None)
            pens.append(pen() if callable(pen) and isinstance(item, QtWidgets.QAbstractGraphicsShapeItem) else pen)
            if any(_dashed_pen(p) for p in pens):
                return True
    return False


def _fillable_curve(item, scale: float) -> bool:
    """A pyqtgraph curve whose dashed pens :class:`FilledDashes` can paint: cosmetic and wider than a
    device pixel once widened by ``scale`` (a thinner one is Qt's cosmetic stroker's, whose dashes are
    its own)."""
    if not isinstance(item, pg.PlotCurveItem):
        return False
    for pen in (item.opts.get("pen"), item.opts.get("shadowPen")):
        if _dashed_pen(pen) and not (pen.isCosmetic() and max(pen.widthF(), 1.0) * scale > 1.0):
            return False
    return True


class FilledDashes:
    """While a raster figure is painted band by band: its dashed curves are drawn as the outline of
    their dashes, filled, rather than stroked by Qt with the dashed pen.

    Why: ``QWidget.render`` of a band makes the band the paint engine's system clip, and Qt's dash
    stroker is clipped to that (``QPaintEngineEx::stroke`` gives it ``exDeviceRect``, the device rect
    within the system clip; a painter clip does not change it, but ``render`` turns one into the system
    clip too). What lies outside is skipped and the dashes start again where the curve enters the band.
    A ``QPainterPathStroker`` is clipped to nothing: the outline of every dash of the whole curve, in
    device pixels as Qt strokes a cosmetic pen, filled the way Qt fills a stroke (the same pixels as
    the curve stroked in one piece: tests compare them)."""

    def __init__(self, scenes):
        self.items = [item for scene in scenes for item in scene.items()
                      if isinstance(item, pg.PlotCurveItem)
                      and any(_dashed_pen(item.opts.get(k)) for k in ("pen", "shadowPen"))]

    def __enter__(self):
        for item in self.items:
            # An instance's own paint: Qt calls it (PySide looks the override up on the object).
            item.paint = _painted_with_filled_dashes(item)
        return self

    def __exit__(self, *exc):
        for item in self.items:
            if shiboken6.isValid(item):
                item.__dict__.pop("paint", None)
        return False


def _painted_with_filled_dashes(item):
    paint = type(item).paint

    def painted(painter, option, widget=None):
        paint(item, _DashFiller(painter), option, widget)
    return painted


class _DashFiller:
    """A painter that fills the outline of a dashed path's dashes instead of stroking it (every other
    call goes to ``painter``)."""

    def __init__(self, painter: QtGui.QPainter):
        self._painter = painter
        self._pen = painter.pen()

    def __getattr__(self, name):
        return getattr(self._painter, name)

    def setPen(self, pen):
        self._pen = QtGui.QPen(pen)
        self._painter.setPen(pen)

    def drawPath(self, path):
        pen, painter = self._pen, self._painter
        if not (_dashed_pen(pen) and pen.isCosmetic()):
            painter.drawPath(path)
            return
        # A cosmetic pen is stroked in device pixels. Inside QWidget.render the painter's transform at the
        # call (the figure's scale, the widget's place) is the engine's system transform, beneath the
        # painter's own (``combinedTransform``): the outline is filled through that alone.
        to_device, own = painter.deviceTransform(), painter.combinedTransform()
        system_inverse, invertible = to_device.inverted()
        if not invertible:
            return
        stroke = QtGui.QPainterPathStroker(pen).createStroke(to_device.map(path))
        painter.save()
        painter.setViewTransformEnabled(False)
        painter.setWorldTransform(system_inverse * own)
        painter.fillPath(stroke, pen.brush())
        painter.restore()
