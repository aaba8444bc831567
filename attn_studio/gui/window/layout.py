"""Where the window's parts go: the central area that scrolls when zoomed, sizes for the screen, reset.

On a projector's 1280 or 1366 pixels the views need the width more than the
Numbers panel does, so it shares the bottom with the variance plot; zoomed in,
the views keep their layout and grow, and the central area scrolls rather
than squash them.

The window stays within its screen whatever docks are shown (the Scenes panel when a
lecture opens, the presenter console when Present goes to another screen, any dock from
the View menu): docks that would stand one above the other shorter than their panels need
become tabs of one dock (tabifyDockWidget), and a tall panel (the Scenes panel, the console)
scrolls inside its dock rather than make the window taller than the screen.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from ..editing.controls import fit_width
from .aside import DocksAside

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


DOCK_LEAST_HEIGHT = 120  # px: a panel in a scrolled dock (DockScroll) gives way down to this, then scrolls


class DockScroll(QtWidgets.QScrollArea):
    """A dock's panel that scrolls up and down when the dock is shorter than the panel: the dock asks
    for at most DOCK_LEAST_HEIGHT pixels of height (the window never grows past its screen for it) and
    for the panel's least width (it never scrolls sideways, so nothing is cut at the right)."""

    def __init__(self, panel: QtWidgets.QWidget):
        super().__init__()
        self.setObjectName(f"{panel.objectName() or 'panel'}Scroll")
        self.setFrameShape(QtWidgets.QFrame.NoFrame)
        # The panel is sized here (_fit_panel): a resizable scroll area gives a panel of wrapped labels
        # its preferred height for the width, and the console scrolled by 10 px in a dock that held it.
        self.setWidgetResizable(False)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        self.setWidget(panel)

    def setWidget(self, panel: QtWidgets.QWidget) -> None:  # noqa: N802 (Qt's name)
        """Hold ``panel`` (the console comes back here from full screen)."""
        super().setWidget(panel)
        panel.installEventFilter(self)  # its least size changes with its texts: the dock's follows
        self.updateGeometry()
        self._fit_panel()

    def _fit_panel(self) -> None:
        # As wide as the dock, as tall as the dock or, when the dock is shorter, as the panel needs.
        panel = self.widget()
        if panel is None:
            return
        width = self.viewport().width()
        layout = panel.layout()
        least = panel.minimumSizeHint().height()
        if layout is not None and layout.hasHeightForWidth():
            least = layout.totalMinimumHeightForWidth(width)
        size = QtCore.QSize(width, max(self.viewport().height(), least, panel.minimumHeight()))
        if panel.size() != size:
            panel.resize(size)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name: the viewport's size)
        super().resizeEvent(event)
        self._fit_panel()

    def needed(self) -> QtCore.QSize:
        """What the panel needs to show whole, without scrolling."""
        panel = self.widget()
        return panel.minimumSizeHint().expandedTo(panel.minimumSize()) if panel is not None else QtCore.QSize()

    def minimumSizeHint(self) -> QtCore.QSize:  # noqa: N802 (Qt's name)
        needed = self.needed()
        return QtCore.QSize(needed.width() + self.verticalScrollBar().sizeHint().width(),
                            min(needed.height(), DOCK_LEAST_HEIGHT))

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 (Qt's name)
        panel = self.widget()
        if panel is None:
            return super().sizeHint()
        hint = panel.sizeHint()
        return QtCore.QSize(hint.width() + self.verticalScrollBar().sizeHint().width(), hint.height())

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.widget() and event.type() == QtCore.QEvent.LayoutRequest:
            self.updateGeometry()
            self._fit_panel()
        return False


def needed_height(dock: QtWidgets.QDockWidget) -> int:
    """The height ``dock`` needs to be used without scrolling: its panel's least height (a scrolled
    panel's whole height; the Numbers' table a few rows), with its title bar."""
    content = dock.widget()
    if content is None:
        return dock.minimumSizeHint().height()
    if isinstance(content, DockScroll):
        inner = content.needed().height()
    else:
        # Below its size hint a panel is usable only just (two rows of a table): the hint, up to a limit.
        inner = max(content.minimumSizeHint().height(), min(content.sizeHint().height(), COMFORTABLE_MOST))
    title = dock.minimumSizeHint().height() - content.minimumSizeHint().height()
    return inner + max(title, 0)


COMFORTABLE_MOST = 300  # px: the most a panel that does not scroll by itself is given by right (needed_height)


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
        # Above the views: why an edit was refused (show_above_views), seen whichever panels are open.
        self.central = QtWidgets.QWidget()
        self.central.setObjectName("central")
        self._above = QtWidgets.QVBoxLayout(self.central)
        self._above.setContentsMargins(0, 0, 0, 0)
        self._above.setSpacing(0)
        self._above.addWidget(self.central_scroll, 1)
        window.setCentralWidget(self.central)
        self.default_state: QtCore.QByteArray | None = None  # the docks as first laid out
        self.side_limit: int | None = None  # the Model panel's widest, on a narrow screen
        self.screen_width = 1366  # the width of the screen last fitted to (fit_to_screen)
        self._fitted_limits: tuple[int, int] | None = None  # the Model panel's limits last given
        self._panel_scroll: QtWidgets.QScrollArea | None = None  # the Model panel's (fit_panel)
        window.installEventFilter(self)  # its width sets the Model panel's limits
        self._fitted_size: QtCore.QSize | None = None  # the size fit_to_screen gave for the window's own screen
        self._open: set | None = None  # the docks open (not closed) when the window last kept to its screen
        self._whole = False  # the next keep_on_screen keeps the window within its screen whatever its size
        # The docks that step aside for a tab that needs the room, with their status-bar buttons.
        self.aside = DocksAside(window, view_tabs, self.compact)
        # A dock shown is fitted in once the turn's showing and hiding are done (a tab's docks step
        # aside and come back in one turn; the presenter console shows a turn after Present begins).
        self._soon = QtCore.QTimer(self, singleShot=True, interval=0)
        self._soon.timeout.connect(self.keep_on_screen)

    def show_above_views(self, widget: QtWidgets.QWidget) -> None:
        """Put ``widget`` (the refusal message) above the views, where it is seen on every tab, also when
        the panel it belongs to is closed or has stepped aside."""
        self._above.insertWidget(0, widget)

    def dock(self, title: str, name: str, widget, area, *, scroll: bool = False) -> QtWidgets.QDockWidget:
        """A movable, floatable, closable panel ``name`` holding ``widget``, added to the window at ``area``.

        ``scroll``: the panel scrolls up and down in its dock (a :class:`DockScroll`, the dock's widget)
        rather than make the window taller than its screen. Whenever the dock is shown, docked back or
        moved, the window keeps to its screen (:meth:`keep_on_screen`)."""
        dock = QtWidgets.QDockWidget(title, self.window)
        dock.setObjectName(name)
        dock.setWidget(DockScroll(widget) if scroll else widget)
        dock.setFeatures(QtWidgets.QDockWidget.DockWidgetMovable | QtWidgets.QDockWidget.DockWidgetFloatable
                         | QtWidgets.QDockWidget.DockWidgetClosable)
        self.window.addDockWidget(area, dock)
        dock.visibilityChanged.connect(lambda shown, dock=dock: shown and self._dock_shown(dock))
        # Opened behind another's tab (the View menu), it reports itself hidden: opened all the same. And
        # closed: then it is known as closed when opened again.
        dock.toggleViewAction().toggled.connect(lambda _open, dock=dock: self._dock_shown(dock))
        dock.topLevelChanged.connect(lambda floating, dock=dock: not floating and self._dock_shown(dock))
        dock.dockLocationChanged.connect(lambda _area, dock=dock: self._dock_shown(dock))
        return dock

    def _dock_shown(self, dock: QtWidgets.QDockWidget) -> None:
        if self.aside.returning and self._open is not None:
            self._open.add(dock)  # back from stepping aside: not opened, its tab stays as it was
        self._soon.start()

    def _docks(self) -> list[QtWidgets.QDockWidget]:
        return self.window.findChildren(QtWidgets.QDockWidget, options=QtCore.Qt.FindDirectChildrenOnly)

    # -- the window within its screen ---------------------------------------------------------------
    def keep_on_screen(self) -> None:
        """Keep the window within the screen it is on (its available area), with every dock usable.

        Docks that stand one above the other on a side, each shorter than its panel needs
        (:func:`needed_height`), become tabs of one dock, the two that together need the least height
        first, until the side's docks fit the window's height; a dock just shown is brought in front of
        its tabs. Then the window is made no larger than the screen and moved onto it. A window that
        was already larger than its screen (made so on purpose) is only kept from growing further."""
        w = self.window
        whole, self._whole = self._whole, False
        if not w.isVisible():
            return
        # The docks opened since the last time (closed then, open now): each comes in front of its tabs.
        open_now = {d for d in self._docks() if not d.isHidden()}
        opened = [] if self._open is None else [d for d in self._docks() if d in open_now and d not in self._open]
        self._open = open_now
        # Full screen or maximized, the window is the screen's already: only its docks are arranged.
        whole_screen = w.isFullScreen() or w.isMaximized()
        bounds = self._bounds(whole)
        extra = w.frameGeometry().size() - w.geometry().size()
        self._merge_sides(w.height() if whole_screen else min(w.height(), bounds.height() - extra.height()))
        for dock in opened:
            if w.tabifiedDockWidgets(dock):
                dock.raise_()
        if not whole_screen:
            self._clamp(bounds)

    def keep_whole_on_screen(self) -> None:
        """Soon (once the turn's docks are shown), keep the window within its screen even if it was made
        larger than the screen before: Present on another screen leaves the window alone on the laptop's."""
        self._whole = True
        self._soon.start()

    def _bounds(self, whole: bool = False) -> QtCore.QRect:
        # The screen's free area; a window made larger than it on purpose (or moved partly off it) keeps
        # what it has, and only may not grow (unless ``whole``).
        w = self.window
        screen = w.screen() or QtGui.QGuiApplication.primaryScreen()
        available = screen.availableGeometry() if screen else QtCore.QRect(0, 0, 1366, 768)
        frame = w.frameGeometry()
        if whole or available.contains(frame) or w.size() == self._fitted_size:
            return available
        return available.united(frame)

    def _clamp(self, bounds: QtCore.QRect) -> None:
        w = self.window
        frame = w.frameGeometry()
        extra = frame.size() - w.geometry().size()
        size = w.size().boundedTo(bounds.size() - extra)
        if size != w.size():
            w.resize(size.expandedTo(w.minimumSize()))
            frame = w.frameGeometry()
        x = min(max(frame.x(), bounds.x()), bounds.x() + bounds.width() - frame.width())
        y = min(max(frame.y(), bounds.y()), bounds.y() + bounds.height() - frame.height())
        if (x, y) != (frame.x(), frame.y()):
            w.move(max(x, bounds.x()), max(y, bounds.y()))

    def side_docks(self, area) -> list[list[QtWidgets.QDockWidget]]:
        """The docks open at ``area`` (not floating), as they stand from the top: each a list of the docks
        that are tabs of one place."""
        w = self.window
        open_docks = [d for d in w.findChildren(QtWidgets.QDockWidget, options=QtCore.Qt.FindDirectChildrenOnly)
                      if not d.isHidden() and not d.isFloating() and w.dockWidgetArea(d) == area]
        groups: list[list[QtWidgets.QDockWidget]] = []
        for dock in open_docks:
            if not any(dock in group for group in groups):
                groups.append([dock] + [d for d in w.tabifiedDockWidgets(dock) if d in open_docks])
        # From the top: the place of the tab shown of each.
        return sorted(groups, key=lambda g: min(d.geometry().y() if d.isVisible() else 1 << 20 for d in g))

    def _merge_sides(self, height: int) -> None:
        w = self.window
        style = w.style()
        separator = style.pixelMetric(QtWidgets.QStyle.PM_DockWidgetSeparatorExtent, None, w)
        tab_bar = w.fontMetrics().height() + 14  # a dock's tabs under it
        taken = sum(part.sizeHint().height() for part in (w.menuWidget(), w.statusBar())
                    if part is not None and part.isVisible())
        for area in (QtCore.Qt.TopDockWidgetArea, QtCore.Qt.BottomDockWidgetArea):
            groups = self.side_docks(area)
            if groups:
                taken += sum(max(d.height() for d in g) + separator for g in groups)
        column = height - taken

        def need(group) -> int:
            return max(needed_height(d) for d in group) + (tab_bar if len(group) > 1 else 0)

        for area in (QtCore.Qt.LeftDockWidgetArea, QtCore.Qt.RightDockWidgetArea):
            groups = self.side_docks(area)
            while len(groups) > 1 and sum(need(g) for g in groups) + separator * (len(groups) - 1) > column:
                i = min(range(len(groups) - 1), key=lambda i: need(groups[i] + groups[i + 1]))
                shown = next((d for d in groups[i + 1] if d.isVisible()), groups[i + 1][0])
                for dock in groups[i + 1]:
                    w.tabifyDockWidget(groups[i][0], dock)
                shown.raise_()  # the one that was in front stays so
                groups[i:i + 2] = [groups[i] + groups[i + 1]]
            # Room for all, but one shorter than it needs (the split was made before it opened): each
            # gets what it needs and a share of what is left, in proportion.
            fronts = [next((d for d in g if d.isVisible()), None) for g in groups]
            if len(groups) > 1 and all(fronts) and any(f.height() < need(g) - 1 for f, g in zip(fronts, groups)):
                needs = [need(g) for g in groups]
                spare = max(0, sum(f.height() for f in fronts) - sum(needs))
                w.resizeDocks(fronts, [n + spare * n // sum(needs) for n in needs], QtCore.Qt.Vertical)

    def give_room(self, view: QtWidgets.QWidget, docks, *, compact_only: bool = False) -> None:
        """While ``view`` is the shown tab, the open ``docks`` step aside (:meth:`DocksAside.give_room`)."""
        self.aside.give_room(view, docks, compact_only=compact_only)

    def compact(self) -> bool:
        """True while the window is as wide as a laptop's or a projector's screen (COMPACT_WIDTHS: 1024 up
        to 1600 pixels), where the docks share the bottom."""
        return COMPACT_WIDTHS[0] <= self.window.width() < COMPACT_WIDTHS[1]

    def make_room(self) -> None:
        """Set the docks aside for the shown tab again (a dock shown by other means while it was aside)."""
        self.aside.make_room()

    def withdraw(self, dock: QtWidgets.QDockWidget) -> bool:
        """Keep ``dock`` hidden when the docks set aside come back; True when it was aside."""
        return self.aside.withdraw(dock)

    def _after_close(self) -> None:
        if self.window.isVisible():
            self.aside.make_room()

    def fit_to_screen(self, available: QtCore.QRect | None = None) -> None:
        """Size the window and its panels for the screen (``available``: its free area)."""
        w = self.window
        # The window's frame (title bar, borders) within the screen too, once the window has one.
        frame = QtCore.QSize(0, 0)
        own = available is None
        if own:
            screen = (w.screen() if w.windowHandle() is not None else None) or QtGui.QGuiApplication.primaryScreen()
            available = screen.availableGeometry() if screen else QtCore.QRect(0, 0, 1366, 768)
            if w.isVisible():
                frame = w.frameGeometry().size() - w.geometry().size()
        height = min(900, available.height()) - frame.height()
        # Docks stepped aside for the shown tab are sized too: back for the sizing, aside again after.
        aside = bool(self.aside.set_aside)
        self.aside.bring_back()
        narrow = available.width() < NARROW_WIDTH
        self.side_limit = int(available.width() * 0.25) if narrow else None
        self.screen_width = available.width()
        w.resize(min(1500, available.width()) - frame.width(), height)
        self._fitted_size = QtCore.QSize(w.size()) if own else None
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
        if own and w.isVisible():
            self.keep_on_screen()
        if aside or (self.aside.any_compact and w.isVisible()):
            self.aside.make_room()

    def _fit_frame(self) -> None:
        w = self.window
        if w.isVisible() and self._fitted_size == w.size():
            self.keep_on_screen()
            self._fitted_size = QtCore.QSize(w.size())

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
        self.aside.forget()
        self.fit_to_screen()
        self.aside.make_room()  # the shown tab keeps its room

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
                self.aside.follow_width()  # wider or narrower than a laptop now
            if event.type() == QtCore.QEvent.Show and self.aside.any_compact:
                # Docks are only set aside when shown: the shown tab gets its room once the window is.
                QtCore.QTimer.singleShot(0, self, self.aside.make_room)
            if event.type() == QtCore.QEvent.Show and self._fitted_size == self.window.size():
                # Sized for its screen before it had a frame: the frame too within the screen.
                QtCore.QTimer.singleShot(0, self, self._fit_frame)
            elif event.type() == QtCore.QEvent.Close and self.aside.set_aside:
                self.aside.bring_back()  # before the window keeps its layout for the next run
                # Closing may be cancelled (unsaved changes): then the shown tab gets its room again.
                QtCore.QTimer.singleShot(0, self, self._after_close)
            return False
        if watched is self.view_tabs:
            if event.type() == QtCore.QEvent.Resize and presentation.STYLE.zoom <= 1.0:
                self._unzoomed_size = event.size()
            elif event.type() == QtCore.QEvent.LayoutRequest:
                self.central_scroll.updateGeometry()  # the views' minimum size may have changed
        return False
