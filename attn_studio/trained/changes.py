"""What a change of the trained-model studio is: prepared (:class:`Pending`), computed
(:class:`Computed`), told to subscribers (:class:`TrainedChange`), and the paths of one word
through two sentences (:class:`WordPaths`, seed 001's "bank"). No Qt, no state of its own:
:class:`~attn_studio.trained.studio.TrainedStudio` keeps the current state and undo over them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine import MultiHeadResult, Projection2D, layerwise_cosine, pca_2d
from ..pretrained import Edits, ModelError, ModelRun
from .state import SELECTION_FIELDS, TrainedState, _ro


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
    ``changed`` field names, and the undo bookkeeping (``coalesce``, ``record``).
    ``intact=False``: the unedited model's run (and the drift) may be left for
    later by :meth:`TrainedStudio.compute` (see :class:`Computed`)."""

    state: TrainedState
    base: TrainedState
    base_computed: Computed | None
    generation: int
    changed: frozenset
    coalesce: str | None = None
    record: bool = True
    intact: bool = True


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

    ``trained_run`` and ``drift`` may be left for later by the computation (``_trained_run`` None:
    :meth:`TrainedStudio.compute` with ``intact=False``, when no view in sight reads them): they are
    then worked out on first use, from ``run`` up from its lowest edited layer, and kept.
    """

    pending: Pending
    run: ModelRun
    _trained_run: ModelRun | None
    second_run: ModelRun | None
    _drift: np.ndarray | None
    mean_attention: np.ndarray
    rollout: np.ndarray
    words: WordPaths | None
    word_message: str = ""

    @property
    def state(self) -> TrainedState:
        return self.pending.state

    @property
    def trained_run(self) -> ModelRun:
        """The unedited model on the same text (``run`` itself when nothing is edited)."""
        trained = self._trained_run
        if trained is None:
            # Below its lowest edited layer ``run`` is the unedited model's: only the layers above are run.
            trained = self.run.rerun(Edits())
            object.__setattr__(self, "_trained_run", trained)  # kept: pure, the same whoever works it out
        return trained

    @property
    def drift(self) -> np.ndarray:
        """``(layers + 1,)``: per layer, how far the token vectors moved from the unedited model's."""
        drift = self._drift
        if drift is None:
            trained = self.trained_run
            drift = _ro(self.run.drift(trained) if self.run is not trained else np.zeros(self.run.model.layers + 1))
            object.__setattr__(self, "_drift", drift)
        return drift

    @property
    def intact_known(self) -> bool:
        """True when ``trained_run`` and ``drift`` are worked out (reading them costs nothing)."""
        return self._trained_run is not None and self._drift is not None


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


def edit_comparison(computed, layer: int, head: int):
    """The trained model (the pinned "before", which never changes) against the edited one: head ``head`` of
    layer ``layer`` (0-based) in both runs, as a :class:`~attn_studio.changes.Comparison` (B − A: what the
    edits changed in that head's weights; 0 everywhere for an unedited model or a layer below every edit)."""
    from ..changes import Comparison

    result_a = computed.trained_run.layer_results[layer]
    result_b = computed.run.layer_results[layer]
    wa, wb = result_a.weights[head], result_b.weights[head]
    diff = wb - wa
    largest = float(np.max(np.abs(diff))) if diff.size else 0.0
    edits = computed.state.edits
    silenced = sum(1 for s in edits.head_scale.values() if s == 0)
    scaled = len(edits.head_scale) - silenced
    what = [f"{n} head{'s' if n > 1 else ''} {verb}" for n, verb in ((silenced, "silenced"), (scaled, "scaled"))
            if n]
    if not edits.is_trained and not what:
        what = ["weights edited"]
    label_b = "edited (" + ", ".join(what) + ")" if what else "edited (no edits yet)"
    return Comparison("pinned", "trained model", result_a, label_b, result_b, int(head), wa, wb, diff, largest,
                      result_a.blocked & result_b.blocked)
