"""A figure laid out for the page: a panel's heatmaps drawn again from their numbers.

An export never grabs the widget on screen (its scroll area shows what the
window's size allows, with scroll bars and hints). It builds a
:class:`FigureSheet` instead: a pyqtgraph layout of new :class:`Heatmap` items
fed the very numbers, labels and colour levels the panel's heatmaps show, each
with its title, its colour bar and every token on its rows and columns. The
sheet's size follows from its content (the cells, the labels, the titles), the
way matplotlib's ``bbox_inches="tight"`` does, and not from the window: the
same panel gives the same figure at any window size.

A grid of many heads is laid out to suit a 16:9 slide (``slide_columns``); a
long step-by-step table wraps into rows (``steps_figure``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from ..qt.pg import pg
from ..views.heatmap import SHOWN_MARK, TEXT_PX, Heatmap, format_value, label_colour_bar
from ..widgets import discard, white_page

SLIDE = 16 / 9
MAX_VALUE_CELL = 46    # px: a cell never grows past this for its value
MAX_HEATMAP_SIDE = 900  # px: cells shrink (to the labels' spacing) to keep a heatmap within this
MAX_LABELLED_SIDE = 2400  # px: past this the labels thin (thousands of tokens), with a note
HEAD_BLOCK_WIDTH = 1500  # px: the heads' grid is sized to about this wide (a slide's width)
SHEET_MARGIN = 6
SNUG_MARGIN = 4  # px around a snug figure (the stage's): its parts' own room is measured, not guessed
BAR_WIDTH = 12


@dataclass
class Tile:
    """One heatmap of a figure: ``source`` is the on-screen heatmap whose numbers it shows."""

    source: Heatmap
    bar: bool = True
    title: str | None = None
    vlines: list = field(default_factory=list)  # x positions of separators (the heads' blocks of a concatenation)
    rows: tuple | None = None  # (start, stop): only these rows are shown (a stage's window of a long sentence)
    cols: tuple | None = None  # (start, stop): only these columns
    selected_row: int | None = None  # a row outlined (the stage shows its query; a page figure none)
    values: bool = True  # each cell's value written in it (where it fits); False: the colours alone
    pin: tuple | None = None  # (row, column) of the whole matrix: a cell outlined (a scene's pinned cell)
    title_line: bool = True  # the title drawn over the heatmap; False: the title kept, not drawn
    axis_titles: bool = True  # the axes' titles ("query", "key"); False: their room goes to the tokens
    query_numbers: bool = False  # values written in the selected row and the pinned cell only (the stage,
    # where numbers do not fit every cell: the others show their colour)


@dataclass
class Block:
    """A group of tiles laid out in a grid of ``columns``; ``shared_bar``: one colour bar for all of them."""

    tiles: list
    columns: int = 0
    shared_bar: bool = False
    small: bool = False  # smaller cells (a grid of heads under the stages)
    cell: tuple | None = None  # (width, height) of this block's cells in pixels; None: from the content
    shared_axes: bool = False  # tokens on the first column's rows and the last row's columns only (equal tiles)


def slide_columns(n: int, rows: int, cols: int) -> int:
    """Columns of a grid of ``n`` equal heatmaps of ``rows`` × ``cols`` cells that comes closest to 16:9."""
    if n <= 1:
        return max(n, 1)
    best, best_err = 1, math.inf
    aspect = (cols + 4) / (rows + 5)  # a heatmap with its labels and title is a little taller than its cells
    for c in range(1, n + 1):
        r = -(-n // c)
        if r * c - n >= c:  # an empty row
            continue
        err = abs(math.log((c * aspect) / (r * SLIDE)))
        err += 0.8 * (r * c - n) / c  # prefer full rows: 12 heads as 4 × 3 or 6 × 2, not 5 + 5 + 2
        if err < best_err - 1e-9:
            best, best_err = c, err
    return best


def _value_cell(tiles) -> float:
    """The side of a cell that holds its value at the usual text size."""
    font = QtGui.QFont(QtWidgets.QApplication.font())
    font.setPixelSize(int(TEXT_PX))
    metrics = QtGui.QFontMetricsF(font)
    widest = 0.0
    for tile in tiles:
        data = tile.source.data
        finite = data.values[np.isfinite(data.values)] if data is not None else np.zeros(0)
        for v in (finite.min(), finite.max()) if finite.size else ():
            widest = max(widest, metrics.horizontalAdvance(format_value(v, tile.source.digits)))
    return min(max(widest + 8, 2.2 * TEXT_PX), MAX_VALUE_CELL)


def _label_cell(axis_font: QtGui.QFont) -> float:
    # Slanted column labels need their line height / sin 45° between them; rows their height.
    return QtGui.QFontMetricsF(axis_font).height() / math.sin(math.radians(45)) + 1


class FigureSheet(pg.GraphicsLayoutWidget):
    """Heatmaps of a panel, drawn again from their numbers and laid out for a page.

    ``blocks`` are stacked top to bottom. The widget is never shown on screen: it
    is laid out offscreen (``lay_out``) and drawn by the figure code.
    """

    def __init__(self, blocks: list[Block], cell: tuple[float, float] | None = None, snug: bool = False,
                 key_angle: float = 45):
        """``cell``: (width, height) of every cell in pixels, as a stage sizes them for its screen;
        None: sized from the content for the page. ``snug`` (a stage's figure): no room but what is drawn in
        it — the key axis as tall as its slanted labels reach, each colour bar as tall as its heatmap's rows,
        and labels never closer than their line height; ``key_angle``: the slant of the key labels (degrees)."""
        super().__init__()
        self.snug, self.key_angle = snug, key_angle
        # The views' own canvas colour: the labels are drawn in the theme's ink.
        self.setBackground(presentation.STYLE.theme.canvas)
        margin = SNUG_MARGIN if snug else SHEET_MARGIN
        self.ci.layout.setContentsMargins(margin, margin, margin, margin)
        self.ci.layout.setVerticalSpacing(14)
        self.heatmaps: list[Heatmap] = []
        self.bars: list = []
        self._row_bars: list[Heatmap] = []  # heatmaps with a colour bar of their own beside them
        label_cell = _label_cell(presentation.tick_font())
        for b, block in enumerate(blocks):
            tiles = [t for t in block.tiles if t.source.data is not None]
            if not tiles:
                continue
            n_max = max(max(t.source.data.values.shape) for t in tiles)
            value_cell = _value_cell(tiles)
            limit = MAX_HEATMAP_SIDE
            columns = block.columns or len(tiles)
            if block.small:
                limit = min(limit, HEAD_BLOCK_WIDTH / columns - 90)
            side = max(label_cell, min(value_cell, limit / max(n_max, 1)))
            side = min(side, max(MAX_LABELLED_SIDE / max(n_max, 1), 2.0))
            sizes = cell if cell is not None else block.cell or (side, side)
            sub = self.ci.addLayout(row=b, col=0)
            if snug:
                sub.layout.setContentsMargins(0, 0, 0, 0)  # the sheet's own margin is room enough
            sub.setSpacing(2)
            sub.layout.setHorizontalSpacing(10)
            if columns == 1 and len(tiles) > 1:
                sub.layout.setVerticalSpacing(14)  # stacked: each colour bar's end labels clear of the next one's
            rows_used = -(-len(tiles) // columns)
            for i, tile in enumerate(tiles):
                r, c = divmod(i, columns)
                shared = block.shared_axes
                hm = self._heatmap(tile, sizes, rows_shown=not shared or c == 0,
                                   cols_shown=not shared or i + columns >= len(tiles))
                sub.addItem(hm.plot, row=r, col=2 * c)
                breathe()
                if tile.bar and not block.shared_bar:
                    sub.addItem(self._bar(hm), row=r, col=2 * c + 1)
                    self._row_bars.append(hm)
                breathe()
            if block.shared_bar:
                sub.addItem(self._bar(self.heatmaps[-1]), row=0, col=2 * columns, rowspan=rows_used)

    def _heatmap(self, tile: Tile, cell: tuple[float, float], rows_shown: bool = True,
                 cols_shown: bool = True) -> Heatmap:
        """The tile's heatmap; ``rows_shown`` / ``cols_shown`` False: its tokens are a neighbour's (shared axes)."""
        src = tile.source
        data = _windowed(src.data, tile.rows, tile.cols)
        hm = Heatmap(shown_title(tile), src._cmap_name)
        hm.source = src  # the window's heatmap it shows: an animation keeps that one's colour scale fixed
        breathe()
        if self.snug:
            for axis in (hm.left_axis, hm.bottom_axis):
                axis.slack, axis.slack_px = 0.0, 0.0  # neighbouring labels' boxes never overlap
            hm.bottom_axis.snug = True
            hm.bottom_axis.ANGLE = self.key_angle
        if not tile.title_line:
            hm.plot.setTitle(None)  # no title line (the stage says the tile's name in its own title)
        hm.max_image_side = None  # the page shows every cell, however many (the screen, block means)
        hm.set_colormap(src._cmap_name)
        hm.show_row_labels(rows_shown)
        hm.set_digits(src.digits)
        hm.overlay.show_values = tile.values
        rows_title = src.left_axis.labelText or "query"
        cols_title = src.bottom_axis.labelText or "key"
        hm.set_axis_titles(rows_title, cols_title if cols_shown else "")
        if not tile.axis_titles:
            hm.show_row_title(False)
            hm.bottom_axis.showLabel(False)
        hm.set_data(data.values, masked=data.masked, row_labels=list(data.row_labels),
                    col_labels=list(data.col_labels) if cols_shown else [""] * data.values.shape[1],
                    levels=tuple(src.levels),
                    selected_row=_row_in(tile, data.values.shape[0]))
        rows, cols = data.values.shape
        pin = _pin_in(tile, rows, cols)
        hm.set_pinned(pin)
        if tile.query_numbers:
            hm.set_written(written_cells(rows, cols, _row_in(tile, rows), pin))
        width, height = max(cols, 1) * cell[0], max(rows, 1) * cell[1]
        # The title is whole: the heatmap is at least as wide as it (less its row labels).
        title_w = hm.plot.titleLabel.item.boundingRect().width() if tile.title_line else 0.0
        width = max(width, title_w - hm.left_axis.minimumWidth() + 4)
        hm.plot.vb.setMinimumSize(width, height)
        hm.plot.vb.setMaximumSize(width, height)
        hm.bottom_axis.fit_spacing(width / max(cols, 1))  # the columns' spacing as laid out (a long title widens them)
        # The heatmap's own preferred size is a token 80 × 80 (the window's layouts share
        # space by stretch); on the page it is what its parts need.
        title_h = 0 if not tile.title_line else hm.plot.titleLabel.effectiveSizeHint(QtCore.Qt.PreferredSize).height()
        plot_w = hm.left_axis.minimumWidth() + width + 6
        plot_h = title_h + height + hm.bottom_axis.minimumHeight() + (2 if self.snug else 6)
        for set_size in (hm.plot.setMinimumSize, hm.plot.setPreferredSize, hm.plot.setMaximumSize):
            set_size(plot_w, plot_h)
        for x in tile.vlines:
            x -= tile.cols[0] if tile.cols else 0
            if not -0.5 < x < cols - 0.5:
                continue
            hm.plot.addItem(pg.InfiniteLine(pos=x, angle=90, pen=pg.mkPen("k", width=2)))
        self.heatmaps.append(hm)
        return hm

    def _bar(self, hm: Heatmap):
        bar = pg.ColorBarItem(values=tuple(hm.levels), colorMap=hm.colormap, interactive=False, width=BAR_WIDTH)
        label_colour_bar(bar)  # both ends, and 0 when it lies inside
        hm.bar = bar
        self.bars.append(bar)
        return bar

    def lay_out(self) -> QtCore.QSize:
        """Size the sheet to its content (offscreen) and return that size."""
        size = fit_to_content(self)
        if self.snug and self._row_bars:
            # Each colour bar as tall as its heatmap's rows (the layout gave it the whole row: the title's
            # and the key labels' height too): its ends are the colours of the cells, not of empty room. Its
            # end labels are centred on its ends: where no title line stands over the rows the top one would
            # reach above the figure, and the bar starts that much lower (it never reaches past the rows; a
            # row of the sentence is worth more than half a line of colour).
            for hm in self._row_bars:
                rows, bar = hm.plot.vb.sceneBoundingRect(), hm.bar.vb.sceneBoundingRect()
                metrics = QtGui.QFontMetricsF(hm.bar.axis.style.get("tickFont") or QtWidgets.QApplication.font())
                over = max(math.ceil(metrics.height() / 2 + 1 - rows.top()), 0)
                left, top, right, bottom = hm.bar.layout.getContentsMargins()
                hm.bar.layout.setContentsMargins(left, top + max(rows.top() - bar.top(), 0) + over, right,
                                                 bottom + max(bar.bottom() - rows.bottom(), 0))
            size = fit_to_content(self)
        return size


def fit_to_content(canvas: pg.GraphicsLayoutWidget) -> QtCore.QSize:
    """Size a layout of plots to what its plots need (offscreen), never to a window; returns that size."""
    layout = canvas.ci.layout
    layout.invalidate()
    layout.activate()
    hint = canvas.ci.effectiveSizeHint(QtCore.Qt.PreferredSize)
    size = QtCore.QSize(math.ceil(hint.width()), math.ceil(hint.height()))
    lay_out_offscreen(canvas, size)
    canvas.ci.setGeometry(QtCore.QRectF(0, 0, size.width(), size.height()))
    layout.activate()
    return size


def shown_title(tile: Tile) -> str:
    """The title a tile's heatmap has in a figure: its own, or its source's without the on-screen mark."""
    title = tile.title if tile.title is not None else tile.source.title
    return title[: -len(SHOWN_MARK)] if title.endswith(SHOWN_MARK) else title


def _row_in(tile: Tile, rows: int) -> int | None:
    """The tile's selected row counted within its window of rows, None when outside it."""
    if tile.selected_row is None:
        return None
    row = tile.selected_row - (tile.rows[0] if tile.rows else 0)
    return row if 0 <= row < rows else None


def _pin_in(tile: Tile, rows: int, cols: int) -> tuple[int, int] | None:
    """The tile's pinned cell counted within its windows of rows and columns, None when outside them."""
    if tile.pin is None:
        return None
    i = tile.pin[0] - (tile.rows[0] if tile.rows else 0)
    j = tile.pin[1] - (tile.cols[0] if tile.cols else 0)
    return (i, j) if 0 <= i < rows and 0 <= j < cols else None


def written_cells(rows: int, cols: int, row: int | None, pin: tuple | None) -> np.ndarray:
    """The cells whose values are written where numbers do not fit every cell: row ``row`` (the query's)
    and cell ``pin``."""
    cells = np.zeros((rows, cols), dtype=bool)
    if row is not None and 0 <= row < rows:
        cells[row] = True
    if pin is not None and 0 <= pin[0] < rows and 0 <= pin[1] < cols:
        cells[pin] = True
    return cells


def _windowed(data, rows: tuple | None, cols: tuple | None):
    """``data`` (a HeatmapData) cut to rows ``rows`` and columns ``cols`` ((start, stop) or None: all)."""
    if rows is None and cols is None:
        return data
    r = slice(*rows) if rows else slice(None)
    c = slice(*cols) if cols else slice(None)
    return type(data)(data.values[r, c], data.masked[r, c], list(data.row_labels)[r], list(data.col_labels)[c],
                      data.levels, None)


def lay_out_offscreen(widget: QtWidgets.QWidget, size: QtCore.QSize | None = None) -> None:
    """Give ``widget`` its size and layout without ever showing it on a screen.

    Shown once with ``WA_DontShowOnScreen`` so that its layouts and resize handlers
    run, then hidden again, so that it never counts as an open window.
    """
    widget.setAttribute(QtCore.Qt.WA_DontShowOnScreen, True)
    if size is not None:
        widget.resize(size)
    widget.show()
    QtCore.QCoreApplication.sendPostedEvents(widget, QtCore.QEvent.LayoutRequest)
    for child in widget.findChildren(QtWidgets.QWidget):
        QtCore.QCoreApplication.sendPostedEvents(child, QtCore.QEvent.LayoutRequest)
    widget.hide()


def heatmap_sheet(blocks: list[Block]) -> FigureSheet:
    """A :class:`FigureSheet` of ``blocks``, laid out for its content."""
    sheet = FigureSheet(blocks)
    breathe()
    sheet.lay_out()
    breathe()
    return sheet


# -- the step-by-step table, wrapped into rows -----------------------------------------

STEPS_MAX_WIDTH = 1400  # px: a longer table continues below, its row titles repeated


def steps_figure(view, max_width: float = STEPS_MAX_WIDTH, columns=None) -> QtWidgets.QWidget:
    """The step-by-step table of ``view`` (a PipelineView) whole, wrapped into rows of key columns.

    Every step and every key is shown, no scroll bars, buttons or explanation; a
    table wider than a slide (or ``max_width`` pixels: a printed page) continues below
    (its step titles repeated), so the figure is not a long strip. ``columns``: only these
    columns (a page's window of keys), else every one.
    """
    model = view.model
    live_h, live_v = view.table.horizontalHeader(), view.table.verticalHeader()
    natural = view.natural_widths or []
    n = model.columnCount()
    if len(natural) != n:
        natural = [live_h.sectionSize(c) for c in range(n)]
    room = max(max_width - live_v.width(), 200)
    chunks, current, used = [], [], 0
    for c, w in enumerate(natural):
        if columns is not None and c not in columns:
            continue
        if current and used + w > room:
            chunks.append(current)
            current, used = [], 0
        current.append(c)
        used += w
    if current:
        chunks.append(current)
    page = white_page()
    layout = QtWidgets.QVBoxLayout(page)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(12)
    width = height = 0
    for chunk in chunks or [[]]:
        table = QtWidgets.QTableView()
        table.setModel(model)
        table.setFont(view.table.font())
        table.setWordWrap(True)
        table.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        table.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        table.setFrameShape(QtWidgets.QFrame.NoFrame)
        for c in range(n):
            table.setColumnHidden(c, c not in chunk)
            table.setColumnWidth(c, natural[c])
        table.verticalHeader().setFixedWidth(live_v.width())
        table.horizontalHeader().setFixedHeight(live_h.height())
        table.resizeRowsToContents()
        for r in range(model.rowCount()):
            table.setRowHeight(r, max(table.rowHeight(r) + 8, live_v.defaultSectionSize()))
        w = live_v.width() + sum(natural[c] for c in chunk) + 2
        h = live_h.height() + sum(table.rowHeight(r) for r in range(model.rowCount())) + 2
        table.setFixedSize(w, h)
        layout.addWidget(table, 0, QtCore.Qt.AlignLeft)
        width, height = max(width, w), height + h + (12 if height else 0)
    lay_out_offscreen(page, QtCore.QSize(width, height))
    return page


# -- the slide rule --------------------------------------------------------------------

SLIDE_WIDTH_PT = 13.333 * 72  # a 16:9 slide is 13.33 in wide
SMALLEST_SLIDE_PT = 9.0  # no text of a figure smaller than this once the figure fills a slide's width
PAGE_TEXT_PX = 12.0  # the smallest text a page figure draws: the axes' and colour bars' ticks (9 pt at 96 dpi)


def slide_points(text_px: float, figure_width_px: float) -> float:
    """The size in points of a text ``text_px`` pixels high once a figure ``figure_width_px`` pixels wide
    is scaled to fill the width of a 16:9 slide (13.33 in)."""
    return float(text_px) * SLIDE_WIDTH_PT / max(float(figure_width_px), 1.0)


def slide_width_limit(text_px: float = PAGE_TEXT_PX) -> float:
    """The widest a figure may be, in pixels, for a text ``text_px`` high to stay at least 9 pt on a slide."""
    return float(text_px) * SLIDE_WIDTH_PT / SMALLEST_SLIDE_PT


def fits_slide(figure_width_px: float, smallest_text_px: float) -> bool:
    """The slide rule: no text below 9 pt when the figure is scaled to a 13.33 in wide slide."""
    return slide_points(smallest_text_px, figure_width_px) >= SMALLEST_SLIDE_PT - 1e-9


FIGURE_MARGINS = 20  # px the figure code adds around a panel (figures.MARGIN on both sides)
SLIDE_ROOM = slide_width_limit() - FIGURE_MARGINS  # px: the widest a panel may be for its ticks to keep 9 pt


# -- building a figure while the window stays live ------------------------------------------

_breath: list = []  # the window's export in progress: what lets its event loop run between a figure's parts


def breathe() -> None:
    """Between two parts of a figure being built (a heatmap and its colour bar): while the window
    exports (:func:`breathing`), its event loop runs a turn here, so that building a large figure
    never holds the window for long; else nothing."""
    if _breath:
        _breath[-1]()


class breathing:
    """While building a figure for the window's export: ``turn()`` is called at every :func:`breathe`."""

    def __init__(self, turn):
        self.turn = turn

    def __enter__(self):
        _breath.append(self.turn)
        return self

    def __exit__(self, *exc):
        _breath.remove(self.turn)
        return False


def slide_sheet(arrangements) -> FigureSheet:
    """The first of ``arrangements`` (each a list of :class:`Block`, the most compact first) whose sheet keeps
    the slide rule (:func:`fits_slide`); the last one when none does."""
    sheet = None
    for blocks in arrangements:
        if sheet is not None:
            discard(sheet)  # now, while whole (see widgets.discard)
            breathe()
        sheet = heatmap_sheet(blocks)
        if sheet.width() <= SLIDE_ROOM:
            break
    return sheet
