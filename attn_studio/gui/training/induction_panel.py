""""Why two layers": a one-layer and a two-layer attention-only transformer, and the induction head
that only the second can form (`training.InductionExperiment`).

The panel's controls around its figure (`induction_figure`: the loss and head-score curves, the
ablation bars, every head of the two-layer model on one sequence, both models' predictions); under
the figure, the sequence the lecturer types or draws at random, and a box per head of the two-layer
model that silences it (measured on the held-out batch beside the intact model and the one-layer model).
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtWidgets

from ...training import InductionExperiment
from ...training.induction import HEADS, SEQ_LEN
from .induction_figure import (ALPHABET, DEFAULT_TOKENS, InductionFigure, demo_sequence, drop_step,  # noqa: F401
                               letters)
from .panel import LabPanel

__all__ = ["InductionPanel", "ALPHABET", "parse_letters", "drop_step"]


def parse_letters(text: str) -> list[int]:
    """Tokens from typed letters (A-Z, 0-5; spaces ignored, case ignored); ValueError says what is wrong."""
    typed = [c for c in text.upper() if not c.isspace()]
    if len(typed) < 2:
        raise ValueError("type at least two tokens (letters A–Z or digits 0–5)")
    if len(typed) > SEQ_LEN:
        raise ValueError(f"{len(typed)} tokens is too long: at most {SEQ_LEN}")
    bad = sorted({c for c in typed if c not in ALPHABET})
    if bad:
        raise ValueError(f"{', '.join(repr(c) for c in bad)} not a token: the tokens are A–Z and 0–5")
    return [ALPHABET.index(c) for c in typed]


class InductionPanel(LabPanel):
    """One layer vs two layers: loss and head-score curves, every head of the two-layer model."""

    figure_class = InductionFigure
    experiment_name = InductionFigure.experiment_name
    title = InductionFigure.title
    default_lr = InductionExperiment.lr
    model_arms = {"two layers": "Two-layer model", "one layer": "One-layer model"}

    def _add_controls(self):
        self._tokens = list(DEFAULT_TOKENS)
        self._rng = np.random.default_rng()
        self._silenced = np.ones((2, HEADS))
        self._silence_measured = None  # (run, mask) last measured with heads silenced (the worker's)

    def _make(self, seed: int | None = None):
        return InductionExperiment(seed=self._seed if seed is None else seed, lr=self._lr)

    @property
    def tokens(self) -> list[int]:
        return list(self._tokens)

    def _add_inputs(self, layout):
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("Sequence (A–Z, 0–5):"))
        self.sequence_edit = QtWidgets.QLineEdit("".join(letters(self._tokens)))
        self.sequence_edit.setObjectName("inductionInput")
        self.sequence_edit.setToolTip("Type 2 to 32 tokens as letters and press Enter; repeat a stretch to see "
                                      "the induction head copy it")
        self.sequence_edit.returnPressed.connect(lambda: self.set_sequence_text(self.sequence_edit.text()))
        row.addWidget(self.sequence_edit, 1)
        self.random_button = QtWidgets.QPushButton("Random")
        self.random_button.setObjectName("inductionRandom")
        self.random_button.setToolTip("Draw a random stretch, the same stretch again, then filler")
        self.random_button.clicked.connect(self.random_sequence)
        row.addWidget(self.random_button)
        row.addSpacing(12)
        row.addWidget(QtWidgets.QLabel("Silence:"))
        self.silence_boxes = {}
        for layer in range(2):
            for head in range(HEADS):
                box = QtWidgets.QCheckBox(f"{layer + 1}.{head + 1}")
                box.setObjectName(f"silence_{layer}_{head}")
                box.setToolTip(f"Silence layer {layer + 1} head {head + 1} of the two-layer model (its output zeroed "
                               "before W_O) and measure the loss on the held-out batch without it")
                box.toggled.connect(self._silence_toggled)
                row.addWidget(box)
                self.silence_boxes[layer, head] = box
        layout.addLayout(row)

    def _silence_toggled(self, _on: bool = False) -> None:
        mask = np.ones((2, HEADS))
        for (layer, head), box in self.silence_boxes.items():
            if box.isChecked():
                mask[layer, head] = 0.0
        self.set_silenced(mask)

    def set_silenced(self, mask) -> None:
        """Silence the heads of the two-layer model whose entry of ``mask`` (2 × 2) is 0: the worker
        measures the repeat and first-copy losses without them at once, and the predictions follow."""
        mask = np.asarray(mask, dtype=float)
        if mask.shape != (2, HEADS):
            raise ValueError(f"the mask is (layers, heads) = (2, {HEADS}), got {mask.shape}")
        self._silenced = mask.copy()
        for (layer, head), box in self.silence_boxes.items():
            out = bool(mask[layer, head] == 0)
            if box.isChecked() != out:
                box.blockSignals(True)
                box.setChecked(out)
                box.blockSignals(False)
        self._send_inputs()

    @property
    def silenced(self) -> np.ndarray:
        """The heads silenced with the boxes: (2, 2), 0 where silenced."""
        return self._silenced.copy()

    def _send_inputs(self) -> None:
        self.runner.set_inputs(tokens=list(self._tokens), silenced=self._silenced.tolist())

    def set_sequence_text(self, text: str) -> bool:
        """Show the attention and predictions for a typed sequence; bad input is refused with a
        message and the old sequence stays."""
        try:
            tokens = parse_letters(text)
        except ValueError as exc:
            self.show_message(f"Sequence not changed: {exc}")
            self.sequence_edit.setText("".join(letters(self._tokens)))
            return False
        self.clear_message()
        self.set_sequence(tokens)
        return True

    def set_sequence(self, tokens) -> None:
        self._tokens = [int(t) for t in tokens]
        self.sequence_edit.setText("".join(letters(self._tokens)))
        self._send_inputs()

    def random_sequence(self) -> None:
        n = int(self._rng.integers(6, 17))
        self.set_sequence(demo_sequence(self._rng, n))

    def extras(self, exp, inputs: dict, heavy: bool) -> dict:
        # Heads silenced with the boxes are measured at once when the boxes change, then with the heavy
        # extras (every head's ablation): not on every light redraw while the run plays.
        mask = inputs.get("silenced")
        key = (exp, None if mask is None else tuple(map(tuple, mask)))
        fresh = mask is not None and key != self._silence_measured
        out = InductionFigure.measure(exp, {"tokens": self._tokens, **inputs, "silence_now": fresh}, heavy)
        if "silenced" in out:
            self._silence_measured = key
        return out
