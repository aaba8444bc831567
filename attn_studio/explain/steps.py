"""The step-by-step chain of one query token, as the seeds write it: nine :class:`Step` rows
(q, every k, q·k, scaled, masked, exp, weights, weighted values, the output) and the
filled-in formula behind each of their cells.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..formatting import DEFAULT_DIGITS, MINUS, format_number, format_vector
from .formulas import output_formula, score_formula, weight_formula
from .reading import (
    MAX_COMPONENTS, MAX_TERMS, TOOLTIP_COMPONENTS, _mask_reason, _row_exps, _row_status, _tokens, format_value,
    selected_head, steps_for,
)

STEP_KEYS = ("query", "keys", "scores", "scaled", "masked", "exp", "weights", "weighted", "output")


# -- the step-by-step chain ----------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One row of the step-by-step view for one query token.

    ``values`` has one entry per key token (a float, a vector, or None for
    nothing to show); ``result`` is the step's single outcome (the sum of
    exps, the output vector...) or None, named ``result_label``. ``status``
    says per key whether the cell is "" (a number), "masked", "overflow",
    "underflow" or "undefined"; ``result_status`` the same for the result.
    ``digits`` is the precision the texts are written with.
    """

    key: str
    title: str
    explanation: str
    values: list = field(default_factory=list)
    result: object = None
    result_label: str = ""
    status: list = field(default_factory=list)
    result_status: str = ""
    digits: int = DEFAULT_DIGITS

    def cell_text(self, j: int) -> str:
        """The text of key ``j``'s cell: a number, a vector, "masked", "overflow"..."""
        status = self.status[j] if j < len(self.status) else ""
        if status == "masked":
            return f"{MINUS}inf (masked)" if self.key == "masked" else "masked"
        if status:
            if self.key == "exp" and self.values[j] is not None and math.isfinite(float(self.values[j])):
                return format_value(self.values[j], self.digits)  # this exp is fine; the sum is not
            return status
        return format_value(self.values[j], self.digits)

    def result_text(self) -> str:
        """The text of the result cell, e.g. ``Σ = 6.5`` or ``z = (0.44, 0.65, 0.57)``."""
        if self.result is None:
            return ""
        text = self.result_status or format_value(self.result, self.digits)
        return f"{self.result_label} = {text}" if self.result_label else text


def _name_list(names: list[str], limit: int = 4) -> str:
    quoted = [f"“{n}”" for n in names]
    if len(quoted) <= limit:
        return ", ".join(quoted)
    return ", ".join(quoted[:limit]) + f" and {len(quoted) - limit} more"


