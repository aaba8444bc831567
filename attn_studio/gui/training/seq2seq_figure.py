"""The figure of "Why attention": an RNN encoder-decoder and the same with Bahdanau attention,
learning to reverse a sequence of symbols 0..7.

Loss curves of both (with chance, ln 8); accuracy against input length 1..20 for both (greedy
decoding of held-out inputs, measured on the worker); the attention model's alignment for one
input, with both models' outputs under it and wrong symbols marked.
"""

from __future__ import annotations

import math
import time

import numpy as np
from PySide6 import QtCore

from ...training import Seq2SeqExperiment
from ...training.seq2seq import MAX_LENGTH, SYMBOLS
from ..files.sheet import breathe
from ..qt.pg import pg
from ..views.heatmap import Heatmap
from .curves import COLOURS, CurvePlot, recent
from .figure import GREY, LabFigure, number, styled, table_text

__all__ = ["Seq2SeqFigure", "EVAL_COUNT", "DEFAULT_INPUT", "marked"]

EVAL_COUNT = 64  # held-out inputs per length for the accuracy-by-length curve
ALIGNMENT_INTERVAL = 0.5  # seconds between redraws of the alignment while playing
DEFAULT_INPUT = (3, 1, 4, 1, 5, 2, 6, 5, 3, 5, 0, 7)


def marked(symbols, target) -> str:
    """Symbols as rich text, the wrong ones (against ``target``) red and struck through."""
    wrong = "color:#c0001a; text-decoration:line-through; font-weight:bold"
    return styled((str(got), None if got == want else wrong) for got, want in zip(symbols, target))


class Seq2SeqFigure(LabFigure):
    """Encoder-decoder vs attention: loss curves, accuracy by length, an alignment heatmap."""

    experiment_name = "seq2seq"
    title = "Why attention"
    page_size = QtCore.QSize(1400, 620)

    def _build(self):
        g = self.graphics
        page = self.page
        row = self.key_row(Seq2SeqExperiment.arms, [("chance", GREY, True)], columns=3)
        self.loss_plot = CurvePlot("Loss (nats per output symbol)", "loss (nats)", legend_offset=None if page else (-8, 8))
        self.loss_plot.add_line("chance", math.log(SYMBOLS), "chance: ln 8")
        for arm, colour in zip(Seq2SeqExperiment.arms, COLOURS):
            self.loss_plot.add_series(arm, arm, colour)
        breathe()
        self.length_plot = pg.PlotItem(enableMenu=False)
        self.length_plot.setTitle(f"Accuracy by input length (greedy, {EVAL_COUNT} held-out inputs each)", size="10pt")
        self.length_plot.setLabel("bottom", "input length")
        self.length_plot.setLabel("left", "symbols right")
        self.length_plot.setYRange(0, 1.0, padding=0.02)
        self.length_plot.setXRange(1, MAX_LENGTH, padding=0.03)
        self.length_plot.hideButtons()
        self.length_plot.setMouseEnabled(x=False, y=False)
        self.length_plot.showGrid(x=True, y=True, alpha=0.15)
        if not page:
            self.length_plot.addLegend(offset=(10, -10), labelTextSize="8pt")  # bottom left: the curves start high
        self.length_plot.addItem(pg.InfiniteLine(1 / SYMBOLS, angle=0, pen=pg.mkPen(GREY, width=1.4,
                                                                                    style=QtCore.Qt.DashLine),
                                                 # Under the line, right of the middle: the key sits
                                                 # at the bottom left, and no accuracy falls below chance.
                                                 label="chance 1/8", labelOpts={"position": 0.62, "color": GREY,
                                                                                "anchors": [(0, 0), (0, 0)]}))
        self.length_curves = {arm: self.length_plot.plot(pen=pg.mkPen(colour, width=2.2), symbol="o", symbolSize=5,
                                                         symbolBrush=colour, symbolPen=None,
                                                         name=None if page else arm)
                              for arm, colour in zip(Seq2SeqExperiment.arms, COLOURS)}
        breathe()
        self.alignment = Heatmap("Alignment of the attention model")
        self.alignment.set_axis_titles("output", "input")
        breathe()
        # Each item added lays the whole grid out again (5-7 ms): the window's export breathes between them.
        for item, column in ((self.loss_plot.plot, 0), (self.length_plot, 1), (self.alignment.plot, 2)):
            g.addItem(item, row, column)
            breathe()
        if page:
            g.addItem(self.weight_bar(self.alignment), row, 3)
        for column in range(3):
            g.ci.layout.setColumnStretchFactor(column, 3)
        self.outputs = self.add_table("seq2seqOutputs")

    @staticmethod
    def measure(exp, inputs: dict, heavy: bool) -> dict:
        source = np.asarray([inputs.get("source", DEFAULT_INPUT)], dtype=int)
        out = {"source": source[0].tolist(),
               "alignment": exp.models["attention"].alignment(source)[0],
               "outputs": {arm: exp.models[arm].predict(source)[0].tolist() for arm in exp.arms}}
        if heavy:
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
        # Measured on the worker (`measure`), at most every few seconds: drawn only when it is new.
        by_length = snap.extras.get("by_length")
        if by_length is not None and by_length is not self._by_length_drawn:
            self._by_length_drawn = by_length
            lengths = np.arange(1, MAX_LENGTH + 1)
            for arm, curve in self.length_curves.items():
                curve.setData(lengths, by_length[arm])
            step = snap.extras.get("by_length_step")
            if step is not None:
                self.length_plot.setTitle(f"Accuracy by input length at step {step:,} (greedy, {EVAL_COUNT} "
                                          f"held-out inputs each)", size="10pt")

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
            self.outputs.setText(table_text(rows))

    def reading(self, snap) -> str:
        exp = snap.exp
        if snap.steps == 0:
            start = "" if self.page else "Press Play. "
            return (f"{start}Both models read the input with the same RNN; the encoder-decoder must squeeze "
                    "it into one vector h_L, the attention model looks back at every h_j.")
        loss = {arm: recent(self.history(snap, arm, "loss")) for arm in exp.arms}
        text = (f"Loss: encoder-decoder {number(loss['encoder-decoder'])}, attention {number(loss['attention'])} nats "
                f"(chance ln 8 = {number(math.log(SYMBOLS))}).")
        by_length = snap.extras.get("by_length")
        if by_length:
            short = {arm: float(np.mean(v[:5])) for arm, v in by_length.items()}
            long = {arm: float(np.mean(v[15:])) for arm, v in by_length.items()}
            text += (f" Inputs of 1–5 symbols: encoder-decoder {short['encoder-decoder']:.0%}, attention "
                     f"{short['attention']:.0%}; 16–20 symbols: encoder-decoder {long['encoder-decoder']:.0%}, "
                     f"attention {long['attention']:.0%} right.")
        return text
