"""Lab models: the training lab's tiny attention-only transformers, opened like any trained model.

A lab model's folder holds three files, written by ``exp.save_model(arm, folder)``
(``attn_studio.training``) and read here by ``load_pretrained(folder)``:

- ``config.json``: ``"model_type": "attention-only"`` (the kind), the format's name and version,
  the sizes (``layers``, ``heads``, ``d_model``, ``d_head``, ``vocab_size``, ``n_ctx``, ``n_out``),
  ``causal`` and ``scale`` (scores / sqrt(d_head) or not), the model's ``name``, the ``example``
  it opens on ("repeat": a random stretch twice; "pairs": key=label pairs) and, when the run can
  be trained again, its recipe (``training``: experiment, arm, seed, steps, lr, d_k);
- ``model.safetensors``: ``W_E (vocab, d_model)``, ``W_pos (n_ctx, d_model)``, per layer l
  ``layer{l}.W_Q``, ``layer{l}.W_K``, ``layer{l}.W_V`` ``(d_model, heads·d_head)`` and
  ``layer{l}.W_O`` ``(heads·d_head, d_model)``, and ``W_U (d_model, n_out)``; head h owns columns
  h·d_head .. (h+1)·d_head - 1 of W_Q, W_K, W_V and the same rows of W_O (the training lab's names);
- ``vocab.json``: ``{"tokens": [...]}``, one name a person can type and read per token id.

The forward pass is the lab's: x = W_E[ids] + W_pos[:T]; each layer adds its attention's output
to the residual stream (no MLP, no layer norm, no biases); the output scores are x W_U. It runs on
the engine's attention, so a lab model has every view of a trained model (q, k, v, heads silenced,
drift). Everything read is checked first; a broken or hostile folder is a :class:`ModelError`
naming what is wrong. No Qt.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engine.attention import multi_head_attention_trusted
from .config import ModelConfig
from .errors import ModelError
from .model import Edits, Encoding, ModelRun, TrainedModel
from .safetensors_io import FLOAT_DTYPES, WeightsFile
from .weights import LayerWeights, ModelWeights

__all__ = ["LAB_KIND", "LAB_FORMAT", "LabConfig", "LabModel", "LabVocabulary", "is_lab_folder",
           "load_lab_folder", "write_lab_folder", "EXAMPLES", "RECIPE_FIELDS"]

LAB_KIND = "attention-only"
LAB_FORMAT = "attn-studio lab model"
FORMAT_VERSION = 1
CONFIG_FILE, WEIGHTS_FILE, VOCAB_FILE = "config.json", "model.safetensors", "vocab.json"
LAB_FILES = (CONFIG_FILE, WEIGHTS_FILE, VOCAB_FILE)
EXAMPLES = ("repeat", "pairs")  # what a model opens on: a stretch twice; key=label pairs

# A lab model is tiny; far beyond these a config is damaged or hostile.
LIMITS = {"layers": 12, "heads": 64, "d_model": 4096, "d_head": 4096, "vocab_size": 4096, "n_ctx": 4096,
          "n_out": 4096}
MAX_PARAMETERS = 10_000_000  # 80 MB of float64: the lab's models have some ten thousand
MAX_FILE_BYTES = 1024 * 1024  # config.json and vocab.json
MAX_NAME_CHARS = 120
MAX_TOKEN_CHARS = 16
# The recipe a run is trained again from (a scene names its model this way): field -> type.
RECIPE_FIELDS = {"experiment": str, "arm": str, "seed": int, "steps": int, "lr": float, "d_k": int}


@dataclass(frozen=True)
class LabConfig(ModelConfig):
    """A lab model's sizes and switches, checked. ``d_head`` is its own (the heads need not fill
    d_model); ``causal`` masks later keys; ``n_out`` is the width of W_U (the vocabulary for a
    next-token model, the classes for associative recall)."""

    head_dim: int = 1
    causal: bool = True
    n_out: int = 1
    example: str = "repeat"

    @property
    def d_head(self) -> int:
        return self.head_dim


# -- the vocabulary -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Encoded:
    """What a tokenizer's ``encode`` gives (the fields ``TrainedModel.encode`` reads)."""

    ids: list
    tokens: list
    type_ids: list
    offsets: list


