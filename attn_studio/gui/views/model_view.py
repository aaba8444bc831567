"""The model view: every layer × head of a trained model as a small heatmap (BertViz's "model view").

One row per layer, one column per head, and a last column with the layer's
attention averaged over heads (the seed's ``attn_weights.mean(dim=1)``) or,
with the rollout switch on, the attention rollout up to that layer (Abnar &
Zuidema 2020). Both come computed from the model run; this view only draws.

All cells are one float image with NaN gaps between them (drawn transparent),
so a new sentence costs one ``setImage`` however many heads the model has.
The selected head is outlined; a silenced head is greyed and crossed out; a
scaled head carries its factor. Clicking a cell emits :attr:`ModelView.headClicked`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...formatting import format_number
from .. import presentation
from ..qt.pg import cache_static, pg
from .heatmap import WEIGHTS_CMAP

SELECT_PEN = QtGui.QColor(230, 60, 20)
SILENCED_FILL = QtGui.QColor(235, 235, 235, 215)
MARK_COLOR = QtGui.QColor(170, 20, 20)


@dataclass(frozen=True)
class ModelViewData:
    """What the model view shows, all computed before it reaches the view.

    ``attentions (layers, heads, T, T)``; ``summary (layers, T, T)``: the mean
    over heads, or the rollout when ``rollout`` is True; ``head_scale
    (layers, heads)``: 1 trained, 0 silenced; ``tokens`` the axis words.
    """

    attentions: np.ndarray
    summary: np.ndarray
    head_scale: np.ndarray
    tokens: tuple
    rollout: bool = False
    run: object = None  # the ModelRun, for the norm switch (norms computed only when asked for)

    @classmethod
    def from_run(cls, run, rollout: bool = False) -> ModelViewData:
        """The data of a ``ModelRun`` (``pretrained.ModelRun``): its weights and the engine's mean or rollout."""
        summary = run.rollout() if rollout else run.mean_attention()
        return cls(run.attentions, summary, np.asarray(run.head_scale, dtype=np.float64), tuple(run.tokens), rollout,
                   run)

    @classmethod
    def from_computed(cls, computed) -> ModelViewData:
        """The data of a trained studio's ``Computed`` (``trained.Computed``), with its state's rollout switch."""
        run, rollout = computed.run, bool(computed.state.rollout)
        summary = computed.rollout if rollout else computed.mean_attention
        return cls(run.attentions, summary, np.asarray(run.head_scale, dtype=np.float64), tuple(run.tokens), rollout,
                   run)


