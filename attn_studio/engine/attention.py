"""Softmax, scaled dot-product attention, multi-head and additive scores.

Everything is batched NumPy: the head axis is a leading array axis, never a
Python loop, so that the studio can recompute on every keystroke.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import as_array, check_positive
from .errors import EngineError

SOFTMAX_KINDS = ("stable", "naive", "sum")


def softmax(x, axis: int = -1, kind: str = "stable") -> np.ndarray:
    """Normalise ``x`` along ``axis`` so that each slice sums to 1.

    ``kind``:
      - ``"stable"`` subtracts the slice maximum before ``exp`` (never overflows);
      - ``"naive"`` is ``exp(x) / sum(exp(x))`` and overflows to NaN for large
        scores, on purpose: the seeds show why the stable form exists;
      - ``"sum"`` is ``x / sum(x)``, the seeds' first, simplest normalisation.

    ``-inf`` entries (blocked keys) get weight 0. A slice whose entries are all
    ``-inf`` gets weights 0 everywhere, never NaN.
    """
    if kind not in SOFTMAX_KINDS:
        raise EngineError(f"softmax kind must be one of {', '.join(SOFTMAX_KINDS)}; got {kind!r}")
    arr = np.asarray(x, dtype=np.float64)
    if arr.size == 0:
        return np.zeros_like(arr)
    # Work in one fresh buffer, in place, and check inputs by reductions rather
    # than boolean copies: attention matrices of 8 x 512 x 512 cost more in
    # temporaries than in arithmetic.
    top = np.max(arr, axis=axis, keepdims=True)
    highest = top.max()
    if np.isnan(highest) or highest == np.inf:
        raise EngineError("softmax input contains NaN or +inf; only -inf (a blocked key) is allowed")
    any_blocked = bool(arr.min() == -np.inf)
    blocked = arr == -np.inf if any_blocked else None
    all_blocked = np.all(blocked, axis=axis, keepdims=True) if any_blocked else None
    if kind == "stable":
        if any_blocked:
            top[all_blocked] = 0.0
        out = np.subtract(arr, top)
        np.exp(out, out=out)
        total = np.sum(out, axis=axis, keepdims=True)
        if any_blocked:
            total[total == 0] = 1.0
        out /= total
    elif kind == "naive":
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = np.exp(arr)
            out /= np.sum(out, axis=axis, keepdims=True)
    else:  # "sum"
        out = np.where(blocked, 0.0, arr) if any_blocked else arr.copy()
        total = np.sum(out, axis=axis, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            out /= total
    if any_blocked:
        out[blocked | all_blocked] = 0.0
    return out


@dataclass(frozen=True)
class SoftmaxSteps:
    """The intermediate numbers of a softmax, as a lecture writes them out.

    ``shift`` is what was subtracted from each row first (its largest finite
    value, or 0 without shifting); ``exps`` is ``exp(x - shift)`` with 0 for
    blocked (-inf) entries and inf where the naive form overflows; ``total``
    the row sums of ``exps``.
    """

    shift: np.ndarray
    exps: np.ndarray
    total: np.ndarray


def softmax_steps(x, axis: int = -1, shifted: bool = True) -> SoftmaxSteps:
    """The shift, exponentials and sums that a softmax of ``x`` goes through.

    ``shifted=True`` is the stable softmax's way (subtract the row maximum);
    ``False`` the naive one, whose exponentials may overflow to inf. The
    weights are ``exps / total`` (see :func:`softmax` for the guarded version).
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.size == 0:  # no keys: nothing to shift, nothing to sum
        reduced = np.zeros(np.delete(arr.shape, axis % max(arr.ndim, 1)) if arr.ndim else ())
        return SoftmaxSteps(reduced, arr.copy(), reduced.copy())
    finite = np.isfinite(arr)
    if shifted:
        shift = np.max(np.where(finite, arr, -np.inf), axis=axis, keepdims=True)
        shift = np.where(np.isfinite(shift), shift, 0.0)
    else:
        shift = np.zeros_like(np.sum(arr, axis=axis, keepdims=True))
    with np.errstate(over="ignore", invalid="ignore"):
        exps = np.where(finite, np.exp(np.where(finite, arr, 0.0) - shift), 0.0)
    exps = np.where(arr == np.inf, np.inf, exps)
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(exps, axis=axis, keepdims=True)
    return SoftmaxSteps(np.squeeze(shift, axis=axis), exps, np.squeeze(total, axis=axis))