class LabVocabulary:
    """A lab model's tokens by name: a text is names separated by spaces; when every name is one
    character, a word of several is read letter by letter ("ABCD ABCD"). Case is ignored where
    that names one token only. Has the tokenizer methods the studio uses (``encode``,
    ``id_to_token``, ``token_to_id``, ``get_vocab``)."""

    def __init__(self, names):
        self.names = tuple(names)
        self._ids = {name: i for i, name in enumerate(self.names)}
        folded: dict[str, list[int]] = {}
        for i, name in enumerate(self.names):
            folded.setdefault(name.casefold(), []).append(i)
        self._folded = {key: ids[0] for key, ids in folded.items() if len(ids) == 1}
        self.single_characters = all(len(name) == 1 for name in self.names)

    def __len__(self) -> int:
        return len(self.names)

    def describe(self) -> str:
        """The tokens in a few words ("A–Z and 0–5", or the first names)."""
        text = "".join(self.names)
        if text == "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345":
            return "A–Z and 0–5"
        shown = ", ".join(self.names[:6])
        return shown + (f", … {self.names[-1]}" if len(self.names) > 6 else "")

    def _lookup(self, piece: str) -> int | None:
        found = self._ids.get(piece)
        return found if found is not None else self._folded.get(piece.casefold())

    def encode(self, text: str) -> _Encoded:
        """The ids, names and character offsets of ``text``; :class:`ModelError` naming a piece
        that is not a token."""
        ids, offsets = [], []
        start = None
        for i, ch in enumerate(text + " "):
            if not ch.isspace():
                if start is None:
                    start = i
                continue
            if start is None:
                continue
            piece = text[start:i]
            found = self._lookup(piece)
            if found is not None:
                ids.append(found)
                offsets.append((start, i))
            elif self.single_characters and all(self._lookup(c) is not None for c in piece):
                for j, c in enumerate(piece):
                    ids.append(self._lookup(c))
                    offsets.append((start + j, start + j + 1))
            else:
                bad = piece if not self.single_characters else "".join(
                    dict.fromkeys(c for c in piece if self._lookup(c) is None))
                raise ModelError(f"{bad[:40]!r} is not a token of this model: its tokens are {self.describe()}, "
                                 "separated by spaces")
            start = None
        if not ids:
            raise ModelError(f"type at least one token ({self.describe()})")
        return _Encoded(ids, [self.names[i] for i in ids], [0] * len(ids), offsets)

    def id_to_token(self, i: int) -> str | None:
        return self.names[i] if 0 <= i < len(self.names) else None

    def token_to_id(self, name: str) -> int | None:
        return self._ids.get(name)

    def get_vocab(self, with_added_tokens: bool = True) -> dict:
        return dict(self._ids)

    def get_added_tokens_decoder(self) -> dict:
        return {}



def check_names(names, vocab_size: int, where: str) -> tuple:
    """The vocabulary's names, checked: ``vocab_size`` distinct, printable names without spaces."""
    if not isinstance(names, list):
        raise ModelError(f"{where}: \"tokens\" must be a list of names")
    if len(names) != vocab_size:
        raise ModelError(f"{where} names {len(names)} tokens but config.json says the model has "
                         f"{vocab_size}: the files are from different models")
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name or len(name) > MAX_TOKEN_CHARS:
            raise ModelError(f"{where}: token {i} must be a name of 1 to {MAX_TOKEN_CHARS} characters, "
                             f"got {str(name)[:40]!r}")
        if not name.isprintable() or any(c.isspace() for c in name) or any(0xD800 <= ord(c) <= 0xDFFF for c in name):
            raise ModelError(f"{where}: token {i}'s name {name[:40]!r} holds a space or a character that "
                             "cannot be typed")
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ModelError(f"{where}: the name {twice[0][:40]!r} is given to two tokens")
    return tuple(names)


# -- the model ------------------------------------------------------------------------------


