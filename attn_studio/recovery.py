"""Autosave and recovery: a copy of unsaved work per running studio, offered after a crash. No Qt.

Split from :mod:`.session` (which reads and writes the files): this module decides where the
copies live, which are a crashed process's work and which a running studio's (a lock held while
it runs), and moves what cannot be read into a ``quarantine`` folder rather than deleting it.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .safe_files import SessionError, remove_stale_temporaries
from . import session
from .session import SESSION_SUFFIX, read_any_session
from .state import StudioState

if TYPE_CHECKING:
    from .trained import TrainedState

_log = logging.getLogger(__name__)

DATA_DIR_ENV = "ATTN_STUDIO_DATA_DIR"
_RECOVERY_PREFIX = "recovery-"
_LOCK_SUFFIX = ".lock"
QUARANTINE = "quarantine"
# recovery-<pid>[-<id>].attn.json: the id tells apart two runs with the same
# process id (in a container the studio is often process 1 every time).
_RECOVERY_NAME = re.compile(r"^recovery-(\d+)(?:-([0-9a-f]+))?\.attn\.json$")


def _lock_held(lock_path: Path) -> bool:
    """True when a running studio holds the lock at ``lock_path`` (or when we cannot tell)."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return False
    except OSError:
        return True  # not ours to judge: leave the work alone
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except (ImportError, OSError):
        return True
    finally:
        os.close(fd)  # closing releases a lock this probe took
    return False


_STUDIO_COMMAND = (b"attn_studio", b"attn-studio")


def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), from Linux's /proc; None when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        with open("/proc/stat", "rb") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith(b"btime "))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _writer_running(pid: int, written_at: float) -> bool:
    """True when the studio that wrote a recovery file at ``written_at`` may still be running as ``pid``.

    The lock says so first (see :class:`RecoveryStore`); this is the second opinion, for file
    systems where a lock is not kept and for a lock file removed by hand. A process id is
    reused, and in a container process 1 is always alive, so a live ``pid`` counts only when
    it is a studio that started before the file was written: this process (another run's file
    under a reused id) never does, nor a process of another program, nor one started later.
    Where /proc cannot tell (not Linux), only the lock decides.
    """
    if pid == os.getpid() or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, someone else's
    except (OSError, OverflowError):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            command = f.read()
    except OSError:
        return False
    if not any(name in command for name in _STUDIO_COMMAND):
        return False
    started = _process_start(pid)
    return started is None or started <= written_at + 1.0


