"""The rest of a transformer layer: layer norm, GELU, the feed-forward network,
and the measures that follow a sentence through a trained model's layers.

Row vectors throughout, as in the seeds: ``x`` is ``(T, d_model)``, one token
per row, and a weight matrix maps rows, ``y = x·W + b``.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import as_array
from .errors import EngineError

ACTIVATIONS = ("gelu", "gelu_new", "relu")


def layer_norm(x, gamma, beta, eps: float = 1e-5) -> np.ndarray:
    """Normalise each row of ``x`` to mean 0 and variance 1, then scale and shift.

    ``y = (x - mean) / sqrt(var + eps) * gamma + beta`` with the biased variance
    (divided by d, not d - 1), as BERT and GPT-2 compute it. ``gamma`` and
    ``beta`` are ``(d,)``.
    """
    x = as_array("x", x, 2)
    d = x.shape[1]
    gamma = as_array("gamma", gamma, 1)
    beta = as_array("beta", beta, 1)
    if gamma.shape != (d,) or beta.shape != (d,):
        raise EngineError(
            f"gamma {gamma.shape} and beta {beta.shape} must both be ({d},), one entry per column of x"
        )
    if not eps > 0:
        raise EngineError(f"eps must be a positive number, got {eps!r}")
    return layer_norm_trusted(x, gamma, beta, eps)


def layer_norm_trusted(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """:func:`layer_norm` on arrays already checked (a trained model's weights, checked once when
    loaded): the same operations in the same order, without scanning them again."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * gamma + beta


def gelu(x) -> np.ndarray:
    """The exact GELU, ``x·Φ(x) = 0.5·x·(1 + erf(x / sqrt(2)))`` (BERT's ``"gelu"``)."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def _erf(x: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import erf
    except ImportError:
        # Same exact function from the C library, one element at a time: slower,
        # but the engine keeps working where SciPy is missing.
        return _python_erf(x).astype(np.float64)
    return erf(x)


_python_erf = np.frompyfunc(math.erf, 1, 1)


def gelu_new(x) -> np.ndarray:
    """GPT-2's tanh approximation of GELU (``"gelu_new"``):
    ``0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³)))``."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def relu(x) -> np.ndarray:
    """``max(0, x)``, the original transformer's activation."""
    return np.maximum(np.asarray(x, dtype=np.float64), 0.0)


_ACTIVATION_FUNCTIONS = {"gelu": gelu, "gelu_new": gelu_new, "relu": relu}


def feed_forward(x, w_1, b_1, w_2, b_2, activation: str = "gelu") -> np.ndarray:
    """The position-wise feed-forward network ``act(x·W_1 + b_1)·W_2 + b_2``.

    ``x (T, d_model)``, ``w_1 (d_model, d_ff)``, ``b_1 (d_ff,)``,
    ``w_2 (d_ff, d_model)``, ``b_2 (d_model,)``. ``activation`` is one of
    ``"gelu"`` (exact, erf), ``"gelu_new"`` (tanh approximation) or ``"relu"``.
    """
    if activation not in _ACTIVATION_FUNCTIONS:
        raise EngineError(f"activation must be one of {', '.join(ACTIVATIONS)}; got {activation!r}")
    x = as_array("x", x, 2)
    w_1 = as_array("w_1", w_1, 2)
    w_2 = as_array("w_2", w_2, 2)
    b_1 = as_array("b_1", b_1, 1)
    b_2 = as_array("b_2", b_2, 1)
    d_model = x.shape[1]
    if w_1.shape[0] != d_model or w_2.shape[0] != w_1.shape[1] or b_1.shape != (w_1.shape[1],) \
            or b_2.shape != (w_2.shape[1],):
        raise EngineError(
            f"feed-forward shapes do not fit: x {x.shape}, w_1 {w_1.shape}, b_1 {b_1.shape}, "
            f"w_2 {w_2.shape}, b_2 {b_2.shape}; expected w_1 ({d_model}, d_ff), b_1 (d_ff,), "
            "w_2 (d_ff, d_out), b_2 (d_out,)"
        )
    return feed_forward_trusted(x, w_1, b_1, w_2, b_2, activation)


def feed_forward_trusted(x, w_1, b_1, w_2, b_2, activation: str) -> np.ndarray:
    """:func:`feed_forward` on arrays already checked: the same operations, no checks."""
    hidden = x @ w_1
    hidden += b_1
    hidden = _ACTIVATION_FUNCTIONS[activation](hidden)
    out = hidden @ w_2
    out += b_2
    return out


def attention_rollout(attentions, residual: float = 0.5) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020) through the layers.

    ``attentions`` is ``(layers, heads, T, T)``. Per layer the heads are
    averaged and the residual connection is added as the identity,
    ``A' = (1 - residual)·mean_heads(A) + residual·I``, each row renormalised
    to sum to 1, and the layers multiplied from the bottom up:
    ``R_l = A'_l · R_(l-1)``. Returns ``(layers, T, T)``: entry ``[l, i, j]`` is
    how much of token j flows into token i's vector after layer l + 1.
    """
    a = as_array("attentions", attentions, 4)
    if a.shape[2] != a.shape[3]:
        raise EngineError(f"attentions must be (layers, heads, T, T) with square matrices, got {a.shape}")
    if not 0.0 <= residual <= 1.0:
        raise EngineError(f"residual must be between 0 and 1, got {residual!r}")
    layers, _, t, _ = a.shape
    mixed = (1.0 - residual) * a.mean(axis=1) + residual * np.eye(t)
    # keepdims: dividing (L, T, T) by a flattened (L, T) sum would normalise
    # columns instead of rows, the bug of a widely copied implementation.
    total = mixed.sum(axis=-1, keepdims=True)
    total[total == 0] = 1.0
    mixed /= total
    out = np.empty_like(mixed)
    current = np.eye(t)
    for layer in range(layers):
        current = mixed[layer] @ current
        out[layer] = current
    return out


def _unit_rows(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    norm[norm == 0] = 1.0
    return x / norm


def layerwise_cosine(a, b) -> np.ndarray:
    """Cosine similarity of two vectors at every layer.

    ``a`` and ``b`` are ``(layers, d)`` (one word's vector after each layer, in
    two sentences, say). Returns ``(layers,)``; a zero vector gives 0.
    """
    a = as_array("a", a, 2)
    b = as_array("b", b, 2)
    if a.shape != b.shape:
        raise EngineError(f"a {a.shape} and b {b.shape} must have the same shape (layers, d)")
    return np.sum(_unit_rows(a) * _unit_rows(b), axis=-1)


def layer_drift(hidden_states, reference) -> np.ndarray:
    """How far each layer's token vectors moved from a reference run.

    Both are ``(layers, T, d)``; returns ``(layers,)``: per layer the mean over
    tokens of the cosine distance ``1 - cos(h, h_ref)``. 0 where nothing
    changed, up to 2 for vectors turned around.
    """
    h = as_array("hidden_states", hidden_states, 3)
    r = as_array("reference", reference, 3)
    if h.shape != r.shape:
        raise EngineError(
            f"hidden_states {h.shape} and reference {r.shape} must have the same shape (layers, T, d)"
        )
    if h.shape[1] == 0:
        return np.zeros(h.shape[0])
    cos = np.sum(_unit_rows(h) * _unit_rows(r), axis=-1)
    return np.mean(1.0 - cos, axis=-1)
