"""The heatmap panel: raw scores -> logits (scaled when scaling is on) -> weights of the chosen head (in
a row, or two above two where a row is too narrow for the cells' values), a head bar that chooses the
head, every head in an even grid in the height left under them, and the formula of a clicked cell."""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...explain import cell_tooltip, logits_title, scores_title, stable_weight_tooltip
from ...formatting import DEFAULT_DIGITS
from .. import presentation
from .highlight import highlight_for
from .heatmap import SCORES_CMAP, SHOWN_MARK, WEIGHTS_CMAP, Heatmap, relabel_bar, set_bar_levels, symmetric_levels
from .token_axis import MIN_LABEL_PX, SMALL_SCREEN_LABEL_PX
from .heatmap_parts import Prepared, _levels, heads_grid_shape  # noqa: F401 (importable from here)
from .heatmap_canvas import TOOLTIP_MS, HeatmapCanvas  # noqa: F401 (TOOLTIP_MS: still importable from here)
from ..widgets import caption_label, short_token, view_layout

ALL_LABELS_UP_TO = 24  # up to this many tokens the stages keep every label (and scroll if they must):
# a trained model's sentence of a dozen words is 16-20 tokens with [CLS] and [SEP]
LONG_INPUT = 40  # beyond this many tokens the header says what is thinned or hidden
SMALL_SCREEN_VIEW_PX = 900  # views narrower than this (1024 × 768: 736 px) let stage labels go below 14 px
MIN_STAGE_PX = 240  # below this the stages scroll rather than thin a dozen labels
MIN_HEAD_PX = 200   # side of one head's heatmap in the grid
# The heads' grid has its own place under the stages, never taking their least height: a whole row of
# heads where it fits, else what is left (it scrolls there), and none where less than this is left (the
# head bar beside the title reaches every head).
GRID_PEEK = 120
READABLE_VALUE_PX = 9.0  # cell values smaller than this in a row: the stages go two above two if that writes them larger
LAYOUT_PASSES = 8  # a plot's axes, the plot, its canvas's scene: each layout done can ask for the next
SHORT_VIEW_PX = 560  # a view shorter than this (a 720-pixel projector) gives the formula panel's room to the stages


