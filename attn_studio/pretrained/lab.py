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
drift). Its folders are read and written, every field checked, in ``lab_files.py``. No Qt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engine.attention import multi_head_attention_trusted
from .config import ModelConfig
from .errors import ModelError
from .model import Edits, Encoding, ModelRun, TrainedModel
from .weights import ModelWeights

__all__ = ["LAB_KIND", "LAB_FORMAT", "LabConfig", "LabModel", "LabVocabulary", "EXAMPLES", "RECIPE_FIELDS"]

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
