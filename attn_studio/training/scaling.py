"""Why attention divides by sqrt(d_k): the same model trained with and without the scale.

The task is associative recall. A vocabulary of 64 tokens has fixed random embeddings (d_model 32,
not trained): tokens 0..55 are keys, 56..63 the labels of 8 classes. An example shows T = 32
distinct keys, each paired with a label; the query is one of the keys and the answer is its label.
One attention layer solves it: the query must find its own key among the 32 (q = x Wq,
k_j = x_j Wk), and the value at each key is its label's embedding, read out by a linear layer.

With d_k 64, q·k_j has a standard deviation of about sqrt(d_k) times that of a scaled score, the
softmax starts saturated on an arbitrary key and its gradient vanishes: the unscaled arm sits near
chance for hundreds of steps while the scaled arm learns. Adam is used on purpose: with plain SGD
the unscaled parameter gradients, sqrt(d_k) larger, make up for the saturated softmax and hide it.
"""

from __future__ import annotations

import numpy as np

from .experiment import STREAM_BATCH, Experiment, TrainingError, check_int
from .layers import cross_entropy, cross_entropy_backward, log_softmax, softmax, softmax_backward

__all__ = ["ScalingExperiment", "ScalingModel", "VOCAB", "D_MODEL", "N_KEYS", "N_CLASSES", "T", "BATCH"]

VOCAB = 64        # tokens 0..55 are keys, 56..63 the labels of the 8 classes
N_KEYS = 56
N_CLASSES = 8
D_MODEL = 32
T = 32            # keys per example
BATCH = 32
MAX_D_K = 4096


class ScalingModel:
    """One attention layer over T keys, its values the keys' label embeddings, then a linear read-out.

    ``params``: "Wq", "Wk" (d_model × d_k), "Wo" (d_model × 8), "bo" (8); ``embeddings`` (64 × 32)
    is fixed. ``scaled`` chooses s_j = q·k_j / sqrt(d_k) or q·k_j.
    """

    def __init__(self, embeddings: np.ndarray, params: dict[str, np.ndarray], scaled: bool):
        self.embeddings = embeddings
        self.params = params
        self.scaled = bool(scaled)
        self.d_k = params["Wq"].shape[1]

    @property
    def scale(self) -> float:
        """The factor on q·k: 1/sqrt(d_k) in the scaled arm, 1 in the unscaled arm."""
        return 1.0 / np.sqrt(self.d_k) if self.scaled else 1.0

    def _inputs(self, batch):
        keys, labels = np.asarray(batch["keys"]), np.asarray(batch["labels"])
        query, target = np.asarray(batch["query"]), np.asarray(batch["target"])
        if keys.ndim != 2 or labels.shape != keys.shape or query.shape != (keys.shape[0],) \
                or target.shape != query.shape:
            raise TrainingError("a scaling batch needs keys and labels (B, T), query and target (B,), "
                                f"got {keys.shape}, {labels.shape}, {query.shape}, {target.shape}")
        for name, arr, high in (("keys", keys, VOCAB), ("query", query, VOCAB), ("labels", labels, N_CLASSES),
                                ("target", target, N_CLASSES)):
            if not np.issubdtype(arr.dtype, np.integer) or (arr.size and (arr.min() < 0 or arr.max() >= high)):
                raise TrainingError(f"batch {name} must be integers in 0..{high - 1}")
        return keys, labels, query, target

    def _forward(self, batch):
        keys, labels, query, target = self._inputs(batch)
        p, E = self.params, self.embeddings
        x_query = E[query]                                   # (B, D)
        x_keys = E[keys]                                     # (B, T, D)
        values = E[N_KEYS + labels]                          # (B, T, D): each key's label embedding
        q = x_query @ p["Wq"]                                # (B, d_k)
        # q·k_j = q·(x_j Wk) = x_j·(Wk q): pull the query back to d_model once instead of
        # projecting all T keys to d_k (T times less work at d_k 256, the same numbers).
        q_back = q @ p["Wk"].T                               # (B, D)
        scores = np.einsum("btd,bd->bt", x_keys, q_back) * self.scale  # as they enter the softmax
        weights = softmax(scores, axis=-1)
        context = np.einsum("bt,btd->bd", weights, values)
        logits = context @ p["Wo"] + p["bo"]
        return dict(x_query=x_query, x_keys=x_keys, values=values, q=q, q_back=q_back, scores=scores,
                    weights=weights, context=context, logits=logits, target=target)

    def attention(self, batch) -> tuple[np.ndarray, np.ndarray]:
        """(scores, weights), each (B, T): the query's scores over the keys as they enter the
        softmax (after the 1/sqrt(d_k) in the scaled arm), and their softmax."""
        f = self._forward(batch)
        return f["scores"], f["weights"]

    def logits(self, batch) -> np.ndarray:
        """(B, 8): the class scores of each example."""
        return self._forward(batch)["logits"]

    def loss(self, batch) -> float:
        """Mean cross-entropy (nats) at the current params; changes nothing."""
        f = self._forward(batch)
        return cross_entropy(f["logits"], f["target"])[0]

    def loss_and_grads(self, batch) -> tuple[float, dict[str, np.ndarray]]:
        """(loss, {name: d loss / d params[name]}) by backpropagation."""
        loss, grads, _ = self._backward(self._forward(batch))
        return loss, grads

    def _backward(self, f):
        p = self.params
        B = f["logits"].shape[0]
        loss, probs = cross_entropy(f["logits"], f["target"])
        d_logits = cross_entropy_backward(probs, f["target"])        # (B, 8), carries the 1/B
        d_Wo = f["context"].T @ d_logits
        d_bo = d_logits.sum(axis=0)
        d_context = d_logits @ p["Wo"].T                              # (B, D)
        d_weights = np.einsum("btd,bd->bt", f["values"], d_context)
        d_scores = softmax_backward(d_weights, f["weights"])          # (B, T)
        d_qk = d_scores * self.scale                                  # at q·k_j
        d_q_back = np.einsum("bt,btd->bd", d_qk, f["x_keys"])        # (B, D)
        d_Wk = d_q_back.T @ f["q"]                                    # q_back = q Wk^T
        d_q = d_q_back @ p["Wk"]
        d_Wq = f["x_query"].T @ d_q
        grads = {"Wq": d_Wq, "Wk": d_Wk, "Wo": d_Wo, "bo": d_bo}
        # Example b's own loss l_b = B * (its share of the mean): d l_b / d s_b = B * d_scores[b].
        return loss, grads, d_scores * B

    def measure(self, batch) -> tuple[dict[str, float], dict[str, np.ndarray]]:
        """The step's metrics on ``batch`` and the gradients, both at the current params."""
        f = self._forward(batch)
        loss, grads, d_scores_each = self._backward(f)
        scores, weights = f["scores"], f["weights"]
        entropy = -np.sum(weights * log_softmax(scores, axis=-1), axis=-1)
        metrics = {
            "loss": loss,
            "accuracy": float(np.mean(np.argmax(f["logits"], axis=-1) == f["target"])),
            "entropy": float(np.mean(entropy)),
            "score_grad": float(np.mean(np.linalg.norm(d_scores_each, axis=-1))),
            "score_spread": float(np.mean(np.std(scores, axis=-1))),
        }
        return metrics, grads


