"""Figures that move: write a sequence of page figures as GIF, MP4, WebM or APNG. No Qt.

The frames are RGB images (``H×W×3`` ``uint8`` NumPy arrays, all the same size) that the
caller draws: the page figure at each value of a sweep, a training run's panel every k steps,
a lecture's pages. This module only encodes them, the way slides and browsers play them:

- GIF: one palette for the whole animation (built from every frame's colours), so a colour
  never flickers from frame to frame; looping unless ``loop=False``.
- MP4: H.264 in yuv420p with even sides (an odd side is padded by one row or column of the
  edge's colour, never stretched), which PowerPoint, Keynote, Google Slides and browsers play.
- WebM: VP9 in yuv420p, same sides.
- APNG (``.png``): lossless RGB frames, looping unless ``loop=False``.

The checks live in :mod:`.checks`, the encoders in :mod:`.encoders`: imageio-ffmpeg's own bundled ffmpeg binary (no system ffmpeg needed) for
MP4 and WebM, and Pillow for GIF and for each APNG frame's compressed data.

Every file is written atomically: into a temporary file beside the target (named as
:mod:`attn_studio.safe_files` names them, so a killed export's leftover is cleared at the
next start), then renamed over it. An exception, or ``cancelled()`` returning True, removes
the temporary file and leaves nothing (and any older file of that name untouched).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from ..safe_files import usual_mode
from .checks import (ANIMATION_SUFFIXES, FRAME_FORMATS, MAX_FPS, MAX_FRAMES, MAX_GIF_FPS, MAX_HOLD,
                     AnimationError, _check_folder, check_fps, check_frame_count, check_hold, check_target)
from .encoders import _ENCODERS, _png_bytes

# The checks and limits are the writer's too: callers import them from here.
__all__ = ["ANIMATION_SUFFIXES", "FRAME_FORMATS", "MAX_FPS", "MAX_FRAMES", "MAX_GIF_FPS", "MAX_HOLD", "AnimationError",
           "check_fps", "check_frame_count", "check_hold", "check_target", "write_animation", "write_frames"]


def write_animation(frames: Iterable[np.ndarray], path, *, fps: float, hold: float = 0.0,
                    loop: bool = True, total: int | None = None,
                    progress: Callable[[int, int | None], None] | None = None,
                    cancelled: Callable[[], bool] | None = None) -> int:
    """Write ``frames`` as an animation at ``path``; returns how many frames were written.

    ``frames`` is any iterable of ``H×W×3`` ``uint8`` arrays of one size (read once, lazily:
    a generator that draws each figure on demand is the usual caller). The suffix of
    ``path`` picks the format (``.gif``, ``.mp4``, ``.webm``, ``.png`` for APNG). ``fps`` is
    the frame rate; the last frame stays on ``hold`` seconds more (GIF and APNG lengthen its
    delay, MP4 and WebM repeat it). ``loop`` makes a GIF or APNG play forever (MP4 and WebM
    loop in the player). ``total``, when known, is checked against :data:`MAX_FRAMES` before
    any frame is drawn and passed to ``progress(i, total)``, called after each frame ``i``
    (1-based). ``cancelled()`` is asked before each frame; when it returns True the export
    stops, nothing is written and 0 is returned.

    Bad input (a suffix, folder, frame rate, hold or frame count refused; frames of different
    sizes or not RGB ``uint8``; no frames at all) raises :class:`AnimationError` and writes
    nothing; so does any other exception, which propagates after the temporary file is gone.
    """
    path = check_target(path)
    fps = check_fps(fps)
    hold = check_hold(hold)
    if total is not None:
        check_frame_count(int(total))
    encoder = _ENCODERS[path.suffix.lower()]
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        stream = _checked_frames(frames, total, progress, cancelled)
        count = encoder(stream, tmp, fps=fps, hold=hold, loop=loop)
        if stream.cancelled:
            raise _Cancelled
        _give_usual_mode(tmp, path)
        _sync(tmp)
        os.replace(tmp, path)
        return count
    except _Cancelled:
        _remove(tmp)
        return 0
    except BaseException:
        _remove(tmp)
        raise


def write_frames(frames: Iterable, folder, fmt: str, *, total: int | None = None,
                 progress: Callable[[int, int | None], None] | None = None,
                 cancelled: Callable[[], bool] | None = None, stem: str = "frame") -> list[Path]:
    """Write each frame as its own numbered file in ``folder``; returns the files written.

    ``fmt`` is ``"png"`` (each frame an ``H×W×3`` ``uint8`` array) or ``"svg"`` (each frame
    the SVG document's text or bytes, drawn by the caller so that text stays text). The files
    are ``frame_0001.png`` … (``stem`` names them), numbered from 1 with as many digits as the
    count needs (at least 4). They are first written into a temporary folder beside
    ``folder`` and moved in only when every frame is done, so a failure or ``cancelled()``
    leaves ``folder`` as it was (an empty list is returned when cancelled).
    """
    fmt = str(fmt).lower().lstrip(".")
    if fmt not in FRAME_FORMATS:
        raise AnimationError(f"frames are written as {' or '.join(FRAME_FORMATS)}, not {fmt!r}")
    if not stem or any(c in stem for c in "/\\\0") or stem.startswith("."):
        raise AnimationError(f"{stem!r} cannot name frame files")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise AnimationError(f"{folder} exists and is not a folder")
    parent = folder.parent if str(folder.parent) else Path(".")
    _check_folder(parent, folder)
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        raise AnimationError(f"cannot write into {folder}: it is not writable")
    if total is not None:
        check_frame_count(int(total))
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name or 'frames'}.", suffix=".tmp", dir=parent))
    try:
        stream = _checked_frames(frames, total, progress, cancelled, svg=(fmt == "svg"))
        written = []
        for index, frame in enumerate(stream, start=1):
            name = staging / f"{stem}_{index:04d}.{fmt}"
            if fmt == "svg":
                name.write_bytes(frame.encode("utf-8") if isinstance(frame, str) else bytes(frame))
            else:
                _png_bytes(frame, name)
            written.append(name.name)
        if stream.cancelled:
            raise _Cancelled
        if len(written) >= 10_000:  # keep the numbers sortable as text
            raise AnimationError(f"at most {MAX_FRAMES} frames")
        if not folder.exists():
            os.replace(staging, folder)
        else:
            for name in written:
                os.replace(staging / name, folder / name)
            shutil.rmtree(staging, ignore_errors=True)
            # Frames of a longer earlier export of the same name would read as this one's: gone.
            numbered = re.compile(rf"^{re.escape(stem)}_\d{{4,}}\.{fmt}$")
            for old in folder.iterdir():
                if numbered.match(old.name) and old.name not in written and old.is_file():
                    old.unlink()
        return [folder / name for name in written]
    except _Cancelled:
        shutil.rmtree(staging, ignore_errors=True)
        return []
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


# ---------------------------------------------------------------------------------------
# Frames in, checked


class _Cancelled(Exception):
    pass


class _checked_frames:
    """The caller's frames, each checked (shape, dtype, one size), counted and reported."""

    def __init__(self, frames, total, progress, cancelled, svg=False):
        self._frames = iter(frames)
        self._total = total
        self._progress = progress
        self._cancelled = cancelled
        self._svg = svg
        self.size = None
        self.count = 0
        self.cancelled = False

    def __iter__(self):
        return self

    def __next__(self):
        if self._cancelled is not None and self._cancelled():
            self.cancelled = True
            raise StopIteration
        frame = next(self._frames)
        if self.count >= MAX_FRAMES:
            raise AnimationError(f"an animation has at most {MAX_FRAMES} frames")
        if self._svg:
            if not isinstance(frame, (str, bytes, bytearray)):
                raise AnimationError(f"an SVG frame is the document's text, not {type(frame).__name__}")
        else:
            frame = np.asarray(frame)
            if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
                raise AnimationError(f"a frame is an H×W×3 uint8 image, not {frame.dtype} of shape {frame.shape}")
            if frame.shape[0] < 1 or frame.shape[1] < 1:
                raise AnimationError("a frame is at least one pixel")
            if self.size is None:
                self.size = frame.shape[:2]
            elif frame.shape[:2] != self.size:
                raise AnimationError(f"frame {self.count + 1} is {frame.shape[1]}×{frame.shape[0]}, the first was "
                                     f"{self.size[1]}×{self.size[0]}: every frame has one size")
            frame = np.ascontiguousarray(frame)
        self.count += 1
        if self._progress is not None:
            self._progress(self.count, self._total)
        return frame


def _give_usual_mode(tmp, path: Path) -> None:
    # mkstemp makes a private file (0600); an exported animation is an ordinary file.
    os.chmod(tmp, usual_mode(path))


def _sync(tmp) -> None:
    # On disk before the rename, so that a crash never leaves a renamed but empty file.
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())


def _remove(tmp) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass
