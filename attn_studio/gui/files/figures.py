"""Figures out of the studio: a panel drawn to PNG / SVG / PDF or the clipboard.

A *panel* is a part of the window that can become a figure: ``find_panel(window,
name)`` (in :mod:`.panels`, re-exported here) looks one up by name and returns a
:class:`Panel`; heatmap panels come laid out for the page (:mod:`.sheet`), never
grabbed from the viewport. Every figure is composed the same way, like a slide: a white page, a header band
with a title that states the setting (``setting_title``), and the panel drawn
below it.

How the panel is drawn (measured on PySide6 6.11 / pyqtgraph 0.14, see
DESIGN.md "Known traps"):

- ``QWidget.render`` into a ``QPainter`` that is scaled by the export scale:
  text, fills and non-cosmetic lines scale with it; pyqtgraph's cosmetic pens
  (curves, infinite lines, scatter outlines) would stay one device pixel wide,
  so they are widened by the scale while exporting and restored afterwards
  (``qt.pg.ExportMode``).
- Item pixmap caches (``DeviceCoordinateCache``) are switched off while
  exporting, so that SVG and PDF keep text as text rather than pictures of it.
- The views' on-screen-only marks (the selected query's marker, hover
  highlights) are off and every token label that fits is shown
  (``views.heatmap.exporting``).
- SVG via ``QSvgGenerator`` and PDF via ``QPdfWriter`` at the widget's logical
  DPI, so one device unit is one logical pixel and fonts keep their on-screen size.

Every file is rendered to bytes first and then written atomically
(``session.write_atomic``): a failure leaves an existing file as it was.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from pathlib import Path

import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from ...matrices import ExportError, check_output_path, write_output
from ..qt.pg import ExportMode
from ..widgets import break_apart, discard, parts_of
from ..views.heatmap import exporting
from .panels import (  # noqa: F401 (the names the window and the command line have always used)
    PANELS, TRAINED_PANELS, TRAINING_PANELS, Panel, check_panel_name, find_panel, setting_title, show_panel,
    training_panel,
)
from .panels import as_panel as _as_panel
from .png_encode import encode_png, png_off_the_gui_thread, write_png_image  # noqa: F401 (figures' names)

# -- names (the panels themselves are panels.py's) -----------------------------------

FORMATS = ("png", "svg", "pdf")

MIN_SCALE, MAX_SCALE = 1.0, 8.0
BASE_DPI = 96.0  # scale 1 = 96 dpi: scale = dpi / 96
SVG_MIME = "image/svg+xml"

# Layout of a figure, in logical pixels (multiplied by the scale in a PNG).
MARGIN = 10
TITLE_PIXEL_SIZE = 19  # ≈ 14 pt at 96 dpi
MIN_TITLE_PIXEL_SIZE = 15
TITLE_PAD_TOP = 12
TITLE_PAD_BOTTOM = 12
# A raster figure larger than this would take more memory than a lecturer's laptop should spend on it.
MAX_IMAGE_BYTES = 1 << 30


# -- drawing -------------------------------------------------------------------------

def _check_scale(scale) -> float:
    try:
        value = float(scale)
    except (TypeError, ValueError):
        raise ExportError(f"the scale must be a number, got {scale!r}") from None
    if not (math.isfinite(value) and MIN_SCALE <= value <= MAX_SCALE):
        raise ExportError(f"the scale must be between {MIN_SCALE:g} and {MAX_SCALE:g} "
                          f"(= {MIN_SCALE * BASE_DPI:g} to {MAX_SCALE * BASE_DPI:g} dpi), got {scale}")
    return value


def _title_font(width: float | None = None) -> QtGui.QFont:
    """Bold, ≈14 pt; a little smaller above a narrow panel, so that the title stays a header."""
    size = TITLE_PIXEL_SIZE if width is None else max(MIN_TITLE_PIXEL_SIZE, min(TITLE_PIXEL_SIZE, round(width / 34)))
    font = QtGui.QFont(QtWidgets.QApplication.font())
    font.setPixelSize(size)
    font.setBold(True)
    return font


class _Layout:
    """Where the title and the panel go on the page, in logical pixels."""

    def __init__(self, panel: Panel, title: str | None):
        self.panel = panel
        self.source = _source_rect(panel)
        self.title = title if title is not None else (panel.title or "")
        self.plain_title = " ".join(self.title.split())  # for file metadata: one line
        w, h = self.source.width(), self.source.height()
        if w < 1 or h < 1:
            label = panel.name or type(panel.widget).__name__
            raise ExportError(f"the {label} panel has no size (is it hidden?); show it and try again")
        self.width = w + 2 * MARGIN
        self.title_rect = QtCore.QRectF()
        top = MARGIN
        if self.title:
            self.font = _title_font(self.width)
            metrics = QtGui.QFontMetricsF(self.font)
            room = 0.94 * (self.width - 2 * MARGIN)
            if metrics.horizontalAdvance(self.title) > room and " — " in self.title:
                # Too long for one line: the sentence on the first, the setting on the second,
                # the sentence shortened (at a word) to fit its line.
                sentence, setting = self.title.split(" — ", 1)
                words = sentence.split(" ")
                while len(words) > 1 and metrics.horizontalAdvance(" ".join(words)) > room:
                    words.pop()
                    while len(words) > 1 and words[-1].rstrip("…") == "":
                        words.pop()
                    words[-1] = words[-1].rstrip(" ,;:…") + "…"
                self.title = " ".join(words) + "\n" + setting
            box = metrics.boundingRect(QtCore.QRectF(0, 0, self.width - 2 * MARGIN, 10_000),
                                       int(QtCore.Qt.AlignHCenter | QtCore.Qt.TextWordWrap), self.title)
            text_h = max(box.height(), metrics.height())
            self.title_rect = QtCore.QRectF(MARGIN, TITLE_PAD_TOP, self.width - 2 * MARGIN, text_h)
            top = TITLE_PAD_TOP + math.ceil(text_h) + TITLE_PAD_BOTTOM
        self.panel_pos = QtCore.QPoint(MARGIN, int(top))
        self.height = int(top) + h + MARGIN

    def size(self) -> QtCore.QSize:
        return QtCore.QSize(self.width, self.height)


def _source_rect(panel: Panel) -> QtCore.QRect:
    """The part of ``panel.widget`` to draw, in widget coordinates."""
    widget = panel.widget
    full = widget.rect()
    source = panel.source
    if source is None:
        return full
    if isinstance(source, QtWidgets.QGraphicsItem):
        if not isinstance(widget, QtWidgets.QGraphicsView):
            raise ExportError("a panel item needs a graphics view widget to draw it")
        view_rect = widget.mapFromScene(source.sceneBoundingRect()).boundingRect()
        top_left = widget.viewport().mapTo(widget, view_rect.topLeft())
        rect = QtCore.QRect(top_left, view_rect.size())
    elif callable(source):
        rect = QtCore.QRect(source())
    else:
        rect = QtCore.QRect(source)
    return rect.intersected(full)


def _scenes(panel: Panel) -> list[QtWidgets.QGraphicsScene]:
    views = []
    if isinstance(panel.widget, QtWidgets.QGraphicsView):
        views.append(panel.widget)
    views += panel.widget.findChildren(QtWidgets.QGraphicsView)
    scenes = []
    for view in views:
        scene = view.scene()
        if scene is not None and scene not in scenes:
            scenes.append(scene)
    return scenes


def _paint_figure(painter: QtGui.QPainter, layout: _Layout, pen_scale: float,
                  band: QtCore.QRectF | None = None, held: bool = False) -> None:
    """Draw the page of ``layout`` with ``painter`` (in logical pixels); ``band`` (page pixels): only the
    panel's part that reaches into it is drawn (the painter is clipped to it: a figure painted band by band);
    ``held``: the caller holds the panel in export mode (:class:`.banded_image.BandedImage`)."""
    panel = layout.panel
    painter.setRenderHint(QtGui.QPainter.Antialiasing, True)
    painter.setRenderHint(QtGui.QPainter.TextAntialiasing, True)
    # Not SmoothPixmapTransform: a heatmap drawn as an image of one pixel a cell would be blurred
    # across its cells' borders when scaled up (the Heads tab's maps in a picture of the window).
    painter.setRenderHint(QtGui.QPainter.SmoothPixmapTransform, False)
    if band is not None:
        painter.save()
        painter.setClipRect(band)  # the page and its title, in this band's rows only
    painter.fillRect(QtCore.QRectF(0, 0, layout.width, layout.height), QtCore.Qt.white)
    if layout.title:
        painter.save()
        painter.setFont(layout.font)
        painter.setPen(QtGui.QColor(20, 20, 20))
        painter.drawText(layout.title_rect, int(QtCore.Qt.AlignHCenter | QtCore.Qt.AlignTop | QtCore.Qt.TextWordWrap),
                         layout.title)
        painter.restore()
    if band is not None:
        painter.restore()
    source = _band_source(layout, band)
    if source.isEmpty():
        return  # a band of the title or the margins (an empty region would draw the whole widget)
    with contextlib.ExitStack() as modes:
        if not held:
            modes.enter_context(exporting(keep_query=panel.name == "window"))
            modes.enter_context(ExportMode(_scenes(panel), pen_scale))
        painter.save()
        # QGraphicsView (pyqtgraph) overrides render() to draw its scene; QWidget.render draws the widget.
        # The region's top left lands on the offset given.
        offset = layout.panel_pos + (source.topLeft() - layout.source.topLeft())
        QtWidgets.QWidget.render(panel.widget, painter, offset, QtGui.QRegion(source))
        painter.restore()


def _band_source(layout: _Layout, band: QtCore.QRectF | None) -> QtCore.QRect:
    """The part of the panel (widget coordinates) that ``band`` (page pixels, whole ones) shows.

    The widget is drawn clipped to this region alone, as the whole figure is drawn clipped to its whole
    source: a second clip of another kind on top would make Qt draw a scaled image (a heatmap's cells)
    another way, rounding its rows differently."""
    source = layout.source
    if band is None:
        return source
    top = round(band.top()) - layout.panel_pos.y() + source.top()
    bottom = round(band.bottom()) - layout.panel_pos.y() + source.top()
    return QtCore.QRect(source.left(), top, source.width(), bottom - top).intersected(source)


def _logical_dpi(widget) -> int:
    dpi = widget.logicalDpiX() if widget is not None else 0
    return int(dpi) if dpi > 0 else int(BASE_DPI)


def render_panel(panel, scale: float = 2.0, title: str | None = None) -> QtGui.QImage:
    """The figure of ``panel`` as an image ``scale`` times its on-screen size.

    ``panel`` is a :class:`Panel` (from :func:`find_panel`) or a QWidget.
    ``title`` None uses the panel's default title; "" draws no header band.
    Lines, text and markers all grow with ``scale`` (1 to 8).
    """
    scale = _check_scale(scale)
    layout = _Layout(_as_panel(panel), title)
    width, height = math.ceil(layout.width * scale), math.ceil(layout.height * scale)
    if width * height * 4 > MAX_IMAGE_BYTES:
        raise ExportError(f"a {width}×{height} image is too large; choose a smaller scale")
    image = QtGui.QImage(width, height, QtGui.QImage.Format_ARGB32_Premultiplied)
    if image.isNull():
        raise ExportError(f"not enough memory for a {width}×{height} image; choose a smaller scale")
    # Paint at the widget's DPI so that point-sized fonts keep their on-screen size.
    dots = round(_logical_dpi(layout.panel.widget) / 0.0254)
    image.setDotsPerMeterX(dots)
    image.setDotsPerMeterY(dots)
    image.fill(QtCore.Qt.white)
    painter = QtGui.QPainter(image)
    try:
        painter.scale(width / layout.width, height / layout.height)
        _paint_figure(painter, layout, scale)
    finally:
        painter.end()
    return image


@dataclasses.dataclass(frozen=True)
class VectorPage:
    """What an SVG or PDF file of a figure needs to know of it, and nothing of its widgets (a worker
    thread may make the file): its size in logical pixels, the widget's DPI, the metadata."""

    kind: str  # "svg" or "pdf"
    width: int
    height: int
    dpi: int
    title: str
    description: str

    @classmethod
    def of(cls, layout: _Layout, kind: str) -> "VectorPage":
        return cls(kind, int(layout.width), int(layout.height), _logical_dpi(layout.panel.widget),
                   layout.plain_title or "Attention Studio figure",
                   f"Attention Studio figure: {layout.panel.name or 'panel'}")


def vector_device(page: VectorPage, buffer: QtCore.QIODevice):
    """``(device, painter)``: an SVG generator or a one-page PDF writer of ``page`` writing to
    ``buffer``, and a painter begun on it, in logical pixels (one unit one pixel at the widget's DPI).
    Any thread: nothing of a widget is touched."""
    size = QtCore.QSize(page.width, page.height)
    if page.kind == "svg":
        from PySide6 import QtSvg

        device = QtSvg.QSvgGenerator()
        device.setOutputDevice(buffer)
        device.setSize(size)
        device.setViewBox(QtCore.QRect(QtCore.QPoint(0, 0), size))
        device.setResolution(page.dpi)
        device.setTitle(page.title)
        device.setDescription(page.description)
    else:
        device = QtGui.QPdfWriter(buffer)
        device.setResolution(page.dpi)
        points = QtCore.QSizeF(page.width * 72.0 / page.dpi, page.height * 72.0 / page.dpi)
        paper = QtGui.QPageSize(points, QtGui.QPageSize.Point, "figure", QtGui.QPageSize.ExactMatch)
        device.setPageLayout(QtGui.QPageLayout(paper, QtGui.QPageLayout.Portrait, QtCore.QMarginsF(0, 0, 0, 0),
                                               QtGui.QPageLayout.Point))
        device.setTitle(page.title)
        device.setCreator("Attention Studio")
    painter = QtGui.QPainter()
    if not painter.begin(device):
        raise ExportError(f"Qt could not start a {page.kind.upper()} drawing")
    if page.kind == "pdf":
        # The page is whole points; fit the figure to it exactly.
        painter.scale(device.width() / page.width, device.height() / page.height)
    return device, painter


@contextlib.contextmanager
def no_background_cache(panel: Panel):
    """While a vector figure is drawn: the panel's graphics views draw their background, not its cache.

    pyqtgraph's views cache their background as a pixmap the size of the view, and that pixmap is
    transparent: an SVG or PDF held it as a page-sized picture of nothing, whose PNG encoding took
    most of the time of drawing Compare of 80 tokens (0.5 of 0.8 s). Drawn uncached it is the
    view's background brush, the same white."""
    views = ([panel.widget] if isinstance(panel.widget, QtWidgets.QGraphicsView) else []) \
        + panel.widget.findChildren(QtWidgets.QGraphicsView)
    kept = [(view, view.cacheMode()) for view in views]
    for view, _mode in kept:
        view.setCacheMode(QtWidgets.QGraphicsView.CacheNone)
    try:
        yield
    finally:
        for view, mode in kept:
            if shiboken6.isValid(view):
                view.setCacheMode(mode)


def paint_vector(painter: QtGui.QPainter, layout: _Layout, held: bool = False) -> None:
    """Draw ``layout``'s page on an SVG or PDF ``painter``; ``held``: the caller holds the panel in export
    mode (:class:`.vector_figure.SteppedVector`)."""
    with contextlib.ExitStack() as modes:
        if not held:
            modes.enter_context(no_background_cache(layout.panel))
        with quiet_pdf():
            _paint_figure(painter, layout, 1.0, held=held)


def _vector_bytes(panel, title: str | None, kind: str) -> bytes:
    layout = _Layout(_as_panel(panel), title)
    data = QtCore.QByteArray()
    buffer = QtCore.QBuffer(data)
    buffer.open(QtCore.QIODevice.WriteOnly)
    _device, painter = vector_device(VectorPage.of(layout, kind), buffer)
    try:
        paint_vector(painter, layout)
    finally:
        with quiet_pdf():
            painter.end()
    buffer.close()
    return bytes(data.data())


# Qt's PDF engine cannot keep a widget style's gradient whose two colours use different
# colour specs; it draws that area flat and says so. Expected for the window panel.
_PDF_NOTICES = ("QPdfEngine: unable to create a gradient between colors of different spec",)


class _QuietQt:
    """Swallow the given Qt messages while drawing; pass every other one on, as it was."""

    def __init__(self, messages):
        self.messages = tuple(messages)
        self.held: list = []

    def __enter__(self):
        def handler(kind, context, message):
            if any(m in message for m in self.messages):
                return
            if self.previous is not None:
                self.previous(kind, context, message)
            else:
                self.held.append((kind, message))
        self.previous = QtCore.qInstallMessageHandler(handler)
        return self

    def __exit__(self, *exc):
        QtCore.qInstallMessageHandler(self.previous)
        emit = {QtCore.QtMsgType.QtCriticalMsg: QtCore.qCritical, QtCore.QtMsgType.QtFatalMsg: QtCore.qCritical,
                QtCore.QtMsgType.QtDebugMsg: QtCore.qDebug, QtCore.QtMsgType.QtInfoMsg: QtCore.qInfo}
        for kind, message in self.held:
            emit.get(kind, QtCore.qWarning)(message)
        return False


def quiet_pdf() -> _QuietQt:
    """Qt's expected PDF notices swallowed while drawing (every other message passed on)."""
    return _QuietQt(_PDF_NOTICES)


# -- files -----------------------------------------------------------------------------

def resolve_scale(scale=2.0, dpi=None) -> tuple[float, float]:
    """``(scale, dpi)`` of a PNG: ``dpi`` (96 to 768) wins and sets scale = dpi / 96; raises ``ExportError``."""
    if dpi is not None:
        try:
            dpi_value = float(dpi)
        except (TypeError, ValueError):
            raise ExportError(f"the DPI must be a number, got {dpi!r}") from None
        if not (math.isfinite(dpi_value) and MIN_SCALE * BASE_DPI <= dpi_value <= MAX_SCALE * BASE_DPI):
            raise ExportError(f"the DPI must be between {MIN_SCALE * BASE_DPI:g} and {MAX_SCALE * BASE_DPI:g}, got {dpi}")
        return dpi_value / BASE_DPI, dpi_value
    scale = _check_scale(scale)
    return scale, scale * BASE_DPI


def png_bytes(panel, scale: float = 2.0, dpi: float | None = None, title: str | None = None) -> bytes:
    """The PNG file contents of :func:`export_png` (scale = dpi / 96 when ``dpi`` is given)."""
    scale, dpi = resolve_scale(scale, dpi)
    return encode_png(render_panel(panel, scale, title), dpi)


def svg_bytes(panel, title: str | None = None) -> bytes:
    """The SVG file contents of :func:`export_svg` (drawn in one piece)."""
    return _vector_bytes(panel, title, "svg")


def pdf_bytes(panel, title: str | None = None) -> bytes:
    """The PDF file contents of :func:`export_pdf`."""
    return _vector_bytes(panel, title, "pdf")


def export_png(panel, path, scale: float = 2.0, dpi: float | None = None, title: str | None = None) -> None:
    """Save ``panel`` as a PNG ``scale`` (1 to 8) times its on-screen size.

    With ``dpi`` (96 to 768), the scale is ``dpi / 96``. The file records its
    DPI (96 × scale), so slide software places it at the on-screen size.
    """
    path = check_output_path(path)
    write_output(path, png_bytes(panel, scale, dpi, title))


def export_svg(panel, path, title: str | None = None) -> None:
    """Save ``panel`` as an SVG (text stays text; the view box is the on-screen size)."""
    path = check_output_path(path)
    write_output(path, svg_bytes(panel, title))


def export_pdf(panel, path, title: str | None = None) -> None:
    """Save ``panel`` as a one-page PDF whose page is the figure (no margins)."""
    path = check_output_path(path)
    write_output(path, pdf_bytes(panel, title))


def figure_format(path, fmt: str | None = None) -> str:
    """``fmt`` checked, or the format named by ``path``'s extension; raises ``ExportError``."""
    if fmt is None:
        fmt = Path(path).suffix.lstrip(".")
        if not fmt:
            raise ExportError(f"{Path(path).name} has no extension; use .png, .svg or .pdf")
    fmt = str(fmt).lower()
    if fmt not in FORMATS:
        raise ExportError(f"unknown figure format {fmt!r}; use one of {', '.join(FORMATS)}")
    return fmt


def export_figure(panel, path, fmt: str | None = None, scale: float = 2.0, title: str | None = None,
                  dpi: float | None = None) -> str:
    """Save ``panel`` as PNG, SVG or PDF (``fmt``, or from ``path``'s extension); returns the format.

    ``scale`` / ``dpi`` apply to PNG only: SVG and PDF are vector drawings.
    """
    fmt = figure_format(path, fmt)
    if fmt == "png":
        export_png(panel, path, scale=scale, dpi=dpi, title=title)
    elif fmt == "svg":
        export_svg(panel, path, title=title)
    else:
        export_pdf(panel, path, title=title)
    return fmt


def _plain_mime_data() -> QtCore.QMimeData:
    """An empty QMimeData made by Qt itself, not by Python.

    A QMimeData constructed in Python is a binding subclass whose destructor calls back
    into Python. The clipboard keeps it until the application is torn down, after the
    interpreter has finished, and deleting it then crashed the process on quit (exit 139
    on the offscreen platform). One a Qt model makes carries no such callback.
    """
    model = QtGui.QStandardItemModel(1, 1)
    mime = model.mimeData([model.index(0, 0)])
    for fmt in mime.formats():
        mime.removeFormat(fmt)
    return mime


def copy_figure(panel, scale: float = 2.0, title: str | None = None) -> None:
    """Put the figure on the clipboard: the image (PNG) and its SVG (``image/svg+xml``)."""
    image = render_panel(panel, scale, title)
    put_on_clipboard(image, encode_png(image, _check_scale(scale) * BASE_DPI), svg_bytes(panel, title))


def put_on_clipboard(image: QtGui.QImage, png: bytes, svg: bytes) -> None:
    """Put a figure on the clipboard: its ``image``, the same as PNG bytes, and its SVG."""
    mime = _plain_mime_data()
    mime.setImageData(image)
    mime.setData("image/png", QtCore.QByteArray(png))
    mime.setData(SVG_MIME, QtCore.QByteArray(svg))
    QtWidgets.QApplication.clipboard().setMimeData(mime)


__all__ = [
    "PANELS", "FORMATS", "ExportError", "Panel", "check_panel_name", "find_panel", "show_panel", "setting_title",
    "resolve_scale", "check_output_path",
    "render_panel", "png_bytes", "svg_bytes", "pdf_bytes", "export_png", "export_svg", "export_pdf",
    "export_figure", "figure_format", "copy_figure",
]


def done_with(panel, *, empty: bool = True) -> list:
    """Free a figure drawn for the page (a sheet, an offscreen plot) once it is written or copied.

    Its C++ side is deleted now, not by the cycle collector (see ``widgets.discard``); a panel of
    the window itself (its widgets, the whole window) is left alone. Its Python side is emptied now
    too; with ``empty=False`` it is returned instead (its widgets and graphics items), for
    :func:`break_apart` to empty in pieces (a Model view figure's is 10 to 20 ms of work)."""
    panel = _as_panel(panel)
    deleted = []
    for widget in (panel.widget, panel.keep):
        if isinstance(widget, QtWidgets.QWidget) and shiboken6.isValid(widget) and widget.parent() is None \
                and widget.testAttribute(QtCore.Qt.WA_DontShowOnScreen):
            deleted += parts_of(widget)
            discard(widget, empty=False)
    if empty:
        break_apart(deleted, float("inf"))
    return deleted
