"""A heatmap's picture: its values coloured into a ready 32-bit image, at most a screen's size.

pyqtgraph colours a float image on every new image in the GUI thread, four million cells
at 2,000 tokens, and then Qt scales that picture down to a few hundred pixels on every
paint. Here the colours are looked up once, NumPy only, straight into Qt's premultiplied
ARGB32 layout (the image item wraps the array, nothing is converted), and a matrix wider
than a screen is first reduced to ``MAX_IMAGE_SIDE`` pixels by the mean of each block of
cells: every pixel shows the average of the cells it stands for, so the picture stays
honest (no cell is skipped, as taking every n-th would). Masked and non-finite cells
take no part in a mean; a block with none left is transparent (the hatching shows there).

Up to ``MAX_IMAGE_SIDE`` tokens nothing is reduced, and the colours are exactly the ones
pyqtgraph draws for the same levels and lookup table: (value - low) · 256 / (high - low),
clipped to 0..255, truncated. A figure for the page draws every cell (``max_side=None``).
"""

from __future__ import annotations

import math

import numpy as np

MAX_IMAGE_SIDE = 1024  # pixels: no heatmap on a screen is wider or taller than this


def reduction(shape: tuple[int, int], max_side: int | None = MAX_IMAGE_SIDE) -> int:
    """How many cells a side of a block holds so that neither side of the picture passes
    ``max_side`` pixels (1: every cell its own pixel; ``max_side`` None: always 1)."""
    if max_side is None:
        return 1
    return max(1, math.ceil(max(shape[0], shape[1], 1) / max_side))


def block_mean(values: np.ndarray, ok: np.ndarray | None, factor: int) -> np.ndarray:
    """The mean of each ``factor`` × ``factor`` block of ``values`` over its ``ok`` cells
    (None: every cell), NaN where a block has none. Blocks at the right and bottom edges
    hold what is left of the matrix (the mean of fewer cells)."""
    values = np.asarray(values, dtype=np.float64)
    if factor == 1:
        return values.copy() if ok is None else np.where(ok, values, np.nan)
    if ok is not None:
        values = np.where(ok, values, 0.0)
    sums = _group_sum(_group_sum(values, factor, 0), factor, 1)
    if ok is None:
        counts = np.multiply.outer(_group_sizes(values.shape[0], factor), _group_sizes(values.shape[1], factor))
    else:
        # Cells per block fit in 16 bits up to 255-cell-wide blocks (half a million tokens).
        ones = ok.view(np.uint8) if ok.dtype == np.bool_ else ok.astype(np.uint8)
        counts = _group_sum(_group_sum(ones, factor, 0, np.uint16), factor, 1, np.uint16)
    with np.errstate(invalid="ignore", divide="ignore"):
        sums /= counts
    return sums


