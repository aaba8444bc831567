"""Where the shipped resources (presets, icons) live, installed or not."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def resources_dir() -> Path:
    """The ``resources`` folder: inside the installed package, or at the top of a checkout."""
    for candidate in (_PACKAGE / "resources", _PACKAGE.parent / "resources"):
        if (candidate / "presets").is_dir():
            return candidate
    raise FileNotFoundError("the resources folder (presets, icons) is missing from this installation")


def presets_dir() -> Path:
    """The folder holding the preset files (``NAME.attn.json``)."""
    return resources_dir() / "presets"
