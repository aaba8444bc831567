"""A head detector for every model: previous-token, duplicate-token and induction scores.

TransformerLens's ``detect_head`` with ``error_measure="mul"`` and nothing excluded: for a
0/1 pattern P (T, T) built from the run's token ids, a head's score is the share of its
attention that falls where P is 1,

    score[l, h] = sum(A[l, h] * P) / sum(A[l, h]),      A = run.attentions (L, H, T, T).

- ``previous``: P[i, i-1] = 1 for i >= 1 (the token just before);
- ``duplicate``: P[i, j] = 1 for j < i with ids[j] == ids[i] (an earlier copy of this token);
- ``induction``: P[i, j] = 1 for 1 <= j <= i with ids[j-1] == ids[i] (the token *after* an
  earlier copy of this token: what an induction head copies, Olsson et al. 2022).

On a natural sentence few tokens repeat, so the duplicate and induction patterns are nearly
empty; the detector is run on a random stretch of tokens repeated twice
(:func:`repeated_tokens`), where the second copy has an earlier copy of every token.

Any run object with ``.attentions (L, H, T, T)`` and ``.ids (T,)`` can be scored: a trained
model's :class:`~attn_studio.pretrained.model.ModelRun` and a lab model's run alike. Layers and
heads count from 0; scores are float64. No Qt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .errors import ModelError

__all__ = ["DETECTORS", "DETECTOR_NAMES", "DETECTED_THRESHOLD", "Detection", "detect", "detection_ceiling",
           "detection_pattern", "detect_heads", "detect_all", "detected_roles", "ordinary_token_ids",
           "repeated_tokens", "top_heads"]

DETECTORS = ("previous", "duplicate", "induction")
# How each detector names a head in the window and on the command line.
DETECTOR_NAMES = {"previous": "previous token", "duplicate": "duplicate token", "induction": "induction"}
# A head is detected as a kind when at least this share of what it could put on the kind's cells
# goes there (its score over its ceiling, `detection_ceiling`). A uniform causal head reaches about
# 0.1 at 32 tokens; the lab's previous-token heads 0.35, its induction heads 0.65 to 0.75, MiniLM's
# previous-token head (1.3 on screen) 1.0.
DETECTED_THRESHOLD = 0.3

_PLACEHOLDER = re.compile(r"\[[^\]]*\]|<[^>]*>")  # [unused12], [PAD], <|endoftext|>, <unk>


def detection_pattern(ids, name: str) -> np.ndarray:
    """``(T, T)`` float64 0/1: where a head of kind ``name`` (one of :data:`DETECTORS`) looks.

    Rows are queries i, columns keys j; see the module docstring for the three patterns.
    """
    if name not in DETECTORS:
        raise ModelError(f"unknown detector {name!r}: choose one of {', '.join(DETECTORS)}")
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ModelError(f"the token ids must be one sequence (T,), got shape {ids.shape}")
    t = ids.shape[0]
    i = np.arange(t)[:, None]
    j = np.arange(t)[None, :]
    if name == "previous":
        pattern = j == i - 1
    elif name == "duplicate":
        pattern = (ids[None, :] == ids[:, None]) & (j < i)
    else:
        before = np.concatenate([[ids[0]], ids[:-1]]) if t else ids  # before[j] = ids[j - 1] (j >= 1)
        pattern = (before[None, :] == ids[:, None]) & (j >= 1) & (j <= i)
    return pattern.astype(np.float64)


def _run_ids(run) -> np.ndarray:
    ids = getattr(run, "ids", None)
    if ids is None:
        ids = getattr(run, "tokens", None)
    if ids is None:
        raise ModelError("the run keeps no token ids (.ids): the detector needs them to know which tokens repeat")
    return np.asarray(ids)


def detect_heads(run, name: str) -> np.ndarray:
    """``(L, H)``: score[l, h] = sum(A[l, h] * P) / sum(A[l, h]) for the pattern P of ``name``.

    ``run`` is anything with ``attentions (L, H, T, T)`` and ``ids (T,)`` (a trained model's run,
    a lab model's run). ``name`` is one of :data:`DETECTORS`. A head whose attention sums to 0
    scores 0. TransformerLens's ``detect_head(..., error_measure="mul")``, nothing excluded.
    """
    a = np.asarray(run.attentions, dtype=np.float64)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise ModelError(f"attentions must be (layers, heads, T, T), got shape {a.shape}")
    ids = _run_ids(run)
    if ids.shape != (a.shape[-1],):
        raise ModelError(f"the run has {a.shape[-1]} positions in its attention but {ids.size} token ids")
    pattern = detection_pattern(ids, name)
    layers, heads, t, _ = a.shape
    flat = a.reshape(layers * heads, t * t)
    total = flat.sum(axis=-1)
    on = flat @ pattern.reshape(-1)
    score = np.divide(on, total, out=np.zeros_like(on), where=total > 0)
    return score.reshape(layers, heads)


def detection_ceiling(run, name: str) -> np.ndarray:
    """``(L, H)``: the score a perfect head of kind ``name`` would get with this run's attention.

    Rows with no cell on the pattern (the first copy, for induction) can put nothing there: the
    ceiling is the share of a head's attention in the rows that have a cell to look at, about
    (T - 1) / T for previous and one half for duplicate and induction on x x.
    """
    a = np.asarray(run.attentions, dtype=np.float64)
    pattern = detection_pattern(_run_ids(run), name)
    rows = a.sum(axis=-1)                                   # (L, H, T)
    total = rows.sum(axis=-1)
    reachable = rows @ pattern.any(axis=1).astype(np.float64)
    return np.divide(reachable, total, out=np.zeros_like(reachable), where=total > 0)


def detect_all(run) -> dict[str, np.ndarray]:
    """Every detector's ``(L, H)`` scores on ``run``, by name, in :data:`DETECTORS` order."""
    return {name: detect_heads(run, name) for name in DETECTORS}


def detected_roles(scores: dict[str, np.ndarray], ceilings: dict[str, np.ndarray] | None = None,
                   threshold: float = DETECTED_THRESHOLD) -> np.ndarray:
    """``(L, H)`` strings: the kind (:data:`DETECTOR_NAMES`) a head is detected as, or "".

    A head is detected as a kind when its score is at least ``threshold`` of its ceiling
    (:func:`detection_ceiling`: what a perfect head of the kind would score on the sequence; 1
    when ``ceilings`` is None) and at least half the best score of that kind in the model (a
    weak pattern beside a strong head of the same kind names only the strong one). Of several
    kinds, the one with the largest share of its ceiling; exact ties in :data:`DETECTORS` order.
    """
    shares, named = [], []
    for name in DETECTORS:
        score = np.asarray(scores[name], dtype=np.float64)
        ceiling = np.ones_like(score) if ceilings is None else np.asarray(ceilings[name], dtype=np.float64)
        share = np.divide(score, ceiling, out=np.zeros_like(score), where=ceiling > 0)
        shares.append(share)
        named.append((share >= threshold) & (score >= 0.5 * score.max()) & (score > 0))
    shares = np.where(np.stack(named), np.stack(shares), -1.0)
    best = shares.argmax(axis=0)
    names = np.array([DETECTOR_NAMES[name] for name in DETECTORS])
    return np.where(shares.max(axis=0) >= 0, names[best], "")


@dataclass(frozen=True)
class Detection:
    """The detector's answer on one run: ``scores`` and ``ceilings`` (name -> (L, H)), the
    ``roles`` it names (:func:`detected_roles`), the ``tokens`` and ``ids`` it ran on, and
    ``source``, a few words saying which sequence that was."""

    scores: dict
    ceilings: dict
    roles: np.ndarray
    tokens: tuple
    ids: np.ndarray
    source: str = ""


def detect(run, source: str = "") -> Detection:
    """Every detector on ``run`` (any run with ``attentions`` and ``ids``), with its ceilings and roles."""
    scores = detect_all(run)
    ceilings = {name: detection_ceiling(run, name) for name in DETECTORS}
    tokens = tuple(str(t) for t in getattr(run, "tokens", _run_ids(run)))
    return Detection(scores, ceilings, detected_roles(scores, ceilings), tokens, np.asarray(_run_ids(run)), source)


def top_heads(scores: np.ndarray, count: int = 5) -> list[tuple[int, int, float]]:
    """The ``count`` highest-scoring heads as ``(layer, head, score)`` (from 0), highest first,
    ties in (layer, head) order."""
    scores = np.asarray(scores, dtype=np.float64)
    heads = scores.shape[1]
    order = np.argsort(-scores.ravel(), kind="stable")[:max(0, int(count))]
    return [(int(i // heads), int(i % heads), float(scores.flat[i])) for i in order]


# -- a sequence to detect on -------------------------------------------------------------


def ordinary_token_ids(model) -> np.ndarray:
    """The ids a random stretch is drawn from: the model's ordinary tokens.

    A model may say which itself (``model.ordinary_token_ids()``, as a lab model with its
    32 letters does). Otherwise, from its tokenizer: every token but the special and added
    ones, placeholders ([unused12], <|endoftext|>), WordPiece's continuation pieces (##ing)
    and tokens outside printable ASCII, so that the stretch reads as words on any screen.
    A model without a tokenizer: ids 0 .. vocab_size - 1.
    """
    own = getattr(model, "ordinary_token_ids", None)
    if callable(own):
        return np.asarray(own(), dtype=np.int64)
    tokenizer = getattr(model, "_tokenizer", None)
    vocab_size = int(getattr(model, "vocab_size", 0))
    if tokenizer is None or not hasattr(tokenizer, "get_vocab"):
        return np.arange(vocab_size, dtype=np.int64)
    special = set(tokenizer.get_added_tokens_decoder()) if hasattr(tokenizer, "get_added_tokens_decoder") else set()
    wordpiece = getattr(model, "kind", "") == "bert"
    ids = [i for token, i in tokenizer.get_vocab(with_added_tokens=True).items()
           if i < vocab_size and i not in special and not _PLACEHOLDER.fullmatch(token)
           and not (wordpiece and token.startswith("##")) and _readable(token)]
    if not ids:  # a vocabulary of other scripts: every token but the special ones
        ids = [i for token, i in tokenizer.get_vocab(with_added_tokens=True).items()
               if i < vocab_size and i not in special and not _PLACEHOLDER.fullmatch(token) and token.strip()]
    return np.asarray(sorted(ids), dtype=np.int64)


def _readable(token: str) -> bool:
    """A token a person can read and type on any screen: printable ASCII once its word-start mark
    (GPT-2's 'Ġ', SentencePiece's '▁') is taken off; tokens of other scripts would be boxes where
    the screen's fonts lack them."""
    text = token[1:] if token[:1] in ("\u0120", "\u2581") else token
    return bool(text) and text.isascii() and text.isprintable() and not text.isspace()


def _special_id(model, token: str) -> int:
    tokenizer = getattr(model, "_tokenizer", None)
    found = tokenizer.token_to_id(token) if tokenizer is not None else None
    if found is None:
        raise ModelError(f"{getattr(model, 'name', 'the model')} has no {token} token to frame the sequence with")
    return int(found)


DEFAULT_STRETCH = 20  # the stretch's usual length (TransformerLens's detectors use sequences of this order)


def repeated_tokens(model, length: int = DEFAULT_STRETCH, seed: int = 0) -> np.ndarray:
    """``int (T,)``: ``length`` random ordinary tokens (:func:`ordinary_token_ids`), then the same again.

    BERT-family models get [CLS] x x [SEP] (T = 2·length + 2), as their tokenizer frames every
    text; others x x (T = 2·length). The stretch is drawn from ``seed`` without repeats when
    the vocabulary allows (a token's only earlier occurrence is then its copy in the first
    stretch), with repeats otherwise. A model whose positions cannot hold a stretch of up to the
    usual 20 twice (a lab model: 32 positions) gets the longest that fits (16). Raises ModelError
    for a length under 1, or a longer one the model's positions cannot hold.
    """
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise ModelError(f"the length of the repeated stretch must be a whole number >= 1, got {length!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ModelError(f"the seed must be a whole number >= 0, got {seed!r}")
    length = int(length)
    framed = getattr(model, "kind", "") == "bert"
    total = 2 * length + (2 if framed else 0)
    positions = int(getattr(model, "max_positions", total))
    most = (positions - (2 if framed else 0)) // 2
    if total > positions and length <= DEFAULT_STRETCH and most >= 1:
        # A model with fewer positions than the usual stretch needs (a lab model's 32) gets the longest
        # stretch it holds; a length asked beyond the usual is refused below, naming the most.
        length, total = most, 2 * most + (2 if framed else 0)
    if total > positions:
        raise ModelError(f"a stretch of {length} tokens twice is {total} tokens but {getattr(model, 'name', 'the model')} "
                         f"knows only {positions} positions: use a length of at most {most}")
    pool = ordinary_token_ids(model)
    if pool.size == 0:
        raise ModelError(f"{getattr(model, 'name', 'the model')} has no ordinary tokens to draw from")
    rng = np.random.default_rng(int(seed))
    stretch = rng.choice(pool, size=length, replace=length > pool.size)
    ids = np.concatenate([stretch, stretch]).astype(np.int64)
    if framed:
        ids = np.concatenate([[_special_id(model, "[CLS]")], ids, [_special_id(model, "[SEP]")]]).astype(np.int64)
    return ids