def _group_sum(x: np.ndarray, factor: int, axis: int, dtype=None) -> np.ndarray:
    """Sums of ``factor`` neighbours along ``axis`` (the last group: what is left).

    Strided slices added pairwise: a few ms at 2,000² where ``np.add.reduceat`` or a
    reshape-and-sum over a small inner axis take several times longer."""
    n = x.shape[axis]
    full = n // factor

    def part(start, stop=None, step=None):
        index = [slice(None)] * x.ndim
        index[axis] = slice(start, stop, step)
        return x[tuple(index)]

    shape = list(x.shape)
    shape[axis] = -(-n // factor)
    out = np.empty(shape, dtype=dtype or x.dtype)
    head = [slice(None)] * x.ndim
    head[axis] = slice(0, full)
    head = tuple(head)
    if full:
        np.add(part(0, full * factor, factor), part(1, full * factor, factor), out=out[head], dtype=out.dtype)
        for a in range(2, factor):
            np.add(out[head], part(a, full * factor, factor), out=out[head], dtype=out.dtype)
    if n % factor:
        tail = [slice(None)] * x.ndim
        tail[axis] = slice(full, full + 1)
        out[tuple(tail)] = part(full * factor).sum(axis=axis, keepdims=True, dtype=out.dtype)
    return out


def _group_sizes(n: int, factor: int) -> np.ndarray:
    sizes = np.full(-(-n // factor), float(factor))
    sizes[-1] = n - factor * (len(sizes) - 1)
    return sizes


def argb_table(lut: np.ndarray) -> np.ndarray:
    """A lookup table of RGB or RGBA bytes (N, 3|4) as N premultiplied ARGB32 pixels (uint32)."""
    lut = np.asarray(lut, dtype=np.uint8)
    if lut.ndim != 2 or lut.shape[1] not in (3, 4):
        raise ValueError(f"a colour table is N × 3 or N × 4 bytes, not {lut.shape}")
    rgb = lut[:, :3].astype(np.uint32)
    alpha = lut[:, 3].astype(np.uint32) if lut.shape[1] == 4 else np.full(len(lut), 255, np.uint32)
    # Premultiplied as Qt does it (qPremultiply: x · a / 255, rounded).
    rgb = (rgb * alpha[:, None] + 127) // 255
    return (alpha << 24) | (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]


def colour(values: np.ndarray, levels: tuple[float, float], table: np.ndarray) -> np.ndarray:
    """``values`` (NaN: transparent) as premultiplied ARGB32 pixels through ``table``
    (:func:`argb_table`), the colour index computed as pyqtgraph computes it."""
    lo, hi = float(levels[0]), float(levels[1])
    span = hi - lo
    scale = len(table) / (span if span != 0 else 1.0)
    index = values - lo
    index *= scale
    np.clip(index, 0, len(table) - 1, out=index)
    nan = np.isnan(index)
    index[nan] = 0
    pixels = table.take(index.astype(np.intp if len(table) > 256 else np.uint8))
    pixels[nan] = 0
    return pixels


def display_pixels(values: np.ndarray, masked: np.ndarray | None, levels: tuple[float, float], table: np.ndarray,
                   max_side: int | None = MAX_IMAGE_SIDE) -> tuple[np.ndarray, int]:
    """(pixels, factor): the picture of ``values`` (rows = queries) as premultiplied ARGB32
    pixels, one per ``factor`` × ``factor`` block of cells (see :func:`reduction`); masked
    and non-finite cells are transparent and left out of the blocks' means."""
    values = np.asarray(values, dtype=np.float64)
    factor = reduction(values.shape, max_side)
    # All finite (a finite sum says so in one pass) and nothing masked: no cell to leave out.
    clean = math.isfinite(float(values.sum())) and (masked is None or not masked.any())
    ok = None if clean else np.isfinite(values) & (True if masked is None else ~masked)
    reduced = block_mean(values, ok, factor)
    return colour(reduced, levels, table), factor


def runs(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, starts, stops) of every run of True cells along the rows of ``cells``, row by row:
    row ``rows[k]`` is True from column ``starts[k]`` up to, not including, ``stops[k]``."""
    if not cells.size or not cells.any():
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, empty
    edges = np.zeros((cells.shape[0], cells.shape[1] + 2), dtype=np.int8)
    edges[:, 1:-1] = cells
    steps = np.diff(edges, axis=1)
    rows, cols = np.nonzero(steps)  # one pass; in row-major order a run's start comes before its stop
    up = steps[rows, cols] == 1
    return rows[up], cols[up], cols[~up]


class Picture:
    """Everything a heatmap draws of one matrix, worked out beforehand (any thread, NumPy only):
    ``pixels`` and ``factor`` (:func:`display_pixels`), ``shown`` (the matrix with NaN where a
    cell is masked or not finite), ``overflow`` (non-finite unmasked cells) and ``clean`` (no
    such cells at all). ``values``, ``masked``, ``levels``, ``table`` and ``max_side`` are what
    it was made from; a heatmap uses it only for that very array, colour table and size."""

    __slots__ = ("values", "masked", "levels", "table", "max_side", "pixels", "factor", "shown", "overflow", "clean",
                 "mask_runs", "overflow_runs")

    def __init__(self, values: np.ndarray, masked: np.ndarray, levels: tuple[float, float], table: np.ndarray,
                 max_side: int | None = MAX_IMAGE_SIDE):
        self.values, self.masked, self.table, self.max_side = values, masked, table, max_side
        lo, hi = float(levels[0]), float(levels[1])
        self.levels = (lo, hi if hi > lo else lo + 1.0)
        rows, cols = values.shape
        # All finite (a finite sum says so in one pass) and nothing masked: the matrix is what is shown.
        self.clean = bool(np.isfinite(values.sum())) and not masked.any()
        if self.clean:
            self.shown, self.overflow = values, np.zeros(values.shape, dtype=bool)
        else:
            finite = np.isfinite(values)
            self.shown = np.where(masked | ~finite, np.nan, values)
            self.overflow = ~finite & ~masked
        # Where the hatching and the red overflow cells go (runs of cells along each row).
        self.mask_runs = runs(masked) if not self.clean else None
        self.overflow_runs = runs(self.overflow) if not self.clean else None
        if rows and cols:
            self.pixels, self.factor = display_pixels(values, None if self.clean else masked, self.levels, table,
                                                      max_side)
        else:
            self.pixels, self.factor = None, 1
