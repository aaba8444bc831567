"""Where the window's parts go: the central area that scrolls when zoomed, sizes for the screen, reset.

On a projector's 1280 or 1366 pixels the views need the width more than the
Numbers panel does, so it shares the bottom with the variance plot; zoomed in,
the views keep their layout and grow, and the central area scrolls rather
than squash them.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from ..editing.controls import fit_width

# Screens this wide (a projector's 1280 or 1366 pixels, a 1536-pixel laptop)
# share the bottom between two panels.
COMPACT_WIDTHS = (1024, 1600)
COMPACT_PLOT_DOCK = 310  # px: the √d_k plots' dock on such a screen
NARROW_WIDTH = 1200  # below this the Model panel gives way to the stages: at most a quarter of the width
# The Model panel keeps to this share of the window's width, putting its labels above its fields when
# they do not fit beside them; a control wider than that by itself (a trained model's name at 150 %)
# widens it up to PANEL_MOST rather than be cut (the zoomed views scroll anyway).
PANEL_SHARE = 0.3
PANEL_MOST = 0.4


class ZoomScroll(QtWidgets.QScrollArea):
    """The central area. Unzoomed it asks for the room its views need, as if it were not
    there (the docks give way); zoomed in, the views are larger than it and it scrolls."""

    def minimumSizeHint(self) -> QtCore.QSize:
        if presentation.STYLE.zoom <= 1.0 and self.widget() is not None:
            return self.widget().minimumSizeHint()
        return super().minimumSizeHint()


class WindowLayout(QtCore.QObject):
    """Puts ``view_tabs`` in the middle of ``window`` (in a :class:`ZoomScroll`) and sizes the docks."""

    def __init__(self, window: QtWidgets.QMainWindow, view_tabs: QtWidgets.QTabWidget):
        super().__init__(window)
        self.window, self.view_tabs = window, view_tabs
        self.central_scroll = ZoomScroll()
        self.central_scroll.setObjectName("centralScroll")
        self.central_scroll.setFrameShape(QtWidgets.QFrame.NoFrame)
        self.central_scroll.setWidgetResizable(True)
        self.central_scroll.setWidget(view_tabs)
        view_tabs.installEventFilter(self)
        self._unzoomed_size: QtCore.QSize | None = None  # the central area at zoom 1
        window.setCentralWidget(self.central_scroll)
        self.default_state: QtCore.QByteArray | None = None  # the docks as first laid out
        self.side_limit: int | None = None  # the Model panel's widest, on a narrow screen
        self.screen_width = 1366  # the width of the screen last fitted to (fit_to_screen)
        self._fitted_limits: tuple[int, int] | None = None  # the Model panel's limits last given
        self._panel_scroll: QtWidgets.QScrollArea | None = None  # the Model panel's (fit_panel)
        window.installEventFilter(self)  # its width sets the Model panel's limits
        self._roomy: dict = {}  # view -> the docks that step aside while it is shown (give_room)
        self._set_aside: list[QtWidgets.QDockWidget] = []  # the docks stepped aside for the current view

    def dock(self, title: str, name: str, widget, area) -> QtWidgets.QDockWidget:
        """A movable, floatable, closable panel ``name`` holding ``widget``, added to the window at ``area``."""
        dock = QtWidgets.QDockWidget(title, self.window)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(QtWidgets.QDockWidget.DockWidgetMovable | QtWidgets.QDockWidget.DockWidgetFloatable
                         | QtWidgets.QDockWidget.DockWidgetClosable)
        self.window.addDockWidget(area, dock)
        return dock

    def give_room(self, view: QtWidgets.QWidget, docks) -> None:
        """While ``view`` is the shown tab, the open ``docks`` step aside (they come back when another
        tab is shown, and before the window closes, so that the layout kept for the next run has them).

        The Heads tab needs the window's height: under the Numbers panel a 1280×720 screen left it
        about 340 px, four rows of the report card and a 50-80 px heatmap of the selected head.
        """
        if not self._roomy:
            # One slot for every such tab: from one to another, the first's docks come back before
            # the second's step aside.
            self.view_tabs.currentChanged.connect(self._make_room)
        self._roomy[view] = tuple(docks)
        self._make_room(self.view_tabs.currentIndex())

    def _make_room(self, index: int) -> None:
        self._bring_back()
        for dock in self._roomy.get(self.view_tabs.widget(index), ()):
            if dock.isVisible() and not dock.isFloating():
                dock.hide()
                self._set_aside.append(dock)

    def _after_close(self) -> None:
        if self.window.isVisible():
            self._make_room(self.view_tabs.currentIndex())

    def _bring_back(self) -> None:
        docks, self._set_aside = self._set_aside, []
        for dock in docks:
            dock.show()

    def fit_to_screen(self, available: QtCore.QRect | None = None) -> None:
        """Size the window and its panels for the screen (``available``: its free area)."""
        w = self.window
        if available is None:
            screen = QtGui.QGuiApplication.primaryScreen()
            available = screen.availableGeometry() if screen else QtCore.QRect(0, 0, 1366, 768)
        height = min(900, available.height())
        narrow = available.width() < NARROW_WIDTH
        self.side_limit = int(available.width() * 0.25) if narrow else None
        self.screen_width = available.width()
        w.resize(min(1500, available.width()), height)
        if hasattr(w, "fit_controls"):
            w.fit_controls()
        w.resizeDocks([w.controls_dock, w.tables_dock], [260, 330], QtCore.Qt.Horizontal)
        w.resizeDocks([w.variance_dock], [int(height * 0.27)], QtCore.Qt.Vertical)
        if COMPACT_WIDTHS[0] <= available.width() < COMPACT_WIDTHS[1]:
            # The views need the width more than the Numbers do, which share the bottom
            # with the variance plot (a tab each).
            w.tabifyDockWidget(w.variance_dock, w.tables_dock)
            w.variance_dock.raise_()
            # Tall enough for the plots to read (about 200 pixels of plot under the tabs and caption).
            w.resizeDocks([w.variance_dock], [max(int(height * 0.31), COMPACT_PLOT_DOCK)], QtCore.Qt.Vertical)

    def panel_limits(self) -> tuple[int, int]:
        """(limit, widest): the Model panel's width in pixels, from the window's own width (the screen's
        width fitted to, before the window is shown): it keeps within ``limit`` by wrapping its rows
        and widens up to ``widest`` for a control that is wider by itself (see ``controls.fit_width``).

        The window's width, not the screen's: on a 1920-pixel screen a window made 1280 pixels wide
        (or a screen reported as 800 pixels wide beside the rectangle the window was fitted to) would
        otherwise size the panel for the wrong width.
        """
        width = self.window.width() if self.window.isVisible() else min(1500, self.screen_width)
        if self.side_limit is not None:
            limit = min(self.side_limit, int(width * 0.25))
            return limit, limit
        return int(width * PANEL_SHARE), int(width * PANEL_MOST)

    def fit_panel(self, scroll: QtWidgets.QScrollArea) -> None:
        """Fit the Model panel's ``scroll`` to the current text size within :meth:`panel_limits`; it is
        fitted again whenever the window's width changes them."""
        self._panel_scroll = scroll
        self._fitted_limits = self.panel_limits()
        before = scroll.minimumWidth()
        fitted = scroll.width() <= before + 1  # the panel is as wide as last fitted, not dragged wider
        fit_width(scroll, *self._fitted_limits)
        dock = getattr(self.window, "controls_dock", None)
        if fitted and scroll.minimumWidth() < before and dock is not None and dock.isVisible() \
                and not dock.isFloating():
            # Zoomed back out: the panel gives the views back the width it took (a dock keeps its
            # width when its least width drops, and MiniLM's stages shrank to 8 px labels beside it).
            self.window.resizeDocks([dock], [dock.width() - (scroll.width() - scroll.minimumWidth())],
                                    QtCore.Qt.Horizontal)

    def _refit_panel(self) -> None:
        if self._panel_scroll is not None and self.panel_limits() != self._fitted_limits:
            self.fit_panel(self._panel_scroll)

    def remember_default(self) -> None:
        """Keep the docks' first layout for :meth:`reset`."""
        self.default_state = self.window.saveState()

    def reset(self) -> None:
        """Put every panel back where it was at the first start."""
        w = self.window
        if self.default_state is not None:
            w.restoreState(self.default_state)
        for dock in (w.controls_dock, w.tables_dock, w.variance_dock):
            dock.show()
            dock.setFloating(False)
        self._set_aside = []
        self.fit_to_screen()
        if self._roomy:
            self._make_room(self.view_tabs.currentIndex())  # the shown tab keeps its room

    def fit_views(self) -> None:
        """At zoom z > 1 the views are z times their size at zoom 1 (the central area scrolls);
        at zoom 1 or below they fit the area as usual."""
        zoom = presentation.STYLE.zoom
        if zoom <= 1.0 or self._unzoomed_size is None:
            self._unzoomed_size = self.view_tabs.size()
        wanted = QtCore.QSize(0, 0) if zoom <= 1.0 else self._unzoomed_size * zoom
        if self.view_tabs.minimumSize() != wanted:
            self.view_tabs.setMinimumSize(wanted)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.window:
            if event.type() == QtCore.QEvent.Resize:
                self._refit_panel()  # the Model panel's limits follow the window's width
            elif event.type() == QtCore.QEvent.Close and self._set_aside:
                self._bring_back()  # before the window keeps its layout for the next run
                # Closing may be cancelled (unsaved changes): then the shown tab gets its room again.
                QtCore.QTimer.singleShot(0, self, self._after_close)
            return False
        if watched is self.view_tabs:
            if event.type() == QtCore.QEvent.Resize and presentation.STYLE.zoom <= 1.0:
                self._unzoomed_size = event.size()
            elif event.type() == QtCore.QEvent.LayoutRequest:
                self.central_scroll.updateGeometry()  # the views' minimum size may have changed
        return False
