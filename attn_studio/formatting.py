"""One way to write a number, everywhere: heatmap cells, tooltips, tables, readouts, exports.

Numbers read as the lecture notes print them: ``0.1385``, ``−0.1061`` (a true
minus sign, U+2212). ``digits`` is the precision setting: the number of decimals
(2 or 4 in the window). :func:`format_number` writes exactly ``digits`` decimals,
so that numbers side by side share one form: ``1.00`` beside ``0.18``, never ``1``
beside ``0.18``; a number smaller than half the last decimal reads ``0.00``.
Counts, token indices, steps, d_k and seeds are integers and are written as such.

Two forms say why they differ, and only where that is the number's point:

- :func:`format_size`: numbers whose point is their size (a variance drawn on a
  logarithmic axis, how far silencing a head moves the sentence embedding), in
  scientific notation with ``digits`` decimals (``1.82e−5``); the text that shows
  them says so (``SIZE_NOTE``).
- :func:`format_exact`: every digit a float64 keeps, where a person reads the
  stored value to type it again (a table cell's tooltip); it says so (``EXACT_NOTE``).

Numbers from a million on are written in scientific notation with ``digits``
decimals too (``5.54e34``: the naive softmax's exps before they overflow): fixed
decimals would print thirty-odd digits.

Non-finite values: ``−inf`` is a blocked (masked) logit; ``+inf`` and NaN only
come from the naive softmax overflowing, and read ``overflow`` (``"inf"`` and
``"NaN"`` in a cell too narrow for the word, with ``short=True``).

Parsing goes the other way and lives in :func:`attn_studio.checks.parse_number`;
it accepts the minus sign written here.
"""

from __future__ import annotations

import math

import numpy as np

MINUS = "\u2212"
PRECISIONS = (2, 4)
DEFAULT_DIGITS = 4
CELL_DIGITS = 2
# What a number in another form says about itself (the tests read these too).
SIZE_NOTE = "written as a power of ten: its size is the point"
EXACT_NOTE = "every stored digit"
LARGE = 1e6
# A head's importance (1 − cosine of the sentence embedding without it), in the window as
# ``attn-studio heads`` prints it: four decimals whatever the precision setting (0.0787).
IMPORTANCE_DIGITS = 4


def _minus(text: str) -> str:
    return text.replace("-", MINUS)


def _non_finite(x: float, short: bool) -> str | None:
    if math.isnan(x):
        return "NaN" if short else "overflow"
    if x == math.inf:
        return "+inf" if short else "overflow"
    if x == -math.inf:
        return f"{MINUS}inf"
    return None


def _scientific(x: float, digits: int) -> str:
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    return _minus(f"{mantissa}e{int(exponent)}")


def format_number(x, digits: int = DEFAULT_DIGITS, *, short: bool = False) -> str:
    """``x`` as text with exactly ``digits`` decimals and a true minus sign (``0.10``, ``1.00``,
    ``−0.14``; ``0.00``, never ``−0.00``). From a million on, scientific notation with ``digits``
    decimals (``5.54e34``). ``short`` spells overflow as ``+inf`` / ``NaN`` instead of the word.
    """
    x = float(x)
    digits = max(0, int(digits))
    special = _non_finite(x, short)
    if special is not None:
        return special
    if abs(x) >= LARGE:
        return _scientific(x, digits)
    text = f"{x:.{digits}f}"
    if float(text) == 0:
        text = text.lstrip("-")  # no "−0.00"
    return _minus(text)


def format_size(x, digits: int = DEFAULT_DIGITS) -> str:
    """``x`` in scientific notation with ``digits`` decimals (``1.82e−5``, ``4.60e−3``), for numbers
    whose point is their size; every number of such a column or scale is written so, and the text
    showing them says so (``SIZE_NOTE``)."""
    x = float(x)
    special = _non_finite(x, False)
    if special is not None:
        return special
    return _scientific(x, max(0, int(digits)))


def format_importance(x) -> str:
    """A head's importance as the command line writes it: ``IMPORTANCE_DIGITS`` decimals (``0.0787``)."""
    return format_number(x, IMPORTANCE_DIGITS)


def format_exact(x) -> str:
    """Every digit float64 keeps of ``x`` (``0.578989070668883``, true minus), for a person who reads
    the stored value to type it again; the text showing it says so (``EXACT_NOTE``)."""
    x = float(x)
    special = _non_finite(x, False)
    if special is not None:
        return special
    return _minus(repr(x))


def format_setting(x) -> str:
    """A value the person chose (a temperature, ``T = 0.5``, ``T = 2``) as typed: trailing zeros
    dropped, not at the precision setting, which is for the numbers computed from it."""
    return _minus(f"{float(x):g}")


def format_vector(v, digits: int = DEFAULT_DIGITS, max_components: int = 4) -> str:
    """A vector compactly: ``(0.55, 0.87, 0.66)``; a long one as ``(0.55, 0.87, 0.66, …) d=64``."""
    arr = np.asarray(v, dtype=np.float64).ravel()
    if arr.size <= max_components:
        return "(" + ", ".join(format_number(c, digits) for c in arr) + ")"
    return "(" + ", ".join(format_number(c, digits) for c in arr[:3]) + f", …) d={arr.size}"


def format_fixed(values, digits: int = DEFAULT_DIGITS, *, short: bool = False) -> list[str]:
    """``format_number(x, digits, short=short)`` of every value of ``values``, flattened
    (row after row): the same texts, made at a fraction of the cost (a heatmap writes every cell's
    value on each change; calling ``format_number`` per cell was a good part of a small edit's time)."""
    flat = np.asarray(values, dtype=np.float64).ravel()
    spec = f".{max(0, int(digits))}f"
    texts = [format(x, spec) for x in flat.tolist()]
    negative = np.signbit(flat)  # −0.0 too: Python writes it "-0.00"
    # Negative numbers that round to zero are written without a minus (no "−0.00").
    for i in np.flatnonzero(negative & (flat > -(10.0 ** -max(0, int(digits))))).tolist():
        if float(texts[i]) == 0:
            texts[i] = texts[i].lstrip("-")
    for i in np.flatnonzero(negative).tolist():
        texts[i] = texts[i].replace("-", MINUS)
    # Non-finite values and those from a million on (scientific) are few: written one by one.
    with np.errstate(invalid="ignore"):
        special = ~np.isfinite(flat) | (np.abs(flat) >= LARGE)
    for i in np.flatnonzero(special).tolist():
        texts[i] = format_number(flat[i], digits, short=short)
    return texts
