"""The studio's numbers in lecture words: filled-in formulas and the step-by-step chain.

No Qt here. Everything reads the engine's :class:`~attn_studio.engine.MultiHeadResult`
(``q, k, v, scores, logits, weights, head_outputs, scale_factor, blocked``) and
formats it the way the seeds write it::

    q2·k3 = 0.55×0.57 + 0.87×0.85 + 0.66×0.64 = 1.4754

Nothing here computes attention. The only arithmetic is re-deriving, for
display, the numbers the engine used on the way: the products of a dot
product, ``exp`` of a logit (shifted by the row maximum for the stable
softmax, as the engine does), the sum of those exps, and ``α_j·v_j``.

Indices in the text are 1-based, as a lecturer counts tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .engine import softmax_steps

__all__ = [
    "MINUS",
    "Step",
    "STEP_KEYS",
    "cell_tooltip",
    "fmt",
    "fmt_vector",
    "format_value",
    "output_formula",
    "pipeline_steps",
    "score_formula",
    "selected_head",
    "step_tooltip",
    "weight_formula",
]

MINUS = "\u2212"  # the typographic minus the seeds print: −0.1061

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
def fmt(x) -> str:
    """A number as the seeds write it: 0.55, 1.4754, −0.1061, 0.00356.

    Four decimals with trailing zeros dropped; four significant digits for
    numbers below 0.01, scientific notation (``1.254e−56``) below 0.0001 and
    from a million on. ``−inf`` (a masked logit) reads "−inf"; ``+inf`` and
    NaN, which only the naive softmax (or a plain normalisation dividing by
    zero) produces, read "overflow".
    """
    x = float(x)
    if math.isnan(x) or x == math.inf:
        return "overflow"
    if x == -math.inf:
        return f"{MINUS}inf"
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1e6 or a < 1e-4:
        mantissa, exponent = f"{x:.4e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        text = f"{mantissa}e{int(exponent)}"
    elif a < 0.01:
        text = f"{x:.4g}"
    else:
        text = f"{x:.4f}".rstrip("0").rstrip(".")
    if text in ("-0", "0", ""):
        return "0"
    return text.replace("-", MINUS)


def fmt_vector(v, max_components: int = MAX_COMPONENTS) -> str:
    """A vector compactly: ``(0.55, 0.87, 0.66)``; a long one as ``(0.55, 0.87, 0.66, …) d=64``."""
    arr = np.asarray(v, dtype=np.float64).ravel()
    n = arr.size
    if n <= max_components:
        return "(" + ", ".join(fmt(c) for c in arr) + ")"
    return "(" + ", ".join(fmt(c) for c in arr[:3]) + f", …) d={n}"


def format_value(value) -> str:
    """A step value as text: a number, a vector, or "" for nothing."""
    if value is None:
        return ""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return fmt(float(arr))
    return fmt_vector(arr)


def _factor(x: float) -> str:
    """A factor of a product: negatives in parentheses, ``0.55×(−0.03)``."""
    text = fmt(x)
    return f"({text})" if text.startswith(MINUS) else text


def _sum_of_products(pairs, count_label: str) -> str:
    """``a×b + c×d + …``, shortened to the first three and the last term when long."""
    terms = [f"{_factor(a)}×{_factor(b)}" for a, b in pairs]
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


def _scaling_text(state, result) -> str:
    """"÷√3", "÷√3 ÷ T=0.5", "÷ T=2" or "" (no scaling, temperature 1)."""
    parts = []
    if result.scale_factor != 1.0:
        d_k = result.q.shape[-1]
        parts.append(f"÷√{d_k}")
    if state.temperature != 1.0:
        parts.append(f"÷ T={state.temperature:g}")
    return " ".join(parts)


def _row_exps(state, result, head: int, i: int, shifted: bool):
    """``exp`` of row ``i``'s logits as the softmax uses them, and the shift.

    Returns ``(exps, shift)``: blocked keys give 0; ``shift`` is the row
    maximum subtracted first (0 when not shifted or when every key is blocked).
    """
    steps = softmax_steps(result.logits[head, i], shifted=shifted)
    return steps.exps, float(steps.shift)


def _row_status(state, result, head: int, i: int) -> str:
    """"" when the row's weights are meaningful, else "overflow", "underflow" or "undefined"."""
    blocked = np.asarray(result.blocked[i], dtype=bool) if result.blocked.ndim == 2 else np.asarray(
        result.blocked[head, i], dtype=bool)
    if blocked.all():
        return ""
    kind = state.softmax
    if kind == "naive":
        exps, _ = _row_exps(state, result, head, i, shifted=False)
        with np.errstate(over="ignore", invalid="ignore"):
            total = float(np.sum(exps))
        if not math.isfinite(total):
            return "overflow"
        if total == 0.0:
            return "underflow"
        return ""
    if kind == "sum":
        weights = np.asarray(result.weights[head, i], dtype=np.float64)
        return "" if np.all(np.isfinite(weights)) else "undefined"
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
def score_formula(state, result, head: int, i: int, j: int, *, names: bool = False) -> str:
    """The filled-in score of query ``i`` and key ``j`` (0-based) in ``head``.

    ``q2·k3 = 0.55×0.57 + 0.87×0.85 + 0.66×0.64 = 1.4754;  ÷√3 = 0.8518``.
    With ``names``: ``q(journey)·k(starts) = …``. A long dot product shows its
    first three and last terms and how many there are; the temperature
    appears as ``÷ T=…``; a blocked cell ends with "masked (…) → −inf".
    """
    q = result.q[head, i]
    k = result.k[head, j]
    score = float(result.scores[head, i, j])
    lhs = f"{_q_name(state, i, names)}·{_k_name(state, j, names)}"
    with np.errstate(over="ignore", invalid="ignore"):
        direct = float(np.dot(q, k))
    if math.isclose(direct, score, rel_tol=1e-9, abs_tol=1e-12) or not math.isfinite(score):
        text = f"{lhs} = {_sum_of_products(zip(q, k), 'terms')} = {fmt(score)}"
    else:  # scores that are not q·k (additive scores): say so instead of a wrong sum
        text = f"score({_q_name(state, i, names)}, {_k_name(state, j, names)}) = {fmt(score)} (not a dot product)"
    if _blocked(result, head, i, j):
        return f"{text};  {_mask_reason(state, i, j)} → {MINUS}inf"
    scaling = _scaling_text(state, result)
    if scaling:
        text += f";  {scaling} = {fmt(result.logits[head, i, j])}"
    return text


