"""Printed pages: a lecture's hand-out, every page one paper size (A4 or Letter, landscape).

A page is laid out like a printed slide: the scene's title and caption at the top, its figure fitted
to the room between them and the notes (when asked for), and a footer with the lecture's title and the
page number. The figure is scaled to its room, but never so far that a text of it prints under
:data:`SMALLEST_PT` points: :func:`figure_fit` says how a figure would print (its scale and its smallest
text, measured from the figure itself), so that the caller can choose a figure that fits. The same
page goes to a PDF (:func:`pdf_pages_bytes`, a page each), a PNG or an SVG (:func:`page_png`,
:func:`page_svg`): one layout, one size.

Lengths are in pixels at 96 dpi (one pixel is 0.75 pt), as the figures are drawn.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from PySide6 import QtCore, QtGui, QtWidgets

from ...matrices import ExportError
from .figures import (BASE_DPI, _Layout, _PDF_NOTICES, _QuietQt, _as_panel, _paint_figure, encode_png,
                      svg_bytes)

# -- paper ------------------------------------------------------------------------------

PAPERS = {"a4": QtGui.QPageSize.A4, "letter": QtGui.QPageSize.Letter}
PAPER_NAMES = {"a4": "A4", "letter": "Letter"}
# Where Letter is the paper in the shops (the Americas that follow the US, and the Philippines);
# everywhere else A4.
_T = QtCore.QLocale.Country  # Qt 6 calls it Territory; the binding keeps the enum under this name
LETTER_TERRITORIES = frozenset(getattr(_T, name) for name in (
    "UnitedStates", "Canada", "Mexico", "Chile", "Colombia", "CostaRica", "DominicanRepublic", "ElSalvador",
    "Guatemala", "Honduras", "Nicaragua", "Panama", "PuertoRico", "Venezuela", "Philippines", "Belize",
    "UnitedStatesOutlyingIslands", "UnitedStatesVirginIslands", "Guam") if hasattr(_T, name))
SMALLEST_PT = 8.0  # no text of a printed page smaller than this
PX_PT = 72.0 / BASE_DPI  # points in a pixel at 96 dpi
PAGE_PNG_DPI = 192.0  # a page as PNG: twice the screen's 96 dpi (sharp on paper and on a slide)


def check_paper(paper) -> str:
    """``paper`` ("a4" or "letter", any case) checked; ``ExportError`` naming the choices."""
    key = str(paper).strip().lower()
    if key not in PAPERS:
        raise ExportError(f"unknown paper {paper!r}; choose one of {', '.join(PAPERS)}")
    return key


def default_paper(locale: QtCore.QLocale | None = None) -> str:
    """The paper of ``locale`` (the system's by default): "letter" in the US, Canada, Mexico and the
    countries that follow them, else "a4"."""
    locale = locale if locale is not None else QtCore.QLocale.system()
    return "letter" if locale.territory() in LETTER_TERRITORIES else "a4"


def page_size(paper: str) -> QtCore.QSizeF:
    """The page of ``paper`` in landscape, in pixels at 96 dpi (A4: 1122.5 × 793.7)."""
    points = QtGui.QPageSize(PAPERS[check_paper(paper)]).size(QtGui.QPageSize.Point)
    long_side, short_side = max(points.width(), points.height()), min(points.width(), points.height())
    return QtCore.QSizeF(long_side / PX_PT, short_side / PX_PT)


# -- a page's parts ----------------------------------------------------------------------

MARGIN = 36.0  # px: 0.375 in, inside what every printer prints
GAP = 10.0
TITLE_PX = 21  # ≈ 16 pt
CAPTION_PX = 15  # ≈ 11 pt
NOTES_PX = 13  # ≈ 10 pt
FOOTER_PX = 12  # 9 pt
CARD_PX = 17
NOTES_SHARE = 0.3  # the notes take at most this share of the page's height (longer notes are cut with "…")
MAX_ENLARGE = 1.35  # a small figure grows to its room, up to this much
INK, SOFT_INK, RULE = QtGui.QColor(20, 20, 20), QtGui.QColor(60, 60, 60), QtGui.QColor(170, 170, 170)


@dataclass
class Page:
    """One printed page: ``title``, ``caption``, ``notes`` (empty: none) and ``figure`` (a Panel), or
    ``card`` (a text in its place: what is missing and how to get it); its ``number`` of ``total`` and
    the ``lecture``'s title for the footer."""

    title: str
    caption: str = ""
    notes: str = ""
    figure: object = None
    figure_title: str = ""  # a line above the figure, its own (a training run's settings and step)
    card: str = ""
    number: int = 1
    total: int = 1
    lecture: str = ""


def _font(px: int, bold: bool = False, italic: bool = False) -> QtGui.QFont:
    font = QtGui.QFont(QtWidgets.QApplication.font())
    font.setPixelSize(px)
    font.setBold(bold)
    font.setItalic(italic)
    return font


_WRAP = int(QtCore.Qt.TextWordWrap)


def _text_height(font: QtGui.QFont, text: str, width: float) -> float:
    if not text:
        return 0.0
    box = QtGui.QFontMetricsF(font).boundingRect(QtCore.QRectF(0, 0, width, 100_000), _WRAP, text)
    return math.ceil(box.height())


def _cut(font: QtGui.QFont, text: str, width: float, height: float) -> str:
    """``text`` shortened at a word, with "…", until it fits ``width`` × ``height`` when wrapped."""
    if _text_height(font, text, width) <= height:
        return text
    words = text.split(" ")
    lo, hi = 0, len(words)
    while lo < hi:  # the most words that fit
        mid = (lo + hi + 1) // 2
        if _text_height(font, " ".join(words[:mid]) + " …", width) <= height:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]).rstrip(" ,;:") + " …"


