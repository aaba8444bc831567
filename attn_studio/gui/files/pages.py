"""Several figures in one PDF, a page each (a lecture's hand-out), drawn as :mod:`.figures` draws one."""

from __future__ import annotations

import math

from PySide6 import QtCore, QtGui, QtWidgets

from ...matrices import ExportError
from .figures import (BASE_DPI, MARGIN, TITLE_PAD_TOP, _Layout, _PDF_NOTICES, _QuietQt, _as_panel, _logical_dpi,
                      _paint_figure, _title_font)


CAPTION_PIXEL_SIZE = 15
CARD_SIZE = QtCore.QSize(900, 260)  # a page without a figure (a scene whose model is missing)


def pdf_pages_bytes(pages, document_title: str = "") -> bytes:
    """One PDF of several pages: each ``(panel or None, title, caption)`` of ``pages`` (an iterable,
    each page drawn before the next is asked for: a live panel changes with the next scene) a page
    sized to its figure, its title above and its caption below (text stays text); a page without a
    panel is a card of its title and caption."""
    data = QtCore.QByteArray()
    buffer = QtCore.QBuffer(data)
    buffer.open(QtCore.QIODevice.WriteOnly)
    writer = QtGui.QPdfWriter(buffer)
    writer.setTitle(document_title or "Attention Studio lecture")
    writer.setCreator("Attention Studio")
    caption_font = QtGui.QFont(QtWidgets.QApplication.font())
    caption_font.setPixelSize(CAPTION_PIXEL_SIZE)
    caption_metrics = QtGui.QFontMetricsF(caption_font)
    painter = QtGui.QPainter()
    started = False
    try:
        for panel, title, caption in pages:
            layout = _Layout(_as_panel(panel), title) if panel is not None else None
            width = layout.width if layout else CARD_SIZE.width()
            body = layout.height if layout else CARD_SIZE.height()
            box = caption_metrics.boundingRect(QtCore.QRectF(0, 0, width - 2 * MARGIN, 10_000),
                                               int(QtCore.Qt.AlignHCenter | QtCore.Qt.TextWordWrap), caption or "")
            height = body + (math.ceil(box.height()) + MARGIN if caption else 0)
            dpi = _logical_dpi(panel.widget) if layout else int(BASE_DPI)
            writer.setResolution(dpi)
            points = QtCore.QSizeF(width * 72.0 / dpi, height * 72.0 / dpi)
            size = QtGui.QPageSize(points, QtGui.QPageSize.Point, "scene", QtGui.QPageSize.ExactMatch)
            writer.setPageLayout(QtGui.QPageLayout(size, QtGui.QPageLayout.Portrait, QtCore.QMarginsF(0, 0, 0, 0),
                                                   QtGui.QPageLayout.Point))
            if not started:
                if not painter.begin(writer):
                    raise ExportError("Qt could not start a PDF drawing")
                started = True
            else:
                writer.newPage()
            painter.save()
            painter.scale(writer.width() / width, writer.height() / height)
            if layout is not None:
                with _QuietQt(_PDF_NOTICES):
                    _paint_figure(painter, layout, 1.0)
            else:
                painter.fillRect(QtCore.QRectF(0, 0, width, height), QtCore.Qt.white)
                painter.setFont(_title_font(width))
                painter.setPen(QtGui.QColor(20, 20, 20))
                painter.drawText(QtCore.QRectF(MARGIN, TITLE_PAD_TOP, width - 2 * MARGIN, body - 2 * MARGIN),
                                 int(QtCore.Qt.AlignCenter | QtCore.Qt.TextWordWrap), title)
            if caption:
                painter.setFont(caption_font)
                painter.setPen(QtGui.QColor(40, 40, 40))
                painter.drawText(QtCore.QRectF(MARGIN, body, width - 2 * MARGIN, box.height() + 2),
                                 int(QtCore.Qt.AlignHCenter | QtCore.Qt.TextWordWrap), caption)
            painter.restore()
    finally:
        if started:
            painter.end()
        buffer.close()
    if not started:
        raise ExportError("nothing to write: no pages")
    return bytes(data.data())