class LabModel(TrainedModel):
    """A lab model: a :class:`TrainedModel` (``run(text)``, edits, every view) whose layers are
    attention only, whose tokenizer is its vocabulary of names (:class:`LabVocabulary`), and
    which also gives its output scores (``logits``, ``output_logits``).

    Extra attributes: ``vocabulary``, ``unembedding`` (W_U, read-only), ``training`` (the recipe
    of the run it came from, or None), ``causal``, ``n_out``.
    """

    def __init__(self, name: str, path: Path, config: LabConfig, weights: ModelWeights,
                 vocabulary: LabVocabulary, unembedding: np.ndarray, training: dict | None):
        super().__init__(name, path, config, weights, vocabulary)
        self.vocabulary = vocabulary
        self.unembedding = unembedding
        self.training = training
        self.causal = config.causal
        self.n_out = config.n_out

    def __repr__(self) -> str:
        return (f"LabModel({self.name!r}, layers={self.layers}, heads={self.heads}, d_model={self.d_model}, "
                f"d_head={self.d_head}, vocab={self.vocab_size})")

    # -- tokens --------------------------------------------------------------------------

    def encode(self, text: str) -> Encoding:
        """``text`` as the vocabulary's tokens (no special tokens); refuses unknown names and texts
        longer than the model's positions."""
        if not isinstance(text, str):
            raise ModelError(f"the text must be a string, got {type(text).__name__}")
        enc = self.vocabulary.encode(text)
        if len(enc.ids) > self.max_positions:
            raise ModelError(f"the text has {len(enc.ids)} tokens but {self.name} knows only "
                             f"{self.max_positions} positions; shorten it (it is never cut silently)")
        ids = np.asarray(enc.ids, dtype=np.int64)
        return Encoding(text, tuple(enc.tokens), ids, np.zeros_like(ids), tuple(enc.offsets))

    def encode_ids(self, ids) -> Encoding:
        """An :class:`Encoding` of token ids as given; its text is their names joined by spaces."""
        try:
            raw = np.asarray(ids)
        except (TypeError, ValueError):
            raise ModelError("the token ids must be a sequence of whole numbers") from None
        if raw.ndim != 1 or raw.size == 0:
            raise ModelError(f"the token ids must be one non-empty sequence (T,), got shape {raw.shape}")
        if raw.dtype == bool or not np.issubdtype(raw.dtype, np.integer):
            raise ModelError(f"the token ids must be whole numbers, got {raw.dtype}")
        if raw.min() < 0 or raw.max() >= self.vocab_size:
            raise ModelError(f"token ids must lie in 0..{self.vocab_size - 1} for {self.name}; got "
                             f"{int(raw.min())}..{int(raw.max())}")
        if raw.size > self.max_positions:
            raise ModelError(f"{raw.size} tokens but {self.name} knows only {self.max_positions} positions")
        ids = raw.astype(np.int64)
        tokens = tuple(self.vocabulary.names[i] for i in ids)
        offsets, start = [], 0
        for token in tokens:
            offsets.append((start, start + len(token)))
            start += len(token) + 1
        return Encoding(" ".join(tokens), tokens, ids, np.zeros_like(ids), tuple(offsets))

    def ordinary_token_ids(self) -> np.ndarray:
        """Every token id: a lab model has no special tokens."""
        return np.arange(self.vocab_size, dtype=np.int64)

    def example_ids(self, seed: int = 0, length: int | None = None) -> np.ndarray:
        """A sequence like the model's training data, from ``seed``: for a next-token model
        ("repeat") a random stretch of ``length`` tokens (default 10, at most half the positions)
        twice; for associative recall ("pairs") distinct keys with random labels."""
        rng = np.random.default_rng(int(seed))
        if self.config.example == "pairs":
            labels = self.n_out
            keys = self.vocab_size // labels
            count = min(keys, self.max_positions, 12 if length is None else int(length))
            chosen = rng.permutation(keys)[:count]
            return chosen * labels + rng.integers(0, labels, size=count)
        half = self.max_positions // 2
        n = min(half, 10 if length is None else int(length))
        if n < 1:
            raise ModelError(f"{self.name} has too few positions for a stretch repeated twice")
        stretch = rng.integers(0, self.vocab_size, size=n)
        return np.concatenate([stretch, stretch]).astype(np.int64)

    def example_text(self, seed: int = 0, length: int | None = None) -> str:
        """:meth:`example_ids` as a text the sentence box takes: a repeated stretch written as two
        words of letters ("KDQBX KDQBX") when the names are letters, else the names spaced."""
        ids = self.example_ids(seed, length)
        names = [self.vocabulary.names[i] for i in ids]
        if self.config.example == "repeat" and self.vocabulary.single_characters and len(ids) % 2 == 0:
            half = len(ids) // 2
            return "".join(names[:half]) + " " + "".join(names[half:])
        return " ".join(names)

    # -- the forward pass ----------------------------------------------------------------

    def _layer(self, layer: int, x: np.ndarray, scale: np.ndarray, edits: Edits):
        """One attention-only layer: the residual stream plus the heads' output through W_O."""
        lw = self._weights.layers[layer]
        w = self._layer_weights(layer, edits)
        att = multi_head_attention_trusted(x, w["q"], w["k"], w["v"], lw.w_o, head_mask=scale,
                                           scale=self.config.scale_attention, causal=self.causal)
        return x + att.output, att

    def run_ids(self, ids, head_mask=None, edits: Edits | None = None) -> ModelRun:
        """Run the model on token ids as given (0 .. vocab_size - 1, nothing added): a
        :class:`ModelRun` as :meth:`run` gives. ``head_mask (layers, heads)``: 1 keeps a head, 0
        silences it."""
        edits = Edits() if edits is None else edits
        enc = self.encode_ids(ids)
        scale = self._head_scale(head_mask, edits)
        stream, results = self._forward(enc, scale, edits)
        return ModelRun(self, enc, head_mask, edits, scale, stream, results)

    def output_logits(self, run: ModelRun) -> np.ndarray:
        """``(T, n_out)``: the output scores of ``run`` (its last residual stream times W_U); for a
        next-token model, row t scores the token at t + 1."""
        return run.hidden_states[-1] @ self.unembedding

    def _rows(self, ids) -> tuple[list, bool]:
        try:
            arr = np.asarray(ids)
        except (TypeError, ValueError):
            raise ModelError("the token ids must be a sequence of whole numbers, (T,) or (B, T)") from None
        if arr.ndim == 2:
            return list(arr), True
        return [arr], False

    def logits(self, ids, head_mask=None, edits: Edits | None = None) -> np.ndarray:
        """The output scores on token ids: ``(T, n_out)`` for one sequence ``(T,)``, or ``(B, T,
        n_out)`` for rows ``(B, T)``, as the lab's own ``model.logits(tokens)`` gives them."""
        rows, batched = self._rows(ids)
        out = [self.output_logits(self.run_ids(row, head_mask=head_mask, edits=edits)) for row in rows]
        return np.stack(out) if batched else out[0]

    def attention(self, ids, head_mask=None, edits: Edits | None = None) -> np.ndarray:
        """The attention weights on token ids: ``(layers, heads, T, T)`` for one sequence ``(T,)``
        (``run_ids(ids).attentions``), or ``(layers, B, heads, T, T)`` for rows ``(B, T)``, as the
        lab's own ``model.attention(tokens)`` gives them."""
        rows, batched = self._rows(ids)
        out = [self.run_ids(row, head_mask=head_mask, edits=edits).attentions for row in rows]
        return np.stack(out, axis=1) if batched else out[0]


