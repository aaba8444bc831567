""""Why two layers": watch an induction head form (Elhage et al. 2021; Olsson et al. 2022).

Each training row is a random stretch of tokens followed by the same stretch again, then
random filler. The first copy cannot be predicted (it is uniform noise, ln 32 nats a token),
but once the repeat has started every next token can be read off the first copy: find the
earlier occurrence of the current token and copy the token that followed it. That is an
induction head, and it needs two attention layers that compose: a first-layer head writes
"my previous token was A" into each position (a previous-token head), and a second-layer head
whose keys read that (K-composition) attends from the current A to the position after the
earlier A and copies what is there.

Two arms train on the very same batches from the same initial arrays: "one layer" and "two
layers", attention-only transformers (`transformer.AttentionOnlyTransformer`). The two-layer
model's loss on the repeat sits near ln 32 for a while, then falls within a few hundred steps
as both heads form together, a phase change; the one-layer model can only learn bigram-like
statistics of the current token and never learns to copy from context.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .experiment import STREAM_BATCH, Experiment, TrainingError, check_int
from .transformer import AttentionOnlyTransformer

__all__ = [
    "InductionExperiment",
    "InductionModel",
    "induction_score",
    "make_induction_batch",
    "previous_token_score",
    "repeat_losses",
]

VOCAB = 32          # tokens 0..31
SEQ_LEN = 32        # T, also the number of position embeddings
BATCH_SIZE = 32
N_MIN, N_MAX = 6, 16  # length n of the repeated stretch, drawn per row (2 n <= T)
D_MODEL = 32
HEADS = 2
D_HEAD = 16


# --- data ------------------------------------------------------------------------------

def make_induction_batch(rng: np.random.Generator, batch_size: int = BATCH_SIZE,
                         seq_len: int = SEQ_LEN, vocab: int = VOCAB,
                         n_range: tuple[int, int] = (N_MIN, N_MAX)) -> dict[str, np.ndarray]:
    """``{"tokens": int (B, T), "n": int (B,)}``: per row, x_1..x_n, x_1..x_n again, filler.

    n is drawn uniformly from ``n_range`` (both ends included) for each row separately: with
    one fixed n a model could predict the repeat from the position alone, not from context.
    Tokens are uniform over the vocabulary, repeats allowed.
    """
    lo, hi = n_range
    if not 2 <= lo <= hi or 2 * hi > seq_len:
        raise TrainingError(f"n_range {n_range} must satisfy 2 <= low <= high and 2 * high <= "
                            f"seq_len={seq_len}")
    n = rng.integers(lo, hi + 1, size=batch_size)
    fresh = rng.integers(0, vocab, size=(batch_size, seq_len))
    # Position t of the repeat (n <= t < 2n) reads position t - n of the first copy.
    t = np.arange(seq_len)
    in_repeat = (t >= n[:, None]) & (t < 2 * n[:, None])
    source = np.where(in_repeat, t - n[:, None], t)
    tokens = np.take_along_axis(fresh, source, axis=1)
    return {"tokens": tokens, "n": n}


def _check_batch(batch) -> tuple[np.ndarray, np.ndarray]:
    """The batch's (tokens, n), or a TrainingError naming what is wrong."""
    if not isinstance(batch, Mapping) or "tokens" not in batch or "n" not in batch:
        raise TrainingError('an induction batch is a dict {"tokens": int (B, T), "n": int (B,)}')
    try:
        tokens, n = np.asarray(batch["tokens"]), np.asarray(batch["n"])
    except ValueError:  # ragged rows
        raise TrainingError('batch["tokens"] must be rows of one length') from None
    if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
        raise TrainingError(f'batch["tokens"] must be an integer array (B, T), got '
                            f"{tokens.dtype} {tokens.shape}")
    if n.shape != (tokens.shape[0],) or not np.issubdtype(n.dtype, np.integer):
        raise TrainingError(f'batch["n"] must be an integer array ({tokens.shape[0]},), got '
                            f"{n.dtype} {n.shape}")
    # n >= 2: with one token there is nothing to predict within the copy.
    if n.size and (n.min() < 2 or 2 * n.max() > tokens.shape[1]):
        raise TrainingError(f'batch["n"] must lie in 2..{tokens.shape[1] // 2} (the repeat must '
                            f"fit in T={tokens.shape[1]})")
    return tokens, n


