"""Figures out of the studio: a panel found by name, drawn to PNG / SVG / PDF or the clipboard.

A *panel* is a part of the window that can become a figure: ``find_panel(window,
name)`` looks one up by name (see ``PANELS``) and returns a :class:`Panel`.
Every figure is composed the same way, like a slide: a white page, a header band
with a title that states the setting (``setting_title``), and the panel drawn
below it.

How the panel is drawn (measured on PySide6 6.11 / pyqtgraph 0.14, see
DESIGN.md "Known traps"):

- ``QWidget.render`` into a ``QPainter`` that is scaled by the export scale:
  text, fills and non-cosmetic lines scale with it; pyqtgraph's cosmetic pens
  (curves, infinite lines, scatter outlines) would stay one device pixel wide,
  so they are widened by the scale while exporting and restored afterwards
  (``_pg.ExportMode``).
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

import math
import re
from dataclasses import dataclass
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from ...matrices import ExportError, check_output_path, write_output
from .._pg import ExportMode
from ..views.heatmap import exporting

# -- names -------------------------------------------------------------------------

PANELS = ("heatmaps", "head:N", "variance", "saturation", "steps", "geometry", "window", "model", "drift", "meaning")
"""Panel names for :func:`find_panel`; ``head:N`` is one head's weights (N from 1); "model", "drift"
and "meaning" exist while a trained model is shown."""
TRAINED_PANELS = ("model", "drift", "meaning")

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

_HEAD_RE = re.compile(r"^head:(\d+)$")


@dataclass(frozen=True)
class Panel:
    """Something :func:`render_panel` can draw.

    ``widget`` is drawn whole, or only the part given by ``source``: a
    ``QGraphicsItem`` in ``widget``'s scene (e.g. one PlotItem of a
    GraphicsLayoutWidget) or a callable returning a ``QRect`` in widget
    coordinates; either is measured when the figure is drawn. ``title`` is the
    default title (None: no header band unless one is passed). ``row_title``:
    for a heatmap canvas whose row labels are hidden on screen (a head beside
    another), the axis title to show with them while it is exported alone.
    """

    widget: QtWidgets.QWidget
    source: object = None
    name: str = ""
    title: str | None = None
    row_title: str | None = None


def check_panel_name(name: str) -> str:
    """Normalise a panel name ("Head:2" -> "head:2") or raise ``ExportError`` (syntax only)."""
    text = str(name).strip().lower()
    if text in PANELS:
        return text
    m = _HEAD_RE.match(text)
    if m and int(m.group(1)) >= 1:
        return f"head:{int(m.group(1))}"
    raise ExportError(f"unknown panel {name!r}; choose one of {', '.join(PANELS)} (N = head number from 1)")


def _head_count(window) -> int:
    result = window.studio.result
    return int(result.weights.shape[0])


def _available(window) -> list[str]:
    names = ["heatmaps"]
    heads = _head_count(window)
    names.append("head:1" if heads == 1 else f"head:1…head:{heads}")
    names += ["variance", "saturation"]
    for name, attr in (("steps", "pipeline_view"), ("geometry", "geometry_view")):
        if getattr(window, attr, None) is not None:
            names.append(name)
    names.append("window")
    if _trained_room(window) is not None:
        names += list(TRAINED_PANELS)
    return names


def _trained_room(window):
    """The window's trained-model room while it shows a trained model, else None."""
    wiring = getattr(window, "trained", None)
    return wiring.room if wiring is not None and wiring.is_trained else None


