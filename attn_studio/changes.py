"""What a change of the toy studio is, and how its numbers are computed: no Qt, no state of its own.

:class:`PendingChange` (validated, not computed), :class:`ComputedChange` (the engine's numbers for
it), :class:`StudioChange` (what subscribers are told) and :class:`Comparison` (two results side by
side); and the functions that turn a :class:`~attn_studio.state.StudioState` into the engine's
inputs and result. :class:`~attn_studio.studio.Studio` keeps the current state, undo and the
subscribers over them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .engine import MultiHeadResult, Vocabulary, multi_head_attention, sinusoidal_positions
from .state import SELECTION_FIELDS, StateError, StudioState, parse_number


@dataclass(frozen=True)
class Comparison:
    """Two results side by side, for one head: A, B and the change of the weights B − A.

    ``head`` is the head compared (the shown head, or the last head A has);
    ``diff`` = ``weights_b − weights_a`` of that head, ``largest`` its largest
    absolute entry (0 without cells), ``blocked_both`` the cells masked on both sides.
    """

    mode: str
    label_a: str
    result_a: MultiHeadResult
    label_b: str
    result_b: MultiHeadResult
    head: int
    weights_a: np.ndarray
    weights_b: np.ndarray
    diff: np.ndarray
    largest: float
    blocked_both: np.ndarray


@dataclass(frozen=True)
class StudioChange:
    """What a subscriber is told: the state before and after, and which fields differ."""

    old: StudioState
    state: StudioState
    changed: frozenset[str]
    result: MultiHeadResult

    @property
    def selection_only(self) -> bool:
        """True when only the selected query or head moved (nothing to recompute)."""
        return self.changed <= SELECTION_FIELDS


@dataclass(frozen=True)
class PendingChange:
    """A prepared change of the toy model (:meth:`Studio.prepare`): validated, not computed yet.

    ``state`` the new state; ``base`` the state it was prepared from, with the
    inputs ``base_x`` and ``base_result`` computed for it (reused when the change
    does not touch them); ``generation`` (a later model change makes this one
    stale); ``changed`` the field names that differ; the undo bookkeeping
    (``record``, ``coalesce``, ``label``) and ``history`` ("undo" or "redo" when
    the change steps through the undo list, else "").
    """

    state: StudioState
    base: StudioState
    base_x: tuple | None
    base_result: MultiHeadResult | None
    generation: int
    changed: frozenset
    record: bool = True
    coalesce: str | None = None
    label: str = ""
    history: str = ""

    @property
    def selection_only(self) -> bool:
        """True when only the selection moved: nothing to compute."""
        return self.changed <= SELECTION_FIELDS


@dataclass(frozen=True)
class ComputedChange:
    """The engine's numbers for a :class:`PendingChange` (:meth:`Studio.compute`): the inputs ``x``
    (query side, key/value side) and the ``result``; immutable, ready for :meth:`Studio.install`."""

    pending: PendingChange
    x: tuple
    result: MultiHeadResult
    score_variance: float | None = None  # computed with the result (the √d_k plot reads it)


def _edit_label(changed: frozenset[str]) -> str:
    """A short name for an edit asked for by field names: "change heads", or "edit" for several."""
    model = sorted(changed - SELECTION_FIELDS)
    return f"change {model[0]}" if len(model) == 1 else "edit"


def _parse_block(values) -> np.ndarray:
    """Rows of numbers or typed text -> a 2-d float array; a bad cell is named in the error."""
    rows = [list(r) for r in values]
    if not rows or not rows[0]:
        raise StateError("nothing to paste")
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise StateError("the pasted rows have different lengths; paste a rectangle of numbers")
    block = np.empty((len(rows), width))
    for i, r in enumerate(rows):
        for j, value in enumerate(r):
            try:
                block[i, j] = parse_number(value)
            except StateError as exc:
                raise StateError(f"row {i + 1}, column {j + 1} of the pasted block: {exc}") from None
    return block


def _vocabulary(s: StudioState) -> Vocabulary:
    """Seeded vectors of dimension d_model plus the lecturer's edits, for state ``s``."""
    return Vocabulary(s.d_model, s.seed, edits={w: dict(v) for w, v in s.embedding_edits.items()})


def _inputs(s: StudioState) -> tuple[np.ndarray, np.ndarray]:
    """Token vectors (+ positions when on) for the query side and the key/value side."""
    vocab = _vocabulary(s)

    def inputs(tokens):
        e = vocab.vectors(tokens)
        if s.positional:
            e = e + sinusoidal_positions(len(tokens), s.d_model)
        return e

    x_kv = inputs(s.key_tokens)
    x = inputs(s.query_tokens) if s.cross else x_kv
    return x, x_kv


def _used_weights(s: StudioState) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """``(w_q, w_k, w_v, w_o)`` the engine uses for state ``s``.

    With projections off, the seeds' simplified attention: Q = K = V = X
    (identities, one head) and no W_O (None).
    """
    if s.projections:
        return s.w_q, s.w_k, s.w_v, s.w_o
    eye = np.eye(s.d_model)[None]
    return eye, eye, eye, None


def _attend(s: StudioState, x: np.ndarray, x_kv: np.ndarray) -> MultiHeadResult:
    """The engine's multi-head attention for state ``s`` on inputs ``x``, ``x_kv``."""
    w_q, w_k, w_v, w_o = _used_weights(s)
    return multi_head_attention(
        x, w_q, w_k, w_v, w_o,
        x_kv=x_kv if s.cross else None,
        scale=s.scale, causal=s.causal, temperature=s.temperature, kind=s.softmax,
        additive=(s.w_1, s.w_2, s.v_a) if s.score == "additive" else None,
    )
