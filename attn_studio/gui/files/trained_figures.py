"""A trained model's panels laid out for the page, drawn again from the numbers their views show.

The Model view, the drift plot and the meaning view are widgets for the screen: check boxes,
a sentence of hints, a grid that leaves bands of empty canvas at most window sizes. A figure of
one is built here instead, as :mod:`.sheet` builds the heatmaps' figures: new plots fed the
numbers the view shows, sized from their content and never from the window, so the same panel
gives the same figure at any window size.

Each is sized for a slide (:func:`.sheet.slide_width_limit`): the Model view's page is the layer
shown, every head of it and their mean (or rollout), each heatmap with every token (the grid of
all layers cannot label its tokens at a readable size); heads → output is stacked, its hundreds
of dimensions in narrow columns. (Compare, the trained model against the edited one, is the Compare
view's own figure: ``panels.find_panel`` stacks it where side by side would shrink its text below 9 pt.)
"""

from __future__ import annotations

import numpy as np
import shiboken6
from PySide6 import QtCore, QtWidgets

from ...formatting import format_number
from ...matrices import ExportError
from .. import presentation
from ..qt.pg import pg
from ..views.heatmap import WEIGHTS_CMAP, Heatmap
from ..widgets import break_apart, discard
from . import sheet as sheets

ROOM = sheets.SLIDE_ROOM
slide_sheet = sheets.slide_sheet
ROW_CELL = 20.0  # px: the height of a token's row where the columns are dimensions, not tokens
PLOT_VIEW = (700, 330)  # px: the data area of a figure's plot (the axes and title come around it)
BAR_BRUSH = (60, 110, 200)
EDIT_PEN = (230, 60, 20)
COLOR_A, COLOR_B, COSINE_COLOR = (40, 100, 200), (220, 110, 20), (60, 60, 60)


# -- heatmaps from numbers ---------------------------------------------------------------

def data_tile(matrix, rows, cols, title: str, *, cmap: str = WEIGHTS_CMAP, levels=(0.0, 1.0), masked=None,
              axis_titles=("query", "key"), digits: int = 2, **options) -> sheets.Tile:
    """A figure's heatmap of ``matrix`` (rows × columns, labelled ``rows`` / ``cols``), not shown anywhere:
    the numbers a view shows, handed to a :class:`~.sheet.FigureSheet`."""
    values = np.asarray(matrix, dtype=np.float64)
    hm = Heatmap(title, cmap)
    hm.set_digits(digits)
    hm.set_axis_titles(*axis_titles)
    hm.set_data(values, masked=np.zeros(values.shape, bool) if masked is None else masked,
                row_labels=list(rows), col_labels=list(cols), levels=tuple(levels))
    return sheets.Tile(hm, **options)


def free_source(tile: sheets.Tile) -> None:
    """Delete a :func:`data_tile`'s heatmap now that a sheet is drawn from it: a plot in no scene would be
    left to the cycle collector (see ``widgets.discard``). Its items' Python side is emptied too: held in
    reference cycles, a Model view figure's thirteen of them (4,000 objects) waited for the collector's
    next full pass and made it 30 to 60 ms longer."""
    plot = tile.source.plot
    if shiboken6.isValid(plot) and plot.scene() is None:
        items, parts = [plot], []
        while items:  # the plot's items, its axes, labels and their texts, before they are deleted
            item = items.pop()
            parts.append(item)
            items += item.childItems()
        shiboken6.delete(plot)
        break_apart(parts, float("inf"))


def token_cell() -> float:
    """The side of a cell that gives each token's label a line of its own (column labels upright)."""
    from PySide6 import QtGui

    return QtGui.QFontMetricsF(presentation.token_font()).height() + 1


# -- the Model view: one layer's heads ---------------------------------------------------

