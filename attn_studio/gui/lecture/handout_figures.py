"""The figure of a scene's hand-out page: the scene shown in the window, then the first of its candidate
figures that prints with no text under 8 pt: the view's whole figure where it fits; else the scene's own
heatmap large with its numbers and the others small beside it, each named; else the scene's heatmap alone.
"""

from __future__ import annotations

import time

from PySide6 import QtCore, QtWidgets

from ...scenes import Scene
from ..files import sheet as sheets
from ..files.figures import Panel, done_with, find_panel, show_panel
from ..files.pages import figure_fit
from ..files.trained_figures import data_tile, free_source
from ..widgets import discard, settle, white_page
from .scene_show import show_scene

# The page figure of each view a scene can show (the export's panel names).
VIEW_PANELS = {
    "Attention": "heatmaps", "Heads": "heatmaps", "Step by step": "steps", "Heads → output": "outputs",
    "Compare": "compare", "Geometry": "geometry", "Positions": "positions", "Model view": "model",
    "Drift": "drift", "Meaning in context": "meaning", "Why divide by √d_k": "variance",
    "Training: Why √dₖ": "training:scaling",
    "Training: Why attention": "training:seq2seq", "Training: Why two layers": "training:induction",
}
WAIT_FOR_MODEL_S = 120.0
SHRINK = 0.9  # a figure drawn with 9 pt ticks may shrink this far and keep 8 pt (8.1 pt)
THUMB_MAX_CELL = 14.0  # px: the small heatmaps beside the scene's own


def _show(window, scene: Scene) -> bool:
    """Show ``scene`` in ``window``; False when its model is missing (the window then says which)."""
    shown: list = []
    show_scene(window, scene, on_shown=shown.append)
    deadline = time.monotonic() + WAIT_FOR_MODEL_S
    while not shown and time.monotonic() < deadline:  # a trained model opens off the GUI thread
        QtWidgets.QApplication.processEvents()
        time.sleep(0.005)
    if not shown or not shown[0]:
        return False
    settle(window)
    return True


def _container(parts: list[QtWidgets.QWidget]) -> QtWidgets.QWidget:
    """``parts`` (laid-out figures) side by side, top-aligned, in one white widget never shown on screen."""
    holder = white_page()
    layout = QtWidgets.QHBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(18)
    for part in parts:
        part.setFixedSize(part.size())
        layout.addWidget(part, 0, QtCore.Qt.AlignTop)
        part.show()  # laid out offscreen and hidden again: drawn only when shown within the holder
    width = sum(p.width() for p in parts) + 18 * (len(parts) - 1)
    height = max(p.height() for p in parts)
    sheets.lay_out_offscreen(holder, QtCore.QSize(width, height))
    return holder


