"""The "Training" tab: the three panels of the training lab as inner tabs.

Each panel keeps its own run on its own worker: switching tabs or panels changes what is drawn,
never what is trained. ``settings()`` / ``apply_settings()`` give and take every panel's settings
as plain values (a session keeps them).

A panel is built when it is first shown (or asked for by name): building all three on the GUI
thread at the tab's first opening froze the window for about half a second, most of it for
panels nobody had chosen yet. Settings for a panel not built yet wait and are applied when it is.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6 import QtCore, QtWidgets

from ...training.experiment import TrainingError
from ...training.settings import (LAB_PANELS, check_training_settings, default_training_settings,
                                  merge_training_settings)
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


class _Panels(Mapping):
    """The panels by experiment name; looking one up builds it if it was not yet."""

    def __init__(self, tab: "TrainingTab"):
        self._tab = tab

    def __getitem__(self, name: str):
        return self._tab.panel(name)

    def __iter__(self):
        return iter(LAB_PANELS)

    def __len__(self) -> int:
        return len(LAB_PANELS)


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
        self.open_in_studio = None  # the window's "open this model folder in the studio", for the panels
        self.built: dict = {}     # name -> panel, the ones built so far
        self._waiting: dict = {}  # name -> checked settings for a panel not built yet
        self.panels = _Panels(self)
        for name, cls, tip in PANELS:
            page = QtWidgets.QWidget()  # holds the panel's place until it is first shown
            page.setObjectName(f"training_{name}_page")
            self.tabs.setTabToolTip(self.tabs.addTab(page, cls.title), tip)
        self.tabs.currentChanged.connect(self._current_changed)

    def panel(self, name: str):
        """The panel of experiment ``name``, built now if it was not yet."""
        if name not in LAB_PANELS:
            raise TrainingError(f"unknown training panel {name!r}; known: {', '.join(LAB_PANELS)}")
        panel = self.built.get(name)
        if panel is None:
            index = LAB_PANELS.index(name)
            _, cls, tip = PANELS[index]
            panel = self.built[name] = cls()
            panel.open_in_studio = self.open_in_studio  # the window's, handed down (None outside one)
            if name in self._waiting:
                panel.apply_settings(self._waiting.pop(name))
            current = self.tabs.currentIndex()
            with QtCore.QSignalBlocker(self.tabs):  # the same tab stays current: nothing changed for a person
                page = self.tabs.widget(index)
                self.tabs.removeTab(index)
                self.tabs.insertTab(index, panel, cls.title)
                self.tabs.setTabToolTip(index, tip)
                self.tabs.setCurrentIndex(current)
            page.deleteLater()
        return panel

    def _current_changed(self, index: int) -> None:
        if self.isVisible() and index >= 0:
            self.panel(LAB_PANELS[index])

    def showEvent(self, event):  # noqa: N802 (Qt's name)
        self.panel(LAB_PANELS[self.tabs.currentIndex()])  # before the first paint: no empty page is seen
        super().showEvent(event)

    def show_panel(self, name: str):
        """Bring the panel of experiment ``name`` to the front and return it."""
        panel = self.panel(name)
        self.tabs.setCurrentWidget(panel)
        return panel

    @property
    def current(self):
        return self.panel(LAB_PANELS[self.tabs.currentIndex()])

    def settings(self) -> dict:
        """{"panel": the shown one, name: that panel's settings} as plain values."""
        values = {"panel": LAB_PANELS[self.tabs.currentIndex()]}
        defaults = default_training_settings()
        for name in LAB_PANELS:
            if name in self.built:
                values[name] = self.built[name].settings()
            else:
                values[name] = merge_training_settings(defaults, {name: self._waiting.get(name, {})})[name]
        return values

    def apply_settings(self, values) -> None:
        """Apply settings as `settings` gave them (any key may be missing: that part stays as it is).

        Everything is checked first (`training.settings.check_training_settings`), so a bad field
        changes nothing and raises a TrainingError naming it. Each panel given is paused and its
        run rebuilt from the new settings (a panel not built yet takes them when it is).
        """
        checked = check_training_settings(values)
        for name, panel_values in checked.items():
            if name == "panel":
                continue
            if name in self.built:
                self.built[name].apply_settings(panel_values)
            else:
                self._waiting[name] = {**self._waiting.get(name, {}), **panel_values}
        if "panel" in checked:
            if self.isVisible():
                self.show_panel(checked["panel"])
            else:
                self.tabs.setCurrentIndex(LAB_PANELS.index(checked["panel"]))

    def close_runs(self):
        """Stop every panel's run (the panels never built have none)."""
        for panel in self.built.values():
            panel.close_run()

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 (Qt's name)
        return QtCore.QSize(1000, 600)