def pipeline_steps(state, result, head: int | None = None, query: int | None = None, *,
                   digits: int = DEFAULT_DIGITS) -> list[Step]:
    """The seeds' chain for one query token, as nine :class:`Step` rows.

    ``query``, ``keys``, ``scores`` (q·k_j), ``scaled`` (÷√d_k, ÷T),
    ``masked`` (−inf where blocked), ``exp``, ``weights`` (α_j, sum 1),
    ``weighted`` (α_j·v_j) and ``output`` (z = Σ α_j v_j). ``head`` and
    ``query`` default to the state's selection. An empty list when there is
    no query token to explain. Every number comes from the engine
    (:func:`steps_for`); this only chooses the words.
    """
    n = lambda x: format_number(x, digits)  # noqa: E731
    vec = lambda v: format_vector(v, digits, MAX_COMPONENTS)  # noqa: E731
    head = selected_head(state, result) if head is None else int(head)
    query = int(state.query_index) if query is None else int(query)
    q_tokens, k_tokens = _tokens(state)
    if not q_tokens or not 0 <= query < result.q.shape[1] or not 0 <= head < result.q.shape[0]:
        return []
    i = query
    st = steps_for(state, result, i)
    t_k = result.k.shape[1]
    word = q_tokens[i]
    projections = bool(state.projections)
    q = result.q[head, i]
    k = result.k[head]
    scores = result.scores[head, i]
    logits = st.logits[head]
    weights = st.weights[head]
    output = st.output[head]
    blocked = st.blocked[head]
    masked_status = ["masked" if b else "" for b in blocked]
    plain = [""] * t_k
    row_status = _row_status(state, result, head, i)
    d_k = result.q.shape[-1]
    steps: list[Step] = []

    def step(*args):
        steps.append(Step(*args, digits=digits))

    # 1. the query vector
    if projections:
        expl = (f"The query of “{word}”: q = x·W_Q = {vec(q)}. It says what “{word}” is looking for; "
                "it stands above every key so each column reads as one inner product.")
    else:
        expl = (f"The query is “{word}”'s own vector q = {vec(q)} (simplified attention: Q = K = V = X), "
                "repeated above every key so each column reads as one inner product.")
    step("query", f"query q “{word}”", expl, [q] * t_k, None, "", list(plain))

    # 2. every key
    if projections:
        expl = ("Every token offers a key k_j = x_j·W_K: what it can be found by. "
                "(The values v_j = x_j·W_V are used in step 8.)")
    else:
        expl = "Every token's own vector is its key k_j (and its value v_j): Q = K = V = X."
    step("keys", "keys k_j", expl, list(k), None, "", list(plain))

    # 3. inner products (or additive scores)
    additive = not st.dot_product
    if t_k:
        best = int(np.argmax(scores))
        if additive:
            expl = (f"The additive score v_aᵀ·tanh(q·W_1 + k_j·W_2) rates how well “{word}” matches each token "
                    f"(a small neural network, not a dot product). Largest: “{k_tokens[best]}” ({n(scores[best])}).")
        else:
            expl = (f"The inner product q·k_j measures how similar “{word}” is to each token: positive when they "
                    f"point the same way, negative when they are dissimilar. Largest: “{k_tokens[best]}” "
                    f"({n(scores[best])}).")
    else:
        expl = "There are no keys to compare with."
    title = "additive scores vᵀtanh(qW₁+kW₂)" if additive else "inner products q·k_j"
    step("scores", title, expl, [float(x) for x in scores], None, "", list(plain))

    # 4. scaling (and temperature): the engine's logits, and the scaled scores where it masked them
    factor = float(result.scale_factor)
    temperature = float(state.temperature)
    t_text = format_number(temperature, digits)
    scaled = np.where(blocked, st.scaled[head], logits)
    if factor != 1.0 and temperature != 1.0:
        title = "÷ √d_k, ÷ T"
        expl = (f"Divide by √d_k = √{d_k} = {n(1.0 / factor)} so the scores do not grow with the dimension, "
                f"and by the temperature T = {t_text} ({'sharper' if temperature < 1 else 'flatter'} weights).")
    elif factor != 1.0:
        title = "÷ √d_k"
        expl = (f"Divide by √d_k = √{d_k} = {n(1.0 / factor)}: without it, inner products of long vectors "
                "grow with the dimension and the softmax saturates.")
    elif additive:
        title = "÷ T (additive: no √d_k)" if temperature != 1.0 else "no scaling (additive)"
        expl = ("Additive scores are not divided by √d_k: tanh already bounds them, and the √d_k argument "
                "is about dot products"
                + (f"; divide by the temperature T = {t_text} ({'sharper' if temperature < 1 else 'flatter'} "
                   "weights)." if temperature != 1.0 else ", so the scores pass unchanged."))
    elif temperature != 1.0:
        title = "÷ T (no √d_k)"
        expl = (f"No scaling by √d_k (it is switched off); divide by the temperature T = {t_text} "
                f"({'sharper' if temperature < 1 else 'flatter'} weights).")
    else:
        title = "no scaling"
        expl = "No scaling: division by √d_k is switched off and the temperature is 1, so the scores pass unchanged."
    step("scaled", title, expl, [float(x) for x in scaled], None, "", list(plain))

    # 5. the mask
    n_blocked = int(blocked.sum())
    if n_blocked == 0:
        expl = f"Nothing is masked: “{word}” may look at every token, so the logits pass unchanged."
    else:
        hidden = [k_tokens[j] for j in np.flatnonzero(blocked)]
        reason = "Causal mask: a token may not look ahead, so" if state.causal else "Masked:"
        expl = f"{reason} {_name_list(hidden)} get {MINUS}inf, and exp({MINUS}inf) = 0 gives them weight 0."
    step("masked", "mask (−inf where blocked)", expl, [float(x) for x in logits], None, "", list(masked_status))

    # 6. exp
    kind = state.softmax
    if kind == "sum":
        total = float(st.logit_total[head])
        expl = ("The plain normalisation skips exp: it divides the logits themselves by their sum "
                f"(Σ = {n(total)}). Negative logits give negative “weights” — the reason for the softmax.")
        step("exp", "no exp (plain x / Σx)", expl, [float(x) for x in np.where(blocked, 0.0, logits)], total, "Σ",
             list(masked_status), "undefined" if total == 0 else "")
    else:
        shifted = kind == "stable"
        exps, total, shift = _row_exps(state, result, head, i, shifted=shifted)
        if shifted:
            title = "exp(x − max)"
            expl = (f"exp makes every number positive. The stable softmax first subtracts the row maximum "
                    f"({n(shift)}): exp(x − max) can never overflow, and the weights come out the same. "
                    f"Σ = {n(total)}.")
            status = list(masked_status)
            total_status = ""
        else:
            title = "exp(x)"
            status = [("masked" if blocked[j] else ("overflow" if not math.isfinite(exps[j]) else ""))
                      for j in range(t_k)]
            if row_status == "overflow":
                expl = ("exp of each logit, without subtracting the maximum (naive softmax): exp of a large "
                        "number overflows to inf, and every weight of the row becomes undefined.")
                total_status = "overflow"
            elif row_status == "underflow":
                expl = ("exp of each logit, without subtracting the maximum (naive softmax): every exp "
                        "underflows to 0, so the weights are 0 / 0, undefined.")
                total_status = "underflow"
            else:
                expl = f"exp makes every number positive (naive softmax: exp(x) as is). Σ = {n(total)}."
                total_status = ""
        step("exp", title, expl, [float(e) for e in exps], total, "Σ", status, total_status)

    # 7. normalised weights
    weight_status = [("masked" if b else row_status) for b in blocked]
    if row_status:
        expl = (f"The weights are undefined ({row_status}): "
                + ("use the stable softmax, which subtracts the row maximum first."
                   if kind == "naive" else "the logits sum to 0, so they cannot be divided by their sum."))
        w_sum_status = row_status
    elif t_k == 0:
        expl = "There are no keys: nothing to attend to, so there are no weights and the output is 0."
        w_sum_status = ""
    else:
        denominator = "their sum" if kind == "sum" else "the sum of the exps"
        expl = f"Divide each by {denominator}: the weights α_j are between 0 and 1 and add up to 1."
        if not blocked.all():
            best = int(np.argmax(np.where(blocked, -np.inf, weights)))
            expl += f" “{word}” attends most to “{k_tokens[best]}” ({n(weights[best])})."
        w_sum_status = ""
    step("weights", "weights α_j (sum 1)", expl, [float(w) for w in weights], float(st.weight_total[head]), "Σ",
         weight_status, w_sum_status)

    # 8. weighted values
    value_name = "value vector v_j = x_j·W_V" if projections else "vector v_j"
    expl = (f"Multiply each {value_name} by its weight α_j: the tokens “{word}” is most related to "
            "contribute the most.")
    step("weighted", "α_j · v_j", expl, list(st.weighted[head]), None, "", list(weight_status))

    # 9. the output vector
    if row_status:
        expl = "The output is undefined because the weights are."
    else:
        expl = (f"Add the weighted vectors: z = Σ α_j v_j = {vec(output)}, the new vector of “{word}”, "
                "carrying context from the tokens it attends to.")
    step("output", "output z = Σ α_j v_j", expl, [None] * t_k, output, "z", list(plain), row_status)
    return steps


