"""The heatmap panel's drawing of a result: the header and the stages' titles, then each stage and each
head's map in a step of its own (a generator the window advances once per event-loop turn on a large
model), from pictures made off the GUI thread where a background edit made them.

What is drawn when (a trained model's new sentence drawn in about 100 ms): a sentence of another length is
laid out first, in a step of its own, its heatmaps held unpainted meanwhile; then each stage is drawn and
painted in its step; the heads' maps after them, the new ones built one per step, each shown when it has
its numbers (a map hidden out of sight while the numbers were computed is shown again once the heads'
place, with the maps in sight drawn, has been painted in a step of its own).
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore

from ...explain import logits_title, scores_title
from .heatmap import SHOWN_MARK, set_bar_levels
from .heatmap_coming import LAYOUT_PASSES, axis_titles
from .heatmap_parts import Prepared, _levels
from ..widgets import short_token

LONG_INPUT = 40  # beyond this many tokens the header says what is thinned or hidden
NEXT_TURN = "next turn"  # a step that waits: the window goes on in its next turn


class StagedDrawing:
    """Part of a :class:`~.heatmap_view.HeatmapView` (``view``): :meth:`steps` draws the studio's current
    result a heatmap per step; ``prepared`` the pictures made for a result off the GUI thread
    (:meth:`prepare`, :meth:`use`), ``painting`` the canvases drawn in the last step, which
    :meth:`prepare_paint` readies for their paint."""

    def __init__(self, view):
        self.view = view
        self.prepared: Prepared | None = None  # pictures made off the GUI thread (prepare)
        self.painting: list = []  # canvases drawn in the last step, to be painted (prepare_paint)
        # (state, result) drawn, or being drawn, before the studio installed them (a trained model's new
        # sentence, its shown layer computed before the rest of the pass): its install then draws nothing
        # again (met_by_install). None once met, or superseded by a drawing of the studio's own numbers.
        self.early = None

    def prepare(self, state, result) -> Prepared:
        """The pictures :meth:`steps` will draw of ``result`` (for ``state``'s shown head and every head's
        weights), made now: NumPy only, on any thread. A background edit makes them beside the engine's
        numbers; :meth:`use` hands them over on the GUI thread."""
        stages = self.view.stages
        head = state.shown_head
        blocked = result.blocked
        pictures, levels = {}, {}
        plan = [("scores", head, result.scores[head], _levels(result.scores[head]), stages["scores"]),
                ("logits", head, result.logits[head], _levels(result.logits[head], blocked), stages["logits"]),
                ("weights", head, result.weights[head], (0.0, 1.0), stages["weights"])]
        n_heads = result.weights.shape[0]
        if n_heads > 1:
            # Every head's map has the same colours and size limit as the weights stage.
            plan += [("head", i, result.weights[i], (0.0, 1.0), stages["weights"]) for i in range(n_heads)]
        for name, i, values, lv, heatmap in plan:
            levels[(name, i)] = lv
            pictures[(name, i)] = heatmap.prepare(values, blocked, lv)
        return Prepared(result, pictures, levels)

    def use(self, prepared: Prepared | None) -> None:
        """Draw ``prepared`` (:meth:`prepare`) when its result is the one shown; None forgets it."""
        self.prepared = prepared

    def picture(self, result, name: str, head: int):
        """(values, levels, picture) prepared for ``result``'s ``name`` of ``head``, or None."""
        prepared = self.prepared
        if prepared is None or prepared.result is not result or (name, head) not in prepared.pictures:
            return None
        picture = prepared.pictures[(name, head)]
        return picture.values, prepared.levels[(name, head)], picture

    def state(self):
        """The state the heatmaps show, or are being drawn for: an early drawing's (see :attr:`early`) until the
        studio installs it, else the studio's (the stages' sizes follow its tokens)."""
        return self.early[0] if self.early is not None else self.view.studio.state

    def _installed(self, early) -> bool:
        """Whether ``early`` (state, result) is what the studio holds now."""
        studio = self.view.studio
        return early[0] is studio.state and early[1] is studio.result

    def met_by_install(self) -> bool:
        """Whether the studio's state and result are those drawn early (:attr:`early`); asked once, when
        the change is installed: the heatmaps need no drawing again, only the pinned formula does."""
        early, self.early = self.early, None
        if early is None or not self._installed(early):
            return False
        self.view._show_pinned()
        return True

    def left_early(self) -> bool:
        """Whether an early drawing's change will not be installed after all (nothing more is computing and
        the studio has other numbers): the heatmaps are to be drawn from the studio again."""
        if self.early is None or self._installed(self.early):
            return False
        self.early = None
        return True

    def steps(self, source=None):
        """The view's :meth:`~.heatmap_view.HeatmapView.render` one heatmap at a time: a generator that draws
        the next heatmap each time it is advanced. On a large model the window advances it once per
        event-loop turn, so that the window is painted and answers between heatmaps instead of freezing
        for all of them. ``source``: (state, result) to draw instead of the studio's (computed, not yet
        installed: :attr:`early`)."""
        view, heads = self.view, self.view.heads
        self.early = source
        if source is not None and view.coming.laying_out():
            # Drawn early, the numbers may come before the heads are laid out for their tokens (the turns
            # after the stages'): drawn meanwhile, the heads were laid out by the drawing, and the stages
            # painted twice. So are they when the drawing begins in the turn after the last of those, before
            # the event loop has handled what it posted.
            while view.coming.laying_out():
                yield NEXT_TURN
            yield NEXT_TURN
        state, result = source if source is not None else (view.studio.state, view.studio.result)
        q_tokens, k_tokens = state.query_tokens, state.key_tokens
        n_heads = result.weights.shape[0]
        head = state.shown_head
        blocked = result.blocked
        row_title, col_title = axis_titles(state)
        selected = state.query_index if q_tokens else None
        scores = result.scores[head]
        logits = result.logits[head]
        # What the engine did, not what the switch says: additive scores are never scaled,
        # and a temperature alone divides by T, not by √d_k.
        if result.scale_factor != 1.0:
            logits_word = "scaled logits"
        elif state.temperature != 1.0:
            logits_word = "logits ÷ T"
        else:
            logits_word = "logits"
        query = f"“{short_token(q_tokens[selected])}”" if selected is not None else "(no tokens)"
        mask_note = ", causal mask" if state.causal else ""
        ready = {name: self.picture(result, name, head) for name in ("scores", "logits", "weights")}
        if ready["weights"] is not None:
            overflow = int(np.count_nonzero(ready["weights"][2].overflow))
        elif np.isfinite(result.weights[head].sum()):
            overflow = 0
        else:
            overflow = int(np.sum(~np.isfinite(result.weights[head]) & ~blocked))
        overflow_note = (f" <span style='color:#c81e1e'><b>{overflow} cell{'s' if overflow != 1 else ''} overflowed</b> "
                         f"(exp of a large logit is inf; inf/inf is undefined): compare the stable softmax.</span>"
                         if overflow else "")
        n = max(len(q_tokens), len(k_tokens))
        long_note = (f" <span style='color:#a05a00'><b>Long input ({n} tokens):</b> labels are drawn smaller "
                     f"(thinned where even that cannot fit: the axis says so) and values hidden in small cells; "
                     f"hover a cell for its numbers.</span>" if n > LONG_INPUT else "")
        heads.show_bar(n_heads, head)
        view.header.setText(
            f"scores → {logits_word} → weights{mask_note}; "
            f"the outlined row is the query {query}.{overflow_note}{long_note}")
        view.stages["scores"].set_title(scores_title(state))
        view.stages["logits"].set_title(logits_title(state, result, view.digits))
        view.stages["weights"].set_title("weights: softmax" if state.softmax != "sum" else "weights: x / Σx")
        compare = state.softmax != "stable"
        # Each stage's levels are found in its own step (or were, with its picture, off the GUI thread).
        stages = [("scores", lambda: (scores, _levels(scores), None)),
                  ("logits", lambda: (logits, _levels(logits, blocked), None)),
                  ("weights", lambda: (result.weights[head], (0.0, 1.0), None))]
        if compare:
            stages.append(("stable", lambda: (view.studio.weights_with("stable")[head], (0.0, 1.0), None)))
            view.stages["stable"].set_title("stable softmax (compare)")
        if view.canvases["stable"].isHidden() == compare:
            view.canvases["stable"].setVisible(compare)
        # A sentence of another length: the stages' labels and least sizes first, so that the window is laid
        # out once, before any of its heatmaps is painted (fitted after the drawing, each heatmap was painted
        # at the old size, then laid out and painted again, all in one long turn). The heatmaps drawn in later
        # steps are held unpainted meanwhile: each is painted once, in its own step, with its new numbers.
        # Laid out for these tokens while they were computed (a trained model's new sentence): held
        # unpainted until each is drawn below.
        held = view.coming.adopt()
        laid_out = False
        heads_aside = False
        # The shape (a row, or two above two) follows the values' widest text: chosen for these values now, a
        # change of shape is laid out here too, not at the drawing's end (a key typed, a score of -12.34).
        view.values_coming({"scores": scores, "logits": logits, "weights": result.weights[head]})
        relabelled = any([view.stages[key].set_labels(q_tokens, k_tokens) for key, _ in stages])  # every one
        if relabelled or view.reshapes():
            # A new length resizes every head's map (a dozen plots laid out again, 20-odd ms, when the stages'
            # least size is set) and often shows or hides their place: the heads are set aside (hidden, they
            # are resized when shown) until the stages are painted, and laid out in a turn of their own after
            # them, so that the new sentence is on the screen first and no turn does both.
            heads_aside = heads.shown > 0 and not heads.widget.isHidden()
            if heads_aside:
                heads.widget.hide()
            for key, _ in stages:
                view.stages[key].set_axis_titles(row_title, col_title)
            if view._fit_stages(len(q_tokens), len(k_tokens)):
                later = [view.canvases[key] for key, _ in stages]
                later += heads.canvases[: max(heads.shown, 0)] if n_heads == heads.shown else []
                fresh = [canvas for canvas in later if canvas.updatesEnabled()]
                for canvas in fresh:
                    canvas.setUpdatesEnabled(False)
                held += fresh
                laid_out = bool(fresh)

        def release(canvas):
            self.painting.append(canvas)
            if canvas in held:
                held.remove(canvas)
                canvas.setUpdatesEnabled(True)

        try:
            if view.coming.frozen:
                # Kept as it was while the numbers were computed: from now on each stage is painted in its
                # step (held until then), and the heads' place keeps its picture until its maps in sight are
                # drawn. (Thawed after the stages were drawn, the three were painted in one 60-70 ms turn.)
                view.coming.thaw(keep=heads.scroll)
            if laid_out:
                # The window laid out for the new sizes in a step of its own (after a switch of models, the
                # whole window is), its heatmaps held meanwhile: then each of them in a step.
                yield "layout"
            for key, plan in stages:
                values, levels, picture = ready.get(key) or plan()
                hm = view.stages[key]
                hm.set_axis_titles(row_title, col_title)
                hm.set_data(values, masked=blocked, row_labels=q_tokens, col_labels=k_tokens,
                            levels=levels, selected_row=selected, picture=picture)
                bar = view.stage_bars.get(key)
                if bar is not None:
                    set_bar_levels(bar, levels, view.digits)
                release(view.canvases[key])
                yield key
            while n_heads > 1 and len(heads.maps) < n_heads:
                heads.add_map()  # a dozen plots at once would freeze the window: one per step
                yield "new head"
            if heads.shown != (n_heads if n_heads > 1 else 0):
                heads.lay_out(n_heads)
                # The grid appearing or changing lays out and repaints every heatmap: a turn of its own.
                yield "heads' grid"
            if heads_aside:
                heads_aside = False
                if heads.widget.isHidden() and heads.shown > 0:
                    heads.widget.show()
                    yield "heads' place"
            for i in range(heads.shown):
                hm = heads.maps[i]
                hm.set_title(f"head {i + 1}" + (SHOWN_MARK if i == head else ""))
                hm.set_axis_titles(row_title, col_title)
                # The stages above name the rows; a head's small map gives the title's room to its labels'
                # note ("1 in 3 labelled" was cut to "1 in" beside "query").
                hm.show_row_title(False)
                values, levels, picture = self.picture(result, "head", i) or (result.weights[i], (0.0, 1.0), None)
                hm.set_data(values, masked=blocked, row_labels=q_tokens, col_labels=k_tokens,
                            levels=levels, selected_row=selected, picture=picture)
                heads.keep_labels(hm)
                if heads.canvases[i].isHidden():
                    if view.coming.frozen:
                        # The maps in sight are drawn (those out of sight were hidden while the numbers were
                        # computed): their place, kept as it was meanwhile, is painted now, in a step of its
                        # own, before the maps out of sight are laid out again.
                        view.coming.thaw()
                        yield "heads' place painted"
                    heads.canvases[i].show()
                release(heads.canvases[i])
                yield f"head {i + 1}"
            view._fit_stages(len(q_tokens), len(k_tokens))
            view._show_pinned()
            view.coming.thaw()
        finally:
            view.coming.thaw()
            view.values_coming(None)
            # A drawing left unfinished (a newer change starts another) leaves nothing unpainted.
            for canvas in held:
                canvas.setUpdatesEnabled(True)
            if heads_aside and heads.shown > 0:
                heads.widget.show()

    def prepare_paint(self) -> None:
        """Before the heatmaps drawn in the last step are painted (the window's stepped drawing calls this
        once they are laid out): their plots take their new range and size now, which pyqtgraph does when it
        paints, and which then asked for their axes to be painted a second time."""
        painting, self.painting = self.painting, []
        for canvas in painting:
            canvas.scene().prepareForPaint()
        # The column labels' angle (slanted or upright) follows the columns' width, known now that they
        # are laid out: the axis takes that height before it is painted. Found while painting, a sentence
        # whose labels turned (upright after slanted) had each stage painted three times, a turn apart.
        grown = [c for c in painting if c.isVisible() and c.heatmap.fit_column_labels()]
        if grown:
            for _ in range(LAYOUT_PASSES):
                QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.LayoutRequest)
            for canvas in grown:
                canvas.scene().prepareForPaint()