def weight_formula(state, result, head: int, i: int, j: int, *, shifted: bool | None = None) -> str:
    """The filled-in attention weight of query ``i`` on key ``j``.

    Stable and naive softmax: ``α = exp(0.8518) / Σ exp(row) = 2.3439 / 9.8700 = 0.2375``.
    The stable softmax is shown with the row maximum subtracted
    (``exp(x − max)``) when ``shifted`` is True, or, when ``shifted`` is None,
    only if the logits are too large to read unshifted. Plain normalisation:
    ``α = 0.85 / Σ row = 0.85 / 5.23 = 0.1625``. Blocked keys: "masked: weight 0".
    A naive softmax that overflowed says so instead of showing a number.
    """
    weight = float(result.weights[head, i, j])
    if _blocked(result, head, i, j):
        return f"α = 0: {_mask_reason(state, i, j)}, so exp({MINUS}inf) = 0 — masked: weight 0"
    logit = float(result.logits[head, i, j])
    kind = state.softmax
    if kind == "sum":
        logits = np.asarray(result.logits[head, i], dtype=np.float64)
        total = float(np.sum(np.where(np.isfinite(logits), logits, 0.0)))
        if not math.isfinite(weight):
            return (f"α = {fmt(logit)} / Σ row = {fmt(logit)} / {fmt(total)}: the row sums to 0, "
                    "weight undefined (use a softmax)")
        return f"α = {fmt(logit)} / Σ row = {fmt(logit)} / {fmt(total)} = {fmt(weight)}"
    use_shift = _use_shift(state, result, head, i, shifted)
    exps, shift = _row_exps(state, result, head, i, shifted=use_shift)
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.sum(exps))
    e = float(exps[j])
    if kind == "naive":
        if not math.isfinite(e):
            return f"exp({fmt(logit)}) overflows to inf: weight undefined (use the stable softmax)"
        if not math.isfinite(total):
            return (f"α = exp({fmt(logit)}) / Σ exp(row) = {fmt(e)} / inf: exp of another key overflows "
                    "to inf, so the weight is undefined (use the stable softmax)")
        if total == 0.0:
            return (f"α = exp({fmt(logit)}) / Σ exp(row) = 0 / 0: every exp underflows to 0, "
                    "weight undefined (use the stable softmax)")
    if use_shift:
        return (f"α = exp(x − max) / Σ exp(row − max) = exp({fmt(logit)} − {fmt(shift)}) / Σ = "
                f"{fmt(e)} / {fmt(total)} = {fmt(weight)}  (the row max {fmt(shift)} is subtracted first; "
                "the weights are the same)")
    return f"α = exp({fmt(logit)}) / Σ exp(row) = {fmt(e)} / {fmt(total)} = {fmt(weight)}"


