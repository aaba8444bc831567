"""Every limit the studio keeps, in one leaf module (it imports nothing of the project).

The state, the file format, the session files and the window all read their
limits from here, so that a spin box, a session file and a pasted sentence
agree on what is allowed. Limits on single dimensions are not enough: 2,048
tokens are fine with one small head and far too much with sixteen large ones,
so :func:`estimate_cost` predicts the memory and the arithmetic of computing a
model *before* it is computed, and :func:`check_cost` refuses a model above the
budget with a message that names what to reduce.
"""

from __future__ import annotations

from dataclasses import dataclass

# -- single dimensions ------------------------------------------------------------
MAX_D_MODEL = 512
MAX_HEADS = 16
MAX_D_HEAD = 256
MAX_TOKENS = 2048
MAX_SENTENCE_CHARS = 20_000
MAX_NAME_CHARS = MAX_SENTENCE_CHARS
MAX_ABS_VALUE = 1e6
MAX_SEED = 2**31 - 1
TEMPERATURE_RANGE = (1e-3, 1e3)

# A typed number longer than this is not a number a person means ("1e-3" is 4).
MAX_NUMBER_CHARS = 64

# -- files --------------------------------------------------------------------------
# One budget for what is saved and what is opened: a save that would exceed it
# is refused with a message, so every file the studio writes, it can read.
MAX_SESSION_BYTES = 64 * 1024 * 1024
MAX_JSON_DEPTH = 16
MAX_EDITED_WORDS = 5000
# Weight cells that differ from their seeded values (edits), over all matrices,
# visible and hidden. The largest model has about 10.5 million cells; a file with
# every one of them edited would not fit the file budget (nor parse quickly), so
# edits are capped: a million cells is about 30 MB of file.
MAX_WEIGHT_EDITS = 1_000_000

# -- the cost budget ----------------------------------------------------------------
# Bytes of memory and floating-point operations one computation of the model may
# take. Measured on a 2-core machine, 1 GFLOP of this work takes roughly 0.05-0.2 s
# (16 GFLOP: 1-3 s), and the window needs memory of its own besides the engine's.
MAX_COST_BYTES = 1 * 1024**3
MAX_COST_FLOPS = 16e9
# Below this the views can follow every keystroke; above it the window should
# update on Enter or after a pause.
LIVE_COST_BYTES = 64 * 1024**2
LIVE_COST_FLOPS = 2e8
# The engine keeps scores, logits and weights per head, and the softmax makes
# temporaries of the same size while it runs: about this many (heads, Tq, Tk)
# float64 arrays are alive at the peak (measured with ru_maxrss: 3.4-3.9).
TT_ARRAYS = 5
# Additive (Bahdanau) scores evaluate tanh over (heads, Tq, Tk, d_k): measured at
# about 4 ns per element, some 40 times the cost of one multiply-add in a matrix
# product. Counted as that many operations per element.
ADDITIVE_FLOPS_PER_ELEMENT = 40
_FLOAT = 8


class StateError(ValueError):
    """An invalid studio state or change, with a message a person can act on."""


@dataclass(frozen=True)
class Cost:
    """What computing one model takes: ``bytes`` of memory at the peak and ``flops``."""

    bytes: int
    flops: float
    attention_bytes: int
    weight_bytes: int

    @property
    def within_budget(self) -> bool:
        """True when the studio computes this model (see :func:`check_cost`)."""
        return self.bytes <= MAX_COST_BYTES and self.flops <= MAX_COST_FLOPS

    @property
    def live(self) -> bool:
        """True when the views can follow every keystroke at this size."""
        return self.bytes <= LIVE_COST_BYTES and self.flops <= LIVE_COST_FLOPS


