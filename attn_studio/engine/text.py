"""Sentences to tokens, words to vectors."""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

import numpy as np

from ._checks import as_array, check_positive
from .errors import EngineError

# A word (letters, digits, underscore, with inner apostrophes such as "didn't")
# or any single other non-space character (punctuation stands alone). Text of
# ASCII characters only has no combining marks or invisible characters, so this
# expression alone tokenizes it (the fast path); other text goes by grapheme
# clusters (below), with the same rules.
_TOKEN = re.compile(r"\w+(?:['\u2019]\w+)*|[^\w\s]", re.UNICODE)
_APOSTROPHES = frozenset("'\u2019")

_ZWSP = "\u200b"
_ZWNJ = "\u200c"
_ZWJ = "\u200d"
# Characters that extend the grapheme cluster before them (UAX #29 Extend and
# SpacingMark, the subset that matters here): combining marks, the joiners,
# emoji skin-tone modifiers, tag characters (subdivision flags), variation
# selectors (which are marks too).
_EXTEND_RANGES = ((0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F), (0xFF9E, 0xFF9F))
_REGIONAL = (0x1F1E6, 0x1F1FF)
# Hangul jamo: leading consonants (L), vowels (V), trailing consonants (T).
_HANGUL_L = ((0x1100, 0x115F), (0xA960, 0xA97C))
_HANGUL_V = ((0x1160, 0x11A7), (0xD7B0, 0xD7C6))
_HANGUL_T = ((0x11A8, 0x11FF), (0xD7CB, 0xD7FB))


def _in(cp: int, ranges) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def _is_extend(ch: str) -> bool:
    return (unicodedata.category(ch) in ("Mn", "Me", "Mc") or ch in (_ZWJ, _ZWNJ)
            or _in(ord(ch), _EXTEND_RANGES))


def _is_control(ch: str) -> bool:
    # GB4/GB5: nothing extends a line break, a control or a lone format character.
    return ch in "\r\n" or unicodedata.category(ch) in ("Cc", "Zl", "Zp") or (
        unicodedata.category(ch) == "Cf" and not _is_extend(ch))


def _is_pictographic(ch: str) -> bool:
    # Extended_Pictographic, approximately: the emoji planes and the older
    # symbol blocks that emoji sequences start from.
    cp = ord(ch)
    return (0x1F000 <= cp <= 0x1FAFF or 0x2600 <= cp <= 0x27BF or 0x2300 <= cp <= 0x23FF
            or 0x2B00 <= cp <= 0x2BFF or cp in (0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D)
            or (unicodedata.category(ch) == "So" and not _in(cp, (_REGIONAL,))))


def _hangul_kind(ch: str) -> str:
    cp = ord(ch)
    if 0xAC00 <= cp <= 0xD7A3:
        return "LV" if (cp - 0xAC00) % 28 == 0 else "LVT"
    if _in(cp, _HANGUL_L):
        return "L"
    if _in(cp, _HANGUL_V):
        return "V"
    if _in(cp, _HANGUL_T):
        return "T"
    return ""


_HANGUL_JOINS = {"L": {"L", "V", "LV", "LVT"}, "LV": {"V", "T"}, "V": {"V", "T"}, "LVT": {"T"}, "T": {"T"}}


