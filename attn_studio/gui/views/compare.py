"""Compare two settings side by side, with the difference of their weights."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...formatting import DEFAULT_DIGITS, format_number
from .heatmap import SCORES_CMAP, WEIGHTS_CMAP, Heatmap, relabel_bar, set_bar_levels, symmetric_levels
from .heatmap_canvas import HeatmapCanvas
from .highlight import highlight_for
from ..widgets import caption_label

LABELLED_UP_TO = 24  # up to this many tokens each side keeps every label (the view scrolls if it must)
# mode id -> label shown to the lecturer
MODES = {
    "scale": "scaled ÷√d_k  vs  unscaled",
    "causal": "causal mask  vs  no mask",
    "temperature": "temperature A  vs  temperature B",
    "pinned": "pinned (before)  vs  now (after edits)",
}


class CompareView(QtWidgets.QWidget):
    """Weights of the chosen head under setting A and setting B, and B − A.

    Both sides and their difference come from the Studio
    (``studio.comparison``): the current state with one setting changed, or
    the pinned state (``state.pinned``: saved with the session, undoable)
    against the live one. The view only draws them.
    """

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.setObjectName("compareView")
        self.studio = studio
        self.digits = DEFAULT_DIGITS  # decimals of the caption's numbers (the precision setting)
        self._stale = False  # a setting changed while hidden: drawn again when shown
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        controls = QtWidgets.QHBoxLayout()
        outer.addLayout(controls)
        self.mode_combo = QtWidgets.QComboBox()
        self.mode_combo.setObjectName("compareMode")
        for key, label in MODES.items():
            self.mode_combo.addItem(label, key)
        self.mode_combo.setToolTip("What differs between the two sides")
        self.mode_combo.currentIndexChanged.connect(lambda _: self.render())
        self.mode_label = QtWidgets.QLabel("Compare")
        controls.addWidget(self.mode_label)
        controls.addWidget(self.mode_combo)
        self.temp_a = QtWidgets.QDoubleSpinBox()
        self.temp_b = QtWidgets.QDoubleSpinBox()
        for spin, name, value in ((self.temp_a, "compareTempA", 1.0), (self.temp_b, "compareTempB", 5.0)):
            spin.setObjectName(name)
            spin.setRange(0.05, 100.0)
            spin.setDecimals(2)
            spin.setSingleStep(0.5)
            spin.setValue(value)
            spin.setToolTip("Temperature of this side")
            spin.valueChanged.connect(lambda _: self.render())
        self.temp_label_a = QtWidgets.QLabel("T_A")
        self.temp_label_b = QtWidgets.QLabel("T_B")
        for w in (self.temp_label_a, self.temp_a, self.temp_label_b, self.temp_b):
            controls.addWidget(w)
            # Shown in temperature mode only (render): hidden from the start, they do not widen the
            # window's least width (every tab's least width is the central area's) before Compare is drawn.
            w.setVisible(False)
        self.pin_button = QtWidgets.QPushButton("Pin current as “before”")
        self.pin_button.setObjectName("comparePin")
        self.pin_button.setToolTip("Remember the model as it is now; edit it, and see before vs after")
        self.pin_button.clicked.connect(self.pin)
        controls.addWidget(self.pin_button)
        controls.addStretch(1)
        self.caption = caption_label("compareCaption")
        outer.addWidget(self.caption)
        # The three sides scroll together when their labels need more room than a small screen gives
        # (the window's docks keep theirs).
        self.scroll = QtWidgets.QScrollArea()
        self.scroll.setObjectName("compareScroll")
        self.scroll.setFrameShape(QtWidgets.QFrame.NoFrame)
        self.scroll.setWidgetResizable(True)
        sides = QtWidgets.QWidget()
        row = QtWidgets.QHBoxLayout(sides)
        row.setContentsMargins(0, 0, 0, 0)
        self.scroll.setWidget(sides)
        outer.addWidget(self.scroll, 1)
        self.maps = {"a": Heatmap("A", WEIGHTS_CMAP), "b": Heatmap("B", WEIGHTS_CMAP),
                     "diff": Heatmap("B − A", SCORES_CMAP)}
        self.canvases = {}
        for key, hm in self.maps.items():
            hm.show_row_labels(True)  # equal widths: each side carries its row labels
            canvas = HeatmapCanvas(hm, with_bar=key != "a")
            self.canvases[key] = canvas
            row.addWidget(canvas, 1)
        # The lecturer's pointer (a row or column clicked in the Attention tab) shows here too.
        self.highlight = highlight_for(studio)
        self.highlight.changed.connect(self._apply_highlight)
        self._apply_highlight()

    def _apply_highlight(self):
        for hm in self.maps.values():
            hm.set_highlight(self.highlight.row, self.highlight.col)

    @property
    def pinned(self):
        """The pinned "before" state (it lives in the studio's state), or None."""
        return self.studio.state.pinned

    def _fit_labels(self, t_q: int, t_k: int) -> None:
        # Up to LABELLED_UP_TO tokens every label shows at its full size (14 px and more): each side is
        # at least as large as its labels need, and the central area scrolls on a screen too small.
        for key, canvas in self.canvases.items():
            hm = self.maps[key]
            width = height = 0
            if t_k <= LABELLED_UP_TO:
                bar = canvas.bar.geometry().width() if canvas.bar is not None else 0
                width = int(hm.left_axis.minimumWidth() + bar + 16 + t_k * hm.bottom_axis.min_label_spacing()) + 1
            if t_q <= LABELLED_UP_TO:
                height = int(40 + hm.bottom_axis.minimumHeight() + 16 + t_q * hm.left_axis.min_label_spacing()) + 1
            size = QtCore.QSize(width, height)
            if canvas.minimumSize() != size:
                canvas.setMinimumSize(size)

    def pin(self):
        """Pin the current state as side A of the "pinned vs now" comparison (undoable)."""
        self.mode_combo.setCurrentIndex(list(MODES).index("pinned"))
        self.studio.pin()  # the studio notifies its views, this one included
        self.render()

    def set_digits(self, digits: int):
        """Write the caption's and hover numbers with ``digits`` decimals (the precision setting)."""
        self.digits = int(digits)
        for canvas in self.canvases.values():
            canvas.digits = self.digits
            canvas.heatmap.set_digits(self.digits)
            relabel_bar(canvas.bar, self.digits)
        # A hidden view computes nothing now (a comparison is a second model): it draws when shown.
        if self.isVisible():
            self.render()
        else:
            self._stale = True

    def showEvent(self, event):  # noqa: N802 (Qt's name)
        super().showEvent(event)
        if self._stale:
            self.render()
        # Drawn before it was ever shown, its axes had not measured their labels yet (at 1280×720 the
        # first Compare labelled one token in two): fitted again once they have, a turn after showing.
        QtCore.QTimer.singleShot(0, self, self._refit_labels)

    def _refit_labels(self) -> None:
        state = self.studio.state
        self._fit_labels(len(state.query_tokens), len(state.key_tokens))

    @property
    def trained(self) -> bool:
        """True while the studio is a trained model: its settings are fixed, and the comparison is always the
        trained model (the pinned "before") against the edited one."""
        return bool(getattr(self.studio, "is_trained", False))

    def comparison(self):
        """The studio's :class:`~attn_studio.changes.Comparison` for the chosen mode (None: nothing pinned);
        for a trained model, the trained model against the edited one at the shown layer and head."""
        if self.trained:
            return self.studio.comparison("pinned")
        return self.studio.comparison(self.mode_combo.currentData(), self.temp_a.value(), self.temp_b.value())

    def sides(self):
        """The (label A, result A, label B, result B) for the current mode, or None."""
        c = self.comparison()
        return None if c is None else (c.label_a, c.result_a, c.label_b, c.result_b)

    def render(self):
        """Redraw both sides and their difference for the chosen head."""
        self._stale = False
        mode = self.mode_combo.currentData()
        trained = self.trained
        # A trained model's settings are fixed: its one comparison needs no controls.
        for w in (self.mode_combo, self.pin_button, self.mode_label):
            w.setVisible(not trained)
        for w in (self.temp_label_a, self.temp_a, self.temp_label_b, self.temp_b):
            w.setVisible(mode == "temperature" and not trained)
        state = self.studio.state
        c = self.comparison()
        q_tokens, k_tokens = state.query_tokens, state.key_tokens
        if c is None:
            self.caption.setText("Press “Pin current as “before””, then edit the model: the left side keeps "
                                 "the pinned weights (the sentence must stay the same to compare).")
            empty = np.zeros((0, 0))
            for hm in self.maps.values():
                hm.set_data(empty, masked=empty.astype(bool), row_labels=[], col_labels=[], levels=(0, 1))
            return
        label_a, label_b, head, diff = c.label_a, c.label_b, c.head, c.diff
        diff_levels = symmetric_levels(diff)
        selected = state.query_index if q_tokens else None
        self.maps["a"].set_title(f"A: {label_a}")
        self.maps["b"].set_title(f"B: {label_b}")
        unchanged = self._unchanged_here(state) if trained else None
        self.maps["diff"].set_title("B − A" if unchanged is None else f"B − A: {unchanged[0]}")
        self.maps["a"].set_data(c.weights_a, masked=c.result_a.blocked, row_labels=q_tokens, col_labels=k_tokens,
                                levels=(0.0, 1.0), selected_row=selected)
        self.maps["b"].set_data(c.weights_b, masked=c.result_b.blocked, row_labels=q_tokens, col_labels=k_tokens,
                                levels=(0.0, 1.0), selected_row=selected)
        self.maps["diff"].set_data(diff, masked=c.blocked_both, row_labels=q_tokens,
                                   col_labels=k_tokens, levels=diff_levels, selected_row=selected)
        for key in ("b", "diff"):
            bar = self.canvases[key].bar
            levels = (0.0, 1.0) if key == "b" else diff_levels
            set_bar_levels(bar, levels, self.digits)
        self._fit_labels(len(q_tokens), len(k_tokens))
        where = f"layer {state.layer_index + 1}, head {head + 1}" if trained else f"head {head + 1}"
        self.caption.setText(
            f"Weights of {where}. A = {label_a}, B = {label_b}. "
            f"The largest change of a weight is {format_number(c.largest, self.digits)}; "
            "in B − A, brown marks weights that grew from A to B and blue those that shrank."
            + ("" if unchanged is None else f" {unchanged[1]}"))

    def _unchanged_here(self, state) -> tuple[str, str] | None:
        """(short, long) words for a trained model's layer whose attention no edit can change (a head
        silenced in this layer or above changes what its layer passes on, not attention), else None."""
        first = state.edits.first_attention_changed()
        if first is None or state.layer_index >= first:
            return None
        why = ("No weight changes here: a silenced or scaled head (or an edited W_V) changes what its layer "
               "passes on, not attention in that layer or the layers below.")
        if first >= state.layers:
            return "unchanged (the edits are in the last layer)", why + " The edits are in the last layer: " \
                "no layer's attention changes, only the output."
        return f"unchanged below layer {first + 1}", why + f" Attention changes from layer {first + 1} on."
