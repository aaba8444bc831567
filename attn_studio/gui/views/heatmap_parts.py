"""What the heatmap panel works out beside drawing: a matrix's colour levels, the pictures of a
result made off the GUI thread, the shape of the heads' grid."""

from __future__ import annotations

import numpy as np

from .heatmap import symmetric_levels


def _levels(values: np.ndarray, blocked: np.ndarray | None = None) -> tuple[float, float]:
    """``symmetric_levels`` of the finite, unblocked ``values``, in two passes without copies
    (at 2,000 tokens a heatmap has four million cells)."""
    if (blocked is None or not blocked.any()) and np.isfinite(values.sum()):
        # Every value counts and all are finite (their sum is): no mask to build.
        if not values.size:
            return symmetric_levels()
        return symmetric_levels(np.array([values.min(), values.max()]))
    ok = np.isfinite(values)
    if blocked is not None:
        ok &= ~blocked
    hi = float(np.max(values, where=ok, initial=-np.inf))
    lo = float(np.min(values, where=ok, initial=np.inf))
    if hi < lo:  # nothing finite
        return symmetric_levels()
    return symmetric_levels(np.array([lo, hi]))


class Prepared:
    """The heatmaps' pictures of one result, made off the GUI thread (:meth:`HeatmapView.prepare`):
    ``pictures[(name, head)]`` ("scores", "logits", "weights") and ``levels[(name, head)]``."""

    def __init__(self, result, pictures: dict, levels: dict):
        self.result, self.pictures, self.levels = result, pictures, levels


def heads_grid_shape(n: int) -> tuple[int, int]:
    """(rows, columns) of the heads' grid: 2×2 at 4 heads, 2×4 at 8, 3×4 at 12, 4×4 at 16."""
    if n <= 1:
        return (n, n)
    cols = 2 if n <= 4 else 4
    return (-(-n // cols), cols)
