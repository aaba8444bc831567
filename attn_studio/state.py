"""``StudioState``: the single, immutable source of truth of the studio.

A state is a frozen dataclass. It validates itself on construction, never
changes afterwards (its arrays are read-only), and converts to and from a
plain dict (the session and preset file format) with a ``schema_version``.

Weights are kept in *stores* that may be larger than what is shown: the
visible matrix is the top-left corner of its store. Shrinking d_model, the
head count or d_head therefore hides values instead of dropping them, and
growing back shows them again. A file stores only the cells that differ from
the seed's values (see ``StudioState.weight_edits``), so a large model that
was shrunk again saves as a small file.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .checks import (  # noqa: F401 (re-exported: the checks were first defined here)
    _check_bool,
    _check_finite,
    _check_int,
    _freeze_edits,
    _readonly,
    check_text,
    parse_number,
)
from .engine import SOFTMAX_KINDS, tokenize
from .engine.init import seeded_weights
from .limits import (  # noqa: F401 (re-exported: the limits were first defined here)
    MAX_ABS_VALUE,
    MAX_D_HEAD,
    MAX_D_MODEL,
    MAX_HEADS,
    MAX_NAME_CHARS,
    MAX_NUMBER_CHARS,
    MAX_SEED,
    MAX_SENTENCE_CHARS,
    MAX_TOKENS,
    MAX_WEIGHT_EDITS,
    TEMPERATURE_RANGE,
    StateError,
    cost_message,
    estimate_cost,
)
from .schema import (  # noqa: F401 (re-exported)
    ADDITIVE_NAMES,
    EditedCells,
    DENSE_WEIGHT_CELLS,
    MAX_LAYERS,
    SCHEMA_VERSION,
    WEIGHT_NAMES,
    fan_ins,
    seeded_reference,
    seeded_store,
    state_kwargs_from_dict,
    visible_store_shapes,
)

SCORE_KINDS = ("dot", "additive")


_MAX_AXIS = max(MAX_D_MODEL, MAX_D_HEAD)

# Fields that say what the lecturer is looking at, not what the model is:
# changing them is not an edit (no undo entry, no "unsaved" mark, no recompute).
SELECTION_FIELDS = frozenset({"query_index", "head_index"})


@dataclass(frozen=True, eq=False)
class StudioState:
    """Everything the studio shows is a function of this, and nothing else.

    Fields read like the seeds: ``sentence`` (keys and values, and queries in
    self-attention), ``target_sentence`` (queries for cross-attention; empty
    means self-attention), ``d_model``, ``heads``, ``d_head`` (d_k = d_v),
    ``scale`` (1/sqrt(d_k)), ``causal``, ``positional`` (add sinusoidal
    positions), ``projections`` (False = Q = K = V = X, the seeds' simplified
    attention), ``temperature``, ``softmax`` kind, ``seed``.
    """

    sentence: str = "Your journey starts with one step"
    target_sentence: str = ""
    d_model: int = 3
    heads: int = 1
    d_head: int = 3
    seed: int = 0
    scale: bool = True
    causal: bool = False
    positional: bool = False
    projections: bool = True
    temperature: float = 1.0
    softmax: str = "stable"
    score: str = "dot"
    embedding_edits: Mapping[str, Mapping[int, float]] = field(default_factory=dict)
    w_q_store: np.ndarray | None = None
    w_k_store: np.ndarray | None = None
    w_v_store: np.ndarray | None = None
    w_o_store: np.ndarray | None = None
    w_1_store: np.ndarray | None = None
    w_2_store: np.ndarray | None = None
    v_a_store: np.ndarray | None = None
    query_index: int = 0
    head_index: int = 0
    name: str = ""
    # The "before" side of the compare view: an earlier state to compare the
    # current one with (its own ``pinned`` is always None), or None.
    pinned: "StudioState | None" = None

    def __eq__(self, other) -> bool:
        if not isinstance(other, StudioState):
            return NotImplemented
        if self is other:
            return True
        for f in dataclasses.fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if isinstance(a, np.ndarray):
                if a.shape != b.shape or not np.array_equal(a, b):
                    return False
            elif a != b:
                return False
        return True

    __hash__ = None  # mutable-looking arrays inside: states are compared, not hashed

    def changed_fields(self, other: "StudioState") -> frozenset[str]:
        """Names of the fields whose values differ between ``self`` and ``other``."""
        changed = set()
        for f in dataclasses.fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if isinstance(a, np.ndarray):
                if a is not b and (a.shape != b.shape or not np.array_equal(a, b)):
                    changed.add(f.name)
            elif a is not b and a != b:  # ``is``: a pinned state is compared only when it was replaced
                changed.add(f.name)
        return frozenset(changed)

    # -- validation -------------------------------------------------------
    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        for key in ("sentence", "target_sentence", "name"):
            check_text(key, getattr(self, key))
        set_("d_model", _check_int("d_model", self.d_model, 1, MAX_D_MODEL))
        set_("heads", _check_int("heads", self.heads, 1, MAX_HEADS))
        set_("d_head", _check_int("d_head", self.d_head, 1, MAX_D_HEAD))
        set_("seed", _check_int("seed", self.seed, 0, MAX_SEED))
        for key in ("scale", "causal", "positional", "projections"):
            set_(key, _check_bool(key, getattr(self, key)))
        temperature = _check_finite("temperature", self.temperature)
        lo, hi = TEMPERATURE_RANGE
        if not lo <= temperature <= hi:
            raise StateError(f"temperature must be between {lo:g} and {hi:g}, got {temperature:g}")
        set_("temperature", temperature)
        if self.softmax not in SOFTMAX_KINDS:
            raise StateError(f"softmax must be one of {', '.join(SOFTMAX_KINDS)}, got {self.softmax!r}")
        if self.score not in SCORE_KINDS:
            raise StateError(f"score must be one of {', '.join(SCORE_KINDS)}, got {self.score!r}")
        counts = {}
        for key in ("sentence", "target_sentence"):
            n = counts[key] = len(tokenize(getattr(self, key)))
            if n > MAX_TOKENS:
                raise StateError(f"{key} has {n:,} tokens; the limit is {MAX_TOKENS:,}")
        n_keys = counts["sentence"]
        too_costly = cost_message(counts["target_sentence"] or n_keys, n_keys, self.d_model, self.heads,
                                  self.d_head, self.projections, self.score == "additive")
        if too_costly:
            raise StateError(too_costly[0].upper() + too_costly[1:])
        set_("embedding_edits", _freeze_edits(self.embedding_edits))
        self._init_stores()
        fans = self.fan_ins()
        set_("_layers", {name: ((*getattr(self, f"{name}_store").shape, fans[name]),) for name in WEIGHT_NAMES})
        n_queries = len(self.query_tokens)
        if n_queries:
            set_("query_index", _check_int("query_index", self.query_index, 0, n_queries - 1))
        else:
            set_("query_index", 0)
        set_("head_index", _check_int("head_index", self.head_index, 0, self.heads - 1))
        if self.pinned is not None:
            if not isinstance(self.pinned, StudioState):
                raise StateError(f"pinned must be a studio state or None, got {type(self.pinned).__name__}")
            if self.pinned.pinned is not None:  # pin one level deep: the "before" of a "before" is not kept
                set_("pinned", dataclasses.replace(self.pinned, pinned=None))

    def _init_stores(self):
        shapes = self.weight_shapes()
        fan_in = self.fan_ins()
        for name in WEIGHT_NAMES:
            key = f"{name}_store"
            store = getattr(self, key)
            visible = shapes[name]
            if store is None:
                store = seeded_store(self.seed, name, visible, fan_in[name])
            else:
                try:
                    store = np.asarray(store, dtype=np.float64)
                except (TypeError, ValueError):
                    raise StateError(f"{name} must be an array of numbers") from None
                if store.ndim != 3:
                    raise StateError(f"{name} store must have 3 dimensions, got shape {store.shape}")
                if any(s > m for s, m in zip(store.shape, (MAX_HEADS, _MAX_AXIS, _MAX_AXIS))):
                    raise StateError(f"{name} store of shape {store.shape} is larger than any model the studio shows")
                if not np.all(np.isfinite(store)):
                    raise StateError(f"{name} contains a value that is not a finite number")
                if np.any(np.abs(store) > MAX_ABS_VALUE):
                    raise StateError(f"{name} contains a value beyond ±{MAX_ABS_VALUE:g}")
                if any(s < v for s, v in zip(store.shape, visible)):
                    # Grow the store: new entries come from the seed, old ones stay.
                    grown_shape = tuple(max(s, v) for s, v in zip(store.shape, visible))
                    grown = seeded_weights(self.seed, name, grown_shape, fan_in[name])
                    grown[tuple(slice(0, s) for s in store.shape)] = store
                    store = grown
            object.__setattr__(self, key, _readonly(store))

    # -- derived views (cheap; the Studio caches the expensive ones) --------
    def fan_ins(self) -> dict[str, int]:
        """The fan-in each weight store is drawn with: unedited weights are ~ N(0, 1/fan_in)."""
        return fan_ins(self.heads, self.d_model, self.d_head, self.projections)

    def cost(self):
        """The predicted memory and arithmetic of computing this state (a ``limits.Cost``)."""
        n_keys = len(self.tokens)
        return estimate_cost(len(self.query_tokens) or n_keys, n_keys, self.d_model, self.heads, self.d_head,
                             self.projections, self.score == "additive")

    @property
    def live_update(self) -> bool:
        """True when the views can follow every keystroke at this size (else: update on Enter or a pause)."""
        return self.cost().live

    def weight_shapes(self) -> dict[str, tuple[int, int, int]]:
        """Shape of each visible weight store (W_O as (heads, d_head, d_model), v_a as (heads, 1, d_k))."""
        return visible_store_shapes(self.heads, self.d_model, self.d_head, self.projections)

    def _visible(self, name: str) -> np.ndarray:
        h, d, k = self.weight_shapes()[name]
        return getattr(self, f"{name}_store")[:h, :d, :k]

    @property
    def w_q(self) -> np.ndarray:
        """W_Q, ``(heads, d_model, d_head)``: Q = X·W_Q[i] for head i."""
        return self._visible("w_q")

    @property
    def w_k(self) -> np.ndarray:
        """W_K, ``(heads, d_model, d_head)``."""
        return self._visible("w_k")

    @property
    def w_v(self) -> np.ndarray:
        """W_V, ``(heads, d_model, d_head)``."""
        return self._visible("w_v")

    @property
    def w_o(self) -> np.ndarray:
        """W_O, ``(heads * d_head, d_model)``: mixes the concatenated heads."""
        w_o = self._visible("w_o").reshape(self.heads * self.d_head, self.d_model)
        w_o.flags.writeable = False  # the reshape may be a copy; it is still the state's
        return w_o

    @property
    def w_1(self) -> np.ndarray:
        """W_1 of the additive score, ``(heads, d_k, d_k)``: applied to the query."""
        return self._visible("w_1")

    @property
    def w_2(self) -> np.ndarray:
        """W_2 of the additive score, ``(heads, d_k, d_k)``: applied to the key."""
        return self._visible("w_2")

    @property
    def v_a(self) -> np.ndarray:
        """v_a of the additive score, ``(heads, d_k)``."""
        return self._visible("v_a")[:, 0, :]

    @property
    def tokens(self) -> list[str]:
        """Tokens of ``sentence``: the keys and values (and queries in self-attention)."""
        return tokenize(self.sentence)

    @property
    def target_tokens(self) -> list[str]:
        """Tokens of ``target_sentence`` (empty in self-attention)."""
        return tokenize(self.target_sentence)

    @property
    def cross(self) -> bool:
        """True when a second sentence supplies the queries (encoder-decoder attention)."""
        return bool(self.target_tokens)

    @property
    def query_tokens(self) -> list[str]:
        """The tokens that ask: the target sentence in cross-attention, else the sentence."""
        return self.target_tokens if self.cross else self.tokens

    @property
    def key_tokens(self) -> list[str]:
        """The tokens that are attended to."""
        return self.tokens

    def random_vector_words(self) -> list[str]:
        """The words with no set vector (seeded random ones: their attention means nothing of language)."""
        return [w for w in dict.fromkeys((*self.tokens, *self.target_tokens)) if w not in self.embedding_edits]

    @property
    def d_k(self) -> int:
        """The key dimension the scores are scaled by: d_head, or d_model without projections."""
        return self.d_head if self.projections else self.d_model

    @property
    def effective_heads(self) -> int:
        """Heads computed: without projections every head would be the same, so one."""
        return self.heads if self.projections else 1

    @property
    def shown_head(self) -> int:
        """The head the views show: ``head_index``, or the one head computed without projections."""
        return min(self.head_index, self.effective_heads - 1)

    # -- changes -----------------------------------------------------------
    def replace(self, **changes) -> "StudioState":
        """Return a new, validated state with ``changes`` applied.

        Besides the fields, accepts visible weight arrays ``w_q``, ``w_k``,
        ``w_v`` ``(heads, d_model, d_head)`` and ``w_o`` ``(heads*d_head,
        d_model)``, written into the corner of their stores. A new ``seed``
        without explicit weights regenerates every weight from that seed.
        """
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)} - set(WEIGHT_NAMES)
        if unknown:
            raise StateError(f"unknown setting{'s' if len(unknown) > 1 else ''}: {', '.join(sorted(unknown))}")
        visible = {name: changes.pop(name) for name in WEIGHT_NAMES if name in changes}
        if "seed" in changes and changes["seed"] != self.seed:
            for name in WEIGHT_NAMES:
                changes.setdefault(f"{name}_store", None)
        # A shorter sentence or fewer heads keep the selection inside the model (not an error).
        if "query_index" not in changes and ({"sentence", "target_sentence"} & set(changes)):
            probe = dataclasses.replace(self, query_index=0, **{k: v for k, v in changes.items() if k != "query_index"})
            changes["query_index"] = min(self.query_index, max(len(probe.query_tokens) - 1, 0))
        if "head_index" not in changes and "heads" in changes:
            try:
                changes["head_index"] = min(self.head_index, max(int(changes["heads"]) - 1, 0))
            except (TypeError, ValueError):
                pass  # the heads value itself is refused below, with its own message
        new = dataclasses.replace(self, **changes)
        if visible:
            stores = {}
            shapes = new.weight_shapes()
            for name, value in visible.items():
                try:
                    arr = np.asarray(value, dtype=np.float64)
                except (TypeError, ValueError):
                    raise StateError(f"{name} must be an array of numbers") from None
                shape = shapes[name]
                if name in ("w_o", "v_a"):
                    want = (shape[0] * shape[1], shape[2]) if name == "w_o" else (shape[0], shape[2])
                    if arr.shape != want:
                        raise StateError(f"{name} must have shape {want}, got {arr.shape}")
                    arr = arr.reshape(shape)
                elif arr.shape != shape:
                    raise StateError(f"{name} must have shape {shape}, got {arr.shape}")
                store = np.array(getattr(new, f"{name}_store"))
                store[: shape[0], : shape[1], : shape[2]] = arr
                stores[f"{name}_store"] = store
            new = dataclasses.replace(new, **stores)
        return self._carry_layers(new, changes)

    def with_embedding(self, word: str, index: int, value: float) -> "StudioState":
        """Return a state where component ``index`` of ``word``'s vector is ``value``."""
        if word not in self.tokens and word not in self.target_tokens:
            raise StateError(f"{word!r} is not a token of the sentence")
        index = _check_int("the component", index, 0, self.d_model - 1)
        value = _check_finite("the value", value)
        edits = {w: dict(v) for w, v in self.embedding_edits.items()}
        edits.setdefault(word, {})[index] = value
        return self.replace(embedding_edits=edits)

    def _carry_layers(self, new: "StudioState", changes: dict) -> "StudioState":
        # A store that grew drew its new cells at the new fan-in: remember that,
        # so that a file can tell seeded cells from edited ones (see weight_edits).
        if new.seed != self.seed:
            return new
        fans = new.fan_ins()
        layers = {}
        for name in WEIGHT_NAMES:
            key = f"{name}_store"
            before, after = getattr(self, key).shape, getattr(new, key).shape
            if key in changes:
                layers[name] = new._layers[name]
            elif after != before:
                layers[name] = (self._layers[name] + ((*after, fans[name]),))[-MAX_LAYERS:]
            else:
                layers[name] = self._layers[name]
        object.__setattr__(new, "_layers", layers)
        return new

    def _reference(self, name: str) -> np.ndarray:
        """The seed's values of a store: each cell drawn at the fan-in of its store's size then."""
        store = getattr(self, f"{name}_store")
        return seeded_reference(self.seed, name, store.shape, self._layers[name], self.fan_ins()[name])

    def weight_edits(self) -> dict:
        """Per weight store that differs from a fresh one: its shape, layers and edited cells.

        ``{name: {"shape": [a, b, c], "layers": [[a, b, c, fan_in], ...], "cells": [[i, j, k, value], ...]}}``.
        A cell is edited when it differs from the value the seed gave it. The
        shape covers the visible corner and the hidden values kept for growing
        back; the layers (left out when there is one) say at which fan-in each
        part of a grown store was drawn: a cell's fan-in is that of the first
        layer whose box holds it. Unedited models therefore save as a few bytes.
        """
        out = self._weight_edit_arrays()
        for entry in out.values():
            entry["cells"] = entry["cells"].tolist()
        return out

    def _weight_edit_arrays(self) -> dict:
        """:meth:`weight_edits` with each store's cells as :class:`EditedCells` arrays, not lists."""
        out = {}
        fans, shapes = self.fan_ins(), self.weight_shapes()
        edited = {name: getattr(self, f"{name}_store") != self._reference(name) for name in WEIGHT_NAMES}
        total = sum(int(np.count_nonzero(mask)) for mask in edited.values())
        if total > MAX_WEIGHT_EDITS:
            raise StateError(f"{total:,} weights differ from their seeded values; a session file holds at most "
                             f"{MAX_WEIGHT_EDITS:,} edited weights: use a smaller model or a new seed")
        for name in WEIGHT_NAMES:
            store = getattr(self, f"{name}_store")
            index = np.argwhere(edited[name])
            layers = self._layers[name]
            plain = layers == ((*store.shape, fans[name]),)
            if len(index) or store.shape != shapes[name] or not plain:
                out[name] = {"shape": list(store.shape),
                             **({} if plain else {"layers": [list(layer) for layer in layers]}),
                             "cells": EditedCells(index, store[tuple(index.T)])}
        return out

    # -- files -------------------------------------------------------------
    def to_dict(self) -> dict:
        """A plain, JSON-ready dict: the session and preset file format."""
        return self._to_dict(self.weight_edits())

    def _to_dict(self, edits: dict) -> dict:
        # ``edits``: weight_edits(), or _weight_edit_arrays() for the session writer.
        return {
            "schema_version": SCHEMA_VERSION,
            "name": self.name,
            "sentence": self.sentence,
            "target_sentence": self.target_sentence,
            "d_model": self.d_model,
            "heads": self.heads,
            "d_head": self.d_head,
            "seed": self.seed,
            "scale": self.scale,
            "causal": self.causal,
            "positional": self.positional,
            "projections": self.projections,
            "temperature": self.temperature,
            "softmax": self.softmax,
            "score": self.score,
            "embeddings": {
                word: {str(i): v for i, v in sorted(values.items())}
                for word, values in sorted(self.embedding_edits.items())
            },
            # Small models write their visible weights in full (readable, for NumPy).
            **({"weights": {name: getattr(self, name).tolist() for name in WEIGHT_NAMES}}
               if sum(math.prod(s) for s in self.weight_shapes().values()) <= DENSE_WEIGHT_CELLS else {}),
            # The edited cells, visible and hidden (hidden by shrinking d_model, heads
            # or d_head, so that growing back after reopening restores them).
            **({"weight_edits": edits} if edits else {}),
            "selection": {"query": self.query_index, "head": self.head_index},
            **({"pinned": self.pinned.to_dict()} if self.pinned is not None else {}),
        }

    @classmethod
    def from_dict(cls, data) -> "StudioState":
        """Build a state from :meth:`to_dict` output, checking every field.

        Raises ``StateError`` naming the first bad field. Weights may be left
        out (they then come from the seed); unknown keys are refused.
        """
        kwargs = state_kwargs_from_dict(data)
        pinned = kwargs.pop("pinned", None)
        if pinned is not None:
            try:
                kwargs["pinned"] = cls._from_kwargs(pinned)
            except StateError as exc:
                raise StateError(f"the pinned comparison state: {exc}") from None
        return cls._from_kwargs(kwargs)

    @classmethod
    def _from_kwargs(cls, kwargs: dict) -> "StudioState":
        layers = kwargs.pop("_layers", {})
        state = cls(**kwargs)
        if layers:
            object.__setattr__(state, "_layers", {**state._layers, **layers})
        return state
