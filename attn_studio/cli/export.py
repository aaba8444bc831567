"""``attn-studio export ...``: a figure (or a trained model's weights as CSV / NumPy) written without a display."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager

from .basics import (
    DEFAULT_SCALE, EXPORT_SIZE, MAX_STEPS, PROG, SIZE_RANGE, Parser, UsageError, fail, quiet_qt, written,
)

def export_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} export",
        description="Write a figure of one panel (or the whole window) without a display.",
        epilog="Examples: attn-studio export --preset animal --panel head:2 --out head2.png --dpi 300; "
               "attn-studio export --session s.attn.json --panel variance --out var.pdf; "
               "attn-studio export --model all-MiniLM-L6-v2 --text \"The animal didn't cross the street because "
               "it was too tired.\" --silence 4.2 --panel drift --out drift.png",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--session", metavar="FILE",
                        help="a session file (.attn.json) to draw, of the toy model or of a trained model (its "
                             "model, sentences, edits and selection)")
    source.add_argument("--preset", metavar="NAME", help="an example to draw (journey, bank, animal, money-bank-2d)")
    source.add_argument("--model", metavar="NAME|FOLDER",
                        help="a trained model: all-MiniLM-L6-v2, a Hugging Face cache name or a model folder "
                             "(nothing is downloaded)")
    parser.add_argument("--text", help="with --model: the sentence to run (a lab model's folder: its tokens, "
                                       "e.g. \"KDQBX KDQBX\"; without --text, a random stretch twice)")
    parser.add_argument("--second", metavar="TEXT", help="with --model: a second sentence with the same word "
                                                         "(the meaning panel)")
    parser.add_argument("--word", help="with --model: the word the meaning panel follows in both sentences")
    parser.add_argument("--layer", type=int, default=None,
                        help="a trained model's layer shown, from 1 (default: 1, or the session's)")
    parser.add_argument("--head", type=int, default=None,
                        help="a trained model's head shown, from 1 (default: 1, or the session's)")
    parser.add_argument("--silence", action="append", metavar="L.H",
                        help="a trained model: silence head H of layer L (both from 1) before drawing; repeatable")
    parser.add_argument("--scale-head", action="append", metavar="L.H=F", dest="scale_head",
                        help="a trained model: scale head H of layer L by F (0 silences, 1 as trained, up to 2) "
                             "before drawing; repeatable")
    parser.add_argument("--query", metavar="TOKEN|N",
                        help="the query the steps and heatmaps follow: a token of the sentence, or its position "
                             "from 1 (special tokens count: [CLS] is 1)")
    parser.add_argument("--panel", default="heatmaps",
                        help="heatmaps (default), head:N (N from 1), steps, outputs (heads to output), compare, "
                             "geometry, positions, variance, saturation or window; with --model also model, drift "
                             "and meaning; stage: the Present stage of --view, --width x --height as a projector "
                             "shows it. A figure is laid out for the page: --width/--height change the window, "
                             "never what a heatmap figure contains")
    parser.add_argument("--view", metavar="NAME",
                        help="with --panel window or stage: the view shown, by its tab's name (Attention, "
                             "\"Step by step\", Heads, \"Training: Why two layers\"...; default the first)")
    parser.add_argument("--page", type=int, default=1,
                        help="with --panel stage: the view's page (a tile of its heatmaps, a plot), from 1")
    parser.add_argument("--find", nargs=2, metavar=("QUERY", "KEY"),
                        help="with --model: the Heads tab finds the heads that send QUERY's attention to KEY")
    parser.add_argument("--steps", type=int, default=0,
                        help="with a training view: train this many steps before drawing (default: none)")
    parser.add_argument("--format", choices=("png", "svg", "pdf", "csv", "npy"), dest="fmt",
                        help="the figure format (default: from the --out extension); with --model, csv or npy "
                             "write the selected head's attention weights with the tokens as labels")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--scale", type=float, default=None, help="PNG only: pixels per screen pixel, 1 to 8 (default 2)")
    size.add_argument("--dpi", type=float, help="PNG only: resolution, 96 to 768 (sets the scale to DPI/96)")
    parser.add_argument("--width", type=int, default=EXPORT_SIZE[0], help="window width in pixels (default 1600)")
    parser.add_argument("--height", type=int, default=EXPORT_SIZE[1], help="window height in pixels (default 900)")
    parser.add_argument("--title", default=None, help='the figure title (default: the setting; "" for none)')
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="the file to write (.png, .svg or .pdf); with --animate .gif, .mp4, .webm or .png "
                             "(APNG), or a folder for numbered frames (--format png or svg)")
    animate = parser.add_argument_group("animations")
    animate.add_argument("--animate", action="append", metavar="NAME=FROM:TO[:FRAMES]",
                         help="write the panel as an animation over this range: d_k, temperature, heads, "
                              "cell=X[r,c] (or W_Q/W_K/W_V[r,c]), scale=off:on, causal=off:on, query, step, layer, "
                              "or steps with a training view; repeat to nest (the first changes slowest)")
    animate.add_argument("--fps", type=float, default=None, help="with --animate: frames a second (default 5)")
    animate.add_argument("--hold", type=float, default=None,
                         help="with --animate: seconds the last frame stays (default 1)")
    animate.add_argument("--loop", action=argparse.BooleanOptionalAction, default=None,
                         help="with --animate: a GIF or APNG plays forever (default) or once (--no-loop)")
    animate.add_argument("--size", metavar="WxH", default=None,
                         help="with --animate: every frame this many pixels (the figure fitted, centred on "
                              "white), e.g. 1280x720; default the figure's own size times --scale (1)")
    return parser


def _check_format_matches_extension(out, fmt: str | None) -> None:
    """``--format`` must agree with the extension of ``--out`` when that names a figure format.

    An SVG drawing in a file called ``x.png`` opens nowhere, and guessing which
    of the two the person meant is worse than asking: the command stops.
    """
    from pathlib import Path

    suffix = Path(out).suffix.lstrip(".").lower()
    if fmt and suffix in ("png", "svg", "pdf") and suffix != fmt:
        raise UsageError(f"--format {fmt} contradicts the extension of {Path(out).name}; "
                         f"name the file .{fmt} or leave out --format")


def _check_png_only(args, fmt: str) -> None:
    """``--scale`` and ``--dpi`` size a PNG's pixels; an SVG or PDF has none, so asking is a mistake said aloud.

    Fills in the default scale (2) when neither is given.
    """
    given = "--dpi" if args.dpi is not None else "--scale" if args.scale is not None else None
    if given is not None and fmt != "png":
        what = "file holds numbers, not pixels" if fmt in MATRIX_FORMATS else "figure is drawn as vectors at any size"
        raise UsageError(f"{given} sizes a PNG's pixels; a .{fmt} {what}: leave out {given}, or write a .png")
    if args.scale is None:
        args.scale = DEFAULT_SCALE


def _check_export_args(args, trained=None):
    """Everything that can be checked before Qt starts; returns (toy state, preset name, panel, format).

    ``trained`` is the trained studio the figure shows (None: the toy model); the toy state is then
    only the window's starting point.
    """
    from ..gui.files.figures import ExportError, check_output_path, check_panel_name, figure_format, resolve_scale
    from ..session import SessionError, load_preset, read_session

    try:
        panel = check_panel_name(args.panel)
        fmt = figure_format(args.out, args.fmt)
        _check_format_matches_extension(args.out, args.fmt)
        if panel == "stage" and (fmt != "png" or args.scale is not None or args.dpi is not None or args.title):
            raise UsageError("--panel stage writes the screen as a projector shows it: a .png of --width x "
                             "--height pixels, without --scale, --dpi or --title")
        _check_png_only(args, fmt)
        resolve_scale(args.scale, args.dpi)
        check_output_path(args.out)
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    if panel.startswith("training:") and not args.steps:
        # A lab panel shows a run that plays in the window: the export plays it to --steps first.
        raise UsageError(f"the {panel} panel shows a training run: give --steps N (its run played to step N), "
                         f"or write its figure and history with attn-studio train {panel.split(':', 1)[1]} "
                         f"--out DIR --png")
    if panel == "positions" and trained is not None:  # the panel draws the toy model's sinusoidal encoding
        from ..trained.command import learned_positions

        raise UsageError(learned_positions(trained.model))
    if args.view is not None and panel not in ("window", "stage"):
        raise UsageError("--view chooses the view of --panel window or --panel stage")
    if args.page != 1 and panel != "stage":
        raise UsageError("--page chooses a page of --panel stage")
    if not 0 <= args.steps <= MAX_STEPS:
        raise UsageError(f"--steps must be between 0 and {MAX_STEPS}, got {args.steps}")
    lo, hi = SIZE_RANGE
    for name, value in (("width", args.width), ("height", args.height)):
        if not lo <= value <= hi:
            raise UsageError(f"--{name} must be between {lo} and {hi} pixels, got {value}")
    try:
        if args.session and trained is None:
            state, preset = read_session(args.session), ""
        else:
            preset = (args.preset if trained is None else None) or "journey"
            state = load_preset(preset)
    except SessionError as exc:
        raise UsageError(str(exc)) from None
    if trained is None and args.query is not None:
        from ..trained.command import CommandError, query_index

        try:
            state = state.replace(query_index=query_index(state.query_tokens, args.query))
        except CommandError as exc:
            raise UsageError(str(exc)) from None
    return state, preset, panel, fmt


MATRIX_FORMATS = ("csv", "npy")
TRAINED_FLAGS = ("layer", "head", "silence", "scale_head", "find")


def _matrix_format(args) -> str | None:
    """"csv" / "npy" when the export asks for the attention matrix, else None."""
    from pathlib import Path

    suffix = Path(args.out).suffix.lstrip(".").lower()
    fmt = args.fmt or (suffix if suffix in MATRIX_FORMATS else None)
    if fmt not in MATRIX_FORMATS:
        return None
    if args.model is None and args.session is None:
        raise UsageError(f"--format {fmt} writes a trained model's attention weights; give --model and --text, "
                         "or --session with a trained model's session")
    if suffix in ("png", "svg", "pdf", *MATRIX_FORMATS) and suffix != fmt:
        raise UsageError(f"--format {fmt} contradicts the extension of {Path(args.out).name}; "
                         f"name the file .{fmt} or leave out --format")
    return fmt


def _trained_source(args):
    """The trained studio the export draws (``--model`` and ``--text``, or a trained ``--session``), with the
    command line's layer, head, edits and query applied; None for the toy model. ``UsageError`` otherwise.
    Loads the model (slow)."""
    from ..pretrained import ModelError
    from ..trained.command import CommandError, open_model_on, open_session, set_up

    if args.model is None:
        for flag in ("text", "second", "word"):
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag} goes with --model" + (" (a session draws its own sentence)"
                                                                  if args.session else ""))
    try:
        if args.model is not None:
            studio = open_model_on(args.model, args.text, args.second, args.word)
        else:
            studio = open_session(args.session) if args.session else None
        if studio is None:
            given = ["--" + name.replace("_", "-") for name in TRAINED_FLAGS if getattr(args, name) is not None]
            if given:
                raise UsageError(f"{given[0]} edits or selects a trained model's heads: give --model, or --session "
                                 "with a trained model's session (for the toy model's heads, --panel head:N)")
            return None
        first = 1 if args.model is not None else None  # a session keeps its own selection
        set_up(studio, layer=first if args.layer is None else args.layer, head=first if args.head is None else args.head,
               silence=args.silence or (), scale=args.scale_head or (), query=args.query)
    except (CommandError, ModelError) as exc:
        raise UsageError(str(exc)) from None
    return studio


def _export_matrix(args, trained, fmt: str) -> int:
    """Write the selected head's attention weights (rows: queries, columns: keys, both tokens), edits included."""
    from ..matrices import ExportError as MatrixError
    from ..matrices import save_matrix

    if trained is None:
        return fail(f"--format {fmt} writes a trained model's attention weights; {args.session} is a session "
                     "of the toy model")
    weights, rows, cols = trained.attention_matrix()
    out = args.out
    if not str(out).lower().endswith("." + fmt):
        return fail(f"--format {fmt} needs a file ending in .{fmt}, got {out}")
    return written(out, lambda: save_matrix(out, weights, rows, cols), MatrixError)


