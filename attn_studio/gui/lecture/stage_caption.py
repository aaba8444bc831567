"""The stage's caption line, read as text: which parts of it tell a key (the hints, apart from what the
view shows), which say the windowed tokens' ranges, the direction a line is laid out in, and the hints'
muted ink."""

from __future__ import annotations

import re
import unicodedata

from PySide6 import QtCore, QtGui

# A part of the caption line that tells a key ("↑ ↓ query", "S scaling", "PageDown next view", "Esc leaves"):
# it goes to the hints' own label, apart from what the view shows, and is the first to give way.
_KEY_HINT = re.compile(r"^(?:↑ ↓|← →|1–9|Page(?:Down|Up)\b|Shift\+|Ctrl\+|Esc\b|F\d+\b|Home\b|End\b"
                       r"|Play / Pause|[BCGHNSW](?: or \S)?(?= )|[.,?](?= ))")


def is_range(part: str) -> bool:
    """True when ``part`` of a caption line says which tokens a windowed figure shows ("queries 8–13, …")."""
    return part.strip().startswith(("queries ", "keys "))


def is_key_hint(part: str) -> bool:
    """True when ``part`` of a caption line tells a key (a hint for the lecturer), not what the view shows."""
    return bool(_KEY_HINT.match(part.strip()))


def text_direction(text: str) -> QtCore.Qt.LayoutDirection:
    """The direction of ``text``'s first strong letter (Unicode's bidi rule P2): right to left for Arabic,
    Hebrew and the like, else left to right."""
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in ("R", "AL"):
            return QtCore.Qt.RightToLeft
        if kind == "L":
            return QtCore.Qt.LeftToRight
    return QtCore.Qt.LeftToRight


def _muted(theme) -> QtGui.QColor:
    # The hints' ink: two thirds of the way from the canvas to the text (still 4.5:1 and more on each theme).
    ink, canvas = QtGui.QColor(theme.ink), QtGui.QColor(theme.canvas)
    mix = 0.68
    return QtGui.QColor(*(round(mix * a + (1 - mix) * b) for a, b in zip(ink.getRgb()[:3], canvas.getRgb()[:3])))
