"""Multi-head summary: each head's output, their concatenation, W_O, and the output."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from .. import presentation
from ..qt.pg import pg
from .heatmap import SCORES_CMAP, Heatmap, relabel_bar, set_bar_levels, symmetric_levels
from .heatmap_canvas import HeatmapCanvas
from .highlight import highlight_for
from ..widgets import caption_label

# Up to this many columns a map's share of the row follows the width its labels need, every one shown.
LABELLED_UP_TO = 24
DEFAULT_STRETCH = {"concat": 3, "w_o": 2, "output": 2}  # the shares of the row past that


class HeadsSummaryView(QtWidgets.QWidget):
    """How the heads come together: concat(head₁ … head_h) · W_O = output."""

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.setObjectName("headsSummaryView")
        self.studio = studio
        self.digits = presentation.digits()  # decimals of the colour bars' labels (the precision setting)
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        self.caption = caption_label("headsSummaryCaption")
        outer.addWidget(self.caption)
        row = QtWidgets.QHBoxLayout()
        self._row = row
        outer.addLayout(row, 1)
        self.maps = {"concat": Heatmap("concat(head outputs)", SCORES_CMAP),
                     "w_o": Heatmap("× W_O", SCORES_CMAP),
                     "output": Heatmap("= output", SCORES_CMAP)}
        self.canvases = {}
        for key, stretch in DEFAULT_STRETCH.items():
            canvas = HeatmapCanvas(self.maps[key])
            self.maps[key].bottom_axis.grow_when_laid_out = True  # first shown, its labels are never cut
            self.canvases[key] = canvas
            row.addWidget(canvas, stretch)
        # Vertical lines between the heads' blocks of the concatenation.
        self._separators: list[pg.InfiniteLine] = []
        # The lecturer's pointer: a highlighted query row shows here too (columns here
        # are features, not keys, so a highlighted key column does not).
        self.highlight = highlight_for(studio)
        self.highlight.changed.connect(self._apply_highlight)
        self._apply_highlight()

    def _apply_highlight(self):
        for key in ("concat", "output"):
            self.maps[key].set_highlight(self.highlight.row, None)

    def _fit_labels(self) -> None:
        """Share the row between the maps by the width each needs for every column label to show.

        The narrow "= output" map at 1280×720 labelled only 1 column in 2 (animal: 8 columns in
        110 px), and its "1 in 2" note ran into the axis title. Shares, not minimum widths: a minimum
        would raise the whole window's least width (the central area does not scroll at 100 %), and a
        1024-pixel screen would lose its right edge.
        """
        needs = {}
        for key, canvas in self.canvases.items():
            hm = self.maps[key]
            if hm.data is None or canvas.isHidden():
                continue
            cols = hm.data.values.shape[1]
            if cols > LABELLED_UP_TO:
                needs = {}  # a wide model: its labels are thinned whatever the shares; the usual ones
                break
            bar = canvas.bar.geometry().width() if canvas.bar is not None and canvas.bar.geometry().width() > 0 \
                else (60 if canvas.bar is not None else 0)
            needs[key] = int(hm.left_axis.minimumWidth() + bar + 16 + cols * hm.bottom_axis.min_label_spacing()) + 1
        if needs and "concat" in needs:
            # Each map at least its usual share of the row and what its labels need; the concatenation,
            # which shows its numbers in its cells where they fit, gets the width left over.
            room = self.contentsRect().width() - 8
            shares = sum(DEFAULT_STRETCH[k] for k in needs)
            for key in needs:
                if key != "concat":
                    needs[key] = max(needs[key], room * DEFAULT_STRETCH[key] // shares)
            needs["concat"] = max(needs["concat"], room - sum(v for k, v in needs.items() if k != "concat"))
        for key, canvas in self.canvases.items():
            stretch = needs.get(key, 0) if needs else DEFAULT_STRETCH[key]
            if self._row.stretch(self._row.indexOf(canvas)) != stretch:
                self._row.setStretchFactor(canvas, stretch)

    def resizeEvent(self, event):  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_labels()  # the concatenation's share is what the others leave

    def changeEvent(self, event):  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.FontChange:  # zoomed: the labels take more room
            self._fit_labels()

    @property
    def separators(self) -> list[float]:
        """Where the visible lines between the heads' blocks of the concatenation are (column positions)."""
        return [line.value() for line in self._separators if line.isVisible()]

    def set_digits(self, digits: int):
        """Write cell values and hover numbers with ``digits`` decimals (the precision setting)."""
        self.digits = int(digits)
        for canvas in self.canvases.values():
            canvas.digits = int(digits)
            canvas.heatmap.set_digits(int(digits))
            relabel_bar(canvas.bar, self.digits)

    def render(self):
        """Redraw from the studio's current state and result."""
        state, result = self.studio.state, self.studio.result
        q_tokens = state.query_tokens
        heads, _, d_v = result.head_outputs.shape
        concat = result.concat
        selected = state.query_index if q_tokens else None
        col_labels = [f"h{h + 1}·{j + 1}" for h in range(heads) for j in range(d_v)]
        no_mask = np.zeros(concat.shape, dtype=bool)
        lv = symmetric_levels(concat, result.output)
        self.maps["concat"].set_data(concat, masked=no_mask, row_labels=q_tokens, col_labels=col_labels,
                                     levels=lv, selected_row=selected)
        self.maps["concat"].set_axis_titles("query", "head · value")
        if state.projections:
            w_o = state.w_o
            self.maps["w_o"].set_data(w_o, masked=np.zeros(w_o.shape, dtype=bool), row_labels=col_labels,
                                      col_labels=[f"out {c + 1}" for c in range(w_o.shape[1])], levels=symmetric_levels(w_o))
            self.maps["w_o"].set_axis_titles("head · value", "output")
            self.canvases["w_o"].show()
        else:
            self.canvases["w_o"].hide()
        out = result.output
        self.maps["output"].set_data(out, masked=np.zeros(out.shape, dtype=bool), row_labels=q_tokens,
                                     col_labels=[f"out {c + 1}" for c in range(out.shape[1])], levels=lv,
                                     selected_row=selected)
        self.maps["output"].set_axis_titles("query", "output")
        # The bars first: their labels' width takes room from the heatmaps, whose labels are fitted next.
        for bar_key, levels in (("concat", lv), ("w_o", symmetric_levels(state.w_o) if state.projections else (-1, 1)),
                                ("output", lv)):
            set_bar_levels(self.canvases[bar_key].bar, levels, self.digits)
        self._fit_labels()
        plot = self.maps["concat"].plot
        while len(self._separators) < max(heads - 1, 0):
            line = pg.InfiniteLine(angle=90, pen=pg.mkPen("k", width=2))
            plot.addItem(line)
            self._separators.append(line)
        for i, line in enumerate(self._separators):
            if i < heads - 1:
                line.setValue((i + 1) * d_v - 0.5)
                line.show()
            else:
                line.hide()
        if state.projections:
            self.caption.setText(
                f"Each of the {heads} heads gives a {d_v}-number vector per token; side by side they make the "
                f"concatenation ({len(q_tokens)} × {heads * d_v}), which W_O ({heads * d_v} × {state.d_model}) "
                f"mixes into the output ({len(q_tokens)} × {state.d_model}).")
        else:
            self.caption.setText("Projections are off: one head whose output is the context vectors "
                                 "(Q = K = V = X, no W_O).")
