"""What an animation may be: its limits, its one-line error and the checks of a request. No Qt."""

from __future__ import annotations

import math
import os
from pathlib import Path

#: The most frames one animation may have (the figure frames; a held last frame is extra).
MAX_FRAMES = 1000
#: The formats :func:`write_animation` writes, by the target's suffix.
ANIMATION_SUFFIXES = (".gif", ".mp4", ".webm", ".png")
#: The formats :func:`write_frames` writes, one file per frame.
FRAME_FORMATS = ("png", "svg")
#: Largest frame rate and hold accepted: beyond them nothing plays them as asked.
MAX_FPS = 120.0
MAX_HOLD = 60.0
#: Browsers show a GIF frame for at least 2/100 s: a faster GIF would play slower than asked.
MAX_GIF_FPS = 50.0


class AnimationError(ValueError):
    """An animation that cannot be written, with the reason in one line."""


def check_fps(fps) -> float:
    """``fps`` as a float if it is a usable frame rate (0 < fps ≤ 120), else ``AnimationError``."""
    try:
        value = float(fps)
    except (TypeError, ValueError):
        raise AnimationError(f"the frame rate must be a number, not {fps!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise AnimationError(f"the frame rate must be above 0, not {fps!r}")
    if value > MAX_FPS:
        raise AnimationError(f"the frame rate is at most {MAX_FPS:g} frames a second, not {value:g}")
    return value


def check_hold(hold) -> float:
    """``hold`` (seconds the last frame stays) as a float in 0 … 60, else ``AnimationError``."""
    try:
        value = float(hold)
    except (TypeError, ValueError):
        raise AnimationError(f"the hold must be a number of seconds, not {hold!r}") from None
    if not math.isfinite(value) or value < 0:
        raise AnimationError(f"the hold must be 0 seconds or more, not {hold!r}")
    if value > MAX_HOLD:
        raise AnimationError(f"the hold is at most {MAX_HOLD:g} seconds, not {value:g}")
    return value


def check_frame_count(count: int) -> int:
    """``count`` if it is between 1 and :data:`MAX_FRAMES`, else ``AnimationError``."""
    if count < 1:
        raise AnimationError("an animation needs at least one frame")
    if count > MAX_FRAMES:
        raise AnimationError(f"an animation has at most {MAX_FRAMES} frames, not {count}")
    return count


def check_target(path) -> Path:
    """The target of :func:`write_animation` if it can be written, else ``AnimationError``.

    Its suffix must be one of :data:`ANIMATION_SUFFIXES`, its folder must exist and be
    writable, and the path itself must not be a folder or anything but a regular file.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in ANIMATION_SUFFIXES:
        raise AnimationError(f"{path.name or path}: an animation is written as "
                             f"{', '.join(ANIMATION_SUFFIXES)}, not {suffix or 'a name without a suffix'}")
    _check_folder(path.parent if str(path.parent) else Path("."), path)
    if path.exists() and not path.is_file():
        raise AnimationError(f"{path} exists and is not a file")
    return path


def _check_folder(folder: Path, shown: Path) -> None:
    if not folder.is_dir():
        raise AnimationError(f"cannot write {shown}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise AnimationError(f"cannot write {shown}: the folder {folder} is not writable")