# -- reading a folder -----------------------------------------------------------------------


def _small_file(path: Path, what: str) -> bytes:
    """The bytes of a small regular file (never a pipe or a device: opening one never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ModelError(f"{path.parent} has no {path.name}: a lab model folder holds "
                         f"{', '.join(LAB_FILES)}") from None
    except OSError as exc:
        raise ModelError(f"{what} cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ModelError(f"{what} is not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise ModelError(f"{what} is larger than {MAX_FILE_BYTES:,} bytes; it is not a lab model's")
        data = os.read(fd, MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ModelError(f"{what} is larger than {MAX_FILE_BYTES:,} bytes; it is not a lab model's")
        return data
    except OSError as exc:
        raise ModelError(f"{what} cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _read_json(path: Path, what: str):
    data = _small_file(path, what)
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelError(f"{what} is not valid JSON ({str(exc)[:120]}); save the model again") from None


def is_lab_folder(folder: Path) -> bool:
    """True when ``folder``'s config.json says it is a lab model (its kind or its format)."""
    try:
        raw = _read_json(Path(folder) / CONFIG_FILE, CONFIG_FILE)
    except ModelError:
        return False
    return isinstance(raw, dict) and (raw.get("model_type") == LAB_KIND or raw.get("format") == LAB_FORMAT)