def grapheme_clusters(text: str) -> list[str]:
    """Split ``text`` into user-perceived characters (extended grapheme clusters, UAX #29).

    The subset of the rules a sentence needs: combining marks, joiners and
    variation selectors stay with the character before them; emoji joined by
    zero-width joiners (👩‍💻, 👨‍👩‍👧) and with skin tones stay one cluster;
    two regional indicators make one flag (🇫🇷); subdivision flags (tag
    characters) stay whole; Hangul jamo make syllables. Everything else is a
    cluster of its own (invisible format characters included).
    """
    clusters: list[str] = []
    current = ""
    pictographic = False  # the current cluster starts with an emoji-like character
    regional = 0  # regional indicators in the current cluster
    for ch in text:
        cp = ord(ch)
        if current:
            last = current[-1]
            joins = False
            if _is_extend(ch) and not _is_control(last):
                joins = True  # GB9, GB9a
            elif last == _ZWJ and pictographic and _is_pictographic(ch):
                joins = True  # GB11: emoji ZWJ sequences
            elif _in(cp, (_REGIONAL,)) and regional % 2 == 1 and len(current) == regional:
                joins = True  # GB12/13: a pair of regional indicators is one flag
            else:
                a, b = _hangul_kind(last), _hangul_kind(ch)
                joins = bool(a and b and b in _HANGUL_JOINS.get(a, ()))
            if joins:
                current += ch
                if _in(cp, (_REGIONAL,)):
                    regional += 1
                continue
            clusters.append(current)
        current = ch
        pictographic = _is_pictographic(ch)
        regional = 1 if _in(cp, (_REGIONAL,)) else 0
    if current:
        clusters.append(current)
    return clusters


def _is_word(cluster: str) -> bool:
    base = cluster[0]
    return base.isalnum() or base == "_"


def _is_invisible(cluster: str) -> bool:
    # A cluster of format characters only (soft hyphen, zero-width joiners on
    # their own, word joiner, byte-order mark, bidirectional controls...).
    return all(unicodedata.category(ch) == "Cf" for ch in cluster)


@functools.lru_cache(maxsize=256)
def _tokens(text: str) -> tuple[str, ...]:
    if text.isascii():
        return tuple(_TOKEN.findall(text))
    tokens: list[str] = []
    word: list[str] = []  # clusters of the word being read
    pending = ""  # an apostrophe that continues the word if a letter follows

    def end_word():
        nonlocal pending
        if word:
            tokens.append("".join(word).rstrip(_ZWJ + _ZWNJ))
            word.clear()
        if pending:
            tokens.append(pending)
            pending = ""

    for cluster in grapheme_clusters(text):
        if cluster[0].isspace() or cluster[0] == _ZWSP:
            end_word()  # a zero-width space separates words as a space does
            # A combining mark typed after a space joins the space's cluster: it is kept, as a
            # token of its own (a lone accent), not lost with the space.
            rest = "".join(ch for ch in cluster[1:] if not ch.isspace())
            if rest and not _is_invisible(rest):
                tokens.append(rest)
        elif _is_invisible(cluster):
            continue  # removed: it neither joins nor splits what is around it
        elif _is_word(cluster):
            if pending:
                word.append(pending)
                pending = ""
            word.append(cluster)
        elif cluster in _APOSTROPHES and word and not pending:
            pending = cluster
        else:
            end_word()
            tokens.append(cluster.rstrip(_ZWJ + _ZWNJ) or cluster)
    end_word()
    return tuple(tokens)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into words and punctuation marks, keeping case.

    >>> tokenize("The animal didn't cross the street.")
    ['The', 'animal', "didn't", 'cross', 'the', 'street', '.']

    A token is made of whole user-perceived characters (grapheme clusters):
    an accent typed as a combining mark stays on its letter ("café" in either
    form is one word), and an emoji sequence (👩‍💻, 👍🏽), a flag (🇫🇷) or any
    other symbol is one token. Invisible characters never become tokens: a
    zero-width space separates words as a space does; the other format
    characters (soft hyphen, zero-width joiner or non-joiner on their own,
    word joiner, byte-order mark, bidirectional controls) are dropped, neither
    joining nor splitting the text around them. Joiners inside a word or an
    emoji stay, as they change how it is drawn. ``""`` gives ``[]``.
    """
    if not isinstance(text, str):
        raise EngineError(f"tokenize needs a string, got {type(text).__name__}")
    return list(_tokens(text))


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
        # Each distinct word once, then gathered: a 2,000-token text repeats most of its words.
        index: dict[str, int] = {}
        rows = [index.setdefault(w, len(index)) for w in words]
        return np.stack([self.vector(w) for w in index])[rows]

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