def model_figure(view, layer: int) -> tuple[sheets.FigureSheet, str]:
    """Every head of ``layer`` (0-based) as the Model view shows it, and their mean (or the rollout up to it):
    a sheet with one colour bar, in as many columns as a slide's width holds; and what it shows, for the title."""
    data = view.data
    if data is None:
        raise ExportError("the model view shows no trained model yet")
    norm = view.norm_check.isChecked() and data.run is not None
    attentions = view.norms() if norm else np.asarray(data.attentions)
    layers, heads, T, _ = attentions.shape
    layer = min(max(int(layer), 0), layers - 1)
    top = (float(attentions.max()) or 1.0) if norm else 1.0
    tokens = list(data.tokens)
    tiles = []
    for h in range(heads):
        scale = float(data.head_scale[layer, h])
        mark = " · silenced" if scale == 0 else (f" · ×{format_number(scale, 2)}" if scale != 1 else "")
        tiles.append(data_tile(attentions[layer, h], tokens, tokens, f"head {h + 1}{mark}", levels=(0.0, top),
                               values=False))
        sheets.breathe()
    last = f"rollout to layer {layer + 1}" if data.rollout else "mean over heads"
    # The view draws the mean's weights on the norms' scale; so does the figure.
    tiles.append(data_tile(np.asarray(data.summary[layer]) * top, tokens, tokens, last, levels=(0.0, top),
                           values=False))
    first = sheets.slide_columns(len(tiles), T, T)
    cell = (token_cell(), token_cell())
    sheet = slide_sheet([sheets.Block(tiles, c, shared_bar=True, cell=cell, shared_axes=True)]
                        for c in range(first, 0, -1))
    for tile in tiles:  # the numbers' holders, in no scene: the sheet drew its own heatmaps from them
        free_source(tile)
    shows = "‖α·f(x)‖ of every head" if norm else "every head"
    return sheet, f"layer {layer + 1} of {layers}: {shows} and the {'rollout' if data.rollout else 'mean'}"


# -- heads → output and the comparison of a trained model --------------------------------

def outputs_figure(view) -> sheets.FigureSheet:
    """Heads → output of a trained model's layer, stacked for a slide: the heads' outputs side by side
    (head by head), × W_O, = the output; every token on the rows, the hundreds of dimensions in narrow
    columns (every n-th labelled, the axis says so)."""
    maps = view.maps
    concat = maps["concat"].data
    if concat is None:
        raise ExportError("the heads → output view shows nothing yet")
    fit, sheet = 1.0, None
    for _ in range(3):  # the labels' room is known once laid out: narrow the columns until the sheet fits
        if sheet is not None:
            discard(sheet)  # now, while whole (see widgets.discard)
        sheet = sheets.heatmap_sheet(_output_blocks(view, fit))
        if sheet.width() <= ROOM:
            break
        fit *= 0.99 * ROOM / sheet.width()
    return sheet


def _output_blocks(view, fit: float) -> list:
    blocks = []
    for key in ("concat", "w_o", "output"):
        if key == "w_o" and view.canvases["w_o"].isHidden():
            continue
        source = view.maps[key]
        rows, cols = source.data.values.shape
        label_w = max(source.left_axis.widest_label_px() + 60, 90)
        width = fit * max((ROOM - label_w - 70) / max(cols, 1), 0.5)
        # W_O is square (dimensions both ways), drawn smaller; the others have a token per row.
        cell = (0.6 * width, 0.6 * width) if key == "w_o" else (width, ROW_CELL)
        tile = sheets.Tile(source, vlines=view.separators if key == "concat" else [], values=False)
        blocks.append(sheets.Block([tile], cell=cell))
    return blocks


# -- plots ----------------------------------------------------------------------------------

def _page_canvas() -> pg.GraphicsLayoutWidget:
    canvas = pg.GraphicsLayoutWidget()
    canvas.setBackground(presentation.STYLE.theme.canvas)
    canvas.ci.layout.setContentsMargins(sheets.SHEET_MARGIN, sheets.SHEET_MARGIN, sheets.SHEET_MARGIN,
                                        sheets.SHEET_MARGIN)
    return canvas


