"""The studio's numbers in lecture words: filled-in formulas and the step-by-step chain.

No Qt here. Everything reads the engine's :class:`~attn_studio.engine.MultiHeadResult`
(``q, k, v, scores, logits, weights, head_outputs, scale_factor, blocked``) and
formats it the way the seeds write it::

    q2·k3 = 0.55×0.57 + 0.87×0.85 + 0.66×0.64 = 1.4754

Nothing here computes: the intermediates of the explained query (scaled
scores, shifted logits, exps and their sums, ``α_j·v_j``) come from
:func:`attn_studio.engine.query_steps`, computed once per result and query for
every head at once. Numbers are written by :mod:`attn_studio.formatting`;
every public function takes ``digits``, the precision setting (decimals).

Indices in the text are 1-based, as a lecturer counts tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .engine import QuerySteps, query_steps
from .formatting import DEFAULT_DIGITS, MINUS, format_number, format_vector

__all__ = [
    "MINUS",
    "Step",
    "STEP_KEYS",
    "cell_tooltip",
    "fmt",
    "fmt_vector",
    "format_value",
    "logits_title",
    "output_formula",
    "pipeline_steps",
    "score_formula",
    "scores_title",
    "selected_head",
    "stable_weight_tooltip",
    "step_tooltip",
    "steps_for",
    "weight_formula",
]

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

STEP_KEYS = ("query", "keys", "scores", "scaled", "masked", "exp", "weights", "weighted", "output")


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
        parts.append(f"÷ T={format_number(state.temperature, digits)}")
    return " ".join(parts)


def logits_title(state, result, digits: int = DEFAULT_DIGITS) -> str:
    """The title of the logits heatmap, saying what was actually computed.

    ``logits ÷ √3``, ``logits ÷ √3 ÷ T=2``, ``logits (unscaled)``,
    ``logits ÷ T=2 (no √d_k)``; additive scores, which the engine never
    scales, read ``logits (additive: not scaled)`` or ``logits ÷ T=2 (additive: no √d_k)``.
    """
    additive = state.score == "additive"
    scaled = result.scale_factor != 1.0
    tempered = state.temperature != 1.0
    temperature = f"÷ T={format_number(state.temperature, digits)}"
    if scaled:
        return f"logits ÷ √{result.q.shape[-1]}" + (f" {temperature}" if tempered else "")
    if tempered:
        return f"logits {temperature} ({'additive: ' if additive else ''}no √d_k)"
    return "logits (additive: not scaled)" if additive else "logits (unscaled)"


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