# --- measures --------------------------------------------------------------------------

def repeat_losses(losses: np.ndarray, n: np.ndarray) -> tuple[float, float]:
    """``(loss_first, loss_repeat)`` from per-position losses (B, T-1) and the rows' n.

    Position t predicts token t + 1. loss_first: the mean over every row's positions
    0 .. n-2 (predicting x_2..x_n the first time); loss_repeat: positions n .. 2n-2
    (predicting x_2..x_n in the repeat). Both are means over all such (row, position) pairs.
    """
    t = np.arange(losses.shape[1])
    n = np.asarray(n)[:, None]
    first = t <= n - 2
    repeat = (t >= n) & (t <= 2 * n - 2)
    return float(losses[first].mean()), float(losses[repeat].mean())


def previous_token_score(weights: np.ndarray) -> float:
    """How much a layer's best head attends to the previous token.

    ``weights`` (B, heads, T, T), one layer's attention. For each head, the mean over rows and
    query positions i >= 1 of weights[i, i-1]; the largest over heads. 1 is a perfect
    previous-token head, about 1/(i+1) a uniform causal one.
    """
    t = weights.shape[-1]
    i = np.arange(1, t)
    per_head = weights[:, :, i, i - 1].mean(axis=(0, 2))
    return float(per_head.max())


def induction_score(weights: np.ndarray, tokens: np.ndarray, n: np.ndarray) -> float:
    """How much a layer's best head attends where an induction head would.

    ``weights`` (B, heads, T, T), one layer's attention; ``tokens`` (B, T); ``n`` (B,). For each
    query i in the repeat (n <= i <= 2n-1), the weight it puts on positions j <= i whose
    previous token equals token i (the tokens that followed an earlier occurrence of it),
    summed over j; averaged over those queries of every row; the largest over heads. 1 is a
    perfect induction head.
    """
    tokens = np.asarray(tokens)
    b, t = tokens.shape
    i = np.arange(t)[:, None]
    j = np.arange(t)[None, :]
    n = np.asarray(n)[:, None]
    # counted[b, i, j]: i is a query of the repeat, j <= i, and the token before j is token i.
    previous = np.concatenate([np.full((b, 1), -1), tokens[:, :-1]], axis=1)
    queries = (i.T >= n) & (i.T <= 2 * n - 1)                                  # (B, T)
    counted = (previous[:, None, :] == tokens[:, :, None]) & (j <= i) & queries[:, :, None]
    # Per row and head, the weight on counted cells, as one product over the T·T cells.
    on_counted = weights.reshape(b, -1, t * t) @ counted.reshape(b, t * t, 1).astype(float)
    per_head = on_counted.sum(axis=(0, 2)) / queries.sum()
    return float(per_head.max())


# --- the model and the experiment ------------------------------------------------------

class InductionModel(AttentionOnlyTransformer):
    """An attention-only transformer that trains on induction batches.

    ``logits(tokens)`` (B, T, 32), ``attention(tokens)`` (layers, B, heads, T, T),
    ``loss(batch)``, ``loss_and_grads(batch)`` and ``measure(batch)`` (the five metrics and the
    gradients, from one forward and one backward pass).
    """

    def loss(self, batch) -> float:
        """Mean next-token cross-entropy (nats) over positions 0..T-2; no side effect."""
        tokens, _ = _check_batch(batch)
        return float(self.losses(tokens).mean())

    def loss_and_grads(self, batch) -> tuple[float, dict[str, np.ndarray]]:
        """``(loss, {name: gradient})`` at the current params."""
        tokens, _ = _check_batch(batch)
        losses, grads, _ = self.losses_and_grads(tokens)
        return float(losses.mean()), grads

    def measure(self, batch) -> tuple[dict[str, float], dict[str, np.ndarray]]:
        """``(metrics, grads)`` on ``batch`` at the current params.

        metrics: "loss", "loss_first", "loss_repeat", "previous_token" (the first layer's
        heads), "induction" (the last layer's heads); see `repeat_losses`,
        `previous_token_score` and `induction_score`.
        """
        tokens, n = _check_batch(batch)
        losses, grads, weights = self.losses_and_grads(tokens)
        loss_first, loss_repeat = repeat_losses(losses, n)
        metrics = {
            "loss": float(losses.mean()),
            "loss_first": loss_first,
            "loss_repeat": loss_repeat,
            "previous_token": previous_token_score(weights[0]),
            "induction": induction_score(weights[-1], tokens, n),
        }
        return metrics, grads