@dataclass(frozen=True)
class AttentionResult:
    """Every intermediate of one scaled dot-product attention.

    ``scores`` are the raw ``q·k``; ``logits`` are scaled and tempered, with
    ``-inf`` where a key is blocked; ``weights`` the softmax of the logits;
    ``output`` the weighted sum of the values; ``blocked`` the combined mask
    (causal and explicit); ``scale_factor`` the number the scores were
    multiplied by (``1/sqrt(d_k)`` when scaling, else 1).
    """

    scores: np.ndarray
    logits: np.ndarray
    weights: np.ndarray
    output: np.ndarray
    scale_factor: float
    blocked: np.ndarray


@dataclass(frozen=True)
class MultiHeadResult:
    """Every intermediate of multi-head attention, head axis first.

    ``q, k, v`` are ``(h, T, d)``; ``scores, logits, weights`` are
    ``(h, Tq, Tk)``; ``head_outputs`` is ``(h, Tq, d_v)``; ``concat`` is
    ``(Tq, h*d_v)``; ``output`` is ``concat @ w_o`` or ``concat`` without W_O.
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray
    logits: np.ndarray
    weights: np.ndarray
    head_outputs: np.ndarray
    concat: np.ndarray
    output: np.ndarray
    scale_factor: float
    blocked: np.ndarray


def causal_mask(t_q: int, t_k: int) -> np.ndarray:
    """Return the ``(t_q, t_k)`` causal mask: True where key j > query i (the future)."""
    return np.triu(np.ones((t_q, t_k), dtype=bool), k=1)


def _check_blocked(blocked, t_q: int, t_k: int) -> np.ndarray:
    if blocked is None:
        return np.zeros((t_q, t_k), dtype=bool)
    arr = np.asarray(blocked)
    if arr.dtype != bool:
        raise EngineError(f"blocked must be a boolean array (True = may not attend), got dtype {arr.dtype}")
    if arr.shape != (t_q, t_k):
        raise EngineError(
            f"blocked has shape {arr.shape} but the attention matrix is ({t_q}, {t_k}) "
            "(queries x keys)"
        )
    return arr


def attend_scores(
    scores,
    v,
    *,
    d_k: int,
    scale: bool = True,
    causal: bool = False,
    temperature: float = 1.0,
    blocked=None,
    kind: str = "stable",
):
    """Turn precomputed ``scores`` (``(..., Tq, Tk)``) into attention.

    This is the part of attention after the scores: scale by ``1/sqrt(d_k)``,
    divide by ``temperature``, block masked keys, softmax, weight the values
    ``v`` (``(..., Tk, d_v)``). Used with dot-product scores and with additive
    scores alike. Returns ``(logits, weights, output, scale_factor, mask)``.
    """
    temperature = check_positive("temperature", temperature)
    d_k = check_positive("d_k", d_k, integer=True)
    if kind not in SOFTMAX_KINDS:
        raise EngineError(f"softmax kind must be one of {', '.join(SOFTMAX_KINDS)}; got {kind!r}")
    scores = np.asarray(scores, dtype=np.float64)
    t_q, t_k = scores.shape[-2:]
    mask = _check_blocked(blocked, t_q, t_k)
    if causal:
        mask = mask | causal_mask(t_q, t_k)
    scale_factor = 1.0 / np.sqrt(d_k) if scale else 1.0
    logits = scores * (scale_factor / temperature)
    if mask.any():
        logits[..., mask] = -np.inf
    weights = softmax(logits, axis=-1, kind=kind)
    if kind == "naive":
        # Overflowed weights are NaN on purpose; keep the NaN visible in the
        # output instead of warning about it.
        with np.errstate(invalid="ignore", over="ignore"):
            output = weights @ v
    else:
        output = weights @ v
    return logits, weights, output, float(scale_factor), mask


def attention(q, k, v, *, scale=True, causal=False, temperature=1.0, blocked=None, kind="stable") -> AttentionResult:
    """Scaled dot-product attention, softmax(q·kᵀ / sqrt(d_k) / temperature)·v.

    Shapes: ``q (Tq, d_k)``, ``k (Tk, d_k)``, ``v (Tk, d_v)``. ``causal`` blocks
    key j > query i; ``blocked`` is a bool ``(Tq, Tk)`` array, True = may not
    attend. A query whose keys are all blocked gets weights 0 and output 0.
    An empty sequence gives empty arrays.
    """
    q = as_array("q", q, 2)
    k = as_array("k", k, 2)
    v = as_array("v", v, 2)
    if q.shape[1] != k.shape[1]:
        raise EngineError(
            f"q has shape {q.shape} and k has shape {k.shape}: q and k need the same "
            f"number of columns (d_k), got {q.shape[1]} and {k.shape[1]}"
        )
    if k.shape[0] != v.shape[0]:
        raise EngineError(
            f"k has shape {k.shape} and v has shape {v.shape}: every key needs one value, "
            f"got {k.shape[0]} keys and {v.shape[0]} values"
        )
    scores = q @ k.T
    logits, weights, output, scale_factor, mask = attend_scores(
        scores, v, d_k=q.shape[1], scale=scale, causal=causal,
        temperature=temperature, blocked=blocked, kind=kind,
    )
    return AttentionResult(scores, logits, weights, output, scale_factor, mask)


def _check_weights(name: str, w, d_model: int) -> np.ndarray:
    w = as_array(name, w, 3)
    if w.shape[0] < 1:
        raise EngineError(f"{name} has shape {w.shape}: it needs at least one head")
    if w.shape[1] != d_model:
        raise EngineError(
            f"{name} has shape {w.shape} but the inputs have d_model = {d_model}: "
            f"{name} must be (heads, {d_model}, d)"
        )
    return w


def _check_bias(name: str, b, shape: tuple) -> np.ndarray | None:
    if b is None:
        return None
    b = as_array(name, b, len(shape))
    if b.shape != shape:
        raise EngineError(f"{name} has shape {b.shape}; it must be {shape}")
    return b


def multi_head_attention(
    x, w_q, w_k, w_v, w_o=None, *, x_kv=None, scale=True, causal=False,
    temperature=1.0, blocked=None, kind="stable", additive=None,
    b_q=None, b_k=None, b_v=None, b_o=None, head_mask=None,
) -> MultiHeadResult:
    """Multi-head attention with row vectors, as in the seeds: Q = X·W_Q per head.

    ``x (Tq, d_model)``; ``x_kv (Tk, d_model)`` for cross-attention (the
    encoder side; defaults to ``x``). ``w_q, w_k (h, d_model, d_k)``,
    ``w_v (h, d_model, d_v)``, ``w_o (h*d_v, d_out)`` or None (then ``output``
    is the concatenation). All heads are computed as one batched product.

    ``additive=(w_1, w_2, v_a)`` with ``w_1, w_2 (h, d_k, d_a)`` and
    ``v_a (h, d_a)`` replaces the dot-product scores by Bahdanau scores
    ``v_aᵀ·tanh(q W_1 + k W_2)``; ``scale`` is then ignored (scale_factor 1):
    the 1/sqrt(d_k) argument is about dot products, and tanh bounds these.

    Trained models add biases: ``b_q, b_k (h, d_k)`` and ``b_v (h, d_v)`` are
    added to each head's q, k and v, ``b_o (d_out,)`` to the output (it needs
    ``w_o``). ``head_mask (h,)`` multiplies each head's weighted values before
    the concatenation and W_O (1 keeps a head, 0 silences it, 2 doubles it), the
    same as scaling that head's rows of W_O. ``weights`` stay the head's own
    softmax; ``head_outputs`` and ``concat`` carry the scaling.
    """
    x = as_array("x", x, 2)
    x_kv = x if x_kv is None else as_array("x_kv", x_kv, 2)
    d_model = x.shape[1]
    if x_kv.shape[1] != d_model:
        raise EngineError(
            f"x has d_model = {d_model} but x_kv has d_model = {x_kv.shape[1]}: both sentences "
            "need vectors of the same size"
        )
    w_q = _check_weights("w_q", w_q, d_model)
    w_k = _check_weights("w_k", w_k, d_model)
    w_v = _check_weights("w_v", w_v, d_model)
    heads = w_q.shape[0]
    if w_k.shape[0] != heads or w_v.shape[0] != heads:
        raise EngineError(
            f"w_q, w_k and w_v must have the same number of heads; got "
            f"{w_q.shape[0]}, {w_k.shape[0]} and {w_v.shape[0]}"
        )
    if w_k.shape[2] != w_q.shape[2]:
        raise EngineError(
            f"w_q has shape {w_q.shape} and w_k has shape {w_k.shape}: queries and keys "
            f"need the same d_k, got {w_q.shape[2]} and {w_k.shape[2]}"
        )
    d_v = w_v.shape[2]
    if w_o is not None:
        w_o = as_array("w_o", w_o, 2)
        if w_o.shape[0] != heads * d_v:
            raise EngineError(
                f"w_o has shape {w_o.shape} but the concatenated heads have {heads} x {d_v} = "
                f"{heads * d_v} columns: w_o must be ({heads * d_v}, d_out)"
            )
    b_q = _check_bias("b_q", b_q, (heads, w_q.shape[2]))
    b_k = _check_bias("b_k", b_k, (heads, w_k.shape[2]))
    b_v = _check_bias("b_v", b_v, (heads, d_v))
    if b_o is not None:
        if w_o is None:
            raise EngineError("b_o is the bias of the output projection: it needs w_o")
        b_o = _check_bias("b_o", b_o, (w_o.shape[1],))
    if head_mask is not None:
        head_mask = _check_bias("head_mask", head_mask, (heads,))
    return multi_head_attention_trusted(
        x, w_q, w_k, w_v, w_o, x_kv=x_kv, scale=scale, causal=causal, temperature=temperature,
        blocked=blocked, kind=kind, additive=additive, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o, head_mask=head_mask)


def multi_head_attention_trusted(
    x, w_q, w_k, w_v, w_o=None, *, x_kv=None, scale=True, causal=False,
    temperature=1.0, blocked=None, kind="stable", additive=None,
    b_q=None, b_k=None, b_v=None, b_o=None, head_mask=None,
) -> MultiHeadResult:
    """:func:`multi_head_attention` on arrays already checked (a trained model's weights, checked
    once when loaded, and the hidden states they made): the same operations in the same order,
    without scanning every weight again on every pass."""
    x_kv = x if x_kv is None else x_kv
    heads, d_v = w_q.shape[0], w_v.shape[2]
    # (T, d_model) @ (h, d_model, d) broadcasts to (h, T, d): every head at once.
    q = x @ w_q
    k = x_kv @ w_k
    v = x_kv @ w_v
    if b_q is not None:
        q += b_q[:, None, :]
    if b_k is not None:
        k += b_k[:, None, :]
    if b_v is not None:
        v += b_v[:, None, :]
    if additive is None:
        scores = q @ np.swapaxes(k, -1, -2)
    else:
        scores = _batched_additive_scores(q, k, *additive)
        scale = False
    logits, weights, head_outputs, scale_factor, mask = attend_scores(
        scores, v, d_k=w_q.shape[2], scale=scale, causal=causal,
        temperature=temperature, blocked=blocked, kind=kind,
    )
    if head_mask is not None:
        head_outputs = head_outputs * head_mask[:, None, None]
    t_q = x.shape[0]
    concat = np.swapaxes(head_outputs, 0, 1).reshape(t_q, heads * d_v)
    output = concat if w_o is None else concat @ w_o
    if b_o is not None:
        output = output + b_o
    return MultiHeadResult(q, k, v, scores, logits, weights, head_outputs, concat, output, scale_factor, mask)


# Largest (heads x queries x keys x d_a) block of tanh terms formed at once.
_ADDITIVE_BLOCK = 4_000_000


def _batched_additive_scores(q: np.ndarray, k: np.ndarray, w_1, w_2, v_a) -> np.ndarray:
    """Additive scores for every head: q (h, Tq, d_k), k (h, Tk, d_k) -> (h, Tq, Tk)."""
    heads, t_q, d_k = q.shape
    w_1 = as_array("w_1", w_1, 3)
    w_2 = as_array("w_2", w_2, 3)
    v_a = as_array("v_a", v_a, 2)
    d_a = w_1.shape[2]
    if w_1.shape != (heads, d_k, d_a) or w_2.shape != (heads, d_k, d_a) or v_a.shape != (heads, d_a):
        raise EngineError(
            f"additive weights must be w_1, w_2 ({heads}, {d_k}, d_a) and v_a ({heads}, d_a); "
            f"got {w_1.shape}, {w_2.shape} and {v_a.shape}"
        )
    left = q @ w_1                      # (h, Tq, d_a)
    right = k @ w_2                     # (h, Tk, d_a)
    t_k = right.shape[1]
    scores = np.empty((heads, t_q, t_k))
    # Blocks of query rows keep the (h, rows, Tk, d_a) tanh tensor bounded.
    rows = max(1, _ADDITIVE_BLOCK // max(1, heads * t_k * d_a))
    for start in range(0, t_q, rows):
        hidden = np.tanh(left[:, start:start + rows, None, :] + right[:, None, :, :])
        scores[:, start:start + rows] = np.einsum("hqka,ha->hqk", hidden, v_a)
    return scores


def additive_scores(q, k, w_1, w_2, v_a) -> np.ndarray:
    """Bahdanau (additive) scores ``v_aᵀ·tanh(W_1 q_i + W_2 k_j)``: the seeds' "f_att".

    Row-vector shapes: ``q (Tq, d_q)``, ``k (Tk, d_k)``, ``w_1 (d_q, d_a)``,
    ``w_2 (d_k, d_a)``, ``v_a (d_a,)``. Returns ``(Tq, Tk)`` scores to compare
    with dot-product scores (feed them to :func:`attend_scores`).
    """
    q = as_array("q", q, 2)
    k = as_array("k", k, 2)
    w_1 = as_array("w_1", w_1, 2)
    w_2 = as_array("w_2", w_2, 2)
    v_a = as_array("v_a", v_a, 1)
    if w_1.shape[0] != q.shape[1]:
        raise EngineError(f"w_1 has shape {w_1.shape} but q has {q.shape[1]} columns: w_1 must be ({q.shape[1]}, d_a)")
    if w_2.shape[0] != k.shape[1]:
        raise EngineError(f"w_2 has shape {w_2.shape} but k has {k.shape[1]} columns: w_2 must be ({k.shape[1]}, d_a)")
    if w_1.shape[1] != w_2.shape[1] or v_a.shape[0] != w_1.shape[1]:
        raise EngineError(
            f"w_1 {w_1.shape}, w_2 {w_2.shape} and v_a {v_a.shape} must share the hidden size d_a"
        )
    hidden = np.tanh((q @ w_1)[:, None, :] + (k @ w_2)[None, :, :])
    return hidden @ v_a