class HeatmapView(QtWidgets.QWidget):
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

        # A clicked cell's formula stays here, large and selectable, until another cell is clicked.
        # Read-only text: selectable, and it scrolls when a wide model's formula is long,
        # instead of squeezing the heatmaps.
        self.formula_panel = QtWidgets.QPlainTextEdit()
        self.formula_panel.setObjectName("formulaPanel")
        self.formula_panel.setReadOnly(True)
        self.formula_panel.setTextInteractionFlags(QtCore.Qt.TextSelectableByMouse |
                                                   QtCore.Qt.TextSelectableByKeyboard)
        self.formula_panel.setLineWrapMode(QtWidgets.QPlainTextEdit.WidgetWidth)
        self.formula_panel.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Fixed)
        font = QtGui.QFont(self.formula_panel.font())
        font.setPointSizeF(max(font.pointSizeF() * 1.2, 12.0))
        self.formula_panel.setFont(font)
        lines = 3  # the usual formula (where, score, weight); a longer one scrolls
        self.formula_panel.setFixedHeight(int(QtGui.QFontMetrics(font).lineSpacing() * lines + 14))
        top.addWidget(self.formula_panel)
        self.pinned: tuple[str, int, int] | None = None  # (heatmap key, query, key) of the pinned formula
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
        row_title = "query (decoder)" if state.cross else "query"
        col_title = "key (encoder)" if state.cross else "key"
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
        held = []
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
                held = [canvas for canvas in later if canvas.updatesEnabled()]
                for canvas in held:
                    canvas.setUpdatesEnabled(False)

        def release(canvas):
            self._painting.append(canvas)
            if canvas in held:
                held.remove(canvas)
                canvas.setUpdatesEnabled(True)

        try:
            if held:
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
                    self.head_canvases[i].show()
                release(self.head_canvases[i])
                yield f"head {i + 1}"
            self._fit_stages(len(q_tokens), len(k_tokens))
            self._show_pinned()
        finally:
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

    def _small_screen(self) -> bool:
        # Narrower than the views get on a 1280-pixel screen (a 1024 × 768 projector): there the
        # three stages stay whole with labels below 14 px rather than scroll.
        return self.scroll.viewport().width() < SMALL_SCREEN_VIEW_PX

    def _fit_stages(self, t_q: int, t_k: int) -> bool:
        """Give each stage the least size its labels need for ``t_q`` × ``t_k`` tokens; True when a size changed."""
        floor = SMALL_SCREEN_LABEL_PX if self._small_screen() else MIN_LABEL_PX
        self._small = self._small_screen()
        for hm in self.stages.values():
            for axis in (hm.left_axis, hm.bottom_axis):
                if axis.min_label_px != floor:
                    axis.min_label_px = floor
                    axis.picture = None
                    axis.update()
        # Up to a dozen tokens every label of the chosen head's stages shows: each
        # stage is at least wide and tall enough for its labels, and the panel
        # scrolls (with a visible bar) on a screen too small for that.
        for key, canvas in self.canvases.items():
            hm = self.stages[key]
            width, height = 120, MIN_STAGE_PX
            # The rows' title ("query") beside the labels, which a narrow screen leaves out.
            title = hm.left_axis.label.boundingRect().height() + 4 if hm.left_axis.label.isVisible() else 0
            if t_k <= ALL_LABELS_UP_TO:
                # Axes, colour bar and margins: measured once laid out, else the axes'
                # sizes as set (their geometry follows one layout pass later) and a bar's.
                bar = canvas.bar.geometry().width() if canvas.bar is not None and canvas.bar.geometry().width() > 0 \
                    else (60 if canvas.bar is not None else 0)
                chrome = hm.left_axis.minimumWidth() + bar + 16  # margins and spacing of the canvas
                # A few per cent to spare: a zoomed font's line is not exactly the floor's (MiniLM's
                # columns at 115 % were thinned to 1 in 2 at the bare least width).
                width = int(chrome - title + t_k * hm.bottom_axis.min_label_spacing() * 1.08) + 1
            if t_q <= ALL_LABELS_UP_TO:
                # The column labels' height at the angle they will be drawn at: upright where the stage's
                # width leaves too little room for slanted ones (MiniLM's 16 tokens at 1280 × 720), and
                # upright labels are taller (measured as slanted, the rows were thinned to 1 in 2).
                axis = hm.bottom_axis
                labels_h = wrapped_h = axis.minimumHeight()
                heights = getattr(axis, "_heights", None)
                if heights and t_k > 1:
                    slanted = t_k * axis.label_spacing() * (1 - axis.slack)
                    chrome_w = hm.left_axis.minimumWidth() + 76
                    for cols in (None, 2):  # in a row, and two stages across
                        shown = max(sum(not c.isHidden() for c in self.canvases.values()), 1)
                        across = self.scroll.viewport().width() / (cols or shown)
                        need = heights[90] if max(width, across) - chrome_w < slanted else heights[axis.ANGLE]
                        if cols is None:
                            labels_h = max(labels_h, need)
                        else:
                            wrapped_h = max(wrapped_h, need)
                rows_h = t_q * hm.left_axis.min_label_spacing()
                height = max(height, int(40 + labels_h + 16 + rows_h) + 1)  # title, column labels, margins
                self._wrapped_min[key] = max(MIN_STAGE_PX, int(40 + wrapped_h + 16 + rows_h) + 1)
            self._stage_min[key] = (width, height, int(title or self._title_room))
            self._title_room = max(self._title_room, int(title))
        changed = self._size_stages()
        self._size_heads()
        return changed

    def _refit_stages(self) -> None:
        state = self.studio.state
        self._fit_stages(len(state.query_tokens), len(state.key_tokens))

    def changeEvent(self, event):
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.FontChange:
            self._refit_timer.start()

    def _place_stages(self, wrapped: bool) -> None:
        """Lay the stages out in a row, or (``wrapped``) two above two."""
        grid = self._stage_grid
        for key, canvas in self.canvases.items():
            grid.removeWidget(canvas)
        for i, key in enumerate(self.canvases):
            grid.addWidget(self.canvases[key], *(divmod(i, 2) if wrapped else (0, i)))
        # No stretch factors: the (expanding) stages share alike, and the column of a hidden stage (the
        # stable softmax's, most of the time) takes no room.
        self.wrapped = wrapped

    def _layout_shape(self) -> tuple[int, int]:
        """(rows, columns) of the stages as laid out."""
        shown = sum(not c.isHidden() for c in self.canvases.values())
        return (2, 2) if self.wrapped else (1, max(shown, 1))

    def _values_px(self, rows: int, cols: int, width: float, height: float) -> float:
        """The size of the smallest stage's cell values (pixels) with the stages ``rows`` × ``cols`` in
        ``width`` × ``height``: each stage's axes and colour bar as now, the rest its cells."""
        state = self.studio.state
        t_q, t_k = max(len(state.query_tokens), 1), max(len(state.key_tokens), 1)
        smallest = math.inf
        for key, canvas in self.canvases.items():
            if canvas.isHidden():
                continue
            hm = self.stages[key]
            box = hm.plot.vb.size() if hm.plot.vb is not None else QtCore.QSizeF()
            chrome_w = canvas.width() - box.width() if box.width() > 1 else 160
            chrome_h = canvas.height() - box.height() if box.height() > 1 else 130
            cell_w = (width / cols - chrome_w) / t_k
            cell_h = (height / rows - chrome_h) / t_q
            em = hm.overlay._chars  # the widest value, in ems of the cells' font
            smallest = min(smallest, cell_h * hm.overlay.line_share, (cell_w - 3) / (em + 0.15))
        return smallest

    def _choose_shape(self, room: int) -> None:
        """Two above two where the row leaves the values unreadable and two rows of stages, each with
        every label, fit ``room`` pixels of height and write them larger; else a row."""
        state = self.studio.state
        t = max(len(state.query_tokens), len(state.key_tokens))
        visible = [c for c in self.canvases.values() if not c.isHidden()]
        width = self.scroll.viewport().width()
        least = max((self._wrapped_min.get(k, MIN_STAGE_PX) for k, c in self.canvases.items()
                     if not c.isHidden()), default=MIN_STAGE_PX)
        wrap = False
        if 1 < t <= ALL_LABELS_UP_TO and len(visible) >= 3 and room >= 2 * least:
            in_row = self._values_px(1, len(visible), width, room)
            wrap = in_row < READABLE_VALUE_PX and self._values_px(2, 2, width, room) > in_row + 0.5
        if wrap != self.wrapped:
            self._place_stages(wrap)

    def _size_stages(self) -> bool:
        # The stages come first: as tall as square-ish cells make them, up to the whole
        # viewport; the heads' grid gets the rest (and scrolls below them).
        visible = [key for key, c in self.canvases.items() if not c.isHidden()]
        viewport = self.scroll.viewport().size()
        rows, cols = self._layout_shape()
        across = viewport.width() / cols
        wanted = min(int(across * 0.95), viewport.height() // rows)
        # On a narrow screen (1024 pixels) the rows' titles give their room to the cells,
        # on every stage alike, so that the three stay as wide as each other.
        least = [self._stage_min.get(key, (120, MIN_STAGE_PX, 0)) for key in visible]
        narrow = sum(w + t for w, _, t in least[:cols]) > viewport.width()
        changed = False
        for key, canvas in self.canvases.items():
            self.stages[key].show_row_title(not narrow)
            width, height, title = self._stage_min.get(key, (120, MIN_STAGE_PX, 0))
            if self.wrapped:
                height = self._wrapped_min.get(key, height)
            size = QtCore.QSize(width + (0 if narrow else title), max(height, wanted))
            if canvas.minimumSize() != size:
                canvas.setMinimumSize(size)
                changed = True
        return changed

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

    def _set_formula(self, text: str) -> None:
        # Unchanged text is left alone: a selection the lecturer made survives a redraw.
        if self.formula_panel.toPlainText() != text:
            self.formula_panel.setPlainText(text)

    def formula_text(self) -> str:
        """What the formula panel shows."""
        return self.formula_panel.toPlainText()

    def pin_formula(self, key: str, i: int, j: int) -> None:
        """Keep the formula of cell (query ``i``, key ``j``) of heatmap ``key`` in the formula panel."""
        self.pinned = (key, int(i), int(j))
        self._show_pinned()
        for hm in self.head_maps[: max(self._heads_shown, 0)]:
            self._keep_labels(hm)

    def _show_pinned(self) -> None:
        if self.pinned is None:
            self._set_formula("Click a cell to keep its formula here; hover a cell to see it.")
            return
        key, i, j = self.pinned
        result = self.studio.result
        heads = result.weights.shape[0]
        t_q, t_k = result.weights.shape[1:]
        head_gone = key.startswith("head ") and (heads < 2 or int(key.split()[1]) > heads)
        stage_gone = key == "stable" and self.canvases["stable"].isHidden()
        if head_gone or stage_gone or not (i < t_q and j < t_k):
            self._set_formula(
                f"The pinned cell ({key}, query {i + 1}, key {j + 1}) no longer exists: click another cell.")
            return
        # The tooltip's first line names the query and key; "pinned" says why it stays.
        self._set_formula(f"Pinned, {key}: " + self.tooltip_for(self.heatmap_for(key), i, j))

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

    def _size_heads(self) -> None:
        """Share the height under the header: the stages first, whole; the heads' grid below them in what
        is left (GRID_PEEK or more; else the head bar reaches every head), a row of heads whole where it
        fits, scrolling in its own place."""
        top = self.layout()
        spacing = top.spacing()
        margins = top.contentsMargins()
        header = max(self.header.height(), 0 if self.head_bar.isHidden() else self.head_bar.sizeHint().height())
        taken = margins.top() + margins.bottom() + header + spacing
        room = self.height() - taken  # for the stages, the grid and the pinned formula
        self._choose_shape(room)
        # On a short screen, or where the stages stand two above two, the pinned formula gives its
        # room to the stages (hovering a cell still shows its formula).
        formula = not self.wrapped and self.height() >= SHORT_VIEW_PX
        if self.formula_panel.isHidden() == formula:
            self.formula_panel.setVisible(formula)
        if formula:
            room -= self.formula_panel.height() + spacing
        least = self.stages_least_height()
        one = max((self._stage_min.get(k, (120, MIN_STAGE_PX, 0))[1] for k, c in self.canvases.items()
                   if not c.isHidden()), default=MIN_STAGE_PX)
        head_least = max(MIN_HEAD_PX, one)  # a head carries the same labels as a stage in a row
        # Stages wider than the view (MiniLM's 16 tokens at 1366 px) scroll sideways: their bar's height too.
        if self.scroll.widget().minimumSizeHint().width() > self.scroll.viewport().width() + 1 \
                or self.scroll.horizontalScrollBar().isVisible():
            least += self.scroll.horizontalScrollBar().sizeHint().height()
        rows, cols = self.grid_shape
        show = self._heads_shown > 0 and room - least - spacing >= GRID_PEEK
        if show:
            rows_, cols_ = self._layout_shape()
            across = self.scroll.viewport().width() / cols_
            # A whole row of heads where it fits beside the stages' least; else what is left, scrolled.
            wanted = min(head_least, room - spacing - least)
            stages = max(least, min(int(across * 0.95) * rows_, room - spacing - wanted))
            grid = room - spacing - stages
            # Square-ish cells: as tall as about 0.8 of their width (labels included), never shorter
            # than their labels need; a row of heads fits the place, further rows scroll in it.
            width = self.scroll.viewport().width() / cols
            side = int(max(head_least, width * 0.5 + 1, min(width * 0.8, 420, grid)))
            for canvas in self.head_canvases[: self._heads_shown]:
                if canvas.minimumHeight() != side:
                    canvas.setMinimumHeight(side)
            grid = min(grid, rows * side)
            if self.heads_scroll.maximumHeight() != grid:
                self.heads_scroll.setFixedHeight(grid)
        if self.heads_scroll.isHidden() == show:
            self.heads_scroll.setVisible(show)

    def stages_least_height(self) -> int:
        """The least height of the stages with every label (their place scrolls below it)."""
        shown = [self._stage_min.get(key, (120, MIN_STAGE_PX, 0))[1] for key, c in self.canvases.items()
                 if not c.isHidden()]
        if self.wrapped:
            shown = [self._wrapped_min.get(key, MIN_STAGE_PX) for key, c in self.canvases.items() if not c.isHidden()]
            return 2 * max(shown, default=MIN_STAGE_PX)
        return max(shown, default=MIN_STAGE_PX)

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
