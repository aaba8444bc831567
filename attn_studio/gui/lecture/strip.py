"""The control strip of Present: the view's live controls on the stage, each a stand-in for the
window's own control (the same checks, the same undo)."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from .basics import TRAINING_PREFIX, _font


class ControlStrip(QtWidgets.QFrame):
    """The live controls of the view on the stage, each a stand-in for the window's own control.

    A strip control never edits the model itself: it sets the window's control as a person
    would (its value, then the signal the window listens to), so a refused value is refused
    the same way, the same undo entry is made, and the window and the stage show the same.
    """

    def __init__(self, present):
        super().__init__()
        self.setObjectName("presentStrip")
        self.present, self.window = present, present.window
        self.setAutoFillBackground(True)
        self.rows = QtWidgets.QVBoxLayout(self)
        self.rows.setSpacing(0)
        self.rows.setContentsMargins(0, 0, 0, 0)
        self.widgets: dict[str, QtWidgets.QWidget] = {}
        self._syncing = False

    def build(self, kind: str, px: int) -> None:
        """Controls for view ``kind`` at text size ``px``."""
        # What the controls were built for: a view, a model kind (a trained model has a layer box and
        # Silence, the toy model heads, d_k and switches) and a size; sync() builds them again when it changes.
        self.built_for = (kind, self.window.studio.is_trained, px)
        self.widgets = {}
        while self.rows.count():
            row = self.rows.takeAt(0)
            if row.layout() is not None:
                while row.layout().count():
                    item = row.layout().takeAt(0)
                    child = item.widget()
                    if child is not None:
                        child.hide()
                        child.setParent(None)  # gone now, not after this turn: no overlap
                        child.deleteLater()
                row.layout().setParent(None)
        self.setFont(_font(px))
        w = self.window
        trained = w.studio.is_trained
        first, second = QtWidgets.QHBoxLayout(), QtWidgets.QHBoxLayout()
        for row in (first, second):
            row.setSpacing(max(6, px // 3))
            self.rows.addLayout(row)
        if kind.startswith(TRAINING_PREFIX):
            panel = self.present.training_panel(kind)
            if panel is not None:
                self._training_controls(first, panel)
        else:
            sentence = QtWidgets.QLineEdit()
            sentence.setObjectName("presentSentence")
            sentence.textEdited.connect(self._sentence_edited)
            self._add(first, "sentence", sentence, None, stretch=1)
            query = QtWidgets.QComboBox()
            query.setObjectName("presentQuery")
            query.setSizeAdjustPolicy(QtWidgets.QComboBox.AdjustToContents)
            query.activated.connect(lambda i: self.window.studio.select(query=i))
            self._add(first, "query", query, "query")
            if trained:
                layer = QtWidgets.QSpinBox()
                layer.setObjectName("presentLayer")
                layer.valueChanged.connect(lambda v: self._forward(self.window.trained.room.panel.layer_spin, v))
                self._add(second, "layer", layer, "layer")
            head = QtWidgets.QSpinBox()
            head.setObjectName("presentHead")
            head.valueChanged.connect(lambda v: self._select_head(v - 1))
            self._add(second, "head", head, "head")
            if trained:
                silence = QtWidgets.QPushButton("Silence")
                silence.setObjectName("presentSilence")
                silence.setCheckable(True)
                silence.toggled.connect(lambda on: self._forward_check(self.window.trained.room.panel.silence_button, on))
                self._add(second, "silence", silence, None)
            else:
                for name, label, target in (("heads", "heads", "heads_spin"), ("d_k", "d_k", "d_head_spin")):
                    spin = QtWidgets.QSpinBox()
                    spin.setObjectName(f"present_{name}")
                    spin.valueChanged.connect(lambda v, t=target: self._forward(getattr(self.window, t), v))
                    self._add(second, name, spin, label)
                for name, label, target in (("scale", "÷√d_k", "scale_check"), ("causal", "causal", "causal_check")):
                    check = QtWidgets.QCheckBox(label)
                    check.setObjectName(f"present_{name}")
                    check.toggled.connect(lambda on, t=target: self._forward_check(getattr(self.window, t), on))
                    self._add(second, name, check, None)
                temperature = QtWidgets.QDoubleSpinBox()
                temperature.setObjectName("presentTemperature")
                temperature.setDecimals(2)
                temperature.setSingleStep(0.1)
                temperature.valueChanged.connect(lambda v: self._forward(self.window.temperature_spin, v))
                self._add(second, "temperature", temperature, "T")
            second.addStretch(1)
        # Two rows within the strip's share of the stage (12 %): each control one text line high.
        height = QtGui.QFontMetrics(self.font()).height() + 5
        for widget in self.widgets.values():
            widget.setFocusPolicy(QtCore.Qt.ClickFocus)  # the keys stay the stage's until a control is clicked
            widget.setFixedHeight(height)
            widget.show()  # now, not a turn later (as a layout would): the body is measured with the strip in place
        for label in self.findChildren(QtWidgets.QLabel):
            label.show()
        self.sync()

    def _training_controls(self, row, panel) -> None:
        for name, source in (("play", "play_button"), ("step", "step_button"), ("reset", "reset_button")):
            original = getattr(panel, source, None)
            if original is None:
                continue
            button = QtWidgets.QPushButton(original.text())
            button.setObjectName(f"present_{name}")
            button.setCheckable(original.isCheckable())
            if original.isCheckable():
                button.toggled.connect(lambda on, o=original: o.setChecked(on))
            else:
                button.clicked.connect(original.click)
            self._add(row, name, button, None)
        speed = getattr(panel, "speed_combo", None)
        if speed is not None:
            copy = QtWidgets.QComboBox()
            copy.setObjectName("present_speed")
            copy.addItems([speed.itemText(i) for i in range(speed.count())])
            copy.activated.connect(lambda i, s=speed: s.setCurrentIndex(i))
            self._add(row, "speed", copy, "speed")
        row.addStretch(1)

    def _add(self, row, name: str, widget, label: str | None, stretch: int = 0) -> None:
        if label:
            text = QtWidgets.QLabel(label)
            text.setObjectName(f"presentLabel_{name}")
            row.addWidget(text)
        row.addWidget(widget, stretch)
        self.widgets[name] = widget

    # -- forwarding to the window's controls ------------------------------------------------
    def _forward(self, target, value) -> None:
        if not self._syncing and target.value() != value:
            target.setValue(value)

    def _forward_check(self, target, on: bool) -> None:
        if not self._syncing and target.isChecked() != on:
            target.setChecked(on)

    def _select_head(self, head: int) -> None:
        if not self._syncing:
            self.present.select_head(head)

    def _sentence_edited(self, text: str) -> None:
        # As typing in the window's sentence box: its text, then the signal it sends when a person types.
        target = self.window.sentence_edit
        target.setText(text)
        target.textEdited.emit(text)

    def sync(self) -> None:
        """Show the studio's current values (after every change, from wherever it came); the controls
        are built again first when the window went from the toy model to a trained one or back."""
        kind, trained, px = getattr(self, "built_for", (None, None, None))
        if kind is not None and trained != self.window.studio.is_trained:
            self.build(kind, px)
            return
        self._syncing = True
        try:
            self._sync()
        finally:
            self._syncing = False

    def _sync(self) -> None:
        w, state = self.window, self.window.studio.state
        get = self.widgets.get
        sentence = get("sentence")
        if sentence is not None and sentence.text() != state.sentence and not sentence.hasFocus():
            sentence.setText(state.sentence)
        query = get("query")
        if query is not None:
            tokens = list(state.query_tokens)
            if [query.itemText(i) for i in range(query.count())] != tokens:
                query.clear()
                query.addItems(tokens)
            if tokens:
                query.setCurrentIndex(min(state.query_index, len(tokens) - 1))
        head = get("head")
        if head is not None:
            heads = int(w.studio.result.weights.shape[0])
            head.setRange(1, max(heads, 1))
            head.setValue(state.shown_head + 1 if hasattr(state, "shown_head") else state.head_index + 1)
        layer = get("layer")
        if layer is not None:
            layer.setRange(1, int(state.layers))
            layer.setValue(state.layer_index + 1)
        silence = get("silence")
        if silence is not None:
            room = w.trained.room
            silenced = room.studio is not None and room.studio.head_scale(state.layer_index, state.head_index) == 0.0
            silence.setChecked(silenced)
            silence.setText("Silenced" if silenced else "Silence")
        for name, source in (("heads", "heads_spin"), ("d_k", "d_head_spin"), ("temperature", "temperature_spin")):
            copy = get(name)
            if copy is not None:
                original = getattr(w, source)
                copy.setRange(original.minimum(), original.maximum())
                copy.setValue(original.value())
                copy.setEnabled(original.isEnabled())
        for name, source in (("scale", "scale_check"), ("causal", "causal_check")):
            copy = get(name)
            if copy is not None:
                original = getattr(w, source)
                copy.setChecked(original.isChecked())
                copy.setEnabled(original.isEnabled())
        panel = self.present.training_panel(self.present.view)
        if panel is not None:
            for name, source in (("play", "play_button"), ("step", "step_button"), ("reset", "reset_button")):
                copy, original = get(name), getattr(panel, source, None)
                if copy is not None and original is not None:
                    copy.setText(original.text())
                    if original.isCheckable():
                        copy.setChecked(original.isChecked())
            copy, speed = get("speed"), getattr(panel, "speed_combo", None)
            if copy is not None and speed is not None:
                copy.setCurrentIndex(speed.currentIndex())