def export_main(argv: list[str]) -> int:
    """``attn-studio export ...``: draw the window offscreen and write one figure. Returns the exit code."""
    try:
        args = export_parser().parse_args(argv)
        if args.animate:
            from .animate import animate_main

            return animate_main(args)
        for flag in ("fps", "hold", "loop", "size"):
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag} goes with --animate NAME=FROM:TO")
        matrix_fmt = _matrix_format(args)
        if matrix_fmt is not None:
            _check_png_only(args, matrix_fmt)
        trained = _trained_source(args)
        if matrix_fmt is not None:
            return _export_matrix(args, trained, matrix_fmt)
        state, preset, panel_name, fmt = _check_export_args(args, trained)
    except UsageError as exc:
        return fail(exc)
    except ValueError as exc:  # the text refused by the model (too long for its positions...)
        return fail(exc)

    with headless_window(args, state, preset, trained) as window:
        from ..gui.files.figures import ExportError, done_with, export_figure, find_panel, show_panel
        from ..gui.widgets import settle

        def write() -> None:
            panel = _picture(window, args, panel_name)
            if panel is None:
                panel = find_panel(window, panel_name)
                show_panel(panel)
                settle(window)
                panel = find_panel(window, panel_name)  # after showing: the head canvases may have changed
            if panel.name == "stage":
                from ..gui.window.picture import write_screen

                write_screen(panel, args.out)
            else:
                export_figure(panel, args.out, fmt=fmt, scale=args.scale, dpi=args.dpi, title=args.title)
                done_with(panel)

        return written(args.out, write, ExportError)