def _thumbs(sources: list, titles: list[str], room: QtCore.QSizeF) -> sheets.FigureSheet | None:
    """Small heatmaps of ``sources`` (each titled, colours only, no tokens), in a grid within ``room``."""
    shown = [(s, t) for s, t in zip(sources, titles) if s.data is not None]
    if not shown or room.width() < 60 or room.height() < 60:
        return None
    rows_t, cols_t = shown[0][0].data.values.shape
    n = len(shown)
    best = (0.0, 1)
    for columns in range(1, n + 1):
        grid_rows = -(-n // columns)
        cell = min((room.width() / columns - 30) / max(cols_t, 1), (room.height() / grid_rows - 46) / max(rows_t, 1))
        if cell > best[0]:
            best = (cell, columns)
    cell, columns = min(best[0], THUMB_MAX_CELL), best[1]
    if cell < 2.5:
        return None
    for _ in range(5):  # the titles' and axes' room is known once laid out: smaller cells until it fits
        tiles = [data_tile(s.data.values, [""] * s.data.values.shape[0], [""] * s.data.values.shape[1], t,
                           cmap=s._cmap_name, levels=tuple(s.levels), masked=s.data.masked, axis_titles=("", ""),
                           values=False, bar=False) for s, t in shown]
        sheet = sheets.heatmap_sheet([sheets.Block(tiles, columns, cell=(cell, cell))])
        for tile in tiles:
            free_source(tile)
        for hm in sheet.heatmaps:  # no tokens to label: the axes go, the title names the heatmap
            hm.plot.hideAxis("left")
            hm.plot.hideAxis("bottom")
            vb = hm.plot.vb
            title_h = hm.plot.titleLabel.effectiveSizeHint(QtCore.Qt.PreferredSize).height()
            width = max(vb.minimumWidth(), hm.plot.titleLabel.item.boundingRect().width()) + 6
            for set_size in (hm.plot.setMinimumSize, hm.plot.setPreferredSize, hm.plot.setMaximumSize):
                set_size(width, title_h + vb.minimumHeight() + 6)
        sheet.lay_out()
        if sheet.width() <= room.width() and sheet.height() <= room.height():
            return sheet
        discard(sheet)
        cell *= 0.85
        if cell < 2.5:
            return None
    return None


def _big_sheet(focus, room: QtCore.QSizeF, query: int | None, values: bool = True) -> sheets.FigureSheet:
    """``focus`` alone, its numbers in its cells (``values``), its cells made smaller where it would not
    fit ``room``."""
    tile = sheets.Tile(focus, selected_row=query, values=values)
    big = sheets.heatmap_sheet([sheets.Block([tile])])
    rows, cols = focus.data.values.shape
    for _ in range(3):
        over_h, over_w = big.height() - room.height(), big.width() - room.width()
        if over_h <= 0 and over_w <= 0:
            break
        vb = big.heatmaps[0].plot.vb
        side = min(vb.minimumHeight() / max(rows, 1), vb.minimumWidth() / max(cols, 1))
        side = min(side - max(over_h, 0) / max(rows, 1), side - max(over_w, 0) / max(cols, 1)) - 0.5
        if side < 4:
            break
        discard(big)
        big = sheets.heatmap_sheet([sheets.Block([sheets.Tile(focus, selected_row=query, values=values)],
                                                 cell=(side, side))])
    return big


THUMBS_ROOM = 300.0  # px at least for the small heatmaps beside the scene's own


def _focus_figure(focus, others: list, titles: list[str], room: QtCore.QSizeF, name: str, title: str,
                  query: int | None, with_others: bool = True, values: bool = True):
    """The scene's own heatmap ``focus`` large with its numbers (``values``: else its colours alone), and
    ``others`` small beside it."""
    if focus.data is None:
        return None
    with_others = with_others and bool(others)
    own_room = QtCore.QSizeF(room.width() - (THUMBS_ROOM if with_others else 0), room.height())
    big = _big_sheet(focus, own_room, query, values)
    parts = [big]
    if with_others:
        rest = QtCore.QSizeF(room.width() - big.width() - 18, max(room.height(), big.height()))
        small = _thumbs(others, titles, rest)
        if small is None:
            discard(big)
            return None
        parts.append(small)
    holder = _container(parts) if len(parts) > 1 else big
    return Panel(holder, None, name, title, keep=holder)


def _candidates(window, scene: Scene, room: QtCore.QSizeF):
    """The figures a scene's page may show, the most complete first (each a callable giving a Panel or
    None)."""
    name = VIEW_PANELS[scene.view]
    if name == "variance" and scene.selection.get("page", 0) == 1:
        name = "saturation"  # the stage's second page of the √d_k panel
    state = window.studio.state
    query = int(getattr(state, "query_index", 0))

    def whole():
        panel = find_panel(window, name)
        show_panel(panel)
        settle(window)
        return find_panel(window, name)

    found = [whole]
    title = f"{name}"
    if name == "heatmaps" or name == "model":
        hv = window.heatmap_view
        window.render_view(hv)
        heads = hv.head_maps[: max(hv.heads_shown, 0)] if hv.heads_shown > 1 else []
        head = int(getattr(state, "shown_head", state.head_index))
        if name == "model" and heads:
            focus = heads[min(head, len(heads) - 1)]
            others = [h for i, h in enumerate(heads) if h is not focus]
            titles = [f"head {i + 1}" for i, h in enumerate(heads) if h is not focus]
        else:
            keys = ("weights",) if scene.view == "Heads" else ("scores", "logits", "weights")
            # The page the scene plays to (its point: the weights, mostly), else the one it starts on.
            page = scene.selection.get("last", scene.selection.get("page", len(keys) - 1))
            focus_key = keys[min(page, len(keys) - 1)]
            focus = hv.stages[focus_key]
            others = [hv.stages[k] for k in keys if k != focus_key] + heads
            titles = [k for k in keys if k != focus_key] + [f"head {i + 1}" + (" (this one)" if i == head else "")
                                                           for i in range(len(heads))]
        rows, cols = focus.data.values.shape if focus.data is not None else (0, 0)
        if name == "heatmaps" and len(keys) * (cols * 2.2 * sheets.TEXT_PX + 100) > room.width():
            found = []  # the stages side by side with their numbers cannot fit: not drawn to be refused
        found.append(lambda: _focus_figure(focus, others, titles, room, name, title, query))
        found.append(lambda: _focus_figure(focus, [], [], room, name, title, query, with_others=False))
        # Last: its colours alone, its tokens at full size (numbers too wide for any cell are not shrunk).
        found.append(lambda: _focus_figure(focus, [], [], room, name, title, query, with_others=False, values=False))
    elif name == "steps":
        def narrow():  # wrapped to the page's width: its columns continue below
            view = window.pipeline_view
            window.render_view(view)
            return Panel(sheets.steps_figure(view, max_width=room.width()), None, name, title)

        found = [narrow]
        view = window.pipeline_view
        keys = max(view.model.columnCount() - 1, 0)  # a column a key, then the result
        q = min(query, keys - 1) if keys else 0
        for shown in [k for k in (8, 6, 4, 3, 2, 1) if k < keys]:
            first = min(max(q - shown // 2, 0), keys - shown)

            def window_of_keys(first=first, shown=shown):  # the query's own key and its neighbours
                figure = sheets.steps_figure(view, max_width=room.width(),
                                             columns=[*range(first, first + shown), keys])
                return Panel(figure, None, name, f"keys {first + 1}–{first + shown} of {keys}, around the "
                                                 f"query's own; the result column sums every key")

            found.append(window_of_keys)
    elif name == "geometry":
        def shorter():  # the plot made shorter to the page's height; its caption and readout kept whole
            from ..views.geometry_page import geometry_page

            view = window.geometry_view
            window.render_view(view)
            page = geometry_page(view.drawing)
            over = page.height() - room.height()
            if over > 0:
                plot_h = max(page.canvas.height() - over, 260)
                page.setFixedSize(page.width(), page.height() - (page.canvas.height() - plot_h))
                page.canvas.setFixedHeight(plot_h)
            sheets.lay_out_offscreen(page, page.size())
            return Panel(page, None, name, title)

        found.append(shorter)
    elif name == "outputs":
        def stacked():  # the heads' outputs above the output, the columns narrowed to the page (W_O left out)
            view = window.heads_summary_view
            window.render_view(view)
            maps = [view.maps["concat"], view.maps["output"]]
            if any(m.data is None for m in maps):
                return None
            rows, cols = maps[0].data.values.shape
            chrome_w, chrome_h = 190.0, 150.0  # labels, titles and colour bars around each heatmap
            cell = (max((room.width() - chrome_w) / max(cols, maps[1].data.values.shape[1], 1), 0.5),
                    max(min((room.height() - 2 * chrome_h) / (2 * max(rows, 1)), 24.0), 3.0))
            blocks = [sheets.Block([sheets.Tile(maps[0], vlines=view.separators, values=False)], cell=cell),
                      sheets.Block([sheets.Tile(maps[1], values=False)], cell=cell)]
            return Panel(sheets.heatmap_sheet(blocks), None, name, title)

        found.append(stacked)
    elif name == "compare":
        cv = window.compare_view
        window.render_view(cv)
        maps = [cv.maps[k] for k in ("a", "b", "diff")]
        cell = sheets._label_cell(sheets.presentation.tick_font())

        def colours():
            tiles = [sheets.Tile(m, bar=i > 0, values=False, selected_row=query) for i, m in enumerate(maps)]
            block = sheets.Block(tiles, cell=(cell, cell), shared_axes=True)  # one row: the tokens once, on the left
            return Panel(sheets.heatmap_sheet([block]), None, name, title)

        found.append(colours)
        focus = maps[min(scene.selection.get("page", 0), 2)]
        others = [m for m in maps if m is not focus]
        found.append(lambda: _focus_figure(focus, others, [sheets.shown_title(sheets.Tile(m)) for m in others],
                                           room, name, title, query))
    return found


def figure_title(panel) -> str:
    """The line a page draws above ``panel``: which keys a window of a long sentence shows, else none
    (the page's own title and caption say the rest)."""
    title = str(panel.title or "")
    return title if title.startswith("keys ") else ""


def scene_figure(window, scene: Scene, room: QtCore.QSizeF):
    """The figure of ``scene`` (shown in ``window``) for a page whose figure has ``room`` (pixels at
    96 dpi): the first of its candidates that prints with no text under 8 pt; the last one tried when
    none does."""
    budget = QtCore.QSizeF(room.width() / SHRINK - 20, room.height() / SHRINK - 20)  # less the figure's margins
    chosen = None
    for make in _candidates(window, scene, budget):
        panel = make()
        if panel is None:
            continue
        if chosen is not None:
            done_with(chosen)
        chosen = panel
        if figure_fit(panel, room, title=figure_title(panel)).readable:
            break
    return chosen
