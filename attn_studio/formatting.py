"""One way to write a number, everywhere: heatmap cells, tooltips, tables, the step view, exports.

Numbers read as the lecture notes print them: ``0.1385``, ``−0.1061`` (a true
minus sign, U+2212), ``1.254e−56``. ``digits`` is the precision setting: the
number of decimals (2 or 4 in the window). Two styles:

- :func:`format_number` (``fixed=False``, the default): up to ``digits``
  decimals with trailing zeros dropped, significant digits for small numbers
  and scientific notation for tiny and huge ones. Formulas and tables use it.
- ``fixed=True``: exactly ``digits`` decimals, so a column of cells lines up
  (``0.14``, ``0.00``). Heatmap cells use it.

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


def _minus(text: str) -> str:
    return text.replace("-", MINUS)


def format_number(x, digits: int = DEFAULT_DIGITS, *, fixed: bool = False, short: bool = False) -> str:
    """``x`` as text with ``digits`` decimals and a true minus sign.

    ``fixed`` keeps exactly ``digits`` decimals (``0.10``); otherwise
    trailing zeros are dropped (``0.1``), numbers below 0.01 keep ``digits``
    significant digits and numbers below 10^−digits or from a million on are
    written in scientific notation. ``short`` spells overflow as ``+inf`` /
    ``NaN`` instead of the word.
    """
    x = float(x)
    digits = max(0, int(digits))
    if math.isnan(x):
        return "NaN" if short else "overflow"
    if x == math.inf:
        return "+inf" if short else "overflow"
    if x == -math.inf:
        return f"{MINUS}inf"
    if fixed:
        text = f"{x:.{digits}f}"
        if float(text) == 0:
            text = text.lstrip("-")  # no "−0.00"
        return _minus(text)
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1e6 or a < 10.0 ** -max(digits, 1):
        mantissa, exponent = f"{x:.{max(digits, 1)}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return _minus(f"{mantissa}e{int(exponent)}")
    if a < 0.01:
        text = f"{x:.{max(digits, 1)}g}"
    else:
        text = f"{x:.{digits}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
    if text in ("-0", "0", ""):
        return "0"
    return _minus(text)


def format_vector(v, digits: int = DEFAULT_DIGITS, max_components: int = 4) -> str:
    """A vector compactly: ``(0.55, 0.87, 0.66)``; a long one as ``(0.55, 0.87, 0.66, …) d=64``."""
    arr = np.asarray(v, dtype=np.float64).ravel()
    if arr.size <= max_components:
        return "(" + ", ".join(format_number(c, digits) for c in arr) + ")"
    return "(" + ", ".join(format_number(c, digits) for c in arr[:3]) + f", …) d={arr.size}"


def format_fixed(values, digits: int = DEFAULT_DIGITS, *, short: bool = False) -> list[str]:
    """``format_number(x, digits, fixed=True, short=short)`` of every value of ``values``, flattened
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
    for i in np.flatnonzero(~np.isfinite(flat)).tolist():
        texts[i] = format_number(flat[i], digits, fixed=True, short=short)
    return texts
