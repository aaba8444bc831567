"""The Scenes panel's own undo and redo of the lecture: the lectures before and after the one shown.

Qt-free: the panel asks it what to show on Undo and Redo, and it never shows anything itself.
"""

from __future__ import annotations

from ...scenes import Lecture

HISTORY = 200  # lecture edits kept for the panel's undo


class LectureHistory:
    """The lectures that Undo (``undo``) and Redo (``redo``) go back and forth to, the last one last;
    None among them is "no lecture"."""

    def __init__(self) -> None:
        self.undo: list[Lecture | None] = []
        self.redo: list[Lecture | None] = []

    def forget(self) -> None:
        """No history: a lecture opened has nothing to undo."""
        self.undo.clear()
        self.redo.clear()

    def record(self, before: Lecture | None) -> None:
        """``before`` is what Undo goes back to (at most HISTORY kept); what was undone is redone no more."""
        self.undo = (self.undo + [before])[-HISTORY:]
        self.redo.clear()

    def back(self, shown: Lecture | None) -> Lecture | None:
        """The lecture before ``shown`` (``shown`` is then redone); call only when ``undo`` has one."""
        self.redo.append(shown)
        return self.undo.pop()

    def forward(self, shown: Lecture | None) -> Lecture | None:
        """The lecture undone last (``shown`` is then undone again); call only when ``redo`` has one."""
        self.undo.append(shown)
        return self.redo.pop()
