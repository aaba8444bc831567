"""How far each layer's output moved from the trained model: an ablation seen propagating upward.

Per layer, the mean cosine distance between the token vectors of the edited
run and of the trained run (``ModelRun.drift``, computed before it reaches
the view). Layer 0 is the embeddings; layers count from 1 as on screen.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...formatting import format_number
from .. import presentation
from ..qt.pg import cache_static, pg

BAR_BRUSH = (60, 110, 200)
# The y axis ends at the first of these that holds the tallest bar: a fixed, stated scale, so a
# distance of 0.003 stays a sliver (it is one) instead of filling the plot as an auto-range would.
SCALE_TOPS = (0.05, 0.1, 0.2, 0.5, 1.0)
EDIT_PEN = (230, 60, 20)


def scale_top(top: float) -> float:
    """The top of the drift plot's y axis for a tallest bar of ``top``: the first of ``SCALE_TOPS`` that holds it."""
    return next((t for t in SCALE_TOPS if top <= t), SCALE_TOPS[-1])


def scale_ticks(top: float) -> list:
    """The y axis's ticks for a scale of 0 to ``top`` (one of ``SCALE_TOPS``): five steps, each a
    multiple of 0.01, written with two decimals at either precision so that the axis keeps one
    form (an automatic axis wrote 0.005 and 0.015 beside the setting's two decimals)."""
    return [[(v, format_number(v, 2)) for v in np.linspace(0.0, top, 6)], []]


