"""``attn-studio``: open the window (optionally on a preset or a session file)."""

from __future__ import annotations

import argparse
import sys

from . import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attn-studio",
        description="Attention Studio: a live playground for the attention mechanism.",
    )
    parser.add_argument("--version", action="version", version=f"attn-studio {__version__}")
    parser.add_argument("--preset", default=None, help="open on this example (journey, bank, animal, money-bank-2d)")
    parser.add_argument("file", nargs="?", help="a session file (.attn.json) to open")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``attn-studio`` command; returns the exit code."""
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    from .session import SessionError, load_preset, read_session

    state = None
    try:
        if args.file:
            state = read_session(args.file)
        elif args.preset:
            state = load_preset(args.preset)
    except SessionError as exc:
        print(f"attn-studio: {exc}", file=sys.stderr)
        return 2

    from PySide6 import QtWidgets

    from .gui import MainWindow
    from .studio import Studio

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setApplicationName("Attention Studio")
    app.setOrganizationName("Attention Studio")
    window = MainWindow(Studio(state)) if state is not None else MainWindow()
    window.show()
    code = app.exec()
    # Delete the window while the application still exists: left to interpreter
    # shutdown, Qt may tear the scene down after QApplication and crash.
    window.deleteLater()
    app.processEvents()
    del window
    return code
