"""The intermediate numbers of attention for one query, as a lecture writes them out.

:func:`multi_head_attention` keeps what every view needs for every query
(scores, logits, weights, head outputs). The step-by-step view and the
filled-in formulas need more for the ONE query being explained: the terms of
each dot product, the scaled scores before masking, the shifted logits, their
exponentials and row sums, and each value vector times its weight.
:func:`query_steps` computes them from a result, for every head at once
(batched: no Python loop over heads or keys), so that explanations only
format numbers and never redo arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ._checks import check_positive
from .attention import MultiHeadResult, softmax_steps
from .errors import EngineError

__all__ = ["QuerySteps", "query_steps"]


@dataclass(frozen=True)
class QuerySteps:
    """Every intermediate of attention for query ``query``, head axis first.

    - ``terms (h, Tk, d_k)``: ``q[c]·k_j[c]``, the terms of each dot product
      ``q·k_j`` (their sum is the score); None for additive scores, which are
      not dot products (``dot_product`` False).
    - ``scaled (h, Tk)``: ``score × scale_factor ÷ temperature`` for every key,
      blocked ones included (the logits before the mask).
    - ``logits (h, Tk)``: the engine's logits of this row (−inf where blocked).
    - ``shift (h,)``, ``shifted (h, Tk)``: the row maximum of the finite
      logits (0 when every key is blocked) and ``logits − shift``.
    - ``exps (h, Tk)``, ``exp_total (h,)``: ``exp(logits − shift)`` (the stable
      softmax's numerators) and their sum; 0 for blocked keys.
    - ``naive_exps (h, Tk)``, ``naive_total (h,)``: ``exp(logits)`` unshifted
      (inf where it overflows) and their sum.
    - ``logit_total (h,)``: the sum of the unblocked logits (the plain ``x / Σx``
      normalisation's denominator).
    - ``weights (h, Tk)``, ``weight_total (h,)``: the engine's weights and their sum.
    - ``weighted (h, Tk, d_v)``: ``α_j · v_j``; ``output (h, d_v)``: the head outputs.
    - ``blocked (h, Tk)``: True where the key may not be attended to.
    """

    query: int
    temperature: float
    scale_factor: float
    dot_product: bool
    scaled: np.ndarray
    logits: np.ndarray
    shift: np.ndarray
    shifted: np.ndarray
    exps: np.ndarray
    exp_total: np.ndarray
    naive_exps: np.ndarray
    naive_total: np.ndarray
    logit_total: np.ndarray
    weights: np.ndarray
    weight_total: np.ndarray
    weighted: np.ndarray
    output: np.ndarray
    blocked: np.ndarray
    q: np.ndarray = field(repr=False)    # (h, d_k): this query's q in every head
    k: np.ndarray = field(repr=False)    # (h, Tk, d_k): every key

    @cached_property
    def terms(self) -> np.ndarray | None:
        """``(h, Tk, d_k)``: the terms ``q[c]·k_j[c]`` of each score, or None for additive scores.

        Formed on first use (it is the largest array here) and kept.
        """
        if not self.dot_product:
            return None
        return self.q[:, None, :] * self.k


def query_steps(result: MultiHeadResult, query: int, *, temperature: float = 1.0,
                additive: bool = False) -> QuerySteps:
    """The intermediates of ``result`` for query ``query`` (0-based), all heads at once.

    ``temperature`` must be the one the result was computed with (the result
    keeps the scale factor, not the temperature); ``additive`` says that the
    scores were additive (Bahdanau) scores, which have no dot-product terms.
    """
    temperature = check_positive("temperature", temperature)
    heads, t_q, t_k = result.weights.shape
    if isinstance(query, bool) or not isinstance(query, (int, np.integer)) or not 0 <= query < t_q:
        raise EngineError(f"query must be a token index from 0 to {t_q - 1}, got {query!r}")
    i = int(query)
    blocked = result.blocked[..., i, :]
    blocked = np.broadcast_to(blocked, (heads, t_k)).copy()
    scores = result.scores[:, i, :]
    logits = result.logits[:, i, :]
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = scores * (result.scale_factor / temperature)
    stable = softmax_steps(logits, axis=-1, shifted=True)
    naive = softmax_steps(logits, axis=-1, shifted=False)
    shifted = np.where(blocked, -np.inf, logits - stable.shift[:, None])
    weights = result.weights[:, i, :]
    with np.errstate(over="ignore", invalid="ignore"):
        weighted = weights[:, :, None] * result.v                           # (h, Tk, d_v)
        weight_total = np.sum(weights, axis=-1)
    logit_total = np.sum(np.where(np.isfinite(logits), logits, 0.0), axis=-1)
    return QuerySteps(
        query=i, temperature=float(temperature), scale_factor=float(result.scale_factor),
        dot_product=not additive, scaled=scaled, logits=logits, shift=stable.shift, shifted=shifted,
        exps=stable.exps, exp_total=stable.total, naive_exps=naive.exps, naive_total=naive.total,
        logit_total=logit_total, weights=weights, weight_total=weight_total, weighted=weighted,
        output=result.head_outputs[:, i, :], blocked=blocked, q=result.q[:, i, :], k=result.k,
    )