def estimate_cost(n_queries: int, n_keys: int, d_model: int, heads: int, d_head: int,
                  projections: bool = True, additive: bool = False) -> Cost:
    """Predict the peak memory and the arithmetic of computing one model, without computing it.

    ``n_queries`` and ``n_keys`` are the token counts (equal in self-attention).
    Without projections there is one head of size d_model (Q = K = V = X).
    ``additive`` counts the tanh of additive scores (the engine computes it in
    blocks of bounded memory, so it adds time, not memory).
    """
    tq, tk = max(int(n_queries), 0), max(int(n_keys), 0)
    h, d = (int(heads), int(d_head)) if projections else (1, int(d_model))
    attention = TT_ARRAYS * h * tq * tk * _FLOAT
    # q, k, v, head outputs and the concatenation, plus the token vectors.
    activations = (h * (2 * tq + 2 * tk) * d + (tq + tk) * int(d_model) * 2) * _FLOAT
    # Seven weight stores (Q, K, V, O and the additive W_1, W_2, v_a), each held
    # by the state and, while it is replaced, a copy.
    stores = int(heads) * int(d_model) * int(d_head) * 4 + 2 * int(heads) * int(d_head) ** 2 + int(heads) * int(d_head)
    weights = 2 * stores * _FLOAT
    flops = 0.0
    if projections:
        flops += 2.0 * h * (tq + 2 * tk) * int(d_model) * d  # Q, K, V
        flops += 2.0 * tq * h * d * int(d_model)  # W_O
    flops += 2.0 * h * tq * tk * d * 2  # q·kᵀ and weights·V
    flops += 10.0 * h * tq * tk  # scaling, masking, exp, sums
    if additive:
        flops += ADDITIVE_FLOPS_PER_ELEMENT * h * tq * tk * d
    return Cost(bytes=attention + activations + weights, flops=flops, attention_bytes=attention, weight_bytes=weights)


def _size(n_bytes: float) -> str:
    if n_bytes >= 1024**3:
        return f"{n_bytes / 1024**3:.1f} GB"
    return f"{n_bytes / 1024**2:.0f} MB"


def cost_message(n_queries: int, n_keys: int, d_model: int, heads: int, d_head: int,
                 projections: bool = True, additive: bool = False) -> str | None:
    """None when the model fits the budget, else one sentence naming what to reduce."""
    cost = estimate_cost(n_queries, n_keys, d_model, heads, d_head, projections, additive)
    if cost.within_budget:
        return None
    over = []
    if cost.bytes > MAX_COST_BYTES:
        over.append(f"about {_size(cost.bytes)} of memory (the limit is {_size(MAX_COST_BYTES)})")
    if cost.flops > MAX_COST_FLOPS:
        over.append(f"about {cost.flops / 1e9:.0f} billion operations per change "
                    f"(the limit is {MAX_COST_FLOPS / 1e9:.0f} billion)")
    tokens = f"{max(n_queries, n_keys):,} tokens"
    if projections:
        what = f"fewer tokens ({tokens} now), fewer heads ({heads}) or a smaller d_head ({d_head})"
        if cost.attention_bytes <= cost.bytes / 2 and cost.flops > MAX_COST_FLOPS:
            what += f" or d_model ({d_model})"
    else:
        what = f"fewer tokens ({tokens} now) or a smaller d_model ({d_model})"
    if additive and cost.bytes <= MAX_COST_BYTES:
        what += ", or dot-product scores"
    return f"this model would need {' and '.join(over)}: use {what}"


def max_tokens_within_budget(d_model: int, heads: int, d_head: int, projections: bool = True,
                             additive: bool = False) -> int:
    """The most tokens (self-attention) these dimensions allow within the cost budget, at most ``MAX_TOKENS``."""
    lo, hi = 0, MAX_TOKENS
    while lo < hi:  # the cost grows with the token count: bisect
        mid = (lo + hi + 1) // 2
        if estimate_cost(mid, mid, d_model, heads, d_head, projections, additive).within_budget:
            lo = mid
        else:
            hi = mid - 1
    return lo