def find_panel(window, name: str) -> Panel:
    """The panel ``name`` of ``window`` (a MainWindow), ready for :func:`render_panel`.

    - ``heatmaps``: the whole heatmap view (stages and every head);
    - ``head:N``: head N's weights heatmap (with one head: the weights stage heatmap);
    - ``variance`` / ``saturation``: one of the two plots of the variance panel;
    - ``steps`` / ``geometry``: the step-by-step and geometry views, when the window has them;
    - ``window``: the whole window.

    The panel's default title is :func:`setting_title` of the current state.
    Raises ``ExportError`` (one line, listing the valid names) for an unknown
    name, a head out of range or a view the window does not have.
    """
    try:
        key = check_panel_name(name)
    except ExportError:
        raise ExportError(f"unknown panel {name!r}; choose one of {', '.join(_available(window))}") from None
    state = window.studio.state
    title = setting_title(state, key)
    view = window.heatmap_view
    if key == "heatmaps" or key.startswith("head:"):
        _bring_up_to_date(window, view)
    m = _HEAD_RE.match(key)
    if m:
        n = int(m.group(1))
        heads = _head_count(window)
        if not 1 <= n <= heads:
            raise ExportError(f"there is no head {n} (the model has {heads} head{'s' if heads > 1 else ''}); "
                              f"choose one of {', '.join(_available(window))}")
        shown = max(getattr(view, "_heads_shown", 0), 0)
        if shown > 1 and n <= shown:
            widget = view.head_canvases[n - 1]
        else:
            widget = view.canvases["weights"]
        row_title = "query (decoder)" if state.cross else "query"
        return Panel(widget, None, key, title, row_title=row_title)
    if key == "heatmaps":
        return Panel(view, lambda: _below_header(view), key, title)
    if key == "window":
        return Panel(window, None, key, title)
    if key in TRAINED_PANELS:
        room = _trained_room(window)
        if room is None:
            raise ExportError(f"the {key} panel shows a trained model; choose one in the Model panel first "
                              f"(or choose one of {', '.join(_available(window))})")
        return room.panels()[key]
    if key in ("variance", "saturation"):
        plot = window.variance_plot
        return Panel(plot.canvas, getattr(plot, key), key, title)
    attr = {"steps": "pipeline_view", "geometry": "geometry_view"}[key]
    widget = getattr(window, attr, None)
    if widget is None:
        raise ExportError(f"this window has no {key} panel yet; choose one of {', '.join(_available(window))}")
    _bring_up_to_date(window, widget)
    if key == "steps" and hasattr(widget, "export_table"):
        # The whole table, not the part the scroll area shows.
        return Panel(widget.export_table(), None, key, title)
    return Panel(widget, None, key, title)


def _bring_up_to_date(window, view) -> None:
    # Views in tabs that are not shown are redrawn only when shown; a figure needs them now.
    render_view = getattr(window, "render_view", None)
    if callable(render_view):
        render_view(view)


def show_panel(panel) -> None:
    """Make ``panel`` visible in its window: select the tabs that hold it and show its dock.

    Exports draw hidden panels too, but a panel that was never shown may not be laid out;
    the ``attn-studio export`` command calls this before drawing.
    """
    child = _as_panel(panel).widget
    parent = child.parentWidget()
    while parent is not None:
        if isinstance(parent, QtWidgets.QStackedWidget):
            tabs = parent.parentWidget()
            if isinstance(tabs, QtWidgets.QTabWidget) and tabs.indexOf(child) >= 0:
                tabs.setCurrentWidget(child)
            else:
                parent.setCurrentWidget(child)
        elif isinstance(parent, QtWidgets.QDockWidget) and parent.isHidden():
            parent.show()
        child, parent = parent, parent.parentWidget()


def _below_header(view) -> QtCore.QRect:
    """The heatmap view without its header line: the figure's title states the setting, and
    "click a row" means nothing on a slide."""
    rect = view.rect()
    header = getattr(view, "header", None)
    if header is None or not header.isVisible():
        return rect
    top = header.geometry().bottom() + 1
    return QtCore.QRect(rect.left(), top, rect.width(), rect.bottom() + 1 - top)


def _as_panel(panel) -> Panel:
    if isinstance(panel, Panel):
        return panel
    if isinstance(panel, QtWidgets.QWidget):
        return Panel(panel)
    if isinstance(panel, tuple) and len(panel) == 2 and isinstance(panel[0], QtWidgets.QWidget):
        return Panel(panel[0], panel[1])
    raise ExportError(f"cannot draw a {type(panel).__name__}; pass a Panel from find_panel or a QWidget")


# -- titles ------------------------------------------------------------------------

