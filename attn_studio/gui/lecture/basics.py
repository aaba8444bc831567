"""What the parts of Present share: the views' names as the window's tabs show them, and a font
of a given pixel size (the stage's sizes are pixels of its screen, not points)."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

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


def card_line(name: str, text: str, font: QtGui.QFont, wrap: bool = True) -> QtWidgets.QLabel:
    """A line of a card the stage shows in place of a scene (a missing model, a run being trained): plain
    text, centred, at ``font`` (the room's sizes), named ``name`` for tests and the console."""
    label = QtWidgets.QLabel(text)
    label.setObjectName(name)
    label.setTextFormat(QtCore.Qt.PlainText)
    label.setWordWrap(wrap)
    label.setAlignment(QtCore.Qt.AlignCenter)
    label.setFont(font)
    return label
