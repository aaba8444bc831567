"""The open document: which file it is, whether it is saved, recent files, autosave and recovery.

Qt-free, so that every decision here (what the title says, what is written
when, what is offered at start) is testable without a display. The window
asks the questions and shows the answers; this module decides.
"""

from __future__ import annotations

import contextlib
import gc
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .schema import TrainedSession
from .recovery import RecoveryStore
from .session import (SESSION_SUFFIX, SessionError, is_temporary, load_preset, read_session_file,
                      remove_stale_temporaries, write_session)
from .state import SELECTION_FIELDS, StudioState
from .studio import Studio

MAX_RECENT = 8
AUTOSAVE_MS = 3000  # unsaved work is written to the recovery file this long after a change
# Sessions whose weight stores hold more cells than this are saved off the window's
# thread (a million edited cells take seconds to write); smaller ones at once.
BACKGROUND_SAVE_CELLS = 200_000


def open_preset(name: str) -> tuple[Studio, str | None]:
    """A studio on the example ``name`` and that name, or the default model and None when it cannot be read."""
    try:
        return Studio(load_preset(name)), name
    except SessionError:
        return Studio(), None


@dataclass(frozen=True)
class RecoveryOffer:
    """Work a crashed studio left behind: the file, when it was written, and notes about the sweep."""

    path: Path | None
    when: str
    notes: list[str]


@dataclass(frozen=True)
class SaveJob:
    """One write of ``state``: to the session file ``path``, or (``autosave``) to the recovery file.

    ``training`` is the training lab's settings as they were when the job was made (None: none
    are written). ``run`` does the slow part (serialising and the atomic write) and may run
    on any thread: the state is immutable and nothing else is touched.
    ``Document.finish_save`` then records the outcome, on the caller's thread.
    """

    state: StudioState
    path: Path
    autosave: bool = False
    recovery: RecoveryStore | None = None
    training: dict | None = None

    def run(self) -> None:
        """Write the file; ``SessionError`` or ``OSError`` when it cannot be written (the old file is intact)."""
        with _collections_paused(self.large):
            if self.autosave:
                self.recovery.save(self.state, self.training)
            else:
                write_session(self.path, self.state, self.training)

    @property
    def large(self) -> bool:
        """True when writing takes long enough that a window should not wait for it."""
        return _store_cells(self.state) > BACKGROUND_SAVE_CELLS


@contextlib.contextmanager
def _collections_paused(pause: bool):
    # Serialising a large session makes millions of small lists; the garbage
    # collector's full passes over them hold the interpreter for up to 0.7 s
    # (measured), and the window's thread waits for every one of them while a
    # save runs beside it. Nothing here makes reference cycles: collect after.
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _store_cells(state) -> int:
    shapes = getattr(state, "weight_shapes", None)
    if shapes is None:
        return 0
    total = 0
    for h, d, k in shapes().values():
        total += h * d * k
    return total


