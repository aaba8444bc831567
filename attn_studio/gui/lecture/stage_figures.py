"""What the stage of Present draws for heatmap views: the page figure (:mod:`..files.sheet`) at the
stage's cell size, a window of tokens around the query where a sentence does not fit, tiles a page at
a time, an edit that keeps the figure drawn in place; and the stage's precision. An object of
:class:`~.present.Present`'s (which keeps the ``stage``, ``page``, ``pages``, ``window`` and the figure
shown, ``sheet``); the step view is :mod:`.stage_steps`'s."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from ..files import sheet as sheets
from ..views.heatmap import label_colour_bar
from .basics import ATTENTION, COMPARE, HEADS, MODEL, OUTPUTS, POSITIONS, _font
from .lent import says
from .stage import _AtZoom, _discard, stage_zoom
from .stage_windows import token_windows, window_keeping, window_note  # noqa: F401 (importable from here)

TITLES_NONE, TITLES_TILES, TITLES_ALL = 0, 1, 2  # a stage figure's titles (see StageFigures._build_sheet)
STAGE_DIGITS = 2  # the stage's precision until View → Precision on the stage says otherwise
STAGE_DIGIT_CHOICES = (2, 4)
LABEL_LEAST = 30 / 31  # the least size of a token label, of the stage's: 30 px at 720
VALUE_LEAST = 24 / 26  # the least size of a cell value, of the stage's: 24 px at 720 (DISCAS' 3 % of the height)
STAGE_LINE_SHARE = 0.8  # a value's font takes up to this much of its row's height (its digits have no descenders)
KEY_ANGLE_LEAST = 25.0  # degrees: key labels never lie flatter than this (their tails would run far left)
WHOLE_FIRST_CELLS = 64 * 64  # a matrix up to this size is tried whole before it is windowed


LAYOUTS_KEPT = 200  # figures' layouts remembered (a lecture's scenes and pages, shown again)


class StageFigures:
    """The heatmap views on the stage of ``present`` (:class:`~.present.Present`): the figure shown and what it
    was built for (``last_sheet``), the layouts found for figures (kept, a lecture's scenes shown again), and
    the stage's precision (``digits_setting``)."""

    def __init__(self, present):
        self.present = present
        self._layouts: dict = {}  # a figure's key -> the layout found for it
        self._search_from = None  # where the next search for a layout starts (the last one found)
        self._searched = None
        self.stage_precision_actions: QtGui.QActionGroup | None = None
        self.digits_setting = STAGE_DIGITS  # View → Precision on the stage (a scene may keep its own)
        self.last_sheet: dict | None = None  # the figure on the stage and what it was built for

    def _tiles(self, view: str) -> list:
        p = self.present
        w = p.window
        state = w.studio.state
        q = state.query_index if state.query_tokens else None
        drawer = getattr(w, "drawer", None)

        def render(v) -> None:
            # Drawn for the current state already (not stale, no steps left): not drawn a second time.
            if drawer is None or v in drawer.stale or v in drawer.steps:
                w.render_view(v)

        if view in (ATTENTION, HEADS):
            hv = w.heatmap_view
            render(hv)
            keys = ("weights",) if view == HEADS else ("scores", "logits", "weights")
            return [sheets.Tile(hv.stages[k], selected_row=q) for k in keys]
        if view == OUTPUTS:
            v = w.heads_summary_view
            render(v)
            tiles = [sheets.Tile(v.maps["concat"], vlines=v.separators, selected_row=q)]
            if not v.canvases["w_o"].isHidden():
                tiles.append(sheets.Tile(v.maps["w_o"]))
            return tiles + [sheets.Tile(v.maps["output"], selected_row=q)]
        if view == COMPARE:
            v = w.compare_view
            render(v)
            return [sheets.Tile(v.maps[k], selected_row=q) for k in ("a", "b", "diff")]
        if view == POSITIONS:
            v = w.positional_view
            render(v)
            return [sheets.Tile(v.heatmap, selected_row=q)]
        if view == MODEL:
            hv = w.heatmap_view
            render(hv)
            return [sheets.Tile(hm, title=f"layer {state.layer_index + 1} · head {i + 1}", selected_row=q)
                    for i, hm in enumerate(hv.head_maps[: max(hv.heads_shown, 1)])]
        return []

    # -- the stage's precision and pinned cell -------------------------------------------------
    def stage_digits(self) -> int:
        """The decimals every number on the stage is written with: the scene's own ("digits" of its
        selection) while its view is on the stage, else View → Precision on the stage (2 by default),
        whatever the window's precision."""
        p = self.present
        scene = p.current_scene()
        if scene is not None and scene.view == p.view and scene.selection.get("digits") in STAGE_DIGIT_CHOICES:
            return int(scene.selection["digits"])
        return self.digits_setting

    def set_stage_digits(self, digits: int | None) -> None:
        """View → Precision on the stage: ``digits`` decimals (2 or 4; None keeps the present one)."""
        p = self.present
        if digits is not None:
            if digits not in STAGE_DIGIT_CHOICES:
                raise ValueError(f"precision on the stage must be one of {STAGE_DIGIT_CHOICES} decimals, got {digits}")
            self.digits_setting = int(digits)
        for action in self.stage_precision_actions.actions():
            action.setChecked(action.data() == self.digits_setting)
        if p.stage is not None:
            self.last_sheet = None
            p.render()

    def precision_menu(self) -> QtWidgets.QMenu:
        """View → Precision on the stage (2 / 4 decimals), apart from the window's View → Precision."""
        p = self.present
        menu = QtWidgets.QMenu("Precision on the &stage", p.window)
        menu.setObjectName("stagePrecisionMenu")
        self.stage_precision_actions = QtGui.QActionGroup(menu)
        for digits in STAGE_DIGIT_CHOICES:
            action = self.stage_precision_actions.addAction(f"{digits} decimals")
            action.setObjectName(f"stagePrecision{digits}Action")
            action.setCheckable(True)
            action.setData(digits)
            action.setChecked(digits == self.digits_setting)
            action.triggered.connect(lambda checked=False, d=digits: self.set_stage_digits(d))
            menu.addAction(action)
        return menu

    def pinned_cell(self) -> tuple[int, int] | None:
        """The cell (query, key) the stage keeps in view and outlines: the current scene's pin while that
        scene's view is on the stage, else None."""
        p = self.present
        scene = p.current_scene()
        if scene is not None and scene.view == p.view:
            return scene.pin
        return None

    # -- fitting the tokens: the precision, then colour-only cells, then a window of tokens --------
    def _cells(self, tiles, s, digits: int, q: int, pin) -> dict:
        """The cell sizes the stage can choose from for ``tiles``: ``every`` (width for every cell's value),
        ``query`` (for the query row's and the pinned cell's values alone), ``roomy`` and ``tight`` (row
        heights: the token labels' whole line, or the line of labels at their least size, 30 px at 720)."""
        p = self.present
        label_px, value_px = s["label"], s["value"]
        least = math.ceil(value_px * VALUE_LEAST)  # 24 px at 720: cell values still read from the back row
        metrics = QtGui.QFontMetricsF(_font(least))
        # The token labels are drawn in the token font at the stage's zoom; they shrink (TokenAxis.fit) to
        # the room between rows or columns, and no further than LABEL_LEAST of the stage's label size.
        zoom = stage_zoom(label_px, p.stage.logicalDpiY() or 96)
        token_px = presentation.BASE_TOKEN_PT * zoom * (p.stage.logicalDpiY() or 96) / 72.0
        with _AtZoom(zoom):
            line = QtGui.QFontMetricsF(presentation.token_font()).height()  # the axes' own font
        shrink = min(1.0, math.ceil(label_px * LABEL_LEAST) / token_px)
        def width(values) -> float:
            finite = np.asarray(values, dtype=float)
            finite = finite[np.isfinite(finite)]
            if not finite.size:
                return 0.0
            texts = [sheets.format_value(v, digits) for v in (finite.min(), finite.max())]
            # The overlay writes a value of ``px`` in a cell (px × (its width in ems + 0.15) + 3) wide.
            return max(metrics.horizontalAdvance(t) for t in texts) + 0.15 * least + 3.5

        every = max((width(t.source.data.values) for t in tiles), default=0.0)
        mine = []
        for t in tiles:
            values = t.source.data.values
            if 0 <= q < values.shape[0]:
                mine.append(values[q])
            if pin is not None and pin[0] < values.shape[0] and pin[1] < values.shape[1]:
                mine.append(values[pin[0], pin[1]:pin[1] + 1])
        query = max((width(v) for v in mine), default=0.0)
        # Labels shrink to the room between rows or columns (their line height, at their size, at most: the
        # boxes of neighbouring labels never overlap); slanted key labels stand a line apart across the slant.
        labels = line * shrink / math.sin(math.radians(45))
        return {"every": math.ceil(max(every, labels)), "query": math.ceil(max(query, labels)),
                "roomy": math.ceil(max(line, value_px / STAGE_LINE_SHARE)),
                "tight": math.ceil(max(line * shrink, least / STAGE_LINE_SHARE)),
                "label_line": line * shrink}  # a token label's line at its least size

    @staticmethod
    def _least_angle(width: float, cells: dict) -> float:
        """The lowest slant (degrees, 45 at most) at which key labels ``width`` pixels apart stay at their least
        size with a line between neighbours (``width`` × sin(angle) ≥ their line): lower labels take less
        height under the rows."""
        ratio = cells["label_line"] / max(width, 1.0)
        if ratio >= math.sin(math.radians(45)):
            return 45.0
        return min(45.0, max(KEY_ANGLE_LEAST, math.degrees(math.asin(ratio)) + 0.3))

    def _pin_of(self, tiles):
        """The pinned cell when it is a cell of the tiles' matrix (a scene's pin on another sentence is not)."""
        pin = self.pinned_cell()
        if pin is None or not tiles:
            return None
        n_rows, n_cols = tiles[0].source.data.values.shape
        return tuple(pin) if 0 <= pin[0] < n_rows and 0 <= pin[1] < n_cols else None

    @staticmethod
    def _causal(tiles) -> bool:
        """True when the tiles' matrix is a causal one: square, every key after the query masked."""
        masked = tiles[0].source.data.masked
        return masked.shape[0] == masked.shape[1] and masked.shape[0] > 1 and bool(masked.any()) \
            and np.array_equal(masked, np.triu(np.ones(masked.shape, dtype=bool), 1))

    def _build_sheet(self, tiles, cell, zoom, titles: int = TITLES_ALL, angle: float = 45.0) -> QtWidgets.QWidget:
        """The page figure of ``tiles`` at the stage's size, in a holder of exactly its size; ``titles``:
        TITLES_ALL, TITLES_TILES (without the axes' titles, "query" and "key", whose room went to the
        tokens) or TITLES_NONE (nor the tile's title: the stage's title says it); ``angle``: the key labels'
        slant. The figure is snug (:class:`~..files.sheet.FigureSheet`): no room under the key labels or beside
        the rows but what they are drawn in."""
        digits = self.stage_digits()
        with _AtZoom(zoom):
            if titles < TITLES_ALL:
                tiles = [dataclasses.replace(t, axis_titles=False, title_line=titles != TITLES_NONE) for t in tiles]
            sheet = sheets.FigureSheet([sheets.Block(tiles)], cell=cell, snug=True, key_angle=angle)
            for hm in sheet.heatmaps:
                hm.set_digits(digits)
                hm.overlay.line_share = STAGE_LINE_SHARE
            holder = QtWidgets.QWidget()
            QtWidgets.QVBoxLayout(holder).setContentsMargins(0, 0, 0, 0)
            holder.layout().addWidget(sheet)
            presentation.restyle(holder)  # plots restyle only below their root: the holder is it
            for bar in sheet.bars:
                label_colour_bar(bar, digits=self.stage_digits())  # its labels' room at the stage's text size
        # Labels drawn afresh, not from a pixmap made at another screen's scale: text stays text
        # (a recording or a screen reader of the stage sees words) and sharp on every projector.
        for item in sheet.scene().items():
            item.setCacheMode(QtWidgets.QGraphicsItem.NoCache)
        # Laid out as a page figure is (its axes measure their labels at the stage's size), then shown.
        size = sheet.lay_out()  # snug: the key axis holds its labels and its title, no more
        sheet.setAttribute(QtCore.Qt.WA_DontShowOnScreen, False)
        sheet.show()  # laying out hid it again; as the holder's child it shows with the holder
        sheet.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        sheet.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        sheet.setFrameShape(QtWidgets.QFrame.NoFrame)
        sheet.setFixedSize(size)
        holder.setFixedSize(size)
        holder.fixed = True
        holder.sheet = sheet
        return holder

    def _tile_windows(self, tiles, fit_rows: int, fit_cols: int, q: int) -> list[tuple]:
        """Each tile's (rows, cols) window for ``fit_rows`` × ``fit_cols`` around the query ``q``, keeping
        the pinned cell and (causal) each shown row's own cell in view."""
        n_rows, n_cols = tiles[0].source.data.values.shape
        rows, cols = token_windows(n_rows, n_cols, fit_rows, fit_cols, q, self._pin_of(tiles), self._causal(tiles))
        out = []
        for t in tiles:
            r_n, c_n = t.source.data.values.shape
            out.append((rows if r_n == n_rows else (0, r_n), cols if c_n == n_cols else (0, c_n)))
        return out

    def _windows(self, tiles, fit_rows: int, fit_cols: int, q: int) -> list[tuple]:
        return self._tile_windows(tiles, fit_rows, fit_cols, q)

    def _update_in_place(self, sig, all_tiles, q) -> bool:
        """The same figure with new numbers (an edit that keeps the tokens, shapes and titles): its
        heatmaps are given the numbers; nothing is laid out again. False when it must be rebuilt."""
        p = self.present
        last = self.last_sheet
        if last is None or last["sig"] != sig or p.stage.content is not last["holder"] \
                or not shiboken6.isValid(last["holder"]):
            return False
        page_tiles = [all_tiles[i] for i in last["page"]]
        windows = self._windows(page_tiles, *last["fit"], q)
        if windows != last["windows"]:
            return False
        heatmaps = last["holder"].sheet.heatmaps
        # A title that changed with the edit ("logits ÷ T = 1.05") is written again; one longer than the
        # one the figure was laid out for might not fit: then the figure is laid out again.
        named = last["titles"] == TITLES_NONE  # the tile's name in the stage's title, not over the tile
        titles = [sheets.shown_title(t) for t in page_tiles]
        if not named and any(len(new) > len(hm.title) for new, hm in zip(titles, heatmaps)):
            return False
        # The numbers must still fit the cells they were laid out for (an edit can make them wider).
        cells = self._cells(page_tiles, p.stage.sizes(), self.stage_digits(), q, self._pin_of(page_tiles))
        if cells["query" if last["colour_only"] else "every"] > last["cell"][0]:
            return False
        if named:
            self._name_in_title(page_tiles)
        else:
            for hm, title in zip(heatmaps, titles):
                hm.set_title(title)
        pin = self._pin_of(page_tiles)
        for hm, tile, (r, c) in zip(heatmaps, page_tiles, windows):
            data = sheets._windowed(tile.source.data, r, c)
            row = tile.selected_row - r[0] if tile.selected_row is not None else None
            row = row if row is not None and 0 <= row < data.values.shape[0] else None
            hm.set_data(data.values, masked=data.masked, row_labels=list(data.row_labels),
                        col_labels=list(data.col_labels), levels=tuple(tile.source.levels), selected_row=row)
            shown = sheets._pin_in(sheets.Tile(tile.source, rows=r, cols=c, pin=pin), *data.values.shape)
            hm.set_pinned(shown)
            if last["colour_only"]:
                hm.set_written(sheets.written_cells(*data.values.shape, row, shown))
            if hm.bar is not None and tuple(hm.bar.levels()) != tuple(tile.source.levels):
                hm.bar.setLevels(values=tuple(tile.source.levels))
                with _AtZoom(last["zoom"]):
                    label_colour_bar(hm.bar, digits=self.stage_digits())
        return True

    def _signature(self, view, all_tiles, zoom) -> tuple:
        p = self.present
        stage = p.stage
        return (view, p.page, stage.size().toTuple(), stage.strip.isVisible(), round(zoom, 4),
                self.stage_digits(), self.pinned_cell(),
                tuple((id(t.source), t.source.data.values.shape,
                       tuple(t.source.data.row_labels), tuple(t.source.data.col_labels), tuple(t.vlines),
                       t.source._cmap_name) for t in all_tiles))

    def _shaped(self, tiles, windows, colour_only: bool) -> list:
        """``tiles`` cut to ``windows``, with the pinned cell, and numbers on every cell or (``colour_only``)
        on the query row's and the pinned cell's alone."""
        pin = self._pin_of(tiles)
        out = []
        for t, (r, c) in zip(tiles, windows):
            r_n, c_n = t.source.data.values.shape
            out.append(dataclasses.replace(t, rows=r if r != (0, r_n) else None, cols=c if c != (0, c_n) else None,
                                           pin=pin if t.source.data.values.shape == tiles[0].source.data.values.shape
                                           else None, query_numbers=colour_only))
        return out

    def _fit(self, tiles, cell, zoom, room, q, colour_only, fit_rows=None, fit_cols=None, titles=TITLES_ALL,
             angle: float = 45.0):
        """The sheet of ``tiles`` with cells ``cell``, each tile cut to a window of its rows and columns
        around the query ``q`` (keeping the pinned cell and, causal, each row's own) small enough that the
        sheet fits ``room``; (sheet, rows, cols, n_rows, n_cols)."""
        p = self.present
        n_rows, n_cols = tiles[0].source.data.values.shape
        if fit_rows is None or fit_cols is None:
            # A first guess from the room, so that a long sentence is not laid out whole first (a
            # figure of 600 tokens takes seconds): the labels' and titles' room, then rows and columns.
            data = tiles[0].source.data
            metrics = QtGui.QFontMetricsF(_font(p.stage.sizes()["label"]))
            widest = lambda labels: min(max((metrics.horizontalAdvance(str(t)) for t in labels[:400]), default=0.0),
                                        8 * metrics.height())
            below = 0.71 * (widest(list(data.col_labels)) + metrics.height()) + 2.8 * metrics.height() + 24
            beside = widest(list(data.row_labels)) + 1.4 * metrics.height() + 4 * metrics.height() + 24
            fit_rows = fit_rows or max(1, min(n_rows, int((room.height() - below) // cell[1])))
            across = (room.width() - beside * len(tiles)) // (cell[0] * len(tiles))
            fit_cols = fit_cols or max(1, min(n_cols, int(across)))
        for attempt in range(10):
            windows = self._tile_windows(tiles, fit_rows, fit_cols, q)
            rows, cols = windows[0]
            sheet = self._build_sheet(self._shaped(tiles, windows, colour_only), cell, zoom, titles, angle)
            sheet.fit = (fit_rows, fit_cols)
            over_h, over_w = sheet.height() - room.height(), sheet.width() - room.width()
            if (over_h <= 0 and over_w <= 0) or (fit_rows == 1 and fit_cols == 1) or attempt == 9:
                return sheet, rows, cols, n_rows, n_cols
            _discard(sheet)
            if over_h > 0:
                fit_rows = max(1, (rows[1] - rows[0]) - max(1, math.ceil(over_h / cell[1])))
            if over_w > 0:
                fit_cols = max(1, (cols[1] - cols[0]) - max(1, math.ceil(over_w / cell[0] / len(tiles))))
        return sheet, rows, cols, n_rows, n_cols

    def _lay_out(self, tiles, s, zoom, room, q, fit=None) -> dict:
        """The stage's figure of ``tiles``, fitted in this order: the stage's precision (the cells sized for
        it); then, where the numbers do not fit every cell, colour-only cells with the query row's and the
        pinned cell's numbers; then lower rows; only then a window of the tokens. A figure of the same
        tokens, cells and room as one fitted before is laid out once, as that one was found to fit (a
        scene shown again, PageUp back through a lecture: the search is not made again)."""
        p = self.present
        n_rows, n_cols = tiles[0].source.data.values.shape
        pin = self._pin_of(tiles)
        cells = self._cells(tiles, s, self.stage_digits(), q, pin)
        key = (tuple((id(t.source), t.source.data.values.shape, tuple(t.source.data.row_labels),
                      tuple(t.source.data.col_labels), sheets.shown_title(t)) for t in tiles),
               tuple(sorted(cells.items())), room.width(), room.height(), round(zoom, 4), q, pin, fit,
               p.stage.whole_title)
        found = self._layouts.get(key)
        if found is not None:
            cell, colour_only, titles, angle, rows_cols = found
            if rows_cols is None:  # whole
                whole = [((0, t.source.data.values.shape[0]), (0, t.source.data.values.shape[1])) for t in tiles]
                sheet = self._build_sheet(self._shaped(tiles, whole, colour_only), cell, zoom, titles, angle)
                sheet.fit = (n_rows, n_cols)
                return {"sheet": sheet, "rows": (0, n_rows), "cols": (0, n_cols), "n": (n_rows, n_cols),
                        "cell": cell, "colour_only": colour_only, "titles": titles, "angle": angle}
            sheet, rows, cols, n_rows, n_cols = self._fit(tiles, cell, zoom, room, q, colour_only, *rows_cols,
                                                          titles=titles, angle=angle)
            return {"sheet": sheet, "rows": rows, "cols": cols, "n": (n_rows, n_cols), "cell": cell,
                    "colour_only": colour_only, "titles": titles, "angle": angle}
        made = self._search_layout(tiles, cells, zoom, room, q, fit)
        if len(self._layouts) > LAYOUTS_KEPT:
            self._layouts = {}
        whole = (made["rows"], made["cols"]) == ((0, n_rows), (0, n_cols))
        self._layouts[key] = (made["cell"], made["colour_only"], made["titles"], made["angle"],
                              None if whole else made["sheet"].fit)
        return made

    def _search_layout(self, tiles, cells, zoom, room, q, fit=None) -> dict:
        """:meth:`_lay_out`'s search: larger to smaller until the figure fits ``room``."""
        n_rows, n_cols = tiles[0].source.data.values.shape
        colour_only, height, titles, angle, wide = False, cells["roomy"], TITLES_ALL, 45.0, None
        which = tuple((id(t.source), t.source.data.values.shape) for t in tiles)
        start = self._search_from
        if start is not None and start[0] == which:
            # Fitted again to a shorter room (the ranges took the caption's second line): the search goes on
            # from where it ended for the taller room, which it would pass through again.
            colour_only, height, titles, angle, wide = start[1]
        least = TITLES_NONE if self._title_room(tiles) else TITLES_TILES
        guess = fit or (None, None)
        whole = [((0, t.source.data.values.shape[0]), (0, t.source.data.values.shape[1])) for t in tiles]
        columns = sum(t.source.data.values.shape[1] for t in tiles)
        if fit is None and n_rows * n_cols <= WHOLE_FIRST_CELLS:
            for attempt in range(6):
                cell = (wide or (cells["query"] if colour_only else cells["every"]), height)
                sheet = self._build_sheet(self._shaped(tiles, whole, colour_only), cell, zoom, titles, angle)
                over_w, over_h = sheet.width() - room.width(), sheet.height() - room.height()
                if over_w <= 0 and over_h <= 0:
                    sheet.fit = (n_rows, n_cols)
                    return {"sheet": sheet, "rows": (0, n_rows), "cols": (0, n_cols), "n": (n_rows, n_cols),
                            "cell": cell, "colour_only": colour_only, "titles": titles, "angle": angle}
                _discard(sheet)
                changed = False
                # Width and height give way independently: the cells' numbers for the width and the rows'
                # height for the height, in one laying out when both are over.
                if over_w > 0 and not colour_only and cells["query"] < cells["every"]:
                    colour_only = changed = True
                if over_h > 0 and height > cells["tight"]:
                    saved = n_rows * (height - cells["tight"])  # exactly what lower rows give
                    height, changed = cells["tight"], True
                    if over_h > saved and titles > least:
                        titles -= 1  # lower rows alone are known not to be enough: the next step with them
                elif changed:
                    pass
                elif titles > least:
                    titles, changed = titles - 1, True  # the axes' titles, then the tile's, give their room
                elif over_h > 0 and angle >= 45 and columns > 1:
                    # The key labels at a lower slant take less height: the columns widened to the room
                    # there is (a line between neighbours across a lower slant needs wider columns).
                    widened = cell[0] + max(-over_w, 0) // columns
                    lower = self._least_angle(widened, cells)
                    if lower < 44:
                        wide, angle, changed = widened, lower, True
                self._searched = (which, (colour_only, height, titles, angle, wide))
                if not changed:
                    # Laid out whole, it tells how many rows and columns fit: the window starts there.
                    guess = (n_rows - max(0, math.ceil(over_h / height)) if over_h > 0 else n_rows,
                             n_cols - max(0, math.ceil(over_w / cell[0])) if over_w > 0 else n_cols)
                    break
        else:
            colour_only = cells["query"] < cells["every"] and n_cols * cells["every"] > room.width()
            height = cells["tight"] if n_rows * cells["roomy"] > room.height() else cells["roomy"]
        cell = (wide or (cells["query"] if colour_only else cells["every"]), height)
        sheet, rows, cols, n_rows, n_cols = self._fit(tiles, cell, zoom, room, q, colour_only,
                                                      *guess, titles=titles, angle=angle)
        return {"sheet": sheet, "rows": rows, "cols": cols, "n": (n_rows, n_cols), "cell": cell,
                "colour_only": colour_only, "titles": titles, "angle": angle}

    def _title_room(self, tiles) -> bool:
        """True when the stage's title has room for the name of ``tiles`` (one tile) after it, whole: the
        tile's own title line may then give its room to the tokens."""
        p = self.present
        if len(tiles) != 1:
            return False
        return p.stage.title_fits(self._titled(tiles[0]))

    def _name_in_title(self, tiles) -> None:
        """The tile's name after the stage's title (its own title line gave its room to the tokens)."""
        p = self.present
        p.stage.set_title(self._titled(tiles[0]))

    def _titled(self, tile) -> str:
        p = self.present
        # The stage's title with the tile's name after it, unless it says that name already (a training
        # panel's heatmap: "Why two layers: layer 1 head 1", not "... · two layers" after it again).
        title, name = p.stage.whole_title, sheets.shown_title(tile).split(":")[0]
        return title if says(title, name) else f"{title} · {name}"

    def render_sheet(self, view: str, s: dict, zoom: float, tiles=None, centre: int | None = None,
                      title: str | None = None) -> None:
        """The view's tiles (or ``tiles``: a training panel's heatmap) as the stage's figure, around the
        query (or ``centre``)."""
        p = self.present
        stage, w = p.stage, p.window
        own = tiles is not None
        all_tiles = [t for t in (tiles if own else self._tiles(view)) if t.source.data is not None]
        state = w.studio.state
        saved_page = p.page
        if own:
            p.page = 0
        if not all_tiles:
            stage.set_title(view)
            stage.set_caption("Nothing to show yet: type a sentence.")
            stage.set_content(None)
            return
        stage.set_title(title if title is not None else p._title(self._view_title(view)))
        q = centre if centre is not None else (state.query_index if state.query_tokens else 0)
        sig = self._signature(view, all_tiles, zoom) + ((saved_page, q) if own else ())
        try:
            self._render_figure(view, all_tiles, s, zoom, q, sig)
        finally:
            if own:
                p.page = saved_page

    def _render_figure(self, view, all_tiles, s, zoom, q, sig, note: str = "") -> None:
        p = self.present
        stage = p.stage
        if not note and self._update_in_place(sig, all_tiles, q):
            # The caption again: a scene shown on the same figure brings its own line.
            notes = ([self._found()] if view == HEADS else []) + self.last_sheet["notes"]
            self._say_notes(notes, view)
            return
        self.last_sheet = None
        stage.set_caption(" ")  # keeps its room while the body is measured
        room = stage.body_size(note)
        asked_page, asked_title = p.page, stage.whole_title
        # One tile alone, fitted, tells how wide a tile is and so how many stand side by side.
        p.page = min(p.page, len(all_tiles) - 1)
        fitted = self._lay_out([all_tiles[p.page]], s, zoom, room, q)
        probe = fitted["sheet"]
        rows, cols, (n_rows, n_cols) = fitted["rows"], fitted["cols"], fitted["n"]
        cell = fitted["cell"]
        # Room to spare: larger cells (and with them the values, up to the labels' size).
        shown_r, shown_c = rows[1] - rows[0], cols[1] - cols[0]
        grow = min(1.0 + (room.height() - probe.height()) / max(shown_r, 1) / cell[1],
                   1.0 + (room.width() - probe.width()) / max(shown_c, 1) / cell[0], 1.5) * 0.97
        per_page = max(1, min(len(all_tiles), int(room.width() // max(probe.width() + 12, 1))))
        if per_page == 1 and grow > 1.05 and (rows, cols) == ((0, n_rows), (0, n_cols)):
            larger = (math.floor(cell[0] * grow), math.floor(cell[1] * grow))
            tiles = self._shaped([all_tiles[p.page]], [((0, n_rows), (0, n_cols))], fitted["colour_only"])
            bigger = self._build_sheet(tiles, larger, zoom, fitted["titles"], fitted["angle"])
            if bigger.height() <= room.height() and bigger.width() <= room.width():
                _discard(probe)
                probe, cell = bigger, larger
                probe.fit = (n_rows, n_cols)
            else:
                _discard(bigger)
        p.pages = -(-len(all_tiles) // per_page)
        first = (p.page // per_page) * per_page if per_page > 1 else p.page
        p.page = first // per_page if per_page > 1 else p.page
        page_tiles = all_tiles[first:first + per_page] if per_page > 1 else [all_tiles[p.page]]
        colour_only, titles = fitted["colour_only"], fitted["titles"]
        if per_page > 1:
            _discard(probe)
            fitted = self._lay_out(page_tiles, s, zoom, room, q)
            sheet, rows, cols, cell, colour_only, titles = (fitted["sheet"], fitted["rows"], fitted["cols"],
                                                            fitted["cell"], fitted["colour_only"], fitted["titles"])
            if sheet.width() > room.width() and len(page_tiles) > 1:
                # The page's tiles together need a narrower window than one alone: one tile a page instead.
                _discard(sheet)
                per_page, p.pages, p.page = 1, len(all_tiles), p.page * per_page
                page_tiles = [all_tiles[p.page]]
                fitted = self._lay_out(page_tiles, s, zoom, room, q)
                sheet, rows, cols, cell, colour_only, titles = (fitted["sheet"], fitted["rows"], fitted["cols"],
                                                                fitted["cell"], fitted["colour_only"], fitted["titles"])
        else:
            sheet = probe
        if titles == TITLES_NONE:
            self._name_in_title(page_tiles)
        ranges = window_note(rows, cols, n_rows, n_cols) if (rows, cols) != ((0, n_rows), (0, n_cols)) else ""
        if ranges and not note and stage.body_size(ranges).height() < room.height():
            # The ranges take the caption's second line: fitted again to the room that leaves (they are
            # never left unsaid: the room must know that tokens are cut).
            _discard(sheet)
            p.page = asked_page
            stage.set_title(asked_title)
            self._search_from = self._searched
            try:
                self._render_figure(view, all_tiles, s, zoom, q, sig, note=ranges)
            finally:
                self._search_from = None
            return
        p.sheet = sheet.sheet  # the figure itself (tests and the room read its heatmaps)
        stage.set_content(sheet)
        notes = []
        if ranges:
            notes.append(ranges)
            notes.append("↑ ↓ query")
        if p.pages > 1:
            names = ", ".join(self._tile_name(t) for t in page_tiles)
            notes.append(f"{names}: {p.page + 1} of {p.pages} (← →)")
        indices = list(range(first, first + len(page_tiles))) if per_page > 1 else [p.page]
        self.last_sheet = {"sig": sig, "cell": cell, "holder": sheet, "fit": sheet.fit, "page": indices,
                            "windows": self._windows(page_tiles, *sheet.fit, q), "notes": list(notes),
                            "colour_only": colour_only, "zoom": zoom, "titles": titles}
        if view == HEADS:
            notes.insert(0, self._found())
        self._say_notes(notes, view)

    def _say_notes(self, notes: list, view: str) -> None:
        """The figure's notes in the caption line; the windowed tokens' ranges, when the scene's own caption
        leaves them no room there, after the stage's title where that has room."""
        p = self.present
        stage = p.stage
        stage.set_caption(" · ".join(n for n in notes if n) if any(notes) else self.hint(view))
        ranges = next((n for n in notes if n.startswith("queries ")), None)
        if ranges and ranges not in stage.caption.text():
            text = f"{stage.whole_title} · {ranges}"
            if stage.title_fits(text):
                stage.set_title(text)

    def _found(self) -> str:
        """The Head Lab's last find, in words: its three strongest heads ("find: 4.2 0.68, 6.12 0.68")."""
        p = self.present
        table = getattr(getattr(p.window, "heads_tab", None), "found_table", None)
        if table is None or table.rowCount() == 0:
            return ""
        found = []
        for row in range(min(3, table.rowCount())):
            head, weight = table.item(row, 0), table.item(row, 1)
            if head is not None and weight is not None:
                found.append(f"{head.text()} {weight.text()}")
        return "find: " + ", ".join(found) if found else ""

    def _tile_name(self, tile) -> str:
        title = tile.title if tile.title is not None else tile.source.title
        return title.replace(" ◀", "").split(":")[-1].strip() or title

    def _view_title(self, view: str) -> str:
        p = self.present
        state = p.window.studio.state
        heads = int(p.window.studio.result.weights.shape[0])
        head = state.shown_head if hasattr(state, "shown_head") else state.head_index
        if view in (ATTENTION, HEADS):
            layer = getattr(state, "layer_index", None)
            where = f"layer {layer + 1} · " if layer is not None else ""
            return f"{view}: {where}head {head + 1} of {heads}"
        if view == MODEL:
            return f"{view}: layer {state.layer_index + 1}, every head"
        return view

    def hint(self, view: str) -> str:
        p = self.present
        if p.window.studio.is_trained:
            return "↑ ↓ query · 1–9 head · PageDown next view · H controls · Esc leaves"
        return "↑ ↓ query · 1–9 head · S scaling · C causal mask · PageDown next view · Esc leaves"

    # Views that are not heatmaps: the window's own widget, lent to the stage.
