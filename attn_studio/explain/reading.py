"""What the engine computed, read for the explanations: numbers as the seeds write them, the
token names of a row, the row's exps and status, and the heatmaps' titles.

Nothing here computes: the intermediates of a query come from
:func:`attn_studio.engine.query_steps`, once per result and query (:func:`steps_for`).
"""

from __future__ import annotations

import math

import numpy as np

from ..engine import QuerySteps, query_steps
from ..formatting import DEFAULT_DIGITS, MINUS, format_number, format_setting, format_vector

# A dot product with more terms than this is shown as the first three, "… +", the last.
MAX_TERMS = 6
# Vectors longer than this are shown as their first three components and "…"
# (tooltips show up to TOOLTIP_COMPONENTS).
MAX_COMPONENTS = 4
TOOLTIP_COMPONENTS = 16
# The stable softmax's weights are explained with the unshifted exp(x) while
# every logit of the row is at most this (exp(20) ≈ 4.9e8 still reads well);
# beyond it the row maximum is subtracted first, as the engine does.
UNSHIFTED_LIMIT = 20.0


# -- numbers -------------------------------------------------------------------
def fmt(x, digits: int = DEFAULT_DIGITS) -> str:
    """A number as the seeds write it: :func:`attn_studio.formatting.format_number`."""
    return format_number(x, digits)


def fmt_vector(v, max_components: int = MAX_COMPONENTS, digits: int = DEFAULT_DIGITS) -> str:
    """A vector compactly: :func:`attn_studio.formatting.format_vector`."""
    return format_vector(v, digits, max_components)


def format_value(value, digits: int = DEFAULT_DIGITS) -> str:
    """A step value as text: a number, a vector, or "" for nothing."""
    if value is None:
        return ""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return format_number(float(arr), digits)
    return format_vector(arr, digits, MAX_COMPONENTS)


def format_factor(x: float, digits: int = DEFAULT_DIGITS) -> str:
    """A factor of a product: negatives in parentheses, ``0.55×(−0.03)``."""
    text = format_number(x, digits)
    return f"({text})" if text.startswith(MINUS) else text


def _sum_of_products(pairs, count_label: str, digits: int) -> str:
    """``a×b + c×d + …``, shortened to the first three and the last term when long."""
    terms = [f"{format_factor(a, digits)}×{format_factor(b, digits)}" for a, b in pairs]
    if len(terms) <= MAX_TERMS:
        return " + ".join(terms) if terms else "0"
    return " + ".join(terms[:3]) + " + … + " + terms[-1] + f" ({len(terms)} {count_label})"


# -- reading the result ------------------------------------------------------------
def selected_head(state, result) -> int:
    """The head to explain: ``state.head_index``, or the last computed head.

    Without projections the engine computes a single head whatever
    ``state.heads`` says, so the index is clamped to what exists.
    """
    return state.shown_head


def _tokens(state):
    return list(state.query_tokens), list(state.key_tokens)


def _q_name(state, i: int, names: bool) -> str:
    q_tokens, _ = _tokens(state)
    if names and 0 <= i < len(q_tokens):
        return f"q({q_tokens[i]})"
    return f"q{i + 1}"


def _k_name(state, j: int, names: bool) -> str:
    _, k_tokens = _tokens(state)
    if names and 0 <= j < len(k_tokens):
        return f"k({k_tokens[j]})"
    return f"k{j + 1}"


def _mask_reason(state, i: int, j: int) -> str:
    if state.causal and j > i:
        return "masked (causal: key after query)"
    return "masked"


# The intermediates of the last explained query: hovering cell after cell of
# one row asks for the same numbers, which the engine computes once.
_LAST_STEPS: list = []


def steps_for(state, result, query: int) -> QuerySteps:
    """The engine's :class:`~attn_studio.engine.QuerySteps` of ``result`` for ``query``.

    Computed once per (result, query): the last one is kept, and results are
    immutable, so holding it is safe.
    """
    additive = state.score == "additive"
    key = (query, float(state.temperature), additive)
    if _LAST_STEPS and _LAST_STEPS[0] is result and _LAST_STEPS[1] == key:
        return _LAST_STEPS[2]
    steps = query_steps(result, query, temperature=state.temperature, additive=additive)
    _LAST_STEPS[:] = [result, key, steps]
    return steps


def _scaling_text(state, result, digits: int = DEFAULT_DIGITS) -> str:
    """"÷√3", "÷√3 ÷ T=0.5", "÷ T=2" or "" (no scaling, temperature 1).

    Reads the scale factor the engine used: additive scores are never scaled,
    whatever the scaling switch says.
    """
    parts = []
    if result.scale_factor != 1.0:
        d_k = result.q.shape[-1]
        parts.append(f"÷√{d_k}")
    if state.temperature != 1.0:
        parts.append(f"÷ T={format_setting(state.temperature)}")
    return " ".join(parts)


def logits_title(state, result, digits: int = DEFAULT_DIGITS) -> str:
    """The title of the logits heatmap, saying what was actually computed.

    ``logits ÷ √3``, ``logits ÷ √3 ÷ T=2``, ``logits = scores`` (the same
    numbers as the scores beside it, and said so),
    ``logits ÷ T=2 (no √d_k)``; additive scores, which the engine never
    scales, read ``logits = scores (additive)`` or ``logits ÷ T=2 (additive: no √d_k)``.
    """
    additive = state.score == "additive"
    scaled = result.scale_factor != 1.0
    tempered = state.temperature != 1.0
    temperature = f"÷ T={format_setting(state.temperature)}"
    if scaled:
        return f"logits ÷ √{result.q.shape[-1]}" + (f" {temperature}" if tempered else "")
    if tempered:
        return f"logits {temperature} ({'additive: ' if additive else ''}no √d_k)"
    return "logits = scores (additive)" if additive else "logits = scores"


def scores_title(state) -> str:
    """The title of the scores heatmap: which score function produced the numbers."""
    return "scores vᵀtanh(qW₁+kW₂)" if state.score == "additive" else "scores q·k"


def _row_exps(state, result, head: int, i: int, shifted: bool):
    """``exp`` of row ``i``'s logits as the softmax uses them, their sum and the shift (engine numbers)."""
    st = steps_for(state, result, i)
    if shifted:
        return st.exps[head], float(st.exp_total[head]), float(st.shift[head])
    return st.naive_exps[head], float(st.naive_total[head]), 0.0


def _row_status(state, result, head: int, i: int) -> str:
    """"" when the row's weights are meaningful, else "overflow", "underflow" or "undefined"."""
    st = steps_for(state, result, i)
    if st.blocked[head].all():
        return ""
    kind = state.softmax
    if kind == "naive":
        total = float(st.naive_total[head])
        if not math.isfinite(total):
            return "overflow"
        if total == 0.0:
            return "underflow"
        return ""
    if kind == "sum":
        return "" if np.all(np.isfinite(st.weights[head])) else "undefined"
    return ""


def _blocked(result, head: int, i: int, j: int) -> bool:
    b = result.blocked
    return bool(b[i, j] if b.ndim == 2 else b[head, i, j])


def _use_shift(state, result, head: int, i: int, shifted: bool | None) -> bool:
    if state.softmax != "stable":
        return False
    if shifted is not None:
        return bool(shifted)
    logits = np.asarray(result.logits[head, i], dtype=np.float64)
    finite = logits[np.isfinite(logits)]
    return bool(finite.size and np.max(np.abs(finite)) > UNSHIFTED_LIMIT)
