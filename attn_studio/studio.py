"""``Studio``: the current state, its computed result, undo/redo and change notification.

No Qt here: a lecturer can drive the studio from a Python console and the
tests run it without a display::

    >>> from attn_studio.studio import Studio
    >>> studio = Studio()
    >>> studio.update(causal=True)
    >>> studio.result.weights.shape      # (heads, Tq, Tk)
    (1, 6, 6)
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np

from .curves import (  # noqa: F401 (the curves' names: still importable from here)
    CURVE_DIMS,
    CURVES_FILE,
    SATURATION_SAMPLES,
    SATURATION_SEQ_LEN,
    VARIANCE_SAMPLES,
    _shipped_curve,
    cached_saturation_curve,
    cached_variance_curve,
    default_curves,
    save_default_curves,
)
from .engine import (
    EngineError,
    MultiHeadResult,
    Vocabulary,
    sinusoidal_positions,
)
from .changes import (  # noqa: F401 (the changes' names: still importable from here)
    Comparison,
    ComputedChange,
    PendingChange,
    StudioChange,
    _attend,
    _edit_label,
    _inputs,
    _parse_block,
    _used_weights,
    _vocabulary,
)
from .formatting import format_setting
from .readings import LayerReadings, score_variance  # noqa: F401 (score_variance: still importable from here)
from .state import SELECTION_FIELDS, StateError, StudioState, WEIGHT_NAMES, parse_number

UNDO_LIMIT = 500
# Consecutive edits with the same coalesce key within this many seconds share
# one undo entry (typing a sentence, holding a spin box arrow).
COALESCE_SECONDS = 1.0

# Fields that change nothing the engine computes for the current state: what
# is selected, and the compare view's pinned "before" state.
_NO_RESULT_FIELDS = SELECTION_FIELDS | {"pinned"}

# What the compare view can put side by side (mode -> what differs).
COMPARE_MODES = ("scale", "causal", "temperature", "pinned")

# Fields that change the token vectors X (everything else only changes what is
# done with them).
_EMBEDDING_FIELDS = frozenset({"sentence", "target_sentence", "d_model", "seed", "positional", "embedding_edits"})

class Studio(LayerReadings):
    """Holds the current :class:`StudioState` and the engine's result for it.

    Every change goes through :meth:`update`; subscribers are called once per
    change. Invalid changes raise ``StateError`` (or ``EngineError``) and leave
    the state untouched.

    ``update`` and the other edits compute at once, on the calling thread. A
    window that must not freeze on a large model splits an edit in three, as the
    trained studio does: :meth:`prepare` (validate, cheap; GUI thread) →
    :meth:`compute` (the engine; any thread, pure) → :meth:`install` (make it
    current, record undo, notify; GUI thread). A model change prepared later makes
    an earlier one stale: :meth:`install` refuses it. Every edit has a
    ``prepare_*`` twin through :meth:`prepare_call`, and undo and redo through
    :meth:`prepare_undo` and :meth:`prepare_redo`.
    """

    def __init__(self, state: StudioState | None = None, *, clock: Callable[[], float] = time.monotonic):
        # ``clock`` (seconds) decides which edits are close enough to coalesce;
        # a script or a test may give its own to make that deterministic.
        self.clock = clock
        self._state = state if state is not None else StudioState()
        # Undo entries: (state before, coalesce key, time, label); redo entries: (state after, label).
        self._undo: list[tuple[StudioState, str | None, float, str]] = []
        self._redo: list[tuple[StudioState, str]] = []
        self._subscribers: list[Callable[[StudioChange], None]] = []
        self._saved_state: StudioState | None = self._state
        self._x: tuple[np.ndarray, np.ndarray] | None = None
        self._result: MultiHeadResult | None = None
        self._pinned_result: tuple[StudioState, MultiHeadResult] | None = None
        self._comparison: tuple[tuple, Comparison] | None = None
        self._weights_with: dict[str, tuple[MultiHeadResult, np.ndarray]] = {}
        self._generation = 0
        self._capture: list | None = None  # set by prepare_call: edits are prepared, not applied
        self._x = _inputs(self._state)
        self._result = _attend(self._state, *self._x)

    # -- reading -----------------------------------------------------------
    @property
    def state(self) -> StudioState:
        """The current state (immutable)."""
        return self._state

    @property
    def result(self) -> MultiHeadResult:
        """The engine's :class:`MultiHeadResult` for the current state."""
        return self._result

    @property
    def used_weights(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """``(w_q, w_k, w_v, w_o)`` the engine uses: identities and no W_O (None) with projections off."""
        return _used_weights(self._state)

    @property
    def x(self) -> np.ndarray:
        """Query-side inputs ``(Tq, d_model)``: embeddings (+ positions if on)."""
        return self._x[0]

    @property
    def x_kv(self) -> np.ndarray:
        """Key/value-side inputs ``(Tk, d_model)`` (the same as ``x`` in self-attention)."""
        return self._x[1]

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary (seeded vectors plus the lecturer's edits) of the current state."""
        return _vocabulary(self._state)

    def embeddings(self, tokens: list[str]) -> np.ndarray:
        """Token vectors (without positions) for ``tokens``, ``(len(tokens), d_model)``."""
        return self.vocabulary.vectors(tokens)

    def positions(self, n: int) -> np.ndarray:
        """The sinusoidal positional encoding added to ``n`` tokens (zeros when off)."""
        pe = sinusoidal_positions(n, self._state.d_model)
        return pe if self._state.positional else np.zeros_like(pe)

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    @property
    def undo_label(self) -> str:
        """What :meth:`undo` would take back, for the Edit menu ("load example 'bank'"); "" when nothing."""
        return self._undo[-1][3] if self._undo else ""

    @property
    def redo_label(self) -> str:
        """What :meth:`redo` would apply again; "" when nothing."""
        return self._redo[-1][1] if self._redo else ""

    @property
    def is_modified(self) -> bool:
        """True when the model differs from what was last saved or loaded."""
        saved = self._saved_state
        return saved is None or not (self._state.changed_fields(saved) <= SELECTION_FIELDS)

    def mark_saved(self, state: StudioState | None = None) -> None:
        """Remember the current state (or ``state``, written by a save that ran meanwhile) as the saved one."""
        self._saved_state = self._state if state is None else state

    # -- changing ----------------------------------------------------------
    def update(self, *, coalesce: str | None = None, **changes) -> None:
        """Apply ``changes`` (field names of :class:`StudioState`) as one edit.

        Raises ``StateError`` for an invalid value; the state stays as it was.
        ``coalesce`` merges a burst of edits with the same key into one undo step.
        """
        self._run(self.prepare(coalesce=coalesce, **changes))

    def set_state(self, state: StudioState, *, label: str = "") -> None:
        """Replace the whole state (opening a file, loading a preset); undoable, named ``label`` in the undo list."""
        if not isinstance(state, StudioState):
            raise StateError(f"expected a StudioState, got {type(state).__name__}")
        self._apply(state, label=label)

    def set_embedding(self, word: str, index: int, value) -> None:
        """Set component ``index`` of ``word``'s vector; ``value`` may be typed text."""
        number = parse_number(value)
        self._apply(self._state.with_embedding(word, index, number))

    def set_weight(self, name: str, head: int, row: int, col: int, value) -> None:
        """Set one entry of W_Q, W_K, W_V, W_1, W_2 (``[head, row, col]``), W_O (``[row, col]``,
        head ignored) or v_a (``[head, col]``, row ignored)."""
        if name not in WEIGHT_NAMES:
            raise StateError(f"unknown weight matrix {name!r}; use one of {', '.join(WEIGHT_NAMES)}")
        number = parse_number(value)
        current = getattr(self._state, name)
        index = (row, col) if name == "w_o" else (head, col) if name == "v_a" else (head, row, col)
        if any(not 0 <= i < n for i, n in zip(index, current.shape)):
            raise StateError(f"{name}{list(index)} is outside the matrix of shape {current.shape}")
        new = np.array(current)
        new[index] = number
        self._apply(self._state.replace(**{name: new}))

    def set_block(self, table: str, head: int, row: int, col: int, values) -> None:
        """Write a block of numbers (pasted from a spreadsheet) as ONE edit.

        ``table`` is a weight name (W_Q, W_K, W_V, W_1, W_2 of ``head``; W_O;
        v_a, whose rows are heads); ``values`` is a list of rows of numbers or
        typed text (embeddings: :meth:`set_embedding_block`). Every value is checked first: one bad
        cell refuses the whole block and nothing changes.
        """
        block = _parse_block(values)
        if table not in WEIGHT_NAMES:
            raise StateError(f"unknown matrix {table!r}")
        current = getattr(self._state, table)
        matrix = current if table in ("w_o", "v_a") else current[head]
        if row < 0 or col < 0 or row + block.shape[0] > matrix.shape[0] or col + block.shape[1] > matrix.shape[1]:
            raise StateError(
                f"a {block.shape[0]} × {block.shape[1]} block at row {row + 1}, column {col + 1} does not fit "
                f"the {matrix.shape[0]} × {matrix.shape[1]} matrix")
        new = np.array(current)
        target = new if table in ("w_o", "v_a") else new[head]
        target[row:row + block.shape[0], col:col + block.shape[1]] = block
        self._apply(self._state.replace(**{table: new}))

    def set_embedding_block(self, words: list[str], col: int, values) -> None:
        """Write a block of embedding values for ``words`` (one row each) from column ``col``, as ONE edit."""
        block = _parse_block(values)
        if block.shape[0] > len(words) or col < 0 or col + block.shape[1] > self._state.d_model:
            raise StateError(
                f"a {block.shape[0]} × {block.shape[1]} block at column {col + 1} does not fit "
                f"{len(words)} tokens × d_model = {self._state.d_model}")
        edits = {w: dict(v) for w, v in self._state.embedding_edits.items()}
        for word, values_row in zip(words, block):
            entry = edits.setdefault(word, {})
            for j, value in enumerate(values_row):
                entry[col + j] = float(value)
        self._apply(self._state.replace(embedding_edits=edits))

    def randomize(self, seed: int | None = None) -> None:
        """Draw new weights and unedited embeddings from ``seed`` (a fresh one if None)."""
        if seed is None:
            seed = int(np.random.default_rng().integers(0, 100_000))
            if seed == self._state.seed:
                seed += 1
        self.update(seed=seed)

    def select(self, *, query: int | None = None, head: int | None = None) -> None:
        """Move the selected query token and/or head (not an edit: no undo entry)."""
        changes = {}
        if query is not None:
            changes["query_index"] = query
        if head is not None:
            changes["head_index"] = head
        if changes:
            self.update(**changes)

    def undo(self) -> bool:
        """Go back one edit; returns False when there is nothing to undo."""
        pending = self.prepare_undo()
        if pending is None:
            return False
        self.install(self.compute(pending))
        return True

    def redo(self) -> bool:
        """Re-apply the last undone edit; returns False when there is nothing to redo."""
        pending = self.prepare_redo()
        if pending is None:
            return False
        self.install(self.compute(pending))
        return True

    def subscribe(self, callback: Callable[[StudioChange], None]) -> Callable[[], None]:
        """Call ``callback(change)`` once after every change; returns an unsubscribe function."""
        self._subscribers.append(callback)

        def unsubscribe():
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    # -- comparing -----------------------------------------------------------
    def pin(self) -> None:
        """Pin the current state as the "before" of the compare view (an undoable edit, saved with the session)."""
        self.update(pinned=self._state)

    def unpin(self) -> None:
        """Forget the pinned state (undoable)."""
        self.update(pinned=None)

    @property
    def pinned_result(self) -> MultiHeadResult | None:
        """The engine's result for the pinned state (computed once per pin), or None when nothing is pinned."""
        pinned = self._state.pinned
        if pinned is None:
            return None
        if self._pinned_result is None or self._pinned_result[0] is not pinned:
            self._pinned_result = (pinned, self.result_for(pinned))
        return self._pinned_result[1]

    def comparison(self, mode: str, temperature_a: float = 1.0, temperature_b: float = 5.0) -> Comparison | None:
        """Side A and side B of the compare view, computed by the engine, for the shown head.

        ``mode``: "scale" (scaled ÷√d_k vs unscaled), "causal" (mask vs none),
        "temperature" (``temperature_a`` vs ``temperature_b``) or "pinned"
        (the pinned state vs now). None in "pinned" mode when nothing is pinned
        or the tokens changed since (the matrices would not line up).
        Computed once per (state, mode, temperatures).
        """
        if mode not in COMPARE_MODES:
            raise StateError(f"compare mode must be one of {', '.join(COMPARE_MODES)}, got {mode!r}")
        state = self._state
        # Results and states are immutable: the same objects mean the same numbers.
        same = (self._result, state.pinned)
        key = (state.shown_head, mode) + ((float(temperature_a), float(temperature_b)) if mode == "temperature" else ())
        if self._comparison is not None:
            (cached_same, cached_key), cached = self._comparison
            if cached_key == key and all(a is b for a, b in zip(cached_same, same)):
                return cached
        if mode == "scale":
            sides = ("scaled ÷√d_k", self.result_for(state.replace(scale=True)),
                     "unscaled", self.result_for(state.replace(scale=False)))
        elif mode == "causal":
            sides = ("causal", self.result_for(state.replace(causal=True)),
                     "no mask", self.result_for(state.replace(causal=False)))
        elif mode == "temperature":
            a, b = state.replace(temperature=temperature_a), state.replace(temperature=temperature_b)
            # The temperatures are settings the person chose: written as typed (T = 2), not as measurements.
            sides = (f"T = {format_setting(a.temperature)}", self.result_for(a),
                     f"T = {format_setting(b.temperature)}", self.result_for(b))
        else:
            pinned = state.pinned
            if pinned is None or pinned.query_tokens != state.query_tokens or pinned.key_tokens != state.key_tokens:
                self._comparison = ((same, key), None)
                return None
            sides = ("before (pinned)", self.pinned_result, "now", self._result)
        label_a, result_a, label_b, result_b = sides
        # Side B is the current model or a variant of it; a pinned side A may have fewer heads.
        head = min(state.shown_head, result_a.weights.shape[0] - 1, result_b.weights.shape[0] - 1)
        wa, wb = result_a.weights[head], result_b.weights[head]
        with np.errstate(invalid="ignore"):
            diff = wb - wa
        largest = float(np.nanmax(np.abs(diff))) if diff.size and not np.isnan(diff).all() else 0.0
        comparison = Comparison(mode, label_a, result_a, label_b, result_b, head, wa, wb, diff, largest,
                                result_a.blocked & result_b.blocked)
        self._comparison = ((same, key), comparison)
        return comparison

    # -- computing: prepare / compute / install -------------------------------
    def prepare(self, *, coalesce: str | None = None, **changes) -> PendingChange:
        """What :meth:`update` would do, validated but not computed (GUI thread, cheap).

        Raises ``StateError`` for an invalid value and changes nothing; a model
        change makes every earlier prepared change stale.
        """
        new = self._state.replace(**changes)
        return self._prepare(new, coalesce=coalesce, label=_edit_label(frozenset(changes)))

    def prepare_call(self, edit: str, *args, **kwargs) -> PendingChange | None:
        """What the edit method ``edit`` ("set_weight", "randomize", "set_state"...) would do, prepared
        like :meth:`prepare`; None when it would change nothing. Refusals raise as the edit does."""
        if edit not in _EDITS:
            raise StateError(f"{edit!r} is not an edit of the studio; use one of {', '.join(_EDITS)}")
        self._capture = captured = []
        try:
            getattr(self, edit)(*args, **kwargs)
        finally:
            self._capture = None
        return captured[0] if captured else None

    def prepare_undo(self) -> PendingChange | None:
        """What :meth:`undo` would do, prepared (None when there is nothing to undo)."""
        if not self._undo:
            return None
        return self._prepare(self._undo[-1][0], record=False, history="undo")

    def prepare_redo(self) -> PendingChange | None:
        """What :meth:`redo` would do, prepared (None when there is nothing to redo)."""
        if not self._redo:
            return None
        return self._prepare(self._redo[-1][0], record=False, history="redo")

    def _prepare(self, new: StudioState, *, record: bool = True, coalesce: str | None = None, label: str = "",
                 history: str = "") -> PendingChange:
        changed = new.changed_fields(self._state)
        if not changed <= SELECTION_FIELDS:
            self._generation += 1
        return PendingChange(new, self._state, self._x, self._result, self._generation, changed, record,
                             coalesce, label, history)

    @staticmethod
    def compute(pending: PendingChange) -> ComputedChange:
        """Run the engine for ``pending.state``: pure and thread-safe (immutable state in, new arrays out).

        Reuses the base's inputs when no field of the token vectors changed, and
        its result when nothing the engine computes changed. Raises
        ``EngineError`` / ``StateError`` when the engine refuses the state.
        """
        s, changed = pending.state, pending.changed
        x = pending.base_x
        if x is None or changed & _EMBEDDING_FIELDS:
            x = _inputs(s)
        if changed <= _NO_RESULT_FIELDS and pending.base_result is not None:
            return ComputedChange(pending, x, pending.base_result)
        result = _attend(s, *x)
        return ComputedChange(pending, x, result, score_variance(result))

    def is_current(self, pending: PendingChange) -> bool:
        """False once a later model change was prepared or made: ``pending``'s result would be refused."""
        return pending.generation == self._generation

    def install(self, computed: ComputedChange) -> bool:
        """Make ``computed`` current: record undo, notify subscribers (GUI thread).

        Returns False and changes nothing when it is stale (a later model change
        was prepared, or the model changed since). A selection moved meanwhile is
        kept: the person stays where they clicked.
        """
        p = computed.pending
        if p.generation != self._generation:
            return False
        if p.base is not self._state:
            moved = self._state.changed_fields(p.base)
            if not moved <= SELECTION_FIELDS or p.selection_only:
                return False
            try:
                state = p.state.replace(**{key: getattr(self._state, key) for key in moved})
            except StateError:
                state = p.state  # the selection no longer fits the new tokens or heads
            p = dataclasses.replace(p, state=state, base=self._state, changed=state.changed_fields(self._state))
        old, new, changed = self._state, p.state, p.changed
        if changed:
            self._state, self._x, self._result = new, computed.x, computed.result
            if computed.score_variance is not None:
                self._score_variance = (computed.result, computed.score_variance)
        # An undo entry equal to the current state is still consumed (as undo always did).
        if p.history == "undo":
            _, _, _, label = self._undo.pop()
            self._redo.append((old, label))
        elif p.history == "redo":
            _, label = self._redo.pop()
            self._undo.append((old, None, 0.0, label))
        elif p.record and changed and not (changed <= SELECTION_FIELDS):
            now = self.clock()
            top = self._undo[-1] if self._undo else None
            if p.coalesce and top and top[1] == p.coalesce and now - top[2] < COALESCE_SECONDS:
                self._undo[-1] = (top[0], p.coalesce, now, top[3])
            else:
                self._undo.append((old, p.coalesce, now, p.label or "edit"))
                del self._undo[:-UNDO_LIMIT]
            self._redo.clear()
        if not changed:
            return True
        change = StudioChange(old, new, changed, self._result)
        errors = []
        for callback in list(self._subscribers):
            try:
                callback(change)
            except Exception as exc:  # one broken view must not stop the others
                errors.append(exc)
        if errors:
            raise errors[0]
        return True

    # -- internals ---------------------------------------------------------
    def _apply(self, new: StudioState, *, record: bool = True, coalesce: str | None = None, label: str = "") -> None:
        self._run(self._prepare(new, record=record, coalesce=coalesce, label=label))

    def _run(self, pending: PendingChange) -> None:
        if self._capture is not None:  # prepare_call: hand the change back instead
            if pending.changed:
                self._capture.append(pending)
            return
        if pending.changed:
            # Compute before committing: if the engine refuses, nothing changes.
            self.install(self.compute(pending))

    def result_for(self, state: StudioState) -> MultiHeadResult:
        """The result another state would give (for side-by-side comparisons); changes nothing."""
        return _attend(state, *_inputs(state))


# The edits :meth:`Studio.prepare_call` can prepare.
_EDITS = ("update", "set_state", "set_embedding", "set_weight", "set_block", "set_embedding_block", "randomize",
          "select", "pin", "unpin")