class PageLayout:
    """Where each part of ``page`` goes on ``paper``, in pixels at 96 dpi; ``room`` is the figure's."""

    def __init__(self, page: Page, paper: str):
        self.page = page
        self.size = page_size(paper)
        w, h = self.size.width(), self.size.height()
        inner = w - 2 * MARGIN
        self.title_font, self.caption_font = _font(TITLE_PX, bold=True), _font(CAPTION_PX)
        self.notes_font, self.footer_font = _font(NOTES_PX), _font(FOOTER_PX)
        top = MARGIN
        title_h = _text_height(self.title_font, page.title, inner)
        self.title_rect = QtCore.QRectF(MARGIN, top, inner, title_h)
        top += title_h + (GAP / 2 if page.caption else GAP)
        caption_h = _text_height(self.caption_font, page.caption, inner)
        self.caption_rect = QtCore.QRectF(MARGIN, top, inner, caption_h)
        top += caption_h + (GAP if page.caption else 0)
        footer_h = QtGui.QFontMetricsF(self.footer_font).height()
        bottom = h - MARGIN - footer_h
        self.footer_rect = QtCore.QRectF(MARGIN, bottom, inner, footer_h)
        bottom -= GAP
        self.notes = ""
        self.notes_rect = QtCore.QRectF()
        if page.notes.strip():
            self.notes = _cut(self.notes_font, " ".join(page.notes.split()), inner, NOTES_SHARE * h)
            notes_h = _text_height(self.notes_font, self.notes, inner)
            self.notes_rect = QtCore.QRectF(MARGIN, bottom - notes_h, inner, notes_h)
            bottom -= notes_h + GAP
        self.room = QtCore.QRectF(MARGIN, top, inner, max(bottom - top, 10.0))


# -- fitting a figure ----------------------------------------------------------------------

@dataclass(frozen=True)
class Fit:
    """How a figure prints in a room: ``scale`` (page pixels a figure pixel), its size on the page,
    and its smallest text in points (``smallest_pt``; inf when it has none)."""

    scale: float
    width: float
    height: float
    smallest_pt: float

    @property
    def readable(self) -> bool:
        """No text under :data:`SMALLEST_PT` once printed."""
        return self.smallest_pt >= SMALLEST_PT - 1e-6


_SVG = "{http://www.w3.org/2000/svg}"
_MATRIX = re.compile(r"matrix\(([^)]*)\)")


def _svg_scale(transform: str | None) -> float:
    m = _MATRIX.search(transform or "")
    if not m:
        return 1.0
    a, b, *_ = (float(v) for v in m.group(1).replace(",", " ").split())
    return math.hypot(a, b)


