"""Sentences to tokens, words to vectors."""

from __future__ import annotations

import functools
import hashlib
import re

import numpy as np

from ._checks import as_array, check_positive
from .errors import EngineError

# A word (letters, digits, underscore, with inner apostrophes such as "didn't")
# or any single other non-space character (punctuation stands alone).
_TOKEN = re.compile(r"\w+(?:['\u2019]\w+)*|[^\w\s]", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into words and punctuation marks, keeping case.

    >>> tokenize("The animal didn't cross the street.")
    ['The', 'animal', "didn't", 'cross', 'the', 'street', '.']
    """
    if not isinstance(text, str):
        raise EngineError(f"tokenize needs a string, got {type(text).__name__}")
    return _TOKEN.findall(text)


@functools.lru_cache(maxsize=8192)
def _seeded_vector(seed: int, word: str, dim: int) -> np.ndarray:
    # A hash of (seed, word) seeds the generator, so that a word's vector does
    # not depend on which other words exist. The first n draws of a longer
    # vector equal the draws of a shorter one, so resizing keeps unedited
    # prefixes. Cached: the studio asks for the same words on every edit.
    digest = hashlib.blake2b(f"{seed}\x00{word}".encode("utf-8"), digest_size=8).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "little"))
    vec = np.round(rng.standard_normal(dim), 2)
    vec.flags.writeable = False
    return vec


class Vocabulary:
    """A deterministic embedding vector for every word, plus the lecturer's edits.

    The same word with the same seed always gets the same vector, in any
    sentence. Edits stick to the word. Changing the dimension keeps every edited
    value that still fits, and growing back restores the ones that did not.

    Unedited vectors are drawn from a standard normal distribution (unit
    variance per component, as the seeds' variance argument assumes) and rounded
    to two decimals so that the tables read like the lecture notes.
    """

    def __init__(self, dim: int, seed: int = 0, *, edits: dict | None = None):
        self.dim = check_positive("dim", dim, integer=True)
        try:
            self.seed = int(seed)
        except (TypeError, ValueError):
            raise EngineError(f"seed must be a whole number, got {seed!r}") from None
        # word -> {component index -> value}; kept across resizes on purpose.
        self._edits: dict[str, dict[int, float]] = {}
        for word, values in (edits or {}).items():
            self._edits[word] = {int(i): float(v) for i, v in dict(values).items()}

    def _base(self, word: str, dim: int) -> np.ndarray:
        return _seeded_vector(self.seed, word, dim).copy()

    def vector(self, word: str) -> np.ndarray:
        """Return the current vector of ``word`` (a new float64 array of length ``dim``)."""
        vec = self._base(word, self.dim)
        for i, value in self._edits.get(word, {}).items():
            if i < self.dim:
                vec[i] = value
        return vec

    def vectors(self, words) -> np.ndarray:
        """Return the stacked vectors of ``words`` as a ``(len(words), dim)`` array."""
        words = list(words)
        if not words:
            return np.zeros((0, self.dim))
        return np.stack([self.vector(w) for w in words])

    def set_vector(self, word: str, values) -> None:
        """Record ``values`` as the edited vector of ``word`` (length ``dim``)."""
        arr = as_array(f"the vector for {word!r}", values, 1)
        if arr.shape[0] != self.dim:
            raise EngineError(
                f"the vector for {word!r} has {arr.shape[0]} values but the vocabulary dimension is {self.dim}"
            )
        edits = self._edits.setdefault(word, {})
        for i, value in enumerate(arr):
            edits[i] = float(value)

    def set_value(self, word: str, index: int, value: float) -> None:
        """Record one edited component of ``word``'s vector."""
        if not 0 <= index < self.dim:
            raise EngineError(f"component {index} is outside the dimension {self.dim}")
        arr = as_array(f"the value for {word!r}", [value], 1)
        self._edits.setdefault(word, {})[int(index)] = float(arr[0])

    @property
    def edits(self) -> dict[str, dict[int, float]]:
        """A copy of the recorded edits: ``{word: {index: value}}``."""
        return {w: dict(v) for w, v in self._edits.items()}

    def resized(self, dim: int) -> "Vocabulary":
        """Return a vocabulary of dimension ``dim`` with the same seed and edits."""
        return Vocabulary(dim, self.seed, edits=self._edits)

    def __repr__(self) -> str:
        return f"Vocabulary(dim={self.dim}, seed={self.seed}, edited_words={len(self._edits)})"


def sinusoidal_positions(n: int, dim: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal positional encoding of "Attention Is All You Need".

    ``PE[pos, 2i] = sin(pos / base**(2i/dim))`` and ``PE[pos, 2i+1] = cos(...)``
    with the same angle. Works for odd ``dim`` (the last column is a sine).
    Returns an ``(n, dim)`` float64 array; ``n = 0`` gives an empty one.
    """
    try:
        n_int = int(n)
    except (TypeError, ValueError):
        raise EngineError(f"n must be a whole number, got {n!r}") from None
    if n_int != n or n_int < 0:
        raise EngineError(f"n (the number of positions) must be a whole number >= 0, got {n!r}")
    dim = check_positive("dim", dim, integer=True)
    base = check_positive("base", base)
    pos = np.arange(n_int, dtype=np.float64)[:, None]
    i = np.arange(dim) // 2
    angle = pos / np.power(base, 2.0 * i / dim)[None, :]
    pe = np.empty((n_int, dim))
    pe[:, 0::2] = np.sin(angle[:, 0::2])
    pe[:, 1::2] = np.cos(angle[:, 1::2])
    return pe
