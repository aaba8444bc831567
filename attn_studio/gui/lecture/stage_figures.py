"""What the stage of Present draws for heatmap views and the step view: the page figure
(:mod:`..files.sheet`) at the stage's cell size, a window of tokens around the query where a
sentence does not fit, tiles a page at a time, an edit that keeps the figure drawn in place; and
the step view one step at a time. A mixin of :class:`~.present.Present` (its ``stage``, ``page``,
``pages``, ``window``)."""

from __future__ import annotations

import math

import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from ..files import sheet as sheets
from .basics import ATTENTION, COMPARE, HEADS, MODEL, OUTPUTS, POSITIONS, _font
from .stage import _AtZoom, _discard, token_window


class StageFigures:
    """The heatmap views and the step view on the stage (mixed into :class:`~.present.Present`)."""

    def _tiles(self, view: str) -> list:
        w = self.window
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

    def _cell(self, tiles, s) -> tuple[float, float]:
        font = _font(s["value"])
        metrics = QtGui.QFontMetricsF(font)
        import numpy as np
        widest = 2.0
        for tile in tiles:
            data = tile.source.data
            if data is None:
                continue
            finite = data.values[np.isfinite(data.values)]
            for v in (finite.min(), finite.max()) if finite.size else ():
                widest = max(widest, metrics.horizontalAdvance(sheets.format_value(v, presentation.digits())))
        label_h = QtGui.QFontMetricsF(_font(s["label"])).height()
        height = max(s["value"] / 0.6, label_h * 1.08)
        width = max(widest + 0.2 * s["value"] + 6, label_h / math.sin(math.radians(45)) + 2)
        return math.ceil(width), math.ceil(height)

    def _build_sheet(self, tiles, cell, zoom) -> QtWidgets.QWidget:
        """The page figure of ``tiles`` at the stage's size, in a holder of exactly its size."""
        with _AtZoom(zoom):
            sheet = sheets.FigureSheet([sheets.Block(tiles)], cell=cell)
            for hm in sheet.heatmaps:
                hm.set_digits(presentation.digits())
            holder = QtWidgets.QWidget()
            QtWidgets.QVBoxLayout(holder).setContentsMargins(0, 0, 0, 0)
            holder.layout().addWidget(sheet)
            presentation.restyle(holder)  # plots restyle only below their root: the holder is it
        # Labels drawn afresh, not from a pixmap made at another screen's scale: text stays text
        # (a recording or a screen reader of the stage sees words) and sharp on every projector.
        for item in sheet.scene().items():
            item.setCacheMode(QtWidgets.QGraphicsItem.NoCache)
        # Laid out as a page figure is (its axes measure their labels at the stage's size), then shown.
        size = sheet.lay_out()
        # The key axis' title hangs below its slanted labels, outside the axis' own height: room for it.
        below = max((hm.bottom_axis.label.boundingRect().height() for hm in sheet.heatmaps
                     if hm.bottom_axis.label.isVisible()), default=0.0)
        size = QtCore.QSize(size.width(), size.height() + math.ceil(below))
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

    @staticmethod
    def _windows(tiles, fit_rows: int, fit_cols: int, q: int) -> list[tuple]:
        """Each tile's (rows, cols) window for ``fit_rows`` × ``fit_cols`` around the query ``q``."""
        n_rows, n_cols = tiles[0].source.data.values.shape
        out = []
        for t in tiles:
            r_n, c_n = t.source.data.values.shape
            r = token_window(r_n, fit_rows, q) if r_n == n_rows else (0, r_n)
            c = token_window(c_n, fit_cols, q if c_n == n_rows else 0) if c_n == n_cols else (0, c_n)
            out.append((r, c))
        return out

    def _update_in_place(self, sig, all_tiles, q) -> bool:
        """The same figure with new numbers (an edit that keeps the tokens, shapes and titles): its
        heatmaps are given the numbers; nothing is laid out again. False when it must be rebuilt."""
        last = self._last_sheet
        if last is None or last["sig"] != sig or self.stage.content is not last["holder"] \
                or not shiboken6.isValid(last["holder"]):
            return False
        page_tiles = [all_tiles[i] for i in last["page"]]
        windows = self._windows(page_tiles, *last["fit"], q)
        if windows != last["windows"]:
            return False
        heatmaps = last["holder"].sheet.heatmaps
        # A title that changed with the edit ("logits ÷ T = 1.05") is written again; one longer than the
        # one the figure was laid out for might not fit: then the figure is laid out again.
        titles = [sheets.shown_title(t) for t in page_tiles]
        if any(len(new) > len(hm.title) for new, hm in zip(titles, heatmaps)):
            return False
        for hm, title in zip(heatmaps, titles):
            hm.set_title(title)
        for hm, tile, (r, c) in zip(heatmaps, page_tiles, windows):
            data = sheets._windowed(tile.source.data, r, c)
            row = tile.selected_row - r[0] if tile.selected_row is not None else None
            hm.set_data(data.values, masked=data.masked, row_labels=list(data.row_labels),
                        col_labels=list(data.col_labels), levels=tuple(tile.source.levels),
                        selected_row=row if row is not None and 0 <= row < data.values.shape[0] else None)
            if hm.bar is not None and tuple(hm.bar.levels()) != tuple(tile.source.levels):
                hm.bar.setLevels(values=tuple(tile.source.levels))
        return True

    def _signature(self, view, all_tiles, cell, zoom) -> tuple:
        stage = self.stage
        return (view, self.page, stage.size().toTuple(), stage.strip.isVisible(), cell, round(zoom, 4),
                tuple((id(t.source), t.source.data.values.shape,
                       tuple(t.source.data.row_labels), tuple(t.source.data.col_labels), tuple(t.vlines),
                       t.source._cmap_name) for t in all_tiles))

    def _fit(self, tiles, cell, zoom, room, q, fit_rows=None, fit_cols=None):
        """The sheet of ``tiles`` with cells ``cell``, each tile cut to a window of its rows and columns
        around the query ``q`` small enough that the sheet fits ``room``; (sheet, rows, cols, n_rows, n_cols)."""
        n_rows, n_cols = tiles[0].source.data.values.shape
        if fit_rows is None or fit_cols is None:
            # A first guess from the room, so that a long sentence is not laid out whole first (a
            # figure of 600 tokens takes seconds): the labels' and titles' room, then rows and columns.
            data = tiles[0].source.data
            line = cell[1] / 1.08
            metrics = QtGui.QFontMetricsF(_font(round(line / 1.17)))
            widest = lambda labels: min(max((metrics.horizontalAdvance(str(t)) for t in labels[:400]), default=0.0),
                                        8 * metrics.height())
            below = 0.71 * (widest(list(data.col_labels)) + metrics.height()) + 2.8 * metrics.height() + 24
            beside = widest(list(data.row_labels)) + 1.4 * metrics.height() + 5 * metrics.height() + 24
            fit_rows = fit_rows or max(1, min(n_rows, int((room.height() - below) // cell[1])))
            fit_cols = fit_cols or max(1, min(n_cols, int((room.width() - beside * len(tiles)) // (cell[0] * len(tiles)))))
        for attempt in range(8):
            rows = token_window(n_rows, fit_rows, q)
            cols = token_window(n_cols, fit_cols, q if n_cols == n_rows else 0)
            windowed = []
            for t in tiles:
                r_n, c_n = t.source.data.values.shape
                r = token_window(r_n, fit_rows, q) if r_n == n_rows else (0, r_n)
                c = token_window(c_n, fit_cols, q if c_n == n_rows else 0) if c_n == n_cols else (0, c_n)
                windowed.append(sheets.Tile(t.source, t.bar, t.title, t.vlines, r if r != (0, r_n) else None,
                                            c if c != (0, c_n) else None, t.selected_row))
            sheet = self._build_sheet(windowed, cell, zoom)
            sheet.tiles, sheet.fit = windowed, (fit_rows, fit_cols)
            over_h, over_w = sheet.height() - room.height(), sheet.width() - room.width()
            if (over_h <= 0 and over_w <= 0) or (fit_rows == 1 and fit_cols == 1) or attempt == 7:
                return sheet, rows, cols, n_rows, n_cols
            _discard(sheet)
            if over_h > 0:
                fit_rows = max(1, (rows[1] - rows[0]) - max(1, math.ceil(over_h / cell[1])))
            if over_w > 0:
                fit_cols = max(1, (cols[1] - cols[0]) - max(1, math.ceil(over_w / cell[0] / len(tiles))))
        return sheet, rows, cols, n_rows, n_cols

    def _render_sheet(self, view: str, s: dict, zoom: float, tiles=None, centre: int | None = None,
                      title: str | None = None) -> None:
        """The view's tiles (or ``tiles``: a training panel's heatmap) as the stage's figure, around the
        query (or ``centre``)."""
        stage, w = self.stage, self.window
        own = tiles is not None
        all_tiles = [t for t in (tiles if own else self._tiles(view)) if t.source.data is not None]
        state = w.studio.state
        saved_page = self.page
        if own:
            self.page = 0
        if not all_tiles:
            stage.title.setText(view)
            stage.set_caption("Nothing to show yet: type a sentence.")
            stage.set_content(None)
            return
        cell = self._cell(all_tiles, s)
        last = self._last_sheet
        if last is not None and cell[1] == last["cell"][1] and cell[0] <= last["cell"][0]:
            cell = last["cell"]  # the numbers still fit the cells they have: no new layout for a narrower one
        stage.title.setText(title if title is not None else self._title(self._view_title(view)))
        q = centre if centre is not None else (state.query_index if state.query_tokens else 0)
        # The precision setting is part of what the figure was built for: its cells write that many decimals.
        sig = self._signature(view, all_tiles, cell, zoom) + (presentation.digits(),) + ((saved_page, q) if own else ())
        try:
            self._render_figure(view, all_tiles, cell, zoom, q, sig)
        finally:
            if own:
                self.page = saved_page

    def _render_figure(self, view, all_tiles, cell, zoom, q, sig) -> None:
        stage = self.stage
        sig_cell = cell  # the cell the figure was asked for (before it grew to the room)
        if self._update_in_place(sig, all_tiles, q):
            # The caption again: a scene shown on the same figure brings its own line.
            notes = ([self._found()] if view == HEADS else []) + self._last_sheet["notes"]
            stage.set_caption(" · ".join(n for n in notes if n) if any(notes) else self._hint(view))
            return
        self._last_sheet = None
        stage.set_caption(" ")  # keeps its room while the body is measured
        room = stage.body_size()
        # One tile alone, whole, tells how many rows and columns fit and how wide a tile is.
        self.page = min(self.page, len(all_tiles) - 1)
        probe, rows, cols, n_rows, n_cols = self._fit([all_tiles[self.page]], cell, zoom, room, q)
        # Room to spare: larger cells (and with them the values, up to the labels' size).
        shown_r, shown_c = rows[1] - rows[0], cols[1] - cols[0]
        grow = min(1.0 + (room.height() - probe.height()) / max(shown_r, 1) / cell[1],
                   1.0 + (room.width() - probe.width()) / max(shown_c, 1) / cell[0], 1.5) * 0.97
        if grow > 1.05 and (rows, cols) == ((0, n_rows), (0, n_cols)):
            larger = (math.floor(cell[0] * grow), math.floor(cell[1] * grow))
            bigger = self._build_sheet([all_tiles[self.page]], larger, zoom)
            if bigger.height() <= room.height() and bigger.width() <= room.width():
                _discard(probe)
                probe, cell = bigger, larger
            else:
                _discard(bigger)
        per_page = max(1, min(len(all_tiles), int(room.width() // max(probe.width() + 12, 1))))
        self.pages = -(-len(all_tiles) // per_page)
        first = (self.page // per_page) * per_page if per_page > 1 else self.page
        self.page = first // per_page if per_page > 1 else self.page
        page_tiles = all_tiles[first:first + per_page] if per_page > 1 else [all_tiles[self.page]]
        if per_page > 1:
            _discard(probe)
            sheet, rows, cols, n_rows, n_cols = self._fit(page_tiles, cell, zoom, room, q, shown_r, shown_c)
        else:
            sheet = probe
            if not hasattr(sheet, "fit"):  # the grown sheet: every row and column shown
                sheet.fit = (n_rows, n_cols)
        self.sheet = sheet.sheet  # the figure itself (tests and the room read its heatmaps)
        stage.set_content(sheet)
        notes = []
        if rows != (0, n_rows):
            notes.append(f"queries {rows[0] + 1}–{rows[1]} of {n_rows} (↑ ↓)")
        if cols != (0, n_cols):
            what = "keys" if n_cols == n_rows else "columns"
            notes.append(f"{what} {cols[0] + 1}–{cols[1]} of {n_cols}")
        if self.pages > 1:
            names = ", ".join(self._tile_name(t) for t in page_tiles)
            notes.append(f"{names}: {self.page + 1} of {self.pages} (← →)")
        indices = list(range(first, first + len(page_tiles))) if per_page > 1 else [self.page]
        self._last_sheet = {"sig": sig, "cell": sig_cell, "holder": sheet, "fit": sheet.fit, "page": indices,
                            "windows": self._windows(page_tiles, *sheet.fit, q), "notes": list(notes)}
        if view == HEADS:
            notes.insert(0, self._found())
        stage.set_caption(" · ".join(n for n in notes if n) if any(notes) else self._hint(view))

    def _found(self) -> str:
        """The Head Lab's last find, in words: its three strongest heads ("find: 4.2 0.68, 6.12 0.68")."""
        table = getattr(getattr(self.window, "heads_tab", None), "found_table", None)
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
        state = self.window.studio.state
        heads = int(self.window.studio.result.weights.shape[0])
        head = state.shown_head if hasattr(state, "shown_head") else state.head_index
        if view in (ATTENTION, HEADS):
            layer = getattr(state, "layer_index", None)
            where = f"layer {layer + 1} · " if layer is not None else ""
            return f"{view}: {where}head {head + 1} of {heads}"
        if view == MODEL:
            return f"{view}: layer {state.layer_index + 1}, every head"
        return view

    def _hint(self, view: str) -> str:
        if self.window.studio.is_trained:
            return "↑ ↓ query · 1–9 head · PageDown next view · H controls · Esc leaves"
        return "↑ ↓ query · 1–9 head · S scaling · C causal mask · PageDown next view · Esc leaves"

    # Step by step: one step at a time, whole numbers.
    def _render_steps(self, s: dict) -> None:
        stage, w = self.stage, self.window
        pipe = w.pipeline_view
        w.render_view(pipe)
        model = pipe.model
        steps = model.rowCount()
        current = min(pipe.current_step, max(steps - 1, 0))
        step_name = str(model.headerData(current, QtCore.Qt.Vertical, QtCore.Qt.DisplayRole) or "")
        name = " ".join(step_name.replace("▶", "").split())
        name = name.split(". ", 1)[1] if name[:1].isdigit() and ". " in name else name
        stage.title.setText(f"Step {current + 1} of {steps}: {name}")
        stage.set_caption(" ")
        table = QtWidgets.QTableWidget()
        table.setObjectName("presentSteps")
        table.fixed = True
        keys = model.columnCount()
        table.setColumnCount(1)
        table.setHorizontalHeaderLabels([" "])
        table.horizontalHeader().hide()
        table.setWordWrap(True)
        table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        table.setSelectionMode(QtWidgets.QAbstractItemView.NoSelection)
        table.setFocusPolicy(QtCore.Qt.NoFocus)
        table.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        table.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        table.setTextElideMode(QtCore.Qt.ElideNone)
        label_font, value_font = _font(s["label"]), _font(s["value"])
        table.verticalHeader().setFont(label_font)
        table.setFont(value_font)
        labels, texts = [], []
        for c in range(keys):
            header = model.headerData(c, QtCore.Qt.Horizontal, QtCore.Qt.DisplayRole)
            labels.append(" ".join(str(header or "").split()))
            texts.append(str(model.data(model.index(current, c), QtCore.Qt.DisplayRole) or ""))
        if len(set(texts[:-1])) == 1 and not texts[-1]:
            # One vector for every key (the query q): shown once, not once per key.
            labels, texts = [labels[0] if len(labels) == 1 else step_name.split("“")[-1].rstrip("”") or " "], texts[:1]
            keys = 1
        elif texts and not texts[-1]:
            labels, texts = labels[:-1], texts[:-1]  # no result at this step
            keys = len(texts)
        room = stage.body_size()
        # The step's explanation in words (the window's step view says the same), under its numbers.
        explanation = QtWidgets.QLabel()
        explanation.setObjectName("presentStepExplanation")
        explanation.setTextFormat(QtCore.Qt.RichText)
        explanation.setWordWrap(True)
        explanation.setFont(_font(s["caption"]))
        text = pipe.explanation.text()
        explanation.setText(text.split("</b> — ", 1)[1] if "</b> — " in text else text)
        explanation_h = explanation.heightForWidth(room.width() - 8) if explanation.text() else 0
        room = QtCore.QSize(room.width(), max(room.height() - explanation_h - 12, 60))
        value_metrics = QtGui.QFontMetrics(value_font)
        label_w = max((QtGui.QFontMetrics(label_font).horizontalAdvance(t) for t in labels), default=40) + 24
        col_w = min(max((value_metrics.horizontalAdvance(t) for t in texts), default=80) + 30,
                    room.width() - label_w - 8)
        row_h = QtGui.QFontMetrics(label_font).height() + 10
        heights = []
        for t in texts:
            box = value_metrics.boundingRect(QtCore.QRect(0, 0, col_w - 20, 10_000), int(QtCore.Qt.TextWordWrap), t)
            heights.append(max(row_h, box.height() + 10))
        # A window of the keys around the query where they do not all fit.
        q = w.studio.state.query_index
        fit, total = 0, 0
        start, stop = 0, keys
        if sum(heights) > room.height():
            fit = max(1, int(room.height() // max(max(heights), 1)))
            start, stop = token_window(keys, fit, q)
        table.setRowCount(stop - start)
        table.setVerticalHeaderLabels(labels[start:stop])
        for r, c in enumerate(range(start, stop)):
            item = QtWidgets.QTableWidgetItem(texts[c])
            item.setTextAlignment(QtCore.Qt.AlignLeft | QtCore.Qt.AlignVCenter)
            table.setItem(r, 0, item)
            table.setRowHeight(r, heights[c])
            total += heights[c]
        table.setColumnWidth(0, col_w)
        table.verticalHeader().setFixedWidth(label_w)
        table.setFixedSize(label_w + col_w + 4, total + 4)
        page = QtWidgets.QWidget()
        page.fixed = True
        column = QtWidgets.QVBoxLayout(page)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(12)
        column.addWidget(table, 0, QtCore.Qt.AlignHCenter)
        explanation.setFixedSize(room.width() - 8, explanation_h)
        column.addWidget(explanation, 0, QtCore.Qt.AlignHCenter)
        page.setFixedSize(room.width(), total + 4 + 12 + explanation_h)
        stage.set_content(page)
        self.steps_table = table
        self.steps_explanation = explanation
        self.pages = steps
        note = f"keys {start + 1}–{stop} of {keys} · " if (start, stop) != (0, keys) else ""
        stage.set_caption(f"{note}← → step · ↑ ↓ query · Esc leaves")

    # Views that are not heatmaps: the window's own widget, lent to the stage.
