"""``attn-studio export --lecture``: a lecture's hand-out from the command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from ...matrices import ExportError
from ..files.pages import default_paper


class CommandParser(argparse.ArgumentParser):
    """A lecture command's parser: a bad command line raises ValueError, said in one line by the command."""

    def error(self, message):
        raise ValueError(message)


def command_fail(prog: str):
    """``fail(message, code=2)`` for a lecture command named ``prog``: the message as one line on stderr,
    the exit ``code`` returned (the command line's own, in a room the lecture wing may not import)."""

    def fail(message, code: int = 2) -> int:
        print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
        return code

    return fail


def handout_command(argv: list[str], prog: str, make_window) -> int:
    """``attn-studio export --lecture FILE --out handout.pdf`` (a page a scene) or ``--out DIR`` (one
    numbered PNG, or SVG with ``--format svg``, a page), ``--paper a4|letter`` (the locale's by default),
    ``--notes``; drawn in ``make_window(...)`` (the main window class: the lecture wing does not import
    the window). Progress goes to stderr. Returns the exit code."""

    from ...scenes import LectureError, read_lecture
    from ..qt.worker import collect_on_gui_thread
    from .handout import write_handout  # here: handout.py re-exports this command

    fail = command_fail(prog)
    parser = CommandParser(prog=f"{prog} export --lecture", description="A lecture's hand-out: a printed page a scene.")
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
        close_headless(app, window, collector)


def close_headless(app, window, collector) -> None:
    """End a command's offscreen window as a person closes it (a training scene started the lab's
    runners, whose threads the application would otherwise wait for at exit, forever), with nothing
    asked (marked saved first); then stop the command's collector."""
    window.studio.mark_saved()
    window.close()
    window.deleteLater()
    app.processEvents()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
    if collector is not None:
        collector.stop()
