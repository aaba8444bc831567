"""Meaning in context (seed 001's "bank"): one word in two sentences, followed through the layers.

Left: the cosine similarity of the word's vectors in the two sentences after
the embeddings (layer 0, about 1: the same word piece) and after each layer,
as the context pulls the two meanings apart. Right: both words' paths through
the layers on one plane (the engine's ``pca_2d`` of all their vectors), a
point per layer labelled with its number, one colour per sentence.
Everything is computed before it reaches the view (:meth:`MeaningData.from_comparison`).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...engine import pca_2d
from ...formatting import format_number
from .. import presentation
from ..qt.pg import cache_static, pg

COLOR_A = (40, 100, 200)
COLOR_B = (220, 110, 20)
COSINE_COLOR = (60, 60, 60)


@dataclass(frozen=True)
class MeaningData:
    """What the meaning view shows.

    ``cosine (layers + 1,)``; ``path_a``, ``path_b`` ``(layers + 1, 2)``: the
    word's vector after each layer in each sentence, on one shared plane;
    ``shown``: the share of the vectors' spread that plane keeps.
    """

    word: str
    sentence_a: str
    sentence_b: str
    cosine: np.ndarray
    path_a: np.ndarray
    path_b: np.ndarray
    shown: float

    @classmethod
    def from_words(cls, words, sentence_a: str, sentence_b: str) -> MeaningData:
        """From a trained studio's ``WordPaths`` (cosine and paths already on one plane)."""
        return cls(words.word, sentence_a, sentence_b, np.asarray(words.cosine), np.asarray(words.path_a),
                   np.asarray(words.path_b), words.projection.shown)

    @classmethod
    def from_comparison(cls, comparison) -> MeaningData:
        """From a ``pretrained.WordComparison``; the plane comes from the engine's ``pca_2d``."""
        va, vb = np.asarray(comparison.vectors_a), np.asarray(comparison.vectors_b)
        plane = pca_2d(np.concatenate([va, vb]))
        n = va.shape[0]
        return cls(comparison.word, comparison.run_a.text, comparison.run_b.text,
                   np.asarray(comparison.cosine), plane.coords[:n], plane.coords[n:], plane.shown)


