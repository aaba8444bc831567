"""The geometry view drawn again for the page: the arrows, the pair's angle, its caption and readout.

An export never grabs the view (its "Show" and "Pair" boxes, a plot as small as the window leaves
it, labels crowded into each other). :func:`geometry_page` draws the view's numbers
(``GeometryView.drawing``) into a figure of its own size: the plot square and large enough for
the labels to find free places, titled with what it shows, the caption and the pair's readout
under it. The same view gives the same figure at any window size.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ..widgets import view_layout
from .geometry import GeometryDrawing, frame, vector_plot

__all__ = ["geometry_page", "PAGE_WIDTH", "PLOT_HEIGHT"]

PAGE_WIDTH = 900   # px: the figure's width (a slide's half and more)
PLOT_HEIGHT = 680  # px: the plot's height, axes included


def _label(text: str, scale: float, rich: bool) -> QtWidgets.QLabel:
    label = QtWidgets.QLabel(text)
    label.setTextFormat(QtCore.Qt.RichText if rich else QtCore.Qt.PlainText)
    label.setWordWrap(True)
    font = QtGui.QFont(QtWidgets.QApplication.font())
    font.setPointSizeF(font.pointSizeF() * scale)
    label.setFont(font)
    label.setAlignment(QtCore.Qt.AlignLeft | QtCore.Qt.AlignTop)
    return label


def geometry_page(drawing: GeometryDrawing) -> QtWidgets.QWidget:
    """A white figure of ``drawing`` (``GeometryView.drawing``) at its own size, to be laid out
    offscreen before it is drawn."""
    page = QtWidgets.QWidget()
    page.setObjectName("geometryPage")
    layout = view_layout(page, spacing=6)
    canvas, plot, arrows = vector_plot()
    canvas.setBackground("w")
    canvas.setFixedHeight(PLOT_HEIGHT)
    plot.setTitle(drawing.space, size="13pt", color="#222222")
    arrows.set_data(drawing.tips, drawing.labels, drawing.roles, drawing.vectors, drawing.arc)
    x_range, y_range = frame(drawing.tips)
    plot.setRange(xRange=x_range, yRange=y_range, padding=0)
    layout.addWidget(canvas)
    page.canvas, page.plot, page.arrows = canvas, plot, arrows
    page.caption = _label(drawing.caption, 1.1, rich=False)
    page.readout = _label(drawing.readout, 1.45, rich=True)
    layout.addWidget(page.caption)
    layout.addWidget(page.readout)
    margins = layout.contentsMargins()
    room = PAGE_WIDTH - margins.left() - margins.right()
    height = (PLOT_HEIGHT + page.caption.heightForWidth(room) + page.readout.heightForWidth(room)
              + 2 * layout.spacing() + margins.top() + margins.bottom())
    page.setFixedSize(PAGE_WIDTH, height)  # the caller lays it out (files.sheet.lay_out_offscreen)
    return page
