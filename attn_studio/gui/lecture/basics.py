"""What the parts of Present share: the views' names as the window's tabs show them, and a font
of a given pixel size (the stage's sizes are pixels of its screen, not points)."""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets

from ...scenes import VARIANCE  # noqa: F401 (the √d_k panel: one name, the lecture files' too)

ATTENTION, STEPS, OUTPUTS, COMPARE, POSITIONS = "Attention", "Step by step", "Heads → output", "Compare", "Positions"
GEOMETRY, HEADS, MODEL, DRIFT, MEANING = "Geometry", "Heads", "Model view", "Drift", "Meaning in context"
TRAINING_PREFIX = "Training: "
HEATMAP_VIEWS = (ATTENTION, OUTPUTS, COMPARE, POSITIONS, MODEL)
TRAINED_VIEWS = (HEADS, MODEL, DRIFT, MEANING)  # only a trained model has them
TOY_VIEWS = (COMPARE, POSITIONS)  # only the toy model has them
STAGE_QUIET_S = 1.5  # after a key on the stage or a scene asked for, the runs trained ahead wait this long (s)


def _font(px: int, bold: bool = False) -> QtGui.QFont:
    font = QtGui.QFont(QtWidgets.QApplication.font())
    font.setPixelSize(int(px))
    font.setBold(bold)
    return font
