"""Session files and presets: one versioned JSON format (``.attn.json``). No Qt.

Reading never executes anything from a file (plain JSON, no pickle, no eval)
and checks every field before a state is built; writing is atomic (a
temporary file in the same folder, then a rename), so a failure mid-write
leaves the previous file intact.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .resources import presets_dir
from .state import StateError, StudioState

SESSION_SUFFIX = ".attn.json"
# A session of the largest model the studio shows is a few megabytes; anything
# far larger is not one of ours and is refused before it is parsed.
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_JSON_DEPTH = 16


class SessionError(ValueError):
    """A session or preset file that cannot be read or written, with the reason."""


def _depth_ok(text: str) -> bool:
    # Cheap pre-check of bracket nesting, so that a hostile file cannot make the
    # JSON parser recurse thousands of levels deep.
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def state_from_json(text: str) -> StudioState:
    """Parse and check a session's JSON text; raises ``SessionError`` with the reason."""
    if len(text) > MAX_FILE_BYTES:
        raise SessionError(f"the file is larger than {MAX_FILE_BYTES // 2**20} MB; it is not an Attention Studio session")
    if not _depth_ok(text):
        raise SessionError(f"the file nests deeper than {MAX_JSON_DEPTH} levels; it is not an Attention Studio session")
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise SessionError(f"the file is not valid JSON ({exc})") from None
    try:
        return StudioState.from_dict(data)
    except StateError as exc:
        raise SessionError(str(exc)) from None


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not allowed in a session file")


def read_session(path) -> StudioState:
    """Read a ``.attn.json`` session (or preset) file into a checked state."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SessionError(f"{path.name} is {size / 2**20:.0f} MB; a session file is never that large")
        raw = path.read_bytes()
    except SessionError:
        raise
    except IsADirectoryError:
        raise SessionError(f"{path} is a folder, not a session file") from None
    except FileNotFoundError:
        raise SessionError(f"{path} does not exist") from None
    except OSError as exc:
        raise SessionError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark from some editors is fine
    except UnicodeDecodeError:
        raise SessionError(f"{path.name} is not a text (UTF-8) file") from None
    return state_from_json(text)


def state_to_json(state: StudioState) -> str:
    """The JSON text of a session file for ``state``."""
    return json.dumps(state.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def write_atomic(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file beside it, then a rename."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise SessionError(f"the folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        # mkstemp makes the file private (0600); keep the permissions the file
        # had, or give a new one the usual mode for the user's umask.
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_session(path, state: StudioState) -> None:
    """Save ``state`` to ``path`` atomically; raises ``SessionError`` on failure."""
    try:
        write_atomic(path, state_to_json(state).encode("utf-8"))
    except SessionError:
        raise
    except OSError as exc:
        raise SessionError(f"cannot save {path}: {exc.strerror or exc}") from None


def preset_names() -> list[str]:
    """Names of the shipped presets, in teaching order where known."""
    order = ["journey", "bank", "money-bank-2d", "animal"]
    found = sorted(p.name[: -len(SESSION_SUFFIX)] for p in presets_dir().glob(f"*{SESSION_SUFFIX}"))
    return [n for n in order if n in found] + [n for n in found if n not in order]


def load_preset(name: str) -> StudioState:
    """The state of preset ``name``; raises ``SessionError`` if there is no such preset."""
    names = preset_names()
    if name not in names:
        raise SessionError(f"there is no preset {name!r}; choose one of {', '.join(names)}")
    return read_session(presets_dir() / f"{name}{SESSION_SUFFIX}")


# -- autosave and recovery -----------------------------------------------------
DATA_DIR_ENV = "ATTN_STUDIO_DATA_DIR"
_RECOVERY_PREFIX = "recovery-"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists but is not ours, or we cannot tell: leave it alone
    return True


class RecoveryStore:
    """Autosaved copies of unsaved work, one file per running studio, in ``folder``.

    A studio saves its state here every few seconds while it has unsaved
    changes and removes the file when it closes normally. A file left behind by
    a process that no longer runs is work lost in a crash: the next start
    offers to restore it.
    """

    def __init__(self, folder, pid: int | None = None):
        self.folder = Path(folder)
        self.pid = os.getpid() if pid is None else pid

    @property
    def path(self) -> Path:
        """This process's recovery file."""
        return self.folder / f"{_RECOVERY_PREFIX}{self.pid}{SESSION_SUFFIX}"

    def save(self, state: StudioState) -> None:
        """Write ``state`` to this process's recovery file (atomically)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_session(self.path, state)

    def clear(self) -> None:
        """Remove this process's recovery file (a normal close, or work saved)."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def orphans(self) -> list[Path]:
        """Recovery files of studios that are no longer running, newest first."""
        if not self.folder.is_dir():
            return []
        found = []
        for p in self.folder.glob(f"{_RECOVERY_PREFIX}*{SESSION_SUFFIX}"):
            pid_text = p.name[len(_RECOVERY_PREFIX): -len(SESSION_SUFFIX)]
            if not pid_text.isdigit() or int(pid_text) == self.pid:
                continue
            if not _pid_alive(int(pid_text)):
                found.append(p)
        return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)

    def discard(self, path) -> None:
        """Delete a recovery file the person chose not to restore."""
        try:
            Path(path).unlink()
        except FileNotFoundError:
            pass
