"""The heatmap panel: raw scores -> logits (scaled when scaling is on) -> weights of the chosen head (in
a row, or two above two where a row is too narrow for the cells' values), a head bar that chooses the
head, every head in an even grid in the height left under them, and the formula of a clicked cell."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...explain import cell_tooltip, logits_title, scores_title, stable_weight_tooltip
from ...formatting import DEFAULT_DIGITS
from .. import presentation
from .highlight import highlight_for
from .heatmap import SCORES_CMAP, SHOWN_MARK, WEIGHTS_CMAP, Heatmap, relabel_bar, set_bar_levels, symmetric_levels
from .heatmap_sizing import (  # noqa: F401 (importable from here)
    ALL_LABELS_UP_TO, GRID_PEEK, MIN_HEAD_PX, MIN_STAGE_PX, READABLE_VALUE_PX, SHORT_VIEW_PX, SMALL_SCREEN_VIEW_PX,
    StageSizing,
)
from .heatmap_parts import Prepared, _levels, heads_grid_shape  # noqa: F401 (importable from here)
from .heatmap_coming import ComingTokens, axis_titles
from .heatmap_formula import PinnedFormula
from .heatmap_canvas import TOOLTIP_MS, HeatmapCanvas  # noqa: F401 (TOOLTIP_MS: still importable from here)
from ..widgets import caption_label, short_token, view_layout

LONG_INPUT = 40  # beyond this many tokens the header says what is thinned or hidden
LAYOUT_PASSES = 8  # a plot's axes, the plot, its canvas's scene: each layout done can ask for the next


class HeatmapView(StageSizing, QtWidgets.QWidget):
    """Every attention matrix of the current state, drawn from ``studio.result``.

    ``stages`` holds the chosen head's ``scores``, ``logits`` and ``weights``
    heatmaps; ``head_maps`` one weights heatmap per head (shown when there is
    more than one head). Clicking a row selects that query token everywhere.
    """

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.setObjectName("heatmapView")
        self.studio = studio
        self.setFocusPolicy(QtCore.Qt.ClickFocus)  # Esc clears the pointer
        top = view_layout(self, spacing=2)
        self.header = caption_label("heatmapHeader")
        self.header.setAlignment(QtCore.Qt.AlignCenter)
        self.header.setToolTip("Click a row to follow another token; click a cell to keep its formula.")
        header_row = QtWidgets.QHBoxLayout()
        header_row.setSpacing(6)
        top.addLayout(header_row)
        # One tab per head: the chosen head's scores → logits → weights, one click away for every head
        # (the heads' grid below needs more height than a projector has).
        self.head_bar = QtWidgets.QTabBar()
        self.head_bar.setObjectName("headBar")
        self.head_bar.setDocumentMode(True)
        self.head_bar.setExpanding(False)
        self.head_bar.setUsesScrollButtons(True)
        self.head_bar.setElideMode(QtCore.Qt.ElideNone)
        self.head_bar.setDrawBase(False)
        self.head_bar.setToolTip("Show this head's scores, logits and weights")
        # As tall as the header's line: on a 720-pixel projector the stages need every pixel of height.
        self.head_bar.setStyleSheet("QTabBar::tab { padding: 1px 8px; min-width: 14px; }")
        self.head_bar.currentChanged.connect(self._on_head_tab)
        self.head_title = QtWidgets.QLabel("head")
        self.head_title.setObjectName("headBarTitle")
        for part in (self.head_bar, self.head_title):
            part.hide()
        header_row.addWidget(self.head_title)
        header_row.addWidget(self.head_bar)
        header_row.addWidget(self.header, 1)
        # The stages scroll only when the window is too small for their labels (a 1024 × 768 screen
        # zoomed in), rather than thin or squash them; the heads' grid has a place of its own below.
        self.scroll = QtWidgets.QScrollArea()
        self.scroll.setObjectName("heatmapScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QtWidgets.QFrame.NoFrame)
        body = QtWidgets.QWidget()
        body.setAutoFillBackground(False)
        self.scroll.setWidget(body)
        top.addWidget(self.scroll, 1)
        outer = QtWidgets.QVBoxLayout(body)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(2)
        # The stages stand in a row (scores → logits → weights); where the row is too narrow for the
        # cells' values and the view tall enough, two above two (the scores and logits, then the
        # weights): an 11-token sentence at 1366 × 768 shows every value so.
        self._stage_grid = QtWidgets.QGridLayout()
        self._stage_grid.setSpacing(0)
        outer.addLayout(self._stage_grid, 1)
        self.wrapped = False  # two above two (True) or a row
        self.stages = {
            "scores": Heatmap("raw scores q·k", SCORES_CMAP),
            "logits": Heatmap("logits", SCORES_CMAP),
            "weights": Heatmap("weights softmax", WEIGHTS_CMAP),
            # Shown only with the naive or sum softmax: what the stable one gives.
            "stable": Heatmap("stable softmax (compare)", WEIGHTS_CMAP),
        }
        self.canvases: dict[str, HeatmapCanvas] = {}
        for key, heatmap in self.stages.items():
            # Every heatmap carries its own row labels: equal widths, and each reads alone.
            heatmap.show_row_labels(True)
            canvas = HeatmapCanvas(heatmap, with_bar=key != "stable")  # stable shares the weights' 0..1 bar
            canvas.setMinimumHeight(MIN_STAGE_PX)
            self.canvases[key] = canvas
            canvas.scene().sigMouseClicked.connect(self._on_click)
            canvas.tooltip_provider = self.tooltip_for
        self._place_stages(False)
        self.scroll.viewport().installEventFilter(self)
        self.stage_bars = {key: c.bar for key, c in self.canvases.items() if c.bar is not None}
        self.canvases["stable"].hide()

        self.heads_widget = QtWidgets.QWidget()
        self.heads_widget.setObjectName("headsGrid")
        self._heads_grid = QtWidgets.QGridLayout(self.heads_widget)
        self._heads_grid.setContentsMargins(0, 0, 0, 0)
        self._heads_grid.setSpacing(0)
        # Its own scrolled place under the stages: a scroll bar there never covers a stage's colour bar.
        self.heads_scroll = QtWidgets.QScrollArea()
        self.heads_scroll.setObjectName("headsScroll")
        self.heads_scroll.setWidgetResizable(True)
        self.heads_scroll.setFrameShape(QtWidgets.QFrame.NoFrame)
        self.heads_scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        self.heads_scroll.setWidget(self.heads_widget)
        self.heads_scroll.hide()
        top.addWidget(self.heads_scroll)
        self.head_maps: list[Heatmap] = []
        self.head_canvases: list[HeatmapCanvas] = []
        self._heads_shown = -1  # nothing laid out yet
        self.grid_shape = (0, 0)  # (rows, columns) of the heads' grid

        # A clicked cell's formula stays under the heatmaps, large and selectable (PinnedFormula).
        self.formula = PinnedFormula(self)
        self.formula_panel = self.formula.panel
        top.addWidget(self.formula_panel)
        self._stage_min: dict[str, tuple[int, int, int]] = {}  # each stage's least size for its labels, its title
        self._wrapped_min: dict[str, int] = {}  # each stage's least height two stages across
        self._title_room = 0  # the rows' title's width, once measured
        # A zoom step changes the labels' font: the stages' least sizes are measured again once the
        # axes have it (restyle() gives it to them after the widgets' font, in the same turn).
        self._refit_timer = QtCore.QTimer(self)
        self._refit_timer.setSingleShot(True)
        self._refit_timer.setInterval(0)
        self._refit_timer.timeout.connect(self._refit_stages)
        self._show_pinned()

        self.highlight = highlight_for(studio)
        self.highlight.changed.connect(self._apply_highlight)
        self.digits = DEFAULT_DIGITS  # decimals in tooltips (cells keep their own, shorter ones)
        self._prepared: Prepared | None = None  # pictures made off the GUI thread (prepare)
        self._painting: list = []  # canvases drawn in the last step, to be painted (prepare_paint)
        self.coming = ComingTokens(self)  # laid out for a trained model's sentence while it is computed

    def expect(self, state) -> bool:
        """A change being computed brings ``state``'s tokens: lay the heatmaps out for them now, held
        unpainted until its numbers are drawn (None: nothing comes after all, back to what is shown)."""
        if state is None:
            self.coming.drop()
            return False
        return self.coming.expect(state)

    def set_digits(self, digits: int):
        """Write cell values, tooltips and the pinned formula with ``digits`` decimals (the precision setting)."""
        self.digits = int(digits)
        for canvas in list(self.canvases.values()) + self.head_canvases:
            canvas.digits = self.digits
            canvas.heatmap.set_digits(self.digits)
            relabel_bar(canvas.bar, self.digits)
        self._show_pinned()

    @property
    def heads_shown(self) -> int:
        """How many per-head heatmaps are laid out (0 with one head; -1 before the first render)."""
        return self._heads_shown

    # -- rendering -----------------------------------------------------------
    def _heatmaps(self):
        return list(self.stages.values()) + self.head_maps[: max(self._heads_shown, 0)]

    def _add_head_map(self) -> None:
        """Build the next head's heatmap (laid out by ``_layout_heads``)."""
        i = len(self.head_maps)
        hm = Heatmap(f"head {i + 1}", WEIGHTS_CMAP)
        hm.show_row_labels(True)
        canvas = HeatmapCanvas(hm, with_bar=False)
        # The view's own from the start (hidden until laid out): a canvas without a parent would be
        # freed by the cycle collector, not by Qt with the view (see widgets.discard).
        canvas.hide()
        canvas.setParent(self)
        canvas.setMinimumSize(MIN_HEAD_PX, MIN_HEAD_PX)
        canvas.scene().sigMouseClicked.connect(self._on_click)
        canvas.tooltip_provider = self.tooltip_for
        canvas.digits = self.digits
        if presentation.STYLE.digits is not None:  # the precision setting, once chosen
            hm.set_digits(presentation.STYLE.digits)
        hm.set_highlight(self.highlight.row, self.highlight.col)
        self.head_maps.append(hm)
        self.head_canvases.append(canvas)

    def _layout_heads(self, n: int):
        shown = n if n > 1 else 0
        if shown == self._heads_shown:
            return
        while len(self.head_maps) < n:
            self._add_head_map()
        for canvas in self.head_canvases:
            self._heads_grid.removeWidget(canvas)
            canvas.hide()
        rows, cols = heads_grid_shape(shown)
        for i in range(shown):
            # Laid out hidden, keeping its cell: each head's canvas is shown when its numbers are
            # set (render_steps), so that a dozen heads appearing paint one per step, not all at once.
            canvas = self.head_canvases[i]
            policy = canvas.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            canvas.setSizePolicy(policy)
            self._heads_grid.addWidget(canvas, i // cols, i % cols)
        # Equal stretch in every row and column: equal, square-ish cells.
        for c in range(max(self._heads_grid.columnCount(), cols)):
            self._heads_grid.setColumnStretch(c, 1 if c < cols else 0)
        for r in range(max(self._heads_grid.rowCount(), rows)):
            self._heads_grid.setRowStretch(r, 1 if r < rows else 0)
        self.heads_widget.setVisible(shown > 0)
        self.grid_shape = (rows, cols)
        self._heads_shown = shown
        self._size_heads()

    def prepare(self, state, result) -> Prepared:
        """The pictures :meth:`render_steps` will draw of ``result`` (for ``state``'s shown head and
        every head's weights), made now: NumPy only, on any thread. A background edit makes them
        beside the engine's numbers; :meth:`use_prepared` hands them over on the GUI thread."""
        head = state.shown_head
        blocked = result.blocked
        pictures, levels = {}, {}
        plan = [("scores", head, result.scores[head], _levels(result.scores[head]), self.stages["scores"]),
                ("logits", head, result.logits[head], _levels(result.logits[head], blocked), self.stages["logits"]),
                ("weights", head, result.weights[head], (0.0, 1.0), self.stages["weights"])]
        n_heads = result.weights.shape[0]
        if n_heads > 1:
            # Every head's map has the same colours and size limit as the weights stage.
            plan += [("head", i, result.weights[i], (0.0, 1.0), self.stages["weights"]) for i in range(n_heads)]
        for name, i, values, lv, heatmap in plan:
            levels[(name, i)] = lv
            pictures[(name, i)] = heatmap.prepare(values, blocked, lv)
        return Prepared(result, pictures, levels)

    def use_prepared(self, prepared: Prepared | None) -> None:
        """Draw ``prepared`` (:meth:`prepare`) when its result is the one shown; None forgets it."""
        self._prepared = prepared

    def _picture(self, result, name: str, head: int):
        """(values, levels, picture) prepared for ``result``'s ``name`` of ``head``, or None."""
        prepared = getattr(self, "_prepared", None)
        if prepared is None or prepared.result is not result or (name, head) not in prepared.pictures:
            return None
        picture = prepared.pictures[(name, head)]
        return picture.values, prepared.levels[(name, head)], picture

    def render(self):
        """Redraw from the studio's current state and result."""
        for _ in self.render_steps():
            pass

    def render_steps(self):
        """:meth:`render` one heatmap at a time: a generator that draws the next heatmap each time it
        is advanced. On a large model the window advances it once per event-loop turn, so that the
        window is painted and answers between heatmaps instead of freezing for all of them."""
        state, result = self.studio.state, self.studio.result
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
        ready = {name: self._picture(result, name, head) for name in ("scores", "logits", "weights")}
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
        self._show_head_bar(n_heads, head)
        self.header.setText(
            f"scores → {logits_word} → weights{mask_note}; "
            f"the outlined row is the query {query}.{overflow_note}{long_note}")
        self.stages["scores"].set_title(scores_title(state))
        self.stages["logits"].set_title(logits_title(state, result, self.digits))
        self.stages["weights"].set_title("weights: softmax" if state.softmax != "sum" else "weights: x / Σx")
        compare = state.softmax != "stable"
        # Each stage's levels are found in its own step (or were, with its picture, off the GUI thread).
        stages = [("scores", lambda: (scores, _levels(scores), None)),
                  ("logits", lambda: (logits, _levels(logits, blocked), None)),
                  ("weights", lambda: (result.weights[head], (0.0, 1.0), None))]
        if compare:
            stages.append(("stable", lambda: (self.studio.weights_with("stable")[head], (0.0, 1.0), None)))
            self.stages["stable"].set_title("stable softmax (compare)")
        if self.canvases["stable"].isHidden() == compare:
            self.canvases["stable"].setVisible(compare)
        # A sentence of another length: the stages' labels and least sizes first, so that the window is laid
        # out once, before any of its heatmaps is painted (fitted after the drawing, each heatmap was painted
        # at the old size, then laid out and painted again, all in one long turn). The heatmaps drawn in later
        # steps are held unpainted meanwhile: each is painted once, in its own step, with its new numbers.
        # Laid out for these tokens while they were computed (a trained model's new sentence): held
        # unpainted until each is drawn below.
        held = self.coming.adopt()
        laid_out = False
        heads_aside = False
        if any([self.stages[key].set_labels(q_tokens, k_tokens) for key, _ in stages]):  # every one of them
            # A new length resizes every head's map (a dozen plots laid out again, 20-odd ms, when the stages'
            # least size is set) and often shows or hides their place: the heads are set aside (hidden, they
            # are resized when shown) until the stages are painted, and laid out in a turn of their own after
            # them, so that the new sentence is on the screen first and no turn does both.
            heads_aside = self._heads_shown > 0 and not self.heads_widget.isHidden()
            if heads_aside:
                self.heads_widget.hide()
            for key, _ in stages:
                self.stages[key].set_axis_titles(row_title, col_title)
            if self._fit_stages(len(q_tokens), len(k_tokens)):
                later = [self.canvases[key] for key, _ in stages]
                later += self.head_canvases[: max(self._heads_shown, 0)] if n_heads == self._heads_shown else []
                fresh = [canvas for canvas in later if canvas.updatesEnabled()]
                for canvas in fresh:
                    canvas.setUpdatesEnabled(False)
                held += fresh
                laid_out = bool(fresh)

        def release(canvas):
            self._painting.append(canvas)
            if canvas in held:
                held.remove(canvas)
                canvas.setUpdatesEnabled(True)

        try:
            if self.coming.frozen:
                # Kept as it was while the numbers were computed: from now on each stage is painted in its
                # step (held until then), and the heads' place keeps its picture until its maps in sight are
                # drawn. (Thawed after the stages were drawn, the three were painted in one 60-70 ms turn.)
                self.coming.thaw(keep=self.heads_scroll)
            if laid_out:
                # The window laid out for the new sizes in a step of its own (after a switch of models, the
                # whole window is), its heatmaps held meanwhile: then each of them in a step.
                yield "layout"
            for key, plan in stages:
                values, levels, picture = ready.get(key) or plan()
                hm = self.stages[key]
                hm.set_axis_titles(row_title, col_title)
                hm.set_data(values, masked=blocked, row_labels=q_tokens, col_labels=k_tokens,
                            levels=levels, selected_row=selected, picture=picture)
                bar = self.stage_bars.get(key)
                if bar is not None:
                    set_bar_levels(bar, levels, self.digits)
                release(self.canvases[key])
                yield key
            while n_heads > 1 and len(self.head_maps) < n_heads:
                self._add_head_map()  # a dozen plots at once would freeze the window: one per step
                yield "new head"
            if self._heads_shown != (n_heads if n_heads > 1 else 0):
                self._layout_heads(n_heads)
                # The grid appearing or changing lays out and repaints every heatmap: a turn of its own.
                yield "heads' grid"
            if heads_aside:
                heads_aside = False
                if self.heads_widget.isHidden() and self._heads_shown > 0:
                    self.heads_widget.show()
                    yield "heads' place"
            for i in range(self._heads_shown):
                hm = self.head_maps[i]
                hm.set_title(f"head {i + 1}" + (SHOWN_MARK if i == head else ""))
                hm.set_axis_titles(row_title, col_title)
                # The stages above name the rows; a head's small map gives the title's room to its labels'
                # note ("1 in 3 labelled" was cut to "1 in" beside "query").
                hm.show_row_title(False)
                values, levels, picture = self._picture(result, "head", i) or (result.weights[i], (0.0, 1.0), None)
                hm.set_data(values, masked=blocked, row_labels=q_tokens, col_labels=k_tokens,
                            levels=levels, selected_row=selected, picture=picture)
                self._keep_labels(hm)
                if self.head_canvases[i].isHidden():
                    if self.coming.frozen:
                        # The maps in sight are drawn (those out of sight were hidden while the numbers were
                        # computed): their place, kept as it was meanwhile, is painted now, in a step of its
                        # own, before the maps out of sight are laid out again.
                        self.coming.thaw()
                        yield "heads' place painted"
                    self.head_canvases[i].show()
                release(self.head_canvases[i])
                yield f"head {i + 1}"
            self._fit_stages(len(q_tokens), len(k_tokens))
            self._show_pinned()
            self.coming.thaw()
        finally:
            self.coming.thaw()
            # A drawing left unfinished (a newer change starts another) leaves nothing unpainted.
            for canvas in held:
                canvas.setUpdatesEnabled(True)
            if heads_aside and self._heads_shown > 0:
                self.heads_widget.show()

    def prepare_paint(self) -> None:
        """Before the heatmaps drawn in the last step are painted (the window's stepped drawing calls this
        once they are laid out): their plots take their new range and size now, which pyqtgraph does when it
        paints, and which then asked for their axes to be painted a second time."""
        painting, self._painting = self._painting, []
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

    def _show_head_bar(self, n_heads: int, head: int) -> None:
        """One tab per head (none with one head), the shown head's current."""
        bar = self.head_bar
        blocked = bar.blockSignals(True)
        try:
            while bar.count() > n_heads:
                bar.removeTab(bar.count() - 1)
            while bar.count() < n_heads:
                bar.addTab(str(bar.count() + 1))
                bar.setTabToolTip(bar.count() - 1, f"head {bar.count()}: its scores, logits and weights")
            if 0 <= head < bar.count() and bar.currentIndex() != head:
                bar.setCurrentIndex(head)
        finally:
            bar.blockSignals(blocked)
        if bar.isHidden() == (n_heads > 1):
            bar.setVisible(n_heads > 1)
            self.head_title.setVisible(n_heads > 1)
            self._size_heads()

    def _on_head_tab(self, index: int) -> None:
        # A person chose a head: its scores, logits and weights become the stages (as the Model panel's
        # "show head" does).
        if index >= 0 and index != self.studio.state.shown_head:
            self.studio.select(head=index)

    def changeEvent(self, event):
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.FontChange:
            self._refit_timer.start()

    # -- interaction -----------------------------------------------------------
    def tooltip_for(self, heatmap: Heatmap, i: int, j: int) -> str:
        """The filled-in formula of cell (query ``i``, key ``j``) of ``heatmap``."""
        state, result = self.studio.state, self.studio.result
        head = state.shown_head
        if heatmap in self.head_maps:
            return cell_tooltip(state, result, "weights", self.head_maps.index(heatmap), i, j, digits=self.digits)
        stage = next(key for key, hm in self.stages.items() if hm is heatmap)
        if stage == "stable":
            return stable_weight_tooltip(state, result, self.studio.weights_with("stable"), head, i, j,
                                         digits=self.digits)
        return cell_tooltip(state, result, stage, head, i, j, digits=self.digits)


    def figure_widget(self) -> QtWidgets.QWidget:
        """The heatmaps alone, whole (also the parts scrolled out of sight): what a figure shows."""
        return self.scroll.widget()

    def heatmap_for(self, key: str) -> Heatmap:
        """The heatmap called ``key``: "scores", "logits", "weights", "stable" or "head N" (1-based)."""
        if key.startswith("head "):
            return self.head_maps[int(key.split()[1]) - 1]
        return self.stages[key]

    def _key_of(self, heatmap: Heatmap) -> str:
        if heatmap in self.head_maps:
            return f"head {self.head_maps.index(heatmap) + 1}"
        return next(key for key, hm in self.stages.items() if hm is heatmap)

    @property
    def pinned(self) -> tuple[str, int, int] | None:
        """(heatmap key, query, key) of the cell whose formula is pinned, or None."""
        return self.formula.pinned

    @pinned.setter
    def pinned(self, cell) -> None:
        self.formula.pinned = cell

    def formula_text(self) -> str:
        """What the formula panel shows."""
        return self.formula.text()

    def pin_formula(self, key: str, i: int, j: int) -> None:
        """Keep the formula of cell (query ``i``, key ``j``) of heatmap ``key`` in the formula panel."""
        self.formula.pin(key, i, j)
        for hm in self.head_maps[: max(self._heads_shown, 0)]:
            self._keep_labels(hm)

    def _show_pinned(self) -> None:
        self.formula.show()

    def _apply_highlight(self) -> None:
        for hm in self.stages.values():
            hm.set_highlight(self.highlight.row, self.highlight.col)
        for hm in self.head_maps:
            hm.set_highlight(self.highlight.row, self.highlight.col)
            self._keep_labels(hm)

    def _keep_labels(self, hm: Heatmap) -> None:
        """A head's small map names its query row and the pinned or pointed-at column whatever else
        it thins, no larger than the stages' labels (their floor)."""
        state = self.studio.state
        pinned = self.pinned[1:] if self.pinned is not None else (None, None)
        hm.left_axis.keep({state.query_index if state.query_tokens else None, self.highlight.row, pinned[0]})
        hm.bottom_axis.keep({self.highlight.col, pinned[1]})
        floor = self.stages["weights"].left_axis.min_label_px
        for axis in (hm.left_axis, hm.bottom_axis):
            if axis.min_label_px != floor:
                axis.min_label_px = floor
                axis.picture = None

    def resizeEvent(self, event):
        super().resizeEvent(event)
        if getattr(self, "_small", None) is not None and self._small != self._small_screen():
            self._refit_timer.start()  # the labels' floor changes with the room: their least sizes too
        self._size_stages()
        self._size_heads()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.scroll.viewport() and event.type() == QtCore.QEvent.Resize:
            self._size_stages()  # the grid took or gave back height: the stages follow
            # Much wider or narrower (the docks stepped aside or came back): whether the column labels
            # stand slanted or upright, and so the stages' least height, is measured again.
            if abs(event.size().width() - event.oldSize().width()) > 20:
                self._refit_timer.start()
        return False

    def keyPressEvent(self, event):
        if event.key() == QtCore.Qt.Key_Escape and self.highlight.active:
            self.highlight.clear()
            event.accept()
            return
        super().keyPressEvent(event)

    def _on_click(self, event):
        if event.button() != QtCore.Qt.LeftButton:
            return
        for hm in self._heatmaps():
            if hm.plot.scene() is None or hm.plot.scene() is not self.sender():
                continue
            self.setFocus(QtCore.Qt.MouseFocusReason)
            cell = hm.cell_at(event.scenePos())
            if cell is not None:
                self.pin_formula(self._key_of(hm), *cell)
                self.highlight.set(None, cell[1])  # the row is outlined as the query already
                changes = {"query": cell[0]}
                if hm in self.head_maps:
                    changes["head"] = self.head_maps.index(hm)
                self.studio.select(**changes)
                event.accept()
                return
            hit = hm.label_hit(event.scenePos())
            if hit is not None:
                kind, index = hit
                self.highlight.set(index if kind == "row" else None, index if kind == "col" else None)
            else:
                self.highlight.clear()
            event.accept()
            return
