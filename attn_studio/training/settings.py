"""The training lab's settings as plain values: the defaults, the ranges, and the one check that
the lab's panels, the window's memory and session files all use.

``check_training_settings(values)`` takes the table a session's ``training`` section holds
(``{"panel": ..., "scaling": {"seed", "lr", "speed", "d_k"}, "seq2seq": {...}, "induction":
{...}}``, every key optional) and returns it checked, or raises a ``TrainingError`` naming the
bad panel and field. The rules themselves are `attn_studio.schema.lab`'s, where the session files
check the same section before a file is opened.
"""

from __future__ import annotations

from ..schema.lab import (D_K_CHOICES, DEFAULT_D_K, DEFAULT_SPEED, DEFAULT_SPEEDS, LAB_PANELS, MAX_LAB_SEED, PANEL_FIELDS, SPEEDS,
                          LabSettingsError, check_lab_panel, check_lab_settings, merge_lab_settings)
from .experiment import TrainingError
from .induction import InductionExperiment
from .scaling import ScalingExperiment
from .seq2seq import Seq2SeqExperiment

__all__ = ["LAB_PANELS", "SPEEDS", "DEFAULT_SPEED", "DEFAULT_SPEEDS", "MAX_SEED", "D_K_CHOICES", "DEFAULT_D_K", "DEFAULT_LR",
           "PANEL_FIELDS", "default_training_settings", "check_training_settings", "check_panel_settings",
           "merge_training_settings"]

MAX_SEED = MAX_LAB_SEED
# Each panel's learning rate until one is chosen: its experiment's own.
DEFAULT_LR = {"scaling": ScalingExperiment.lr, "seq2seq": Seq2SeqExperiment.lr, "induction": InductionExperiment.lr}


def default_training_settings() -> dict:
    """Every panel's settings as a new lab has them, the first panel shown."""
    values: dict = {"panel": LAB_PANELS[0]}
    for name in LAB_PANELS:
        values[name] = {"seed": 0, "lr": DEFAULT_LR[name], "speed": DEFAULT_SPEEDS[name]}
    values["scaling"]["d_k"] = DEFAULT_D_K
    return values


def check_training_settings(values) -> dict:
    """``values`` checked (only the keys given); a ``TrainingError`` naming the bad panel or field."""
    try:
        return check_lab_settings(values)
    except LabSettingsError as exc:
        raise TrainingError(str(exc)) from None


def check_panel_settings(name: str, values) -> dict:
    """One panel's settings checked; a ``TrainingError`` naming the bad field."""
    try:
        return check_lab_panel(name, values)
    except LabSettingsError as exc:
        raise TrainingError(str(exc)) from None


def merge_training_settings(base, values) -> dict:
    """Checked ``values`` laid over ``base`` panel by panel (a key ``values`` lacks keeps ``base``'s)."""
    return merge_lab_settings(base, check_training_settings(values))