def _shorten(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def setting_title(state, panel_name: str = "heatmaps") -> str:
    """A title that states the setting of ``state`` for panel ``panel_name``.

    E.g. "Your journey starts with one step — head 1 · scaled ÷√3 · causal".
    The head comes from a ``head:N`` panel name, else ``state.head_index``;
    the variance and saturation plots state d_k instead of a head.
    """
    sentence = _shorten(state.sentence) or "(no sentence)"
    parts = []
    heads = state.effective_heads
    name = str(panel_name).strip().lower()
    m = _HEAD_RE.match(name)
    if name in ("variance", "saturation"):
        parts.append(f"d_k = {state.d_k}")
    elif name != "window":
        head = int(m.group(1)) if m else state.shown_head + 1
        layer = getattr(state, "layer_index", None)  # a trained model: which layer, of which model
        if layer is not None:
            parts.append(f"{state.model.name} layer {layer + 1}")
        parts.append(f"head {head}" + (f" of {heads}" if heads > 1 else ""))
    parts.append(f"scaled ÷√{state.d_k}" if state.scale else "unscaled")
    if state.causal:
        parts.append("causal")
    if state.positional:
        parts.append("positional")
    if not state.projections:
        parts.append("no projections (Q = K = V = X)")
    if state.temperature != 1.0:
        parts.append(f"T={state.temperature:g}")
    if state.softmax == "naive":
        parts.append("naive softmax")
    elif state.softmax == "sum":
        parts.append("x / Σx instead of softmax")
    if getattr(state, "score", "dot") == "additive":
        parts.append("additive scores")
    if state.cross:
        parts.append(f"cross-attention (queries: {_shorten(state.target_sentence, 30)})")
    return f"{sentence} — {' · '.join(parts)}"


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


class _RowLabels:
    """Show a heatmap's row labels while it is exported on its own (restored on exit)."""

    def __init__(self, panel: Panel):
        heatmap = getattr(panel.widget, "heatmap", None)
        axis = getattr(heatmap, "left_axis", None)
        self.heatmap = None
        if panel.row_title is not None and axis is not None and hasattr(heatmap, "show_row_labels") \
                and not axis.style.get("showValues", True):
            self.heatmap, self.axis, self.text, self.widget = heatmap, axis, panel.row_title, panel.widget

    def __enter__(self):
        if self.heatmap is None:
            return self
        self.old_text = self.axis.labelText
        self.heatmap.show_row_labels(True)
        self.heatmap.plot.setLabel("left", self.text)
        self._measure()
        return self

    def _measure(self):
        # An axis learns how wide its labels are only when it draws them; let it measure
        # now and lay the plot out again, so that no label is dropped for want of room.
        scratch = QtGui.QImage(1, 1, QtGui.QImage.Format_ARGB32)
        painter = QtGui.QPainter(scratch)
        try:
            self.axis.generateDrawSpecs(painter)
        finally:
            painter.end()
        self.axis.picture = None
        self.heatmap.plot.layout.activate()
        layout = getattr(getattr(self.widget, "ci", None), "layout", None)
        if layout is not None:
            layout.activate()

    def __exit__(self, *exc):
        if self.heatmap is not None:
            try:
                self.heatmap.plot.setLabel("left", self.old_text)
                self.heatmap.show_row_labels(False)
                self._measure()
            except RuntimeError:
                pass
        return False


def _paint_figure(painter: QtGui.QPainter, layout: _Layout, pen_scale: float) -> None:
    """Draw the page of ``layout`` with ``painter`` (in logical pixels)."""
    panel = layout.panel
    painter.setRenderHint(QtGui.QPainter.Antialiasing, True)
    painter.setRenderHint(QtGui.QPainter.TextAntialiasing, True)
    painter.setRenderHint(QtGui.QPainter.SmoothPixmapTransform, True)
    painter.fillRect(QtCore.QRectF(0, 0, layout.width, layout.height), QtCore.Qt.white)
    if layout.title:
        painter.save()
        painter.setFont(layout.font)
        painter.setPen(QtGui.QColor(20, 20, 20))
        painter.drawText(layout.title_rect, int(QtCore.Qt.AlignHCenter | QtCore.Qt.AlignTop | QtCore.Qt.TextWordWrap),
                         layout.title)
        painter.restore()
    with exporting(), _RowLabels(panel), ExportMode(_scenes(panel), pen_scale):
        painter.save()
        # QGraphicsView (pyqtgraph) overrides render() to draw its scene; QWidget.render draws the widget.
        QtWidgets.QWidget.render(panel.widget, painter, layout.panel_pos, QtGui.QRegion(layout.source))
        painter.restore()


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


def _png_bytes(image: QtGui.QImage, dpi: float) -> bytes:
    dots = round(dpi / 0.0254)
    image.setDotsPerMeterX(dots)
    image.setDotsPerMeterY(dots)
    data = QtCore.QByteArray()
    buffer = QtCore.QBuffer(data)
    buffer.open(QtCore.QIODevice.WriteOnly)
    ok = image.save(buffer, "PNG")
    buffer.close()
    if not ok:
        raise ExportError("Qt could not encode the PNG image")
    return bytes(data.data())


def _svg_bytes(panel, title: str | None) -> bytes:
    from PySide6 import QtSvg

    layout = _Layout(_as_panel(panel), title)
    data = QtCore.QByteArray()
    buffer = QtCore.QBuffer(data)
    buffer.open(QtCore.QIODevice.WriteOnly)
    generator = QtSvg.QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(layout.size())
    generator.setViewBox(QtCore.QRect(QtCore.QPoint(0, 0), layout.size()))
    generator.setResolution(_logical_dpi(layout.panel.widget))
    generator.setTitle(layout.plain_title or "Attention Studio figure")
    generator.setDescription(f"Attention Studio figure: {layout.panel.name or 'panel'}")
    painter = QtGui.QPainter()
    if not painter.begin(generator):
        raise ExportError("Qt could not start an SVG drawing")
    try:
        _paint_figure(painter, layout, 1.0)
    finally:
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


def _pdf_bytes(panel, title: str | None) -> bytes:
    layout = _Layout(_as_panel(panel), title)
    dpi = _logical_dpi(layout.panel.widget)
    data = QtCore.QByteArray()
    buffer = QtCore.QBuffer(data)
    buffer.open(QtCore.QIODevice.WriteOnly)
    writer = QtGui.QPdfWriter(buffer)
    writer.setResolution(dpi)
    points = QtCore.QSizeF(layout.width * 72.0 / dpi, layout.height * 72.0 / dpi)
    page = QtGui.QPageSize(points, QtGui.QPageSize.Point, "figure", QtGui.QPageSize.ExactMatch)
    writer.setPageLayout(QtGui.QPageLayout(page, QtGui.QPageLayout.Portrait, QtCore.QMarginsF(0, 0, 0, 0),
                                           QtGui.QPageLayout.Point))
    writer.setTitle(layout.plain_title or "Attention Studio figure")
    writer.setCreator("Attention Studio")
    painter = QtGui.QPainter()
    if not painter.begin(writer):
        raise ExportError("Qt could not start a PDF drawing")
    try:
        # The page is whole points; fit the figure to it exactly.
        painter.scale(writer.width() / layout.width, writer.height() / layout.height)
        with _QuietQt(_PDF_NOTICES):
            _paint_figure(painter, layout, 1.0)
    finally:
        painter.end()
    buffer.close()
    return bytes(data.data())


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
    return _png_bytes(render_panel(panel, scale, title), dpi)


def svg_bytes(panel, title: str | None = None) -> bytes:
    """The SVG file contents of :func:`export_svg`."""
    return _svg_bytes(panel, title)


def pdf_bytes(panel, title: str | None = None) -> bytes:
    """The PDF file contents of :func:`export_pdf`."""
    return _pdf_bytes(panel, title)


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
    mime = _plain_mime_data()
    mime.setImageData(image)
    mime.setData("image/png", QtCore.QByteArray(_png_bytes(image, _check_scale(scale) * BASE_DPI)))
    mime.setData(SVG_MIME, QtCore.QByteArray(_svg_bytes(panel, title)))
    QtWidgets.QApplication.clipboard().setMimeData(mime)


__all__ = [
    "PANELS", "FORMATS", "ExportError", "Panel", "check_panel_name", "find_panel", "show_panel", "setting_title",
    "resolve_scale", "check_output_path",
    "render_panel", "png_bytes", "svg_bytes", "pdf_bytes", "export_png", "export_svg", "export_pdf",
    "export_figure", "figure_format", "copy_figure",
]
