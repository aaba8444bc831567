"""Checking a value as it comes in: a number a person typed, a text field, a whole number,
a flag, the words whose vectors were edited. Each check returns the value as the studio
keeps it or raises ``StateError`` with a message that names the field and says what is
allowed. No Qt; the state and the trained studio check their fields here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from .limits import MAX_ABS_VALUE, MAX_D_MODEL, MAX_NUMBER_CHARS, MAX_SENTENCE_CHARS, StateError


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=np.float64, copy=True)
    arr.flags.writeable = False
    return arr


def _check_int(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise StateError(f"{name} must be a whole number, got {value!r}")
    value = int(value)
    if not lo <= value <= hi:
        raise StateError(f"{name} must be between {lo} and {hi}, got {value}")
    return value


def _check_bool(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise StateError(f"{name} must be true or false, got {value!r}")
    return bool(value)


def _check_finite(name: str, value) -> float:
    if isinstance(value, (bool, str, bytes)):
        raise StateError(f"{name} must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise StateError(f"{name} must be a number of at most ±{MAX_ABS_VALUE:g}") from None
    if not math.isfinite(number):
        raise StateError(f"{name} must be a finite number, got {value!r}")
    if abs(number) > MAX_ABS_VALUE:
        raise StateError(f"{name} = {number:g} is too large; keep values within ±{MAX_ABS_VALUE:g}")
    return number


# Plain decimal or scientific notation, ASCII digits only, "." as the decimal
# point (the window shows numbers that way): "0.5", "-1e-3", ".25", "3.".
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def parse_number(text) -> float:
    """Parse a number typed by a person ("0.5", "-1e-3", "−0.25", " 2 "), or raise ``StateError``.

    Accepts plain decimal and scientific notation with ASCII digits, a "."
    decimal point, a typographic minus (U+2212, as on slides) and spaces
    around. Refuses empty text, words, NaN, infinities, digit separators
    ("1_000"), other digits (Arabic-Indic, full-width), text longer than
    ``MAX_NUMBER_CHARS``, values too large to show, and values so small that
    they would silently become 0 ("1e-400").
    """
    if isinstance(text, (int, float, np.floating, np.integer)) and not isinstance(text, bool):
        return _check_finite("the value", text)
    if not isinstance(text, str):
        raise StateError(f"{text!r} is not a number"[:200])
    if len(text) > 4 * MAX_NUMBER_CHARS:
        raise StateError(f"the text is {len(text):,} characters long; a number has at most {MAX_NUMBER_CHARS}")
    stripped = text.strip().replace("\u2212", "-")
    if not stripped:
        raise StateError("the cell is empty: type a number")
    if len(stripped) > MAX_NUMBER_CHARS:
        raise StateError(f"the number is {len(stripped):,} characters long; the limit is {MAX_NUMBER_CHARS}")
    if not _NUMBER.fullmatch(stripped):
        raise StateError(f"“{stripped}” is not a number (type digits 0-9, a “.” and an optional e-exponent, "
                         "such as 0.5 or -1e-3)")
    number = float(stripped)
    if not math.isfinite(number):
        raise StateError(f"“{stripped}” is too large; keep values within ±{MAX_ABS_VALUE:g}")
    if number == 0.0 and any(ch in "123456789" for ch in stripped.split("e")[0].split("E")[0]):
        raise StateError(f"“{stripped}” is too small to tell apart from 0; type 0 if you mean it")
    return _check_finite(f"“{stripped}”", number)


def check_text(name: str, value) -> str:
    """Check one text field: a string, within ``MAX_SENTENCE_CHARS``, no unpaired surrogates.

    An unpaired surrogate (half of a UTF-16 pair, such as ``"\\ud800"``) cannot
    be written to a file, so it is refused here, on the way in, rather than at
    the next save. Returns the text unchanged.
    """
    if not isinstance(value, str):
        raise StateError(f"{name} must be text, got {type(value).__name__}")
    if len(value) > MAX_SENTENCE_CHARS:
        raise StateError(f"{name} is {len(value):,} characters long; the limit is {MAX_SENTENCE_CHARS:,}")
    bad = _SURROGATE.search(value)
    if bad:
        raise StateError(f"{name} holds an unpaired surrogate (U+{ord(bad.group()):04X}) at character "
                         f"{bad.start() + 1:,}, which cannot be saved; remove or retype it")
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def _freeze_edits(edits) -> Mapping[str, Mapping[int, float]]:
    if not isinstance(edits, Mapping):
        raise StateError("embedding edits must map words to {index: value}")
    frozen = {}
    for word, values in edits.items():
        if not isinstance(word, str) or not word:
            raise StateError(f"an edited word must be a non-empty string, got {word!r}"[:200])
        check_text("an edited word", word)
        if not isinstance(values, Mapping):
            raise StateError(f"the edits of {word!r} must map component indices to values")
        entry = {}
        for index, value in values.items():
            i = _check_int(f"a component index of {word!r}", index, 0, MAX_D_MODEL - 1)
            entry[i] = _check_finite(f"component {i} of {word!r}", value)
        if entry:
            frozen[word] = MappingProxyType(entry)
    return MappingProxyType(frozen)
