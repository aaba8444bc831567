"""A training panel's figure: its plots and pictures, drawn from a run's numbers.

One class per panel (`scaling_figure`, `seq2seq_figure`, `induction_figure`) builds the figure
and draws it from a :class:`~.runner.Snapshot` (the history, and the extras the worker measured).
The panel shows one on screen, among its controls; an export builds another for the page
(``page=True``, `figures.page_figure`): the same plots at a size of their own, whatever the
window's, the legends in a key above the plots instead of over the data, and the sentence that
reads the run without a word about the controls. ``attn-studio train --png`` draws that same page.
"""

from __future__ import annotations

import html
import time

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...formatting import format_number
from .. import presentation
from ..qt.pg import pg
from ..widgets import caption_label
from .curves import COLOURS

__all__ = ["LabFigure", "TimedGraphics", "key_text", "number", "styled", "table_text", "GREY"]


class TimedGraphics(pg.GraphicsLayoutWidget):
    """A GraphicsLayoutWidget that remembers how long its last paint took (the redraw's pace)."""

    paint_ms = 0.0

    def paintEvent(self, event):  # noqa: N802 (Qt's name)
        start = time.perf_counter()
        super().paintEvent(event)
        self.paint_ms = (time.perf_counter() - start) * 1000.0


def number(x: float) -> str:
    """A measured number of a sentence under a figure (a loss, an entropy) at the precision setting."""
    return format_number(x, presentation.digits())


GREY = "#555555"  # reference lines (chance, guessing, uniform) and their key


def styled(items) -> str:
    """Rich text of ``(text, css)`` pairs, space-separated; a pair without css stays plain."""
    return " ".join(html.escape(text) if not css else f"<span style='{css}'>{html.escape(text)}</span>"
                    for text, css in items)


def table_text(rows) -> str:
    """Rich text of ``(name, rich text)`` rows: the names in a column of their own."""
    return "<table cellspacing='2'>" + "".join(
        f"<tr><td style='padding-right:10px'>{html.escape(name)}</td><td>{text}</td></tr>" for name, text in rows
    ) + "</table>"


def key_text(entries) -> str:
    """A figure's legend as one line of rich text: ``(label, colour, dashed)`` per entry."""
    parts = []
    for label, colour, dashed in entries:
        mark = "╍╍╍" if dashed else "━━━"
        parts.append(f"<span style='color:{colour}; font-weight:bold'>{mark}</span>&nbsp;{html.escape(label)}")
    return "&nbsp;&nbsp;&nbsp;&nbsp;".join(parts)


class LabFigure(QtWidgets.QWidget):
    """The figure of one training panel: plots in ``graphics``, the reading ``sentence`` under them.

    A subclass sets ``title`` (the panel's) and ``page_size``, builds its plots in ``_build``
    (``self.page`` says whether for the page), lists its redraw in ``draw_parts``, reads a snapshot
    in ``reading`` and measures what it shows beyond the history in ``measure`` (on the worker).
    """

    experiment_name = ""
    title = ""
    page_size = QtCore.QSize(1400, 800)

    def __init__(self, page: bool = False, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.page = page
        self.setObjectName(f"{self.experiment_name}Figure")
        self.setAutoFillBackground(True)
        pal = self.palette()
        pal.setColor(self.backgroundRole(), QtCore.Qt.white)
        self.setPalette(pal)
        self.figure_layout = QtWidgets.QVBoxLayout(self)
        self.figure_layout.setContentsMargins(2, 2, 2, 2)
        self.figure_layout.setSpacing(2)
        self.graphics = TimedGraphics()
        self.graphics.setObjectName(f"{self.experiment_name}Graphics")
        self.graphics.ci.layout.setSpacing(4)
        self.figure_layout.addWidget(self.graphics, 1)
        self.sentence = caption_label("trainingSentence")
        self.sentence.setTextFormat(QtCore.Qt.RichText)
        self._arrays: dict = {}
        self._build()
        self.figure_layout.addWidget(self.sentence)

    def key_row(self, arms, references, columns: int) -> int:
        """On the page, the legend as a line above the plots (never over the data): a solid line
        per arm in its colour, then ``references`` (``(label, colour, dashed)``). Returns the row
        the plots start at: 1 under the key, 0 on screen (where each plot has its legend)."""
        if not self.page:
            return 0
        entries = [(arm, colour, False) for arm, colour in zip(arms, COLOURS)] + list(references)
        self.graphics.ci.addItem(pg.LabelItem(key_text(entries), size="10pt", color="#222222"), 0, 0, 1, columns)
        return 1

    def weight_bar(self, heatmap) -> pg.ColorBarItem:
        """On the page, the colour bar of attention weights (0 to 1) in ``heatmap``'s colours."""
        return pg.ColorBarItem(values=(0.0, 1.0), colorMap=heatmap.colormap, interactive=False, width=12,
                               label="weight")

    def add_table(self, name: str) -> QtWidgets.QLabel:
        """A label under the plots for rows of symbols (an input and the models' outputs), in a
        monospaced font so that the rows' symbols line up; filled by :func:`table_text`."""
        label = QtWidgets.QLabel()
        label.setObjectName(name)
        label.setTextFormat(QtCore.Qt.RichText)
        label.setStyleSheet("font-family: monospace;")
        self.figure_layout.addWidget(label)
        return label

    # -------------------------------------------------------------------- subclasses
    def _build(self) -> None:
        raise NotImplementedError

    @staticmethod
    def measure(exp, inputs: dict, heavy: bool) -> dict:
        """What the figure shows beyond the history, measured on ``exp`` (on the worker thread)."""
        return {}

    def draw_parts(self) -> tuple:
        """The figure's redraw as parts, each a method that updates one plot or picture from a
        snapshot. While a run plays they are drawn one per turn of the event loop, in this order."""
        raise NotImplementedError

    def reading(self, snap) -> str:
        """The sentence under the figure that reads the run off its numbers."""
        raise NotImplementedError

    # -------------------------------------------------------------------- drawing
    def draw(self, snap) -> None:
        """Every part of the figure and its sentence, from ``snap``."""
        for part in self.draw_parts():
            part(snap)
        self.sentence.setText(self.reading(snap))

    @staticmethod
    def history(snap, arm: str, metric: str) -> list:
        """The first ``snap.steps`` values of one metric (the worker may have appended more)."""
        return snap.exp.history[arm][metric][:snap.steps]

    def history_array(self, snap, arm: str, metric: str) -> np.ndarray:
        """The first ``snap.steps`` values of one metric as a float array. Only the steps since
        the last redraw are converted: a long run's lists are not turned into arrays again at
        every redraw."""
        exp, values = self._arrays.get((arm, metric), (None, None))
        if exp is not snap.exp or values.size > snap.steps:  # a new run (or a reset)
            values = np.asarray(self.history(snap, arm, metric), dtype=float)
        elif values.size < snap.steps:
            values = np.concatenate([values, np.asarray(snap.exp.history[arm][metric][values.size:snap.steps],
                                                        dtype=float)])
        self._arrays[(arm, metric)] = (snap.exp, values)
        return values
