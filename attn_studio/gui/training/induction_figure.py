"""The figure of "Why two layers": a one-layer and a two-layer attention-only transformer, and the
induction head that only the second can form.

Curves of both arms: the loss on the first copy and on the repeat (with guessing, ln 32), the
previous-token and induction scores; the step where the two-layer model's loss on the repeat
drops is marked. The two-layer model's attention on one sequence, every head of both layers,
with the tokens as letters, and both models' predictions under it. Beside the curves, the
ablation chart (`ablation_chart`): how much silencing each head of the two-layer model adds to
the loss on a held-out batch, read in words under the figure, with the heads the panel's boxes
silence measured beside the intact model and the one-layer model.
"""

from __future__ import annotations

import time

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...training import InductionExperiment
from ...training.ablation import ablated_logits, ablation_study, heldout_batch, needed_text, silenced_text
from ...training.claims import GUESSING, against_guessing
from ...training.induction import HEADS, SEQ_LEN, VOCAB, induction_score
from ..files.sheet import breathe
from ..views.heatmap import Heatmap
from .ablation_chart import AblationChart
from .curves import COLOURS, CurvePlot, recent, smoothed
from .figure import GREY, LabFigure, number, styled, table_text

__all__ = ["InductionFigure", "ALPHABET", "GUESSING", "DEMO_N", "ablation_reading", "demo_sequence", "drop_step",
           "letters", "marked_predictions"]

# The 32 tokens as letters: A-Z, then six digits (all typable).
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
assert len(ALPHABET) == VOCAB
DEMO_N = 10
HEADS_INTERVAL = 0.5  # seconds between redraws of the heads while playing


def demo_sequence(rng: np.random.Generator, n: int = DEMO_N) -> list[int]:
    """n random tokens, the same n again, random filler to 32: a row like the training data."""
    first = rng.integers(0, VOCAB, size=n)
    filler = rng.integers(0, VOCAB, size=SEQ_LEN - 2 * n)
    return np.concatenate([first, first, filler]).tolist()


DEFAULT_TOKENS = tuple(demo_sequence(np.random.default_rng(7)))  # the sequence shown until one is typed


def ablation_reading(study, silenced=None) -> str:
    """The words under the ablation chart: what the bars say (`training.ablation.needed_text`), then the
    heads silenced with the panel's boxes beside the intact model and the one-layer model
    (`training.ablation.silenced_text`), each at the step it was measured; before any measure, how to get one."""
    from .. import presentation

    digits = presentation.digits()
    if study is None and silenced is None:
        return "Silencing heads: measured on a held-out batch whenever the run pauses."
    parts = []
    if study is not None:
        parts.append(f"At step {study.step:,}, on {study.rows} held-out rows: " + needed_text(study, digits=digits))
    if silenced is not None and not np.all(np.asarray(silenced["mask"]) == 1):
        text = silenced_text(silenced["intact"], silenced["silenced"], silenced["mask"], silenced["one_layer"],
                             digits=digits)
        parts.append(text if study is not None and silenced["step"] == study.step
                     else f"At step {silenced['step']:,}: {text}")
    return " ".join(parts)


def drop_step(loss_repeat, threshold: float = GUESSING / 2) -> int | None:
    """The first step whose mean loss on the repeat over the last 20 steps is below ``threshold``
    (ln 32 / 2), or None."""
    values = np.asarray(loss_repeat, dtype=float)
    if values.size < 20:
        return None
    below = np.flatnonzero(smoothed(values)[19:] < threshold)
    return int(below[0]) + 19 if below.size else None


def letters(tokens) -> list[str]:
    """Tokens as the letters the panel shows."""
    return [ALPHABET[t] for t in tokens]


def marked_predictions(tokens, predicted) -> str:
    """Each position's prediction of the next token; right ones green and ticked."""
    right, wrong = "color:#007a3d; font-weight:bold", "color:#999999"
    # Nothing predicts the first token.
    return "· " + styled((ALPHABET[predicted[t - 1]], right if predicted[t - 1] == tokens[t] else wrong)
                         for t in range(1, len(tokens)))


