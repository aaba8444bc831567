""""Why two layers": a one-layer and a two-layer attention-only transformer, and the induction head
that only the second can form (`training.InductionExperiment`).

Curves of both arms: the loss on the first copy and on the repeat (with ln 32, guessing), the
previous-token and induction scores; the step where the two-layer model's loss on the repeat
drops is marked. The two-layer model's attention on one sequence, every head of both layers,
with the tokens as letters; the sequence can be typed or drawn at random, and both models'
predictions are shown under it.
"""

from __future__ import annotations

import math
import time

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...training import InductionExperiment
from ...training.induction import HEADS, SEQ_LEN, VOCAB, induction_score
from ..views.heatmap import Heatmap
from .curves import COLOURS, CurvePlot, recent, smoothed
from .panel import LabPanel

__all__ = ["InductionPanel", "ALPHABET", "parse_letters", "drop_step"]

# The 32 tokens as letters: A-Z, then six digits (all typable).
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
assert len(ALPHABET) == VOCAB
GUESSING = math.log(VOCAB)
DEMO_N = 10
HEADS_INTERVAL = 0.5  # seconds between redraws of the heads while playing


def parse_letters(text: str) -> list[int]:
    """Tokens from typed letters (A-Z, 0-5; spaces ignored, case ignored); ValueError says what is wrong."""
    letters = [c for c in text.upper() if not c.isspace()]
    if len(letters) < 2:
        raise ValueError("type at least two tokens (letters A–Z or digits 0–5)")
    if len(letters) > SEQ_LEN:
        raise ValueError(f"{len(letters)} tokens is too long: at most {SEQ_LEN}")
    bad = sorted({c for c in letters if c not in ALPHABET})
    if bad:
        raise ValueError(f"{', '.join(repr(c) for c in bad)} not a token: the tokens are A–Z and 0–5")
    return [ALPHABET.index(c) for c in letters]


def demo_sequence(rng: np.random.Generator, n: int = DEMO_N) -> list[int]:
    """n random tokens, the same n again, random filler to 32: a row like the training data."""
    first = rng.integers(0, VOCAB, size=n)
    filler = rng.integers(0, VOCAB, size=SEQ_LEN - 2 * n)
    return np.concatenate([first, first, filler]).tolist()


def drop_step(loss_repeat, threshold: float = GUESSING / 2) -> int | None:
    """The first step whose mean loss on the repeat over the last 20 steps is below ``threshold``
    (ln 32 / 2), or None."""
    values = np.asarray(loss_repeat, dtype=float)
    if values.size < 20:
        return None
    below = np.flatnonzero(smoothed(values)[19:] < threshold)
    return int(below[0]) + 19 if below.size else None


def _letters(tokens) -> list[str]:
    return [ALPHABET[t] for t in tokens]


def marked_predictions(tokens, predicted) -> str:
    """Each position's prediction of the next token; right ones green and ticked."""
    cells = ["·"]  # nothing predicts the first token
    for t in range(1, len(tokens)):
        guess = ALPHABET[predicted[t - 1]]
        if predicted[t - 1] == tokens[t]:
            cells.append(f"<span style='color:#007a3d'><b>{guess}</b></span>")
        else:
            cells.append(f"<span style='color:#999999'>{guess}</span>")
    return " ".join(cells)