@contextmanager
def headless_window(args, state, preset: str, trained):
    """The window, offscreen, at ``args.width`` × ``args.height``, showing ``state`` (or the ``trained``
    studio); closed and deleted, with Qt's messages put back, when the block ends."""
    # Headless by design: a figure must come out the same on a server, in CI, over ssh.
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6 import QtCore, QtWidgets

    quiet_qt()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([PROG])
    app.setApplicationName("Attention Studio")
    app.setOrganizationName("Attention Studio")

    from ..gui import MainWindow
    from ..gui.qt.worker import collect_on_gui_thread
    from ..gui.widgets import settle
    from ..studio import Studio

    window = None
    # As in the window: a model's pass or a run played for --steps works on another thread, where an
    # automatic collection would free the window's Qt objects off theirs.
    collector = collect_on_gui_thread(app)
    try:
        # A figure is not work to keep: the window never autosaves (an export slower than the
        # autosave's few seconds left a recovery file the next start offered) and offers nothing.
        window = MainWindow(Studio(state), preset=preset or None, restore_settings=False, recovery=False)
        if trained is not None:
            window.trained.room.set_studio(trained)
        # The layout a screen of this size gets (on 1024-1599 px the Numbers share the bottom).
        window.fit_to_screen(QtCore.QRect(0, 0, args.width, args.height))
        window.resize(args.width, args.height)
        window.show()
        settle(window)
        yield window
    finally:
        if window is not None:
            # Closed as a person closes it: its training runs and jobs end, else a run played for --steps
            # would keep the application waiting for its thread at exit. A figure is not work to keep:
            # marked saved first, so closing asks nothing (a question nobody is there to answer).
            window.studio.mark_saved()
            window.close()
            # Delete the window while the application still exists (see main()).
            window.deleteLater()
            app.processEvents()
            QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
            del window
        if collector is not None:
            collector.stop()


def _picture(window, args, panel_name: str):
    """The window set up as ``--view``, ``--find`` and ``--steps`` ask; the stage's panel for ``--panel stage``
    (else None: the panel is found by name)."""
    from ..gui.window import picture

    if args.find:
        picture.find_heads(window, *args.find)
    if panel_name.startswith("training:"):
        view = picture.show_view(window, picture.training_view(window, panel_name))
    else:
        view = picture.show_view(window, args.view) if args.view or args.steps or panel_name == "stage" else None
    if args.steps:
        picture.train(window, view, args.steps)
    if panel_name == "stage":
        return picture.stage_panel(window, view, args.page, args.width, args.height)
    return None


