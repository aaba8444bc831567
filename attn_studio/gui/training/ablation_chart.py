"""The "Why two layers" panel's ablation chart: a bar per head of the two-layer model, how many nats
silencing it alone adds to the loss on the repeat (and on the first copy, beside it), then every
second-layer head at once; a dashed line where the repeat's loss would be back at guessing (ln 32).

It draws an :class:`~attn_studio.training.ablation.AblationStudy` the worker measured; it computes
nothing. The heads silenced with the panel's boxes are outlined.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore

from ...training.ablation import head_label
from ...training.claims import GUESSING
from ..qt.pg import pg
from .curves import COLOURS
from .figure import GREY

__all__ = ["AblationChart", "ARM", "bar_labels"]

ARM = "two layers"
REPEAT_COLOUR = COLOURS[1]   # the two-layer arm's colour in every plot of the panel
FIRST_COLOUR = "#9a9a9a"
WIDTH = 0.38


def bar_labels(study) -> list[str]:
    """The bars' names, left to right: each head of the two-layer model, then its last layer's heads together."""
    heads = study.arm_heads(ARM)
    last = max(h.layer for h in heads)
    together = "+".join(head_label(h.layer, h.head) for h in heads if h.layer == last)
    return [head_label(h.layer, h.head) for h in heads] + [together]


def bar_values(study) -> tuple[np.ndarray, np.ndarray]:
    """``(repeat, first)``: nats each bar adds to the repeat's loss and to the first copy's."""
    heads = study.arm_heads(ARM)
    intact = study.intact[ARM]
    last = max(h.layer for h in heads)
    out = study.layer_out[ARM][last]
    repeat = [h.added_repeat for h in heads] + [out["loss_repeat"] - intact["loss_repeat"]]
    first = [h.added_first for h in heads] + [out["loss_first"] - intact["loss_first"]]
    return np.asarray(repeat), np.asarray(first)


def chart_title(step: int | None = None) -> str:
    """The chart's title: the two bars' colours are named in it (a legend in the plot would sit on the bars)."""
    repeat = f"<span style='color:{REPEAT_COLOUR}'><b>repeat</b></span>"
    first = f"<span style='color:{FIRST_COLOUR}'><b>first copy</b></span>"
    return f"Nats added by silencing a head: {repeat}, {first}"


class AblationChart:
    """A pyqtgraph PlotItem of the ablation bars (``plot``); the bars' colours are named in its title."""

    def __init__(self):
        self.plot = pg.PlotItem(enableMenu=False)
        self.plot.setTitle(chart_title(), size="10pt")
        self.plot.setLabel("left", "nats added")
        self.plot.setLabel("bottom", "head silenced (two layers)")
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.showGrid(y=True, alpha=0.15)
        for name in ("left", "bottom"):
            self.plot.getAxis(name).enableAutoSIPrefix(False)
        self.legend = None
        self.repeat = pg.BarGraphItem(x=[], height=[], width=WIDTH, brush=REPEAT_COLOUR, pen=pg.mkPen(REPEAT_COLOUR),
                                      name="repeat")
        self.first = pg.BarGraphItem(x=[], height=[], width=WIDTH, brush=FIRST_COLOUR, pen=pg.mkPen(FIRST_COLOUR),
                                     name="first copy")
        self.plot.addItem(self.repeat)
        self.plot.addItem(self.first)
        self.zero = pg.InfiniteLine(pos=0.0, angle=0, pen=pg.mkPen("#444444", width=1))
        self.plot.addItem(self.zero)
        self.guessing = pg.InfiniteLine(pos=GUESSING, angle=0, pen=pg.mkPen(GREY, width=1.4, style=QtCore.Qt.DashLine),
                                        label="repeat back at guessing (ln 32)",
                                        labelOpts={"position": 0.02, "color": GREY, "anchors": [(0, 1), (0, 1)]})
        self.plot.addItem(self.guessing)
        self.empty = pg.TextItem("", color=GREY, anchor=(0.5, 0.5))
        self.plot.addItem(self.empty)
        self.outlines = pg.BarGraphItem(x=[], height=[], width=WIDTH + 0.08, brush=None,
                                        pen=pg.mkPen("#000000", width=2.5))
        self.plot.addItem(self.outlines)
        self.labels: list[str] = []
        self.values: tuple[np.ndarray, np.ndarray] | None = None
        self.show(None)

    def show(self, study, silenced=None) -> None:
        """Draw ``study`` (None: nothing measured yet); outline the bars of the heads whose entry of
        ``silenced`` (a (layers, heads) mask of the two-layer model) is 0."""
        if study is None:
            self.values = None
            self.labels = []
            for bars in (self.repeat, self.first, self.outlines):
                bars.setOpts(x=[], height=[])
            self.guessing.hide()
            self.empty.setText("Measured when the run pauses")
            self.plot.setLabel("bottom", "head silenced (two layers)")
            self.empty.setPos(2.0, 1.5)
            self.plot.setXRange(-0.6, 5.6, padding=0)
            self.plot.setYRange(-0.5, 3.5, padding=0)
            return
        self.empty.setText("")
        self.labels = bar_labels(study)
        repeat, first = bar_values(study)
        self.values = (repeat, first)
        n = len(self.labels)
        x = np.arange(n, dtype=float)
        x[-1] += 0.6  # the heads together stand apart from the heads alone
        self.repeat.setOpts(x=x - WIDTH / 2, height=repeat)
        self.first.setOpts(x=x + WIDTH / 2, height=first)
        self.plot.getAxis("bottom").setTicks([[(float(xi), label) for xi, label in zip(x, self.labels)], []])
        ceiling = GUESSING - study.intact[ARM]["loss_repeat"]
        self.guessing.setValue(ceiling)
        self.guessing.show()
        low = min(-0.5, float(np.floor(min(repeat.min(), first.min()) * 2) / 2))
        high = max(1.0, float(np.ceil(max(repeat.max(), first.max(), ceiling) * 2) / 2) + 0.5)
        self.plot.setXRange(-0.6, x[-1] + 0.6, padding=0)
        self.plot.setYRange(low, high, padding=0)
        out = []
        if silenced is not None:
            mask = np.asarray(silenced)
            heads = study.arm_heads(ARM)
            out = [i for i, h in enumerate(heads) if mask[h.layer, h.head] == 0]
            last = max(h.layer for h in heads)
            if np.all(mask[last] == 0) and not np.any(mask[:last] == 0):
                out = [n - 1]  # exactly the last layer out: its own bar
        self.outlines.setOpts(x=x[out] - WIDTH / 2, height=repeat[out])
        self.plot.setLabel("bottom", f"head silenced (two layers, step {study.step:,})")

    def outlined(self) -> list[str]:
        """The labels of the bars outlined now (the heads silenced with the panel's boxes)."""
        x = self.outlines.opts.get("x")
        if x is None or not len(x) or self.values is None:
            return []
        centres = np.asarray(x) + WIDTH / 2
        positions = np.arange(len(self.labels), dtype=float)
        positions[-1] += 0.6
        return [self.labels[int(np.argmin(np.abs(positions - c)))] for c in centres]

