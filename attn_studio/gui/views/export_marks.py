"""The switch between the screen and a figure, and the heatmaps it redraws.

:func:`exporting` is the context in which a figure is drawn: heatmaps leave out their on-screen
marks (the selected row's outline, the shown head's ``◀``). Every heatmap registers itself
(:func:`register`) so that the switch can draw its marks again on the way in and out; there is one registry and one
switch for the whole program, read through :func:`is_exporting`, :func:`query_outlined` and
:func:`registered_heatmaps`.
"""

from __future__ import annotations

import contextlib
import weakref

_export_depth = 0
_query_kept = False  # the whole window drawn as a figure keeps its query's outline (its caption names it)
_heatmaps: "weakref.WeakSet" = weakref.WeakSet()


def register(heatmap) -> None:
    """Let :func:`exporting` redraw ``heatmap``'s marks (it has a ``redraw_marks()``)."""
    _heatmaps.add(heatmap)


@contextlib.contextmanager
def exporting(keep_query: bool = False, heatmaps=None):
    """While a figure is drawn: none of the on-screen-only marks.

    Inside this context every heatmap leaves out the selected row's outline and
    the shown head's ``◀``; with ``keep_query`` (the whole window as a figure, whose
    caption says "the outlined row is the query") the query's outline stays.
    Everything is as it was when the context ends. ``heatmaps``: only these have their marks
    drawn again (a figure painted band by band, whose own heatmaps nothing on screen shares);
    None: every heatmap.
    """
    global _export_depth, _query_kept
    kept = _query_kept
    _export_depth += 1
    _query_kept = bool(keep_query) if _export_depth == 1 else kept
    if _export_depth == 1:
        _redraw_marks(heatmaps)
    try:
        yield
    finally:
        _export_depth -= 1
        _query_kept = kept if _export_depth else False
        if _export_depth == 0:
            _redraw_marks(heatmaps)


def registered_heatmaps() -> list:
    """Every heatmap :func:`exporting` redraws the marks of (those alive)."""
    return list(_heatmaps)


def is_exporting() -> bool:
    """True inside :func:`exporting`."""
    return _export_depth > 0


def query_outlined() -> bool:
    """Whether a heatmap outlines its query's row now: on screen, and in a figure of the whole window."""
    return _export_depth == 0 or _query_kept


def _redraw_marks(heatmaps=None) -> None:
    for heatmap in list(_heatmaps if heatmaps is None else heatmaps):
        try:
            heatmap.redraw_marks()
        except RuntimeError:  # its Qt items were deleted with their window
            pass
