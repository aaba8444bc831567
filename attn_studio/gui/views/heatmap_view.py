"""The heatmap panel: raw scores -> scaled logits -> weights of the chosen head, then every head."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...explain import cell_tooltip, logits_title, scores_title, stable_weight_tooltip
from ...formatting import DEFAULT_DIGITS, format_number
from .._pg import cache_static, pg
from .heatmap import SCORES_CMAP, SHOWN_MARK, WEIGHTS_CMAP, Heatmap, symmetric_levels
from ..widgets import caption_label, view_layout

HEADS_PER_ROW = 4
LONG_INPUT = 40  # beyond this many tokens the header says what is thinned or hidden


class HeatmapCanvas(pg.GraphicsLayoutWidget):
    """One heatmap with its colour bar, as a widget (Qt layouts share space predictably).

    Right-click asks the window that holds it (``show_heatmap_menu``) to offer
    saving or copying the matrix.
    """

    def __init__(self, heatmap: Heatmap, with_bar: bool = True):
        super().__init__()
        self.heatmap = heatmap
        # Room above and below for the colour bar's end labels ("1.0", "0").
        self.ci.layout.setContentsMargins(2, 8, 2, 6)
        self.addItem(heatmap.plot, row=0, col=0)
        self.bar = None
        if with_bar:
            self.bar = pg.ColorBarItem(values=(0, 1), colorMap=heatmap.colormap, interactive=False, width=10)
            heatmap.bar = self.bar
            cache_static(self.bar, *(self.bar.getAxis(n) for n in ("left", "right", "top", "bottom")))
            self.addItem(self.bar, row=0, col=1)
        self.setSizePolicy(QtWidgets.QSizePolicy.Expanding, QtWidgets.QSizePolicy.Expanding)
        self.setMinimumSize(120, 120)
        # Hovering a cell explains it: ``tooltip_provider(heatmap, i, j)`` when a
        # view gives one (formulas), else the cell's labels and exact value.
        self.tooltip_provider = None
        self.digits = DEFAULT_DIGITS  # decimals of the tooltip's number
        self.scene().sigMouseMoved.connect(self._on_hover)
        # Images, cell rectangles and hatching gain nothing from antialiasing (text
        # keeps its own); without it a repaint of the canvas costs a third less.
        self.setAntialiasing(False)

    def tooltip_text(self, i: int, j: int) -> str:
        """What hovering cell (row ``i``, column ``j``) shows."""
        if self.tooltip_provider is not None:
            return self.tooltip_provider(self.heatmap, i, j)
        data = self.heatmap.data
        if data is None:
            return ""
        rows, cols = data.row_labels, data.col_labels
        where = f"{rows[i] if i < len(rows) else i + 1} → {cols[j] if j < len(cols) else j + 1}"
        if data.masked[i, j]:
            return f"{self.heatmap.title}\n{where}: masked"
        return f"{self.heatmap.title}\n{where}: {format_number(data.values[i, j], self.digits)}"

    def _on_hover(self, scene_pos):
        cell = self.heatmap.cell_at(scene_pos)
        if cell is None:
            QtWidgets.QToolTip.hideText()
            return
        text = self.tooltip_text(*cell)
        if text:
            QtWidgets.QToolTip.showText(self.mapToGlobal(self.mapFromScene(scene_pos)), text, self)

    def contextMenuEvent(self, event):
        # The window that holds this canvas offers to save or copy its matrix.
        handler = getattr(self.window(), "show_heatmap_menu", None)
        if handler is not None:
            handler(self, event.pos())
        event.accept()


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
        outer = view_layout(self, spacing=2)
        self.header = caption_label("heatmapHeader")
        self.header.setAlignment(QtCore.Qt.AlignCenter)
        outer.addWidget(self.header)
        stage_row = QtWidgets.QHBoxLayout()
        stage_row.setSpacing(0)
        outer.addLayout(stage_row, 3)
        self.stages = {
            "scores": Heatmap("raw scores q·k", SCORES_CMAP),
            "logits": Heatmap("scaled logits", SCORES_CMAP),
            "weights": Heatmap("weights softmax", WEIGHTS_CMAP),
            # Shown only with the naive or sum softmax: what the stable one gives.
            "stable": Heatmap("stable softmax (compare)", WEIGHTS_CMAP),
        }
        self.canvases: dict[str, HeatmapCanvas] = {}
        for col, (key, heatmap) in enumerate(self.stages.items()):
            heatmap.show_row_labels(col == 0)
            canvas = HeatmapCanvas(heatmap, with_bar=key != "stable")  # stable shares the weights' 0..1 bar
            self.canvases[key] = canvas
            stage_row.addWidget(canvas, 1)
            canvas.scene().sigMouseClicked.connect(self._on_click)
            canvas.tooltip_provider = self.tooltip_for
        self.stage_bars = {key: c.bar for key, c in self.canvases.items() if c.bar is not None}
        self.stages["stable"].show_row_labels(False)
        self.canvases["stable"].hide()

        self.heads_widget = QtWidgets.QWidget()
        self._heads_grid = QtWidgets.QGridLayout(self.heads_widget)
        self._heads_grid.setContentsMargins(0, 0, 0, 0)
        self._heads_grid.setSpacing(0)
        outer.addWidget(self.heads_widget, 2)
        self.head_maps: list[Heatmap] = []
        self.head_canvases: list[HeatmapCanvas] = []
        self._heads_shown = -1  # nothing laid out yet
        self._outer = outer
        self.digits = DEFAULT_DIGITS  # decimals in tooltips (cells keep their own, shorter ones)

    def set_digits(self, digits: int):
        """Write tooltip numbers with ``digits`` decimals (the precision setting)."""
        self.digits = int(digits)
        for canvas in list(self.canvases.values()) + self.head_canvases:
            canvas.digits = self.digits

    @property
    def heads_shown(self) -> int:
        """How many per-head heatmaps are laid out (0 with one head; -1 before the first render)."""
        return self._heads_shown

    # -- rendering -----------------------------------------------------------
    def _heatmaps(self):
        return list(self.stages.values()) + self.head_maps[: max(self._heads_shown, 0)]

    def _layout_heads(self, n: int):
        shown = n if n > 1 else 0
        if shown == self._heads_shown:
            return
        while len(self.head_maps) < n:
            i = len(self.head_maps)
            hm = Heatmap(f"head {i + 1}", WEIGHTS_CMAP)
            canvas = HeatmapCanvas(hm, with_bar=False)
            canvas.scene().sigMouseClicked.connect(self._on_click)
            canvas.tooltip_provider = self.tooltip_for
            canvas.digits = self.digits
            self.head_maps.append(hm)
            self.head_canvases.append(canvas)
        for canvas in self.head_canvases:
            self._heads_grid.removeWidget(canvas)
            canvas.hide()
        for i in range(shown):
            canvas = self.head_canvases[i]
            self.head_maps[i].show_row_labels(i % HEADS_PER_ROW == 0)
            self._heads_grid.addWidget(canvas, i // HEADS_PER_ROW, i % HEADS_PER_ROW)
            canvas.show()
        for col in range(HEADS_PER_ROW):
            self._heads_grid.setColumnStretch(col, 1 if col < min(shown, HEADS_PER_ROW) else 0)
        rows = (shown - 1) // HEADS_PER_ROW + 1 if shown else 0
        self.heads_widget.setVisible(shown > 0)
        self._outer.setStretch(2, 2 * rows)  # 0: header, 1: stages, 2: heads
        self._heads_shown = shown

    def render(self):
        """Redraw from the studio's current state and result."""
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
        head_label = f"head {head + 1}: " if n_heads > 1 else ""
        # What the engine did, not what the switch says: additive scores are never scaled.
        scaled = result.scale_factor != 1.0 or state.temperature != 1.0
        query = f"“{q_tokens[selected]}”" if selected is not None else "(no tokens)"
        mask_note = ", causal mask" if state.causal else ""
        overflow = int(np.sum(~np.isfinite(result.weights[head]) & ~blocked))
        overflow_note = (f" <span style='color:#c81e1e'><b>{overflow} cell{'s' if overflow != 1 else ''} overflowed</b> "
                         f"(exp of a large logit is inf; inf/inf is undefined): compare the stable softmax.</span>"
                         if overflow else "")
        n = max(len(q_tokens), len(k_tokens))
        long_note = (f" <span style='color:#a05a00'><b>Long input ({n} tokens):</b> labels are thinned to fit and "
                     f"values hidden in small cells; hover a cell for its numbers.</span>" if n > LONG_INPUT else "")
        self.header.setText(
            f"<b>{head_label}</b>scores → {'scaled ' if scaled else ''}logits → weights{mask_note}; "
            f"the outlined row is the query {query}. Click a row to follow another token.{overflow_note}{long_note}")
        self.stages["scores"].set_title(scores_title(state))
        self.stages["logits"].set_title(logits_title(state, result, self.digits))
        self.stages["weights"].set_title("weights: softmax" if state.softmax != "sum" else "weights: x / Σx")
        lv_scores = symmetric_levels(scores)
        lv_logits = symmetric_levels(np.where(blocked, np.nan, logits))
        compare = state.softmax != "stable"
        stages = [("scores", scores, lv_scores), ("logits", logits, lv_logits), ("weights", result.weights[head], (0.0, 1.0))]
        if compare:
            stages.append(("stable", self.studio.weights_with("stable")[head], (0.0, 1.0)))
            self.stages["stable"].set_title("stable softmax (compare)")
        if self.canvases["stable"].isHidden() == compare:
            self.canvases["stable"].setVisible(compare)
        for key, values, levels in stages:
            hm = self.stages[key]
            hm.set_axis_titles(row_title, col_title)
            hm.set_data(values, masked=blocked, row_labels=q_tokens, col_labels=k_tokens,
                        levels=levels, selected_row=selected)
            bar = self.stage_bars.get(key)
            if bar is not None and tuple(bar.levels()) != tuple(levels):
                bar.setLevels(values=levels)
        self._layout_heads(n_heads)
        for i in range(self._heads_shown):
            hm = self.head_maps[i]
            hm.set_title(f"head {i + 1}" + (SHOWN_MARK if i == head else ""))
            hm.set_axis_titles(row_title, col_title)
            hm.set_data(result.weights[i], masked=blocked, row_labels=q_tokens, col_labels=k_tokens,
                        levels=(0.0, 1.0), selected_row=selected)

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


    def _on_click(self, event):
        if event.button() != QtCore.Qt.LeftButton:
            return
        for hm in self._heatmaps():
            if hm.plot.scene() is None:
                continue
            if hm.plot.scene() is not self.sender():
                continue
            cell = hm.cell_at(event.scenePos())
            if cell is not None:
                changes = {"query": cell[0]}
                if hm in self.head_maps:
                    changes["head"] = self.head_maps.index(hm)
                self.studio.select(**changes)
                event.accept()
                return
