"""The trained-model studio: compute off the GUI thread, install, undo; drift, rollout, word paths."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np

from ..engine import MultiHeadResult, layer_norm
from ..pretrained import Edits, ModelError, ModelRun, TrainedModel
from ..pretrained.model import MAX_HEAD_SCALE, PROJECTIONS
from ..schema import ModelRef, TrainedSession
from ..state import StateError, check_text, parse_number
from ..readings import LayerReadings
from .changes import (  # noqa: F401 (importable from here)
    Computed, Pending, TrainedChange, WordPaths, _word_paths, edit_comparison,
)
from .models import state_from_session
from .state import DEFAULT_SENTENCE, SELECTION_FIELDS, TrainedState, _ro, model_ref

UNDO_LIMIT = 500
# Consecutive edits with the same coalesce key within this many seconds share
# one undo entry (typing a sentence, dragging a head's scale).
COALESCE_SECONDS = 1.0
# The results of this many recent undo (and redo) entries are kept, so that
# undoing the last step is instant; older ones are recomputed when reached (for
# an edit that is a rerun from the edited layer). At 128 tokens one result of
# MiniLM is some 60 MB: keeping more would break the memory budget.
KEEP_COMPUTED = 1

# Fields that change the numbers computed.
_TEXT_FIELDS = frozenset({"sentence"})
_SECOND_FIELDS = frozenset({"second_sentence", "word"})


class TrainedStudio(LayerReadings):
    """A trained model, the current :class:`TrainedState` and everything computed for it.

    See the module docstring for the threading rules. Invalid changes raise
    ``StateError`` or ``ModelError`` (both ``ValueError``) and change nothing.
    """

    def __init__(self, model: TrainedModel, state: TrainedState | None = None, *,
                 ref: ModelRef | None = None, clock: Callable[[], float] = time.monotonic):
        self.model = model
        self.clock = clock
        self.ref = ref if ref is not None else (state.model if state is not None else model_ref(model))
        if state is None:
            state = self.initial_state()
        else:
            self._check_same_model(state)
        self._generation = 0
        self._undo: list[tuple[TrainedState, str | None, float, Computed | None]] = []
        self._redo: list[tuple[TrainedState, Computed | None]] = []
        self._subscribers: list[Callable[[TrainedChange], None]] = []
        self._weights_with: dict[str, tuple[MultiHeadResult, np.ndarray]] = {}
        self._x_cache: tuple | None = None
        state = self._retokenized(state, None)  # the tokens always come from this model's tokenizer
        first = Pending(state, state, None, 0, frozenset({"sentence"}), record=False)
        self._computed = self.compute(first)
        self._state = self._computed.state
        self._saved_state: TrainedState | None = self._state

    @classmethod
    def from_session(cls, session: TrainedSession, model: TrainedModel, *,
                     clock: Callable[[], float] = time.monotonic) -> TrainedStudio:
        """A new studio opened on a checked session with its resolved model (see :func:`resolve_model`).

        Raises before anything is built when the session does not fit the model.
        The studio starts unmodified, with no undo history.
        """
        return cls(model, state_from_session(session, model), clock=clock)

    # -- building states ---------------------------------------------------
    def initial_state(self, sentence: str | None = None) -> TrainedState:
        """A fresh state of this studio's model: ``sentence``, nothing edited, the first layer and head.
        The default sentence is the model's own example when it has one (a lab model: a random stretch
        of its tokens twice), else the animal sentence."""
        m = self.model
        if sentence is None:
            example = getattr(m, "example_text", None)
            sentence = example() if callable(example) else DEFAULT_SENTENCE
        return self._retokenized(TrainedState(self.ref, m.kind, m.layers, m.heads, m.d_model, m.d_head,
                                              m.max_positions, sentence=sentence), None)

    def _check_same_model(self, state: TrainedState) -> None:
        m = self.model
        if not isinstance(state, TrainedState):
            raise StateError(f"expected a TrainedState, got {type(state).__name__}")
        if (state.model.sha256 != self.ref.sha256 or
                (state.kind, state.layers, state.heads, state.d_model, state.d_head) !=
                (m.kind, m.layers, m.heads, m.d_model, m.d_head)):
            raise StateError(f"this state belongs to {state.model.describe()}, not to {self.ref.describe()}")

    def _retokenized(self, state: TrainedState, old: TrainedState | None) -> TrainedState:
        """``state`` with its tokens from the model's tokenizer (refuses text longer than the positions),
        and this studio's model attached."""
        changes = self._token_changes({"sentence": state.sentence, "second_sentence": state.second_sentence,
                                       "query_index": state.query_index}, old)
        if state.source is not self.model:
            changes["source"] = self.model
        return dataclasses.replace(state, **changes) if changes else state

    def _token_changes(self, changes: dict, old: TrainedState | None) -> dict:
        """The tokens (and a query index kept inside them) for new sentences in ``changes``."""
        out = {}
        for key, tokens_key in (("sentence", "tokens"), ("second_sentence", "second_tokens")):
            if key not in changes or (old is not None and changes[key] == getattr(old, key)):
                continue
            text = check_text(key, changes[key])  # length first: never tokenize a huge text
            label = "the sentence" if key == "sentence" else "the second sentence"
            try:
                tokens = self.model.encode(text).tokens if text or key == "sentence" else ()
            except ModelError as exc:
                raise ModelError(f"{label}: {exc}") from None
            out[tokens_key] = tokens
            if key == "sentence":
                query = changes.get("query_index", old.query_index if old is not None else 0)
                if isinstance(query, (int, np.integer)) and not isinstance(query, bool):
                    out["query_index"] = min(int(query), max(len(tokens) - 1, 0))
        return out

    # -- reading ---------------------------------------------------------------
    @property
    def state(self) -> TrainedState:
        """The current state (immutable)."""
        return self._state

    @property
    def computed(self) -> Computed:
        """Everything computed for the current state (immutable)."""
        return self._computed

    @property
    def run(self) -> ModelRun:
        """The model's run on the current sentence, with the current edits."""
        return self._computed.run

    @property
    def result(self) -> MultiHeadResult:
        """The selected layer's :class:`MultiHeadResult`: real q, k, v, scores, logits, weights ``(heads, T, T)``."""
        return self._computed.run.layer_results[self._state.layer_index]

    @property
    def x(self) -> np.ndarray:
        """The vectors the selected layer's W_Q, W_K, W_V are applied to, ``(T, d_model)``, read-only:
        ``result.q[h] = x · W_Q[h] + b_Q[h]``. For BERT the layer's input hidden states; for
        GPT-2 (pre-LayerNorm) the input after the layer's first layer norm."""
        run, layer = self._computed.run, self._state.layer_index
        cached = self._x_cache
        if cached is not None and cached[0] is run and cached[1] == layer:
            return cached[2]
        x = run._stream[layer]
        if self.model.kind == "gpt2":
            x = layer_norm(x, *self.model._weights.layers[layer].ln_1, eps=self.model.config.eps)
        x = _ro(np.array(x))
        self._x_cache = (run, layer, x)
        return x

    @property
    def x_kv(self) -> np.ndarray:
        """The same as :attr:`x` (self-attention)."""
        return self.x

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    @property
    def undo_label(self) -> str:
        """What :meth:`undo` would take back, for the Edit menu ("change sentence", "edit"); "" when nothing."""
        if not self._undo:
            return ""
        name = self._undo[-1][1]
        return f"change {name.replace('_', ' ')}" if name else "edit"

    @property
    def redo_label(self) -> str:
        """What :meth:`redo` would apply again; "" when nothing."""
        return "edit" if self._redo else ""

    @property
    def is_modified(self) -> bool:
        """True when the session differs from what was last saved or loaded (selection aside)."""
        saved = self._saved_state
        return saved is None or not (self._state.changed_fields(saved) <= SELECTION_FIELDS)

    def mark_saved(self, state: TrainedState | None = None) -> None:
        """Remember the current state (or ``state``, written by a save that ran meanwhile) as the saved one."""
        self._saved_state = self._state if state is None else state

    def mark_unsaved(self) -> None:
        """Count the current state as not saved (recovered work, for instance)."""
        self._saved_state = None

    def head_weights(self, layer: int | None = None, head: int | None = None) -> dict[str, np.ndarray]:
        """W_Q, W_K, W_V ``(d_model, d_head)`` of a head (default: the selected one), edits applied; read-only."""
        s = self._state
        return self.model.head_weights(s.layer_index if layer is None else layer,
                                       s.head_index if head is None else head, s.edits)

    def head_scale(self, layer: int, head: int) -> float:
        """The multiplier in effect for a head (1 trained, 0 silenced)."""
        return float(self._state.edits.head_scale.get((int(layer), int(head)), 1.0))

    # -- what the toy views also read ---------------------------------------------------
    @property
    def pinned_result(self) -> None:
        """Always None: the compare view's pin is a toy-model feature (the window hides it for trained
        models; the drift plot shows what an edit changed)."""
        return None

    def comparison(self, mode: str = "pinned", temp_a=None, temp_b=None):
        """The trained model (the pinned "before") against the edited one at the shown layer and head; a
        trained model's other settings are fixed, so ``mode`` and the temperatures are not used."""
        return edit_comparison(self._computed, self._state.layer_index, self._state.head_index)

    # The toy's embedding table (``embeddings``, ``positions``, ``vocabulary``) and ``pin`` have no
    # trained equivalent: the trained model is always the pinned side.

    # -- derived numbers (computed by ``compute``, read here) -------------------------
    def drift(self) -> np.ndarray:
        """``(layers + 1,)``: per layer, the mean cosine distance of the token vectors from the
        unedited model on the same text (index 0: the embeddings, always 0)."""
        return self._computed.drift

    def mean_attention(self) -> np.ndarray:
        """``(layers, T, T)``: each layer's attention averaged over heads."""
        return self._computed.mean_attention

    def rollout(self) -> np.ndarray:
        """``(layers, T, T)``: attention rollout (Abnar & Zuidema 2020) up to each layer."""
        return self._computed.rollout

    def word_paths(self) -> WordPaths | None:
        """The word in the two sentences (cosine per layer, shared 2-D paths), or None; see ``word_message``."""
        return self._computed.words

    @property
    def word_message(self) -> str:
        """Why there is no word comparison ("" when there is one, or nothing was asked)."""
        return self._computed.word_message

    def attention_matrix(self) -> tuple[np.ndarray, list[str], list[str]]:
        """The selected layer and head's attention weights ``(T, T)`` with row (query) and column (key) labels."""
        s = self._state
        return (np.array(self.result.weights[s.head_index]), list(s.tokens), list(s.tokens))

    # -- computing: prepare / compute / install ---------------------------------------
    def prepare(self, *, coalesce: str | None = None, **changes) -> Pending:
        """Validate ``changes`` (field names of :class:`TrainedState`) and tokenize; cheap, GUI thread.

        Raises ``StateError`` / ``ModelError`` (e.g. a text longer than the
        model's positions) and changes nothing. A change of more than the
        selection makes every earlier pending change stale; a selection-only
        change does not (a result computed meanwhile is installed with the new
        selection kept).
        """
        if "tokens" in changes or "second_tokens" in changes:
            raise StateError("the tokens follow the sentences; change the sentence instead")
        changes = {**changes, **self._token_changes(changes, self._state)}
        return self._prepare(self._state.replace(**changes), coalesce=coalesce)

    def _prepare(self, new: TrainedState, *, coalesce: str | None = None, record: bool = True) -> Pending:
        changed = new.changed_fields(self._state)
        if not changed <= SELECTION_FIELDS:
            self._generation += 1
        return Pending(new, self._state, self._computed, self._generation, changed, coalesce, record)

    def compute(self, pending: Pending, shown=None) -> Computed:
        """Run the engine for ``pending.state``; pure and thread-safe (see the module docstring).

        Reuses ``pending.base_computed``: the same text with other edits
        recomputes from the lowest changed layer only; a selection change
        reuses everything. ``pending.intact`` False: an edited model's run on a
        new text is made directly, and the unedited model's run (and the drift)
        is left for later (:class:`Computed` works it out when it is first read):
        the window's edit is drawn a pass sooner when no view in sight reads it.

        ``shown(result)``: called (computing thread) with the selected layer's result as soon
        as a new sentence's pass has it, before the layers above; :attr:`result` once installed.
        """
        s, base, intact = pending.state, pending.base_computed, pending.intact
        early = None if shown is None else (lambda layer, result: shown(result) if layer == s.layer_index else None)
        # The result keeps its pending change without the base's result: a chain of
        # results, each holding the one before, would keep every run ever made alive.
        pending = dataclasses.replace(pending, base_computed=None)
        m = self.model
        if base is not None and base.state.sentence == s.sentence:
            if not pending.changed & (_TEXT_FIELDS | _SECOND_FIELDS | {"edits"}):
                return dataclasses.replace(base, pending=pending)  # nothing the engine computes changed
            trained_run = base.trained_run if intact else base._trained_run
            run = base.run.rerun(s.edits)
        elif intact or s.edits.is_trained:
            trained_run = m.run(s.sentence, on_layer=early if s.edits.is_trained else None)
            run = trained_run if s.edits.is_trained else trained_run.rerun(s.edits)
        else:
            trained_run, run = None, m.run(s.sentence, edits=s.edits, on_layer=early)
        second_run = None
        if s.second_sentence:
            if base is not None and base.second_run is not None and base.state.second_sentence == s.second_sentence:
                second_run = base.second_run.rerun(s.edits)
            else:
                second_run = m.run(s.second_sentence, edits=s.edits)
        drift = None
        if trained_run is not None:
            drift = _ro(run.drift(trained_run) if run is not trained_run else np.zeros(m.layers + 1))
        words, message = _word_paths(run, second_run, s.word)
        return Computed(pending, run, trained_run, second_run, drift, _ro(run.mean_attention()),
                        _ro(run.rollout()), words, message)

    def is_current(self, pending: Pending) -> bool:
        """Whether ``pending`` is still the change to install (prepared last, nothing installed since). GUI thread."""
        return pending.generation == self._generation and pending.base is self._state

    def install(self, computed: Computed) -> bool:
        """Make ``computed`` current: record undo, notify subscribers. GUI thread.

        Returns False and changes nothing when ``computed`` is stale (a later
        ``prepare`` was made, or the state changed since it was prepared).
        """
        p = computed.pending
        if p.generation != self._generation:
            return False
        if p.base is not self._state:
            moved = self._state.changed_fields(p.base)
            if not moved <= SELECTION_FIELDS or p.changed <= SELECTION_FIELDS:
                return False
            # The person moved the selection while this was computed: keep where they are now.
            kept = {key: getattr(self._state, key) for key in moved}
            if "query_index" in kept:
                kept["query_index"] = min(kept["query_index"], max(len(p.state.tokens) - 1, 0))
            p = dataclasses.replace(p, state=dataclasses.replace(p.state, **kept), base=self._state)
            computed = dataclasses.replace(computed, pending=p)
        old, old_computed = self._state, self._computed
        changed = p.state.changed_fields(old)
        self._state, self._computed = p.state, computed
        if p.record and not (changed <= SELECTION_FIELDS):
            now = self.clock()
            top = self._undo[-1] if self._undo else None
            if p.coalesce and top and top[1] == p.coalesce and now - top[2] < COALESCE_SECONDS:
                self._undo[-1] = (top[0], p.coalesce, now, top[3])
            else:
                self._undo.append((old, p.coalesce, now, old_computed))
                del self._undo[:-UNDO_LIMIT]
                self._forget_old_results()
            self._redo.clear()
        if changed:
            self._notify(TrainedChange(old, p.state, changed, self.result))
        return True

    def _forget_old_results(self) -> None:
        # Keep the results of the last few undo and redo entries only: memory stays bounded.
        for i in range(max(0, len(self._undo) - KEEP_COMPUTED)):
            entry = self._undo[i]
            if entry[3] is not None:
                self._undo[i] = entry[:3] + (None,)
        for i in range(max(0, len(self._redo) - KEEP_COMPUTED)):
            if self._redo[i][1] is not None:
                self._redo[i] = (self._redo[i][0], None)

    def _notify(self, change: TrainedChange) -> None:
        errors = []
        for callback in list(self._subscribers):
            try:
                callback(change)
            except Exception as exc:  # one broken view must not stop the others
                errors.append(exc)
        if errors:
            raise errors[0]

    # -- synchronous changes (scripts, tests, small edits) --------------------------------
    def update(self, *, coalesce: str | None = None, **changes) -> None:
        """Apply ``changes`` as one edit: prepare, compute and install, on this thread."""
        pending = self.prepare(coalesce=coalesce, **changes)
        self.install(self.compute(pending))

    def select(self, *, layer: int | None = None, head: int | None = None, query: int | None = None) -> None:
        """Move the selected layer, head and/or query token (0-based; not an edit: no undo entry)."""
        changes = {}
        for key, value in (("layer_index", layer), ("head_index", head), ("query_index", query)):
            if value is not None:
                changes[key] = value
        if changes:
            self.update(**changes)

    def set_state(self, state: TrainedState) -> None:
        """Replace the whole state (opening a session of the same model); undoable."""
        self._check_same_model(state)
        self.install(self.compute(self._prepare(self._retokenized(state, None))))

    def undo(self) -> bool:
        """Go back one edit; returns False when there is nothing to undo."""
        if not self._undo:
            return False
        previous, _, _, computed = self._undo.pop()
        self._redo.append((self._state, self._computed))
        self._forget_old_results()
        self._restore(previous, computed)
        return True

    def redo(self) -> bool:
        """Re-apply the last undone edit; returns False when there is nothing to redo."""
        if not self._redo:
            return False
        following, computed = self._redo.pop()
        self._undo.append((self._state, None, 0.0, self._computed))
        self._forget_old_results()
        self._restore(following, computed)
        return True

    def _restore(self, state: TrainedState, computed: Computed | None) -> None:
        pending = self._prepare(state, record=False)
        if computed is not None and computed.state is state:
            result = dataclasses.replace(computed, pending=pending)
        else:
            result = self.compute(pending)
        self.install(result)

    def subscribe(self, callback: Callable[[TrainedChange], None]) -> Callable[[], None]:
        """Call ``callback(change)`` once after every change; returns an unsubscribe function."""
        self._subscribers.append(callback)

        def unsubscribe():
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    # -- editing the model (each one undoable step) ---------------------------------------
    def edits_with_head_scale(self, layer: int, head: int, scale) -> Edits:
        """The current edits with a head scaled by ``scale`` (0 silences, 1 trained, up to 2;
        typed text allowed). Raises ``StateError`` for a bad value; for ``prepare(edits=...)``."""
        self._check_head(layer, head)
        value = parse_number(scale)
        if not 0.0 <= value <= MAX_HEAD_SCALE:
            raise StateError(f"a head's scale must be between 0 and {MAX_HEAD_SCALE:g}, got {value:g}")
        return self._state.edits.with_head_scale(layer, head, value)

    def edits_with_head_reset(self, layer: int, head: int) -> Edits:
        """The current edits with a head back to its trained scale and weights."""
        self._check_head(layer, head)
        return self._state.edits.reset_head(layer, head)

    def edits_with_cell(self, which: str, layer: int, head: int, row: int, col: int, text) -> Edits:
        """The current edits with one cell of a head's W_``which`` ("q", "k", "v") set to ``text``.

        ``text`` is what the person typed (or a number). Raises ``StateError``
        when it is not a finite number within ±MAX_ABS_VALUE, or the cell is
        outside the matrix.
        """
        if which not in PROJECTIONS:
            raise StateError(f"the matrix must be one of q, k, v; got {which!r}")
        self._check_head(layer, head)
        value = parse_number(text)
        m = self.model
        for name, index, n in (("row", row, m.d_model), ("column", col, m.d_head)):
            if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < n:
                raise StateError(f"the {name} must be 1 to {n} in W_{which.upper()} ({m.d_model} × {m.d_head}), "
                                 f"got {index!r}")
        try:
            return m.with_cell(self._state.edits, layer, head, which, int(row), int(col), value)
        except ModelError as exc:
            raise StateError(str(exc)) from None

    def set_head_scale(self, layer: int, head: int, scale, *, coalesce: str | None = None) -> None:
        """Scale a head's weighted values (0 silences, 0–2); one undo step (or coalesced with ``coalesce``)."""
        self.update(edits=self.edits_with_head_scale(layer, head, scale), coalesce=coalesce)

    def reset_head(self, layer: int, head: int) -> None:
        """Put a head back to its trained scale and W_Q, W_K, W_V; one undo step."""
        self.update(edits=self.edits_with_head_reset(layer, head))

    def reset_all(self) -> None:
        """Put every head back to the trained model; one undo step."""
        self.update(edits=Edits())

    def set_weight(self, which: str, layer: int, head: int, row: int, col: int, text) -> None:
        """Set one cell of a head's W_Q / W_K / W_V (``which`` = "q", "k", "v"); one undo step.

        A value that is not a finite number within limits is refused with a
        ``StateError`` and nothing changes.
        """
        self.update(edits=self.edits_with_cell(which, layer, head, row, col, text))

    def _check_head(self, layer, head) -> None:
        m = self.model
        for name, value, n in (("layer", layer, m.layers), ("head", head, m.heads)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < n:
                raise StateError(f"the {name} must be 1 to {n}, got {value!r}")
