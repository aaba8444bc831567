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
        self.edit_line = pg.InfiniteLine(angle=90, movable=False,
                                         pen=pg.mkPen(EDIT_PEN, width=2, style=QtCore.Qt.DashLine),
                                         label="edited", labelOpts={"position": 0.92, "color": EDIT_PEN})
        self.edit_line.hide()
        self.plot.addItem(self.edit_line)
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

    def set_digits(self, digits: int) -> None:
        """Write the header and tooltip again at the precision setting (``presentation.set_digits``)."""
        if self._drift is not None:
            self.show_drift(self._drift, self._edited)

    def show_drift(self, drift, edited_layers=()) -> None:
        """Draw ``drift (layers + 1,)``; mark the lowest of ``edited_layers`` (0-based model layers)."""
        if drift is None:
            self._drift, self._edited = None, ()
            self.bars.setOpts(x=[], height=[])
            self.edit_line.hide()
            self.header.setText("No trained model: nothing to compare.")
            return
        drift = np.asarray(drift, dtype=np.float64)
        digits = presentation.digits()
        self._drift, self._edited = drift, tuple(sorted(int(l) for l in edited_layers))
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
            self.plot.setRange(xRange=(-0.6, drift.size - 0.4), yRange=(0, view[1]), padding=0)
        if self._edited:
            # Edits in model layer l change the output of layer l + 1 on screen.
            self.edit_line.setValue(self._edited[0] + 0.5)
            self.edit_line.show()
        else:
            self.edit_line.hide()
        if not self._edited and top < 1e-12:
            self.header.setText("The trained model, unedited: every layer at distance 0. "
                                "Silence or scale a head to see its effect climb the layers.")
        else:
            worst = int(np.argmax(drift))
            first = f"first edit in layer {self._edited[0] + 1}; " if self._edited else ""
            self.header.setText(f"{first}largest change after layer {worst}: "
                                f"{format_number(float(drift[worst]), digits)} (0 = unchanged, 1 = orthogonal; "
                                f"scale 0 to {format_number(view[1], digits)})")
        tips = "\n".join(f"layer {i}{' (embeddings)' if i == 0 else ''}: {format_number(float(d), digits)}"
                         for i, d in enumerate(drift))
        self.canvas.setToolTip("Mean cosine distance from the trained model\n" + tips)
