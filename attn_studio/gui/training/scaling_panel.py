""""Why √d_k": scaled and unscaled attention trained side by side (`training.ScalingExperiment`).

The panel's controls (d_k beside the lab's own) around its figure (`scaling_figure`: the curves,
the scores' histogram, the steps each arm took to 90 %).
"""

from __future__ import annotations

from PySide6 import QtWidgets

from ...training import ScalingExperiment
from ...training.experiment import check_int
from ...training.scaling import MAX_D_K
from ...training.settings import D_K_CHOICES, DEFAULT_D_K
from .panel import LabPanel
from .scaling_figure import ScalingFigure

__all__ = ["ScalingPanel", "D_K_CHOICES"]


class ScalingPanel(LabPanel):
    """Scaled vs unscaled attention: curves, a score histogram, a sentence."""

    figure_class = ScalingFigure
    experiment_name = ScalingFigure.experiment_name
    title = ScalingFigure.title
    default_lr = ScalingExperiment.lr
    model_arms = {"scaled": "Scaled model (÷√dₖ)", "unscaled": "Unscaled model"}

    def _add_controls(self):
        self._d_k = DEFAULT_D_K
        self.d_k_combo = QtWidgets.QComboBox()
        self.d_k_combo.setObjectName("trainingDk")
        for d_k in D_K_CHOICES:
            self.d_k_combo.addItem(str(d_k), d_k)
        self.d_k_combo.setCurrentIndex(D_K_CHOICES.index(self._d_k))
        self.d_k_combo.setToolTip("The size of queries and keys; a new d_k starts a new run")
        self.d_k_combo.currentIndexChanged.connect(self._d_k_chosen)
        self.add_control("d_k", self.d_k_combo)

    @property
    def d_k(self) -> int:
        return self._d_k

    def set_d_k(self, d_k: int) -> None:
        """A new d_k (4 … 256): the run starts again from the seed."""
        self.d_k_combo.setCurrentIndex(D_K_CHOICES.index(check_int("d_k", d_k, 1, MAX_D_K)))

    def _d_k_chosen(self, index: int):
        self._d_k = int(self.d_k_combo.itemData(index))
        self.reset()

    def _make(self, seed: int | None = None):
        return ScalingExperiment(d_k=self._d_k, seed=self._seed if seed is None else seed, lr=self._lr)

    def settings(self) -> dict:
        return {**super().settings(), "d_k": self._d_k}

    def _apply_own(self, checked: dict):
        if "d_k" in checked:
            self.d_k_combo.blockSignals(True)
            self._d_k = checked["d_k"]
            self.d_k_combo.setCurrentIndex(D_K_CHOICES.index(self._d_k))
            self.d_k_combo.blockSignals(False)
