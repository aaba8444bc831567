"""Focus mode: one panel fills the screen for the room, with large labels, a caption and a pointer.

The lecturer picks a panel (the weights of one head, the step view, the
variance plot) with F (the panel under the pointer, else the current tab) or
View → Focus on…. The focused panel is a fresh view drawn from the same
Studio, laid over the whole window, so leaving (Esc or F) only removes it and
puts back the window's geometry and layout as they were: nothing of the
window is moved while focusing.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ...explain import cell_tooltip
from .. import presentation
from ..views.heatmap import Heatmap
from ..views.heatmap_canvas import HeatmapCanvas
from ..views.pipeline import PipelineView
from ..views.plots import VariancePlot

FOCUS_ZOOM = 1.8  # text in focus mode, relative to the window's zoom: read from the back of a room
POINTER_RADIUS = 34  # pixels at zoom 1
STEP, VARIANCE, WEIGHTS = "step", "variance", "weights"


class PointerOverlay(QtWidgets.QWidget):
    """A soft translucent circle where the mouse is, so a room sees what is pointed at.

    Transparent for the mouse: clicks and hovers reach the panel underneath.
    ``centre`` is None until the mouse moves over the panel.
    """

    def __init__(self, parent: QtWidgets.QWidget):
        super().__init__(parent)
        self.setObjectName("focusPointer")
        self.setAttribute(QtCore.Qt.WA_TransparentForMouseEvents)
        self.setAttribute(QtCore.Qt.WA_NoSystemBackground)
        self.centre: QtCore.QPoint | None = None
        self.radius = int(POINTER_RADIUS * presentation.STYLE.zoom)

    def move_to(self, pos: QtCore.QPoint | None) -> None:
        """Put the circle's centre at ``pos`` (this widget's coordinates); None hides it."""
        old = self.centre
        self.centre = None if pos is None else QtCore.QPoint(pos)
        for centre in (old, self.centre):
            if centre is not None:
                r = self.radius + 2
                self.update(QtCore.QRect(centre.x() - r, centre.y() - r, 2 * r, 2 * r))

    def paintEvent(self, event):
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


class FocusPanel(QtWidgets.QFrame):
    """The panel shown in focus mode: ``content`` (a view) over a short ``caption``, with a ``pointer``."""

    def __init__(self, parent: QtWidgets.QWidget, content: QtWidgets.QWidget):
        super().__init__(parent)
        self.setObjectName("focusPanel")
        self.setAutoFillBackground(True)
        self.setFocusPolicy(QtCore.Qt.StrongFocus)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        self.content = content
        layout.addWidget(content, 1)
        self.caption = QtWidgets.QLabel()
        self.caption.setObjectName("focusCaption")
        self.caption.setWordWrap(True)
        self.caption.setAlignment(QtCore.Qt.AlignCenter)
        layout.addWidget(self.caption)
        self.pointer = PointerOverlay(self)

    def resizeEvent(self, event):
        super().resizeEvent(event)
        self.pointer.setGeometry(self.rect())
        self.pointer.raise_()


class FocusMode(QtCore.QObject):
    """Focus mode of ``window`` (its ``studio``, ``bridge`` and views).

    ``action`` (``focusAction``, key F) enters focus on the panel under the pointer
    or the current tab, and leaves; ``menu`` (View → Focus on…) names every panel.
    ``panel`` is the :class:`FocusPanel` while focusing, else None; ``target`` what it shows.
    """

    def __init__(self, window):
        super().__init__(window)
        self.window, self.studio = window, window.studio
        self.panel: FocusPanel | None = None
        self.target: tuple | None = None
        self._saved = None
        self.action = QtGui.QAction("&Focus on this panel", window)
        self.action.setObjectName("focusAction")
        self.action.setCheckable(True)
        self.action.setShortcut(QtGui.QKeySequence(QtCore.Qt.Key_F))
        self.action.setToolTip("One panel fills the screen with large labels (F, or the panel under the pointer); "
                               "Esc leaves")
        self.action.triggered.connect(lambda: self.leave() if self.active else self.enter(self.target_here()))
        self.menu = QtWidgets.QMenu("Focus o&n…", window)
        self.menu.setObjectName("focusMenu")
        self.menu.aboutToShow.connect(self._fill_menu)
        self._fill_menu()

    @property
    def active(self) -> bool:
        return self.panel is not None

    # -- which panel ------------------------------------------------------------------
    def targets(self) -> list[tuple[tuple, str]]:
        """Every panel focus mode can show: (target, menu text)."""
        heads = self.studio.result.weights.shape[0]
        found = [((WEIGHTS, i), f"Weights of head {i + 1}" if heads > 1 else "Weights") for i in range(heads)]
        return found + [((STEP,), "Step by step"), ((VARIANCE,), "Why divide by √d_k")]

    def _fill_menu(self) -> None:
        self.menu.clear()
        for target, text in self.targets():
            self.menu.addAction(text, lambda t=target: self.enter(t))

    def target_here(self) -> tuple:
        """The panel under the mouse pointer if it is one focus mode shows, else the current tab's."""
        w = self.window
        under = QtWidgets.QApplication.widgetAt(QtGui.QCursor.pos())
        while under is not None and under is not w:
            if under in w.heatmap_view.head_canvases and under.isVisible():
                return WEIGHTS, w.heatmap_view.head_canvases.index(under)
            if under is w.pipeline_view:
                return (STEP,)
            if under is w.variance_plot:
                return (VARIANCE,)
            under = under.parentWidget()
        if w.view_tabs.currentWidget() is w.pipeline_view:
            return (STEP,)
        return WEIGHTS, self.studio.state.shown_head

    # -- entering and leaving -------------------------------------------------------------
    def enter(self, target: tuple) -> FocusPanel:
        """Show ``target`` (``("weights", head)``, ``("step",)`` or ``("variance",)``) over the whole window."""
        if self.active:
            self.leave()
        w = self.window
        self._saved = (w.geometry(), w.saveState(), w.view_tabs.currentIndex(), w.windowState())
        self.target = tuple(target)
        content = self._make(self.target)
        self.panel = FocusPanel(w, content)
        self.panel.setBackgroundRole(QtGui.QPalette.Window)
        font = QtGui.QFont(w.font())
        font.setPointSizeF(font.pointSizeF() * FOCUS_ZOOM)
        self.panel.setFont(font)
        if self.target[0] == VARIANCE:  # its caption's height was fixed for the window's text size
            content.caption.setFixedHeight(content.caption.fontMetrics().lineSpacing() * 3 + 6)
        for key, slot in ((QtCore.Qt.Key_Escape, self.leave),
                          (QtCore.Qt.Key_Up, lambda: w.move_query(-1)), (QtCore.Qt.Key_Down, lambda: w.move_query(+1))):
            shortcut = QtGui.QShortcut(QtGui.QKeySequence(key), self.panel)
            shortcut.setContext(QtCore.Qt.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)
        if self.target[0] == STEP:
            for key, slot in ((QtCore.Qt.Key_Left, content.prev_step), (QtCore.Qt.Key_Right, content.next_step)):
                shortcut = QtGui.QShortcut(QtGui.QKeySequence(key), self.panel)
                shortcut.setContext(QtCore.Qt.WidgetWithChildrenShortcut)
                shortcut.activated.connect(slot)
        w.bridge.changed.connect(self._render)
        w.installEventFilter(self)
        QtWidgets.QApplication.instance().installEventFilter(self)  # the pointer follows the mouse
        w.showFullScreen()
        self.panel.setGeometry(w.rect())
        self.panel.show()
        self.panel.raise_()
        for child in [self.panel] + self.panel.findChildren(QtWidgets.QWidget):
            child.setMouseTracking(True)
        self._render()
        self.panel.setFocus()
        self.action.setChecked(True)
        return self.panel

    def leave(self) -> None:
        """Esc: remove the focused panel and put the window back as it was (geometry, docks, tab)."""
        if not self.active:
            return
        w = self.window
        QtWidgets.QApplication.instance().removeEventFilter(self)
        w.removeEventFilter(self)
        w.bridge.changed.disconnect(self._render)
        panel, self.panel = self.panel, None
        panel.hide()
        panel.setParent(None)  # out of the window at once; deleted when control returns to the event loop
        panel.deleteLater()
        geometry, state, tab, window_state = self._saved
        # Back to normal, maximised or full screen as before, and the same place and size
        # (the geometry itself: restoreGeometry's frame guess is off without a window manager).
        w.setWindowState(window_state)
        if not window_state & (QtCore.Qt.WindowMaximized | QtCore.Qt.WindowFullScreen):
            w.setGeometry(geometry)
        w.restoreState(state)
        w.view_tabs.setCurrentIndex(tab)
        self.action.setChecked(False)

    # -- drawing ----------------------------------------------------------------------------
    def _make(self, target: tuple) -> QtWidgets.QWidget:
        if target[0] == STEP:
            view = PipelineView(self.studio)
            view.set_current_step(self.window.pipeline_view.current_step)
            return view
        if target[0] == VARIANCE:
            return VariancePlot(self.studio)
        heatmap = Heatmap("weights")
        canvas = HeatmapCanvas(heatmap)
        canvas.setObjectName("focusHeatmap")
        canvas.scene().sigMouseClicked.connect(lambda event: self._on_click(heatmap, event))
        # Hovering explains a cell with its formula, as in the Attention tab, at the window's precision.
        canvas.tooltip_provider = lambda hm, i, j: cell_tooltip(
            self.studio.state, self.studio.result, WEIGHTS, min(target[1], self.studio.result.weights.shape[0] - 1),
            i, j, digits=self.window.heatmap_view.digits)
        canvas.digits = self.window.heatmap_view.digits
        digits = getattr(self.window.lecture, "digits", None)
        if digits is not None:
            heatmap.set_digits(digits)
        return canvas

    def _on_click(self, heatmap: Heatmap, event) -> None:
        cell = heatmap.cell_at(event.scenePos())
        if cell is not None:
            self.studio.select(query=cell[0])

    def _render(self, *_) -> None:
        if self.panel is None:
            return
        state, result, content = self.studio.state, self.studio.result, self.panel.content
        kind = self.target[0]
        tokens = state.query_tokens
        query = f"“{tokens[state.query_index]}”" if tokens else "(no tokens)"
        if kind == WEIGHTS:
            head = min(self.target[1], result.weights.shape[0] - 1)
            heatmap = content.heatmap
            heads = result.weights.shape[0]
            heatmap.set_title(f"head {head + 1} of {heads}: weights" if heads > 1 else "weights")
            heatmap.set_axis_titles("query (decoder)" if state.cross else "query",
                                    "key (encoder)" if state.cross else "key")
            heatmap.set_data(result.weights[head], masked=result.blocked, row_labels=tokens,
                             col_labels=state.key_tokens, levels=(0.0, 1.0),
                             selected_row=state.query_index if tokens else None)
            caption = (f"Each row is a query, each column a key; a row's weights sum to 1. "
                       f"Outlined: the query {query}. ↑ ↓ move it, Esc leaves.")
        elif kind == STEP:
            content.render()
            caption = f"Every step for the query {query}. ↑ ↓ move the query, ← → the step, Esc leaves."
        else:
            content.render()
            caption = "Why divide by √d_k: the variance of q·k grows with d_k unless it is scaled. Esc leaves."
        self.panel.caption.setText(caption)
        self._enlarge()

    def _enlarge(self) -> None:
        # The focused panel's plots get the focus text size (cell values, ticks, titles);
        # everything else keeps the window's.
        zoom = presentation.STYLE.zoom
        presentation.STYLE.zoom = zoom * FOCUS_ZOOM
        try:
            presentation.restyle(self.panel)
        finally:
            presentation.STYLE.zoom = zoom

    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        if self.panel is not None:
            if watched is self.window and kind == QtCore.QEvent.Resize:
                self.panel.setGeometry(self.window.rect())
            elif kind == QtCore.QEvent.MouseMove and isinstance(watched, QtWidgets.QWidget) \
                    and (watched is self.panel or self.panel.isAncestorOf(watched)):
                self.panel.pointer.move_to(self.panel.mapFromGlobal(event.globalPosition().toPoint()))
        return False
