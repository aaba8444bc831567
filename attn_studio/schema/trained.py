"""Checking a session of a trained model (version 4) field by field: which model it names
(:class:`ModelRef`), its sentences, selection and edits, before the model is loaded
(:class:`TrainedSession`). Nothing here trusts the input; the weights are never in the file.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

import numpy as np

from ..limits import MAX_ABS_VALUE, MAX_SENTENCE_CHARS, MAX_WEIGHT_EDITS, StateError
from .toy import _int_field

# -- sessions of a trained model -------------------------------------------------------------
# Version 4: a session of a trained model. It names the model (its name, its
# folder or none for the bundled default, and the SHA-256 of its weights file)
# and stores the edits, the sentences, the compared word and the selection;
# never the weights. Toy sessions are still written as version 3.
TRAINED_SCHEMA_VERSION = 4
_TRAINED_FIELDS = frozenset({"schema_version", "kind", "name", "model", "sentence", "second_sentence", "word",
                             "selection", "view", "edits"})
_MODEL_FIELDS = frozenset({"name", "folder", "sha256", "lab"})
_SHA256_DIGITS = frozenset("0123456789abcdef")
MAX_MODEL_NAME_CHARS = 300
MAX_FOLDER_CHARS = 4096
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclasses.dataclass(frozen=True)
class ModelRef:
    """Which trained model a state (and a session file) belongs to.

    ``name`` (e.g. "all-MiniLM-L6-v2"), ``folder`` (the model folder as text;
    None for the bundled default model) and ``sha256`` of its weights file
    (``model.safetensors``, 64 lower-case hex digits). Never the weights.
    A lab model (the training lab's) may also name the run that trains it again,
    ``lab`` (its recipe: experiment, arm, seed, steps, lr, d_k, as sorted pairs;
    ``recipe`` gives it as a dict), so it opens on a machine that never saw it.
    """

    name: str
    folder: str | None
    sha256: str
    lab: tuple = ()

    @property
    def recipe(self) -> dict | None:
        """The lab model's recipe as a dict, or None."""
        return dict(self.lab) if self.lab else None

    def describe(self) -> str:
        """A short human text: the name, the folder if any, the hash's first 12 digits."""
        where = f" in {self.folder}" if self.folder else ""
        return f"{self.name}{where} (sha {self.sha256[:12]}…)"

    def to_dict(self) -> dict:
        out = {"name": self.name, "folder": self.folder, "sha256": self.sha256}
        if self.lab:
            out["lab"] = dict(self.lab)
        return out


@dataclasses.dataclass(frozen=True)
class TrainedSession:
    """A checked session of a trained model, before the model is loaded.

    ``model`` (a :class:`ModelRef`), ``sentence``, ``second_sentence``,
    ``word``, ``layer``, ``head``, ``query`` (0-based), ``rollout``,
    ``mean_heads``, ``edits`` (``pretrained.Edits``; its indices and matrix
    shapes are checked against the model when it is loaded), ``name``.
    """

    model: ModelRef
    sentence: str
    second_sentence: str = ""
    word: str = ""
    layer: int = 0
    head: int = 0
    query: int = 0
    rollout: bool = False
    mean_heads: bool = False
    edits: object = None
    name: str = ""


def _text_field(data: Mapping, key: str, limit: int, default=None) -> str:
    value = data.get(key, default)
    if value is None:
        raise StateError(f"“{key}” is missing")
    if not isinstance(value, str):
        raise StateError(f"“{key}” must be text, got {type(value).__name__}")
    if _SURROGATE.search(value):
        raise StateError(f"“{key}” holds an unpaired surrogate, which no text can hold")
    if len(value) > limit:
        raise StateError(f"“{key}” is {len(value):,} characters long; the limit is {limit:,}")
    return value


def _bool_field(data: Mapping, key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise StateError(f"“{key}” must be true or false, got {value!r}"[:200])
    return value


def model_ref_from_dict(data) -> ModelRef:
    """Check the “model” object of a version-4 session; raises ``StateError``."""
    if not isinstance(data, Mapping):
        raise StateError("“model” must be an object with name, folder and sha256")
    unknown = set(data) - _MODEL_FIELDS
    if unknown:
        raise StateError(f"unknown field{'s' if len(unknown) > 1 else ''} in “model”: "
                         f"{', '.join(sorted(str(k)[:60] for k in unknown))}")
    name = _text_field(data, "name", MAX_MODEL_NAME_CHARS)
    if not name.strip():
        raise StateError("the model's name is empty")
    folder = data.get("folder")
    if folder is not None:
        folder = _text_field(data, "folder", MAX_FOLDER_CHARS)
        if not folder.strip() or "\x00" in folder:
            raise StateError("the model's folder must be a folder path or null (the bundled model)")
    sha = data.get("sha256")
    if not isinstance(sha, str) or len(sha) != 64 or not set(sha) <= _SHA256_DIGITS:
        raise StateError("the model's sha256 must be 64 lower-case hexadecimal digits")
    lab = ()
    if data.get("lab") is not None:
        from ..pretrained import ModelError
        from ..pretrained.lab_files import check_recipe

        try:
            lab = tuple(sorted(check_recipe(data["lab"], "the model's lab recipe").items()))
        except ModelError as exc:
            raise StateError(str(exc)) from None
    return ModelRef(name, folder, sha, lab)


def trained_session_from_dict(data) -> TrainedSession:
    """Check every field of a version-4 (trained model) session; raises ``StateError`` on the first problem.

    Nothing needs the model here: indices are checked against the model when
    it is loaded (``TrainedSession`` to state, in ``attn_studio.trained``).
    """
    from ..pretrained import Edits, ModelError

    if not isinstance(data, Mapping):
        raise StateError(f"a session must be a JSON object, got {type(data).__name__}")
    if data.get("schema_version") != TRAINED_SCHEMA_VERSION or data.get("kind") != "trained":
        raise StateError("this is not a session of a trained model")
    unknown = set(data) - _TRAINED_FIELDS
    if unknown:
        raise StateError(f"unknown field{'s' if len(unknown) > 1 else ''}: "
                         f"{', '.join(sorted(str(k)[:60] for k in unknown))}")
    ref = model_ref_from_dict(data.get("model"))
    sentence = _text_field(data, "sentence", MAX_SENTENCE_CHARS)
    second = _text_field(data, "second_sentence", MAX_SENTENCE_CHARS, "")
    word = _text_field(data, "word", MAX_SENTENCE_CHARS, "")
    name = _text_field(data, "name", MAX_SENTENCE_CHARS, "")
    selection = data.get("selection", {})
    if not isinstance(selection, Mapping) or set(selection) - {"layer", "head", "query"}:
        raise StateError("“selection” must be an object with layer, head and query")
    index = {key: _int_field(selection, key, 0, 1_000_000) if key in selection else 0
             for key in ("layer", "head", "query")}
    view = data.get("view", {})
    if not isinstance(view, Mapping) or set(view) - {"rollout", "mean_heads"}:
        raise StateError("“view” must be an object with rollout and mean_heads")
    edits = data.get("edits", {})
    if not isinstance(edits, Mapping) or set(edits) - {"head_scale", "weights"}:
        raise StateError("“edits” must be an object with head_scale and weights")
    for key in ("head_scale", "weights"):
        if not isinstance(edits.get(key, []), list):
            raise StateError(f"“edits.{key}” must be a list")
    cells = sum(len(e[3]) * len(e[3][0]) for e in edits.get("weights", [])
                if isinstance(e, list) and len(e) == 4 and isinstance(e[3], list) and e[3]
                and isinstance(e[3][0], list))
    if cells > MAX_WEIGHT_EDITS:
        raise StateError(f"the session holds {cells:,} edited weights; the limit is {MAX_WEIGHT_EDITS:,}")
    try:
        parsed = Edits.from_dict(edits)
    except ModelError as exc:
        raise StateError(f"the model edits: {exc}") from None
    for (_, _, which), matrix in parsed.weights.items():
        if matrix.size and np.abs(matrix).max() > MAX_ABS_VALUE:
            raise StateError(f"an edited W_{which.upper()} holds a value beyond ±{MAX_ABS_VALUE:g}")
    return TrainedSession(ref, sentence, second, word, index["layer"], index["head"], index["query"],
                          _bool_field(view, "rollout"), _bool_field(view, "mean_heads"), parsed, name)
