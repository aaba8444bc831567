"""A lecture's files, as sessions have theirs: Open, Save, Save As, recent files, the unsaved-changes
question, autosave and recovery after a crash.

The lecture is the Scenes panel's; what was last opened or saved is ``saved``, and the lecture has
unsaved changes while it differs from it. Unsaved work is autosaved to this studio's lecture recovery
file (:class:`~attn_studio.scenes.LectureRecovery`) a little after each change; the next start offers
it with the session's (the window's recovery banner) only when this process is gone.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from ...document import AUTOSAVE_MS
from ...scenes import SUFFIX, Lecture, LectureError, LectureRecovery, example_lecture, read_lecture, write_lecture
from ..files import file_actions
from ..settings import data_dir

FILE_FILTER = f"Lectures (*{SUFFIX});;All files (*)"


class LectureFiles(QtCore.QObject):
    """The files of ``panel``'s lecture in ``window``: ``path`` (None until opened or saved),
    ``saved`` (the lecture as its file holds it), ``recovery`` (the autosaved copy)."""

    def __init__(self, window, panel):
        super().__init__(window)
        self.window, self.panel = window, panel
        self.path: Path | None = None
        self.saved: Lecture | None = None
        self.recovery = LectureRecovery(data_dir(), enabled=window.document.recovery.enabled)
        self.autosave_timer = QtCore.QTimer(self, singleShot=True, interval=AUTOSAVE_MS)
        self.autosave_timer.setObjectName("lectureAutosaveTimer")
        self.autosave_timer.timeout.connect(self.autosave)
        panel.lectureChanged.connect(self._changed)

    # -- what is unsaved -------------------------------------------------------------------------
    @property
    def is_modified(self) -> bool:
        """True when the lecture has changes its file (or the example it came from) does not hold."""
        return self.panel.lecture is not None and self.panel.lecture != self.saved

    def _changed(self) -> None:
        if not self.autosave_timer.isActive():
            self.autosave_timer.start()
        self.panel.show_file(self.path, self.is_modified)

    def confirm_discard(self) -> bool:
        """Ask what to do with a lecture's unsaved changes (Save, Discard or Cancel); True to go on."""
        self.panel.commit_edits()  # a title still being typed is a change too
        if not self.is_modified:
            return True
        answer = self.ask_unsaved()
        if answer == QtWidgets.QMessageBox.Save:
            return self.save()
        return answer == QtWidgets.QMessageBox.Discard

    def ask_unsaved(self):
        """The Save / Discard / Cancel question about the lecture (asked as the session's is:
        :func:`~attn_studio.gui.files.file_actions.unsaved_question`)."""
        title = self.panel.lecture.title if self.panel.lecture else "The lecture"
        return file_actions.unsaved_question(self.window, "Unsaved lecture",
                                             f"“{title}” has changes that are not saved. Save them first?")

    # -- opening -----------------------------------------------------------------------------------
    def opened(self, lecture: Lecture, path=None) -> None:
        """Make ``lecture`` (read from ``path``, or the example when None) the panel's, on its first scene."""
        self.path = Path(path) if path is not None else None
        self.saved = lecture
        if path is not None:
            self.window.document.add_recent(path)
        self.panel.set_lecture(lecture, fresh=True)
        self.panel.go(0)

    def open(self, path, *, ask: bool = True) -> bool:
        """Open the lecture file ``path`` (unsaved changes asked about first when ``ask``); every field is
        checked first, and a refused file changes nothing. False with a message when it is not opened."""
        if ask and not self.confirm_discard():
            return False
        try:
            lecture = read_lecture(path)
        except LectureError as exc:
            self.window.show_message(str(exc))
            return False
        self.opened(lecture, path)
        self.window.statusBar().showMessage(f"Opened {Path(path).name}", 5000)
        return True

    def open_example(self) -> bool:
        """Help → Example lecture (unsaved changes of the lecture open asked about first)."""
        if not self.confirm_discard():
            return False
        self.opened(example_lecture())
        return True

    def open_dialog(self) -> bool:
        """Ask for a lecture file and open it."""
        if not self.confirm_discard():
            return False
        start = str(self.path.parent) if self.path else ""
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self.window, "Open a lecture", start, FILE_FILTER)
        return self.open(path, ask=False) if path else False

    # -- saving ------------------------------------------------------------------------------------
    def save(self) -> bool:
        """Save to the lecture's file, or ask for one; True when saved."""
        return self.save_to(self.path) if self.path is not None else self.save_as_dialog()

    def save_to(self, path) -> bool:
        """Write the lecture to ``path`` atomically (the suffix added when missing); False with a message
        when it cannot be written (the old file intact, the lecture still open and unsaved)."""
        self.panel.commit_edits()  # what is typed in the panel's fields is saved with the rest
        lecture = self.panel.lecture
        if lecture is None:
            self.window.show_message("There is no lecture to save: add a scene first (Ctrl+M)")
            return False
        path = Path(path)
        if not path.name.endswith(".json"):
            path = path.with_name(path.name + SUFFIX)
        try:
            write_lecture(lecture, path)
        except (LectureError, OSError) as exc:
            self.window.show_message(f"The lecture was not saved: {exc}")
            return False
        self.path, self.saved = path, lecture
        self.window.document.add_recent(path)
        self.recovery.clear()
        self.panel.show_file(self.path, self.is_modified)
        self.window.statusBar().showMessage(f"Saved {path.name}", 5000)
        return True

    def save_as_dialog(self) -> bool:
        """Ask for a file name and save the lecture there."""
        start = str(self.path) if self.path else f"lecture{SUFFIX}"
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self.window, "Save the lecture", start, FILE_FILTER)
        return self.save_to(path) if path else False

    # -- autosave and recovery ---------------------------------------------------------------------
    def autosave(self) -> None:
        """Keep unsaved changes in the recovery file now (the timer calls this), or remove it when saved."""
        self.autosave_timer.stop()
        if not self.is_modified:
            self.recovery.clear()
            return
        try:
            self.recovery.save(self.panel.lecture)
        except LectureError as exc:
            self.window.statusBar().showMessage(f"The lecture's autosave failed: {exc}", 10000)

    def recovery_offer(self) -> tuple[Path, str] | None:
        """At start: a lecture a crashed studio left unsaved (its file, when it was written), or None."""
        self.recovery.sweep()
        orphans = self.recovery.orphans()
        if not orphans:
            return None
        try:
            when = time.strftime("%H:%M on %d %b", time.localtime(orphans[0].stat().st_mtime))
        except OSError:
            when = "an earlier run"
        return orphans[0], when

    def restore(self, path) -> str | None:
        """Take the recovered lecture at ``path`` as the panel's (unsaved); a message when it cannot be read
        (then it is moved aside, never deleted)."""
        try:
            lecture = read_lecture(path)
        except LectureError as exc:
            return f"The recovered lecture cannot be read: {exc}. {self.recovery.discard(path) or ''}".strip()
        self.path, self.saved = None, None
        self.panel.set_lecture(lecture, fresh=True)
        self.recovery.discard(path)
        return None

    def close(self) -> None:
        """A clean close: nothing is left to recover."""
        self.autosave_timer.stop()
        self.recovery.clear()