def output_formula(state, result, head: int, i: int, c: int) -> str:
    """Component ``c`` (0-based) of query ``i``'s head output, filled in.

    ``z2[1] = Σ_j α_j v_j[1] = 0.1385×0.43 + … = 0.4419`` (masked keys, whose
    weight is 0, are left out of the sum).
    """
    weights = np.asarray(result.weights[head, i], dtype=np.float64)
    v = np.asarray(result.v[head][:, c], dtype=np.float64)
    z = float(result.head_outputs[head, i, c])
    lhs = f"z{i + 1}[{c + 1}] = Σ_j α_j·v_j[{c + 1}]"
    status = _row_status(state, result, head, i)
    if status in ("overflow", "underflow"):
        return f"{lhs}: the weights are undefined (the naive softmax {status}s), so z is too (use the stable softmax)"
    if status == "undefined":
        return f"{lhs}: the weights are undefined (the row sums to 0), so z is too"
    kept = [j for j in range(weights.size) if not _blocked(result, head, i, j)]
    note = ""
    if len(kept) < weights.size:
        note = f"  ({weights.size - len(kept)} masked key{'s' if weights.size - len(kept) != 1 else ''} add 0)"
    if not kept:
        return f"{lhs} = 0: every key is masked"
    body = _sum_of_products(((weights[j], v[j]) for j in kept), "keys")
    return f"{lhs} = {body} = {fmt(z)}{note}"


def cell_tooltip(state, result, stage: str, head: int, i: int, j: int) -> str:
    """Tooltip of heatmap cell (query ``i``, key ``j``) of ``stage`` ("scores", "logits" or "weights")."""
    if stage not in ("scores", "logits", "weights"):
        raise ValueError(f"stage must be 'scores', 'logits' or 'weights', got {stage!r}")
    q_tokens, k_tokens = _tokens(state)
    heads = result.weights.shape[0]
    where = f"query {i + 1} “{q_tokens[i]}” → key {j + 1} “{k_tokens[j]}”"
    if heads > 1:
        where += f", head {head + 1}"
    lines = [where, score_formula(state, result, head, i, j)]
    if stage == "logits" and not _blocked(result, head, i, j) and not _scaling_text(state, result):
        lines.append("no scaling: the logit is the score")
    if stage == "weights":
        lines.append(weight_formula(state, result, head, i, j))
    return "\n".join(lines)


