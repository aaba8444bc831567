"""The heatmap panel laid out for a sentence while its numbers are computed.

A trained model's change is computed off the GUI thread, for tens of milliseconds; a new sentence's
layout (each heatmap's labels and range, the stages' least sizes, the heads' sizes: 30-odd ms of the GUI
thread on MiniLM) needs only its tokens, known as soon as Enter is pressed. :class:`ComingTokens` lays
the panel out for them meanwhile, its heatmaps held unpainted (old cells under new labels would be
wrong), and hands the held canvases to the drawing that paints the numbers when they come
(:meth:`~.heatmap_view.HeatmapView.render_steps`), which then only draws and paints.
"""

from __future__ import annotations

from PySide6 import QtCore

LAYOUT_PASSES = 8  # a plot's axes, the plot, its canvas's scene: each layout done can ask for the next


def axis_titles(state) -> tuple[str, str]:
    """The rows' and columns' titles of ``state``'s heatmaps: queries and keys (of the decoder and the
    encoder when they attend across)."""
    return ("query (decoder)", "key (encoder)") if getattr(state, "cross", False) else ("query", "key")


def same_tokens(a, b) -> bool:
    """Whether states ``a`` and ``b`` have the same query and key tokens (their heatmaps the same labels)."""
    return list(a.query_tokens) == list(b.query_tokens) and list(a.key_tokens) == list(b.key_tokens)