def _page_plot(canvas, title: str, bottom: str, left: str, view_size, row: int = 0, col: int = 0):
    plot = canvas.addPlot(row=row, col=col)
    plot.setMenuEnabled(False)
    plot.setMouseEnabled(x=False, y=False)
    plot.hideButtons()
    plot.setTitle(title, size=presentation.title_size(), color=presentation.STYLE.theme.ink)
    for name, text in (("bottom", bottom), ("left", left)):
        axis = plot.getAxis(name)
        axis.setStyle(tickFont=presentation.tick_font())
        axis.setTextPen(presentation.STYLE.theme.ink)
        axis.setLabel(text, **presentation.label_style())
        axis.enableAutoSIPrefix(False)
    plot.vb.setFixedWidth(view_size[0])
    plot.vb.setFixedHeight(view_size[1])
    return plot


def _sized(canvas) -> pg.GraphicsLayoutWidget:
    """``canvas`` laid out at the size its plots need (offscreen), never the window's."""
    sheets.fit_to_content(canvas)
    return canvas


def _text(plot, text: str, x: float, y: float, color, anchor=(0.5, 1.0)) -> pg.TextItem:
    item = pg.TextItem(text, color=color, anchor=anchor)
    item.setFont(presentation.tick_font())
    item.setPos(float(x), float(y))
    plot.addItem(item)
    return item


def drift_figure(drift, edited_layers=(), edits=None) -> tuple[QtWidgets.QWidget, str]:
    """The drift plot's bars for the page: the distance after each layer written over its bar, every
    edited layer marked and named by its edits (``Edits.edit_names()``: layer → names, 0-based), on the
    view's fixed scale; and what it shows, for the title."""
    from ..views.drift_plot import scale_ticks, scale_top

    if drift is None:
        raise ExportError("the drift plot shows no trained model yet")
    drift = np.asarray(drift, dtype=np.float64)
    names = {int(l): list(v) for l, v in (edits or {}).items()}
    edited = sorted(set(names) | {int(l) for l in edited_layers})
    top = scale_top(float(drift.max()) if drift.size else 0.0)
    canvas = _page_canvas()
    plot = _page_plot(canvas, "Mean cosine distance from the trained model", "layer (0 = embeddings)",
                      "mean cosine distance", PLOT_VIEW)
    x = np.arange(drift.size)
    plot.addItem(pg.BarGraphItem(x=x, height=drift, width=0.7, brush=BAR_BRUSH, pen=None))
    plot.getAxis("bottom").setTicks([[(int(i), str(int(i))) for i in x], []])
    plot.getAxis("left").setTicks(scale_ticks(top))
    plot.setRange(xRange=(-0.6, drift.size - 0.4), yRange=(0, top * 1.08), padding=0)
    plot.showGrid(y=True, alpha=0.25)
    ink = presentation.STYLE.theme.ink
    for i, d in enumerate(drift):
        d = float(d) if abs(d) > 1e-9 else 0.0  # the embeddings' distance is rounding noise (1e-17), not a change
        _text(plot, format_number(d, presentation.digits()), i, d, ink)
    if edited:
        # Edits in model layer l change the output of layer l + 1 on the axis: a line after each
        # edited layer's bar, named by its edits, so a second edit higher up is seen too.
        for i, layer in enumerate(edited):
            plot.addItem(pg.InfiniteLine(pos=layer + 0.5, angle=90,
                                         pen=pg.mkPen(EDIT_PEN, width=2, style=QtCore.Qt.DashLine)))
            said = ", ".join(names.get(layer, [])) or f"layer {layer + 1} edited"
            # Neighbouring edits' names alternate between two heights, so they never overlap.
            _text(plot, said, layer + 0.55, top * (1.05 - 0.1 * (i % 2)), EDIT_PEN, anchor=(0, 0))
        said = [n for l in edited for n in names.get(l, [])] or [f"layer {l + 1} edited" for l in edited]
        what = "heads " + ", ".join(said) if names else ", ".join(said)
    else:
        _text(plot, "the trained model, unedited: every layer at 0", (drift.size - 1) / 2, top / 2, ink,
              anchor=(0.5, 0.5))
        what = "unedited"
    return _sized(canvas), (f"how far each layer moved with {what}" if edited else f"how far each layer moved ({what})")