# -- the step-by-step chain ----------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One row of the step-by-step view for one query token.

    ``values`` has one entry per key token (a float, a vector, or None for
    nothing to show); ``result`` is the step's single outcome (the sum of
    exps, the output vector...) or None, named ``result_label``. ``status``
    says per key whether the cell is "" (a number), "masked", "overflow",
    "underflow" or "undefined"; ``result_status`` the same for the result.
    """

    key: str
    title: str
    explanation: str
    values: list = field(default_factory=list)
    result: object = None
    result_label: str = ""
    status: list = field(default_factory=list)
    result_status: str = ""

    def cell_text(self, j: int) -> str:
        """The text of key ``j``'s cell: a number, a vector, "masked", "overflow"..."""
        status = self.status[j] if j < len(self.status) else ""
        if status == "masked":
            return f"{MINUS}inf (masked)" if self.key == "masked" else "masked"
        if status:
            if self.key == "exp" and self.values[j] is not None and math.isfinite(float(self.values[j])):
                return format_value(self.values[j])  # this exp is fine; the sum is not
            return status
        return format_value(self.values[j])

    def result_text(self) -> str:
        """The text of the result cell, e.g. ``Σ = 6.5`` or ``z = (0.44, 0.65, 0.57)``."""
        if self.result is None:
            return ""
        text = self.result_status or format_value(self.result)
        return f"{self.result_label} = {text}" if self.result_label else text


def _name_list(names: list[str], limit: int = 4) -> str:
    quoted = [f"“{n}”" for n in names]
    if len(quoted) <= limit:
        return ", ".join(quoted)
    return ", ".join(quoted[:limit]) + f" and {len(quoted) - limit} more"


