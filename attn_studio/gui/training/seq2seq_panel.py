""""Why attention": an RNN encoder-decoder and the same with Bahdanau attention, learning to
reverse a sequence of symbols 0..7 (`training.Seq2SeqExperiment`).

Loss curves of both; accuracy against input length 1..20 for both (greedy decoding of held-out
inputs, measured on the worker); the attention model's alignment for an input the lecturer types
or draws at random, with both models' outputs under it and wrong symbols marked.
"""

from __future__ import annotations

import html
import math
import time

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...training import Seq2SeqExperiment
from ...training.seq2seq import MAX_LENGTH, SYMBOLS
from ..qt.pg import pg
from ..views.heatmap import Heatmap
from .curves import COLOURS, CurvePlot, recent
from .panel import LabPanel

__all__ = ["Seq2SeqPanel", "parse_symbols"]

EVAL_COUNT = 64  # held-out inputs per length for the accuracy-by-length curve
ALIGNMENT_INTERVAL = 0.5  # seconds between redraws of the alignment while playing
DEFAULT_INPUT = (3, 1, 4, 1, 5, 2, 6, 5, 3, 5, 0, 7)


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


def marked(symbols, target) -> str:
    """Symbols as rich text, the wrong ones (against ``target``) red and struck through."""
    parts = []
    for got, want in zip(symbols, target):
        if got == want:
            parts.append(f"{got}")
        else:
            parts.append(f"<span style='color:#c0001a; text-decoration:line-through'><b>{got}</b></span>")
    return " ".join(parts)


