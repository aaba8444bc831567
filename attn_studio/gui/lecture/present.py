"""Present (F5): the current view as a stage for the room, live, on one screen or two.

The stage is a window of its own, full screen on the projector. Its sizes come
from the height of that screen, after the AV standard for displays a room must
read (AVIXA DISCAS, basic decision making: an element at least 3 % of the image
height for a back row six image heights away): at 720 px, token labels of a
31 px font, cell values of 26 px, titles larger; at 1080 px or 4K the same
proportions.

What the stage shows is the page figure of the view (:mod:`..files.sheet`), laid
out at the screen's size and kept live: every edit draws it again from the
studio's numbers. Where the tiles of a view do not fit side by side, ← → go from
one to the next; where a sentence does not fit at that size, the stage shows a
window of its tokens around the query (↑ ↓ move the query and the window with
it), and says which tokens of how many. Views that are not heatmaps (geometry,
the training lab's panels, drift, meaning in context, the √d_k plot, the Head
Lab) are the window's own widget, lent to the stage at the stage's text size
and given back when the stage moves on.

A control strip at the bottom (H hides it) keeps the view's live controls on the
stage; with two screens the stage fills the screen the window is not on and the
window stays live on the laptop (View → Present on… chooses the screen).
"""

from __future__ import annotations

import math

import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from ..qt.pg import pg
from ..files import sheet as sheets

# Sizes as a fraction of the stage's height (720 px: labels 31, values 26, titles 36, strip ≤ 86).
LABEL_FRACTION = 0.043     # token labels: a 31 px font at 720 px, letters about 3 % of the height
VALUE_FRACTION = 0.036     # cell values: 26 px at 720 px
TITLE_FRACTION = 0.05      # the stage's title: 36 px at 720 px
CAPTION_FRACTION = 0.036   # the caption and the strip's controls: 26 px at 720 px
STRIP_FRACTION = 0.12      # the control strip's most
STAGE_DIGITS = 2           # cells on the stage: two decimals (four do not fit a cell the room can read)
MARGIN_FRACTION = 0.012
TRAINING_PLOTS_PER_PAGE = 1  # a training panel's plots on the stage one at a time: its legend and title read at the room's size

ATTENTION, STEPS, OUTPUTS, COMPARE, POSITIONS = "Attention", "Step by step", "Heads → output", "Compare", "Positions"
GEOMETRY, HEADS, MODEL, DRIFT, MEANING = "Geometry", "Heads", "Model view", "Drift", "Meaning in context"
VARIANCE = "Why divide by √d_k"
TRAINING_PREFIX = "Training: "
HEATMAP_VIEWS = (ATTENTION, OUTPUTS, COMPARE, POSITIONS, MODEL)


def stage_sizes(height: int) -> dict:
    """Pixel sizes of the stage's text for a stage ``height`` pixels tall."""
    return {"label": math.ceil(LABEL_FRACTION * height), "value": math.ceil(VALUE_FRACTION * height),
            "title": math.ceil(TITLE_FRACTION * height), "caption": math.ceil(CAPTION_FRACTION * height),
            "strip": int(STRIP_FRACTION * height), "margin": max(4, round(MARGIN_FRACTION * height))}


def stage_zoom(label_px: float, dpi: float = 96.0) -> float:
    """The text zoom (presentation.STYLE.zoom) at which a plot's tick labels are ``label_px`` pixels."""
    return label_px / (presentation.BASE_TICK_PT * dpi / 72.0)


class _AtZoom:
    """Within: new plot items and restyles take the stage's text size (and the stage's digits)."""

    def __init__(self, zoom: float):
        self.zoom = zoom

    def __enter__(self):
        self.saved = presentation.STYLE.zoom
        presentation.STYLE.zoom = self.zoom

    def __exit__(self, *exc):
        presentation.STYLE.zoom = self.saved


def _font(px: int, bold: bool = False) -> QtGui.QFont:
    font = QtGui.QFont(QtWidgets.QApplication.font())
    font.setPixelSize(int(px))
    font.setBold(bold)
    return font


def _discard(widget: QtWidgets.QWidget) -> None:
    """Delete a figure the stage no longer shows, now (it is in no event of its own).

    Not ``deleteLater``: until the C++ side goes, its plot items' Python side may be collected as a
    cycle on the GUI thread, and a layout still under way would then call an item whose attributes
    are gone ('LabelItem' has no '_sizeHint')."""
    if shiboken6.isValid(widget):
        widget.hide()
        widget.setParent(None)
        shiboken6.delete(widget)