def pipeline_steps(state, result, head: int | None = None, query: int | None = None) -> list[Step]:
    """The seeds' chain for one query token, as nine :class:`Step` rows.

    ``query``, ``keys``, ``scores`` (q·k_j), ``scaled`` (÷√d_k, ÷T),
    ``masked`` (−inf where blocked), ``exp``, ``weights`` (α_j, sum 1),
    ``weighted`` (α_j·v_j) and ``output`` (z = Σ α_j v_j). ``head`` and
    ``query`` default to the state's selection. An empty list when there is
    no query token to explain.
    """
    head = selected_head(state, result) if head is None else int(head)
    query = int(state.query_index) if query is None else int(query)
    q_tokens, k_tokens = _tokens(state)
    if not q_tokens or not 0 <= query < result.q.shape[1] or not 0 <= head < result.q.shape[0]:
        return []
    i = query
    t_k = result.k.shape[1]
    word = q_tokens[i]
    projections = bool(state.projections)
    q = result.q[head, i]
    k = result.k[head]
    v = result.v[head]
    scores = np.asarray(result.scores[head, i], dtype=np.float64)
    logits = np.asarray(result.logits[head, i], dtype=np.float64)
    weights = np.asarray(result.weights[head, i], dtype=np.float64)
    output = result.head_outputs[head, i]
    blocked = np.array([_blocked(result, head, i, j) for j in range(t_k)], dtype=bool)
    masked_status = ["masked" if b else "" for b in blocked]
    plain = [""] * t_k
    row_status = _row_status(state, result, head, i)
    d_k = result.q.shape[-1]
    steps: list[Step] = []

    # 1. the query vector
    if projections:
        expl = (f"The query of “{word}”: q = x·W_Q = {fmt_vector(q)}. It says what “{word}” is looking for; "
                "it stands above every key so each column reads as one inner product.")
    else:
        expl = (f"The query is “{word}”'s own vector q = {fmt_vector(q)} (simplified attention: Q = K = V = X), "
                "repeated above every key so each column reads as one inner product.")
    steps.append(Step("query", f"query q “{word}”", expl, [q] * t_k, None, "", list(plain)))

    # 2. every key
    if projections:
        expl = ("Every token offers a key k_j = x_j·W_K: what it can be found by. "
                "(The values v_j = x_j·W_V are used in step 8.)")
    else:
        expl = "Every token's own vector is its key k_j (and its value v_j): Q = K = V = X."
    steps.append(Step("keys", "keys k_j", expl, [k[j] for j in range(t_k)], None, "", list(plain)))

    # 3. inner products
    if t_k:
        best = int(np.argmax(scores))
        expl = (f"The inner product q·k_j measures how similar “{word}” is to each token: positive when they "
                f"point the same way, negative when they are dissimilar. Largest: “{k_tokens[best]}” "
                f"({fmt(scores[best])}).")
    else:
        expl = "There are no keys to compare with."
    steps.append(Step("scores", "inner products q·k_j", expl, [float(s) for s in scores], None, "",
                      list(plain)))

    # 4. scaling (and temperature)
    factor = float(result.scale_factor)
    temperature = float(state.temperature)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = scores * (factor / temperature)
    scaled = np.where(blocked, scaled, logits)  # the engine's own numbers where it kept them
    if factor != 1.0 and temperature != 1.0:
        title = "÷ √d_k, ÷ T"
        expl = (f"Divide by √d_k = √{d_k} = {fmt(math.sqrt(d_k))} so the scores do not grow with the dimension, "
                f"and by the temperature T = {temperature:g} ({'sharper' if temperature < 1 else 'flatter'} weights).")
    elif factor != 1.0:
        title = "÷ √d_k"
        expl = (f"Divide by √d_k = √{d_k} = {fmt(math.sqrt(d_k))}: without it, inner products of long vectors "
                "grow with the dimension and the softmax saturates.")
    elif temperature != 1.0:
        title = "÷ T (no √d_k)"
        expl = (f"No scaling by √d_k (it is switched off); divide by the temperature T = {temperature:g} "
                f"({'sharper' if temperature < 1 else 'flatter'} weights).")
    else:
        title = "no scaling"
        expl = "No scaling: division by √d_k is switched off and the temperature is 1, so the scores pass unchanged."
    steps.append(Step("scaled", title, expl, [float(s) for s in scaled], None, "", list(plain)))

    # 5. the mask
    n_blocked = int(blocked.sum())
    if n_blocked == 0:
        expl = f"Nothing is masked: “{word}” may look at every token, so the logits pass unchanged."
    else:
        hidden = [k_tokens[j] for j in range(t_k) if blocked[j]]
        reason = "Causal mask: a token may not look ahead, so" if state.causal else "Masked:"
        expl = f"{reason} {_name_list(hidden)} get {MINUS}inf, and exp({MINUS}inf) = 0 gives them weight 0."
    steps.append(Step("masked", "mask (−inf where blocked)", expl, [float(x) for x in logits], None, "",
                      list(masked_status)))

    # 6. exp
    kind = state.softmax
    if kind == "sum":
        finite = np.where(blocked, 0.0, logits)
        total = float(np.sum(finite))
        expl = ("The plain normalisation skips exp: it divides the logits themselves by their sum "
                f"(Σ = {fmt(total)}). Negative logits give negative “weights” — the reason for the softmax.")
        steps.append(Step("exp", "no exp (plain x / Σx)", expl, [float(x) for x in finite], total, "Σ",
                          list(masked_status), "undefined" if total == 0 else ""))
    else:
        shifted = kind == "stable"
        exps, shift = _row_exps(state, result, head, i, shifted=shifted)
        with np.errstate(over="ignore", invalid="ignore"):
            total = float(np.sum(exps))
        if shifted:
            title = "exp(x − max)"
            expl = (f"exp makes every number positive. The stable softmax first subtracts the row maximum "
                    f"({fmt(shift)}): exp(x − max) can never overflow, and the weights come out the same. "
                    f"Σ = {fmt(total)}.")
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
                expl = f"exp makes every number positive (naive softmax: exp(x) as is). Σ = {fmt(total)}."
                total_status = ""
        steps.append(Step("exp", title, expl, [float(e) for e in exps], total, "Σ", status, total_status))

    # 7. normalised weights
    weight_status = [("masked" if blocked[j] else row_status) for j in range(t_k)]
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
        if t_k and not blocked.all():
            best = int(np.argmax(np.where(blocked, -np.inf, weights)))
            expl += f" “{word}” attends most to “{k_tokens[best]}” ({fmt(weights[best])})."
        w_sum_status = ""
    with np.errstate(invalid="ignore"):
        w_sum = float(np.sum(weights))
    steps.append(Step("weights", "weights α_j (sum 1)", expl, [float(w) for w in weights], w_sum, "Σ",
                      weight_status, w_sum_status))

    # 8. weighted values
    with np.errstate(invalid="ignore", over="ignore"):
        weighted = [weights[j] * v[j] for j in range(t_k)]
    value_name = "value vector v_j = x_j·W_V" if projections else "vector v_j"
    expl = (f"Multiply each {value_name} by its weight α_j: the tokens “{word}” is most related to "
            "contribute the most.")
    steps.append(Step("weighted", "α_j · v_j", expl, weighted, None, "", list(weight_status)))

    # 9. the output vector
    if row_status:
        expl = "The output is undefined because the weights are."
    else:
        expl = (f"Add the weighted vectors: z = Σ α_j v_j = {fmt_vector(output)}, the new vector of “{word}”, "
                "carrying context from the tokens it attends to.")
    steps.append(Step("output", "output z = Σ α_j v_j", expl, [None] * t_k, output, "z", list(plain),
                      row_status))
    return steps