class ScalingExperiment(Experiment):
    """"Why sqrt(d_k)": arms "scaled" and "unscaled", the same initial weights, the same batches.

    ``ScalingExperiment(d_k=64, seed=0)``. Batches of 32 associative-recall examples, fresh each step
    from (seed, step); Adam lr 3e-4, betas (0.9, 0.999), eps 1e-8, no clipping. Metrics per step
    (on that step's batch, before its update): loss, accuracy, entropy, score_grad, score_spread.
    """

    arms = ("scaled", "unscaled")
    metrics = ("loss", "accuracy", "entropy", "score_grad", "score_spread")
    lr = 3e-4
    betas = (0.9, 0.999)
    eps = 1e-8
    clip_norm = None

    def __init__(self, d_k: int = 64, seed: int = 0, lr: float | None = None):
        self.d_k = check_int("d_k", d_k, 1, MAX_D_K)
        super().__init__(seed, lr=lr)

    def _build_models(self, rng):
        embeddings = rng.standard_normal((VOCAB, D_MODEL))
        std = 1.0 / np.sqrt(D_MODEL)  # N(0, 1/d_model)
        Wq = rng.standard_normal((D_MODEL, self.d_k)) * std
        Wk = rng.standard_normal((D_MODEL, self.d_k)) * std
        self.embeddings = embeddings
        models = {}
        for arm in self.arms:
            params = {"Wq": Wq.copy(), "Wk": Wk.copy(), "Wo": np.zeros((D_MODEL, N_CLASSES)),
                      "bo": np.zeros(N_CLASSES)}
            models[arm] = ScalingModel(embeddings, params, scaled=(arm == "scaled"))
        return models

    def batch(self, step: int) -> dict[str, np.ndarray]:
        """32 examples: "keys" (B, T) distinct key tokens, "labels" (B, T) their classes 0..7,
        "query" (B,) one of the keys (a token), "target" (B,) its class."""
        step = check_int("step", step)
        rng = self.rng(STREAM_BATCH, step)
        keys = np.argsort(rng.random((BATCH, N_KEYS)), axis=1)[:, :T]   # T distinct keys per row
        labels = rng.integers(0, N_CLASSES, size=(BATCH, T))
        where = rng.integers(0, T, size=BATCH)
        rows = np.arange(BATCH)
        return {"keys": keys, "labels": labels, "query": keys[rows, where], "target": labels[rows, where]}

