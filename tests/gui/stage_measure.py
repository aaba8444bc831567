"""What a viewer sees of a widget: every text it draws with its size in pixels, read from an SVG rendering.

The widget is rendered into ``QSvgGenerator`` at 96 dpi: each ``<text>``'s ``font-size`` is then its
pixel size, times the scale of the transform of the group that holds it (a rotated label keeps its
size: the scale is the length of the transform's first column).
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

SVG = "{http://www.w3.org/2000/svg}"
_MATRIX = re.compile(r"matrix\(([^)]*)\)")


def _scale(transform: str | None) -> float:
    if not transform:
        return 1.0
    m = _MATRIX.search(transform)
    if not m:
        return 1.0
    a, b, *_ = (float(v) for v in m.group(1).replace(",", " ").split())
    return math.hypot(a, b)


def _px(value: str | None) -> float | None:
    if not value:
        return None
    m = re.match(r"\s*([0-9.]+)", value)
    return float(m.group(1)) if m else None


def drawn_texts(widget) -> list[tuple[str, float]]:
    """(text, pixel size) of every text ``widget`` draws, as the viewer sees it."""
    return svg_texts(widget_svg(widget))


def widget_svg(widget) -> bytes:
    """``widget`` rendered into an SVG at 96 dpi, text kept as text (a widget's own render(): a graphics
    view's differs). Plot items drawn from a cached pixmap would show up as images: their caches are off
    meanwhile."""
    from attn_studio.gui.qt.pg import pg

    cached = []
    for view in widget.findChildren(pg.GraphicsView):
        for item in view.scene().items():
            if item.cacheMode() != QtWidgets.QGraphicsItem.NoCache:
                cached.append((item, item.cacheMode()))
                item.setCacheMode(QtWidgets.QGraphicsItem.NoCache)
    try:
        buffer = QtCore.QBuffer()
        buffer.open(QtCore.QIODevice.WriteOnly)
        generator = QtSvg.QSvgGenerator()
        generator.setOutputDevice(buffer)
        generator.setResolution(96)
        generator.setSize(widget.size())
        generator.setViewBox(QtCore.QRect(QtCore.QPoint(0, 0), widget.size()))
        painter = QtGui.QPainter(generator)
        QtWidgets.QWidget.render(widget, painter, QtCore.QPoint(0, 0))
        painter.end()
        return bytes(buffer.data())
    finally:
        for item, mode in cached:
            item.setCacheMode(mode)


def svg_texts(svg: bytes) -> list[tuple[str, float]]:
    """(text, pixel size) of every ``<text>`` of an SVG drawn at 96 dpi (an exported figure, say)."""
    root = ET.fromstring(svg)
    found = []

    def walk(node, size, scale):
        size = _px(node.get("font-size")) or size
        scale = scale * _scale(node.get("transform"))
        if node.tag == SVG + "text":
            text = "".join(node.itertext()).strip()
            if text and size:
                found.append((text, size * scale))
        for child in node:
            walk(child, size, scale)

    walk(root, None, 1.0)
    return found


def svg_size(svg: bytes) -> tuple[float, float]:
    """The width and height of an SVG's view box (a figure's size in pixels)."""
    box = ET.fromstring(svg).get("viewBox").replace(",", " ").split()
    return float(box[2]), float(box[3])
