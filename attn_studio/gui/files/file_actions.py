"""The File menu's work: new, open, save, recent files, the unsaved-changes question, autosave, recovery.

Decisions (what the title says, what is written when) are the Qt-free
``Document``'s; this room asks the questions and shows the answers. The
question and the save dialog are asked through the window (``window.ask_unsaved``,
``window.save_as_dialog``), so a script or a test can answer them there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6 import QtCore, QtGui, QtWidgets

from ...document import AUTOSAVE_MS, Document, SaveJob
from ...scenes import SUFFIX as LECTURE_SUFFIX
from ...schema import TrainedSession
from ...session import SESSION_SUFFIX, SessionError, read_session_file
from .save_worker import SaveQueue

FILE_FILTER = f"Attention Studio sessions (*{SESSION_SUFFIX});;JSON files (*.json);;All files (*)"


class FileActions(QtCore.QObject):
    """Sessions of ``window`` over ``document``; ``show_message``/``status`` report, ``on_title`` retitles.

    ``autosave_timer`` writes the recovery file ``AUTOSAVE_MS`` after a change; ``autosave()`` does it now.
    Large sessions are written by ``saves`` (a :class:`SaveQueue`) off the GUI thread, so the window
    keeps repainting; small ones at once.
    """

    def __init__(self, window, document: Document, show_message: Callable[[str], None],
                 status: Callable[[str, int], None], on_title: Callable[[], None]):
        super().__init__(window)
        self.window, self.document = window, document
        self.show_message, self.status, self.on_title = show_message, status, on_title
        self.recovery_banner: QtWidgets.QFrame | None = None
        self.autosave_timer = QtCore.QTimer(self)
        self.autosave_timer.setObjectName("autosaveTimer")
        self.autosave_timer.setSingleShot(True)
        self.autosave_timer.setInterval(AUTOSAVE_MS)
        self.autosave_timer.timeout.connect(self.autosave)
        self.saves = SaveQueue(self)
        self.saves.busy_changed.connect(lambda busy: busy and self.status("Saving…", 0))

    def fill_file_menu(self, menu: QtWidgets.QMenu) -> None:
        """New, Open, Open Recent, Save, Save As (the actions are kept as ``new_action``...)."""
        keys = QtGui.QKeySequence
        self.new_action = menu.addAction("&New", self.new_session)
        self.new_action.setShortcut(keys.New)
        self.open_action = menu.addAction("&Open…", self.open_dialog)
        self.open_action.setShortcut(keys.Open)
        self.recent_menu = menu.addMenu("Open &Recent")
        self.recent_menu.setObjectName("recentMenu")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        menu.addSeparator()
        self.save_action = menu.addAction("&Save", self.save)
        self.save_action.setShortcut(keys.Save)
        self.save_as_action = menu.addAction("Save &As…", lambda: self.window.save_as_dialog())
        self.save_as_action.setShortcut(keys.SaveAs)

    # -- the question ---------------------------------------------------------------------
    def confirm_discard(self) -> bool:
        """Ask what to do with unsaved changes (Save, Discard or Cancel); True when it is fine to go on."""
        self.saves.wait()  # a save in flight decides whether anything is unsaved
        if not self.document.is_modified:
            return True
        answer = self.window.ask_unsaved()
        if answer == QtWidgets.QMessageBox.Save:
            if not self.save():
                return False
            self.saves.wait()
            return not self.document.is_modified  # a save that failed said why; nothing is discarded
        return answer == QtWidgets.QMessageBox.Discard

    def ask_unsaved(self):
        """The Save / Discard / Cancel question about the session (:func:`unsaved_question`)."""
        return unsaved_question(self.window, "Unsaved changes",
                                "This session has changes that are not saved. Save them first?")

    # -- files -------------------------------------------------------------------------------
    def new_session(self) -> bool:
        """Start again from the default model (asks about unsaved changes first)."""
        if not self.confirm_discard():
            return False
        self.document.new()
        self.on_title()
        return True

    def open_file(self, path) -> bool:
        """Open a session file; a bad file is refused with a message and nothing changes.

        A trained-model session opens once its model is found (off the GUI thread; see gui.trained.wiring).
        The file's training lab settings, if it has them, are applied with it.
        """
        try:
            opened = read_session_file(path)  # every field checked, the training section too
            if isinstance(opened.state, TrainedSession):
                self.window.trained.open_session(opened.state, Path(path), training=opened.training)
                return True
            path = self.document.open(path)
        except SessionError as exc:
            self.show_message(f"Could not open {Path(path).name}: {exc}")
            return False
        self.window.clear_message()
        self.status(f"Opened {path}", 5000)
        self.on_title()
        return True

    def open_dialog(self) -> bool:
        """Ask for a session file and open it (asks about unsaved changes first)."""
        if not self.confirm_discard():
            return False
        start = str(self.document.path.parent) if self.document.path else ""
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self.window, "Open session", start, FILE_FILTER)
        return self.open_file(path) if path else False

    def save(self) -> bool:
        """Save to the current file, or ask for one; True when saved."""
        return self.save_to(self.document.path) if self.document.path else self.window.save_as_dialog()

    def save_to(self, path, *, background: bool | None = None) -> bool:
        """Save atomically to ``path``; on failure the previous file is intact and a message says why.

        A large session (or any, with ``background=True``) is written off the GUI
        thread: then True means the save started, and its outcome is shown when
        it ends. Otherwise True means saved.
        """
        try:
            job = self.document.save_job(path)
        except SessionError as exc:
            self.show_message(str(exc))
            return False
        if background or (background is None and (job.large or self.saves.busy)):
            self.saves.submit(lambda: job, self._saved)
            return True
        try:
            job.run()
        except (SessionError, OSError) as exc:
            return self._saved(job, str(exc))
        return self._saved(job, None)

    def _saved(self, job: SaveJob, error: str | None) -> bool:
        if error is not None:
            # The state and its modified mark are as they were: only the file failed.
            self.show_message(f"{error}. Nothing was saved; your work is still open.")
            self.status(f"Could not save {job.path.name}", 8000)
            return False
        warning = self.document.finish_save(job)
        self.status(f"Saved {job.path}" + (f"; {warning}" if warning else ""), 5000)
        self.on_title()
        return True

    def save_as_dialog(self) -> bool:
        """Ask for a file name and save there."""
        start = str(self.document.path) if self.document.path else f"untitled{SESSION_SUFFIX}"
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self.window, "Save session", start, FILE_FILTER)
        return self.save_to(path) if path else False

    def recent_files(self) -> list[str]:
        """Recently opened or saved sessions, newest first (kept between runs)."""
        return list(self.document.recent_files)

    def _fill_recent_menu(self):
        self.recent_menu.clear()
        for f in self.recent_files():
            self.recent_menu.addAction(Path(f).name, lambda f=f: self.open_any(f)).setToolTip(f)
        if not self.recent_files():
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    def open_dropped(self, paths: list[str]) -> bool:
        """Open the first of files dropped on the window (asks about unsaved changes first)."""
        return bool(paths) and self.open_any(paths[0])

    def open_any(self, path) -> bool:
        """Open ``path``, a session or a lecture (``.attn-lecture.json``, the window's lecture files open
        it), asking first about the unsaved changes it would replace."""
        lectures = getattr(self.window, "lecture_files", None)
        if lectures is not None and str(path).endswith(LECTURE_SUFFIX):
            return lectures.open(path)
        return self.confirm_discard() and self.open_file(path)

    # -- autosave and recovery ----------------------------------------------------------------
    def changed(self, fields) -> None:
        """The model changed: autosave a little later, unless only the selection moved."""
        if self.document.needs_autosave(fields) and not self.autosave_timer.isActive():
            self.autosave_timer.start()

    def autosave(self) -> None:
        """Write unsaved work to the recovery file now (the autosave timer calls this).

        A large session is written off the GUI thread, one autosave at a time; a
        newer state replaces one still waiting.
        """
        self.autosave_timer.stop()
        if self.saves.busy:
            self.saves.submit(self.document.autosave_job, self._autosaved, autosave=True)
            return
        job = self.document.autosave_job()
        if job is None:
            return
        if job.large:
            self.saves.submit(self.document.autosave_job, self._autosaved, autosave=True)
            return
        try:
            job.run()
        except (SessionError, OSError) as exc:
            self._autosaved(job, str(exc))
        else:
            self._autosaved(job, None)

    def _autosaved(self, job: SaveJob, error: str | None) -> None:
        if error is None:
            self.document.autosave_done()
            return
        message = self.document.autosave_failed(error)
        if message:  # once, not every few seconds
            self.show_message(message)

    def offer_recovery(self) -> None:
        """After a crash, offer the work that was autosaved (a banner, never a blocking dialog): the
        session's, and the lecture's when one was unsaved (the window's ``lecture_files``), together."""
        offer = self.document.recovery_offer()
        if offer.notes:
            self.show_message(" ".join(offer.notes))
        lectures = getattr(self.window, "lecture_files", None)
        lecture = lectures.recovery_offer() if lectures is not None else None
        if offer.path is None and lecture is None:
            return
        what = (("unsaved work and a lecture", "were") if lecture else ("unsaved work", "was")) \
            if offer.path is not None else ("an unsaved lecture", "was")
        bar, restore, discard = recovery_banner(offer.when if offer.path is not None else lecture[1], what)
        holder = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(holder)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.window.menuBar())
        layout.addWidget(bar)
        self.window.setMenuWidget(holder)
        self.recovery_banner = bar

        def answer(restoring: bool):
            notes = []
            if offer.path is not None:
                notes.append((self.document.restore if restoring else self.document.discard_recovery)(offer.path))
            if lecture is not None:
                notes.append((lectures.restore if restoring else lectures.recovery.discard)(lecture[0]))
            if any(notes):
                self.show_message(" ".join(n for n in notes if n))
            bar.hide()

        restore.clicked.connect(lambda: answer(True))
        discard.clicked.connect(lambda: answer(False))

    def close(self) -> None:
        """A clean close: stop the timer, finish a save in flight, leave nothing to recover."""
        self.autosave_timer.stop()
        self.saves.wait(drop_autosaves=True)
        self.document.close()


