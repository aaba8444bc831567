"""The Model panel: one table binds each state field to its widget, both ways.

``ControlsPanel.bindings`` is the table: a row names the state field, the
widget, how to read the widget, how to write the state into it, and which
kind of edit a change makes. ``sync`` writes every row under a
``QSignalBlocker`` (setting only what differs: re-setting an equal value still
repaints a widget), and every row's widget signal goes through one edit path.
Adding a control is adding a row (see ``_rows``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from PySide6 import QtCore, QtWidgets

from ...engine import SOFTMAX_KINDS, EngineError
from ...limits import MAX_D_HEAD, MAX_D_MODEL, MAX_HEADS, MAX_SEED
from ...session import SessionError, preset_names
from ...state import StateError
from .inputs import SentenceEdit, _tip, combo, line_edit, spin_box, temperature_box  # noqa: F401

SOFTMAX_LABELS = {"stable": "stable (subtract max)", "naive": "naive exp / Σexp", "sum": "plain x / Σx"}
SCORE_LABELS = {"dot": "dot product", "additive": "additive"}
SCALE_TIP = "Divide the scores by √d_k before softmax, so their variance stays near 1"
SCALE_TIP_ADDITIVE = "Additive scores are bounded by tanh and are not scaled by 1/√d_k"

# How a widget change reaches the studio.
UPDATE = "update"        # studio.update(field=value): one undo step per change
COALESCE = "coalesce"    # studio.update(coalesce=field, ...): a held-down spin box is one undo step
TYPING = "typing"        # like COALESCE, and a refused text stays in the box (nothing typed is lost)
SELECT = "select"        # studio.select(...): moves the selection, not an undoable edit

# Above the size where the views can follow every keystroke (StudioState.live_update),
# typing is applied on Enter or after this pause.
TYPING_PAUSE_MS = 400
LARGE_INPUT_NOTE = "Large input: the views update when you press Enter or pause typing"


@dataclass(frozen=True)
class Kind:
    """How to talk to one kind of widget: its change signal, how to read it, how to write a value."""

    signal: str
    read: Callable
    write: Callable  # (widget, value, state) -> None, sets only what differs


def _set_if(getter, setter):
    def write(widget, value, state):
        if getter(widget) != value:
            setter(widget, value)
    return write


LINE = Kind("textEdited", lambda w: w.text(), _set_if(lambda w: w.text(), lambda w, v: w.setText(v)))
SPIN = Kind("valueChanged", lambda w: w.value(), _set_if(lambda w: w.value(), lambda w, v: w.setValue(v)))
CHECK = Kind("toggled", lambda w: w.isChecked(), _set_if(lambda w: w.isChecked(), lambda w, v: w.setChecked(v)))
DATA_COMBO = Kind("activated", lambda w: w.currentData(),
                  lambda w, v, st: w.setCurrentIndex(max(0, w.findData(v))))


def _list_combo(items: Callable) -> Kind:
    """A combo box whose items follow the state (heads, query tokens); its value is the index."""
    def write(widget, value, state):
        wanted = items(state)
        shown = [widget.itemText(i) for i in range(widget.count())]
        if shown != wanted:
            # A word typed at the end of a 2,000-token sentence adds an item: the items both lists
            # begin with stay, the rest is replaced (clearing and refilling 2,000 items took ms).
            keep = next((i for i, (a, b) in enumerate(zip(shown, wanted)) if a != b), min(len(shown), len(wanted)))
            if len(shown) - keep > 64:  # many to take away: at once
                widget.clear()
                keep = 0
            for i in range(len(shown) - 1, keep - 1, -1):
                widget.removeItem(i)
            widget.addItems(wanted[keep:])
        widget.setCurrentIndex(value if wanted else -1)
    return Kind("activated", lambda w: w.currentIndex(), write)


HEADS_COMBO = _list_combo(lambda st: [f"head {i + 1}" for i in range(st.heads)])
QUERY_COMBO = _list_combo(lambda st: [f"{i + 1}: {t}" for i, t in enumerate(st.query_tokens)])


@dataclass(frozen=True)
class Binding:
    """One row of the table: state ``field`` <-> ``widget`` (of ``kind``), changed by an ``edit``.

    ``enabled`` says from the state whether the control applies (None: always).
    """

    field: str
    widget: QtWidgets.QWidget
    kind: Kind
    edit: str
    enabled: Callable | None = None


def projected(state) -> bool:
    """Heads, d_head and the head choice matter only with projections on."""
    return state.projections


class ControlsPanel(QtWidgets.QWidget):
    """The Model panel. ``studio`` is edited through it; ``show_message``/``clear_message`` report refusals.

    Widgets are reachable by objectName (``sentenceEdit``, ``dModelSpin``...)
    and as attributes (``sentence_edit``, ``d_model_spin``...).
    """

    preset_chosen = QtCore.Signal(str)

    def __init__(self, studio, show_message: Callable[[str], None], clear_message: Callable[[], None],
                 parent=None):
        super().__init__(parent)
        self.setObjectName("controlsPanel")
        self.studio = studio
        self.show_message, self.clear_message = show_message, clear_message
        self.form = QtWidgets.QFormLayout(self)
        self.form.setFieldGrowthPolicy(QtWidgets.QFormLayout.AllNonFixedFieldsGrow)

        self.preset_combo = combo("presetCombo", "Load an example from the lecture notes",
                                  {name: name for name in preset_names()})
        self.preset_combo.activated.connect(lambda i: self.preset_chosen.emit(self.preset_combo.itemData(i)))
        self.form.addRow("Example", self.preset_combo)
        self.randomize_button = _tip(QtWidgets.QPushButton("Randomize"), "randomizeButton",
                                     "Draw new weights (and new vectors for unedited words) from a fresh seed")
        self.randomize_button.clicked.connect(lambda: self.guard(self.studio.randomize))

        self.bindings: list[Binding] = []
        self._toggles: QtWidgets.QVBoxLayout | None = None
        # Typed text waiting for Enter or a pause (large inputs only): field -> binding.
        self._typed: dict[str, Binding] = {}
        self.typing_timer = QtCore.QTimer(self)
        self.typing_timer.setObjectName("typingTimer")
        self.typing_timer.setSingleShot(True)
        self.typing_timer.setInterval(TYPING_PAUSE_MS)
        self.typing_timer.timeout.connect(self.apply_typed)
        for label, binding in self._rows():
            self.add_binding(label, binding)
        self.large_input_note = QtWidgets.QLabel(LARGE_INPUT_NOTE)
        self.large_input_note.setObjectName("largeInputNote")
        self.large_input_note.setWordWrap(True)
        self.large_input_note.setVisible(False)
        self.form.insertRow(2, "", self.large_input_note)  # under the sentence box (row 0 is the example)
        # Which words have no set vector (seeded random ones): their attention means nothing of language.
        self.random_words_note = QtWidgets.QLabel()
        self.random_words_note.setObjectName("randomWordsNote")
        self.random_words_note.setWordWrap(True)
        # As wide as the panel already is, never wider: a long note must not widen the dock.
        self.random_words_note.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Minimum)
        self.random_words_note.setVisible(False)
        self.form.insertRow(3, "", self.random_words_note)
        for b in self.bindings:
            if b.edit == TYPING:
                b.widget.returnPressed.connect(self.apply_typed)
                b.widget.editingFinished.connect(self.apply_typed)
                b.widget.pasted_cut.connect(self.show_message)

    def _rows(self):
        """The table: (form label, Binding). A label "" stacks the control under the one before."""
        return [
            ("Sentence", Binding("sentence", line_edit(
                "sentenceEdit", "Type a sentence…",
                "The sentence: its tokens are the keys and values (and the queries in self-attention)"),
                LINE, TYPING)),
            ("Queries from", Binding("target_sentence", line_edit(
                "targetSentenceEdit", "empty = self-attention",
                "A second sentence (the decoder side): its tokens ask the queries, "
                "the first sentence supplies keys and values. Empty means self-attention."), LINE, TYPING)),
            ("d_model", Binding("d_model", spin_box(
                "dModelSpin", 1, MAX_D_MODEL, "d_model: the length of every token vector"), SPIN, COALESCE)),
            ("heads", Binding("heads", spin_box(
                "headsSpin", 1, MAX_HEADS, "How many attention heads, each with its own W_Q, W_K, W_V"),
                SPIN, COALESCE, projected)),
            ("d_head (d_k)", Binding("d_head", spin_box(
                "dHeadSpin", 1, MAX_D_HEAD, "d_head = d_k = d_v: the size of each head's q, k and v"),
                SPIN, COALESCE, projected)),
            ("seed", Binding("seed", spin_box(
                "seedSpin", 0, MAX_SEED, "The random seed of the weights and of the words you have not edited"),
                SPIN, COALESCE)),
            ("", Binding("scale", _tip(QtWidgets.QCheckBox("scale by 1/√d_k"), "scaleCheck", SCALE_TIP),
                         CHECK, UPDATE, lambda st: st.score != "additive")),
            ("", Binding("causal", _tip(QtWidgets.QCheckBox("causal mask"), "causalCheck",
                         "Each token may attend only to itself and the tokens before it (a decoder)"),
                         CHECK, UPDATE)),
            ("", Binding("positional", _tip(QtWidgets.QCheckBox("positional encoding"), "positionalCheck",
                         "Add the sinusoidal position vectors to the token vectors"), CHECK, UPDATE)),
            ("", Binding("projections", _tip(QtWidgets.QCheckBox("Q, K, V projections"), "projectionsCheck",
                         "On: Q = X·W_Q, K = X·W_K, V = X·W_V per head. Off: simplified attention with Q = K = V = X"),
                         CHECK, UPDATE)),
            ("temperature", Binding("temperature", temperature_box(), SPIN, COALESCE)),
            ("softmax", Binding("softmax", combo(
                "softmaxCombo", "How scores become weights: the stable softmax, the naive one that can "
                "overflow, or plain division by the sum", {k: SOFTMAX_LABELS[k] for k in SOFTMAX_KINDS}),
                DATA_COMBO, UPDATE)),
            ("scores", Binding("score", combo(
                "scoreCombo", "How a query and a key are compared: the dot product q·k, or the additive "
                "(Bahdanau) score v_aᵀ·tanh(q·W₁ + k·W₂), a small neural network", SCORE_LABELS),
                DATA_COMBO, UPDATE)),
            ("show head", Binding("head_index", combo(
                "headCombo", "The head shown in the stage heatmaps and the W_Q, W_K, W_V tables"),
                HEADS_COMBO, SELECT, projected)),
            ("query token", Binding("query_index", combo(
                "queryCombo", "The query token followed in every view (or click a heatmap row)"),
                QUERY_COMBO, SELECT)),
        ]

    # -- building --------------------------------------------------------------------
    def add_binding(self, label: str, binding: Binding) -> None:
        """Add a bound control as a form row (label "" stacks it under the previous checkbox group)."""
        widget = binding.widget
        attr = widget.objectName()
        # sentenceEdit -> sentence_edit, dModelSpin -> d_model_spin (the names tests and scripts use)
        setattr(self, "".join("_" + c.lower() if c.isupper() else c for c in attr), widget)
        getattr(widget, binding.kind.signal).connect(lambda *_, b=binding: self._on_widget(b))
        self.bindings.append(binding)
        if label:
            self._toggles = None
            if binding.field == "seed":
                row = QtWidgets.QHBoxLayout()
                row.addWidget(widget, 1)
                row.addWidget(self.randomize_button)
                self.form.addRow(label, row)
            else:
                self.form.addRow(label, widget)
        else:
            if self._toggles is None:
                self._toggles = QtWidgets.QVBoxLayout()
                self.form.addRow("", self._toggles)
            self._toggles.addWidget(widget)

    def add_row(self, label: str, widget_or_layout) -> None:
        """Add an unbound row (the play controls, a model chooser...)."""
        self.form.addRow(label, widget_or_layout)

    @property
    def target_edit(self) -> QtWidgets.QLineEdit:
        return self.target_sentence_edit

    # -- widget -> studio ----------------------------------------------------------------
    def guard(self, func, *args, **kwargs) -> bool:
        """Run an edit; a refused value shows its reason and puts the widgets back to the state."""
        try:
            func(*args, **kwargs)
        except (StateError, EngineError, SessionError) as exc:
            self.show_message(str(exc))
            self.sync()
            return False
        self.clear_message()
        return True

    def _on_widget(self, binding: Binding) -> None:
        value = binding.kind.read(binding.widget)
        field = binding.field
        if binding.edit == SELECT:
            self.guard(self.studio.select, **{field.removesuffix("_index"): value})
        elif binding.edit == TYPING:
            if self._too_large_to_follow(field, value):
                # Each keystroke would take seconds: wait for Enter or a pause.
                self._typed[field] = binding
                self.large_input_note.setVisible(True)
                self.typing_timer.start()
                return
            self._typed.pop(field, None)
            self._apply_typing(binding, value)
            self.large_input_note.setVisible(bool(self._typed) or not self.studio.state.live_update)
        else:
            self.guard(self.studio.update, coalesce=field if binding.edit == COALESCE else None, **{field: value})

    def _too_large_to_follow(self, field: str, value: str) -> bool:
        try:
            return not self.studio.state.replace(**{field: value}).live_update
        except (StateError, EngineError):
            return False  # refused at once, with its message

    def _apply_typing(self, binding: Binding, value: str) -> None:
        try:
            self.studio.update(coalesce=binding.field, **{binding.field: value})
        except (StateError, EngineError) as exc:
            # Keep what the person typed so that nothing is lost; say why it is not applied.
            self.show_message(f"{exc}. The heatmaps still show the previous sentences.")
            return
        self.clear_message()

    def apply_typed(self) -> None:
        """Apply text typed into a large input now (Enter, a pause, leaving the box)."""
        self.typing_timer.stop()
        typed, self._typed = self._typed, {}
        for binding in typed.values():
            self._apply_typing(binding, binding.kind.read(binding.widget))
        self.large_input_note.setVisible(not self.studio.state.live_update)

    # -- studio -> widgets ----------------------------------------------------------------
    def sync(self, preset_name: str | None = None, preset_edited: bool = False) -> None:
        """Show the studio's state in every bound widget (signals blocked: this is not an edit).

        ``preset_name``/``preset_edited`` say which example the model came from (None: as last shown).
        """
        st = self.studio.state
        wanted = self.studio.wanted() if hasattr(self.studio, "wanted") else {}
        for b in self.bindings:
            if b.field in self._typed or b.field in wanted:
                continue  # typed text waiting to be applied, or a change still computing, is never overwritten
            blocker = QtCore.QSignalBlocker(b.widget)
            b.kind.write(b.widget, getattr(st, b.field), st)
            if b.enabled is not None and b.widget.isEnabled() != b.enabled(st):
                b.widget.setEnabled(b.enabled(st))
            del blocker
        tip = SCALE_TIP if self.scale_check.isEnabled() else SCALE_TIP_ADDITIVE
        if self.scale_check.toolTip() != tip:  # a new tip is an event for the box, on every edit
            self.scale_check.setToolTip(tip)
        self.large_input_note.setVisible(bool(self._typed) or not st.live_update)
        self._say_random_words(st)
        if preset_name is not None:
            self.show_preset(preset_name, preset_edited)

    def _say_random_words(self, st) -> None:
        """Name the words that got seeded random vectors (only when the text changes: a label's new
        text lays out the dock again)."""
        words = getattr(st, "random_vector_words", None)  # a trained model's state has none: its vectors are learned
        text = random_words_text(words(), len(set(st.tokens) | set(st.target_tokens))) if words else ""
        if self.random_words_note.text() != text:
            self.random_words_note.setText(text)
            self.random_words_note.setVisible(bool(text))

    def show_preset(self, name: str, edited: bool) -> None:
        """The example box names the example only while the model still is it."""
        blocker = QtCore.QSignalBlocker(self.preset_combo)
        index = self.preset_combo.findData(name)
        edited = edited and index >= 0
        self.preset_combo.setPlaceholderText(f"{name} (edited)" if edited else "choose an example")
        self.preset_combo.setCurrentIndex(-1 if edited or index < 0 else index)
        del blocker


RANDOM_WORDS_SHOWN = 6  # words named in the note; the rest counted


def random_words_text(words: list[str], distinct: int) -> str:
    """The note under the sentence: which of its ``distinct`` words have seeded random vectors."""
    if not words:
        return ""
    if len(words) == distinct:
        return ("Every word here has a seeded random vector: the toy model knows no meanings, so its "
                "attention shows the mechanism, not language.")
    named = ", ".join(f"“{w}”" for w in words[:RANDOM_WORDS_SHOWN])
    more = f" and {len(words) - RANDOM_WORDS_SHOWN} more" if len(words) > RANDOM_WORDS_SHOWN else ""
    return f"Random vectors (no meaning set): {named}{more}; their attention means nothing of language."


def scrolled(panel: QtWidgets.QWidget) -> QtWidgets.QScrollArea:
    """``panel`` in a scroll area that never scrolls sideways unless the panel cannot fit (see ``fit_width``)."""
    scroll = QtWidgets.QScrollArea()
    scroll.setObjectName("controlsScroll")
    scroll.setWidget(panel)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QtWidgets.QFrame.NoFrame)
    scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
    _Refit(scroll)
    return scroll


class _Refit(QtCore.QObject):
    """Fits ``scroll`` again (``fit_width``, with the limits it was last given) whenever its panel's
    layout changes: the rows a trained model shows (model, layer, scale, reset) are wider than the
    toy's, and were cut at the right by the width fitted for the toy."""

    def __init__(self, scroll: QtWidgets.QScrollArea):
        super().__init__(scroll)
        self.scroll = scroll
        self.limit: int | None = None
        self.widest: int | None = None
        self.fitted = False  # only once the window has fitted it (fit_width) the first time
        scroll.widget().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QtCore.QEvent.LayoutRequest and self.fitted:
            fit_width(self.scroll, self.limit, self.widest)
        return False


