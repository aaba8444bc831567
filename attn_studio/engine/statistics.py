"""Why 1/sqrt(d_k): the variance of q·k and the saturation of softmax, as curves."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import check_dims, check_positive
from .attention import softmax
from .errors import EngineError

# Largest number of random floats one call may draw at once (about 400 MB);
# beyond this the caller asked for more samples than a lecture needs.
_MAX_DRAW = 50_000_000


@dataclass(frozen=True)
class VarianceCurve:
    """Empirical variance of ``q·k`` per dimension, raw and scaled by 1/sqrt(d).

    ``theory_raw`` is ``d`` and ``theory_scaled`` is 1 for unit-variance inputs.
    """

    dims: np.ndarray
    raw: np.ndarray
    scaled: np.ndarray
    theory_raw: np.ndarray
    theory_scaled: np.ndarray


@dataclass(frozen=True)
class SaturationCurve:
    """How peaked softmax gets as d grows, without and with the 1/sqrt(d) scaling.

    Means over samples of: the largest weight in a row, the row's entropy
    (nats), and the Frobenius norm of the softmax Jacobian ``diag(p) - p pᵀ``
    (the gradient that reaches the scores; it vanishes as softmax saturates).
    """

    dims: np.ndarray
    max_weight_raw: np.ndarray
    max_weight_scaled: np.ndarray
    entropy_raw: np.ndarray
    entropy_scaled: np.ndarray
    grad_norm_raw: np.ndarray
    grad_norm_scaled: np.ndarray


def _check_samples(n_samples) -> int:
    return check_positive("n_samples", n_samples, integer=True)


def dot_product_variance(dims, n_samples: int = 2000, seed: int = 0) -> VarianceCurve:
    """Measure var(q·k) for random unit-variance q, k at each d in ``dims``.

    One draw of ``(n_samples, max(dims))`` components serves every d: the dot
    product in d dimensions is the running sum of the first d products, so the
    whole curve is a single cumulative sum (no loop over d).
    """
    dims = check_dims("dims", dims)
    n_samples = _check_samples(n_samples)
    d_max = int(dims.max())
    if 2 * n_samples * d_max > _MAX_DRAW:
        raise EngineError(
            f"n_samples x max(d) = {n_samples} x {d_max} is too large to sample; "
            f"keep it under {_MAX_DRAW // 2:,}"
        )
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_max))
    k = rng.standard_normal((n_samples, d_max))
    running = np.cumsum(q * k, axis=1)
    dots = running[:, dims - 1]  # (n_samples, len(dims))
    raw = np.var(dots, axis=0)
    scaled = raw / dims
    return VarianceCurve(
        dims=dims.copy(),
        raw=raw,
        scaled=scaled,
        theory_raw=dims.astype(np.float64),
        theory_scaled=np.ones(dims.shape),
    )


def _row_stats(logits: np.ndarray):
    p = softmax(logits, axis=-1)
    max_weight = p.max(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=-1)
    # ||diag(p) - p pᵀ||_F² = Σp² - 2Σp³ + (Σp²)²
    s2 = np.sum(p**2, axis=-1)
    s3 = np.sum(p**3, axis=-1)
    grad_norm = np.sqrt(np.maximum(s2 - 2 * s3 + s2**2, 0.0))
    return max_weight.mean(axis=-1), entropy.mean(axis=-1), grad_norm.mean(axis=-1)


def softmax_saturation(dims, seq_len: int = 16, n_samples: int = 500, seed: int = 0) -> SaturationCurve:
    """Measure how softmax of random ``q·k`` rows saturates as d grows.

    For each d, ``n_samples`` queries each meet ``seq_len`` random keys
    (unit-variance components). Reports the mean max weight, entropy and
    Jacobian norm of the softmax row, unscaled and scaled by 1/sqrt(d).
    """
    dims = check_dims("dims", dims)
    seq_len = check_positive("seq_len", seq_len, integer=True)
    n_samples = _check_samples(n_samples)
    d_max = int(dims.max())
    if n_samples * seq_len * d_max > _MAX_DRAW:
        raise EngineError(
            f"n_samples x seq_len x max(d) = {n_samples} x {seq_len} x {d_max} is too large to sample; "
            f"keep it under {_MAX_DRAW:,}"
        )
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, 1, d_max))
    k = rng.standard_normal((n_samples, seq_len, d_max))
    # Running sums over the vector axis give the score at every d at once.
    running = np.cumsum(q * k, axis=-1)[:, :, dims - 1]  # (n, seq_len, len(dims))
    scores = np.moveaxis(running, -1, 0)  # (len(dims), n, seq_len)
    raw = _row_stats(scores)
    scaled = _row_stats(scores / np.sqrt(dims)[:, None, None])
    return SaturationCurve(
        dims=dims.copy(),
        max_weight_raw=raw[0],
        max_weight_scaled=scaled[0],
        entropy_raw=raw[1],
        entropy_scaled=scaled[1],
        grad_norm_raw=raw[2],
        grad_norm_scaled=scaled[2],
    )