def unsaved_question(parent: QtWidgets.QWidget, title: str, text: str) -> QtWidgets.QMessageBox.StandardButton:
    """Ask the person what to do with unsaved work: Save (the default), Discard or Cancel.

    Every platform asks: nothing answers for the person. The session's and the lecture's questions
    both come here, so a script or a test answers them all by replacing this one function."""
    buttons = QtWidgets.QMessageBox.Save | QtWidgets.QMessageBox.Discard | QtWidgets.QMessageBox.Cancel
    return QtWidgets.QMessageBox.question(parent, title, text, buttons, QtWidgets.QMessageBox.Save)


def recovery_banner(when: str, what=("unsaved work", "was")) -> tuple[QtWidgets.QFrame, QtWidgets.QPushButton,
                                                                      QtWidgets.QPushButton]:
    """The banner that offers work a crashed run left behind (``what``: what it is and its verb, as
    ("an unsaved lecture", "was")): (banner, restore button, discard button)."""
    bar = QtWidgets.QFrame()
    bar.setObjectName("recoveryBanner")
    bar.setStyleSheet("#recoveryBanner { background: #fff4ce; border-bottom: 1px solid #e0c060; }")
    row = QtWidgets.QHBoxLayout(bar)
    row.setContentsMargins(8, 4, 8, 4)
    row.addWidget(QtWidgets.QLabel(f"Attention Studio closed unexpectedly; {what[0]} from {when} {what[1]} kept."), 1)
    restore = QtWidgets.QPushButton("Restore")
    restore.setObjectName("restoreButton")
    discard = QtWidgets.QPushButton("Discard")
    discard.setObjectName("discardRecoveryButton")
    row.addWidget(restore)
    row.addWidget(discard)
    return bar, restore, discard