class InductionExperiment(Experiment):
    """"Why two layers": a one-layer and a two-layer attention-only transformer side by side.

    ``InductionExperiment(seed=0)``; arms "one layer" and "two layers". Both start from the
    same token and position embeddings, unembedding and first layer (the two-layer arm has
    one layer more) and train on ``batch(step)`` (`make_induction_batch`, 32 rows of 32
    tokens) with Adam, lr 3e-3, betas (0.9, 0.98). Metrics per step, on that step's batch
    before its update: "loss", "loss_first", "loss_repeat", "previous_token", "induction".
    """

    arms = ("one layer", "two layers")
    metrics = ("loss", "loss_first", "loss_repeat", "previous_token", "induction")
    lr = 3e-3
    betas = (0.9, 0.98)
    eps = 1e-8
    clip_norm = None
    default_steps = 2000  # the phase change comes around step 1,000-1,500

    def _build_models(self, rng: np.random.Generator) -> dict[str, InductionModel]:
        def normal(rows: int, cols: int) -> np.ndarray:
            # N(0, 1/32): variance 1/d_model for the embeddings, W_U, W_Q, W_K, W_V, and
            # 1/(heads·d_head), also 1/32, for W_O.
            return rng.normal(0.0, 1.0 / np.sqrt(32), size=(rows, cols))

        two = {"W_E": normal(VOCAB, D_MODEL), "W_pos": normal(SEQ_LEN, D_MODEL)}
        for layer in range(2):
            for name in ("W_Q", "W_K", "W_V"):
                two[f"layer{layer}.{name}"] = normal(D_MODEL, HEADS * D_HEAD)
            two[f"layer{layer}.W_O"] = normal(HEADS * D_HEAD, D_MODEL)
        two["W_U"] = normal(D_MODEL, VOCAB)
        # The one-layer arm starts from copies of the same arrays (each arm updates its own
        # in place), so the second layer is the only difference between the arms.
        one = {name: a.copy() for name, a in two.items() if not name.startswith("layer1.")}
        return {"one layer": InductionModel(one, layers=1, heads=HEADS),
                "two layers": InductionModel(two, layers=2, heads=HEADS)}

    def batch(self, step: int) -> dict[str, np.ndarray]:
        """The batch of ``step``: a function of (seed, step) only, the same before or after
        training. ``{"tokens": int (32, 32), "n": int (32,)}``."""
        step = check_int("step", step, 0)
        return make_induction_batch(self.rng(STREAM_BATCH, step))

    def ablate(self, arm: str, batch, head_mask) -> dict[str, float]:
        """``{"loss_repeat": float, "loss_first": float}``: the metrics of ``arm`` on ``batch`` (a
        `make_induction_batch` dict) with each head whose ``head_mask[l, h]`` is 0 silenced (its
        output zeroed before W_O). See `training.ablation`."""
        from .ablation import ablate  # the ablations import this module

        return ablate(self, arm, batch, head_mask)

    def heldout_batch(self) -> dict[str, np.ndarray]:
        """A fixed held-out batch of this seed (never trained on), for ablations: `ablation.heldout_batch`."""
        from .ablation import heldout_batch

        return heldout_batch(self)