def svg_text_sizes(svg: bytes) -> list[tuple[str, float]]:
    """(text, size in pixels) of every text an SVG drawn at 96 dpi shows (its group's scale applied)."""
    found: list = []

    def walk(node, size, scale):
        m = re.match(r"\s*([0-9.]+)", node.get("font-size") or "")
        size = float(m.group(1)) if m else size
        scale = scale * _svg_scale(node.get("transform"))
        if node.tag == _SVG + "text":
            text = "".join(node.itertext()).strip()
            if text and size:
                found.append((text, size * scale))
        for child in node:
            walk(child, size, scale)

    walk(ET.fromstring(svg), None, 1.0)
    return found


def smallest_text_px(figure, title: str = "") -> float:
    """The smallest text ``figure`` (a Panel, with ``title`` above it) draws, in its own pixels (inf when
    it draws none)."""
    sizes = [size for _, size in svg_text_sizes(svg_bytes(figure, title=title))]
    return min(sizes) if sizes else math.inf


def figure_fit(figure, room: QtCore.QRectF | QtCore.QSizeF, smallest_px: float | None = None,
               title: str = "") -> Fit:
    """How ``figure`` (with ``title`` above it) prints in ``room`` (a page's :attr:`PageLayout.room`): as
    large as the room allows (up to :data:`MAX_ENLARGE` its own size); ``smallest_pt`` tells whether that
    is readable."""
    layout = _Layout(_as_panel(figure), title)
    scale = min(room.width() / layout.width, room.height() / layout.height, MAX_ENLARGE)
    px = smallest_text_px(figure, title) if smallest_px is None else smallest_px
    return Fit(scale, layout.width * scale, layout.height * scale, px * scale * PX_PT)


# -- drawing a page ------------------------------------------------------------------------

def paint_page(painter: QtGui.QPainter, page: Page, paper: str) -> None:
    """Draw ``page`` with ``painter`` (in pixels at 96 dpi, the page's top left at 0, 0)."""
    layout = PageLayout(page, paper)
    size = layout.size
    painter.setRenderHint(QtGui.QPainter.Antialiasing, True)
    painter.setRenderHint(QtGui.QPainter.TextAntialiasing, True)
    painter.fillRect(QtCore.QRectF(0, 0, size.width(), size.height()), QtCore.Qt.white)
    painter.setPen(INK)
    painter.setFont(layout.title_font)
    painter.drawText(layout.title_rect, int(QtCore.Qt.AlignLeft | QtCore.Qt.AlignTop) | _WRAP, page.title)
    if page.caption:
        painter.setFont(layout.caption_font)
        painter.setPen(SOFT_INK)
        painter.drawText(layout.caption_rect, int(QtCore.Qt.AlignLeft | QtCore.Qt.AlignTop) | _WRAP, page.caption)
    room = layout.room
    if page.figure is not None:
        fit = figure_fit(page.figure, room, smallest_px=math.inf, title=page.figure_title)  # drawn as chosen
        figure_layout = _Layout(_as_panel(page.figure), page.figure_title)
        painter.save()
        painter.translate(room.left() + (room.width() - fit.width) / 2, room.top() + (room.height() - fit.height) / 3)
        painter.scale(fit.scale, fit.scale)
        painter.setClipRect(QtCore.QRectF(0, 0, figure_layout.width, figure_layout.height))
        with _QuietQt(_PDF_NOTICES):
            _paint_figure(painter, figure_layout, 1.0)
        painter.restore()
    elif page.card:
        painter.setFont(_font(CARD_PX))
        painter.setPen(INK)
        painter.drawText(room.adjusted(room.width() * 0.1, 0, -room.width() * 0.1, 0),
                         int(QtCore.Qt.AlignCenter) | _WRAP, page.card)
    if layout.notes:
        painter.setPen(QtGui.QPen(RULE, 1))
        y = layout.notes_rect.top() - GAP / 2
        painter.drawLine(QtCore.QPointF(MARGIN, y), QtCore.QPointF(size.width() - MARGIN, y))
        painter.setFont(layout.notes_font)
        painter.setPen(SOFT_INK)
        painter.drawText(layout.notes_rect, int(QtCore.Qt.AlignLeft | QtCore.Qt.AlignTop) | _WRAP, layout.notes)
    painter.setPen(QtGui.QPen(RULE, 1))
    rule_y = layout.footer_rect.top() - 3
    painter.drawLine(QtCore.QPointF(MARGIN, rule_y), QtCore.QPointF(size.width() - MARGIN, rule_y))
    painter.setFont(layout.footer_font)
    painter.setPen(SOFT_INK)
    footer = layout.footer_rect
    painter.drawText(footer, int(QtCore.Qt.AlignLeft | QtCore.Qt.AlignVCenter), page.lecture)
    painter.drawText(footer, int(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter), f"page {page.number} of {page.total}")


