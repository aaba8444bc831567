"""Where every text of an SVG lies, as the viewer sees it: text over text is found by box overlap.

An SVG written by ``QSvgGenerator`` at 96 dpi (an exported figure, or a widget rendered into one)
holds each text as ``<text x y font-size font-family font-weight>`` inside groups with a
``transform`` matrix. A text's box is its advance (``QFontMetricsF`` of its family at that pixel
size) by its ascent plus descent, from its baseline, mapped by every transform above it (a turned
label's box is turned too, and its bounding rectangle kept).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from PySide6 import QtCore, QtGui

SVG = "{http://www.w3.org/2000/svg}"
_MATRIX = re.compile(r"matrix\(([^)]*)\)")
_TRANSLATE = re.compile(r"translate\(([^)]*)\)")
# Boxes are shrunk by this much on every side before they are compared: two labels that only touch
# (a font's line box includes some air) are not text over text.
SLACK = 1.0


def _transform(text: str | None) -> QtGui.QTransform:
    if not text:
        return QtGui.QTransform()
    m = _MATRIX.search(text)
    if m:
        a, b, c, d, e, f = (float(v) for v in m.group(1).replace(",", " ").split())
        return QtGui.QTransform(a, b, c, d, e, f)
    m = _TRANSLATE.search(text)
    if m:
        parts = [float(v) for v in m.group(1).replace(",", " ").split()]
        return QtGui.QTransform.fromTranslate(parts[0], parts[1] if len(parts) > 1 else 0.0)
    return QtGui.QTransform()


def _number(value: str | None, default: float | None = None) -> float | None:
    if not value:
        return default
    m = re.match(r"\s*(-?[0-9.]+)", value)
    return float(m.group(1)) if m else default


def text_boxes(svg: bytes) -> list[tuple[str, QtCore.QRectF]]:
    """(text, bounding box in the SVG's pixels) of every non-blank ``<text>`` of ``svg`` (a turned
    label's box is the upright rectangle around it: :func:`text_shapes` keeps the turn)."""
    return [(text, shape.boundingRect()) for text, shape in text_shapes(svg, slack=0.0)]


def text_shapes(svg: bytes, slack: float = SLACK) -> list[tuple[str, QtGui.QPolygonF]]:
    """(text, its box as drawn: a polygon in the SVG's pixels, turned with a turned label), each box
    shrunk by ``slack`` px on every side in the text's own frame (two labels that only touch are
    not text over text)."""
    root = ET.fromstring(svg)
    found: list[tuple[str, QtGui.QPolygonF]] = []

    def walk(node, transform, style):
        style = dict(style)
        for key in ("font-size", "font-family", "font-weight"):
            if node.get(key):
                style[key] = node.get(key)
        here = _transform(node.get("transform")) * transform
        if node.tag == SVG + "text":
            raw = "".join(node.itertext())
            text = raw.strip()
            size = _number(style.get("font-size"))
            if text and size:
                font = QtGui.QFont(style.get("font-family", "Sans Serif"))
                font.setPixelSize(max(1, round(size)))
                if (_number(style.get("font-weight"), 400) or 400) >= 600:
                    font.setBold(True)
                metrics = QtGui.QFontMetricsF(font)
                lead = metrics.horizontalAdvance(raw[: len(raw) - len(raw.lstrip())])
                x = (_number(node.get("x"), 0.0) or 0.0) + lead
                y = _number(node.get("y"), 0.0) or 0.0
                box = QtCore.QRectF(x, y - metrics.ascent(), metrics.horizontalAdvance(text),
                                    metrics.ascent() + metrics.descent())
                box = box.adjusted(slack, slack, -slack, -slack)
                found.append((text, here.map(QtGui.QPolygonF(box))))
        for child in node:
            walk(child, here, style)

    walk(root, QtGui.QTransform(), {})
    return found


def overlapping(shapes, slack: float = SLACK) -> list[tuple[str, str]]:
    """The pairs of texts whose boxes overlap. ``shapes`` as :func:`text_shapes` gives them (polygons,
    already shrunk: two turned labels side by side do not overlap although their upright bounding
    rectangles do), or (text, QRectF) rectangles, shrunk here by ``slack`` px on every side."""
    paths = []
    for text, shape in shapes:
        if isinstance(shape, QtCore.QRectF):
            shape = QtGui.QPolygonF(shape.adjusted(slack, slack, -slack, -slack))
        path = QtGui.QPainterPath()
        path.addPolygon(shape)
        path.closeSubpath()
        paths.append((text, path, path.boundingRect()))
    pairs = []
    for i, (a, pa, ra) in enumerate(paths):
        for b, pb, rb in paths[i + 1:]:
            if ra.intersects(rb) and pa.intersects(pb):
                pairs.append((a, b))
    return pairs