def token_window(n: int, fit: int, centre: int) -> tuple[int, int]:
    """(start, stop) of ``fit`` consecutive tokens of ``n`` around index ``centre`` (all of them when they fit)."""
    fit = max(1, int(fit))
    if n <= fit:
        return 0, n
    start = min(max(centre - fit // 2, 0), n - fit)
    return start, start + fit


# -- the control strip -------------------------------------------------------------------------

class ControlStrip(QtWidgets.QFrame):
    """The live controls of the view on the stage, each a stand-in for the window's own control.

    A strip control never edits the model itself: it sets the window's control as a person
    would (its value, then the signal the window listens to), so a refused value is refused
    the same way, the same undo entry is made, and the window and the stage show the same.
    """

    def __init__(self, present: "Present"):
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


# -- the stage ------------------------------------------------------------------------------

class PointerOverlay(QtWidgets.QWidget):
    """A soft translucent circle where the mouse is, so a room sees what the lecturer points at.

    Transparent for the mouse: clicks and hovers reach the stage underneath. ``centre`` is None
    until the mouse moves over the stage.
    """

    def __init__(self, parent: QtWidgets.QWidget):
        super().__init__(parent)
        self.setObjectName("presentPointer")
        self.setAttribute(QtCore.Qt.WA_TransparentForMouseEvents)
        self.setAttribute(QtCore.Qt.WA_NoSystemBackground)
        self.centre: QtCore.QPoint | None = None
        self.radius = 34

    def move_to(self, pos: QtCore.QPoint | None) -> None:
        """Put the circle's centre at ``pos`` (this widget's coordinates); None hides it."""
        old = self.centre
        self.centre = None if pos is None else QtCore.QPoint(pos)
        for centre in (old, self.centre):
            if centre is not None:
                r = self.radius + 2
                self.update(QtCore.QRect(centre.x() - r, centre.y() - r, 2 * r, 2 * r))

    def paintEvent(self, event):  # noqa: N802 (Qt's name)
        if self.centre is None:
            return
        painter = QtGui.QPainter(self)
        painter.setRenderHint(QtGui.QPainter.Antialiasing)
        gradient = QtGui.QRadialGradient(QtCore.QPointF(self.centre), self.radius)
        gradient.setColorAt(0.0, QtGui.QColor(255, 214, 0, 120))
        gradient.setColorAt(0.7, QtGui.QColor(255, 214, 0, 70))
        gradient.setColorAt(1.0, QtGui.QColor(255, 214, 0, 0))
        painter.setPen(QtCore.Qt.NoPen)
        painter.setBrush(gradient)
        painter.drawEllipse(QtCore.QPointF(self.centre), self.radius, self.radius)


class Stage(QtWidgets.QWidget):
    """The stage window: a title, the view laid out for the room, a caption and the control strip."""

    def __init__(self, present: "Present"):
        super().__init__(None, QtCore.Qt.Window | QtCore.Qt.FramelessWindowHint)
        self.setObjectName("presentStage")
        self.setWindowTitle("Attention Studio — Present")
        self.present = present
        self.setAutoFillBackground(True)
        self.setFocusPolicy(QtCore.Qt.StrongFocus)
        self.setAttribute(QtCore.Qt.WA_DeleteOnClose, False)
        layout = self.main_layout = QtWidgets.QVBoxLayout(self)
        self.title = QtWidgets.QLabel()
        self.title.setObjectName("presentTitle")
        self.title.setAlignment(QtCore.Qt.AlignCenter)
        self.title.setTextFormat(QtCore.Qt.PlainText)
        layout.addWidget(self.title)
        self.body = QtWidgets.QWidget()
        self.body.setObjectName("presentBody")
        self.body_layout = QtWidgets.QVBoxLayout(self.body)
        self.body_layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.body, 1)
        self.caption = QtWidgets.QLabel()
        self.caption.setObjectName("presentCaption")
        self.caption.setAlignment(QtCore.Qt.AlignCenter)
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(QtCore.Qt.PlainText)
        layout.addWidget(self.caption)
        self.strip = ControlStrip(present)
        layout.addWidget(self.strip)
        self.content: QtWidgets.QWidget | None = None
        self.pointer = PointerOverlay(self)
        self.setMouseTracking(True)
        QtWidgets.QApplication.instance().installEventFilter(self)  # the pointer follows the mouse

    def resizeEvent(self, event):  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self.pointer.radius = max(20, round(0.047 * self.height()))  # 34 px at 720 px
        self.pointer.setGeometry(self.rect())
        self.pointer.raise_()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QtCore.QEvent.MouseMove and isinstance(watched, QtWidgets.QWidget) \
                and (watched is self or self.isAncestorOf(watched)):
            self.pointer.move_to(self.mapFromGlobal(event.globalPosition().toPoint()))
            self.pointer.raise_()
        elif event.type() == QtCore.QEvent.Leave and watched is self:
            self.pointer.move_to(None)
        return False

    def sizes(self) -> dict:
        """The stage's text sizes for its present height (the screen's, once full screen)."""
        return stage_sizes(max(self.height(), 200))

    def apply_sizes(self) -> dict:
        """Fonts and margins from the stage's height."""
        s = self.sizes()
        m = s["margin"]
        self.main_layout.setContentsMargins(m, m // 2, m, m // 2)
        self.main_layout.setSpacing(m // 2)
        self.title.setFont(_font(s["title"], bold=True))
        self.caption.setFont(_font(s["caption"]))
        self.body.setFont(_font(s["caption"]))
        # The stage is the plots' canvas colour all over: no grey frame around a white figure.
        theme = presentation.STYLE.theme
        palette = self.palette()
        palette.setColor(QtGui.QPalette.Window, QtGui.QColor(theme.canvas))
        palette.setColor(QtGui.QPalette.WindowText, QtGui.QColor(theme.ink))
        self.setPalette(palette)
        return s

    def set_content(self, widget: QtWidgets.QWidget | None) -> None:
        """Show ``widget`` in the body (the previous content is removed; a lent widget is not deleted)."""
        old = self.content
        if old is widget:
            return
        if old is not None and shiboken6.isValid(old):
            self.body_layout.removeWidget(old)
            old.hide()
            if not getattr(old, "lent", False):
                _discard(old)
        self.content = widget
        if widget is not None:
            self.body_layout.addWidget(widget, 1, QtCore.Qt.AlignCenter if getattr(widget, "fixed", False)
                                       else QtCore.Qt.Alignment())
            widget.show()
            for child in [widget] + widget.findChildren(QtWidgets.QWidget):
                child.setMouseTracking(True)  # the pointer follows a mouse moved without a button
            self.pointer.raise_()

    def set_caption(self, text: str) -> None:
        """One line under the view: what it shows first, then the keys; parts that do not fit the
        stage's width are left out from the end (a caption is never wrapped, cut or made smaller)."""
        scene = self.present.current_scene()
        if scene is not None and scene.caption and scene.view == self.present.view and text.strip():
            text = f"{scene.caption} · {text}"  # the scene's own line first: it is what the room reads
        parts = text.split(" · ")
        metrics = QtGui.QFontMetrics(self.caption.font())
        room = self.width() - 2 * self.sizes()["margin"] - 8
        while len(parts) > 1 and metrics.horizontalAdvance(" · ".join(parts)) > room:
            parts.pop()
        self.caption.setText(" · ".join(parts))

    def body_size(self) -> QtCore.QSize:
        """The room the body has for the view: the stage less its title, caption, strip and margins,
        as its layout gives them now."""
        s = self.sizes()
        line = QtGui.QFontMetrics(_font(s["caption"])).height()
        self.caption.setFixedHeight(line + 4)  # one line: the caption never takes the view's room
        self.title.setFixedHeight(QtGui.QFontMetrics(_font(s["title"], True)).height() + 4)
        self.main_layout.activate()
        return self.body.size()

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        if not self.present.key(event):
            super().keyPressEvent(event)

    def closeEvent(self, event):  # noqa: N802 (Qt's name)
        # Closed by the window system (Alt+F4): the same as Esc.
        event.ignore()
        QtCore.QTimer.singleShot(0, self.present.leave)


class _Lent:
    """A widget of the window lent to the stage: where it was, to put it back."""

    def __init__(self, widget: QtWidgets.QWidget):
        self.widget = widget
        self.tabs = self.dock = None
        self.placeholder = QtWidgets.QLabel("Shown on the stage (Present); Esc there, or F5, brings it back here.")
        self.placeholder.setObjectName("presentPlaceholder")
        self.placeholder.setAlignment(QtCore.Qt.AlignCenter)
        self.placeholder.setWordWrap(True)
        parent = widget.parentWidget()
        while parent is not None and not isinstance(parent, (QtWidgets.QStackedWidget, QtWidgets.QDockWidget)):
            parent = parent.parentWidget()
        if isinstance(parent, QtWidgets.QDockWidget):
            self.dock = parent
            parent.setWidget(self.placeholder)
        elif parent is not None and isinstance(parent.parentWidget(), QtWidgets.QTabWidget):
            tabs = self.tabs = parent.parentWidget()
            self.index = tabs.indexOf(widget)
            self.text, self.tip = tabs.tabText(self.index), tabs.tabToolTip(self.index)
            current = tabs.currentIndex()
            tabs.blockSignals(True)
            tabs.removeTab(self.index)
            tabs.insertTab(self.index, self.placeholder, self.text)
            tabs.setCurrentIndex(current)
            tabs.blockSignals(False)
        self.font = QtGui.QFont(widget.font())
        self.had_font = widget.testAttribute(QtCore.Qt.WA_SetFont)
        # Labels and controls that chose their own size (a readout 1.45 times the text): each
        # is given back its own font when the stage lets the widget go.
        self.own_fonts = [(child, QtGui.QFont(child.font())) for child in widget.findChildren(QtWidgets.QWidget)
                          if child.testAttribute(QtCore.Qt.WA_SetFont)]
        widget.lent = True
        # A training panel on the stage: its own buttons are the strip's, its plots shown a few at a time.
        self.hidden_controls = []
        row = getattr(widget, "controls_row", None)
        if row is not None:
            for i in range(row.count()):
                child = row.itemAt(i).widget()
                if child is not None and child.isVisibleTo(widget):
                    child.hide()
                    self.hidden_controls.append(child)
        # Items painted from a pixmap cache at the window's size: drawn afresh on the stage, text as text.
        self.cached = []
        for view in widget.findChildren(QtWidgets.QGraphicsView):
            for item in view.scene().items():
                if item.cacheMode() != QtWidgets.QGraphicsItem.NoCache:
                    self.cached.append((item, item.cacheMode()))
                    item.setCacheMode(QtWidgets.QGraphicsItem.NoCache)
        # Labels of a height fixed for the window's text (a two-line caption): free on the stage.
        self.fixed_heights = [(child, child.minimumHeight()) for child in widget.findChildren(QtWidgets.QLabel)
                              if child.minimumHeight() == child.maximumHeight() and child.minimumHeight() > 0]
        for child, _ in self.fixed_heights:
            child.setMaximumHeight(16777215)
        graphics = getattr(widget, "graphics", None) or getattr(widget, "canvas", None)
        self.graphics = graphics if isinstance(graphics, pg.GraphicsLayoutWidget) else None
        graphics = self.graphics
        self.items = []
        # The panel's heatmaps (the heads of "Why two layers", the alignment of "Why attention") go
        # on the stage as page figures of their own, with every token labelled; the plots that hold
        # them are folded away on the curves' pages.
        self.heatmaps = [hm for row in getattr(widget, "heatmaps", []) for hm in row]
        if getattr(widget, "alignment", None) is not None:
            self.heatmaps.append(widget.alignment)
        self.folded = []
        if graphics is not None:
            plots = {hm.plot for hm in self.heatmaps}
            cells = sorted(graphics.ci.items.items(), key=lambda kv: min(kv[1]))
            for item, _ in cells:
                inner = set(getattr(item, "items", {}) or {})
                entry = (item, item.maximumSize(), item.minimumSize())
                (self.folded if item in plots or inner & plots else self.items).append(entry)

    def show_items(self, page: int, per_page: int) -> int:
        """Show plots ``page * per_page`` on of a training panel, the others folded away; the page count."""
        if not self.items:
            return 1
        pages = -(-len(self.items) // per_page)
        page = min(page, pages - 1)
        for item, largest, least in self.folded:
            item.setVisible(False)
            item.setMinimumSize(0, 0)
            item.setMaximumSize(0, 0)
        for n, (item, largest, least) in enumerate(self.items):
            shown = page * per_page <= n < (page + 1) * per_page
            item.setVisible(shown)
            if shown:
                item.setMaximumSize(largest)
                item.setMinimumSize(least)
            else:
                item.setMinimumSize(0, 0)
                item.setMaximumSize(0, 0)
        self.graphics.ci.layout.invalidate()
        return pages

    def fit_labels(self, width: int) -> None:
        """Labels whose height was fixed for the window: as tall as their text needs at ``width``."""
        for child, _ in self.fixed_heights:
            if shiboken6.isValid(child) and child.wordWrap():
                child.setMaximumHeight(16777215)  # a view may fix it again when its font changes
                child.setMinimumHeight(child.heightForWidth(width))

    def enlarge(self, px: int) -> None:
        """Every text of the widget at least ``px`` pixels (its own larger sizes kept in proportion)."""
        self.widget.setFont(_font(px))
        # A style sheet that names a font family (a monospace table of letters) sets the size too:
        # the stage's size is added to it while the widget is on the stage.
        if not hasattr(self, "sheets"):
            self.sheets = [(child, child.styleSheet()) for child in self.widget.findChildren(QtWidgets.QWidget)
                           if "font" in child.styleSheet()]
        # Such a table is a line of letters a column each (32 tokens of "Why two layers"): at the
        # values' least size, 24 px at 720, it fits a 1280-px stage.
        small = max(24, round(px * 24 / 26))
        for child, sheet in self.sheets:
            if shiboken6.isValid(child):
                child.setStyleSheet(f"{sheet} font-size: {small}px;")
        for child, font in self.own_fonts:
            if shiboken6.isValid(child):
                own = font.pixelSize() if font.pixelSize() > 0 else font.pointSizeF() * 96 / 72
                big = QtGui.QFont(font)
                big.setPixelSize(max(px, round(own * px / 13)))
                child.setFont(big)

    def give_back(self) -> None:
        w = self.widget
        w.lent = False
        if not shiboken6.isValid(w):
            return
        w.hide()
        for child, height in self.fixed_heights:
            if shiboken6.isValid(child):
                child.setFixedHeight(height)
        for child, sheet in getattr(self, "sheets", []):
            if shiboken6.isValid(child):
                child.setStyleSheet(sheet)
        for item, mode in self.cached:
            if shiboken6.isValid(item):
                item.setCacheMode(mode)
        for item, largest, least in self.items + getattr(self, "folded", []):
            item.setVisible(True)
            item.setMaximumSize(largest)
            item.setMinimumSize(least)
        for child in self.hidden_controls:
            if shiboken6.isValid(child):
                child.show()
        for child, font in self.own_fonts:
            if shiboken6.isValid(child):
                child.setFont(font)
        if self.had_font:
            w.setFont(self.font)
        else:
            w.setFont(QtGui.QFont())
            w.setAttribute(QtCore.Qt.WA_SetFont, False)
        if self.dock is not None:
            self.dock.setWidget(w)
        elif self.tabs is not None:
            tabs = self.tabs
            current = tabs.currentIndex()
            tabs.blockSignals(True)
            i = tabs.indexOf(self.placeholder)
            tabs.removeTab(i)
            tabs.insertTab(i, w, self.text)
            tabs.setTabToolTip(i, self.tip)
            tabs.setCurrentIndex(current)
            tabs.blockSignals(False)
        w.show() if (self.dock is not None or (self.tabs is not None and self.tabs.currentWidget() is w)) else None
        self.placeholder.deleteLater()
        presentation.restyle(w)


class Present(QtCore.QObject):
    """Present mode of ``window``: ``action`` (``presentAction``, F5) opens and closes the stage.

    ``view`` is the name of the view on the stage (a tab's name as the window shows it, or
    "Why divide by √d_k"), ``page`` which of its tiles or steps is shown where they do not all
    fit, ``stage`` the stage window while presenting (else None). ``menu`` (View → Present on…)
    chooses the screen; ``focus_menu`` (View → Focus on…) presents one panel of the window.
    """

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.stage: Stage | None = None
        self.view: str = ATTENTION
        self.page = 0
        self.pages = 1
        self.screen: QtGui.QScreen | None = None
        self._lent: _Lent | None = None
        self._rendering = False
        self.geometry: QtCore.QRect | None = None
        self.lecture_panel = None  # the Scenes panel, when the window has one: PageDown plays its scenes
        self._jump = None  # digits typed after G (go to scene N, as pdfpc does)
        self._last_sheet: dict | None = None  # the figure on the stage and what it was built for
        self.centre = 0  # the middle of a training heatmap's window of tokens (↑ ↓ move it)
        self.action = QtGui.QAction("&Present", window)
        self.action.setObjectName("presentAction")
        self.action.setCheckable(True)
        self.action.setShortcut(QtGui.QKeySequence(QtCore.Qt.Key_F5))
        self.action.setToolTip("The current view as a stage for the room, live (F5); on a second screen when there "
                               "is one. Esc leaves")
        self.action.triggered.connect(lambda: self.leave() if self.active else self.enter())
        # F: the panel under the pointer, as focus mode did.
        self.focus_action = QtGui.QAction("Present the panel &under the pointer", window)
        self.focus_action.setObjectName("focusAction")
        self.focus_action.setShortcut(QtGui.QKeySequence(QtCore.Qt.Key_F))
        self.focus_action.triggered.connect(lambda: self.leave() if self.active else self.enter(*self.target_here()))
        self.menu = QtWidgets.QMenu("Present o&n…", window)
        self.menu.setObjectName("presentOnMenu")
        self.menu.aboutToShow.connect(self._fill_screens)
        self.focus_menu = QtWidgets.QMenu("Present &view…", window)
        self.focus_menu.setObjectName("focusMenu")
        self.focus_menu.aboutToShow.connect(self._fill_views)
        self._fill_screens()
        self._fill_views()
        window.bridge.changed.connect(self._changed)
        app = QtGui.QGuiApplication.instance()
        app.screenRemoved.connect(self._screen_removed)
        self._timer = QtCore.QTimer(self)  # a training run's curves: the stage's strip follows them
        self._timer.setInterval(250)
        self._timer.timeout.connect(self._tick)

    @property
    def active(self) -> bool:
        return self.stage is not None

    def _tick(self) -> None:
        # A training run goes on by itself: the strip follows its buttons, a heatmap page its numbers.
        if self.stage is None:
            return
        self.stage.strip.sync()
        if self.view.startswith(TRAINING_PREFIX) and self.stage.content is not None \
                and getattr(self.stage.content, "fixed", False):
            self.render()

    # -- which views ------------------------------------------------------------------------
    def views(self) -> list[str]:
        """The views the stage can show, in the window's order (PageDown goes to the next)."""
        tabs = self.window.view_tabs
        names = []
        for i in range(tabs.count()):
            if not tabs.isTabVisible(i):
                continue
            text = tabs.tabText(i).replace("&", "")
            widget = tabs.widget(i)
            lab = getattr(self.window, "training", None)
            if lab is not None and widget is lab.page:
                names += [TRAINING_PREFIX + title for title in lab.titles().values()]
            elif text and self._has(text):
                names.append(text)
        names.append(VARIANCE)
        return names

    def _training_tab(self):
        lab = getattr(self.window, "training", None)
        if lab is None:
            return None
        return lab.tab  # built now if it was not yet

    def _has(self, name: str) -> bool:
        return name in (ATTENTION, STEPS, OUTPUTS, COMPARE, POSITIONS, GEOMETRY, HEADS, MODEL, DRIFT, MEANING)

    def training_panel(self, name: str):
        """The training lab's panel named ``"Training: " + its title``, else None."""
        if not name.startswith(TRAINING_PREFIX):
            return None
        tab = self._training_tab()
        if tab is None:
            return None
        for panel in tab.panels.values():
            if TRAINING_PREFIX + panel.title == name:
                return panel
        return None

    def current_view(self) -> str:
        """The view the window shows now: its current tab (the training lab's current panel)."""
        w = self.window
        widget = w.view_tabs.currentWidget()
        lab = getattr(w, "training", None)
        if lab is not None and widget is getattr(lab, "page", None):
            tab = self._training_tab()
            if tab is not None and tab.current is not None:
                return TRAINING_PREFIX + tab.current.title
        text = w.view_tabs.tabText(w.view_tabs.currentIndex()).replace("&", "")
        return text if self._has(text) else ATTENTION

    def target_here(self) -> tuple:
        """(view, head) of the panel under the mouse pointer, else the current view's."""
        w = self.window
        under = QtWidgets.QApplication.widgetAt(QtGui.QCursor.pos())
        while under is not None and under is not w:
            if under in w.heatmap_view.head_canvases and under.isVisible():
                return ATTENTION, w.heatmap_view.head_canvases.index(under)
            if under is w.pipeline_view:
                return STEPS, None
            if under is w.variance_plot:
                return VARIANCE, None
            under = under.parentWidget()
        return self.current_view(), None

    def _fill_screens(self) -> None:
        self.menu.clear()
        for screen in QtGui.QGuiApplication.screens():
            size = screen.geometry().size()
            self.menu.addAction(f"{screen.name()} ({size.width()} × {size.height()})",
                                lambda s=screen: self.enter(screen=s))

    def _fill_views(self) -> None:
        self.focus_menu.clear()
        for name in self.views():
            self.focus_menu.addAction(name, lambda n=name: self.enter(n))

    # -- entering and leaving -----------------------------------------------------------------
    def stage_screen(self) -> QtGui.QScreen:
        """The screen the stage goes to: the one the window is not on, when there are two."""
        screens = QtGui.QGuiApplication.screens()
        mine = self.window.screen()
        others = [s for s in screens if s is not mine]
        return others[0] if others else (mine or QtGui.QGuiApplication.primaryScreen())

    def enter(self, view: str | None = None, head: int | None = None, screen: QtGui.QScreen | None = None,
              geometry: QtCore.QRect | None = None) -> Stage:
        """Open the stage on ``view`` (default: the window's current view) on ``screen`` (default: the
        other one). ``geometry``: the stage's place and size instead of the whole screen's (a projector
        of that size simulated on another screen: its sizes follow its own height)."""
        self.geometry = QtCore.QRect(geometry) if geometry is not None else None
        if self.active:
            self.leave()
        self.view = view if view in self.views() else self.current_view()
        if head is not None:
            self.select_head(head)
        self.page = 0
        self.stage = Stage(self)
        presentation.restyle(self.stage)
        self._place(screen or self.stage_screen())
        self.stage.strip.setVisible(True)
        self._show_view()
        self.stage.setFocus()
        self.stage.activateWindow()
        self.action.setChecked(True)
        self._esc = QtGui.QShortcut(QtGui.QKeySequence(QtCore.Qt.Key_Escape), self.window)
        self._esc.activated.connect(self.leave)  # Esc on either screen ends it
        self._timer.start()
        return self.stage

    def _place(self, screen: QtGui.QScreen) -> None:
        stage = self.stage
        self.screen = screen
        stage.setGeometry(screen.geometry())
        stage.create()
        handle = stage.windowHandle()
        if handle is not None:
            handle.setScreen(screen)
        # The stage is the screen's size whatever its content asks for: content that does not fit
        # is paged or windowed, never allowed to push the stage past the screen.
        rect = self.geometry if self.geometry is not None else screen.geometry()
        stage.setFixedSize(rect.size())
        stage.setGeometry(rect)
        if self.geometry is None:
            stage.showFullScreen()
        else:
            stage.show()

    def leave(self) -> None:
        """Esc: close the stage; a view lent to it goes back to the window as it was."""
        if not self.active:
            return
        self._timer.stop()
        self._give_back()  # while the stage is there to let go of it
        stage, self.stage = self.stage, None
        if getattr(self, "_esc", None) is not None:
            self._esc.setParent(None)
            self._esc.deleteLater()
            self._esc = None
        stage.set_content(None)
        QtWidgets.QApplication.instance().removeEventFilter(stage)
        stage.hide()
        stage.deleteLater()
        self.action.setChecked(False)
        self.window.activateWindow()

    def _screen_removed(self, screen: QtGui.QScreen) -> None:
        # The projector unplugged: the stage comes back to the remaining screen, nothing lost.
        if self.stage is not None and screen is self.screen:
            remaining = [s for s in QtGui.QGuiApplication.screens() if s is not screen]
            target = self.window.screen() if self.window.screen() is not screen else None
            target = target or (remaining[0] if remaining else QtGui.QGuiApplication.primaryScreen())
            if target is not None:
                self.geometry = None
                self._place(target)
                self.render()

    # -- moving on the stage -----------------------------------------------------------------
    def go_to(self, view: str) -> None:
        """Show ``view`` on the stage."""
        if view != self.view and view in self.views():
            self.view, self.page, self.centre = view, 0, 0
            if self.stage is not None:
                self._show_view()

    def show_view(self, view: str, page: int = 0) -> None:
        """Show ``view`` (a scene's): on the stage while presenting, else as the window's current tab."""
        if self.active:
            if view != self.view and view in self.views():
                self.view, self.centre = view, 0
                self.page = page
                self._show_view()
            else:
                self.page = page
                self.render()
            return
        w = self.window
        panel = self.training_panel(view)
        if panel is not None:
            w.view_tabs.setCurrentWidget(w.training.page)
            tab = self._training_tab()
            tab.tabs.setCurrentWidget(panel)
            return
        for i in range(w.view_tabs.count()):
            if w.view_tabs.tabText(i).replace("&", "") == view and w.view_tabs.isTabVisible(i):
                w.view_tabs.setCurrentIndex(i)
                return

    def current_scene(self):
        """The lecture's scene shown last, when a lecture is open, else None."""
        return self.lecture_panel.scene() if self._playing() else None

    def _playing(self) -> bool:
        panel = self.lecture_panel
        return panel is not None and panel.lecture is not None and len(panel.lecture.scenes) > 0

    def next_scene(self, step: int = 1) -> bool:
        """PageDown / PageUp with a lecture open: the next (previous) scene; False past either end."""
        panel = self.lecture_panel
        if not self._playing():
            return False
        return panel.go(panel.current + step) if 0 <= panel.current + step < len(panel.lecture.scenes) else False

    def _can_move_page(self, step: int) -> bool:
        if self.view == STEPS:
            pipe = self.window.pipeline_view
            return 0 <= pipe.current_step + step < len(pipe.steps)
        return 0 <= self.page + step < self.pages

    def next_view(self, step: int = 1) -> None:
        """PageDown / PageUp: the next (previous) view."""
        views = self.views()
        i = views.index(self.view) if self.view in views else 0
        self.go_to(views[(i + step) % len(views)])

    def move_page(self, step: int) -> None:
        """← →: the next (previous) tile or step of the view."""
        if self.view == STEPS:
            pipe = self.window.pipeline_view
            pipe.set_current_step(min(max(pipe.current_step + step, 0), len(pipe.steps) - 1))
        else:
            self.page = min(max(self.page + step, 0), max(self.pages - 1, 0))
        self.render()

    def select_head(self, head: int) -> None:
        """Show head ``head`` (from 0) of the model (of the selected layer, for a trained model)."""
        w = self.window
        heads = int(w.studio.result.weights.shape[0])
        if not 0 <= head < heads:
            return
        if w.studio.is_trained:
            w.trained.room.select(head=head)
        else:
            w.studio.select(head=head)

    def key(self, event: QtGui.QKeyEvent) -> bool:
        """The stage's keys; False for a key it leaves to Qt."""
        k, mods = event.key(), event.modifiers()
        w = self.window
        if event.matches(QtGui.QKeySequence.Undo):
            w.undo()
        elif event.matches(QtGui.QKeySequence.Redo) or (k == QtCore.Qt.Key_Y and mods & QtCore.Qt.ControlModifier):
            w.redo()
        elif mods & (QtCore.Qt.ControlModifier | QtCore.Qt.AltModifier):
            return False
        elif k == QtCore.Qt.Key_Escape and self._jump is not None:
            self._jump = None  # a jump typed half: forgotten, the stage stays
        elif k in (QtCore.Qt.Key_Escape, QtCore.Qt.Key_F5):
            self.leave()
        elif k in (QtCore.Qt.Key_Up, QtCore.Qt.Key_Down) and self.view.startswith(TRAINING_PREFIX):
            # A training heatmap's window of tokens moves a row at a time, from where it is now.
            last = self._last_sheet
            if last is not None and last["windows"]:
                rows = last["windows"][0][0]
                self.centre = (rows[0] + rows[1]) // 2
            self.centre += -1 if k == QtCore.Qt.Key_Up else 1
            self.render()
        elif k == QtCore.Qt.Key_Up:
            w.move_query(-1)
        elif k == QtCore.Qt.Key_Down:
            w.move_query(+1)
        elif self._jump is not None and (QtCore.Qt.Key_0 <= k <= QtCore.Qt.Key_9
                                         or k in (QtCore.Qt.Key_Return, QtCore.Qt.Key_Enter)):
            # G, a number and Enter: that scene (as pdfpc does); the digits alone choose the head.
            if k in (QtCore.Qt.Key_Return, QtCore.Qt.Key_Enter):
                number, self._jump = self._jump, None
                if number and self.lecture_panel is not None:
                    self.lecture_panel.go(int(number) - 1)
            else:
                self._jump += chr(k)
        elif k == QtCore.Qt.Key_G and self._playing():
            self._jump = ""
        elif k in (QtCore.Qt.Key_Left, QtCore.Qt.Key_Right):
            step = -1 if k == QtCore.Qt.Key_Left else 1
            # A clicker sends ← →: within the view first (its stages, steps), then the next scene.
            if self._can_move_page(step) or not self.next_scene(step):
                self.move_page(step)
        elif k in (QtCore.Qt.Key_PageDown, QtCore.Qt.Key_PageUp):
            step = 1 if k == QtCore.Qt.Key_PageDown else -1
            if not self._playing():
                self.next_view(step)
            else:
                self.next_scene(step)
        elif k in (QtCore.Qt.Key_Home, QtCore.Qt.Key_End) and self._playing():
            panel = self.lecture_panel
            panel.go(0 if k == QtCore.Qt.Key_Home else len(panel.lecture.scenes) - 1)
        elif QtCore.Qt.Key_1 <= k <= QtCore.Qt.Key_9:
            self.select_head(k - QtCore.Qt.Key_1)
        elif k == QtCore.Qt.Key_S and not w.studio.is_trained:
            w.scale_check.toggle()
        elif k == QtCore.Qt.Key_C and not w.studio.is_trained:
            w.causal_check.toggle()
        elif k == QtCore.Qt.Key_H:
            self.stage.strip.setVisible(not self.stage.strip.isVisible())
            self.render()
        else:
            return False
        return True

    # -- drawing -----------------------------------------------------------------------------
    def _changed(self, *_) -> None:
        if self.stage is not None:
            self.render()

    def _show_view(self) -> None:
        self._give_back()
        stage = self.stage
        s = stage.apply_sizes()
        stage.strip.build(self.view, s["label"])
        self.render()

    def render(self) -> None:
        """Draw the view on the stage again from the studio's numbers."""
        stage = self.stage
        if stage is None or self._rendering:
            return
        self._rendering = True
        try:
            s = stage.apply_sizes()
            stage.strip.sync()
            zoom = stage_zoom(s["label"], stage.logicalDpiY() or 96)
            view = self.view
            if view in HEATMAP_VIEWS or view == HEADS:
                self._render_sheet(view, s, zoom)
            elif view == STEPS:
                self._render_steps(s)
            else:
                self._render_lent(view, s, zoom)
        finally:
            self._rendering = False

    def _title(self, what: str) -> str:
        state = self.window.studio.state
        tokens = state.query_tokens
        query = f" · query “{tokens[state.query_index]}”" if tokens else ""
        return f"{what}{query}"

    # Heatmap views: the page figure's tiles, at the stage's size.
    def _tiles(self, view: str) -> list:
        w = self.window
        state = w.studio.state
        q = state.query_index if state.query_tokens else None
        render = getattr(w, "render_view", None)
        if view in (ATTENTION, HEADS):
            hv = w.heatmap_view
            render(hv)
            keys = ("weights",) if view == HEADS else ("scores", "logits", "weights")
            return [sheets.Tile(hv.stages[k], selected_row=q) for k in keys]
        if view == OUTPUTS:
            v = w.heads_summary_view
            render(v)
            tiles = [sheets.Tile(v.maps["concat"], vlines=v.separators, selected_row=q)]
            if not v.canvases["w_o"].isHidden():
                tiles.append(sheets.Tile(v.maps["w_o"]))
            return tiles + [sheets.Tile(v.maps["output"], selected_row=q)]
        if view == COMPARE:
            v = w.compare_view
            render(v)
            return [sheets.Tile(v.maps[k], selected_row=q) for k in ("a", "b", "diff")]
        if view == POSITIONS:
            v = w.positional_view
            render(v)
            return [sheets.Tile(v.heatmap, selected_row=q)]
        if view == MODEL:
            hv = w.heatmap_view
            render(hv)
            return [sheets.Tile(hm, title=f"layer {state.layer_index + 1} · head {i + 1}", selected_row=q)
                    for i, hm in enumerate(hv.head_maps[: max(hv.heads_shown, 1)])]
        return []

    def _cell(self, tiles, s) -> tuple[float, float]:
        font = _font(s["value"])
        metrics = QtGui.QFontMetricsF(font)
        import numpy as np
        widest = 2.0
        for tile in tiles:
            data = tile.source.data
            if data is None:
                continue
            finite = data.values[np.isfinite(data.values)]
            for v in (finite.min(), finite.max()) if finite.size else ():
                widest = max(widest, metrics.horizontalAdvance(sheets.format_value(v, STAGE_DIGITS)))
        label_h = QtGui.QFontMetricsF(_font(s["label"])).height()
        height = max(s["value"] / 0.6, label_h * 1.08)
        width = max(widest + 0.2 * s["value"] + 6, label_h / math.sin(math.radians(45)) + 2)
        return math.ceil(width), math.ceil(height)

    def _build_sheet(self, tiles, cell, zoom) -> QtWidgets.QWidget:
        """The page figure of ``tiles`` at the stage's size, in a holder of exactly its size."""
        with _AtZoom(zoom):
            sheet = sheets.FigureSheet([sheets.Block(tiles)], cell=cell)
            for hm in sheet.heatmaps:
                hm.set_digits(STAGE_DIGITS)
            holder = QtWidgets.QWidget()
            QtWidgets.QVBoxLayout(holder).setContentsMargins(0, 0, 0, 0)
            holder.layout().addWidget(sheet)
            presentation.restyle(holder)  # plots restyle only below their root: the holder is it
        # Labels drawn afresh, not from a pixmap made at another screen's scale: text stays text
        # (a recording or a screen reader of the stage sees words) and sharp on every projector.
        for item in sheet.scene().items():
            item.setCacheMode(QtWidgets.QGraphicsItem.NoCache)
        # Laid out as a page figure is (its axes measure their labels at the stage's size), then shown.
        size = sheet.lay_out()
        # The key axis' title hangs below its slanted labels, outside the axis' own height: room for it.
        below = max((hm.bottom_axis.label.boundingRect().height() for hm in sheet.heatmaps
                     if hm.bottom_axis.label.isVisible()), default=0.0)
        size = QtCore.QSize(size.width(), size.height() + math.ceil(below))
        sheet.setAttribute(QtCore.Qt.WA_DontShowOnScreen, False)
        sheet.show()  # laying out hid it again; as the holder's child it shows with the holder
        sheet.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        sheet.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        sheet.setFrameShape(QtWidgets.QFrame.NoFrame)
        sheet.setFixedSize(size)
        holder.setFixedSize(size)
        holder.fixed = True
        holder.sheet = sheet
        return holder

    @staticmethod
    def _windows(tiles, fit_rows: int, fit_cols: int, q: int) -> list[tuple]:
        """Each tile's (rows, cols) window for ``fit_rows`` × ``fit_cols`` around the query ``q``."""
        n_rows, n_cols = tiles[0].source.data.values.shape
        out = []
        for t in tiles:
            r_n, c_n = t.source.data.values.shape
            r = token_window(r_n, fit_rows, q) if r_n == n_rows else (0, r_n)
            c = token_window(c_n, fit_cols, q if c_n == n_rows else 0) if c_n == n_cols else (0, c_n)
            out.append((r, c))
        return out

    def _update_in_place(self, sig, all_tiles, q) -> bool:
        """The same figure with new numbers (an edit that keeps the tokens, shapes and titles): its
        heatmaps are given the numbers; nothing is laid out again. False when it must be rebuilt."""
        last = self._last_sheet
        if last is None or last["sig"] != sig or self.stage.content is not last["holder"] \
                or not shiboken6.isValid(last["holder"]):
            return False
        page_tiles = [all_tiles[i] for i in last["page"]]
        windows = self._windows(page_tiles, *last["fit"], q)
        if windows != last["windows"]:
            return False
        heatmaps = last["holder"].sheet.heatmaps
        # A title that changed with the edit ("logits ÷ T = 1.05") is written again; one longer than the
        # one the figure was laid out for might not fit: then the figure is laid out again.
        titles = [sheets.shown_title(t) for t in page_tiles]
        if any(len(new) > len(hm.title) for new, hm in zip(titles, heatmaps)):
            return False
        for hm, title in zip(heatmaps, titles):
            hm.set_title(title)
        for hm, tile, (r, c) in zip(heatmaps, page_tiles, windows):
            data = sheets._windowed(tile.source.data, r, c)
            row = tile.selected_row - r[0] if tile.selected_row is not None else None
            hm.set_data(data.values, masked=data.masked, row_labels=list(data.row_labels),
                        col_labels=list(data.col_labels), levels=tuple(tile.source.levels),
                        selected_row=row if row is not None and 0 <= row < data.values.shape[0] else None)
            if hm.bar is not None and tuple(hm.bar.levels()) != tuple(tile.source.levels):
                hm.bar.setLevels(values=tuple(tile.source.levels))
        return True

    def _signature(self, view, all_tiles, cell, zoom) -> tuple:
        stage = self.stage
        return (view, self.page, stage.size().toTuple(), stage.strip.isVisible(), cell, round(zoom, 4),
                tuple((id(t.source), t.source.data.values.shape,
                       tuple(t.source.data.row_labels), tuple(t.source.data.col_labels), tuple(t.vlines),
                       t.source._cmap_name) for t in all_tiles))

    def _fit(self, tiles, cell, zoom, room, q, fit_rows=None, fit_cols=None):
        """The sheet of ``tiles`` with cells ``cell``, each tile cut to a window of its rows and columns
        around the query ``q`` small enough that the sheet fits ``room``; (sheet, rows, cols, n_rows, n_cols)."""
        n_rows, n_cols = tiles[0].source.data.values.shape
        if fit_rows is None or fit_cols is None:
            # A first guess from the room, so that a long sentence is not laid out whole first (a
            # figure of 600 tokens takes seconds): the labels' and titles' room, then rows and columns.
            data = tiles[0].source.data
            line = cell[1] / 1.08
            metrics = QtGui.QFontMetricsF(_font(round(line / 1.17)))
            widest = lambda labels: min(max((metrics.horizontalAdvance(str(t)) for t in labels[:400]), default=0.0),
                                        8 * metrics.height())
            below = 0.71 * (widest(list(data.col_labels)) + metrics.height()) + 2.8 * metrics.height() + 24
            beside = widest(list(data.row_labels)) + 1.4 * metrics.height() + 5 * metrics.height() + 24
            fit_rows = fit_rows or max(1, min(n_rows, int((room.height() - below) // cell[1])))
            fit_cols = fit_cols or max(1, min(n_cols, int((room.width() - beside * len(tiles)) // (cell[0] * len(tiles)))))
        for attempt in range(8):
            rows = token_window(n_rows, fit_rows, q)
            cols = token_window(n_cols, fit_cols, q if n_cols == n_rows else 0)
            windowed = []
            for t in tiles:
                r_n, c_n = t.source.data.values.shape
                r = token_window(r_n, fit_rows, q) if r_n == n_rows else (0, r_n)
                c = token_window(c_n, fit_cols, q if c_n == n_rows else 0) if c_n == n_cols else (0, c_n)
                windowed.append(sheets.Tile(t.source, t.bar, t.title, t.vlines, r if r != (0, r_n) else None,
                                            c if c != (0, c_n) else None, t.selected_row))
            sheet = self._build_sheet(windowed, cell, zoom)
            sheet.tiles, sheet.fit = windowed, (fit_rows, fit_cols)
            over_h, over_w = sheet.height() - room.height(), sheet.width() - room.width()
            if (over_h <= 0 and over_w <= 0) or (fit_rows == 1 and fit_cols == 1) or attempt == 7:
                return sheet, rows, cols, n_rows, n_cols
            _discard(sheet)
            if over_h > 0:
                fit_rows = max(1, (rows[1] - rows[0]) - max(1, math.ceil(over_h / cell[1])))
            if over_w > 0:
                fit_cols = max(1, (cols[1] - cols[0]) - max(1, math.ceil(over_w / cell[0] / len(tiles))))
        return sheet, rows, cols, n_rows, n_cols

    def _render_sheet(self, view: str, s: dict, zoom: float, tiles=None, centre: int | None = None,
                      title: str | None = None) -> None:
        """The view's tiles (or ``tiles``: a training panel's heatmap) as the stage's figure, around the
        query (or ``centre``)."""
        stage, w = self.stage, self.window
        own = tiles is not None
        all_tiles = [t for t in (tiles if own else self._tiles(view)) if t.source.data is not None]
        state = w.studio.state
        saved_page = self.page
        if own:
            self.page = 0
        if not all_tiles:
            stage.title.setText(view)
            stage.set_caption("Nothing to show yet: type a sentence.")
            stage.set_content(None)
            return
        cell = self._cell(all_tiles, s)
        last = self._last_sheet
        if last is not None and cell[1] == last["cell"][1] and cell[0] <= last["cell"][0]:
            cell = last["cell"]  # the numbers still fit the cells they have: no new layout for a narrower one
        stage.title.setText(title if title is not None else self._title(self._view_title(view)))
        q = centre if centre is not None else (state.query_index if state.query_tokens else 0)
        sig = self._signature(view, all_tiles, cell, zoom) + ((saved_page, q) if own else ())
        try:
            self._render_figure(view, all_tiles, cell, zoom, q, sig)
        finally:
            if own:
                self.page = saved_page

    def _render_figure(self, view, all_tiles, cell, zoom, q, sig) -> None:
        stage = self.stage
        sig_cell = cell  # the cell the figure was asked for (before it grew to the room)
        if self._update_in_place(sig, all_tiles, q):
            # The caption again: a scene shown on the same figure brings its own line.
            notes = ([self._found()] if view == HEADS else []) + self._last_sheet["notes"]
            stage.set_caption(" · ".join(n for n in notes if n) if any(notes) else self._hint(view))
            return
        self._last_sheet = None
        stage.set_caption(" ")  # keeps its room while the body is measured
        room = stage.body_size()
        # One tile alone, whole, tells how many rows and columns fit and how wide a tile is.
        self.page = min(self.page, len(all_tiles) - 1)
        probe, rows, cols, n_rows, n_cols = self._fit([all_tiles[self.page]], cell, zoom, room, q)
        # Room to spare: larger cells (and with them the values, up to the labels' size).
        shown_r, shown_c = rows[1] - rows[0], cols[1] - cols[0]
        grow = min(1.0 + (room.height() - probe.height()) / max(shown_r, 1) / cell[1],
                   1.0 + (room.width() - probe.width()) / max(shown_c, 1) / cell[0], 1.5) * 0.97
        if grow > 1.05 and (rows, cols) == ((0, n_rows), (0, n_cols)):
            larger = (math.floor(cell[0] * grow), math.floor(cell[1] * grow))
            bigger = self._build_sheet([all_tiles[self.page]], larger, zoom)
            if bigger.height() <= room.height() and bigger.width() <= room.width():
                _discard(probe)
                probe, cell = bigger, larger
            else:
                _discard(bigger)
        per_page = max(1, min(len(all_tiles), int(room.width() // max(probe.width() + 12, 1))))
        self.pages = -(-len(all_tiles) // per_page)
        first = (self.page // per_page) * per_page if per_page > 1 else self.page
        self.page = first // per_page if per_page > 1 else self.page
        page_tiles = all_tiles[first:first + per_page] if per_page > 1 else [all_tiles[self.page]]
        if per_page > 1:
            _discard(probe)
            sheet, rows, cols, n_rows, n_cols = self._fit(page_tiles, cell, zoom, room, q, shown_r, shown_c)
        else:
            sheet = probe
            if not hasattr(sheet, "fit"):  # the grown sheet: every row and column shown
                sheet.fit = (n_rows, n_cols)
        self.sheet = sheet.sheet  # the figure itself (tests and the room read its heatmaps)
        stage.set_content(sheet)
        notes = []
        if rows != (0, n_rows):
            notes.append(f"queries {rows[0] + 1}–{rows[1]} of {n_rows} (↑ ↓)")
        if cols != (0, n_cols):
            what = "keys" if n_cols == n_rows else "columns"
            notes.append(f"{what} {cols[0] + 1}–{cols[1]} of {n_cols}")
        if self.pages > 1:
            names = ", ".join(self._tile_name(t) for t in page_tiles)
            notes.append(f"{names}: {self.page + 1} of {self.pages} (← →)")
        indices = list(range(first, first + len(page_tiles))) if per_page > 1 else [self.page]
        self._last_sheet = {"sig": sig, "cell": sig_cell, "holder": sheet, "fit": sheet.fit, "page": indices,
                            "windows": self._windows(page_tiles, *sheet.fit, q), "notes": list(notes)}
        if view == HEADS:
            notes.insert(0, self._found())
        stage.set_caption(" · ".join(n for n in notes if n) if any(notes) else self._hint(view))

    def _found(self) -> str:
        """The Head Lab's last find, in words: its three strongest heads ("find: 4.2 0.68, 6.12 0.68")."""
        table = getattr(getattr(self.window, "heads_tab", None), "found_table", None)
        if table is None or table.rowCount() == 0:
            return ""
        found = []
        for row in range(min(3, table.rowCount())):
            head, weight = table.item(row, 0), table.item(row, 1)
            if head is not None and weight is not None:
                found.append(f"{head.text()} {weight.text()}")
        return "find: " + ", ".join(found) if found else ""

    def _tile_name(self, tile) -> str:
        title = tile.title if tile.title is not None else tile.source.title
        return title.replace(" ◀", "").split(":")[-1].strip() or title

    def _view_title(self, view: str) -> str:
        state = self.window.studio.state
        heads = int(self.window.studio.result.weights.shape[0])
        head = state.shown_head if hasattr(state, "shown_head") else state.head_index
        if view in (ATTENTION, HEADS):
            layer = getattr(state, "layer_index", None)
            where = f"layer {layer + 1} · " if layer is not None else ""
            return f"{view}: {where}head {head + 1} of {heads}"
        if view == MODEL:
            return f"{view}: layer {state.layer_index + 1}, every head"
        return view

    def _hint(self, view: str) -> str:
        if self.window.studio.is_trained:
            return "↑ ↓ query · 1–9 head · PageDown next view · H controls · Esc leaves"
        return "↑ ↓ query · 1–9 head · S scaling · C causal mask · PageDown next view · Esc leaves"

    # Step by step: one step at a time, whole numbers.
    def _render_steps(self, s: dict) -> None:
        stage, w = self.stage, self.window
        pipe = w.pipeline_view
        w.render_view(pipe)
        model = pipe.model
        steps = model.rowCount()
        current = min(pipe.current_step, max(steps - 1, 0))
        step_name = str(model.headerData(current, QtCore.Qt.Vertical, QtCore.Qt.DisplayRole) or "")
        name = " ".join(step_name.replace("▶", "").split())
        name = name.split(". ", 1)[1] if name[:1].isdigit() and ". " in name else name
        stage.title.setText(f"Step {current + 1} of {steps}: {name}")
        stage.set_caption(" ")
        table = QtWidgets.QTableWidget()
        table.setObjectName("presentSteps")
        table.fixed = True
        keys = model.columnCount()
        table.setColumnCount(1)
        table.setHorizontalHeaderLabels([" "])
        table.horizontalHeader().hide()
        table.setWordWrap(True)
        table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        table.setSelectionMode(QtWidgets.QAbstractItemView.NoSelection)
        table.setFocusPolicy(QtCore.Qt.NoFocus)
        table.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        table.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        table.setTextElideMode(QtCore.Qt.ElideNone)
        label_font, value_font = _font(s["label"]), _font(s["value"])
        table.verticalHeader().setFont(label_font)
        table.setFont(value_font)
        labels, texts = [], []
        for c in range(keys):
            header = model.headerData(c, QtCore.Qt.Horizontal, QtCore.Qt.DisplayRole)
            labels.append(" ".join(str(header or "").split()))
            texts.append(str(model.data(model.index(current, c), QtCore.Qt.DisplayRole) or ""))
        if len(set(texts[:-1])) == 1 and not texts[-1]:
            # One vector for every key (the query q): shown once, not once per key.
            labels, texts = [labels[0] if len(labels) == 1 else step_name.split("“")[-1].rstrip("”") or " "], texts[:1]
            keys = 1
        elif texts and not texts[-1]:
            labels, texts = labels[:-1], texts[:-1]  # no result at this step
            keys = len(texts)
        room = stage.body_size()
        # The step's explanation in words (the window's step view says the same), under its numbers.
        explanation = QtWidgets.QLabel()
        explanation.setObjectName("presentStepExplanation")
        explanation.setTextFormat(QtCore.Qt.RichText)
        explanation.setWordWrap(True)
        explanation.setFont(_font(s["caption"]))
        text = pipe.explanation.text()
        explanation.setText(text.split("</b> — ", 1)[1] if "</b> — " in text else text)
        explanation_h = explanation.heightForWidth(room.width() - 8) if explanation.text() else 0
        room = QtCore.QSize(room.width(), max(room.height() - explanation_h - 12, 60))
        value_metrics = QtGui.QFontMetrics(value_font)
        label_w = max((QtGui.QFontMetrics(label_font).horizontalAdvance(t) for t in labels), default=40) + 24
        col_w = min(max((value_metrics.horizontalAdvance(t) for t in texts), default=80) + 30,
                    room.width() - label_w - 8)
        row_h = QtGui.QFontMetrics(label_font).height() + 10
        heights = []
        for t in texts:
            box = value_metrics.boundingRect(QtCore.QRect(0, 0, col_w - 20, 10_000), int(QtCore.Qt.TextWordWrap), t)
            heights.append(max(row_h, box.height() + 10))
        # A window of the keys around the query where they do not all fit.
        q = w.studio.state.query_index
        fit, total = 0, 0
        start, stop = 0, keys
        if sum(heights) > room.height():
            fit = max(1, int(room.height() // max(max(heights), 1)))
            start, stop = token_window(keys, fit, q)
        table.setRowCount(stop - start)
        table.setVerticalHeaderLabels(labels[start:stop])
        for r, c in enumerate(range(start, stop)):
            item = QtWidgets.QTableWidgetItem(texts[c])
            item.setTextAlignment(QtCore.Qt.AlignLeft | QtCore.Qt.AlignVCenter)
            table.setItem(r, 0, item)
            table.setRowHeight(r, heights[c])
            total += heights[c]
        table.setColumnWidth(0, col_w)
        table.verticalHeader().setFixedWidth(label_w)
        table.setFixedSize(label_w + col_w + 4, total + 4)
        page = QtWidgets.QWidget()
        page.fixed = True
        column = QtWidgets.QVBoxLayout(page)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(12)
        column.addWidget(table, 0, QtCore.Qt.AlignHCenter)
        explanation.setFixedSize(room.width() - 8, explanation_h)
        column.addWidget(explanation, 0, QtCore.Qt.AlignHCenter)
        page.setFixedSize(room.width(), total + 4 + 12 + explanation_h)
        stage.set_content(page)
        self.steps_table = table
        self.steps_explanation = explanation
        self.pages = steps
        note = f"keys {start + 1}–{stop} of {keys} · " if (start, stop) != (0, keys) else ""
        stage.set_caption(f"{note}← → step · ↑ ↓ query · Esc leaves")

    # Views that are not heatmaps: the window's own widget, lent to the stage.
    def _lent_widget(self, view: str):
        w = self.window
        if view == GEOMETRY:
            return w.geometry_view
        if view == VARIANCE:
            return w.variance_plot
        if view in (DRIFT, MEANING):
            room = w.trained.room
            return room.drift_plot if view == DRIFT else room.meaning_view
        panel = self.training_panel(view)
        return panel

    def _render_lent(self, view: str, s: dict, zoom: float) -> None:
        stage, w = self.stage, self.window
        widget = self._lent_widget(view)
        if widget is None:
            stage.title.setText(view)
            stage.set_caption("Not available for this model.")
            stage.set_content(None)
            return
        if self._lent is None or self._lent.widget is not widget:
            self._give_back()
            self._lent = _Lent(widget)
            stage.set_content(widget)
        # Drawn at the stage's text size: what the view makes as it draws (labels, arrows' names)
        # takes the stage's size; what it had is restyled once, when it comes to the stage (or the
        # stage's size changes), not on every edit.
        styled = (round(zoom, 4), s["caption"])
        with _AtZoom(zoom):
            if hasattr(widget, "render") and widget in getattr(w, "views", []):
                w.render_view(widget)
            elif view in (DRIFT, MEANING):
                w.trained.room.render_shown(force=True)
            if getattr(self._lent, "styled", None) != styled:
                self._lent.enlarge(s["caption"])
                presentation.restyle(widget)
                self._lent.styled = styled
            self._lent.fit_labels(stage.body.width() - 24)
        stage.title.setText(view if view.startswith(TRAINING_PREFIX) else self._title(view))
        self.pages = 1
        if view.startswith(TRAINING_PREFIX):
            self._render_training(view, widget, s, zoom)
        else:
            # A view of several plots (the √d_k variance and saturation) shows them one at a time.
            self.pages = self._lent.show_items(self.page, 1) if len(self._lent.items) > 1 else 1
            self.page = min(self.page, self.pages - 1)
            hint = self._hint(view)
            stage.set_caption(f"plot {self.page + 1} of {self.pages} (← →) · {hint}" if self.pages > 1 else hint)

    def _render_training(self, view: str, panel, s: dict, zoom: float) -> None:
        """A training panel: its curves one plot a page, then each of its heatmaps as a page figure."""
        stage, lent = self.stage, self._lent
        per = TRAINING_PLOTS_PER_PAGE
        n_plots = -(-len(lent.items) // per) if lent.items else 0
        heatmaps = [hm for hm in lent.heatmaps if hm.data is not None]
        pages = max(n_plots + len(heatmaps), 1)
        page = self.page = min(self.page, pages - 1)
        where = f"page {page + 1} of {pages} (← →)"
        if page < n_plots or not heatmaps:
            if stage.content is not panel:
                stage.set_content(panel)
                self._last_sheet = None
            lent.show_items(page, per)
            stage.set_caption(f"{where} · Play / Pause, Step, Reset below · Esc leaves")
        else:
            hm = heatmaps[page - n_plots]
            n = hm.data.values.shape[0]
            self.centre = min(max(self.centre, 0), n - 1)
            title = hm.title.replace(" ◀", "")
            self._render_sheet(view, s, zoom, tiles=[sheets.Tile(hm)], centre=self.centre,
                               title=f"{view.removeprefix(TRAINING_PREFIX)}: {title}")
            caption = stage.caption.text().strip()
            stage.set_caption(" · ".join(p for p in (where, caption) if p))
        self.page, self.pages = page, pages

    def _give_back(self) -> None:
        lent, self._lent = self._lent, None
        if lent is not None:
            if self.stage is not None and self.stage.content is lent.widget:
                self.stage.body_layout.removeWidget(lent.widget)
                self.stage.content = None
            lent.give_back()
