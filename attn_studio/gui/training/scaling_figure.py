"""The figure of "Why √d_k": scaled and unscaled attention trained side by side.

Curves of loss (with chance, ln 8), accuracy (with chance, 1/8, and the step where each arm reached
90 %), attention entropy (with ln T, the entropy of uniform attention) and the norm of ∂L/∂scores
(log axis); a histogram of both arms' scores on the current batch; one sentence that reads the
numbers off, the steps to 90 % among them (`training.claims`).
"""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore

from ...training import ScalingExperiment
from ...training.claims import TARGET, WINDOW, reached_text, steps_to
from ...training.scaling import T
from ..files.sheet import breathe
from ..qt.pg import cache_static, pg
from .curves import COLOURS, CurvePlot, nice_extent, outward, recent
from .figure import GREY, LabFigure, number

__all__ = ["ScalingFigure", "BINS"]

BINS = 40
CHANCE = 1 / 8


class ScalingFigure(LabFigure):
    """Scaled vs unscaled attention: curves, a score histogram, a sentence."""

    experiment_name = "scaling"
    title = "Why √dₖ"  # a subscript k: "d_k" lost its underscore under the tab bar's baseline
    page_size = QtCore.QSize(1400, 760)

    def _build(self):
        g = self.graphics
        page = self.page
        row = self.key_row(ScalingExperiment.arms, [("chance / uniform", GREY, True)], columns=3)
        # On screen, legends where the curves are not: the loss starts high, the accuracy low.
        legend = (lambda offset: None) if page else (lambda offset: offset)
        self.loss_plot = CurvePlot("Loss (nats)", "loss (nats)", legend_offset=legend((8, -8)))
        self.loss_plot.add_line("chance", math.log(8), "chance: ln 8")
        self.accuracy_plot = CurvePlot("Accuracy", "accuracy", y_range=(0.0, 1.0), legend_offset=legend((8, 8)))
        self.accuracy_plot.add_line("chance", CHANCE, "chance 1/8")
        self.reached_lines = {}
        for i, (arm, colour) in enumerate(zip(ScalingExperiment.arms, COLOURS)):
            line = self.accuracy_plot.add_line(f"{arm} {TARGET:.0%}", 0.0, "", angle=90, colour=colour)
            line.hide()
            self.reached_lines[arm] = line
        self.entropy_plot = CurvePlot("Attention entropy (nats)", "entropy (nats)",
                                      y_range=(0.0, math.log(T) + 0.25), legend_offset=legend((-8, 8)))
        self.entropy_plot.add_line("uniform", math.log(T), f"uniform: ln {T} = {math.log(T):.2f}")
        self.grad_plot = CurvePlot("‖∂L/∂scores‖ (log axis)", "norm", log_y=True, legend_offset=legend((-8, -8)))
        for plot in (self.loss_plot, self.accuracy_plot, self.entropy_plot, self.grad_plot):
            for arm, colour in zip(ScalingExperiment.arms, COLOURS):
                plot.add_series(arm, arm, colour)
        breathe()
        self.hist_plot = pg.PlotItem(enableMenu=False)
        self.hist_plot.setTitle("Scores entering the softmax (this batch)", size="10pt")
        self.hist_plot.setLabel("bottom", "score")
        self.hist_plot.setLabel("left", "count")
        self.hist_plot.hideButtons()
        self.hist_plot.setMouseEnabled(x=False, y=False)
        if not page:
            self.hist_plot.addLegend(offset=(-8, 8), labelTextSize="8pt")
        # Its ranges are set in `_draw_histogram`, in round numbers that hold still: an axis redrawn
        # at every step (auto-range follows each batch's scores) cost more than the histogram.
        self.hist_plot.disableAutoRange()
        cache_static(self.hist_plot.getAxis("left"), self.hist_plot.getAxis("bottom"))
        self._hist_ranges = None  # (experiment, (x low, x high), y high) as last set
        self.hist_curves = {}
        for arm, colour in zip(ScalingExperiment.arms, COLOURS):
            brush = pg.mkColor(colour)
            brush.setAlpha(70)
            self.hist_curves[arm] = self.hist_plot.plot(stepMode="center", fillLevel=0, brush=brush,
                                                        pen=pg.mkPen(colour, width=1.6), name=None if page else arm)
        breathe()
        # Each item added lays the whole grid out again (5-7 ms): the window's export breathes between them.
        for item, place in ((self.loss_plot.plot, (row, 0)), (self.accuracy_plot.plot, (row, 1)),
                            (self.entropy_plot.plot, (row, 2)), (self.grad_plot.plot, (row + 1, 0)),
                            (self.hist_plot, (row + 1, 1, 1, 2))):
            g.addItem(item, *place)
            breathe()

    @staticmethod
    def measure(exp, inputs: dict, heavy: bool) -> dict:
        batch = exp.batch(exp.step_count)
        scores = {arm: exp.models[arm].attention(batch)[0].ravel() for arm in exp.arms}
        everything = np.concatenate(list(scores.values()))
        low, high = float(everything.min()), float(everything.max())
        if not high > low:
            high = low + 1.0
        edges = np.linspace(low, high, BINS + 1)
        return {"edges": edges, "counts": {arm: np.histogram(s, bins=edges)[0] for arm, s in scores.items()},
                "d_k": exp.d_k}

    def draw_parts(self) -> tuple:
        return (self._draw_loss, self._draw_accuracy, self._draw_entropy, self._draw_grad, self._draw_histogram)

    def _draw_curves(self, snap, plot: CurvePlot, metric: str):
        for arm in snap.exp.arms:
            plot.set(arm, self.history_array(snap, arm, metric))

    def _draw_loss(self, snap):
        self._draw_curves(snap, self.loss_plot, "loss")

    def _draw_accuracy(self, snap):
        self._draw_curves(snap, self.accuracy_plot, "accuracy")
        for arm, step in self.reached(snap).items():
            line = self.reached_lines[arm]
            line.setVisible(step is not None)
            if step is not None:
                line.setValue(step)
                line.label.setFormat(f"{arm}: {TARGET:.0%} at step {step:,}")
        # Each label where no curve, legend or other label is (the line moved, or its text changed).
        self.accuracy_plot.place_labels()

    def reached(self, snap) -> dict:
        """Per arm, the step at which it reached 90 % accuracy (`claims.steps_to`), or None."""
        return {arm: steps_to(self.history_array(snap, arm, "accuracy")) for arm in snap.exp.arms}

    def _draw_entropy(self, snap):
        self._draw_curves(snap, self.entropy_plot, "entropy")

    def _draw_grad(self, snap):
        self._draw_curves(snap, self.grad_plot, "score_grad")

    def _draw_histogram(self, snap):
        extras = snap.extras
        if "edges" in extras:
            for arm, curve in self.hist_curves.items():
                curve.setData(extras["edges"], extras["counts"][arm])
            self._fit_histogram(snap.exp, extras["edges"], max(max(c) for c in extras["counts"].values()))

    def _fit_histogram(self, exp, edges, top: float) -> None:
        """Set the histogram's ranges when the scores leave them or fill less than a quarter of
        them (and for a new run); otherwise they stay."""
        low, high = float(edges[0]), float(edges[-1])
        last = self._hist_ranges
        if last is None or last[0] is not exp:
            last = (exp, None, None)
        _, x_span, y_high = last
        if x_span is None or low < x_span[0] or high > x_span[1] or high - low < (x_span[1] - x_span[0]) / 4:
            x_span = outward(low, high)
            self.hist_plot.setXRange(*x_span, padding=0.02)
        if y_high is None or top > y_high or top < y_high / 4:
            y_high = nice_extent(top, least=1.0)
            self.hist_plot.setYRange(0.0, y_high, padding=0.02)
        self._hist_ranges = (exp, x_span, y_high)

    def reading(self, snap) -> str:
        """The sentence that reads the state of the run off its numbers: when each arm reached 90 %
        (or not yet); the lesson's comparison, made where it holds: the unscaled softmax and both
        score gradients at the start, from the same weights; and, later, why the gradients differ
        then (an arm that has learned has a small error, hence a small gradient)."""
        exp = snap.exp
        if snap.steps == 0:
            start = "" if self.page else "press Play. "
            return (f"d_k {exp.d_k}: {start}Both models start from the same weights; the unscaled one "
                    f"multiplies its scores by √{exp.d_k} = {number(math.sqrt(exp.d_k))}.")
        reached = self.reached(snap)
        metrics = ("entropy", "score_grad", "accuracy", "loss")
        first = {arm: {m: early(self.history(snap, arm, m)) for m in metrics} for arm in exp.arms}
        now = {arm: {m: recent(self.history(snap, arm, m)) for m in metrics} for arm in exp.arms}
        told = (f"{TARGET:.0%} accuracy (mean of {WINDOW} batches): <b>scaled</b> "
                f"{reached_text(reached['scaled'], snap.steps)}, <b>unscaled</b> "
                f"{reached_text(reached['unscaled'], snap.steps)} (d_k {exp.d_k}). ")
        un, sc = first["unscaled"], first["scaled"]
        k = min(snap.steps, WINDOW)
        told += (f"At the start (steps 1–{k}), from the same weights, unscaled: entropy {number(un['entropy'])} "
                 f"of {number(math.log(T))} nats — {softmax_state(un['entropy'])}; "
                 f"{gradient_words(sc['score_grad'], un['score_grad'], 'its score gradient', 'the scaled one’s')}.")
        if snap.steps >= 2 * WINDOW:
            un, sc = now["unscaled"], now["scaled"]
            told += (f" Now (last {WINDOW} steps): loss scaled {number(sc['loss'])}, unscaled {number(un['loss'])}; "
                     f"accuracy {sc['accuracy']:.0%} and {un['accuracy']:.0%}; ")
            if un["score_grad"] > 1.5 * sc["score_grad"] and sc["loss"] < un["loss"] - 0.1:
                told += (f"the scaled model’s score gradient is now {un['score_grad'] / sc['score_grad']:.1f}× "
                         f"smaller than the unscaled one’s because it has learned: a gradient shrinks with the "
                         f"error, so the lesson’s comparison is the one at the start.")
            else:
                told += gradient_words(sc["score_grad"], un["score_grad"], "the unscaled score gradient",
                                       "the scaled one’s") + "."
        return told


def early(values, window: int = WINDOW) -> float:
    """The mean of the first ``window`` values (nan when there are none): the run's start."""
    values = list(values[:window])
    return float(np.mean(values)) if values else math.nan


def softmax_state(entropy: float) -> str:
    """How peaked a softmax over T keys is, read off its entropy (nats) against ln T."""
    uniform = math.log(T)
    return ("the softmax is saturated" if entropy < 0.35 * uniform else
            "its softmax is peaked" if entropy < 0.7 * uniform else "its softmax is still spread out")


def gradient_words(scaled: float, unscaled: float, subject: str, other: str) -> str:
    """``subject`` (the unscaled arm's score gradient) against ``other`` (the scaled arm's): "is 4.2×
    smaller than ...", "is 1.8× larger than ...", or "is alike" within a factor 1.5."""
    if not (unscaled > 0 and scaled > 0):
        return f"{subject} is {number(unscaled)}, {other} {number(scaled)}"
    ratio = scaled / unscaled
    if ratio >= 1.5:
        return f"{subject} is {ratio:.1f}× smaller than {other}"
    if ratio <= 1 / 1.5:
        return f"{subject} is {1 / ratio:.1f}× larger than {other}"
    return f"{subject} and {other} are alike (within 1.5×)"