def step_tooltip(state, result, head: int, query: int, step_key: str, j: int | None) -> str:
    """The filled-in formula for one cell of the step-by-step view.

    ``j`` is the key index, or None for the result column. Empty text when the
    cell has nothing to explain.
    """
    i = query
    q_tokens, k_tokens = _tokens(state)
    t_k = result.k.shape[1]
    if j is not None and not 0 <= j < t_k:
        return ""
    if step_key == "query":
        name = "x·W_Q" if state.projections else "x"
        return f"q = {name} of “{q_tokens[i]}” = {fmt_vector(result.q[head, i], max_components=TOOLTIP_COMPONENTS)}"
    if step_key == "keys":
        if j is None:
            return ""
        name = "x_j·W_K" if state.projections else "x_j"
        return f"k{j + 1} = {name} of “{k_tokens[j]}” = {fmt_vector(result.k[head, j], max_components=TOOLTIP_COMPONENTS)}"
    if step_key in ("scores", "scaled", "masked"):
        if j is None:
            return ""
        return score_formula(state, result, head, i, j, names=False)
    if step_key == "exp":
        if state.softmax == "sum":
            if j is None:
                return "Σ = sum of the (unmasked) logits"
            return "no exp: the plain normalisation uses the logit itself"
        shifted = state.softmax == "stable"
        exps, shift = _row_exps(state, result, head, i, shifted=shifted)
        if j is None:
            with np.errstate(over="ignore", invalid="ignore"):
                total = float(np.sum(exps))
            return f"Σ = {' + '.join(fmt(e) for e in exps[:MAX_TERMS])}{' + …' if t_k > MAX_TERMS else ''} = {fmt(total)}"
        if _blocked(result, head, i, j):
            return f"exp({MINUS}inf) = 0: {_mask_reason(state, i, j)}"
        logit = float(result.logits[head, i, j])
        if shifted:
            return f"exp(x − max) = exp({fmt(logit)} − {fmt(shift)}) = {fmt(exps[j])}"
        if not math.isfinite(exps[j]):
            return f"exp({fmt(logit)}) overflows to inf (use the stable softmax)"
        return f"exp({fmt(logit)}) = {fmt(exps[j])}"
    if step_key == "weights":
        if j is None:
            status = _row_status(state, result, head, i)
            if status:
                return f"the weights are undefined ({status}), and so is their sum"
            return "Σ α_j: the weights add up to 1"
        return weight_formula(state, result, head, i, j, shifted=True if state.softmax == "stable" else None)
    if step_key == "weighted":
        if j is None:
            return ""
        weight = float(result.weights[head, i, j])
        v = result.v[head, j]
        if _blocked(result, head, i, j):
            return f"α_{j + 1} = 0 ({_mask_reason(state, i, j)}): this value contributes nothing"
        status = _row_status(state, result, head, i)
        if status:
            return f"α_{j + 1} is undefined ({status}), so α_{j + 1}·v_{j + 1} is too"
        with np.errstate(invalid="ignore", over="ignore"):
            product = weight * np.asarray(v)
        return (f"α_{j + 1}·v_{j + 1} = {fmt(weight)} × {fmt_vector(v, max_components=TOOLTIP_COMPONENTS)} = "
                f"{fmt_vector(product, max_components=TOOLTIP_COMPONENTS)}")
    if step_key == "output":
        if j is not None:
            return ""
        d_v = result.head_outputs.shape[-1]
        shown = min(d_v, 8)
        lines = [output_formula(state, result, head, i, c) for c in range(shown)]
        if d_v > shown:
            lines.append(f"… ({d_v - shown} more components)")
        return "\n".join(lines)
    return ""


