"""A trained model's forward pass on the engine, with every intermediate kept.

``TrainedModel.run(text)`` returns a :class:`ModelRun`: the tokens, every layer's
q, k, v, scores, logits and weights (the engine's ``MultiHeadResult``), and the
hidden states. Edits to a trained model (a head silenced or scaled, a head's
W_Q / W_K / W_V replaced) are an immutable :class:`Edits` value; ``run.rerun(edits)``
recomputes only from the lowest layer the change touches, reusing the hidden
states below it.

Layers and heads are counted from 0 here, like the arrays they index:
``run.hidden_states[l]`` is the input of layer ``l`` and ``run.hidden_states[l + 1]``
its output.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..engine import (
    MultiHeadResult,
    attention_rollout,
    layer_drift,
    layer_norm,
    layerwise_cosine,
)
from ..engine.attention import multi_head_attention_trusted
from ..engine.layers import feed_forward_trusted, layer_norm_trusted
from .config import ModelConfig
# Edits live in their own module (this one's job is the forward pass); re-exported, as they were defined here.
from .edits import MAX_HEAD_SCALE, PROJECTIONS, Edits, _index  # noqa: F401
from .errors import ModelError
from .weights import ModelWeights

@dataclass(frozen=True)
class Encoding:
    """The tokenizer's view of a text: ``tokens`` (special ones included), ``ids``,
    ``type_ids`` and character ``offsets`` (start, end) into the text."""

    text: str
    tokens: tuple
    ids: np.ndarray
    type_ids: np.ndarray
    offsets: tuple


@dataclass(frozen=True)
class WordComparison:
    """One word in two sentences, followed through the layers (seed 001's "bank").

    ``cosine (layers + 1,)``: similarity of the word's vectors after the
    embeddings and after each layer; ``vectors_a``, ``vectors_b`` ``(layers + 1, d_model)``
    the vectors themselves (the mean of the word's pieces); ``tokens_a``,
    ``tokens_b`` the token positions that make up the word in each sentence.
    """

    word: str
    cosine: np.ndarray
    vectors_a: np.ndarray
    vectors_b: np.ndarray
    tokens_a: tuple
    tokens_b: tuple
    run_a: ModelRun
    run_b: ModelRun


class TrainedModel:
    """A loaded checkpoint: its config, its weights (read-only, float64) and its tokenizer.

    Attributes: ``name``, ``kind`` (``"bert"`` or ``"gpt2"``), ``layers``,
    ``heads``, ``d_model``, ``d_head``, ``d_ff``, ``max_positions``,
    ``vocab_size``, ``path`` (the folder it came from).
    """

    def __init__(self, name: str, path: Path, config: ModelConfig, weights: ModelWeights, tokenizer):
        self.name = name
        self.path = Path(path)
        self.config = config
        self.kind = config.kind
        self.layers = config.layers
        self.heads = config.heads
        self.d_model = config.d_model
        self.d_head = config.d_head
        self.d_ff = config.d_ff
        self.max_positions = config.max_positions
        self.vocab_size = config.vocab_size
        self._weights = weights
        self._tokenizer = tokenizer
        self._sha256 = None

    def __repr__(self) -> str:
        return (f"TrainedModel({self.name!r}, kind={self.kind!r}, layers={self.layers}, "
                f"heads={self.heads}, d_model={self.d_model})")

    @property
    def weights(self) -> ModelWeights:
        """The trained arrays as read from the file (read-only; edits never change them)."""
        return self._weights

    # -- the trained numbers, for tables -------------------------------------------------

    def head_weights(self, layer: int, head: int, edits: Edits | None = None) -> dict[str, np.ndarray]:
        """W_Q, W_K, W_V of one head as ``{"q": (d_model, d_head), "k": ..., "v": ...}``.

        Trained values, or the edited ones where ``edits`` replaces them. The
        arrays are read-only: edit by building a new matrix and ``Edits.with_weights``.
        """
        self._check_head(layer, head)
        lw = self._weights.layers[layer]
        out = {"q": lw.w_q[head], "k": lw.w_k[head], "v": lw.w_v[head]}
        if edits is not None:
            for which in PROJECTIONS:
                out[which] = edits.weights.get((layer, head, which), out[which])
        return out

    def with_cell(self, edits: Edits | None, layer: int, head: int, which: str, row: int, col: int,
                  value: float) -> Edits:
        """``edits`` with one cell of a head's W_``which`` set to ``value`` (a table edit).

        The rest of the matrix is the current one (edited or trained). Raises
        :class:`ModelError` for a bad index or a value that is not a finite number.
        """
        edits = Edits() if edits is None else edits
        if which not in PROJECTIONS:
            raise ModelError(f"which must be one of q, k, v; got {which!r}")
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ModelError(f"a weight must be a number, got {value!r}") from None
        if not np.isfinite(value):
            raise ModelError(f"a weight must be a finite number, got {value!r}")
        if not (0 <= row < self.d_model and 0 <= col < self.d_head):
            raise ModelError(f"cell ({row}, {col}) is outside W_{which.upper()} ({self.d_model} x {self.d_head})")
        matrix = self.head_weights(layer, head, edits)[which].copy()
        matrix[row, col] = value
        return edits.with_weights(layer, head, which, matrix)

    def weights_sha256(self) -> str:
        """SHA-256 of the weights file (computed once): sessions name the exact weights they were made with."""
        if self._sha256 is None:
            digest = hashlib.sha256()
            with open(self.path / "model.safetensors", "rb") as fh:
                for block in iter(lambda: fh.read(1 << 22), b""):
                    digest.update(block)
            self._sha256 = digest.hexdigest()
        return self._sha256

    def _check_head(self, layer, head) -> None:
        if not (isinstance(layer, (int, np.integer)) and 0 <= layer < self.layers):
            raise ModelError(f"layer must be 0 to {self.layers - 1}, got {layer!r}")
        if not (isinstance(head, (int, np.integer)) and 0 <= head < self.heads):
            raise ModelError(f"head must be 0 to {self.heads - 1}, got {head!r}")

    # -- tokens ----------------------------------------------------------------------

    def encode(self, text: str) -> Encoding:
        """Tokenize ``text`` with the model's tokenizer; refuse texts longer than the model's positions."""
        if not isinstance(text, str):
            raise ModelError(f"the text must be a string, got {type(text).__name__}")
        try:
            enc = self._tokenizer.encode(text)
        except Exception as exc:  # the tokenizer is Rust code: report, never crash
            raise ModelError(f"the tokenizer could not read this text: {exc}") from None
        if len(enc.ids) > self.max_positions:
            raise ModelError(
                f"the text has {len(enc.ids)} tokens but {self.name} knows only {self.max_positions} "
                "positions; shorten the text (it is never cut silently)"
            )
        ids = np.asarray(enc.ids, dtype=np.int64)
        if ids.size and ids.max() >= self.vocab_size:
            raise ModelError(
                f"the tokenizer produced token id {int(ids.max())} but the model has only "
                f"{self.vocab_size} embeddings: tokenizer.json belongs to another model"
            )
        type_ids = np.asarray(enc.type_ids, dtype=np.int64)
        type_rows = 1 if self._weights.token_type is None else self._weights.token_type.shape[0]
        if type_ids.size and type_ids.max() >= type_rows:
            type_ids = np.zeros_like(type_ids)
        return Encoding(text, tuple(enc.tokens), ids, type_ids, tuple(tuple(o) for o in enc.offsets))

    # -- the forward pass ------------------------------------------------------------------

    def _head_scale(self, head_mask, edits: Edits) -> np.ndarray:
        scale = np.ones((self.layers, self.heads))
        if head_mask is not None:
            try:
                mask = np.asarray(head_mask, dtype=np.float64)
            except (TypeError, ValueError):
                raise ModelError("head_mask must be an array of numbers") from None
            if mask.shape != (self.layers, self.heads):
                raise ModelError(
                    f"head_mask must be (layers, heads) = ({self.layers}, {self.heads}), got shape {mask.shape}"
                )
            if not np.isfinite(mask).all():
                raise ModelError("head_mask must hold finite numbers (1 keeps a head, 0 silences it)")
            scale = scale * mask
        for (layer, head), s in edits.head_scale.items():
            self._check_head(layer, head)
            scale[layer, head] *= s
        return scale

    def _layer_weights(self, layer: int, edits: Edits):
        lw = self._weights.layers[layer]
        w = {"q": lw.w_q, "k": lw.w_k, "v": lw.w_v}
        for (l, head, which), matrix in edits.weights.items():
            if l != layer:
                continue
            self._check_head(l, head)
            if matrix.shape != (self.d_model, self.d_head):
                raise ModelError(
                    f"the edited W_{which.upper()} of layer {l}, head {head} has shape {matrix.shape}; "
                    f"it must be (d_model, d_head) = ({self.d_model}, {self.d_head})"
                )
            if w[which] is getattr(lw, f"w_{which}"):
                w[which] = w[which].copy()
            w[which][head] = matrix
        return w

    def _embed(self, enc: Encoding) -> np.ndarray:
        wts = self._weights
        t = len(enc.ids)
        x = wts.word[enc.ids] + wts.position[:t]
        if wts.token_type is not None:
            x = x + wts.token_type[enc.type_ids]
        if wts.ln_embed is not None:
            x = layer_norm(x, *wts.ln_embed, eps=self.config.eps)
        return x

    def _layer(self, layer: int, x: np.ndarray, scale: np.ndarray, edits: Edits):
        """One transformer layer: returns (output residual stream, attention result)."""
        cfg = self.config
        lw = self._weights.layers[layer]
        w = self._layer_weights(layer, edits)
        temperature = float(layer + 1) if cfg.scale_by_layer else 1.0
        # The engine's trusted layer functions: the same operations as its checked ones, without
        # scanning each layer's two million weights on every pass (a fifth of an edit's time). A
        # trained model's weights were checked once when read, edited matrices when made, and
        # the head scales in ``_head_scale``.
        common = dict(b_q=lw.b_q, b_k=lw.b_k, b_v=lw.b_v, b_o=lw.b_o, head_mask=scale,
                      scale=cfg.scale_attention, temperature=temperature)
        if cfg.kind == "bert":
            att = multi_head_attention_trusted(x, w["q"], w["k"], w["v"], lw.w_o, **common)
            h = layer_norm_trusted(att.output + x, *lw.ln_1, cfg.eps)
            ff = feed_forward_trusted(h, lw.w_1, lw.b_1, lw.w_2, lw.b_2, cfg.activation)
            return layer_norm_trusted(ff + h, *lw.ln_2, cfg.eps), att
        a_in = layer_norm_trusted(x, *lw.ln_1, cfg.eps)
        att = multi_head_attention_trusted(a_in, w["q"], w["k"], w["v"], lw.w_o, causal=True, **common)
        h = x + att.output
        ff = feed_forward_trusted(layer_norm_trusted(h, *lw.ln_2, cfg.eps), lw.w_1, lw.b_1, lw.w_2, lw.b_2, cfg.activation)
        return h + ff, att

    def _forward(self, enc: Encoding, scale: np.ndarray, edits: Edits, start: int = 0, base: ModelRun | None = None,
                 on_layer=None):
        if start == 0 or base is None:
            stream = [self._embed(enc)]
            results = []
            start = 0
        else:
            stream = list(base._stream[: start + 1])
            results = list(base.layer_results[:start])
        x = stream[-1]
        for layer in range(start, self.layers):
            x, att = self._layer(layer, x, scale[layer], edits)
            stream.append(x)
            results.append(att)
            if on_layer is not None:
                on_layer(layer, att)
        return stream, results

    def run(self, text: str, head_mask=None, edits: Edits | None = None, *, on_layer=None) -> ModelRun:
        """Run the model on ``text``.

        ``head_mask (layers, heads)``: multipliers of each head's weighted values
        before W_O (1 keeps, 0 silences); combined (multiplied) with the scales
        in ``edits``. ``edits`` also may replace heads' W_Q / W_K / W_V.
        ``on_layer(layer, result)``: called with each layer's ``MultiHeadResult`` as soon
        as it is computed, before the layers after it (the very object the run keeps in
        ``layer_results``): a window draws the layer it shows before the pass ends.
        Raises :class:`ModelError` for a text longer than the model's positions.
        """
        edits = Edits() if edits is None else edits
        enc = self.encode(text)
        scale = self._head_scale(head_mask, edits)
        stream, results = self._forward(enc, scale, edits, on_layer=on_layer)
        return ModelRun(self, enc, head_mask, edits, scale, stream, results)

    def encode_ids(self, ids) -> Encoding:
        """An :class:`Encoding` of token ids as given (no special tokens added, none removed).

        Its text is the tokens joined by spaces, with each token's offsets in it, so that
        ``run.word_tokens`` finds a token by its text. Raises :class:`ModelError` for ids that
        are not whole numbers, outside the vocabulary, empty or longer than the model's positions.
        """
        try:
            raw = np.asarray(ids)
        except (TypeError, ValueError):
            raise ModelError("the token ids must be a sequence of whole numbers") from None
        if raw.size and (raw.dtype == bool or not np.issubdtype(raw.dtype, np.integer)):
            raise ModelError(f"the token ids must be whole numbers, got {raw.dtype}")
        if raw.ndim != 1 or raw.size == 0:
            raise ModelError(f"the token ids must be one non-empty sequence (T,), got shape {raw.shape}")
        ids = raw.astype(np.int64)
        if ids.min() < 0 or ids.max() >= self.vocab_size:
            raise ModelError(f"token ids must lie in 0..{self.vocab_size - 1} for {self.name}; got "
                             f"{int(ids.min())}..{int(ids.max())}")
        if ids.size > self.max_positions:
            raise ModelError(f"{ids.size} tokens but {self.name} knows only {self.max_positions} positions")
        tokens = tuple(self._tokenizer.id_to_token(int(i)) or f"#{int(i)}" for i in ids)
        offsets, start = [], 0
        for token in tokens:
            offsets.append((start, start + len(token)))
            start += len(token) + 1
        return Encoding(" ".join(tokens), tokens, ids, np.zeros_like(ids), tuple(offsets))

    def run_ids(self, ids, head_mask=None, edits: Edits | None = None) -> ModelRun:
        """Run the model on token ids as given (a :class:`ModelRun` as :meth:`run` gives).

        Nothing is added: a BERT-family model gets [CLS] and [SEP] only if ``ids`` hold them
        (``detect.repeated_tokens`` puts them in). ``head_mask`` and ``edits`` as for :meth:`run`.
        """
        edits = Edits() if edits is None else edits
        enc = self.encode_ids(ids)
        scale = self._head_scale(head_mask, edits)
        stream, results = self._forward(enc, scale, edits)
        return ModelRun(self, enc, head_mask, edits, scale, stream, results)

    def compare_word(self, text_a: str, text_b: str, word: str, edits: Edits | None = None) -> WordComparison:
        """Follow ``word`` (its first occurrence in each text) through the layers of both texts.

        Returns a :class:`WordComparison` whose ``cosine`` is the word's
        similarity across the two sentences after each layer.
        """
        run_a = self.run(text_a, edits=edits)
        run_b = self.run(text_b, edits=edits)
        tokens_a = run_a.word_tokens(word)
        tokens_b = run_b.word_tokens(word)
        va, vb = run_a.word_vectors(tokens_a), run_b.word_vectors(tokens_b)
        return WordComparison(word, layerwise_cosine(va, vb), va, vb, tokens_a, tokens_b, run_a, run_b)


class ModelRun:
    """One forward pass: tokens, hidden states, and every layer's attention intermediates.

    - ``tokens`` (list of str), ``ids``, ``encoding`` (with character offsets);
    - ``layer_results[l]``: the engine's ``MultiHeadResult`` of layer ``l`` with
      ``q, k, v`` ``(heads, T, d_head)``, ``scores``, ``logits``, ``weights``
      ``(heads, T, T)``, ``head_outputs`` (after the head scale), ``output``;
    - stacked over layers: ``attentions`` ``(layers, heads, T, T)`` (the weights),
      ``q``, ``k``, ``v`` ``(layers, heads, T, d_head)``, ``scores``, ``logits``;
    - ``hidden_states`` ``(layers + 1, T, d_model)`` as transformers returns them
      (for GPT-2 the last after the final layer norm);
    - ``head_scale`` ``(layers, heads)``: the multipliers in effect; ``edits``.
    """

    def __init__(self, model: TrainedModel, encoding: Encoding, head_mask, edits: Edits,
                 head_scale: np.ndarray, stream: list, results: list):
        self.model = model
        self.encoding = encoding
        self.text = encoding.text
        self.tokens = list(encoding.tokens)
        self.ids = encoding.ids
        self.head_mask = None if head_mask is None else np.array(head_mask, dtype=np.float64)
        self.edits = edits
        self.head_scale = head_scale
        self._stream = tuple(stream)
        self.layer_results: tuple[MultiHeadResult, ...] = tuple(results)

    def __len__(self) -> int:
        return len(self.tokens)

    @cached_property
    def hidden_states(self) -> np.ndarray:
        states = np.stack(self._stream)
        final = self.model._weights.ln_final
        if final is not None:
            states[-1] = layer_norm(states[-1], *final, eps=self.model.config.eps)
        return states

    def _stacked(self, name: str) -> np.ndarray:
        return np.stack([getattr(r, name) for r in self.layer_results])

    @cached_property
    def attentions(self) -> np.ndarray:
        return self._stacked("weights")

    @cached_property
    def q(self) -> np.ndarray:
        return self._stacked("q")

    @cached_property
    def k(self) -> np.ndarray:
        return self._stacked("k")

    @cached_property
    def v(self) -> np.ndarray:
        return self._stacked("v")

    @cached_property
    def scores(self) -> np.ndarray:
        return self._stacked("scores")

    @cached_property
    def logits(self) -> np.ndarray:
        return self._stacked("logits")

    def mean_attention(self) -> np.ndarray:
        """``(layers, T, T)``: each layer's attention averaged over heads (the seed's ``mean(dim=1)``)."""
        return self.attentions.mean(axis=1)

    def rollout(self) -> np.ndarray:
        """``(layers, T, T)``: attention rollout through the layers (see ``engine.attention_rollout``)."""
        return attention_rollout(self.attentions)

    # -- edits ---------------------------------------------------------------------------

    def rerun_from(self, layer: int, head_mask=None, edits: Edits | None = None) -> ModelRun:
        """Recompute layers ``layer`` .. ``layers - 1`` with new edits, reusing this run below ``layer``.

        The caller promises that nothing below ``layer`` changed; :meth:`rerun`
        finds that layer itself. ``layer == layers`` reuses everything.
        """
        m = self.model
        if not (isinstance(layer, (int, np.integer)) and 0 <= layer <= m.layers):
            raise ModelError(f"layer must be 0 to {m.layers}, got {layer!r}")
        edits = Edits() if edits is None else edits
        scale = m._head_scale(head_mask, edits)
        stream, results = m._forward(self.encoding, scale, edits, start=int(layer), base=self)
        return ModelRun(m, self.encoding, head_mask, edits, scale, stream, results)

    def rerun(self, edits: Edits | None = None, head_mask=None) -> ModelRun:
        """The same text with other edits, recomputing from the lowest layer that changed."""
        edits = Edits() if edits is None else edits
        m = self.model
        new_scale = m._head_scale(head_mask, edits)
        changed = [m.layers]
        rows = np.flatnonzero(np.any(new_scale != self.head_scale, axis=1))
        if rows.size:
            changed.append(int(rows[0]))
        first = edits.first_difference(self.edits)
        if first is not None:
            changed.append(first)
        return self.rerun_from(min(changed), head_mask=head_mask, edits=edits)

    # -- measures --------------------------------------------------------------------------

    def drift(self, reference: ModelRun) -> np.ndarray:
        """``(layers + 1,)``: per layer, the mean cosine distance of the token vectors from ``reference``'s.

        ``reference`` is usually the trained run of the same text; 0 where
        nothing moved.
        """
        if reference.tokens != self.tokens:
            raise ModelError("drift compares two runs of the same text; the tokens differ")
        return layer_drift(self.hidden_states, reference.hidden_states)

    def word_tokens(self, word: str, occurrence: int = 0) -> tuple:
        """Token positions that make up ``word`` in the text (case-insensitive, whole word).

        A word split into pieces (``"tired"`` → ``"ti", "##red"``) gives all of
        them. Raises :class:`ModelError` when the text does not contain it.
        """
        word = word.strip()
        if not word:
            raise ModelError("name a word to follow")
        found = [m.span() for m in re.finditer(r"(?<!\w)" + re.escape(word) + r"(?!\w)", self.text, re.IGNORECASE)]
        if len(found) <= occurrence:
            raise ModelError(f"{word!r} does not occur in {self.text!r}")
        start, end = found[occurrence]
        tokens = tuple(i for i, (s, e) in enumerate(self.encoding.offsets) if e > s and s < end and e > start)
        if not tokens:
            raise ModelError(f"no token of {self.text!r} covers {word!r}")
        return tokens

    def word_vectors(self, tokens) -> np.ndarray:
        """``(layers + 1, d_model)``: the mean vector of the given token positions after each layer."""
        return self.hidden_states[:, list(tokens)].mean(axis=1)