def meaning_figure(data) -> QtWidgets.QWidget:
    """The meaning view for the page: the word's cosine across the two sentences after each layer, its two
    paths on one plane (a point per layer, numbered), and the two sentences as the key."""
    if data is None:
        raise ExportError("the meaning view shows no word: give a second sentence and a word in both")
    cosine = np.asarray(data.cosine, dtype=np.float64)
    canvas = _page_canvas()
    left = _page_plot(canvas, f"Cosine of “{data.word}”, sentence 1 vs 2", "layer (0 = embeddings)",
                      "cosine similarity", (420, PLOT_VIEW[1]))
    layers = np.arange(cosine.size)
    left.plot(layers, cosine, pen=pg.mkPen(COSINE_COLOR, width=2), symbol="o", symbolSize=7,
              symbolBrush=COSINE_COLOR)
    low = -1.0 if cosine.size and float(cosine.min()) < 0 else 0.0
    left.getAxis("bottom").setTicks([[(int(i), str(int(i))) for i in layers], []])
    left.setRange(xRange=(-0.3, cosine.size - 0.7), yRange=(low, 1.1), padding=0)
    left.showGrid(x=True, y=True, alpha=0.25)
    for i, c in enumerate(cosine):
        _text(left, format_number(float(c), presentation.digits()), i, c, COSINE_COLOR, anchor=(0.5, 1.2))
    # The plane keeps its aspect (distances mean something): the plot is as wide as its points need.
    points = np.concatenate([data.path_a, data.path_b])
    span = np.ptp(points, axis=0) if points.size else np.ones(2)
    span = np.maximum(span, 1e-9) * 1.3
    height = PLOT_VIEW[1]
    width = int(np.clip(height * span[0] / span[1], 260, 620))
    shown = format_number(100 * data.shown, 0)
    right = _page_plot(canvas, f"Path through the layers (the plane keeps {shown}% of the spread)",
                       "principal axis 1", "principal axis 2", (width, height), col=1)
    right.setAspectLocked(True)
    for path, color, symbol, anchor in ((data.path_a, COLOR_A, "o", (0, 1)), (data.path_b, COLOR_B, "s", (1, 0))):
        right.plot(path[:, 0], path[:, 1], pen=pg.mkPen(color, width=2), symbol=symbol, symbolSize=8,
                   symbolBrush=color, symbolPen=None)
        for i, (x, y) in enumerate(path):
            _text(right, str(i), x, y, color, anchor=anchor)
    centre, half = points.min(axis=0) + np.ptp(points, axis=0) / 2, span / 2
    right.setRange(xRange=(centre[0] - half[0], centre[0] + half[0]),
                   yRange=(centre[1] - half[1], centre[1] + half[1]), padding=0)
    key = pg.LabelItem(_key_html(data), size=f"{presentation.BASE_LABEL_PT * presentation.STYLE.zoom:.1f}pt",
                       color=presentation.STYLE.theme.ink)
    canvas.addItem(key, row=1, col=0, colspan=2)
    return _sized(canvas)


def _key_html(data) -> str:
    import html

    def css(color):
        return "#%02x%02x%02x" % tuple(color)

    def short(text, limit=60):
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

    return (f"<span style='color:{css(COLOR_A)}'>● sentence 1:</span> {html.escape(short(data.sentence_a))}"
            f"&nbsp;&nbsp;&nbsp;<span style='color:{css(COLOR_B)}'>■ sentence 2:</span> "
            f"{html.escape(short(data.sentence_b))}")