class Seq2SeqPanel(LabPanel):
    """Encoder-decoder vs attention: loss curves, accuracy by length, an alignment heatmap."""

    experiment_name = "seq2seq"
    title = "Why attention"
    default_lr = Seq2SeqExperiment.lr

    def _add_controls(self):
        self._source = list(DEFAULT_INPUT)
        self._measured = None  # (experiment, step) accuracy by length was last measured at (worker only)
        self._rng = np.random.default_rng()

    def _make(self):
        return Seq2SeqExperiment(seed=self._seed, lr=self._lr)

    @property
    def source(self) -> list[int]:
        return list(self._source)

    # -------------------------------------------------------------- figure
    def _build_figure(self):
        g = self.graphics
        self.loss_plot = CurvePlot("Loss (nats per output symbol)", "loss")
        self.loss_plot.add_line("chance", math.log(SYMBOLS), "chance: ln 8")
        for arm, colour in zip(Seq2SeqExperiment.arms, COLOURS):
            self.loss_plot.add_series(arm, arm, colour)
        self.length_plot = pg.PlotItem(enableMenu=False)
        self.length_plot.setTitle(f"Accuracy by input length (greedy, {EVAL_COUNT} held-out inputs each)", size="10pt")
        self.length_plot.setLabel("bottom", "input length")
        self.length_plot.setLabel("left", "symbols right")
        self.length_plot.setYRange(0, 1.0, padding=0.02)
        self.length_plot.setXRange(1, MAX_LENGTH, padding=0.03)
        self.length_plot.hideButtons()
        self.length_plot.setMouseEnabled(x=False, y=False)
        self.length_plot.showGrid(x=True, y=True, alpha=0.15)
        self.length_plot.addLegend(offset=(10, -10), labelTextSize="8pt")  # bottom left: the curves start high
        self.length_curves = {arm: self.length_plot.plot(pen=pg.mkPen(colour, width=2.2), symbol="o", symbolSize=5,
                                                         symbolBrush=colour, symbolPen=None, name=arm)
                              for arm, colour in zip(Seq2SeqExperiment.arms, COLOURS)}
        self.alignment = Heatmap("Alignment of the attention model")
        self.alignment.set_axis_titles("output", "input")
        g.addItem(self.loss_plot.plot, 0, 0)
        g.addItem(self.length_plot, 0, 1)
        g.addItem(self.alignment.plot, 0, 2)
        g.ci.layout.setColumnStretchFactor(0, 3)
        g.ci.layout.setColumnStretchFactor(1, 3)
        g.ci.layout.setColumnStretchFactor(2, 3)

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
        self.figure_layout.addLayout(row)
        self.outputs = QtWidgets.QLabel()
        self.outputs.setObjectName("seq2seqOutputs")
        self.outputs.setTextFormat(QtCore.Qt.RichText)
        self.outputs.setStyleSheet("font-family: monospace;")
        self.figure_layout.addWidget(self.outputs)

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

    # -------------------------------------------------------------- worker
    def extras(self, exp, inputs: dict, heavy: bool) -> dict:
        source = np.asarray([inputs.get("source", DEFAULT_INPUT)], dtype=int)
        out = {"source": source[0].tolist(),
               "alignment": exp.models["attention"].alignment(source)[0],
               "outputs": {arm: exp.models[arm].predict(source)[0].tolist() for arm in exp.arms}}
        if heavy and self._measured != (id(exp), exp.step_count):  # not again for the same weights
            self._measured = (id(exp), exp.step_count)
            table = exp.accuracy_by_length(count=EVAL_COUNT)
            out["by_length"] = {arm: [table[arm][n] for n in range(1, MAX_LENGTH + 1)] for arm in exp.arms}
            out["by_length_step"] = exp.step_count
        return out

    # -------------------------------------------------------------- drawing
    def draw_parts(self) -> tuple:
        return (self._draw_loss, self._draw_by_length, self._draw_alignment)

    def _draw_loss(self, snap):
        for arm in snap.exp.arms:
            self.loss_plot.set(arm, self.history_array(snap, arm, "loss"))

    def _draw_by_length(self, snap):
        # Measured on the worker (`extras`), at most every few seconds: drawn only when it is new.
        by_length = snap.extras.get("by_length")
        if by_length is not None and by_length is not self._by_length_drawn:
            self._by_length_drawn = by_length
            lengths = np.arange(1, MAX_LENGTH + 1)
            for arm, curve in self.length_curves.items():
                curve.setData(lengths, by_length[arm])

    _by_length_drawn = None
    _alignment_drawn = 0.0
    _alignment_extras = None

    def _draw_alignment(self, snap):
        exp = snap.exp
        extras = snap.extras
        # A value in every cell: the heatmap costs more to paint than every curve. While playing it
        # follows at most twice a second; when paused, at once.
        now = time.monotonic()
        if snap.playing and (now - self._alignment_drawn < ALIGNMENT_INTERVAL or extras is self._alignment_extras):
            return
        self._alignment_drawn, self._alignment_extras = now, extras
        if "alignment" in extras:
            source = extras["source"]
            target = source[::-1]
            outputs = extras["outputs"]
            weights = np.asarray(extras["alignment"])
            self.alignment.set_data(weights, masked=np.zeros(weights.shape, bool),
                                    row_labels=[str(s) for s in outputs["attention"]],
                                    col_labels=[str(s) for s in source], levels=(0.0, 1.0))
            rows = [("input", " ".join(map(str, source))), ("reversed (right answer)", " ".join(map(str, target)))]
            rows += [(arm, marked(outputs[arm], target)) for arm in exp.arms]
            self.outputs.setText("<table cellspacing='2'>" + "".join(
                f"<tr><td style='padding-right:10px'>{html.escape(name)}</td><td>{text}</td></tr>"
                for name, text in rows) + "</table>")

    def reading(self, snap) -> str:
        exp = snap.exp
        if snap.steps == 0:
            return ("Press Play. Both models read the input with the same RNN; the encoder-decoder must squeeze "
                    "it into one vector h_L, the attention model looks back at every h_j.")
        loss = {arm: recent(self.history(snap, arm, "loss")) for arm in exp.arms}
        text = (f"Loss: encoder-decoder {loss['encoder-decoder']:.2f}, attention {loss['attention']:.2f} nats "
                f"(chance ln 8 = {math.log(SYMBOLS):.2f}).")
        by_length = snap.extras.get("by_length")
        if by_length:
            short = {arm: float(np.mean(v[:5])) for arm, v in by_length.items()}
            long = {arm: float(np.mean(v[15:])) for arm, v in by_length.items()}
            text += (f" Inputs of 1–5 symbols: encoder-decoder {short['encoder-decoder']:.0%}, attention "
                     f"{short['attention']:.0%}; 16–20 symbols: encoder-decoder {long['encoder-decoder']:.0%}, "
                     f"attention {long['attention']:.0%} right.")
        return text