class ComingTokens:
    """Part of a :class:`~.heatmap_view.HeatmapView` (``view``): ``expect(state)`` lays its heatmaps out
    for ``state``'s tokens and holds them unpainted; ``adopt()`` hands the held canvases to the drawing
    of the numbers; ``drop()`` goes back to the tokens shown when nothing comes after all.

    The work is shared among three event-loop turns, none of them long: the stages laid out (in the turn
    that asks), the heads' maps in sight given their labels and sizes (those out of sight are hidden, and
    laid out when the drawing shows them), then laid out. Whatever is not done when the numbers come, the
    drawing does as it goes.
    """

    def __init__(self, view):
        self.view = view
        self.held: list = []  # canvases laid out for tokens whose numbers have not come, not painted
        self.frozen = False  # the whole panel keeps its last picture until the coming numbers are drawn
        self._kept = None  # a part still keeping its picture once the rest is thawed (see thaw)
        self._state = None  # the state laid out for, while turns of it remain
        self._phases: list = []  # what the next turns do
        self._timer = QtCore.QTimer(view)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._next)

    def expect(self, state) -> bool:
        """Lay the heatmaps out for ``state``'s tokens (a change being computed), held unpainted until
        they are drawn; True when anything was laid out anew (the tokens differ from the labels)."""
        self._phases = []
        changed = self._lay_out_stages(state)
        if not changed:
            return False
        view = self.view
        # The heads' maps are resized with the stages (their least size follows the stages'): held too.
        self._hold(changed + [canvas for canvas in view.head_canvases[: max(view.heads_shown, 0)]
                              if not canvas.isHidden()])
        # The whole panel keeps its last picture meanwhile: its parts moving to their new places, held
        # canvases and the space between them would show half a layout (old cells, blank places) for the
        # 40-odd ms the model takes. The drawing thaws it once what is in sight is drawn (thaw).
        if view.updatesEnabled():
            view.setUpdatesEnabled(False)
            self.frozen = True
        self._state = state
        # The stages' labels and least sizes now; each of the next turns settles them, lays the heads' maps
        # out, settles those. (The stages settled in this turn too made it a 40-45 ms stall; numbers that
        # come before the last of these turns are drawn after it, StagedDrawing.steps.)
        self._phases = [self._settle, self._lay_out_heads, self._settle]
        self._timer.start()
        return True

    def laying_out(self) -> bool:
        """Whether turns of laying out for the tokens expected are still to come."""
        return bool(self._phases)

    def drop(self) -> None:
        """Nothing comes after all (the change failed, or a later one gave the shown tokens back): the
        heatmaps are laid out for what they show again and painted."""
        if not self.held:
            self._stop()
            return
        state = self.view.studio.state
        if self.view.stages["scores"].has_labels(state.query_tokens, state.key_tokens):
            return  # they came: the drawing due (a turn later) paints them with their numbers
        self._stop()
        self._lay_out_stages(state)
        self._lay_out_heads(state)
        held, self.held = self.held, []
        for canvas in held:
            canvas.setUpdatesEnabled(True)
        self.thaw()

    def thaw(self, keep=None) -> None:
        """Paint the panel again (frozen by :meth:`expect` while the numbers were computed): the drawing calls
        this once the heatmaps in sight are drawn, so that the new sentence is painted whole. ``keep``: a
        part that keeps its last picture a little longer (the heads' place, painted in a turn of its own
        once its maps are drawn: all at once it was one 35-60 ms turn); a later ``thaw()`` paints it."""
        if not self.frozen:
            return
        if keep is not None and self._kept is None and keep.isVisible() and keep.updatesEnabled():
            keep.setUpdatesEnabled(False)
            self._kept = keep
        if not self.view.updatesEnabled():
            self.view.setUpdatesEnabled(True)
        if keep is None:
            kept, self._kept = self._kept, None
            if kept is not None:
                kept.setUpdatesEnabled(True)
            self.frozen = False

    def adopt(self) -> list:
        """The canvases held for the tokens now drawn: the caller paints them with their numbers."""
        # What is still to lay out or settle, the drawing does as it goes (set_data labels each map, and
        # each step is laid out before it is painted).
        self._stop()
        held, self.held = self.held, []
        return held

    # -- the turns -------------------------------------------------------------------------

    def _stop(self) -> None:
        self._timer.stop()
        self._phases = []
        self._state = None

    def _next(self) -> None:
        state = self.view.studio.state
        if self._state is not None and same_tokens(state, self._state):
            # The numbers came first: the drawing due lays out what is left, after the stages are painted.
            self._phases = []
            self._state = None
            return
        if self._phases:
            self._phases.pop(0)(self._state)
        if self._phases:
            self._timer.start()
        else:
            self._state = None

    def _hold(self, canvases) -> None:
        for canvas in canvases:
            if canvas.updatesEnabled():
                canvas.setUpdatesEnabled(False)
                self.held.append(canvas)

    def _lay_out_stages(self, state) -> list:
        """Give the shown stages ``state``'s labels, ranges and least sizes; the canvases changed."""
        view = self.view
        rows, cols = list(state.query_tokens), list(state.key_tokens)
        row_title, col_title = axis_titles(state)
        changed = []
        for key, canvas in view.canvases.items():
            if canvas.isHidden():
                continue
            hm = view.stages[key]
            hm.set_axis_titles(row_title, col_title)
            if hm.expect(rows, cols):
                changed.append(canvas)
        if changed:
            view._fit_stages(len(rows), len(cols), heads=False)
        return changed

    def _lay_out_heads(self, state) -> None:
        """Give the heads' maps ``state``'s labels and ranges, and the grid its sizes."""
        view = self.view
        if getattr(state, "effective_heads", None) != view.heads_shown:
            return  # another count of heads: the drawing builds the grid anew
        row_title, col_title = axis_titles(state)
        rows, cols = list(state.query_tokens), list(state.key_tokens)
        place = view.heads_scroll
        # What the heads' place shows, in the grid's coordinates (the grid scrolls under it).
        seen = place.viewport().rect().translated(-view.heads_widget.pos()) if place.isVisible() else None
        for hm, canvas in zip(view.head_maps, view.head_canvases[: view.heads_shown]):
            if canvas.isHidden():
                continue
            if seen is None or not canvas.geometry().intersects(seen):
                # Scrolled out of sight: hidden (keeping its place), a map is resized only when the drawing
                # shows it again, after the maps in sight (a dozen maps laid out took 40-odd ms).
                canvas.hide()
                continue
            hm.set_axis_titles(row_title, col_title)
            hm.expect(rows, cols)
        view._size_heads()

    def _settle(self, state=None) -> None:
        """The held canvases laid out, their plots' ranges and column labels' angles worked out."""
        for _ in range(LAYOUT_PASSES):
            QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.LayoutRequest)
        shown = [canvas for canvas in self.held if canvas.isVisible()]
        for canvas in shown:
            canvas.scene().prepareForPaint()
        grown = [canvas for canvas in shown if canvas.heatmap.fit_column_labels()]
        if grown:
            for _ in range(LAYOUT_PASSES):
                QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.LayoutRequest)
            for canvas in grown:
                canvas.scene().prepareForPaint()