class Document:
    """The session a window edits: ``studio`` plus its file, its example and the recovery store.

    ``recent_files`` is the list shown in File → Open Recent (newest first);
    ``on_recent_changed`` is called with the new list so the caller can keep it.
    """

    # Set by a window that can show trained models: ``open_trained(session, recovery_path, training)`` opens
    # recovered trained-model work (its model is found off the GUI thread) and discards the file once open.
    open_trained: Callable | None = None
    # Set by a window with a training lab: an object with ``settings() -> dict`` (what a save writes in
    # the file's "training" section) and ``apply_settings(values)`` (what opening a file with one does).
    lab = None

    def __init__(self, studio: Studio, recovery: RecoveryStore, *, preset: str | None = None,
                 recent_files: list[str] | None = None,
                 on_recent_changed: Callable[[list[str]], None] | None = None):
        self.studio = studio
        self.recovery = recovery
        self.path: Path | None = None
        self.preset_name = preset or ""
        self.preset_state: StudioState | None = studio.state if preset else None  # the example as loaded
        # A temporary file of a save is never offered as a session.
        self.recent_files: list[str] = [f for f in recent_files or [] if not is_temporary(f)][:MAX_RECENT]
        self._on_recent_changed = on_recent_changed
        self._autosave_warned = False  # one warning for autosaves that fail, not one every few seconds

    # -- what the window shows -----------------------------------------------------
    @property
    def is_modified(self) -> bool:
        """True when the model has changes that are not saved."""
        return self.studio.is_modified

    def title(self) -> str:
        """The window title: the file (or example, or model) name, a bullet when unsaved."""
        if self.path is not None:
            name = self.path.name
        else:
            name = self.preset_name or self.studio.state.name or "untitled"
        mark = " •" if self.is_modified else ""
        # "[*]" is where Qt puts its modified mark; the bullet is for titles Qt leaves alone.
        return f"{name}{mark}[*] — Attention Studio"

    def preset_edited(self) -> bool:
        """True when the model came from an example and has been changed beyond the selection."""
        return self.preset_state is not None and \
            not (self.studio.state.changed_fields(self.preset_state) <= SELECTION_FIELDS)

    # -- files ---------------------------------------------------------------------
    def new(self) -> None:
        """Start again from the default model."""
        self.studio.set_state(StudioState())
        self.studio.mark_saved()
        self.path = None
        self.preset_name, self.preset_state = "", None

    def load_preset(self, name: str) -> StudioState:
        """The example ``name``, remembered as where the model came from; ``SessionError`` if unknown.

        The caller applies it (``studio.set_state``), so that a refusal leaves everything as it was.
        """
        state = load_preset(name)
        self.preset_name, self.preset_state = name, state
        return state

    def open(self, path) -> Path:
        """Read ``path`` and make it the document; ``SessionError`` leaves everything unchanged.

        A temporary file of a save is refused; temporaries of killed saves beside ``path`` are removed.
        """
        path = Path(path)
        if not is_temporary(path):
            remove_stale_temporaries(path.parent)
        opened = read_session_file(path, trained=False)  # every field checked, the training section too
        self.studio.set_state(opened.state)
        self.studio.mark_saved()
        self.path = path
        self.preset_name, self.preset_state = "", None
        self.add_recent(path)
        self.apply_lab(opened.training)
        return path

    # -- the training lab's settings (they travel with the file, not with the model's state) -----
    def lab_settings(self) -> dict | None:
        """The training lab's settings a save writes now, or None without a lab."""
        return self.lab.settings() if self.lab is not None else None

    def apply_lab(self, training: dict | None) -> None:
        """Give the training lab the settings a file held (checked when it was read); None: it keeps its own."""
        if training is not None and self.lab is not None:
            self.lab.apply_settings(training)

    @staticmethod
    def session_path(path) -> Path:
        """``path`` with the session suffix added unless it already ends in .json."""
        path = Path(path)
        return path if path.name.endswith(".json") else path.with_name(path.name + SESSION_SUFFIX)

    def save(self, path=None) -> Path:
        """Save atomically to ``path`` (default: the current file); ``SessionError`` keeps the old file."""
        job = self.save_job(path)
        job.run()
        self.finish_save(job)
        return job.path

    def save_job(self, path=None) -> SaveJob:
        """What saving the current state to ``path`` (default: the current file) writes; nothing is written yet.

        ``SessionError`` when there is no file to save to.
        """
        if path is None and self.path is None:
            raise SessionError("this session has no file yet; choose one")
        return SaveJob(self.studio.state, self.session_path(path if path is not None else self.path),
                       training=self.lab_settings())

    def finish_save(self, job: SaveJob) -> str | None:
        """Record a save that succeeded: the state it wrote is the saved one, its file the document's.

        Edits made while it was written stay unsaved (and autosaved). Returns a
        warning when the recovery file could not be removed, else None.
        """
        self.studio.mark_saved(job.state)
        self.path = job.path
        self.add_recent(job.path)
        return self.recovery.clear() if not self.is_modified else None

    def add_recent(self, path) -> list[str]:
        """Put ``path`` first in the recent files (once), keep at most ``MAX_RECENT``."""
        full = str(Path(path).resolve())
        self.recent_files = ([full] + [f for f in self.recent_files if f != full])[:MAX_RECENT]
        if self._on_recent_changed is not None:
            self._on_recent_changed(list(self.recent_files))
        return self.recent_files

    # -- autosave and recovery ------------------------------------------------------
    @staticmethod
    def needs_autosave(fields) -> bool:
        """A change of these fields is worth an autosave (moving the selection is not)."""
        return not frozenset(fields) <= SELECTION_FIELDS

    def autosave(self) -> str | None:
        """Write unsaved work to the recovery file, or remove it when all is saved.

        Returns a message when writing failed, else None.
        """
        job = self.autosave_job()
        if job is None:
            return None
        try:
            job.run()
        except (SessionError, OSError) as exc:
            return self.autosave_failed(exc)
        self.autosave_done()
        return None

    def autosave_job(self) -> SaveJob | None:
        """The write of unsaved work to the recovery file, or None (and the file removed) when all is saved."""
        if not self.is_modified:
            self.recovery.clear()
            return None
        return SaveJob(self.studio.state, self.recovery.path, autosave=True, recovery=self.recovery,
                       training=self.lab_settings())

    def autosave_failed(self, exc: BaseException) -> str | None:
        """The warning for an autosave that could not be written: once, not every few seconds."""
        if self._autosave_warned:
            return None
        self._autosave_warned = True
        return (f"Autosave failed: {exc}. Your work is not lost, but it cannot be recovered after a crash; "
                "save it to a file")

    def autosave_done(self) -> None:
        """An autosave succeeded: warn again if a later one fails."""
        self._autosave_warned = False

    def sweep_temporaries(self) -> list[Path]:
        """Remove temporary files of killed saves beside the recent files (at start); returns those removed."""
        removed = []
        for folder in dict.fromkeys(str(Path(f).parent) for f in self.recent_files):
            removed += remove_stale_temporaries(folder)
        return removed

    def recovery_offer(self) -> RecoveryOffer:
        """At start: sweep stale files and name the newest work a crashed studio left (if any)."""
        notes = self.recovery.sweep()
        self.sweep_temporaries()
        orphans = self.recovery.orphans()
        if not orphans:
            return RecoveryOffer(None, "", notes)
        path = orphans[0]
        try:
            when = time.strftime("%H:%M on %d %b", time.localtime(path.stat().st_mtime))
        except OSError:
            when = "an earlier run"
        return RecoveryOffer(path, when, notes)

    def restore(self, path) -> str | None:
        """Take the recovered work at ``path`` as the (unsaved) model; returns a message if it cannot be read.

        Unreadable work is never deleted: it is moved aside, and the message says where.
        """
        try:
            recovered = read_session_file(path)
        except SessionError as exc:
            return f"The recovered work cannot be read: {exc}. {self.recovery.discard(path) or ''}".strip()
        state = recovered.state
        if isinstance(state, TrainedSession):
            if self.open_trained is None:
                return "The recovered work uses a trained model, which cannot be opened here; it is kept."
            self.open_trained(state, path, recovered.training)
            return None
        self.studio.set_state(state)  # unsaved: the title shows it
        self.path = None
        self.recovery.discard(path)
        self.apply_lab(recovered.training)
        return None

    def discard_recovery(self, path) -> str | None:
        """Drop the recovered work at ``path``; returns a note when it had to be moved aside."""
        return self.recovery.discard(path)

    def close(self) -> None:
        """A clean close: nothing is left to recover."""
        self.recovery.clear()