def _forms(panel: QtWidgets.QWidget) -> list[QtWidgets.QFormLayout]:
    """The form layouts of ``panel``: its own and those of the panels in its rows (a trained model's)."""
    forms = [panel.layout()] + panel.findChildren(QtWidgets.QFormLayout)
    return list(dict.fromkeys(f for f in forms if isinstance(f, QtWidgets.QFormLayout)))


def side_by_side_width(form: QtWidgets.QFormLayout) -> int:
    """The width ``form`` asks for with every label beside its field (``DontWrapRows``), whatever its
    wrap policy now: a column as wide as the widest label, then one as wide as the widest field.

    Computed, not measured by switching the policy: each switch asks for a new layout, and the new
    layout would fit the panel again, switch again, and so on forever.
    """
    role = QtWidgets.QFormLayout.ItemRole
    labels = fields = spans = 0

    def width(item) -> int:
        inner = item.widget().layout() if item.widget() is not None else None
        if isinstance(inner, QtWidgets.QFormLayout) and not item.isEmpty():
            return side_by_side_width(inner)  # a panel in a row (a trained model's) lays its rows out alike
        return item.sizeHint().width()

    for row in range(form.rowCount()):
        if not form.isRowVisible(row):
            continue
        span = form.itemAt(row, role.SpanningRole)
        if span is not None:
            spans = max(spans, width(span))
            continue
        label, field = form.itemAt(row, role.LabelRole), form.itemAt(row, role.FieldRole)
        labels = max(labels, width(label) if label is not None else 0)
        fields = max(fields, width(field) if field is not None else 0)
    spacing = form.horizontalSpacing()
    if spacing < 0:
        spacing = form.parentWidget().style().pixelMetric(QtWidgets.QStyle.PM_LayoutHorizontalSpacing) \
            if form.parentWidget() is not None else 6
    margins = form.contentsMargins()
    return margins.left() + margins.right() + max(spans, labels + (spacing if labels else 0) + fields)


