"""The user's saved settings (an INI file): every value read back is checked.

A settings file may hold anything: a value written by an older version, a
hand edit, a truncated file. Each value read here is validated and clamped,
and a value that makes no sense falls back to its default with a note in the
log, so the app starts whatever the file holds.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from PySide6 import QtCore

from ..recovery import DATA_DIR_ENV
from . import presentation

log = logging.getLogger(__name__)

DEFAULT_THEME = "light"
DEFAULT_ZOOM = 1.0
DEFAULT_COLORMAP = "viridis"
MAX_RECENT = 8


def data_dir() -> Path:
    """Where settings and recovery files live (``ATTN_STUDIO_DATA_DIR`` overrides it)."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    location = QtCore.QStandardPaths.writableLocation(QtCore.QStandardPaths.AppDataLocation)
    return Path(location or Path.home() / ".attn-studio")


def settings() -> QtCore.QSettings:
    """The app's settings, kept as an INI file in :func:`data_dir`."""
    return QtCore.QSettings(str(data_dir() / "settings.ini"), QtCore.QSettings.IniFormat)


@dataclass
class Preferences:
    """What the window keeps between runs, already validated (the defaults when nothing is stored)."""

    theme: str = DEFAULT_THEME
    zoom: float = DEFAULT_ZOOM
    colormap: str = DEFAULT_COLORMAP
    geometry: QtCore.QByteArray | None = None
    window_state: QtCore.QByteArray | None = None
    recent_files: list[str] = field(default_factory=list)
    digits: int | None = None  # the precision setting (None: each view's own)
    stage_digits: int = 2  # the stage's precision (View → Precision on the stage), apart from the window's


def _fallback(key: str, value, default):
    log.warning("settings: ignoring stored %s=%r; using %r", key, value, default)
    return default


def _choice(store, key: str, choices, default: str) -> str:
    value = store.value(key, default)
    return value if isinstance(value, str) and value in choices else _fallback(key, value, default)


def _zoom(store) -> float:
    value = store.value("zoom", DEFAULT_ZOOM)
    try:
        zoom = float(value)
    except (TypeError, ValueError):
        return _fallback("zoom", value, DEFAULT_ZOOM)
    if not math.isfinite(zoom):
        return _fallback("zoom", value, DEFAULT_ZOOM)
    lo, hi = presentation.ZOOM_STEPS[0], presentation.ZOOM_STEPS[-1]
    if not lo <= zoom <= hi:
        log.warning("settings: stored zoom %r is outside %g-%g; clamped", zoom, lo, hi)
    return min(max(zoom, lo), hi)


def _digits(store) -> int | None:
    value = store.value("digits")
    if value is None:
        return None
    try:
        digits = int(value)
    except (TypeError, ValueError):
        return _fallback("digits", value, None)
    return digits if digits in (2, 4) else _fallback("digits", value, None)


def _stage_digits(store) -> int:
    value = store.value("stageDigits")
    if value is None:
        return 2
    try:
        digits = int(value)
    except (TypeError, ValueError):
        return _fallback("stageDigits", value, 2)
    return digits if digits in (2, 4) else _fallback("stageDigits", value, 2)


def _layout(store, key: str) -> QtCore.QByteArray | None:
    value = store.value(key)
    if value is None:
        return None
    if isinstance(value, QtCore.QByteArray) and not value.isEmpty():
        return value
    return _fallback(key, value, None)


def read_recent(store=None) -> list[str]:
    """The recent files list as stored, or an empty list when what is stored is not a list of paths."""
    store = store or settings()
    value = store.value("recentFiles", [])
    if isinstance(value, str):  # QSettings gives a one-item list back as a plain string
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        return _fallback("recentFiles", value, [])
    # Only full paths were ever stored: anything else ("7", a stray word) is not a file to offer.
    kept = [v for v in value if v and os.path.isabs(v)]
    if len(kept) != len([v for v in value if v]):
        log.warning("settings: ignoring stored recentFiles entries that are not full paths: %r",
                    [v for v in value if v and not os.path.isabs(v)])
    return kept[:MAX_RECENT]


def write_recent(files: list[str], store=None) -> None:
    """Keep the recent files list (newest first) for the next run."""
    store = store or settings()
    store.setValue("recentFiles", list(files)[:MAX_RECENT])
    store.sync()


def load(store=None) -> Preferences:
    """Read every stored preference, each one validated (see the module's docstring)."""
    store = store or settings()
    return Preferences(
        theme=_choice(store, "theme", presentation.THEMES, DEFAULT_THEME),
        zoom=_zoom(store),
        colormap=_choice(store, "colormap", presentation.WEIGHT_COLORMAPS, DEFAULT_COLORMAP),
        geometry=_layout(store, "geometry"),
        window_state=_layout(store, "windowState"),
        recent_files=read_recent(store),
        digits=_digits(store),
        stage_digits=_stage_digits(store),
    )


def save(window, store=None) -> None:
    """Keep ``window``'s geometry and panel layout, and the theme, zoom, colour map and precision in use."""
    store = store or settings()
    store.setValue("geometry", window.saveGeometry())
    store.setValue("windowState", window.saveState())
    store.setValue("theme", presentation.STYLE.theme.name)
    store.setValue("zoom", presentation.STYLE.zoom)
    store.setValue("colormap", presentation.STYLE.weights_cmap)
    if window.lecture.digits is not None:
        store.setValue("digits", window.lecture.digits)
    present = getattr(window, "present", None)
    if present is not None:
        store.setValue("stageDigits", present.figures.digits_setting)
    store.sync()
