"""The trained-model state: which model, the sentences, the selection and the edits (immutable)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np

from ..limits import MAX_ABS_VALUE
from ..pretrained import DEFAULT_MODEL, Edits, ModelError, TrainedModel
from ..pretrained.model import PROJECTIONS
from ..schema import TRAINED_SCHEMA_VERSION, ModelRef
from ..state import StateError, check_text


# What the lecturer looks at, not what the model is: no undo entry, no
# "unsaved" mark, no recompute.
SELECTION_FIELDS = frozenset({"layer_index", "head_index", "query_index", "rollout", "mean_heads"})

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
    recipe = getattr(model, "training", None)  # a lab model trained from a recipe names it too
    return ModelRef(model.name, folder, sha, tuple(sorted(recipe.items())) if recipe else ())


def is_default_model(model: TrainedModel) -> bool:
    """True when ``model`` is the bundled default, unpacked from its package into the cache."""
    from ..pretrained import cache_root

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

    Read-only names the toy views and ``explain`` use, with the model's
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
        """True for GPT-2 and a causal lab model (a token sees only itself and the tokens before it)."""
        return self.kind == "gpt2" or bool(getattr(self.source, "causal", False))

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


def _ro(a: np.ndarray) -> np.ndarray:
    """``a`` as a read-only array (results are shared, never changed in place)."""
    a = np.asarray(a)
    a.flags.writeable = False
    return a


def _check_index(name: str, value, n: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise StateError(f"the {name} must be a whole number, got {value!r}")
    if not 0 <= int(value) < n:
        raise StateError(f"the {name} must be 1 to {n}, got {int(value) + 1}")
    return int(value)