def _positive(raw: dict, key: str, where: str) -> int:
    value = raw.get(key)
    if value is None:
        raise ModelError(f"{where} has no {key!r}")
    if type(value) is not int or value < 1:
        raise ModelError(f"{where}: {key} must be a positive whole number, got {str(value)[:40]!r}")
    if value > LIMITS[key]:
        raise ModelError(f"{where}: {key} = {value:,} is absurd for a lab model (the limit is {LIMITS[key]:,})")
    return value


def _flag(raw: dict, key: str, where: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise ModelError(f"{where}: {key} must be true or false, got {str(value)[:40]!r}")
    return value


def check_recipe(recipe, where: str = "the recipe") -> dict | None:
    """A run's recipe (``RECIPE_FIELDS``) checked, or None; :class:`ModelError` naming the field."""
    if recipe is None:
        return None
    if not isinstance(recipe, dict):
        raise ModelError(f"{where} must be an object of {', '.join(RECIPE_FIELDS)}")
    unknown = set(recipe) - set(RECIPE_FIELDS)
    if unknown:
        raise ModelError(f"{where} has an unknown field {sorted(map(str, unknown))[0][:40]!r}")
    out = {}
    for key, kind in RECIPE_FIELDS.items():
        if key not in recipe:
            if key in ("experiment", "arm", "seed", "steps"):
                raise ModelError(f"{where} has no {key!r}")
            continue
        value = recipe[key]
        if kind is str:
            ok = isinstance(value, str) and 0 < len(value) <= 40 and value.isprintable()
        elif kind is int:
            ok = type(value) is int and 0 <= value < 2**63
        else:
            ok = type(value) in (int, float) and math.isfinite(value) and 0 < value <= 1
        if not ok:
            raise ModelError(f"{where}: {key} has a bad value {str(value)[:40]!r}")
        out[key] = float(value) if kind is float else value
    return out


def read_lab_config(folder: Path) -> tuple[LabConfig, dict]:
    """``folder/config.json`` of a lab model, checked: ``(LabConfig, raw dict)``."""
    where = f"config.json in {folder}"
    raw = _read_json(Path(folder) / CONFIG_FILE, where)
    if not isinstance(raw, dict):
        raise ModelError(f"{where} is not a JSON object; save the model again")
    kind = raw.get("model_type")
    if kind != LAB_KIND:
        raise ModelError(f"{where}: the lab model kind {str(kind)[:40]!r} is unknown here; this studio "
                         f"opens lab models of kind {LAB_KIND!r}")
    if raw.get("format") != LAB_FORMAT:
        raise ModelError(f"{where}: format must be {LAB_FORMAT!r}")
    version = raw.get("format_version")
    if type(version) is not int or version < 1:
        raise ModelError(f"{where}: format_version must be a whole number from 1, got {str(version)[:40]!r}")
    if version > FORMAT_VERSION:
        raise ModelError(f"{where} was written by a newer Attention Studio (format version {version}; "
                         f"this one reads up to {FORMAT_VERSION})")
    sizes = {key: _positive(raw, key, where) for key in LIMITS}
    layers, heads, d_model, d_head = sizes["layers"], sizes["heads"], sizes["d_model"], sizes["d_head"]
    vocab, n_ctx, n_out = sizes["vocab_size"], sizes["n_ctx"], sizes["n_out"]
    count = (vocab + n_ctx + n_out) * d_model + layers * 4 * d_model * heads * d_head
    if count > MAX_PARAMETERS:
        raise ModelError(f"{where}: these sizes make {count:,} weights, absurd for a lab model "
                         f"(the limit is {MAX_PARAMETERS:,})")
    example = raw.get("example", "repeat")
    if example not in EXAMPLES:
        raise ModelError(f"{where}: example must be one of {', '.join(EXAMPLES)}, got {str(example)[:40]!r}")
    if example == "pairs" and vocab % n_out:
        raise ModelError(f"{where}: a key=label model's vocabulary ({vocab}) must be keys × {n_out} labels")
    name = raw.get("name", "")
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS or not name.isprintable():
        raise ModelError(f"{where}: name must be a line of text of at most {MAX_NAME_CHARS} characters")
    cfg = LabConfig(kind=LAB_KIND, layers=layers, heads=heads, d_model=d_model, d_ff=0, vocab_size=vocab,
                    max_positions=n_ctx, type_vocab_size=1, eps=1e-12, activation="none",
                    scale_attention=_flag(raw, "scale", where, True), scale_by_layer=False,
                    head_dim=d_head, causal=_flag(raw, "causal", where, True), n_out=n_out, example=example)
    return cfg, {"name": name.strip(), "training": check_recipe(raw.get("training"), f"{where}: training")}


def expected_tensors(cfg: LabConfig) -> dict[str, tuple]:
    """Every tensor of a lab model's weights file, by name, with its shape."""
    d, hd = cfg.d_model, cfg.heads * cfg.d_head
    shapes = {"W_E": (cfg.vocab_size, d), "W_pos": (cfg.max_positions, d)}
    for layer in range(cfg.layers):
        for name in ("W_Q", "W_K", "W_V"):
            shapes[f"layer{layer}.{name}"] = (d, hd)
        shapes[f"layer{layer}.W_O"] = (hd, d)
    shapes["W_U"] = (d, cfg.n_out)
    return shapes


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _per_head(w: np.ndarray, heads: int) -> np.ndarray:
    d_model, width = w.shape
    return _frozen(w.reshape(d_model, heads, width // heads).transpose(1, 0, 2))


def load_lab_folder(folder, name: str | None = None) -> LabModel:
    """Open a lab model folder (config.json, model.safetensors, vocab.json), everything checked
    before any weight is used; :class:`ModelError` naming what is wrong."""
    folder = Path(folder)
    cfg, meta = read_lab_config(folder)
    where = f"{VOCAB_FILE} in {folder}"
    vocab_raw = _read_json(folder / VOCAB_FILE, where)
    if not isinstance(vocab_raw, dict) or "tokens" not in vocab_raw:
        raise ModelError(f"{where} must be an object {{\"tokens\": [names]}}")
    vocabulary = LabVocabulary(check_names(vocab_raw["tokens"], cfg.vocab_size, where))
    path = folder / WEIGHTS_FILE
    if not path.is_file():
        raise ModelError(f"{folder} has no {WEIGHTS_FILE}: a lab model folder holds {', '.join(LAB_FILES)}")
    wf = WeightsFile(path)
    shapes = expected_tensors(cfg)
    missing = [n for n in shapes if n not in wf.tensors]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise ModelError(f"{WEIGHTS_FILE} in {folder} lacks {', '.join(missing[:3])}{more}, which config.json "
                         f"({cfg.layers} layers) needs: the files are from different models")
    extra = sorted(set(wf.tensors) - set(shapes))
    if extra:
        raise ModelError(f"{WEIGHTS_FILE} in {folder} holds {extra[0][:60]!r}, which config.json does not "
                         "describe: the files are from different models")
    for tensor, shape in shapes.items():
        info = wf.tensors[tensor]
        if info.shape != shape:
            raise ModelError(f"the weight {tensor} in {WEIGHTS_FILE} has shape {info.shape}, but config.json "
                             f"needs {shape}: the weights and the config are from different models")
        if info.dtype not in FLOAT_DTYPES:
            raise ModelError(f"the weight {tensor} in {WEIGHTS_FILE} is {info.dtype}; expected floating point")
    get = wf.get  # a ModelError for NaN or infinite values
    zeros_head = _frozen(np.zeros((cfg.heads, cfg.d_head)))
    zeros_model = _frozen(np.zeros(cfg.d_model))
    layers = []
    for layer in range(cfg.layers):
        pre = f"layer{layer}."
        layers.append(LayerWeights(
            w_q=_per_head(get(pre + "W_Q"), cfg.heads), w_k=_per_head(get(pre + "W_K"), cfg.heads),
            w_v=_per_head(get(pre + "W_V"), cfg.heads), b_q=zeros_head, b_k=zeros_head, b_v=zeros_head,
            w_o=_frozen(get(pre + "W_O")), b_o=zeros_model, ln_1=None, ln_2=None,
            w_1=None, b_1=None, w_2=None, b_2=None))
    weights = ModelWeights(word=_frozen(get("W_E")), position=_frozen(get("W_pos")), token_type=None,
                           ln_embed=None, ln_final=None, layers=tuple(layers))
    model_name = name or meta["name"] or folder.resolve().name
    return LabModel(model_name, folder, cfg, weights, vocabulary, _frozen(get("W_U")), meta["training"])


# -- writing a folder -----------------------------------------------------------------------


def _safetensors_bytes(tensors: dict[str, np.ndarray]) -> bytes:
    from safetensors.numpy import save

    return save({name: np.ascontiguousarray(a, dtype=np.float64) for name, a in tensors.items()})


def check_target(folder) -> Path:
    """``folder`` as a place a lab model may be written: new, empty, or a lab model's folder (which
    is replaced); :class:`ModelError` for a file or a folder holding other files."""
    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise ModelError(f"{folder} is a file; choose a folder for the model")
    if folder.is_dir():
        try:
            present = [p.name for p in folder.iterdir()]
        except OSError as exc:
            raise ModelError(f"cannot read the folder {folder}: {exc.strerror or exc}") from None
        if present and not is_lab_folder(folder):
            raise ModelError(f"{folder} already holds other files ({', '.join(sorted(present)[:3])}); choose a new "
                             "or empty folder (a lab model folder is replaced)")
    return folder


def write_lab_folder(folder, config: dict, tensors: dict[str, np.ndarray], names) -> Path:
    """Write a lab model folder atomically: the three files go into a temporary folder beside
    ``folder``, which is then renamed. ``folder`` may be new, empty, or a lab model folder (which
    is replaced); anything else is refused rather than overwritten. ``config`` holds the sizes
    and switches (see the module docstring; kind and format are added), ``tensors`` the arrays by
    name, ``names`` the vocabulary. The folder is read back and checked before it replaces
    anything. Returns the folder."""
    folder = check_target(folder)
    parent = folder.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"cannot make the folder {parent}: {exc.strerror or exc}") from None
    full = {"model_type": LAB_KIND, "format": LAB_FORMAT, "format_version": FORMAT_VERSION, **config}
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=parent))
    except OSError as exc:
        raise ModelError(f"cannot write in {parent}: {exc.strerror or exc}") from None
    old = None
    try:
        (tmp / CONFIG_FILE).write_text(json.dumps(full, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        (tmp / VOCAB_FILE).write_text(json.dumps({"tokens": list(names)}, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
        with open(tmp / WEIGHTS_FILE, "wb") as fh:
            fh.write(_safetensors_bytes(tensors))
            fh.flush()
            os.fsync(fh.fileno())
        load_lab_folder(tmp)  # what is written must open: refuse before anything is replaced
        os.chmod(tmp, 0o755)  # mkdtemp made it private; a model folder is readable like any other
        if folder.is_dir():
            if any(folder.iterdir()):
                old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".old", dir=parent))
                os.rename(folder, old / "model")
            else:
                folder.rmdir()
        os.rename(tmp, folder)
    except OSError as exc:
        if old is not None and not folder.exists():
            os.rename(old / "model", folder)  # the previous model back where it was
        raise ModelError(f"cannot write the model to {folder}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return folder

