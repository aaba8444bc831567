"""The "Training" tab: the three panels of the training lab as inner tabs.

Each panel keeps its own run on its own worker thread: switching tabs or panels changes what is
drawn, never what is trained. ``settings()`` / ``apply_settings()`` give and take every panel's
settings as plain values (a session keeps them).
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ...training.experiment import TrainingError
from ...training.settings import LAB_PANELS, check_training_settings
from .induction_panel import InductionPanel
from .scaling_panel import ScalingPanel
from .seq2seq_panel import Seq2SeqPanel

__all__ = ["TrainingTab", "PANELS"]

# (experiment name, class, tip), in the order the inner tabs show them.
PANELS = (
    ("scaling", ScalingPanel, "Scaled and unscaled attention learning the same task: why scores are divided by √d_k"),
    ("seq2seq", Seq2SeqPanel, "An RNN encoder-decoder and the same with attention, reversing sequences: why attention"),
    ("induction", InductionPanel, "One- and two-layer attention-only transformers on repeated sequences: "
                                  "the induction head"),
)
# The settings' rules know the same panels (a session's "training" section is checked without Qt).
assert tuple(name for name, _, _ in PANELS) == LAB_PANELS


class TrainingTab(QtWidgets.QWidget):
    """Three panels ("Why √d_k", "Why attention", "Why two layers"), each with its own run."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("trainingTab")
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setObjectName("trainingTabs")
        self.tabs.setDocumentMode(True)
        layout.addWidget(self.tabs)
        self.panels: dict = {}
        for name, cls, tip in PANELS:
            panel = cls()
            self.panels[name] = panel
            self.tabs.setTabToolTip(self.tabs.addTab(panel, panel.title), tip)

    def show_panel(self, name: str):
        """Bring the panel of experiment ``name`` to the front and return it."""
        if name not in self.panels:
            raise TrainingError(f"unknown training panel {name!r}; known: {', '.join(self.panels)}")
        panel = self.panels[name]
        self.tabs.setCurrentWidget(panel)
        return panel

    @property
    def current(self):
        return self.tabs.currentWidget()

    def settings(self) -> dict:
        """{"panel": the shown one, name: that panel's settings} as plain values."""
        current = next(n for n, p in self.panels.items() if p is self.current)
        return {"panel": current, **{name: panel.settings() for name, panel in self.panels.items()}}

    def apply_settings(self, values) -> None:
        """Apply settings as `settings` gave them (any key may be missing: that part stays as it is).

        Everything is checked first (`training.settings.check_training_settings`), so a bad field
        changes nothing and raises a TrainingError naming it. Each panel given is paused and its
        run rebuilt from the new settings.
        """
        checked = check_training_settings(values)
        for name, panel_values in checked.items():
            if name != "panel":
                self.panels[name].apply_settings(panel_values)
        if "panel" in checked:
            self.show_panel(checked["panel"])

    def close_runs(self):
        """Stop every panel's worker thread."""
        for panel in self.panels.values():
            panel.close_run()

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 (Qt's name)
        return QtCore.QSize(1000, 600)