class InductionPanel(LabPanel):
    """One layer vs two layers: loss and head-score curves, every head of the two-layer model."""

    experiment_name = "induction"
    title = "Why two layers"
    default_lr = InductionExperiment.lr

    def _add_controls(self):
        self._tokens = demo_sequence(np.random.default_rng(7))
        self._rng = np.random.default_rng()

    def _make(self):
        return InductionExperiment(seed=self._seed, lr=self._lr)

    @property
    def tokens(self) -> list[int]:
        return list(self._tokens)

    # -------------------------------------------------------------- figure
    def _build_figure(self):
        g = self.graphics
        # Legends where the curves are not: bottom left (the losses start high), top left (the scores start low).
        self.loss_plot = CurvePlot("Loss: first copy (dashed) and repeat (solid)", "loss (nats)",
                                   legend_offset=(8, -8), legend_columns=2)
        self.loss_plot.add_line("guessing", GUESSING, f"guessing: ln 32 = {GUESSING:.2f}")
        self.score_plot = CurvePlot("Previous-token (dashed) and induction (solid) score", "score",
                                    y_range=(0.0, 1.0), legend_offset=(8, 8), legend_columns=2)
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
        g.addItem(self.loss_plot.plot, 0, 0)
        g.addItem(self.score_plot.plot, 0, 1)
        self.heads_layout = g.addLayout(1, 0, 1, 2)
        self.heads_layout.setSpacing(2)
        self.heatmaps: list[list[Heatmap]] = []
        for layer in range(2):
            row = []
            for head in range(HEADS):
                heatmap = Heatmap(f"two layers: layer {layer + 1} head {head + 1}")
                heatmap.set_axis_titles("query", "key")
                self.heads_layout.addItem(heatmap.plot, 0, layer * HEADS + head)
                row.append(heatmap)
            self.heatmaps.append(row)
        g.ci.layout.setRowStretchFactor(0, 2)
        g.ci.layout.setRowStretchFactor(1, 3)

        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("Sequence (A–Z, 0–5):"))
        self.sequence_edit = QtWidgets.QLineEdit("".join(_letters(self._tokens)))
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
        self.figure_layout.addLayout(row)
        self.predictions = QtWidgets.QLabel()
        self.predictions.setObjectName("inductionPredictions")
        self.predictions.setTextFormat(QtCore.Qt.RichText)
        self.predictions.setStyleSheet("font-family: monospace;")
        self.figure_layout.addWidget(self.predictions)

    def set_sequence_text(self, text: str) -> bool:
        """Show the attention and predictions for a typed sequence; bad input is refused with a
        message and the old sequence stays."""
        try:
            tokens = parse_letters(text)
        except ValueError as exc:
            self.show_message(f"Sequence not changed: {exc}")
            self.sequence_edit.setText("".join(_letters(self._tokens)))
            return False
        self.clear_message()
        self.set_sequence(tokens)
        return True

    def set_sequence(self, tokens) -> None:
        self._tokens = [int(t) for t in tokens]
        self.sequence_edit.setText("".join(_letters(self._tokens)))
        self.runner.set_inputs(tokens=list(self._tokens))

    def random_sequence(self) -> None:
        n = int(self._rng.integers(6, 17))
        self.set_sequence(demo_sequence(self._rng, n))

    # -------------------------------------------------------------- worker
    def extras(self, exp, inputs: dict, heavy: bool) -> dict:
        tokens = np.asarray([inputs.get("tokens", self._tokens)], dtype=int)
        weights = exp.models["two layers"].attention(tokens)[:, 0]  # (layers, heads, T, T)
        predicted = {arm: np.argmax(exp.models[arm].logits(tokens)[0], axis=-1).tolist() for arm in exp.arms}
        out = {"tokens": tokens[0].tolist(), "weights": weights, "predicted": predicted}
        # Per head of the last layer: the induction score on this step's batch (the history keeps the best).
        batch = exp.batch(max(exp.step_count - 1, 0))
        last = exp.models["two layers"].attention(batch["tokens"])[-1]  # (B, heads, T, T)
        out["induction_per_head"] = [induction_score(last[:, h:h + 1], batch["tokens"], batch["n"])
                                     for h in range(last.shape[1])]
        return out

    # -------------------------------------------------------------- drawing
    def draw_parts(self) -> tuple:
        return (self._draw_losses, self._draw_scores, self._draw_first_layer, self._draw_second_layer)

    def _draw_losses(self, snap):
        for arm in snap.exp.arms:
            for metric in ("loss_first", "loss_repeat"):
                self.loss_plot.set(f"{arm}/{metric}", self.history_array(snap, arm, metric))
        drop = drop_step(self.history_array(snap, "two layers", "loss_repeat"))
        for line in self.drop_lines:
            line.setVisible(drop is not None)
            if drop is not None:
                line.setValue(drop)
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
            rows = [("sequence", " ".join(_letters(tokens)))]
            rows += [(f"{arm} predicts", marked_predictions(tokens, extras["predicted"][arm]))
                     for arm in snap.exp.arms]
            self.predictions.setText("<table cellspacing='2'>" + "".join(
                f"<tr><td style='padding-right:10px'>{name}</td><td>{text}</td></tr>" for name, text in rows)
                + "</table>")

    def _draw_layer(self, layer: int, extras: dict):
        tokens = extras["tokens"]
        labels = _letters(tokens)
        weights = np.asarray(extras["weights"])
        causal = np.triu(np.ones((len(tokens), len(tokens)), bool), 1)
        for head, heatmap in enumerate(self.heatmaps[layer]):
            heatmap.set_data(weights[layer, head], masked=causal, row_labels=labels, col_labels=labels,
                             levels=(0.0, 1.0))

    def reading(self, snap) -> str:
        if snap.steps == 0:
            return ("Press Play. Each row is a random stretch, the same stretch again, then filler: the repeat can be "
                    "predicted only by finding the earlier copy.")
        one = recent(self.history(snap, "one layer", "loss_repeat"))
        two = recent(self.history(snap, "two layers", "loss_repeat"))
        per_head = snap.extras.get("induction_per_head") or [recent(self.history(snap, "two layers", "induction"))]
        best = int(np.argmax(per_head))
        share = per_head[best]
        head = f"layer 2 head {best + 1}"
        if share >= 0.5:
            text = (f"{head} now sends {share:.0%} of its attention to the token after the earlier copy: "
                    f"an induction head (repeat loss {two:.2f} nats)")
        else:
            text = (f"{head} sends {share:.0%} of its attention to the token after the earlier copy: no induction "
                    f"head yet (repeat loss {two:.2f} nats)")
        guess = "still guessing on the repeat" if one > 0.8 * GUESSING else "only partly predicting the repeat"
        text += f"; the one-layer model is {guess} ({one:.2f} of ln 32 = {GUESSING:.2f})."
        if self.drop is not None:
            text += f" The two-layer model's repeat loss fell below ln 32 / 2 at step {self.drop:,}."
        return text

    drop: int | None = None
    _heads_drawn = 0.0
    _heads_extras = None
    _second_due = False