class InductionFigure(LabFigure):
    """One layer vs two layers: loss and head-score curves, every head of the two-layer model."""

    experiment_name = "induction"
    title = "Why two layers"
    page_size = QtCore.QSize(2000, 1400)  # 32 tokens a head, each labelled at 14 px or more

    def _build(self):
        g = self.graphics
        page = self.page
        # The key: each arm's colour, solid for the repeat and the induction score, dashed for the
        # first copy and the previous-token score.
        row = self.key_row([f"{arm}: repeat / induction" for arm in InductionExperiment.arms],
                           [(f"{arm}: first copy / previous token", colour, True)
                            for arm, colour in zip(InductionExperiment.arms, COLOURS)] + [("guessing", GREY, True)],
                           columns=2)  # the bars' colours are named in their plot's title
        # On screen, legends where the curves are not: bottom left (the losses start high), top left
        # (the scores start low).
        self.loss_plot = CurvePlot("Loss: first copy (dashed) and repeat (solid)", "loss (nats)",
                                   legend_offset=None if page else (8, -8), legend_columns=2)
        self.loss_plot.add_line("guessing", GUESSING, f"guessing: ln 32 = {GUESSING:.2f}")
        self.score_plot = CurvePlot("Previous-token (dashed) and induction (solid) score", "score",
                                    y_range=(0.0, 1.0), legend_offset=None if page else (8, 8), legend_columns=2)
        for i, arm in enumerate(InductionExperiment.arms):
            self.loss_plot.add_series(f"{arm}/loss_first", f"{arm}, first copy", COLOURS[i], QtCore.Qt.DashLine)
            self.loss_plot.add_series(f"{arm}/loss_repeat", f"{arm}, repeat", COLOURS[i])
            self.score_plot.add_series(f"{arm}/previous_token", f"{arm}, previous token", COLOURS[i],
                                       QtCore.Qt.DashLine)
            self.score_plot.add_series(f"{arm}/induction", f"{arm}, induction", COLOURS[i])
        self.drop_lines = [plot.add_line("drop", 0.0, "repeat's loss drops", angle=90, colour="#009E73")
                           for plot in (self.loss_plot, self.score_plot)]
        for line in self.drop_lines:
            line.hide()
        breathe()
        self.ablation = AblationChart()
        if page:
            # For the page, the curves and the ablation bars one above the other beside the heads in a
            # square (a row per layer): each head tall enough for every token on its rows and columns.
            for item, place in ((self.loss_plot.plot, (row, 0)), (self.score_plot.plot, (row + 1, 0)),
                                (self.ablation.plot, (row + 2, 0))):
                g.addItem(item, *place)
                breathe()  # each item added lays the grid out again: a turn of the window's export between them
            self.heads_layout = g.addLayout(row, 1, 3, 1)
            g.ci.layout.setColumnStretchFactor(0, 2)
            g.ci.layout.setColumnStretchFactor(1, 3)
        else:
            # The bars third in the row of plots: the stage shows them as the panel's third page.
            for column, item in enumerate((self.loss_plot.plot, self.score_plot.plot, self.ablation.plot)):
                g.addItem(item, row, column)
                breathe()
            self.heads_layout = g.addLayout(row + 1, 0, 1, 3)
            g.ci.layout.setRowStretchFactor(row, 2)
            g.ci.layout.setRowStretchFactor(row + 1, 3)
        self.heads_layout.setSpacing(2)
        self.heatmaps: list[list[Heatmap]] = []
        for layer in range(2):
            heads = []
            for head in range(HEADS):
                breathe()  # a figure built for the window's export: a turn of its event loop between heads
                heatmap = Heatmap(f"two layers: layer {layer + 1} head {head + 1}")
                heatmap.set_axis_titles("query", "key")
                if page:
                    self.heads_layout.addItem(heatmap.plot, layer, head)
                else:
                    self.heads_layout.addItem(heatmap.plot, 0, layer * HEADS + head)
                heads.append(heatmap)
            self.heatmaps.append(heads)
        if page:  # one colour bar for the four heads: the same weights, 0 to 1
            self.heads_layout.addItem(self.weight_bar(self.heatmaps[0][0]), 0, HEADS, 2, 1)
        self.predictions = self.add_table("inductionPredictions")
        self.ablation_text = QtWidgets.QLabel()
        self.ablation_text.setObjectName("ablationReading")
        self.ablation_text.setWordWrap(True)
        self.ablation_text.setTextFormat(QtCore.Qt.PlainText)
        self.figure_layout.addWidget(self.ablation_text)
        if not page:
            # On the stage one plot shows at a time (the others folded away): the words of the bars go
            # with the bars, the sequence's predictions and the run's sentence with the curves.
            for plot in (self.loss_plot.plot, self.score_plot.plot, self.ablation.plot):
                plot.visibleChanged.connect(self._fit_texts)

    def _fit_texts(self) -> None:
        bars = self.ablation.plot.isVisible()
        curves = self.loss_plot.plot.isVisible() or self.score_plot.plot.isVisible()
        self.ablation_text.setVisible(bars)
        for label in (self.predictions, self.sentence):
            label.setVisible(curves or not bars)

    @staticmethod
    def measure(exp, inputs: dict, heavy: bool) -> dict:
        """The sequence's attention and predictions; the per-head induction scores; when ``heavy`` the
        ablation study (every head silenced in turn on the held-out batch); and, when heavy or asked
        for (``inputs["silence_now"]``), the heads ``inputs["silenced"]`` (a (2, 2) mask of the
        two-layer model) silenced together."""
        tokens = np.asarray([inputs.get("tokens", DEFAULT_TOKENS)], dtype=int)
        weights = exp.models["two layers"].attention(tokens)[:, 0]  # (layers, heads, T, T)
        predicted = {arm: np.argmax(exp.models[arm].logits(tokens)[0], axis=-1).tolist() for arm in exp.arms}
        out = {"tokens": tokens[0].tolist(), "weights": weights, "predicted": predicted}
        mask = inputs.get("silenced")
        out["predicted_silenced"] = None
        if mask is not None and not np.all(np.asarray(mask) == 1):
            logits = ablated_logits(exp.models["two layers"], tokens, mask)
            out["predicted_silenced"] = (np.asarray(mask).tolist(), np.argmax(logits[0], axis=-1).tolist())
        if heavy:
            out["ablation"] = ablation_study(exp)
        if mask is not None and (heavy or inputs.get("silence_now")):
            out["silenced"] = InductionFigure.measure_silenced(exp, mask)
        # Per head of the last layer: the induction score on this step's batch (the history keeps the best).
        batch = exp.batch(max(exp.step_count - 1, 0))
        last = exp.models["two layers"].attention(batch["tokens"])[-1]  # (B, heads, T, T)
        out["induction_per_head"] = [induction_score(last[:, h:h + 1], batch["tokens"], batch["n"])
                                     for h in range(last.shape[1])]
        return out

    @staticmethod
    def measure_silenced(exp, mask) -> dict:
        """The two-layer model with the heads of ``mask`` (0 = silenced) out, beside it intact and the
        one-layer model, on the held-out batch: ``{"mask", "step", "silenced", "intact", "one_layer"}``,
        each loss a ``{"loss_repeat", "loss_first"}``."""
        batch = heldout_batch(exp)
        mask = np.asarray(mask, dtype=float)
        return {"mask": mask.tolist(), "step": exp.step_count,
                "silenced": exp.ablate("two layers", batch, mask),
                "intact": exp.ablate("two layers", batch, np.ones_like(mask)),
                "one_layer": exp.ablate("one layer", batch, np.ones((1, HEADS)))}

    # -------------------------------------------------------------- drawing
    def draw_parts(self) -> tuple:
        return (self._draw_losses, self._draw_scores, self._draw_ablation, self._draw_first_layer,
                self._draw_second_layer)

    def _draw_ablation(self, snap):
        extras = snap.extras
        study = extras.get("ablation")
        silenced = extras.get("silenced")
        mask = silenced["mask"] if silenced is not None else None
        self.ablation.show(study, mask)
        self.ablation_text.setText(ablation_reading(study, silenced))

    def _draw_losses(self, snap):
        for arm in snap.exp.arms:
            for metric in ("loss_first", "loss_repeat"):
                self.loss_plot.set(f"{arm}/{metric}", self.history_array(snap, arm, metric))
        drop = drop_step(self.history_array(snap, "two layers", "loss_repeat"))
        for line in self.drop_lines:
            line.setVisible(drop is not None)
            if drop is not None:
                line.setValue(drop)
        for plot in (self.loss_plot, self.score_plot):  # the drop's label where no curve or legend is
            plot.place_labels()
        self.drop = drop

    def _draw_scores(self, snap):
        for arm in snap.exp.arms:
            for metric in ("previous_token", "induction"):
                self.score_plot.set(f"{arm}/{metric}", self.history_array(snap, arm, metric))

    def _draw_first_layer(self, snap):
        # Four 32 × 32 heatmaps cost more to paint than every curve: while playing they follow at most
        # twice a second, a layer per turn of the event loop; when paused, at once.
        now = time.monotonic()
        extras = snap.extras
        fresh = not snap.playing or now - self._heads_drawn >= HEADS_INTERVAL
        if "weights" in extras and fresh and extras is not self._heads_extras:
            self._heads_drawn, self._heads_extras = now, extras
            self._draw_layer(0, extras)
            self._second_due = True

    def _draw_second_layer(self, snap):
        if self._second_due or not snap.playing:
            self._second_due = False
            extras = self._heads_extras if self._heads_extras is not None else snap.extras
            if "weights" not in extras:
                return
            self._draw_layer(1, extras)
            tokens = extras["tokens"]
            rows = [("sequence", " ".join(letters(tokens)))]
            rows += [(f"{arm} predicts", marked_predictions(tokens, extras["predicted"][arm]))
                     for arm in snap.exp.arms]
            if extras.get("predicted_silenced") is not None:
                mask, predicted = extras["predicted_silenced"]
                out = "+".join(f"{l + 1}.{h + 1}" for l, h in np.argwhere(np.asarray(mask) == 0))
                rows.append((f"without {out}", marked_predictions(tokens, predicted)))
            self.predictions.setText(table_text(rows))

    def _draw_layer(self, layer: int, extras: dict):
        tokens = extras["tokens"]
        labels = letters(tokens)
        weights = np.asarray(extras["weights"])
        causal = np.triu(np.ones((len(tokens), len(tokens)), bool), 1)
        for head, heatmap in enumerate(self.heatmaps[layer]):
            heatmap.set_data(weights[layer, head], masked=causal, row_labels=labels, col_labels=labels,
                             levels=(0.0, 1.0))

    def reading(self, snap) -> str:
        """The sentence that reads the run: the best second-layer head's induction score, the two
        models' losses on the repeat against guessing (ln 32), the step the repeat's loss dropped."""
        if snap.steps == 0:
            start = "" if self.page else "Press Play. "
            return (f"{start}Each row is a random stretch, the same stretch again, then filler: the repeat can be "
                    "predicted only by finding the earlier copy.")
        one = recent(self.history(snap, "one layer", "loss_repeat"))
        two = recent(self.history(snap, "two layers", "loss_repeat"))
        per_head = snap.extras.get("induction_per_head") or [recent(self.history(snap, "two layers", "induction"))]
        best = int(np.argmax(per_head))
        share = per_head[best]
        head = f"layer 2 head {best + 1}"
        if share >= 0.5:
            text = (f"{head} now sends {share:.0%} of its attention to the token after the earlier copy: "
                    f"an induction head (repeat loss {number(two)} nats)")
        else:
            text = (f"{head} sends {share:.0%} of its attention to the token after the earlier copy: no induction "
                    f"head yet (repeat loss {number(two)} nats)")
        where = against_guessing(one)
        text += (f"; the one-layer model's repeat loss is {number(one)}, {where} guessing (ln 32 = {number(GUESSING)})"
                 if where != "at" else
                 f"; the one-layer model is guessing on the repeat ({number(one)}, ln 32 = {number(GUESSING)})")
        if where == "below" and two < one:
            text += f" and above the two-layer model's {number(two)}"
        text += "."
        drop = drop_step(self.history_array(snap, "two layers", "loss_repeat"))
        if drop is not None:
            text += f" The two-layer model's repeat loss fell below ln 32 / 2 at step {drop:,}."
        return text

    drop: int | None = None
    _heads_drawn = 0.0
    _heads_extras = None
    _second_due = False