class DriftPlot(QtWidgets.QWidget):
    """Bars of the mean cosine distance from the trained model after the embeddings and each layer."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("driftPlot")
        self._drift: np.ndarray | None = None
        self._edited: tuple = ()
        self._names: dict = {}
        self._range_key = None  # (bars, y top) the axes were last drawn for
        self.header = QtWidgets.QLabel()
        self.header.setObjectName("driftHeader")
        self.header.setWordWrap(True)
        self.canvas = pg.PlotWidget()
        self.canvas.setObjectName("driftCanvas")
        self.canvas.setMinimumSize(320, 220)
        self.plot = self.canvas.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.setTitle("How far each layer moved from the trained model")
        self.plot.setLabel("bottom", "layer (0 = embeddings)")
        self.plot.setLabel("left", "mean cosine distance")
        self.plot.showGrid(y=True, alpha=0.25)
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.7, brush=BAR_BRUSH, pen=None)
        self.plot.addItem(self.bars)
        # One dashed line per edited layer, labelled with its edited heads; one value over each bar.
        self.edit_lines: list = []
        self.value_labels: list = []
        self.plot.getAxis("left").enableAutoSIPrefix(False)  # the numbers as they are, not "×0.001"
        cache_static(self.plot.getAxis("bottom"), self.plot.getAxis("left"))
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.canvas, 1)
        self.show_drift(None)

    @property
    def drift(self) -> np.ndarray | None:
        """The distances shown now, ``(layers + 1,)``; None when nothing is shown."""
        return self._drift

    @property
    def edited_layers(self) -> tuple:
        """The edited model layers (0-based) the plot marks, lowest first."""
        return self._edited

    @property
    def edit_names(self) -> dict:
        """What is edited per model layer (0-based), as ``Edits.edit_names`` gives it."""
        return dict(self._names)

    def set_digits(self, digits: int) -> None:
        """Write the header and tooltip again at the precision setting (``presentation.set_digits``)."""
        if self._drift is not None:
            self.show_drift(self._drift, self._edited, edits=self._names)

    def show_drift(self, drift, edited_layers=(), edits=None) -> None:
        """Draw ``drift (layers + 1,)`` with its value over each bar; mark every edited layer with a
        dashed line named by its edits. ``edits`` is ``Edits.edit_names()`` (layer → names, 0-based);
        without it, ``edited_layers`` (0-based) are marked with their numbers only."""
        if drift is None:
            self._drift, self._edited, self._names = None, (), {}
            self.bars.setOpts(x=[], height=[])
            self._mark_edits({})
            self._write_values(np.zeros(0), 1.0, 2)
            self.header.setText("No trained model: nothing to compare.")
            return
        drift = np.asarray(drift, dtype=np.float64)
        digits = presentation.digits()
        names = {int(l): list(v) for l, v in (edits or {}).items()}
        layers = set(names) | {int(l) for l in edited_layers}
        self._drift, self._edited = drift, tuple(sorted(layers))
        self._names = {l: names.get(l, []) for l in self._edited}
        x = np.arange(drift.size)
        self.bars.setOpts(x=x, height=drift, width=0.7)
        top = float(drift.max()) if drift.size else 0.0
        # The axes are redrawn only when their range or ticks change: the y range is one of a few
        # fixed scales (it holds still while the lecturer types, and small stays small).
        view = (drift.size, scale_top(top))
        if view != self._range_key:
            self._range_key = view
            self.plot.getAxis("bottom").setTicks([[(int(i), str(int(i))) for i in x], []])
            self.plot.getAxis("left").setTicks(scale_ticks(view[1]))
            # Headroom over the scale's top for the values written over the bars and the edits' names.
            self.plot.setRange(xRange=(-0.6, drift.size - 0.4), yRange=(0, view[1] * 1.12), padding=0)
        self._mark_edits(self._names, view[1])
        self._write_values(drift, view[1], digits)
        if not self._edited and top < 1e-12:
            self.header.setText("The trained model, unedited: every layer at distance 0. "
                                "Silence or scale a head to see its effect climb the layers.")
        else:
            worst = int(np.argmax(drift))
            edited = edits_sentence(self._names)
            self.header.setText(f"{edited}Largest change after layer {worst}: "
                                f"{format_number(float(drift[worst]), digits)} (0 = unchanged, 1 = orthogonal; "
                                f"scale 0 to {format_number(view[1], digits)})")
        tips = "\n".join(f"layer {i}{' (embeddings)' if i == 0 else ''}: {format_number(float(d), digits)}"
                         for i, d in enumerate(drift))
        self.canvas.setToolTip("Mean cosine distance from the trained model\n" + tips)

    def _mark_edits(self, names: dict, top: float = 1.0) -> None:
        """A dashed line after each edited layer's bar (edits in model layer l change the output of
        layer l + 1 on the axis), named by what was edited there."""
        while len(self.edit_lines) < len(names):
            line = pg.InfiniteLine(angle=90, movable=False,
                                   pen=pg.mkPen(EDIT_PEN, width=2, style=QtCore.Qt.DashLine),
                                   label="", labelOpts={"position": 0.95, "color": EDIT_PEN, "anchors": [(0, 0.5), (0, 0.5)]})
            self.plot.addItem(line)
            self.edit_lines.append(line)
        for i, (line, (layer, what)) in enumerate(zip(self.edit_lines, names.items())):
            line.setValue(layer + 0.5)
            line.label.setPosition(0.95 - 0.1 * (i % 2))  # neighbouring edits' names at two heights
            line.label.setFormat(", ".join(what) if what else f"layer {layer + 1} edited")
            line.show()
        for line in self.edit_lines[len(names):]:
            line.hide()

    def _write_values(self, drift: np.ndarray, top: float, digits: int) -> None:
        """Each bar's distance written over it, at the precision setting."""
        ink = presentation.STYLE.theme.ink
        while len(self.value_labels) < drift.size:
            label = pg.TextItem("", anchor=(0.5, 1.0), color=ink)
            self.plot.addItem(label)
            self.value_labels.append(label)
        for i, (label, d) in enumerate(zip(self.value_labels, drift)):
            d = float(d) if abs(d) > 1e-9 else 0.0  # the embeddings' distance is rounding noise, not a change
            label.setText(format_number(d, digits))
            label.setColor(ink)
            label.setPos(i, min(d, top))
            label.show()
        for label in self.value_labels[drift.size:]:
            label.hide()


def edits_sentence(names: dict) -> str:
    """``"Edited: 4.2 silenced (layer 4); 6.12 silenced (layer 6). "`` for the header and the page's title."""
    if not names:
        return ""
    parts = [f"{', '.join(what) if what else 'edited'} (layer {layer + 1})" for layer, what in names.items()]
    return "Edited: " + "; ".join(parts) + ". "
