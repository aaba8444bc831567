"""Filled-in formulas: the text behind a heatmap cell (score, logit, weight, output) and a
table cell (what the number is and where it acts), from the engine's numbers.
"""

from __future__ import annotations

import math

import numpy as np

from ..formatting import DEFAULT_DIGITS, MINUS, format_number
from .reading import (
    _blocked, _k_name, _mask_reason, _q_name, _row_exps, _row_status, _scaling_text, _sum_of_products, _tokens,
    _use_shift, selected_head, steps_for,
)

# -- formulas ------------------------------------------------------------------
def score_formula(state, result, head: int, i: int, j: int, *, names: bool = False,
                  digits: int = DEFAULT_DIGITS) -> str:
    """The filled-in score of query ``i`` and key ``j`` (0-based) in ``head``.

    ``q2·k3 = 0.55×0.57 + 0.87×0.85 + 0.66×0.64 = 1.4754;  ÷√3 = 0.8518``.
    With ``names``: ``q(journey)·k(starts) = …``. A long dot product shows its
    first three and last terms and how many there are; the temperature
    appears as ``÷ T=…``; a blocked cell ends with "masked (…) → −inf".
    Additive scores, which are not dot products, say so.
    """
    n = lambda x: format_number(x, digits)  # noqa: E731
    st = steps_for(state, result, i)
    score = float(result.scores[head, i, j])
    lhs = f"{_q_name(state, i, names)}·{_k_name(state, j, names)}"
    if st.dot_product:
        pairs = zip(result.q[head, i], result.k[head, j])
        text = f"{lhs} = {_sum_of_products(pairs, 'terms', digits)} = {n(score)}"
    else:
        text = f"score({_q_name(state, i, names)}, {_k_name(state, j, names)}) = {n(score)} (not a dot product)"
    if bool(st.blocked[head, j]):
        return f"{text};  {_mask_reason(state, i, j)} → {MINUS}inf"
    scaling = _scaling_text(state, result, digits)
    if scaling:
        text += f";  {scaling} = {n(result.logits[head, i, j])}"
    return text


def weight_formula(state, result, head: int, i: int, j: int, *, shifted: bool | None = None,
                   digits: int = DEFAULT_DIGITS) -> str:
    """The filled-in attention weight of query ``i`` on key ``j``.

    Stable and naive softmax: ``α = exp(0.8518) / Σ exp(row) = 2.3439 / 9.87 = 0.2375``.
    The stable softmax is shown with the row maximum subtracted
    (``exp(x − max)``) when ``shifted`` is True, or, when ``shifted`` is None,
    only if the logits are too large to read unshifted. Plain normalisation:
    ``α = 0.85 / Σ row = 0.85 / 5.23 = 0.1625``. Blocked keys: "masked: weight 0".
    A naive softmax that overflowed says so instead of showing a number.
    """
    n = lambda x: format_number(x, digits)  # noqa: E731
    weight = float(result.weights[head, i, j])
    st = steps_for(state, result, i)
    if bool(st.blocked[head, j]):
        return f"α = 0: {_mask_reason(state, i, j)}, so exp({MINUS}inf) = 0 — masked: weight 0"
    logit = float(result.logits[head, i, j])
    kind = state.softmax
    if kind == "sum":
        total = float(st.logit_total[head])
        if not math.isfinite(weight):
            return (f"α = {n(logit)} / Σ row = {n(logit)} / {n(total)}: the row sums to 0, "
                    "weight undefined (use a softmax)")
        return f"α = {n(logit)} / Σ row = {n(logit)} / {n(total)} = {n(weight)}"
    use_shift = _use_shift(state, result, head, i, shifted)
    exps, total, shift = _row_exps(state, result, head, i, shifted=use_shift)
    e = float(exps[j])
    if kind == "naive":
        if not math.isfinite(e):
            return f"exp({n(logit)}) overflows to inf: weight undefined (use the stable softmax)"
        if not math.isfinite(total):
            return (f"α = exp({n(logit)}) / Σ exp(row) = {n(e)} / inf: exp of another key overflows "
                    "to inf, so the weight is undefined (use the stable softmax)")
        if total == 0.0:
            return (f"α = exp({n(logit)}) / Σ exp(row) = 0 / 0: every exp underflows to 0, "
                    "weight undefined (use the stable softmax)")
    if use_shift:
        return (f"α = exp(x − max) / Σ exp(row − max) = exp({n(logit)} − {n(shift)}) / Σ = "
                f"{n(e)} / {n(total)} = {n(weight)}  (the row max {n(shift)} is subtracted first; "
                "the weights are the same)")
    return f"α = exp({n(logit)}) / Σ exp(row) = {n(e)} / {n(total)} = {n(weight)}"


def output_formula(state, result, head: int, i: int, c: int, *, digits: int = DEFAULT_DIGITS) -> str:
    """Component ``c`` (0-based) of query ``i``'s head output, filled in.

    ``z2[1] = Σ_j α_j v_j[1] = 0.1385×0.43 + … = 0.4419`` (masked keys, whose
    weight is 0, are left out of the sum).
    """
    st = steps_for(state, result, i)
    weights = st.weights[head]
    v = result.v[head][:, c]
    z = float(st.output[head, c])
    lhs = f"z{i + 1}[{c + 1}] = Σ_j α_j·v_j[{c + 1}]"
    status = _row_status(state, result, head, i)
    if status in ("overflow", "underflow"):
        return f"{lhs}: the weights are undefined (the naive softmax {status}s), so z is too (use the stable softmax)"
    if status == "undefined":
        return f"{lhs}: the weights are undefined (the row sums to 0), so z is too"
    kept = np.flatnonzero(~st.blocked[head])
    note = ""
    masked = weights.size - kept.size
    if masked:
        note = f"  ({masked} masked key{'s' if masked != 1 else ''} add 0)"
    if not kept.size:
        return f"{lhs} = 0: every key is masked"
    body = _sum_of_products(zip(weights[kept], v[kept]), "keys", digits)
    return f"{lhs} = {body} = {format_number(z, digits)}{note}"