def _short(text: str, limit: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _css(color) -> str:
    return "#%02x%02x%02x" % tuple(color)


class MeaningView(QtWidgets.QWidget):
    """The cosine of one word across two sentences per layer, and the word's two paths on a plane."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("meaningView")
        self._data: MeaningData | None = None
        self._labels: list[pg.TextItem] = []
        self._cosine_range = None  # (points, y bottom) the cosine axes were last drawn for
        self.header = QtWidgets.QLabel()
        self.header.setObjectName("meaningHeader")
        self.header.setWordWrap(True)
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setObjectName("meaningCanvas")
        self.canvas.setMinimumSize(560, 260)

        self.cosine_plot = self.canvas.addPlot(row=0, col=0)
        self.cosine_plot.setTitle("Cosine, sentence 1 vs 2")
        self.cosine_plot.setLabel("bottom", "layer (0 = embeddings)")
        self.cosine_plot.setLabel("left", "cosine similarity")
        self.cosine_plot.showGrid(x=True, y=True, alpha=0.25)
        self.cosine_curve = self.cosine_plot.plot([], [], pen=pg.mkPen(COSINE_COLOR, width=2),
                                                  symbol="o", symbolSize=7, symbolBrush=COSINE_COLOR)

        self.path_plot = self.canvas.addPlot(row=0, col=1)
        self.path_plot.setTitle("Path through the layers")
        self.path_plot.setLabel("bottom", "principal axis 1")
        self.path_plot.setLabel("left", "principal axis 2")
        self.path_plot.setAspectLocked(True)
        self.path_a = self.path_plot.plot([], [], pen=pg.mkPen(COLOR_A, width=2), symbol="o", symbolSize=8,
                                          symbolBrush=COLOR_A, symbolPen=None)
        self.path_b = self.path_plot.plot([], [], pen=pg.mkPen(COLOR_B, width=2), symbol="s", symbolSize=8,
                                          symbolBrush=COLOR_B, symbolPen=None)
        for plot in (self.cosine_plot, self.path_plot):
            plot.setMenuEnabled(False)
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            cache_static(plot.getAxis("bottom"), plot.getAxis("left"))

        # The key sits below the plots: inside the path plot it would cover the paths.
        self.key = QtWidgets.QLabel()
        self.key.setObjectName("meaningKey")
        self.key.setTextFormat(QtCore.Qt.RichText)
        self.key.setWordWrap(True)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.key)
        self.show_data(None)

    def _place_labels(self, data: MeaningData) -> None:
        # One label per point, created once per path length and moved afterwards: a keystroke
        # then costs no new graphics items.
        n = data.path_a.shape[0]
        if len(self._labels) != 2 * n:
            for label in self._labels:
                self.path_plot.removeItem(label)
            self._labels = []
            for color, anchor in ((COLOR_A, (0, 1)), (COLOR_B, (1, 0))):
                for i in range(n):
                    label = pg.TextItem(str(i), color=color, anchor=anchor)
                    self.path_plot.addItem(label)
                    self._labels.append(label)
        for label, (x, y) in zip(self._labels, np.concatenate([data.path_a, data.path_b])):
            label.setPos(float(x), float(y))
            label.show()

    @property
    def data(self) -> MeaningData | None:
        """The comparison shown now (None when cleared)."""
        return self._data

    def show_message(self, text: str) -> None:
        """Clear the plots and say why (a word missing from a sentence, no model, ...)."""
        self.show_data(None)
        self.header.setText(text)

    def set_digits(self, digits: int) -> None:
        """Write the header and tooltip again at the precision setting (``presentation.set_digits``)."""
        if self._data is not None:
            self.show_data(self._data)

    def show_data(self, data: MeaningData | None) -> None:
        """Draw ``data``; None clears both plots."""
        self._data = data
        if data is None:
            for label in self._labels:
                label.hide()
            self.cosine_curve.setData([], [])
            self.path_a.setData([], [])
            self.path_b.setData([], [])
            self.key.setText("")
            self.header.setText("Type a second sentence and a word that occurs in both to follow its meaning.")
            return
        cosine = np.asarray(data.cosine)
        layers = np.arange(cosine.size)
        self.cosine_curve.setData(layers, cosine)
        low = min(0.0, float(np.min(cosine))) if cosine.size else 0.0
        low = -1.0 if low < 0 else 0.0  # a fixed scale: a negative cosine shows the full range
        # Axes are redrawn only when their range or ticks change, not on every keystroke.
        view = (cosine.size, low)
        if view != self._cosine_range:
            self._cosine_range = view
            self.cosine_plot.getAxis("bottom").setTicks([[(int(i), str(int(i))) for i in layers], []])
            self.cosine_plot.setRange(xRange=(-0.3, cosine.size - 0.7), yRange=(low, 1.05), padding=0)
        self.path_a.setData(data.path_a[:, 0], data.path_a[:, 1])
        self.path_b.setData(data.path_b[:, 0], data.path_b[:, 1])
        self.key.setText(
            f"<span style='color:{_css(COLOR_A)}'>● sentence 1:</span> {html.escape(_short(data.sentence_a, 70))}"
            f"&nbsp;&nbsp;&nbsp;<span style='color:{_css(COLOR_B)}'>■ sentence 2:</span> "
            f"{html.escape(_short(data.sentence_b, 70))}")
        self._place_labels(data)
        self.path_plot.autoRange(padding=0.15)
        last = float(cosine[-1]) if cosine.size else float("nan")
        digits = presentation.digits()
        self.header.setText(
            f"“{data.word}”: cosine {format_number(float(cosine[0]), digits)} after the embeddings, "
            f"{format_number(last, digits)} after layer {cosine.size - 1}. "
            f"The plane keeps {format_number(100 * data.shown, 0)}% of the vectors' spread; "
            "points are numbered by layer.")
        tips = "\n".join(f"layer {i}{' (embeddings)' if i == 0 else ''}: cosine {format_number(float(c), digits)}"
                         for i, c in enumerate(cosine))
        self.canvas.setToolTip(f"“{data.word}” in\n1: {data.sentence_a}\n2: {data.sentence_b}\n{tips}")
