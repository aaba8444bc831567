"""Attention heatmaps: one image per matrix, with token labels and values in the cells.

Each ``ImageItem`` is created once and updated with ``setImage``. The values in
the cells are :mod:`.cells`' (one ``CellOverlay`` per heatmap), the token labels
:mod:`.token_axis`' (``TokenAxis``), the switch between the screen and a figure
:mod:`.export_marks`' (``exporting``), and the colour maps and colour bars
:mod:`.heatmap_colours`'. The names of those the views and the figures have always
imported from here are imported from here still (``__all__``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6 import QtCore, QtWidgets

from .. import presentation
from ..qt.pg import cache_static, pg
from .heatmap_image import MAX_IMAGE_SIDE, Picture
from .heatmap_item import HeatmapImage
from .cells import (
    HIGHLIGHT_EDGE, HIGHLIGHT_FILL, MIN_TEXT_PX, TEXT_PX, CellOverlay, format_value, mask_colours,
)
from .export_marks import exporting, is_exporting, register
from .heatmap_colours import (
    DARK_DIM, Palette, bar_text, bar_ticks, label_colour_bar, nice_ceil, relabel_bar, set_bar_levels,
    symmetric_levels, themed_colormap, themed_palette,
)
from .token_axis import LABEL_EM, LABEL_SLACK, MIN_EXPORT_LABEL_SCALE, TokenAxis, _ticks

__all__ = [
    # this module's own
    "WEIGHTS_CMAP", "SCORES_CMAP", "SHOWN_MARK", "HeatmapData", "Heatmap",
    # colour maps and colour bars (heatmap_colours)
    "DARK_DIM", "Palette", "themed_colormap", "themed_palette", "nice_ceil", "symmetric_levels",
    "bar_text", "bar_ticks", "label_colour_bar", "set_bar_levels", "relabel_bar",
    # the switch between the screen and a figure (export_marks)
    "exporting", "is_exporting", "register",
    # token labels (token_axis) and cells (cells)
    "LABEL_EM", "LABEL_SLACK", "MIN_EXPORT_LABEL_SCALE", "TokenAxis",
    "HIGHLIGHT_EDGE", "HIGHLIGHT_FILL", "MIN_TEXT_PX", "TEXT_PX", "CellOverlay", "format_value", "mask_colours",
]

WEIGHTS_CMAP = "viridis"
SCORES_CMAP = "CET-CBD1"  # colour-blind-safe diverging map for signed scores
SHOWN_MARK = " ◀"   # after the title of the head the stages show: an on-screen pointer, not in figures


@dataclass(frozen=True)
class HeatmapData:
    """What a heatmap shows: its values (rows = queries), masked cells, labels, colour levels, selection."""

    values: np.ndarray
    masked: np.ndarray
    row_labels: list
    col_labels: list
    levels: tuple
    selected_row: int | None


class Heatmap:
    """One labelled heatmap: a PlotItem holding an ImageItem and a CellOverlay."""

    def __init__(self, title: str = "", cmap: str = WEIGHTS_CMAP):
        self._last = None  # the last set_data call, to redraw after a colour-map change
        self.left_axis = TokenAxis("left")
        self.bottom_axis = TokenAxis("bottom")
        # No context menus (the canvas offers its own): built without them, not built and then dropped.
        self.plot = pg.PlotItem(axisItems={"left": self.left_axis, "bottom": self.bottom_axis}, enableMenu=False)
        self.plot.setMenuEnabled(False)
        # Equal preferred sizes so that the layout's stretch factors share the
        # space evenly, whatever the titles' lengths.
        self.plot.setSizePolicy(QtWidgets.QSizePolicy.Expanding, QtWidgets.QSizePolicy.Expanding)
        self.plot.setPreferredSize(80, 80)
        # A long title must not widen the plot past its share of the panel
        # (pyqtgraph's LabelItem makes its text width a minimum width).
        label = self.plot.titleLabel

        def update_min(label=label):
            height = label.itemRect().height()
            label.setMinimumWidth(0)
            label.setMinimumHeight(height)
            label._sizeHint = {QtCore.Qt.SizeHint.MinimumSize: (0, height),
                               QtCore.Qt.SizeHint.PreferredSize: (0, height),
                               QtCore.Qt.SizeHint.MaximumSize: (-1, -1),
                               QtCore.Qt.SizeHint.MinimumDescent: (0, 0)}
            label.updateGeometry()

        label.updateMin = update_min
        label.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Fixed)
        # The title spans the row labels' column too: over the cells alone, a narrow stage (1280 × 720)
        # cut "logits (unscaled)" at its colour bar.
        self.plot.layout.removeItem(label)
        self.plot.layout.addItem(label, 0, 0, 1, 3)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.invertY(True)
        self.plot.setAspectLocked(False)
        cache_static(*(self.plot.getAxis(n) for n in ("left", "bottom", "top", "right")))
        for name in ("top", "right"):  # hidden, titleless: an SI prefix would never show
            self.plot.getAxis(name).enableAutoSIPrefix(False)
        self.image = HeatmapImage()
        self._cmap_name = cmap
        self._set_palette(themed_palette(cmap))
        self.plot.addItem(self.image)
        self.overlay = CellOverlay()
        self.overlay.restyled = self._restyled
        self.overlay.setZValue(10)
        self.plot.addItem(self.overlay)
        self.title = title
        self.plot.setTitle(title, size=presentation.title_size(), color=presentation.STYLE.theme.ink)
        register(self)
        self.bar = None  # the colour bar beside it, if any (set by its canvas)
        self.role = "weights" if cmap == WEIGHTS_CMAP else "scores"
        if self.role == "weights":
            presentation.register_weights_heatmap(self)
            if presentation.STYLE.weights_cmap != cmap:
                self.set_colormap(presentation.STYLE.weights_cmap)
        self.levels = (0.0, 1.0)
        self._shape = (-1, -1)
        self._rect_shape = (-1, -1)  # (rows, columns) the image's rectangle was set for
        self._drawn = np.zeros((0, 0))  # the values drawn at the last set_data
        # The picture of a matrix larger than a screen shows block means (heatmap_image); a figure
        # for the page sets None and draws every cell.
        self._max_image_side: int | None = MAX_IMAGE_SIDE
        self._labels: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    @property
    def max_image_side(self) -> int | None:
        """The picture's largest side in pixels: a larger matrix is pictured by block means
        (:mod:`.heatmap_image`); None draws a pixel per cell (a figure for the page)."""
        return self._max_image_side

    @max_image_side.setter
    def max_image_side(self, side: int | None) -> None:
        if side != self._max_image_side:
            self._max_image_side = side
            if self._last is not None:
                last, self._last = self._last, None  # the same numbers, pictured again
                self.set_data(*last[0], **last[1])

    def set_colormap(self, name: str):
        """Draw with colour map ``name`` (and recolour the attached colour bar)."""
        self._cmap_name = name
        self._set_palette(themed_palette(name))
        if self.bar is not None:
            self.bar.setColorMap(self.colormap)
        if self._last is not None:
            last, self._last = self._last, None  # the same numbers, drawn again in the new colours
            self.set_data(*last[0], **last[1])

    def _set_palette(self, palette: Palette) -> None:
        self._palette = palette
        self.colormap = palette.colormap
        self._lut = palette.lut
        self.image.setLookupTable(self._lut)
        self._table = palette.table  # the same colours as 32-bit pixels (heatmap_image)
        self._luminance = palette.luminance  # for the cell text's colour (kept, not recomputed per edit)

    def _restyled(self):
        # A theme change: colours dim on a dark theme (see themed_colormap); other restyles keep them.
        if self._palette is not themed_palette(self._cmap_name):
            self.set_colormap(self._cmap_name)

    def set_axis_titles(self, rows: str, cols: str):
        if self.left_axis.style["showValues"] and self.left_axis.labelText != rows:
            shown = self.left_axis.label.isVisible() or not self.left_axis.labelText
            self.plot.setLabel("left", rows, **presentation.label_style())
            if not shown:
                self.left_axis.showLabel(False)
            self.left_axis.relabel()  # the title takes room beside the labels
        if self.bottom_axis.labelText != cols:
            self.plot.setLabel("bottom", cols, **presentation.label_style())
            self.bottom_axis.relabel()

    def show_row_title(self, on: bool):
        """Show or hide the rows' axis title ("query"); the token labels stay."""
        axis = self.left_axis
        if axis.label.isVisible() != on and axis.style["showValues"]:
            axis.showLabel(on)
            axis.relabel()  # the labels' room changed

    def show_row_labels(self, on: bool):
        """Row labels on the first heatmap of a row only: the others share its rows."""
        self.left_axis.setStyle(showValues=on)
        self.left_axis.showLabel(on)
        if not on:
            self.left_axis.setWidth(4)
        else:
            self.left_axis.setWidth(None)

    @property
    def data(self) -> HeatmapData | None:
        """What the heatmap shows now (the arguments of the last :meth:`set_data`), or None."""
        if self._last is None:
            return None
        (values,), kwargs = self._last
        return HeatmapData(values, **kwargs)

    @property
    def digits(self) -> int:
        """Decimals of the cell values (the precision setting)."""
        return self.overlay.digits

    def set_digits(self, digits: int):
        """Write the cell values with ``digits`` decimals."""
        self.overlay.set_digits(digits)

    def set_pinned(self, cell: tuple[int, int] | None):
        """Outline cell (row, column) as pinned: a scene's cell the stage keeps in view (None: none)."""
        self.overlay.set_pinned(cell)

    def set_written(self, cells: np.ndarray | None):
        """Write the values of ``cells`` only ((rows, columns) booleans), the others showing their colour
        alone (None: every cell that holds its value)."""
        self.overlay.set_written(cells)

    def set_title(self, title: str):
        if title != self.title:
            self.title = title
            self._show_title()

    def _show_title(self):
        title = self.title
        if is_exporting() and title.endswith(SHOWN_MARK):
            title = title[: -len(SHOWN_MARK)]
        self.plot.setTitle(title, size=presentation.title_size(), color=presentation.STYLE.theme.ink)

    def redraw_marks(self):
        """Draw the title, outline and labels again for the screen or a figure (see :func:`exporting`)."""
        if self.title.endswith(SHOWN_MARK):
            self._show_title()
        for axis in (self.left_axis, self.bottom_axis):
            axis.picture = None
            axis.update()
        self.overlay.update()

    def prepare(self, values: np.ndarray, masked: np.ndarray, levels: tuple[float, float]) -> Picture:
        """What :meth:`set_data` would draw of ``values``, worked out now: NumPy only, safe on a worker
        thread (it reads the colour table and size limit, which only the GUI thread replaces). Hand it
        to ``set_data(..., picture=...)`` with the very same ``values`` and ``masked`` arrays, which
        must not change afterwards (a studio's result never does)."""
        values = np.asarray(values, dtype=np.float64)
        return Picture(values, np.asarray(masked, dtype=bool), levels, self._table, self.max_image_side)

    def set_data(self, values: np.ndarray, *, masked: np.ndarray, row_labels: list[str], col_labels: list[str],
                 levels: tuple[float, float], selected_row: int | None = None, picture: Picture | None = None):
        """Show ``values`` (rows = queries, columns = keys); masked cells are hatched, not coloured.

        The same data as last time changes nothing (and repaints nothing); only what changed
        is drawn again (a new selected row alone only moves the outline). A matrix wider than
        ``max_image_side`` is pictured by block means (see :mod:`.heatmap_image`). ``picture``:
        :meth:`prepare`'s result for these very arrays, which leaves the GUI thread next to nothing to do.
        """
        values = np.asarray(values, dtype=np.float64)
        masked = np.asarray(masked, dtype=bool)
        lo, hi = float(levels[0]), float(levels[1])
        if not hi > lo:
            hi = lo + 1.0
        if picture is not None and not (picture.values is values and picture.masked is masked
                                        and picture.table is self._table and picture.levels == (lo, hi)
                                        and picture.max_side == self.max_image_side):
            picture = None  # made for other numbers or colours: of no use
        last = self._last[1] if self._last is not None else None
        if picture is not None:
            # Prepared from arrays nobody changes: the same array is the same picture.
            same_cells = last is not None and self._drawn is values and np.array_equal(last["masked"], masked) \
                and tuple(self.levels) == (lo, hi)
        else:
            same_cells = last is not None and self._same_cells(values, masked, last["masked"], (lo, hi))
        same_labels = last is not None and (list(last["row_labels"]) == list(row_labels)
                                            and list(last["col_labels"]) == list(col_labels))
        if (same_cells and same_labels and last["selected_row"] == selected_row
                and tuple(last["levels"]) == tuple(levels)):
            return
        self._last = ((values,), dict(masked=masked, row_labels=row_labels, col_labels=col_labels,
                                      levels=levels, selected_row=selected_row))
        rows, cols = values.shape
        if same_cells:
            self.overlay.set_selected_row(selected_row)
        else:
            if picture is None:
                # A copy: the caller may reuse its array, and the next comparison must see the numbers drawn.
                values = values.copy()
                picture = Picture(values, masked, (lo, hi), self._table, self.max_image_side)
            self._draw_cells(picture, selected_row)
        if (rows, cols) != self._rect_shape:
            self._rect_shape = (rows, cols)
            self.image.setRect(QtCore.QRectF(-0.5, -0.5, max(cols, 1), max(rows, 1)))
        self.set_labels(row_labels, col_labels)
        if (rows, cols) != self._shape:
            self._shape = (rows, cols)
            self.plot.setXRange(-0.5, max(cols, 1) - 0.5, padding=0)
            self.plot.setYRange(-0.5, max(rows, 1) - 0.5, padding=0)

    def fit_column_labels(self) -> bool:
        """Give the column labels' axis the height of the angle they will be drawn at (slanted, or upright
        where the columns are too narrow), as laid out now; True when its height changed (lay out again
        before painting). Call once the plot is laid out and its range set (``scene().prepareForPaint()``)."""
        axis = self.bottom_axis
        if len(axis.labels()) < 2 or axis.linkedView() is None or not axis.style["showValues"]:
            return False
        before = axis.fixedHeight
        axis.fit_height_now()
        return axis.fixedHeight != before

    def expect(self, row_labels, col_labels) -> bool:
        """Lay the heatmap out for these tokens before their numbers come: its labels and its plot's range
        (the cells are drawn by the next :meth:`set_data`, with numbers of this shape). True when they
        changed. Its canvas is held unpainted meanwhile (it would show old cells under new labels)."""
        changed = self.set_labels(row_labels, col_labels)
        shape = (len(row_labels), len(col_labels))
        if shape != self._shape:
            self._shape = shape
            self.plot.setXRange(-0.5, max(shape[1], 1) - 0.5, padding=0)
            self.plot.setYRange(-0.5, max(shape[0], 1) - 0.5, padding=0)
            changed = True
        return changed

    def has_labels(self, row_labels, col_labels) -> bool:
        """Whether the rows and columns are labelled with these tokens (set by :meth:`set_labels`)."""
        return self._labels == (tuple(row_labels), tuple(col_labels))

    def set_labels(self, row_labels, col_labels) -> bool:
        """Label the rows and columns with these tokens (as :meth:`set_data` does); True when they changed.
        A view sets a new sentence's labels first when it lays its heatmaps out for them before drawing."""
        if self.has_labels(row_labels, col_labels):
            return False
        self._labels = (tuple(row_labels), tuple(col_labels))
        self.left_axis.set_labels(_ticks(list(row_labels))[0])
        self.bottom_axis.set_labels(_ticks(list(col_labels))[0])
        return True

    def _draw_cells(self, picture: Picture, selected_row: int | None) -> None:
        values, masked = picture.values, picture.masked
        self._drawn = values
        self.levels = picture.levels
        if picture.pixels is not None:
            self.image.setImage(picture.shown, levels=picture.levels, autoLevels=False)
            self.image.set_pixels(picture.pixels, picture.factor)
        else:
            self.image.setImage(np.full((1, 1), np.nan), levels=picture.levels, autoLevels=False)
            self.image.set_pixels(None)
        self.overflow = picture.overflow
        found = (picture.mask_runs, picture.overflow_runs) if picture.mask_runs is not None else None
        self.overlay.set_data(values, masked, self._dark_text, selected_row, picture.overflow, found)

    def _dark_text(self, values: np.ndarray) -> np.ndarray:
        """Per cell, whether its value is written dark (on the bright end of the colour map); masked
        cells count as the map's low end. Asked for only when the values are drawn (cells large enough)."""
        lo, hi = self.levels
        with np.errstate(invalid="ignore"):
            index = np.clip((values - lo) * (255.0 / (hi - lo)), 0, 255)
        index[~np.isfinite(values)] = 0
        index[self.overlay.masked] = 0
        return self._luminance[index.astype(np.intp)] > 140

    def _same_cells(self, values, masked, last_masked, levels) -> bool:
        # Bit for bit (NaN equals the same NaN): a few ms at 2,000², where array_equal(equal_nan=True)
        # takes ten times as long.
        drawn = self._drawn
        if drawn.shape != values.shape or tuple(self.levels) != tuple(levels) or self.image.image is None:
            return False
        if not np.array_equal(last_masked, masked):
            return False
        return bool(np.array_equal(drawn.view(np.int64), np.ascontiguousarray(values).view(np.int64)))

    def labels(self) -> tuple[list[str], list[str]]:
        """(row labels, column labels) as drawn at the last paint, in order (elided tokens end in "…")."""
        return [t for _, t in self.left_axis.drawn], [t for _, t in self.bottom_axis.drawn]

    def label_hit(self, scene_pos) -> tuple[str, int] | None:
        """("row", i) or ("col", j) when a scene position is on an axis label, else None."""
        rows, cols = self._shape
        for kind, axis in (("row", self.left_axis), ("col", self.bottom_axis)):
            if not axis.isVisible() or not axis.sceneBoundingRect().contains(scene_pos):
                continue
            if kind == "row":
                index, count = int(np.floor(self.plot.vb.mapSceneToView(scene_pos).y() + 0.5)), rows
            else:
                # Labels slant down-left from their column: follow the slant back up.
                local = axis.mapFromScene(scene_pos)
                back = QtCore.QPointF(scene_pos.x() + max(local.y() - 3, 0), scene_pos.y())
                index, count = int(np.floor(self.plot.vb.mapSceneToView(back).x() + 0.5)), cols
            if 0 <= index < count:
                return kind, index
        return None

    def label_at(self, scene_pos) -> str | None:
        """The whole token whose axis label is under a scene position, or None."""
        hit = self.label_hit(scene_pos)
        if hit is None:
            return None
        axis = self.left_axis if hit[0] == "row" else self.bottom_axis
        return axis.full_label(hit[1])

    def set_highlight(self, row: int | None, col: int | None):
        """Tint row ``row`` and column ``col`` (the lecturer's pointer)."""
        self.overlay.set_highlight(row, col)

    @property
    def highlighted(self) -> tuple[int | None, int | None]:
        """(row, column) tinted by the pointer."""
        return self.overlay.highlight

    def cell_scene_rect(self, i: int, j: int) -> QtCore.QRectF:
        """Cell (row ``i``, column ``j``) in scene coordinates."""
        return self.plot.vb.mapViewToScene(QtCore.QRectF(j - 0.5, i - 0.5, 1, 1)).boundingRect()

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        """The (row, column) under a scene position, or None outside the image."""
        vb = self.plot.vb
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        i, j = int(np.floor(p.y() + 0.5)), int(np.floor(p.x() + 0.5))
        rows, cols = self._shape
        if 0 <= i < rows and 0 <= j < cols:
            return i, j
        return None
