"""The numbers that explain the sinusoidal positional encoding: its base and the period of each frequency.

The base is the default of :func:`~attn_studio.engine.sinusoidal_positions`,
read from its signature so that the encoding and every caption that writes
``pos / 10000^(2i/d)`` share one number.
"""

from __future__ import annotations

import inspect

import numpy as np

from ._checks import check_positive
from .text import sinusoidal_positions

__all__ = ["POSITION_BASE", "position_periods"]

POSITION_BASE: float = float(inspect.signature(sinusoidal_positions).parameters["base"].default)


def position_periods(dim: int, base: float = POSITION_BASE) -> np.ndarray:
    """The period, in positions, of each frequency ``i`` of a ``dim``-dimensional encoding: ``2π · base^(2i/dim)``.

    Returns ``ceil(dim / 2)`` periods, one per sine/cosine pair (column
    ``2i`` and ``2i + 1``), from the fastest (``2π``) to the slowest.
    """
    dim = check_positive("dim", dim, integer=True)
    base = check_positive("base", base)
    i = np.arange((dim + 1) // 2)
    return 2.0 * np.pi * np.power(base, 2.0 * i / dim)
