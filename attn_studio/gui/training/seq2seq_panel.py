""""Why attention": an RNN encoder-decoder and the same with Bahdanau attention, learning to
reverse a sequence of symbols 0..7 (`training.Seq2SeqExperiment`).

The panel's controls around its figure (`seq2seq_figure`: the loss curves, accuracy by input
length, the attention model's alignment for one input); under the figure, the input the lecturer
types or draws at random.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtWidgets

from ...training import Seq2SeqExperiment
from ...training.seq2seq import MAX_LENGTH, SYMBOLS
from .panel import LabPanel
from .seq2seq_figure import DEFAULT_INPUT, Seq2SeqFigure

__all__ = ["Seq2SeqPanel", "parse_symbols"]


def parse_symbols(text: str) -> list[int]:
    """Symbols 0..7 from what a person typed ("3 1 4", "3,1,4" or "314"); a ValueError says what
    is wrong."""
    cleaned = text.replace(",", " ").split()
    if len(cleaned) == 1 and len(cleaned[0]) > 1:
        cleaned = list(cleaned[0])
    if not cleaned:
        raise ValueError("type at least one symbol, 0 to 7 (e.g. 3 1 4 1 5)")
    symbols = []
    for item in cleaned:
        if not (item.isdigit() and int(item) < SYMBOLS):
            raise ValueError(f"{item!r} is not a symbol: the symbols are 0 to 7")
        symbols.append(int(item))
    if len(symbols) > MAX_LENGTH:
        raise ValueError(f"{len(symbols)} symbols is too long: at most {MAX_LENGTH}")
    return symbols


class Seq2SeqPanel(LabPanel):
    """Encoder-decoder vs attention: loss curves, accuracy by length, an alignment heatmap."""

    figure_class = Seq2SeqFigure
    experiment_name = Seq2SeqFigure.experiment_name
    title = Seq2SeqFigure.title
    default_lr = Seq2SeqExperiment.lr

    def _add_controls(self):
        self._source = list(DEFAULT_INPUT)
        self._measured = None  # (experiment, step) accuracy by length was last measured at (worker only)
        self._rng = np.random.default_rng()

    def _make(self, seed: int | None = None):
        return Seq2SeqExperiment(seed=self._seed if seed is None else seed, lr=self._lr)

    @property
    def source(self) -> list[int]:
        return list(self._source)

    def _add_inputs(self, layout):
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("Input (symbols 0–7):"))
        self.input_edit = QtWidgets.QLineEdit(" ".join(map(str, self._source)))
        self.input_edit.setObjectName("seq2seqInput")
        self.input_edit.setToolTip("Type up to 20 symbols 0 to 7 and press Enter, e.g. 3 1 4 1 5")
        self.input_edit.returnPressed.connect(lambda: self.set_input_text(self.input_edit.text()))
        row.addWidget(self.input_edit, 1)
        self.random_button = QtWidgets.QPushButton("Random")
        self.random_button.setObjectName("seq2seqRandom")
        self.random_button.setToolTip("Draw an input of random length and symbols")
        self.random_button.clicked.connect(self.random_input)
        row.addWidget(self.random_button)
        layout.addLayout(row)

    def set_input_text(self, text: str) -> bool:
        """Show the models' outputs for a typed input; bad input is refused with a message and
        the old input stays."""
        try:
            symbols = parse_symbols(text)
        except ValueError as exc:
            self.show_message(f"Input not changed: {exc}")
            self.input_edit.setText(" ".join(map(str, self._source)))
            return False
        self.clear_message()
        self.set_input(symbols)
        return True

    def set_input(self, symbols) -> None:
        self._source = [int(s) for s in symbols]
        self.input_edit.setText(" ".join(map(str, self._source)))
        self.runner.set_inputs(source=list(self._source))

    def random_input(self) -> None:
        length = int(self._rng.integers(4, MAX_LENGTH + 1))
        self.set_input(self._rng.integers(0, SYMBOLS, size=length).tolist())

    def extras(self, exp, inputs: dict, heavy: bool) -> dict:
        # Accuracy by length (the heavy part) not again for the same weights.
        heavy = heavy and self._measured != (id(exp), exp.step_count)
        if heavy:
            self._measured = (id(exp), exp.step_count)
        return Seq2SeqFigure.measure(exp, inputs, heavy)
