"""A store's edited cells as arrays, the form in which a session file's cells are written."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class EditedCells(NamedTuple):
    """A store's edited cells as arrays: ``index`` ``(n, 3)`` whole numbers, ``values`` ``(n,)`` floats.

    The session writer formats them as text without a Python list per cell
    (:meth:`StudioState.weight_edits` gives the lists, through :meth:`tolist`).
    """

    index: np.ndarray
    values: np.ndarray

    def tolist(self) -> list:
        """``[[i, j, k, value], ...]``: whole numbers and floats, as a session file holds them."""
        cells = []
        # In slices: one tolist() of a million cells holds the interpreter for a quarter
        # of a second, and saves run beside the window's thread.
        for start in range(0, len(self.index), 1 << 16):
            part = self.index[start:start + (1 << 16)].tolist()
            for cell, value in zip(part, self.values[start:start + (1 << 16)].tolist()):
                cell.append(value)  # [i, j, k] becomes [i, j, k, value] in place: half the time of new lists
            cells += part
        return cells