def cell_tooltip(state, result, stage: str, head: int, i: int, j: int, *, digits: int = DEFAULT_DIGITS) -> str:
    """Tooltip of heatmap cell (query ``i``, key ``j``) of ``stage`` ("scores", "logits" or "weights")."""
    if stage not in ("scores", "logits", "weights"):
        raise ValueError(f"stage must be 'scores', 'logits' or 'weights', got {stage!r}")
    q_tokens, k_tokens = _tokens(state)
    heads = result.weights.shape[0]
    where = f"query {i + 1} “{q_tokens[i]}” → key {j + 1} “{k_tokens[j]}”"
    if heads > 1:
        where += f", head {head + 1}"
    lines = [where, score_formula(state, result, head, i, j, digits=digits)]
    if stage == "logits" and not _blocked(result, head, i, j) and not _scaling_text(state, result, digits):
        if state.score == "additive":
            lines.append("additive scores are not scaled: the logit is the score")
        else:
            lines.append("no scaling: the logit is the score")
    if stage == "weights":
        lines.append(weight_formula(state, result, head, i, j, digits=digits))
    return "\n".join(lines)


def stable_weight_tooltip(state, result, stable_weights, head: int, i: int, j: int, *,
                          digits: int = DEFAULT_DIGITS) -> str:
    """Tooltip of a cell of the "stable softmax (compare)" heatmap.

    ``stable_weights`` are the engine's stable-softmax weights of the same
    logits (``Studio.weights_with("stable")``).
    """
    text = cell_tooltip(state, result, "logits", head, i, j, digits=digits)
    weight = format_number(stable_weights[head, i, j], digits)
    return f"{text}\nstable softmax (row max subtracted first): α = {weight}"


def table_cell_tooltip(studio, table: str, row: int, col: int, *, digits: int = DEFAULT_DIGITS) -> str:
    """Tooltip of a cell of an editable table: what the number is and where it acts.

    ``table`` is "embeddings", "w_q", "w_k", "w_v" (the chosen head), "w_o",
    "w_1", "w_2" or "v_a". The numbers come from the studio's state, its
    inputs (x + PE) and its result.
    """
    n = lambda x: format_number(x, digits)  # noqa: E731
    state, result = studio.state, studio.result
    head = selected_head(state, result) if state.projections else 0
    if table == "embeddings":
        words = state.key_tokens + (state.target_tokens if state.cross else [])
        word = words[row]
        value = float(studio.embeddings([word])[0, col])
        edited = col in state.embedding_edits.get(word, {})
        origin = "typed by you" if edited else f"drawn from seed {state.seed}"
        lines = [f"x(“{word}”)[d{col + 1}] = {n(value)}  ({origin})",
                 "Every occurrence of this word shares this vector."]
        if state.positional:
            n_keys = len(state.key_tokens)
            position = row if row < n_keys else row - n_keys
            pe = float(studio.positions(position + 1)[position, col])
            inputs = studio.x_kv if row < n_keys else studio.x
            seen = float(inputs[position, col])
            lines.append(f"Attention sees x + PE = {n(value)} + {n(pe)} = {n(seen)} at position {position}.")
        return "\n".join(lines)
    if table in ("w_q", "w_k", "w_v"):
        letter = table[-1]
        matrix = getattr(state, table)[head]
        value = float(matrix[row, col])
        tokens = state.query_tokens if letter == "q" else state.key_tokens
        lines = [f"W_{letter.upper()}[x{row + 1}, {letter}{col + 1}] of head {head + 1} = {n(value)}",
                 f"{letter}{col + 1} = Σ_i x_i · W_{letter.upper()}[i, {col + 1}]: this number weighs "
                 f"component x{row + 1} of every token."]
        if tokens:
            i = min(state.query_index, len(tokens) - 1) if letter == "q" else 0
            vec = getattr(result, letter)[head, i, col]
            lines.append(f"For “{tokens[i]}”: {letter}{col + 1} = {n(float(vec))}")
        return "\n".join(lines)
    if table == "w_o":
        value = float(state.w_o[row, col])
        h, j = divmod(row, state.d_head)
        return (f"W_O[h{h + 1}·v{j + 1}, out{col + 1}] = {n(value)}\n"
                f"How much value dimension {j + 1} of head {h + 1} contributes to output dimension {col + 1}.")
    if table in ("w_1", "w_2"):
        side = "query" if table == "w_1" else "key"
        value = float(getattr(state, table)[min(head, getattr(state, table).shape[0] - 1)][row, col])
        return (f"{table.upper()}[{row + 1}, {col + 1}] = {n(value)}\n"
                f"Additive score v_aᵀ·tanh(q·W_1 + k·W_2): this weight acts on the {side}.")
    if table == "v_a":
        return (f"v_a of head {row + 1}, component {col + 1} = {n(float(state.v_a[row, col]))}\n"
                "Weighs tanh feature a of the additive score.")
    raise ValueError(f"unknown table {table!r}")