def fit_width(scroll: QtWidgets.QScrollArea, limit: int | None = None, widest: int | None = None) -> None:
    """Make ``scroll`` as wide as its panel at the current text size, keeping within ``limit`` pixels
    (None: 30% of the screen).

    A panel whose labels and fields side by side would be wider than ``limit`` puts each label above its
    field instead (every form in it wraps its rows); a control that is wider than ``limit`` by itself (a
    trained model's name at 150 %) widens the panel up to ``widest`` pixels (None: ``limit``). Only a
    panel that does not fit even then scrolls sideways. A scroll area made by :func:`scrolled` keeps
    fitting itself with the same limits when its panel's rows change.
    """
    refit = scroll.findChild(_Refit, options=QtCore.Qt.FindDirectChildrenOnly)
    if refit is not None:
        refit.limit, refit.widest, refit.fitted = limit, widest, True
    panel = scroll.widget()
    bar = scroll.verticalScrollBar().sizeHint().width()
    if limit is None:
        screen = scroll.screen()
        limit = int(0.3 * max(screen.availableGeometry().width(), 1024)) if screen else 1 << 20
    widest = max(limit, widest or limit)
    forms = _forms(panel)
    if forms:
        panel.layout().activate()  # the rows' hints at the current text size
        wrap = side_by_side_width(forms[0]) + bar + 4 > limit
        policy = QtWidgets.QFormLayout.WrapAllRows if wrap else QtWidgets.QFormLayout.DontWrapRows
        for form in forms:
            if form.rowWrapPolicy() != policy:
                form.setRowWrapPolicy(policy)
    panel.layout().activate()
    wanted = panel.sizeHint().width() + bar + 4
    # Past ``widest`` the controls take less than they would like, down to their least (a combo box's
    # list is wider than the choice it shows); only below that does the panel scroll sideways.
    least = panel.minimumSizeHint().width() + bar + 4
    if scroll.minimumWidth() != min(wanted, widest):
        scroll.setMinimumWidth(min(wanted, widest))
    scroll.setHorizontalScrollBarPolicy(
        QtCore.Qt.ScrollBarAsNeeded if least > widest else QtCore.Qt.ScrollBarAlwaysOff)
