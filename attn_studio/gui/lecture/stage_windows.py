"""Which tokens the stage shows where a sentence does not fit: a window of queries and one of keys that
keep the query row, the scene's pinned cell and, with a causal mask, each shown row's own cell in view,
and the caption's words for them: pure functions of the sizes."""

from __future__ import annotations

from .stage import token_window


def window_keeping(n: int, fit: int, centre: int, keep=()) -> tuple[int, int]:
    """(start, stop) of ``fit`` consecutive tokens of ``n`` around ``centre`` that hold every index of
    ``keep`` they can (the nearest to ``centre`` first, when they cannot all be held)."""
    fit = max(1, min(int(fit), n))
    centre = min(max(int(centre), 0), n - 1)
    start, _ = token_window(n, fit, centre)
    lo, hi = centre, centre + 1
    for k in sorted({k for k in keep if k is not None and 0 <= k < n}, key=lambda k: abs(k - centre)):
        if max(hi, k + 1) - min(lo, k) <= fit:
            lo, hi = min(lo, k), max(hi, k + 1)
    start = min(max(start, hi - fit), lo)
    start = min(max(start, 0), n - fit)
    return start, start + fit


def token_windows(n_rows: int, n_cols: int, fit_rows: int, fit_cols: int, q: int, pin=None,
                  causal: bool = False) -> tuple[tuple[int, int], tuple[int, int]]:
    """((rows), (cols)) windows of at most ``fit_rows`` queries and ``fit_cols`` keys: the query ``q``
    among the rows, the pinned cell ``pin`` (query, key) in view, and with a causal mask each shown row's
    own cell (the diagonal) too (fewer rows where the keys cannot hold them all)."""
    fit_rows, fit_cols = max(1, min(fit_rows, n_rows)), max(1, min(fit_cols, n_cols))
    pin_q, pin_k = pin if pin is not None else (None, None)
    rows = window_keeping(n_rows, fit_rows, q, [pin_q])
    if causal and n_rows == n_cols:
        while True:
            # Keys after the last shown row are masked in every shown row: the keys end at it.
            lo = min(rows[0], pin_k) if pin_k is not None else rows[0]
            hi = max(rows[1], pin_k + 1) if pin_k is not None else rows[1]
            if hi - lo <= fit_cols or fit_rows == 1:
                break
            fit_rows -= 1
            rows = window_keeping(n_rows, fit_rows, q, [pin_q])
        start = max(0, min(lo, hi - fit_cols))
        stop = min(n_cols, start + fit_cols)
        return rows, (max(0, stop - fit_cols), stop)
    # Around the query's own key (self-attention), holding the pinned key too; around the pinned key
    # where both cannot be held.
    centre = q if n_rows == n_cols else 0
    if pin_k is not None and abs(centre - pin_k) + 1 > fit_cols:
        centre = pin_k
    return rows, window_keeping(n_cols, fit_cols, centre, [pin_k])


def window_note(rows, cols, n_rows: int, n_cols: int) -> str:
    """The caption's words for windowed tokens: both ranges ("queries 8–13, keys 1–16 of 16")."""
    if n_rows == n_cols:
        return f"queries {rows[0] + 1}–{rows[1]}, keys {cols[0] + 1}–{cols[1]} of {n_rows}"
    return f"queries {rows[0] + 1}–{rows[1]} of {n_rows}, columns {cols[0] + 1}–{cols[1]} of {n_cols}"