def _gap(T: int) -> int:
    # A gap of about an eighth of a cell keeps the cells apart at every length.
    return max(1, T // 8)


def _mosaic(cells: np.ndarray, gap: int, buffers: dict) -> np.ndarray:
    """``cells (rows, cols, T, T)`` laid out as one image, NaN between them.

    ``buffers``: earlier images by shape, reused (their gaps stay NaN). Typing
    moves T back and forth by a token, and a fresh 1.5 M-cell image at 128
    tokens costs tens of milliseconds in page faults alone. float32 is plenty
    for colours and halves that.
    """
    rows, cols, T, _ = cells.shape
    step = T + gap
    shape = (rows, step, cols, step)
    out = buffers.get(shape)
    if out is None:
        out = np.full(shape, np.nan, dtype=np.float32)
        while len(buffers) >= 2:
            buffers.pop(next(iter(buffers)))
        buffers[shape] = out
    out[:, :T, :, :T] = cells.transpose(0, 2, 1, 3)
    return out.reshape(rows * step, cols * step)[: rows * step - gap, : cols * step - gap]


class _Marks(pg.GraphicsObject):
    """Greyed, crossed-out silenced heads and the factor of scaled heads, painted in one pass."""

    def __init__(self):
        super().__init__()
        self._silenced: list[QtCore.QRectF] = []
        self._scaled: list[tuple[QtCore.QRectF, str]] = []
        self._bounds = QtCore.QRectF()

    def set_marks(self, silenced, scaled, bounds: QtCore.QRectF) -> None:
        self.prepareGeometryChange()
        self._silenced, self._scaled, self._bounds = list(silenced), list(scaled), QtCore.QRectF(bounds)
        self.update()

    def boundingRect(self) -> QtCore.QRectF:
        return self._bounds

    def paint(self, painter, option, widget=None):
        if not (self._silenced or self._scaled):
            return
        pen = QtGui.QPen(MARK_COLOR, 2)
        pen.setCosmetic(True)
        for rect in self._silenced:
            painter.fillRect(rect, SILENCED_FILL)
            painter.setPen(pen)
            painter.drawLine(rect.topLeft(), rect.bottomRight())
            painter.drawLine(rect.topRight(), rect.bottomLeft())
        if self._scaled:
            # Text in screen pixels, whatever the zoom: draw it untransformed at the cell's corner.
            transform = painter.transform()
            painter.save()
            painter.resetTransform()
            font = QtGui.QFont()
            font.setPixelSize(11)
            font.setBold(True)
            painter.setFont(font)
            for rect, text in self._scaled:
                box = transform.mapRect(rect)
                metrics = QtGui.QFontMetricsF(font)
                w, h = metrics.horizontalAdvance(text) + 4, metrics.height()
                label = QtCore.QRectF(box.left() + 1, box.top() + 1, w, h)
                painter.fillRect(label, QtGui.QColor(255, 255, 255, 220))
                painter.setPen(MARK_COLOR)
                painter.drawText(label, QtCore.Qt.AlignCenter, text)
            painter.restore()


class ModelView(QtWidgets.QWidget):
    """All layers × heads of a trained model, the per-layer mean (or rollout), clickable.

    Signals: ``headClicked(layer, head)`` (0-based) when a head's cell is
    clicked; ``layerClicked(layer)`` for the mean / rollout column;
    ``rolloutToggled(bool)`` from the rollout switch (the owner recomputes and
    calls :meth:`show_data` again: the view never computes a rollout).
    """

    headClicked = QtCore.Signal(int, int)
    layerClicked = QtCore.Signal(int)
    rolloutToggled = QtCore.Signal(bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("modelView")
        self._data: ModelViewData | None = None
        self._selected: tuple[int, int] | None = None
        self._shape: tuple[int, int, int] | None = None  # layers, columns, T of the laid-out image
        self._buffers: dict = {}

        self.header = QtWidgets.QLabel("No trained model: choose one in the model list.")
        self.header.setObjectName("modelViewHeader")
        self.header.setWordWrap(True)
        self.rollout_check = QtWidgets.QCheckBox("Attention rollout")
        self.rollout_check.setObjectName("rolloutCheck")
        self.rollout_check.setToolTip(
            "Last column: the attention rolled out through the layers below (Abnar & Zuidema 2020: "
            "half the mean attention plus half the identity, rows renormalised, multiplied layer by layer) "
            "instead of the mean over heads")
        self.rollout_check.toggled.connect(self.rolloutToggled)
        self.norm_check = QtWidgets.QCheckBox("Norm ‖α·f(x)‖")
        self.norm_check.setObjectName("modelNormCheck")
        self.norm_check.setToolTip(
            "Each head's cells show ‖α·f(x)‖, how much of each value vector reaches the output, instead of the "
            "weight α: a large weight on a value vector of length ≈ 0 does nothing (Kobayashi et al. 2020)")
        self.norm_check.toggled.connect(lambda on: self.show_data(self._data))
        self._norms = None  # (run, norms) of the last norm picture
        self._query: int | None = None
        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.norm_check)
        top.addWidget(self.rollout_check)

        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setObjectName("modelViewCanvas")
        self.canvas.setMinimumSize(420, 260)
        self.plot = self.canvas.addPlot()
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.invertY(True)
        self.plot.setAspectLocked(True)
        self.plot.showAxis("top")
        self.plot.hideAxis("bottom")
        for name in ("top", "left"):
            axis = self.plot.getAxis(name)
            axis.setStyle(tickLength=0)
            axis.setPen(pg.mkPen(None))
            axis.setTextPen(pg.mkPen("k"))
        # Room for "layer 12"; the axis does not grow by itself once its pen is hidden.
        self.plot.getAxis("left").setWidth(58)
        self.image = pg.ImageItem()
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get(WEIGHTS_CMAP),
                                        interactive=False, width=12, label="weight")
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.marks = _Marks()
        self.plot.addItem(self.marks)
        self.outline = QtWidgets.QGraphicsRectItem()
        pen = QtGui.QPen(SELECT_PEN, 3)
        pen.setCosmetic(True)
        self.outline.setPen(pen)
        self.outline.setZValue(10)
        self.outline.hide()
        self.plot.addItem(self.outline)
        # The chosen query's row, marked in the gaps beside every cell (never over its colours),
        # so a grid of 72 heads reads along one line.
        self.query_rows = QtWidgets.QGraphicsPathItem()
        row_pen = QtGui.QPen(SELECT_PEN, 3)
        row_pen.setCosmetic(True)
        self.query_rows.setPen(row_pen)
        self.query_rows.setZValue(9)
        self.plot.addItem(self.query_rows)
        cache_static(self.plot.getAxis("top"), self.plot.getAxis("left"))
        self.canvas.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.canvas.scene().sigMouseClicked.connect(self._on_mouse_clicked)

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.canvas, 1)

    # -- what is shown -------------------------------------------------------------------

    def show_data(self, data: ModelViewData | None) -> None:
        """Draw ``data`` (None: clear the view)."""
        self._data = data
        if data is None:
            self.image.clear()
            self.outline.hide()
            self.marks.set_marks([], [], QtCore.QRectF())
            self.header.setText("No trained model: choose one in the model list.")
            self._shape = None
            return
        attentions = np.asarray(data.attentions)
        layers, heads, T, _ = attentions.shape
        summary, top_level = np.asarray(data.summary), 1.0
        norm = self.norm_check.isChecked() and data.run is not None
        if norm:
            attentions = self.norms()
            top_level = float(attentions.max()) or 1.0
            summary = summary * top_level  # the last column keeps its weights, stretched to the same bar
        cells = np.concatenate([attentions, summary[:, None]], axis=1)
        gap = _gap(T)
        image = _mosaic(cells, gap, self._buffers)
        self.image.setImage(image, levels=(0.0, top_level), autoLevels=False)
        if norm or self.colorbar.levels()[1] != 1.0:
            self.colorbar.setLevels((0.0, top_level))
            self.colorbar.axis.setLabel("‖α·f(x)‖" if norm else "weight")
        self.image.setRect(QtCore.QRectF(-0.5, -0.5, image.shape[1], image.shape[0]))
        if self._shape != (layers, heads + 1, T):
            self._shape = (layers, heads + 1, T)
            self._set_ticks(layers, heads, T, gap, data.rollout)
            self.plot.setRange(xRange=(-0.5, image.shape[1] - 0.5), yRange=(-0.5, image.shape[0] - 0.5), padding=0.01)
        elif data.rollout != getattr(self, "_ticks_rollout", None):
            self._set_ticks(layers, heads, T, gap, data.rollout)
        self._update_marks()
        self._update_outline()
        self._update_query()
        if self.rollout_check.isChecked() != data.rollout:
            blocker = QtCore.QSignalBlocker(self.rollout_check)
            self.rollout_check.setChecked(data.rollout)
            del blocker
        last = "rollout" if data.rollout else "mean over heads"
        silenced = int(np.count_nonzero(np.asarray(data.head_scale) == 0))
        edited = f" · {silenced} silenced" if silenced else ""
        self.header.setText(f"{layers} layers × {heads} heads, {T} tokens; last column: {last}{edited}. "
                            "Click a head to select it.")

    def norms(self) -> np.ndarray:
        """``(layers, heads, T, T)``: ‖α·f(x)‖ of the run shown (``pretrained.norm_attention``), kept per run."""
        from ...pretrained.heads import norm_attention

        if self._norms is None or self._norms[0] is not self._data.run:
            self._norms = (self._data.run, norm_attention(self._data.run))
        return self._norms[1]

    def set_query(self, query: int | None) -> None:
        """Outline the row of query token ``query`` (0-based) in every cell; None hides it."""
        self._query = None if query is None else int(query)
        self._update_query()

    def _update_query(self) -> None:
        path = QtGui.QPainterPath()
        if self._data is not None and self._shape is not None and self._query is not None:
            layers, cols, T = self._shape
            if 0 <= self._query < T:
                gap = _gap(T)
                for layer in range(layers):
                    for column in range(cols):
                        cell = self.cell_rect(layer, column)
                        y = cell.top() + self._query + 0.5
                        path.moveTo(cell.left() - 0.8 * gap, y)
                        path.lineTo(cell.left() - 0.1, y)
                        path.moveTo(cell.right() + 0.1, y)
                        path.lineTo(cell.right() + 0.8 * gap, y)
        self.query_rows.setPath(path)

    def set_selection(self, layer: int | None, head: int | None) -> None:
        """Outline ``(layer, head)`` (0-based); None hides the outline."""
        self._selected = None if layer is None or head is None else (int(layer), int(head))
        self._update_outline()

    @property
    def data(self) -> ModelViewData | None:
        """The data shown now (None when cleared)."""
        return self._data

    @property
    def selection(self) -> tuple[int, int] | None:
        """The outlined ``(layer, head)``, 0-based."""
        return self._selected

    # -- geometry ------------------------------------------------------------------------

    def cell_rect(self, layer: int, column: int) -> QtCore.QRectF:
        """The rectangle of a cell in the image's (data) coordinates; ``column == heads`` is the last column."""
        T = self._shape[2]
        step = T + _gap(T)
        return QtCore.QRectF(column * step - 0.5, layer * step - 0.5, T, T)

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        """``(layer, column)`` under the data point ``(x, y)``, None in a gap or outside."""
        if self._shape is None:
            return None
        layers, cols, T = self._shape
        step = T + _gap(T)
        cx, cy = x + 0.5, y + 0.5
        col, row = int(np.floor(cx / step)), int(np.floor(cy / step))
        if not (0 <= row < layers and 0 <= col < cols):
            return None
        if cx - col * step >= T or cy - row * step >= T:
            return None
        return row, col

    def cell_center(self, layer: int, column: int) -> QtCore.QPoint:
        """The centre of a cell in the canvas's viewport pixels (to click it)."""
        center = self.cell_rect(layer, column).center()
        scene = self.plot.vb.mapViewToScene(center)
        return self.canvas.mapFromScene(scene)

    # -- hover and click -----------------------------------------------------------------

    def hover_text(self, layer: int, column: int) -> str:
        """What hovering a cell says: "layer L, head H" (1-based) and its largest weight."""
        data = self._data
        heads = data.attentions.shape[1]
        if column < heads:
            matrix = data.attentions[layer, column]
            where = f"layer {layer + 1}, head {column + 1}"
            scale = float(data.head_scale[layer, column])
            if scale == 0:
                where += " (silenced)"
            elif scale != 1:
                where += f" (scaled ×{format_number(scale, 2)})"  # the setting as its spin box writes it
        else:
            matrix = data.summary[layer]
            where = (f"rollout up to layer {layer + 1}" if data.rollout
                     else f"layer {layer + 1}, mean over {heads} heads")
        if matrix.size == 0:
            return where
        i, j = np.unravel_index(int(np.argmax(matrix)), matrix.shape)
        tokens = data.tokens
        pair = f": “{tokens[i]}” → “{tokens[j]}”" if len(tokens) == matrix.shape[0] else ""
        return f"{where}\nmax weight {format_number(float(matrix[i, j]), presentation.digits())}{pair}"

    def _cell_from_scene(self, scene_pos) -> tuple[int, int] | None:
        if self._data is None or not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return None
        point = self.plot.vb.mapSceneToView(scene_pos)
        return self.cell_at(point.x(), point.y())

    def token_pair_at(self, x: float, y: float) -> tuple[int, int] | None:
        """``(query, key)`` token indices under the data point ``(x, y)`` inside a cell, else None."""
        cell = self.cell_at(x, y)
        if cell is None:
            return None
        rect = self.cell_rect(*cell)
        return int(y - rect.top()), int(x - rect.left())

    def _on_mouse_moved(self, scene_pos) -> None:
        cell = self._cell_from_scene(scene_pos)
        text = "" if cell is None else self.hover_text(*cell)
        if cell is not None:
            # The tokens under the pointer: the grid has no room for 72 sets of axis labels.
            point = self.plot.vb.mapSceneToView(scene_pos)
            pair = self.token_pair_at(point.x(), point.y())
            tokens = self._data.tokens
            if pair is not None and max(pair) < len(tokens):
                text += f"\nhere: “{tokens[pair[0]]}” → “{tokens[pair[1]]}”"
        if text != self.canvas.toolTip():
            # Qt shows the widget's tooltip after the usual hover delay; one already
            # on screen is moved to the new cell's text at once.
            self.canvas.setToolTip(text)
            if text and QtWidgets.QToolTip.isVisible():
                QtWidgets.QToolTip.showText(QtGui.QCursor.pos(), text, self.canvas)

    def _on_mouse_clicked(self, event) -> None:
        if event.button() != QtCore.Qt.LeftButton:
            return
        cell = self._cell_from_scene(event.scenePos())
        if cell is None:
            return
        layer, column = cell
        if column < self._data.attentions.shape[1]:
            self.headClicked.emit(layer, column)
        else:
            self.layerClicked.emit(layer)

    # -- drawing helpers -----------------------------------------------------------------

    def _set_ticks(self, layers: int, heads: int, T: int, gap: int, rollout: bool) -> None:
        self._ticks_rollout = rollout
        step = T + gap
        centre = (T - 1) / 2
        left = [(l * step + centre, f"layer {l + 1}") for l in range(layers)]
        # Every head is labelled while the labels fit; otherwise every other one.
        every = 1 if heads <= 16 else 2
        top = [(h * step + centre, f"head {h + 1}" if heads <= 8 else str(h + 1))
               for h in range(0, heads, every)]
        top.append((heads * step + centre, "rollout" if rollout else "mean"))
        self.plot.getAxis("left").setTicks([left, []])
        self.plot.getAxis("top").setTicks([top, []])
        self.plot.getAxis("top").setLabel("head" if heads > 8 else "")

    def _update_marks(self) -> None:
        data = self._data
        scale = np.asarray(data.head_scale)
        silenced, scaled = [], []
        for layer, head in zip(*np.nonzero(scale != 1)):
            rect = self.cell_rect(int(layer), int(head))
            value = float(scale[layer, head])
            if value == 0:
                silenced.append(rect)
            else:
                scaled.append((rect, "×" + format_number(value, 2)))
        layers, cols, T = self._shape
        step = T + _gap(T)
        self.marks.set_marks(silenced, scaled, QtCore.QRectF(-0.5, -0.5, cols * step, layers * step))

    def _update_outline(self) -> None:
        if self._data is None or self._selected is None or self._shape is None:
            self.outline.hide()
            return
        layer, head = self._selected
        layers, cols, _ = self._shape
        if not (0 <= layer < layers and 0 <= head < cols - 1):
            self.outline.hide()
            return
        self.outline.setRect(self.cell_rect(layer, head))
        self.outline.show()
