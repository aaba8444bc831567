"""Checking the training lab's settings: the optional ``training`` section of a session file, and
what the window remembers between runs.

The section is a table ``{"panel": the panel shown, "scaling": {...}, "seq2seq": {...},
"induction": {...}}``; each panel's table holds ``seed``, ``lr`` (Adam's learning rate) and
``speed`` (steps per second while playing, 0 = as fast as it goes), and "scaling" also ``d_k``.
Every key is optional (a missing one keeps what the lab has), every key present is checked, and an
unknown key is refused, as everywhere else in a session file.

It lives here, below the session files and the training lab alike, so that opening a session
checks the section before anything changes, and the lab's panels check what they are given with
the very same rules (`attn_studio.training.settings` puts the lab's defaults beside them).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

from ..limits import StateError

__all__ = ["LabSettingsError", "LAB_PANELS", "SPEEDS", "DEFAULT_SPEED", "DEFAULT_SPEEDS", "MAX_LAB_SEED", "D_K_CHOICES",
           "DEFAULT_D_K", "PANEL_FIELDS", "check_lab_settings", "check_lab_panel", "merge_lab_settings"]

# The panels, in the order the lab shows them.
LAB_PANELS = ("scaling", "seq2seq", "induction")
# Steps per second a panel offers; 0 = as fast as the machine goes.
SPEEDS = (1, 2, 5, 10, 20, 50, 100, 0)
DEFAULT_SPEED = 20
# Each panel's speed until one is chosen. "Why two layers" plays faster: its head forms around
# step 1,000, which at 50 steps a second is within about half a minute of pressing Play.
DEFAULT_SPEEDS = {"scaling": DEFAULT_SPEED, "seq2seq": DEFAULT_SPEED, "induction": 50}
MAX_LAB_SEED = 999_999
# The d_k the "Why √d_k" panel offers (the lecture's 4 ... 256).
D_K_CHOICES = (4, 8, 16, 32, 64, 128, 256)
DEFAULT_D_K = 64
_COMMON_FIELDS = ("seed", "lr", "speed")
PANEL_FIELDS = {"scaling": _COMMON_FIELDS + ("d_k",), "seq2seq": _COMMON_FIELDS, "induction": _COMMON_FIELDS}


class LabSettingsError(StateError):
    """A training lab setting that is not valid; the message names the panel and the field."""


def _show(value) -> str:
    return repr(value)[:60]


def _seed(value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"seed must be a whole number, got {_show(value)}")
    if not 0 <= int(value) <= MAX_LAB_SEED:
        raise ValueError(f"seed must be between 0 and {MAX_LAB_SEED}, got {int(value)}")
    return int(value)


def _lr(value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"lr must be a number, got {_show(value)}")
    value = float(value)
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise ValueError(f"lr must be above 0 and at most 1, got {value!r}")
    return value


def _speed(value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value not in SPEEDS:
        raise ValueError(f"speed must be one of {', '.join(map(str, SPEEDS))} steps per second "
                         f"(0 = as fast as it goes), got {_show(value)}")
    return int(value)


def _d_k(value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value not in D_K_CHOICES:
        raise ValueError(f"d_k must be one of {', '.join(map(str, D_K_CHOICES))}, got {_show(value)}")
    return int(value)


_CHECKS = {"seed": _seed, "lr": _lr, "speed": _speed, "d_k": _d_k}


def check_lab_panel(name: str, values) -> dict:
    """The checked settings of panel ``name`` (only the keys given); ``LabSettingsError`` naming the field."""
    if name not in PANEL_FIELDS:
        raise LabSettingsError(f"unknown training panel {_show(name)}; known: {', '.join(LAB_PANELS)}")
    where = f"training settings of the “{name}” panel"
    if not isinstance(values, Mapping):
        raise LabSettingsError(f"the {where} must be a table, got {type(values).__name__}")
    unknown = [str(key) for key in values if key not in PANEL_FIELDS[name]]
    if unknown:
        raise LabSettingsError(f"unknown field{'s' if len(unknown) > 1 else ''} in the {where}: "
                               f"{', '.join(sorted(unknown))[:200]} (known: {', '.join(PANEL_FIELDS[name])})")
    checked = {}
    for key in PANEL_FIELDS[name]:
        if key in values:
            try:
                checked[key] = _CHECKS[key](values[key])
            except ValueError as exc:
                raise LabSettingsError(f"{where}: {exc}") from None
    return checked


def check_lab_settings(values) -> dict:
    """The checked ``training`` section: ``{"panel": name, name: {field: value}}`` with only the keys given.

    Raises ``LabSettingsError`` naming the first bad panel or field; nothing is changed by a check.
    """
    if not isinstance(values, Mapping):
        raise LabSettingsError(f"the training settings must be a table, got {type(values).__name__}")
    unknown = [str(key) for key in values if key != "panel" and key not in PANEL_FIELDS]
    if unknown:
        raise LabSettingsError(f"unknown training settings: {', '.join(sorted(unknown))[:200]} "
                               f"(known: panel, {', '.join(LAB_PANELS)})")
    checked: dict = {}
    if "panel" in values:
        panel = values["panel"]
        if not isinstance(panel, str) or panel not in PANEL_FIELDS:
            raise LabSettingsError(f"unknown training panel {_show(panel)} in “panel”; known: {', '.join(LAB_PANELS)}")
        checked["panel"] = panel
    for name in LAB_PANELS:
        if name in values:
            checked[name] = check_lab_panel(name, values[name])
    return checked


def merge_lab_settings(base: Mapping | None, values: Mapping) -> dict:
    """``base`` with ``values`` laid over it, panel by panel (both already checked)."""
    merged = {key: (dict(value) if isinstance(value, Mapping) else value) for key, value in (base or {}).items()}
    for key, value in values.items():
        if isinstance(value, Mapping):
            merged[key] = {**merged.get(key, {}), **value}
        else:
            merged[key] = value
    return merged
