"""What every ``attn-studio`` command shares: its name, a one-line usage error, a parser that raises it."""

from __future__ import annotations

import argparse
import sys

PROG = "attn-studio"
EXPORT_SIZE = (1600, 900)
DEFAULT_SCALE = 2.0  # a PNG's pixels per screen pixel when neither --scale nor --dpi is given
SIZE_RANGE = (320, 8000)
MAX_STEPS = 100_000  # --steps: a training lab run is a few thousand steps
# Messages Qt prints while the export command draws that say nothing to its user:
# the offscreen platform on show() (see DESIGN.md), and the PDF engine dropping a
# widget style's gradient (the window panel's buttons are then drawn flat).
QUIET_QT_MESSAGES = (
    "This plugin does not support propagateSizeHints()",
    "QPdfEngine: unable to create a gradient between colors of different spec",
)


def quiet_qt() -> None:
    """Keep Qt's own chatter off the user's terminal for the rest of this command.

    A command draws offscreen; Qt then tells the terminal about its platform plugin (twice per
    figure for ``train --png``) and the PDF engine's flat gradients. Debug and info messages and
    :data:`QUIET_QT_MESSAGES` are dropped; any other warning is one line naming Qt, so a real
    problem still shows. Installed once, before the command's QApplication exists, and kept
    until the process ends (a command is one process)."""
    from PySide6 import QtCore

    def on_message(kind, context, message):
        if kind in (QtCore.QtMsgType.QtDebugMsg, QtCore.QtMsgType.QtInfoMsg):
            return
        if any(quiet in message for quiet in QUIET_QT_MESSAGES):
            return
        print(f"{PROG}: Qt: {' '.join(message.split())}", file=sys.stderr)

    QtCore.qInstallMessageHandler(on_message)


class UsageError(Exception):
    """A bad command line: reported as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block, no traceback)."""

    def error(self, message):
        raise UsageError(message)


def written(out, write, refused: type[Exception] | tuple) -> int:
    """Call ``write()`` and say that ``out`` was written (0); a ``refused`` error is a usage error (2),
    an OSError a failed write (1), each one line on stderr."""
    try:
        write()
    except refused as exc:
        return fail(exc)
    except OSError as exc:
        return fail(f"cannot write {out}: {exc.strerror or exc}", code=1)
    print(f"{PROG}: wrote {out}")
    return 0


def fail(message: str, code: int = 2) -> int:
    """Print ``message`` as one line on stderr; returns the exit ``code``."""
    text = " ".join(str(message).split())  # exactly one line
    print(f"{PROG}: error: {text}", file=sys.stderr)
    return code
