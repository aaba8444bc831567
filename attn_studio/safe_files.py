"""Files on disk, safely: a file read with a size bound, written atomically, and the
temporary files a killed save leaves behind. No Qt.

Only regular files are read, never more than a limit, and opening never blocks. Writing
goes to a temporary file beside the target and is renamed over it, so a failure mid-write
leaves the previous file intact; :func:`remove_stale_temporaries` clears what a killed
save left. Session files, presets and exported matrices all go through here.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time
from pathlib import Path

from .limits import MAX_SESSION_BYTES

_READ_CHUNK = 1 << 20
# Temporary files older than this process are left from a save that was killed.
PROCESS_START = time.time()


class SessionError(ValueError):
    """A session or preset file that cannot be read or written, with the reason."""


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a pipe (FIFO)"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def read_bytes_bounded(path, limit: int = MAX_SESSION_BYTES) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them, or ``SessionError``.

    Only regular files are read (a symbolic link is followed to what it names):
    a folder, a pipe, a device such as ``/dev/zero`` or a socket is refused
    before anything is read, and so is a file larger than ``limit``, measured
    on the opened file itself. Opening never blocks, even on a pipe.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise SessionError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise SessionError(f"{path} is a folder, not a session file") from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a pipe or socket with nobody at the other end
            raise SessionError(f"{path} is not a regular file; only session files can be opened") from None
        raise SessionError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
            raise SessionError(f"{path} is {kind}, not a session file")
        if info.st_size > limit:
            raise SessionError(f"{path.name} is {info.st_size / 2**20:.0f} MB; a session file is at most "
                               f"{limit / 2**20:.0f} MB")
        chunks, total = [], 0
        while True:  # the file may grow while it is read: never read past the limit
            chunk = os.read(fd, min(_READ_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise SessionError(f"{path.name} is larger than {limit / 2**20:.0f} MB; it is not a session file")
        return b"".join(chunks)
    except SessionError:
        raise
    except OSError as exc:
        raise SessionError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


# Temporary files of atomic saves: ".NAME.<random>.tmp" beside NAME.
_TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]{6,}\.tmp$")


def is_temporary(path) -> bool:
    """True for the temporary file of an atomic save (never a session to offer or open)."""
    return bool(_TEMP_NAME.match(Path(path).name))


def temporary_target(path) -> str:
    """The name of the file a temporary file of :func:`write_atomic` was going to replace."""
    name = Path(path).name
    return name[1:].rsplit(".", 2)[0] if is_temporary(name) else name


def remove_stale_temporaries(folder, older_than: float | None = None) -> list[Path]:
    """Remove temporary files of saves that were killed mid-write; returns those removed.

    A temporary file older than ``older_than`` (a time stamp; by default the
    start of this process) cannot belong to a save still running here, and one
    being written by another running studio is newer than that. Only regular
    files named as :func:`write_atomic` names them are touched.
    """
    cutoff = PROCESS_START if older_than is None else older_than
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not is_temporary(entry.name):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue  # gone already, or not ours to remove
    return removed


def write_atomic(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file beside it, then a rename.

    The temporary file is named ``.NAME.<random>.tmp`` in the same folder (see
    :func:`is_temporary`), so that one left by a killed save is recognised and
    removed by :func:`remove_stale_temporaries` at the next start.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise SessionError(f"the folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        # mkstemp makes the file private (0600): the permissions the file had, or the usual ones.
        os.chmod(tmp, usual_mode(path))
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


def usual_mode(path) -> int:
    """The permissions a file written at ``path`` gets: the ones the file there has, or for a new file
    the usual mode for the user's umask (a temporary file from mkstemp is private, 0600)."""
    try:
        return Path(path).stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