def step_tooltip(state, result, head: int, query: int, step_key: str, j: int | None, *,
                 digits: int = DEFAULT_DIGITS) -> str:
    """The filled-in formula for one cell of the step-by-step view.

    ``j`` is the key index, or None for the result column. Empty text when the
    cell has nothing to explain.
    """
    n = lambda x: format_number(x, digits)  # noqa: E731
    long_vec = lambda v: format_vector(v, digits, TOOLTIP_COMPONENTS)  # noqa: E731
    i = query
    q_tokens, k_tokens = _tokens(state)
    t_k = result.k.shape[1]
    if j is not None and not 0 <= j < t_k:
        return ""
    if step_key == "query":
        name = "x·W_Q" if state.projections else "x"
        return f"q = {name} of “{q_tokens[i]}” = {long_vec(result.q[head, i])}"
    if step_key == "keys":
        if j is None:
            return ""
        name = "x_j·W_K" if state.projections else "x_j"
        return f"k{j + 1} = {name} of “{k_tokens[j]}” = {long_vec(result.k[head, j])}"
    if step_key in ("scores", "scaled", "masked"):
        if j is None:
            return ""
        return score_formula(state, result, head, i, j, names=False, digits=digits)
    st = steps_for(state, result, i)
    if step_key == "exp":
        if state.softmax == "sum":
            if j is None:
                return "Σ = sum of the (unmasked) logits"
            return "no exp: the plain normalisation uses the logit itself"
        shifted = state.softmax == "stable"
        exps, total, shift = _row_exps(state, result, head, i, shifted=shifted)
        if j is None:
            return f"Σ = {' + '.join(n(e) for e in exps[:MAX_TERMS])}{' + …' if t_k > MAX_TERMS else ''} = {n(total)}"
        if bool(st.blocked[head, j]):
            return f"exp({MINUS}inf) = 0: {_mask_reason(state, i, j)}"
        logit = float(st.logits[head, j])
        if shifted:
            return f"exp(x − max) = exp({n(logit)} − {n(shift)}) = {n(exps[j])}"
        if not math.isfinite(exps[j]):
            return f"exp({n(logit)}) overflows to inf (use the stable softmax)"
        return f"exp({n(logit)}) = {n(exps[j])}"
    if step_key == "weights":
        if j is None:
            status = _row_status(state, result, head, i)
            if status:
                return f"the weights are undefined ({status}), and so is their sum"
            return f"Σ α_j = {n(st.weight_total[head])}: the weights add up to 1"
        return weight_formula(state, result, head, i, j, shifted=True if state.softmax == "stable" else None,
                              digits=digits)
    if step_key == "weighted":
        if j is None:
            return ""
        if bool(st.blocked[head, j]):
            return f"α_{j + 1} = 0 ({_mask_reason(state, i, j)}): this value contributes nothing"
        status = _row_status(state, result, head, i)
        if status:
            return f"α_{j + 1} is undefined ({status}), so α_{j + 1}·v_{j + 1} is too"
        return (f"α_{j + 1}·v_{j + 1} = {n(st.weights[head, j])} × {long_vec(result.v[head, j])} = "
                f"{long_vec(st.weighted[head, j])}")
    if step_key == "output":
        if j is not None:
            return ""
        d_v = result.head_outputs.shape[-1]
        shown = min(d_v, 8)
        lines = [output_formula(state, result, head, i, c, digits=digits) for c in range(shown)]
        if d_v > shown:
            lines.append(f"… ({d_v - shown} more components)")
        return "\n".join(lines)
    return ""
