"""For the lecture hall: full screen, text zoom, themes, colour maps and the play walk."""

from __future__ import annotations

from typing import Callable

from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from ..widgets import keys

DIGIT_CHOICES = getattr(presentation, "DIGIT_CHOICES", (2, 4))


class Lecture(QtCore.QObject):
    """Presentation controls of ``window`` showing ``studio``; the play walk and Alt+Up/Down move the query.

    Public parts: ``full_screen_action``, ``zoom_in_action``, ``zoom_out_action``,
    ``zoom_reset_action``, ``theme_actions``, ``colormap_actions``,
    ``play_button``, ``play_interval_spin``, ``play_row``, ``play_timer``.
    ``on_zoom`` is called after every zoom change (the controls refit their width).
    """

    def __init__(self, window: QtWidgets.QMainWindow, studio, on_zoom: Callable[[], None],
                 status: Callable[[str, int], None]):
        super().__init__(window)
        self.window, self.studio, self.on_zoom, self.status = window, studio, on_zoom, status
        self.full_screen_action = QtGui.QAction("&Full screen", window)
        self.full_screen_action.setObjectName("fullScreenAction")
        self.full_screen_action.setCheckable(True)
        self.full_screen_action.setShortcuts(keys(QtCore.Qt.Key_F11, QtGui.QKeySequence.FullScreen))
        self.full_screen_action.triggered.connect(self.toggle_full_screen)
        self.zoom_in_action = self._action("Zoom &in", lambda: self.zoom_by(+1), "Ctrl+=", QtGui.QKeySequence.ZoomIn)
        self.zoom_out_action = self._action("Zoom &out", lambda: self.zoom_by(-1), "Ctrl+-", QtGui.QKeySequence.ZoomOut)
        self.zoom_reset_action = self._action("&Actual size", lambda: self.set_zoom(1.0), "Ctrl+0")
        self.theme_actions = self._group(presentation.THEMES, lambda n: n.capitalize(), self.set_theme)
        self.colormap_actions = self._group(presentation.WEIGHT_COLORMAPS, str, self.set_colormap)
        self.digits: int | None = None  # the precision setting (None: each view's own)
        self.precision_actions = self._group(DIGIT_CHOICES, lambda d: f"{d} decimals", self.set_precision)
        for action in self.precision_actions.actions():
            action.setObjectName(f"precision{action.data()}Action")

        self.play_button = QtWidgets.QPushButton("▶ Play")
        self.play_button.setObjectName("playButton")
        self.play_button.setCheckable(True)
        self.play_button.setToolTip("Walk the selected query through the sentence, one token at a time")
        self.play_button.toggled.connect(self._on_play_toggled)
        self.play_interval_spin = QtWidgets.QDoubleSpinBox()
        self.play_interval_spin.setObjectName("playIntervalSpin")
        self.play_interval_spin.setRange(0.2, 10.0)
        self.play_interval_spin.setSingleStep(0.2)
        self.play_interval_spin.setValue(1.5)
        self.play_interval_spin.setSuffix(" s")
        self.play_interval_spin.setToolTip("Seconds per token while playing")
        self.play_timer = QtCore.QTimer(self)
        self.play_timer.setInterval(1500)
        self.play_timer.timeout.connect(lambda: self.move_query(+1, wrap=True))
        self.play_interval_spin.valueChanged.connect(lambda v: self.play_timer.setInterval(int(v * 1000)))
        self.play_row = QtWidgets.QHBoxLayout()
        self.play_row.addWidget(self.play_button)
        self.play_row.addWidget(self.play_interval_spin)

    def add_query_keys(self, views) -> None:
        """Up / Down move the query token while one of ``views`` has the focus; Alt+Up / Alt+Down anywhere."""
        for view in views:
            view.setFocusPolicy(QtCore.Qt.StrongFocus)
            for key, step in ((QtCore.Qt.Key_Down, +1), (QtCore.Qt.Key_Up, -1)):
                shortcut = QtGui.QShortcut(QtGui.QKeySequence(key), view)
                shortcut.setContext(QtCore.Qt.WidgetWithChildrenShortcut)
                shortcut.activated.connect(lambda s=step: self.move_query(s))
        for shortcut, step in (("Alt+Down", +1), ("Alt+Up", -1)):
            action = QtGui.QAction(self.window)
            action.setShortcut(QtGui.QKeySequence(shortcut))
            action.triggered.connect(lambda checked=False, s=step: self.move_query(s))
            self.window.addAction(action)

    def move_query(self, step: int, wrap: bool = False) -> None:
        """Select the next (+1) or previous (-1) query token (``wrap``: past the last comes the first)."""
        n = len(self.studio.state.query_tokens)
        if n:
            index = self.studio.state.query_index + step
            self.studio.select(query=index % n if wrap else min(max(index, 0), n - 1))

    def _action(self, text, slot, *shortcuts) -> QtGui.QAction:
        action = QtGui.QAction(text, self.window)
        action.setShortcuts(keys(*shortcuts))
        action.triggered.connect(slot)
        return action

    def _group(self, names, label, choose) -> QtGui.QActionGroup:
        group = QtGui.QActionGroup(self)
        for name in names:
            action = group.addAction(label(name))
            action.setCheckable(True)
            action.setData(name)
            action.triggered.connect(lambda checked=False, n=name: choose(n))
        return group

    def fill_view_menu(self, menu: QtWidgets.QMenu) -> None:
        """Full screen, zoom, theme and colour map entries of the View menu."""
        menu.addAction(self.full_screen_action)
        menu.addSeparator()
        for action in (self.zoom_in_action, self.zoom_out_action, self.zoom_reset_action):
            menu.addAction(action)
        menu.addSeparator()
        menu.addMenu("&Theme").addActions(self.theme_actions.actions())
        menu.addMenu("&Colour map").addActions(self.colormap_actions.actions())
        precision = menu.addMenu("&Precision")
        precision.setObjectName("precisionMenu")
        precision.addActions(self.precision_actions.actions())

    # -- what the actions do ------------------------------------------------------------
    def toggle_full_screen(self, on: bool | None = None) -> None:
        """F11: full screen for the projector, and back."""
        on = not self.window.isFullScreen() if on is None else on
        self.window.showFullScreen() if on else self.window.showNormal()
        self.full_screen_action.setChecked(on)

    def set_zoom(self, zoom: float, quiet: bool = False) -> None:
        """Scale every text in the app (tables, axes, cell values, captions) by ``zoom``."""
        presentation.apply(QtWidgets.QApplication.instance(), self.window, zoom=zoom)
        self.on_zoom()
        if not quiet:
            self.status(f"Text size {presentation.STYLE.zoom:.0%}", 2000)

    def zoom_by(self, steps: int) -> None:
        """One step up (+1) or down (-1) the zoom ladder."""
        levels = presentation.ZOOM_STEPS
        index = min(range(len(levels)), key=lambda i: abs(levels[i] - presentation.STYLE.zoom))
        self.set_zoom(levels[min(max(index + steps, 0), len(levels) - 1)])

    def set_theme(self, name: str) -> None:
        """Light, dark or high contrast, for the room's light and the projector."""
        presentation.apply(QtWidgets.QApplication.instance(), self.window, theme=name)
        self._show_theme(name)

    def _show_theme(self, name: str) -> None:
        for action in self.theme_actions.actions():
            action.setChecked(action.data() == name)
        background = QtGui.QColor(presentation.STYLE.theme.canvas)
        for view in self.window.views:
            pal = view.palette()
            pal.setColor(view.backgroundRole(), background)
            view.setPalette(pal)

    def set_colormap(self, name: str) -> None:
        """The colour map of every weights heatmap (colour-blind-safe choices)."""
        presentation.set_weights_colormap(name)
        for action in self.colormap_actions.actions():
            action.setChecked(action.data() == name)

    def set_precision(self, digits: int | None) -> None:
        """The precision setting: every cell, tooltip and table writes ``digits`` decimals (2 or 4;
        None keeps each view's own)."""
        for action in self.precision_actions.actions():
            action.setChecked(action.data() == digits)
        if digits is None:
            return
        if digits not in DIGIT_CHOICES:
            raise ValueError(f"precision must be one of {DIGIT_CHOICES} decimals, got {digits}")
        self.digits = int(digits)
        setter = getattr(presentation, "set_digits", None)
        if setter is not None:
            setter(self.digits, self.window)
            return
        for obj in self.window.findChildren(QtCore.QObject):  # views and table models each write their own
            if callable(getattr(obj, "set_digits", None)):
                obj.set_digits(self.digits)
            heatmap = getattr(obj, "heatmap", None)  # a heatmap canvas: its cells too
            if callable(getattr(heatmap, "set_digits", None)):
                heatmap.set_digits(self.digits)

    def apply(self, theme: str, zoom: float, colormap: str) -> None:
        """Theme, text size and colour map at once (one restyle of every plot: start-up is faster)."""
        presentation.apply(QtWidgets.QApplication.instance(), self.window, theme=theme, zoom=zoom)
        self._show_theme(theme)
        self.on_zoom()
        self.set_colormap(colormap)

    def _on_play_toggled(self, on: bool) -> None:
        self.play_button.setText("■ Stop" if on else "▶ Play")
        self.play_timer.start() if on else self.play_timer.stop()

    def stop(self) -> None:
        """Stop the play walk (the window closes)."""
        self.play_timer.stop()