def table_cell_tooltip(studio, table: str, row: int, col: int) -> str:
    """Tooltip of a cell of an editable table: what the number is and where it acts.

    ``table`` is "embeddings", "w_q", "w_k", "w_v" (the chosen head), "w_o",
    "w_1", "w_2" or "v_a". The numbers come from the studio's state and result.
    """
    state, result = studio.state, studio.result
    head = selected_head(state, result) if state.projections else 0
    if table == "embeddings":
        words = state.key_tokens + (state.target_tokens if state.cross else [])
        word = words[row]
        value = float(studio.embeddings([word])[0, col])
        edited = col in state.embedding_edits.get(word, {})
        origin = "typed by you" if edited else f"drawn from seed {state.seed}"
        lines = [f"x(“{word}”)[d{col + 1}] = {fmt(value)}  ({origin})",
                 "Every occurrence of this word shares this vector."]
        if state.positional:
            position = row if row < len(state.key_tokens) else row - len(state.key_tokens)
            pe = float(studio.positions(position + 1)[position, col])
            lines.append(f"Attention sees x + PE = {fmt(value)} + {fmt(pe)} = {fmt(value + pe)} at position {position}.")
        return "\n".join(lines)
    if table in ("w_q", "w_k", "w_v"):
        letter = table[-1]
        matrix = getattr(state, table)[head]
        value = float(matrix[row, col])
        tokens = state.query_tokens if letter == "q" else state.key_tokens
        lines = [f"W_{letter.upper()}[x{row + 1}, {letter}{col + 1}] of head {head + 1} = {fmt(value)}",
                 f"{letter}{col + 1} = Σ_i x_i · W_{letter.upper()}[i, {col + 1}]: this number weighs "
                 f"component x{row + 1} of every token."]
        if tokens:
            i = min(state.query_index, len(tokens) - 1) if letter == "q" else 0
            vec = getattr(result, letter)[head, i, col]
            lines.append(f"For “{tokens[i]}”: {letter}{col + 1} = {fmt(float(vec))}")
        return "\n".join(lines)
    if table == "w_o":
        value = float(state.w_o[row, col])
        h, j = divmod(row, state.d_head)
        return (f"W_O[h{h + 1}·v{j + 1}, out{col + 1}] = {fmt(value)}\n"
                f"How much value dimension {j + 1} of head {h + 1} contributes to output dimension {col + 1}.")
    if table in ("w_1", "w_2"):
        side = "query" if table == "w_1" else "key"
        value = float(getattr(state, table)[min(head, getattr(state, table).shape[0] - 1)][row, col])
        return (f"{table.upper().replace('_', '_')}[{row + 1}, {col + 1}] = {fmt(value)}\n"
                f"Additive score v_aᵀ·tanh(q·W_1 + k·W_2): this weight acts on the {side}.")
    if table == "v_a":
        return (f"v_a of head {row + 1}, component {col + 1} = {fmt(float(state.v_a[row, col]))}\n"
                "Weighs tanh feature a of the additive score.")
    raise ValueError(f"unknown table {table!r}")
