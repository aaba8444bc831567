"""The layers the training lab's models are built from, each a forward function and its backward.

NumPy float64, no autograd: every forward returns what its backward needs, and every backward
returns the gradients of the loss with respect to the forward's inputs and weights. A model chains
them by hand, so a lecturer can read each line of backpropagation. The gradients are checked
against central differences in the tests (`attn_studio.training.gradcheck`).

Shapes: a leading batch axis (or several) is allowed wherever a row vector is; weights act on the
last axis.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

__all__ = [
    "softmax", "softmax_backward", "log_softmax",
    "cross_entropy", "cross_entropy_backward", "token_losses",
    "linear", "linear_backward",
    "rnn_step", "rnn_step_backward",
    "tanh", "additive_attention", "additive_attention_backward",
    "Adam", "clip_by_global_norm", "global_norm",
]


# ------------------------------------------------------------------------------------- softmax

def softmax(x: np.ndarray, axis: int = -1, mask: np.ndarray | None = None) -> np.ndarray:
    """Stable softmax of ``x`` along ``axis``.

    ``mask`` (boolean, broadcastable to ``x``): True where an entry may be attended to. Masked
    entries get weight exactly 0; a row with every entry masked gets all zeros (not NaN), so a
    causal or padding mask never poisons the batch.
    """
    x = np.asarray(x, dtype=np.float64)
    if mask is not None:
        mask = np.broadcast_to(np.asarray(mask, dtype=bool), x.shape)
        x = np.where(mask, x, -np.inf)
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)  # a fully masked row: keep exp(-inf) = 0
    e = np.exp(x - peak)
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0.0, total, 1.0)


def softmax_backward(d_weights: np.ndarray, weights: np.ndarray, axis: int = -1) -> np.ndarray:
    """Gradient at the softmax input from the gradient at its output ``weights``.

    d x_i = w_i (d w_i - sum_j w_j d w_j): the softmax Jacobian applied without forming it.
    Masked entries (weight 0) get gradient 0, as they should.
    """
    inner = np.sum(d_weights * weights, axis=axis, keepdims=True)
    return weights * (d_weights - inner)


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """log(softmax(x)) computed without taking the log of a rounded-to-zero weight."""
    x = np.asarray(x, dtype=np.float64)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


# -------------------------------------------------------------------------------- cross-entropy

def _check_targets(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    targets = np.asarray(targets)
    if logits.ndim != 2:
        raise ValueError(f"logits must be (N, C), got shape {logits.shape}")
    if targets.shape != (logits.shape[0],):
        raise ValueError(f"targets must be ({logits.shape[0]},) for logits {logits.shape}, got {targets.shape}")
    if not np.issubdtype(targets.dtype, np.integer):
        raise ValueError(f"targets must be integer class indices, got dtype {targets.dtype}")
    if targets.size and (targets.min() < 0 or targets.max() >= logits.shape[1]):
        raise ValueError(f"targets must lie in 0..{logits.shape[1] - 1}")
    return targets


def token_losses(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per-row softmax cross-entropy (nats): -log softmax(logits[n])[targets[n]], shape (N,)."""
    logits = np.asarray(logits, dtype=np.float64)
    targets = _check_targets(logits, targets)
    return -log_softmax(logits, axis=1)[np.arange(logits.shape[0]), targets]


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy of (N, C) ``logits`` against (N,) integer ``targets``.

    Returns ``(loss, probs)``; ``probs`` (the softmax of the logits) is what
    `cross_entropy_backward` needs.
    """
    logits = np.asarray(logits, dtype=np.float64)
    targets = _check_targets(logits, targets)
    logp = log_softmax(logits, axis=1)
    loss = -float(np.mean(logp[np.arange(logits.shape[0]), targets]))
    return loss, np.exp(logp)


def cross_entropy_backward(probs: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Gradient of the *mean* cross-entropy at the (N, C) logits: (probs - onehot(targets)) / N."""
    d = np.array(probs, dtype=np.float64, copy=True)
    n = d.shape[0]
    d[np.arange(n), np.asarray(targets)] -= 1.0
    return d / n


# ---------------------------------------------------------------------------------------- linear