class RecoveryStore:
    """Autosaved copies of unsaved work, one file per running studio, in ``folder``.

    A studio saves its state here every few seconds while it has unsaved
    changes and removes the file when it closes normally. While it runs it
    holds a lock (``fcntl.flock`` on a ``.lock`` file beside its recovery file);
    the lock goes away with the process however it ends. A recovery file whose
    lock nobody holds, written by a process that is gone, is work left by a crash:
    the next start offers it. The process id alone never decides (process 1 is
    always alive in a container): see :func:`_writer_running`.

    ``enabled=False`` is a store of a process that has no work to keep (a command that
    writes a figure): it writes nothing, offers nothing and leaves the folder as it is.

    Nothing that cannot be read is deleted: :meth:`discard` and :meth:`sweep`
    move such entries into the ``quarantine`` folder beside the recovery files
    and say where. Clearing never raises: a folder that cannot be written gives
    a warning message instead.

    ``pid`` names the file (tests pass another process's id to play a crashed
    studio); only a store of this process (``pid`` None) takes the lock.
    """

    SUFFIX = SESSION_SUFFIX  # what the files hold (a lecture's store keeps lectures: scenes.LectureRecovery)
    NAME = _RECOVERY_NAME
    READ, REFUSED = staticmethod(read_any_session), SessionError

    def __init__(self, folder, pid: int | None = None, *, enabled: bool = True):
        self.folder = Path(folder)
        self.enabled = enabled
        self._own = pid is None
        self.pid = os.getpid() if pid is None else pid
        self.id = secrets.token_hex(4)
        self._lock_fd: int | None = None

    @property
    def path(self) -> Path:
        """This studio's recovery file."""
        return self.folder / f"{_RECOVERY_PREFIX}{self.pid}-{self.id}{self.SUFFIX}"

    @property
    def lock_path(self) -> Path:
        """The lock this studio holds while it runs (once it has autosaved)."""
        return self.path.with_name(self.path.name[: -len(self.SUFFIX)] + _LOCK_SUFFIX)

    def _lock(self) -> None:
        if not self._own or self._lock_fd is not None:
            return
        import fcntl

        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is None:
            return
        try:
            os.unlink(self.lock_path)
        except OSError:
            pass
        os.close(self._lock_fd)  # releases the lock
        self._lock_fd = None

    def save(self, state: StudioState | TrainedState, training: dict | None = None) -> None:
        """Write ``state`` (toy or trained, with the training lab's settings when given) to this
        studio's recovery file (atomically); ``SessionError``/``OSError`` on failure. A store that is
        not ``enabled`` writes nothing."""
        if not self.enabled:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock()
        session.write_session(self.path, state, training)  # through the module: one place writes every session file

    def clear(self) -> str | None:
        """Remove this studio's recovery file (a normal close, or work saved).

        Never raises: returns a warning when the file cannot be removed (a
        read-only folder, say), else None.
        """
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            message = f"the autosaved copy {self.path} could not be removed ({exc.strerror or exc}); it is harmless"
            _log.warning(message)
            return message
        finally:
            self._unlock()
        return None

    def _entries(self):
        try:
            return list(os.scandir(self.folder))
        except OSError:
            return []

    def orphans(self) -> list[Path]:
        """Recovery files of studios that are no longer running, newest first.

        Only regular files are offered; a folder or a symbolic link with a
        recovery file's name is left to :meth:`sweep`, never opened. A store that is
        not ``enabled`` offers none.
        """
        if not self.enabled:
            return []
        found = []
        for entry in self._entries():
            if not self.NAME.match(entry.name) or entry.name == self.path.name:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            path = Path(entry.path)
            if _lock_held(path.with_name(path.name[: -len(self.SUFFIX)] + _LOCK_SUFFIX)):
                continue
            if _writer_running(int(self.NAME.match(entry.name).group(1)), info.st_mtime):
                continue
            found.append((info.st_mtime, path))
        return [p for _, p in sorted(found, key=lambda item: item[0], reverse=True)]

    def quarantine(self, path) -> str:
        """Move ``path`` into the ``quarantine`` folder (never delete it); returns where it went."""
        path = Path(path)
        target_dir = self.folder / QUARANTINE
        target = target_dir / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}-{path.name}"
        try:
            target_dir.mkdir(parents=True, exist_ok=True)
            os.rename(path, target)
        except OSError as exc:
            message = f"{path.name} cannot be read and could not be moved aside ({exc.strerror or exc}); it was left where it is"
            _log.warning(message)
            return message
        return f"{path.name} cannot be read; it was moved to {target}"

    def discard(self, path) -> str | None:
        """Remove a recovery file the person chose not to restore (or has restored).

        A file that cannot be read (garbage, a newer format, a folder, a link)
        is never deleted: it is moved to the quarantine folder and the returned
        message says where. Returns None when the file was simply removed.
        """
        path = Path(path)
        try:
            info = path.lstat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"{path.name} could not be examined ({exc.strerror or exc}); it was left where it is"
        if stat.S_ISREG(info.st_mode):
            if not self.readable(path):
                return self.quarantine(path)
            try:
                path.unlink()
            except OSError as exc:
                message = f"{path.name} could not be removed ({exc.strerror or exc})"
                _log.warning(message)
                return message
            return None
        return self.quarantine(path)

    def readable(self, path) -> bool:
        """True when ``path`` holds work this store can give back (``READ`` checks every field and
        raises ``REFUSED`` otherwise)."""
        try:
            self.READ(path)
        except self.REFUSED:
            return False
        return True

    def sweep(self) -> list[str]:
        """Tidy the folder at start: messages for what was moved aside.

        Removes temporary files of killed saves and lock files nobody holds,
        and moves folders and links that carry a recovery file's name into
        the quarantine folder. Never raises. A store that is not ``enabled`` leaves the folder alone.
        """
        if not self.enabled:
            return []
        messages = []
        remove_stale_temporaries(self.folder)
        for entry in self._entries():
            name = entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if self.NAME.match(name) and not stat.S_ISREG(info.st_mode):
                messages.append(self.quarantine(entry.path))
            elif (name.startswith(_RECOVERY_PREFIX) and name.endswith(_LOCK_SUFFIX) and stat.S_ISREG(info.st_mode)
                  and name != self.lock_path.name and not _lock_held(Path(entry.path))):
                stem = name[: -len(_LOCK_SUFFIX)]
                if not (self.folder / f"{stem}{self.SUFFIX}").exists():
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        pass
        return messages