def _as_page(item) -> Page:
    if isinstance(item, Page):
        return item
    panel, title, caption = item  # the older form: (panel or None, title, caption)
    return Page(title=title, caption=caption, figure=panel)


def pdf_pages_bytes(pages, document_title: str = "", paper: str = "a4") -> bytes:
    """One PDF of ``pages`` (an iterable of :class:`Page`, each drawn before the next is asked for: a
    live figure changes with the next scene), every page ``paper`` in landscape; text stays text."""
    paper = check_paper(paper)
    data = QtCore.QByteArray()
    buffer = QtCore.QBuffer(data)
    buffer.open(QtCore.QIODevice.WriteOnly)
    writer = QtGui.QPdfWriter(buffer)
    writer.setTitle(document_title or "Attention Studio lecture")
    writer.setCreator("Attention Studio")
    writer.setResolution(int(BASE_DPI))  # one device unit is one pixel at 96 dpi, as the figures are drawn
    writer.setPageLayout(QtGui.QPageLayout(QtGui.QPageSize(PAPERS[paper]), QtGui.QPageLayout.Landscape,
                                           QtCore.QMarginsF(0, 0, 0, 0), QtGui.QPageLayout.Point))
    painter = QtGui.QPainter()
    started = False
    try:
        for item in pages:
            page = _as_page(item)
            if not started:
                if not painter.begin(writer):
                    raise ExportError("Qt could not start a PDF drawing")
                started = True
            else:
                writer.newPage()
            size = page_size(paper)
            painter.save()
            painter.scale(writer.width() / size.width(), writer.height() / size.height())
            paint_page(painter, page, paper)
            painter.restore()
    finally:
        if started:
            painter.end()
        buffer.close()
    if not started:
        raise ExportError("nothing to write: no pages")
    return bytes(data.data())


def page_image(page: Page, paper: str = "a4", dpi: float = PAGE_PNG_DPI) -> QtGui.QImage:
    """``page`` drawn into an image of ``paper`` in landscape at ``dpi``."""
    size = page_size(paper)
    scale = dpi / BASE_DPI
    image = QtGui.QImage(round(size.width() * scale), round(size.height() * scale),
                         QtGui.QImage.Format_ARGB32_Premultiplied)
    if image.isNull():
        raise ExportError("not enough memory for a page image")
    image.fill(QtCore.Qt.white)
    painter = QtGui.QPainter(image)
    try:
        painter.scale(image.width() / size.width(), image.height() / size.height())
        paint_page(painter, page, paper)
    finally:
        painter.end()
    return image


def page_png(page: Page, paper: str = "a4", dpi: float = PAGE_PNG_DPI) -> bytes:
    """``page`` as PNG bytes (``paper`` in landscape at ``dpi``, recorded in the file)."""
    return encode_png(page_image(page, paper, dpi), dpi)


def page_svg(page: Page, paper: str = "a4") -> bytes:
    """``page`` as SVG bytes, ``paper`` in landscape (text stays text)."""
    from PySide6 import QtSvg

    size = page_size(paper).toSize()
    data = QtCore.QByteArray()
    buffer = QtCore.QBuffer(data)
    buffer.open(QtCore.QIODevice.WriteOnly)
    generator = QtSvg.QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(size)
    generator.setViewBox(QtCore.QRect(QtCore.QPoint(0, 0), size))
    generator.setResolution(int(BASE_DPI))
    generator.setTitle(" ".join(page.title.split()) or "Attention Studio page")
    generator.setDescription(f"{page.lecture}: page {page.number} of {page.total}")
    painter = QtGui.QPainter()
    if not painter.begin(generator):
        raise ExportError("Qt could not start an SVG drawing")
    try:
        paint_page(painter, page, paper)
    finally:
        painter.end()
    buffer.close()
    return bytes(data.data())