def linear(x: np.ndarray, W: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """y = x W (+ b) on the last axis of ``x``."""
    y = x @ W
    return y if b is None else y + b


def linear_backward(d_y: np.ndarray, x: np.ndarray, W: np.ndarray,
                    bias: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Gradients ``(d_x, d_W, d_b)`` of y = x W + b; leading axes of x and d_y are summed over.

    ``d_b`` is None when ``bias`` is False.
    """
    d_x = d_y @ W.T
    x2 = x.reshape(-1, x.shape[-1])
    d2 = d_y.reshape(-1, d_y.shape[-1])
    d_W = x2.T @ d2
    d_b = d2.sum(axis=0) if bias else None
    return d_x, d_W, d_b


# ------------------------------------------------------------------------------------------ RNN

def rnn_step(x: np.ndarray, h_prev: np.ndarray, Wx: np.ndarray, Wh: np.ndarray,
             b: np.ndarray) -> np.ndarray:
    """One tanh RNN step: h = tanh(x Wx + h_prev Wh + b)."""
    return np.tanh(x @ Wx + h_prev @ Wh + b)


def rnn_step_backward(d_h: np.ndarray, x: np.ndarray, h_prev: np.ndarray, h: np.ndarray,
                      Wx: np.ndarray, Wh: np.ndarray):
    """Gradients ``(d_x, d_h_prev, d_Wx, d_Wh, d_b)`` of `rnn_step` from the gradient at its
    output ``h`` (tanh' = 1 - h², so the forward's output is all it needs)."""
    d_pre = d_h * (1.0 - h * h)
    return d_pre @ Wx.T, d_pre @ Wh.T, x.T @ d_pre, h_prev.T @ d_pre, d_pre.sum(axis=0)


# ------------------------------------------------------------------ additive (Bahdanau) attention

def tanh(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """tanh(x) as 2 / (1 + exp(-2x)) - 1, in place on one new array.

    NumPy's float64 tanh is 2-4 times slower than its exp on the machines we measured, and the
    additive attention's energies (B, L, A per decoder step) are the training lab's hottest loop.
    It agrees with np.tanh to ~1e-16 absolute (a few 1e-12 relative near 0), far below what a
    gradient check can see; exp(-2x) may overflow to inf for x < -354, which gives -1 exactly.
    ``out``: an array of x's shape to write into (it may be x itself).
    """
    out = np.multiply(x, -2.0, out=out)
    with np.errstate(over="ignore"):
        np.exp(out, out=out)
    out += 1.0
    np.divide(2.0, out, out=out)
    out -= 1.0
    return out


def additive_attention(query: np.ndarray, values: np.ndarray, keys_proj: np.ndarray,
                       Ws: np.ndarray, b: np.ndarray, v: np.ndarray, hidden_out: np.ndarray | None = None):
    """Bahdanau et al. (2015) attention of one query per row over L positions.

    scores_j = v · tanh(query Ws + keys_proj_j + b), weights = softmax_j(scores),
    context = sum_j weights_j values_j.

    ``query`` (B, Dq), ``values`` (B, L, Dv), ``keys_proj`` (B, L, A) = values U_h, projected once
    per sequence by the caller since it does not change from one decoder step to the next.
    Returns ``(context (B, Dv), weights (B, L), cache)``; ``hidden_out`` (B, L, A), if given,
    receives the tanh energies (a caller keeping every step's energies for its backward pass).
    """
    hidden = np.add((query @ Ws + b)[:, None, :], keys_proj, out=hidden_out)
    tanh(hidden, out=hidden)                                      # (B, L, A)
    scores = hidden @ v                                           # (B, L)
    weights = softmax(scores, axis=-1)
    context = (weights[:, None, :] @ values)[:, 0]
    return context, weights, (query, values, hidden, weights)


def additive_attention_backward(d_context: np.ndarray, cache, Ws: np.ndarray, v: np.ndarray,
                                d_weights: np.ndarray | None = None, values_grad: bool = True):
    """Gradients of `additive_attention`.

    Returns ``(d_query, d_values, d_keys_proj, d_Ws, d_b, d_v)``; ``d_values`` counts only the
    path through the context (the caller adds ``d_keys_proj @ U_h.T`` for the path through the
    keys). ``d_weights`` adds a gradient arriving at the weights directly, if any. A caller that
    sums d_values over many steps may pass ``values_grad=False`` (d_values is then None) and form
    the sum at once as weights^T @ d_context.
    """
    query, values, hidden, weights = cache
    d_w = (values @ d_context[:, :, None])[:, :, 0]                # (B, L)
    if d_weights is not None:
        d_w = d_w + d_weights
    d_values = weights[:, :, None] * d_context[:, None, :] if values_grad else None
    d_scores = softmax_backward(d_w, weights)                      # (B, L)
    A = hidden.shape[-1]
    d_v = d_scores.reshape(1, -1) @ hidden.reshape(-1, A)
    d_pre = hidden * hidden                                        # tanh' = 1 - hidden²
    np.subtract(1.0, d_pre, out=d_pre)
    d_pre *= (d_scores[:, :, None] * v)                            # (B, L, A)
    d_q_proj = d_pre.sum(axis=1)                                   # (B, A)
    return d_q_proj @ Ws.T, d_values, d_pre, query.T @ d_q_proj, d_q_proj.sum(axis=0), d_v[0]


# ------------------------------------------------------------------------------------ optimiser

def global_norm(grads: Mapping[str, np.ndarray]) -> float:
    """sqrt of the sum of squares of every gradient array."""
    return float(np.sqrt(sum(float(np.sum(g * g)) for g in grads.values())))


def clip_by_global_norm(grads: Mapping[str, np.ndarray],
                        max_norm: float) -> tuple[dict[str, np.ndarray], float]:
    """Scale every gradient by min(1, max_norm / global norm) (Pascanu et al. 2013).

    Returns ``(clipped grads, the norm before clipping)``; the input arrays are not changed.
    """
    if not max_norm > 0:
        raise ValueError(f"max_norm must be positive, got {max_norm}")
    norm = global_norm(grads)
    scale = min(1.0, max_norm / norm) if norm > 0 else 1.0
    return {name: g * scale for name, g in grads.items()}, norm


class Adam:
    """Adam (Kingma & Ba 2015) over a dict of parameter arrays, updated in place.

    ``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8)``; ``step(grads)`` takes a dict with
    a gradient for every parameter (same names, same shapes) and moves each parameter by
    -lr * m_hat / (sqrt(v_hat) + eps), with the bias-corrected moments.
    """

    def __init__(self, params: Mapping[str, np.ndarray], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        if not lr > 0:
            raise ValueError(f"lr must be positive, got {lr}")
        beta1, beta2 = betas
        if not (0 <= beta1 < 1 and 0 <= beta2 < 1):
            raise ValueError(f"betas must lie in [0, 1), got {betas}")
        if not eps > 0:
            raise ValueError(f"eps must be positive, got {eps}")
        self.params = params
        self.lr, self.betas, self.eps = float(lr), (float(beta1), float(beta2)), float(eps)
        self.t = 0
        # The moments of every parameter live in one flat array each (``m[name]``, ``v[name]`` are
        # views of it), and the gradients are copied into a third: the update is then a few
        # whole-array operations per step instead of a few per parameter, whose fixed cost
        # dominates at the lab's sizes. Element by element the arithmetic is the same.
        sizes = [np.size(p) for p in params.values()]
        dtype = np.result_type(*params.values()) if params else np.float64
        self._m, self._v, self._g = (np.zeros(sum(sizes), dtype=dtype) for _ in range(3))
        self.m, self.v, self._g_of = {}, {}, {}
        start = 0
        for (name, p), size in zip(params.items(), sizes):
            where = slice(start, start + size)
            self.m[name] = self._m[where].reshape(np.shape(p))
            self.v[name] = self._v[where].reshape(np.shape(p))
            self._g_of[name] = self._g[where].reshape(np.shape(p))
            start += size

    def step(self, grads: Mapping[str, np.ndarray]) -> None:
        """One update of every parameter in place from ``grads``."""
        missing = set(self.params) - set(grads)
        if missing:
            raise ValueError(f"no gradient for {sorted(missing)}")
        for name, p in self.params.items():
            if np.shape(grads[name]) != p.shape:
                raise ValueError(f"gradient of {name} has shape {np.shape(grads[name])}, "
                                 f"parameter {p.shape}")
        beta1, beta2 = self.betas
        self.t += 1
        c1 = 1.0 - beta1 ** self.t
        c2 = 1.0 - beta2 ** self.t
        for name, g in self._g_of.items():
            g[...] = grads[name]
        g, m, v = self._g, self._m, self._v
        m *= beta1
        m += (1.0 - beta1) * g
        v *= beta2
        v += (1.0 - beta2) * (g * g)
        update = self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)
        start = 0
        for p in self.params.values():
            p -= update[start:start + p.size].reshape(p.shape)
            start += p.size
