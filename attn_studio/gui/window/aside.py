"""Docks that step aside for a tab that needs the room, and the buttons that bring them back.

:class:`DocksAside` sets the docks a tab asked for aside while that tab is shown (the training lab the
window, the Head Lab and, on a laptop or projector, the Attention tab their height) and brings them back
with any other tab. A panel set aside is still one click away: the status bar holds a button per panel
(:class:`AsideButtons`, "Numbers ▴"), which brings it back beside that tab for as long as the person keeps
it open, as View → the panel's name does. The buttons go when the panels come back.
"""

from __future__ import annotations

from typing import Callable

from PySide6 import QtCore, QtWidgets

ASIDE_MESSAGE_MS = 10_000


def docks_aside_message(docks, tab: str) -> str:
    """What the status bar says when ``docks`` step aside for the tab named ``tab``."""
    names = [d.windowTitle() for d in docks]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    panels = "panel steps" if len(names) == 1 else "panels step"
    back, button = ("it comes", "its button") if len(names) == 1 else ("they come", "their buttons")
    return (f"The {listed} {panels} aside while {tab.replace('&', '')} is shown; {back} back when you leave it, "
            f"or now with {button} at the right of this bar.")


class DocksAside(QtCore.QObject):
    """The docks set aside for ``window``'s shown tab of ``view_tabs``; ``compact()`` says whether the
    window is as wide as a laptop's or a projector's screen (``compact_only`` rooms apply only then)."""

    def __init__(self, window: QtWidgets.QMainWindow, view_tabs: QtWidgets.QTabWidget, compact: Callable[[], bool]):
        super().__init__(window)
        self.window, self.view_tabs, self.compact = window, view_tabs, compact
        self.rooms: dict = {}  # view -> the docks that step aside while it is shown
        self.compact_rooms: dict = {}  # the same on a compact window only
        self.set_aside: list[QtWidgets.QDockWidget] = []  # the docks stepped aside for the shown view
        self.returning = False  # docks coming back (WindowLayout keeps their tab state as it was)
        self._kept_open: set = set()  # views beside which the person brought the docks back
        self._compact: bool | None = None  # compact() when room was last made
        self.buttons = AsideButtons(window.statusBar())

    @property
    def any_compact(self) -> bool:
        """True when some tab's room depends on the window's width."""
        return bool(self.compact_rooms)

    def give_room(self, view: QtWidgets.QWidget, docks, *, compact_only: bool = False) -> None:
        """While ``view`` is the shown tab, the open ``docks`` step aside (they come back when another
        tab is shown, and before the window closes, so that the layout kept for the next run has them).
        ``compact_only``: only while the window is as wide as a laptop's 1366 or a projector's 1280 pixels,
        where the docks share the bottom.

        The Heads tab needs the window's height: under the Numbers panel a 1280×720 screen left it
        about 340 px, four rows of the report card and a 50-80 px heatmap of the selected head. So do
        the Attention tab's stages on such a screen: an 11-token sentence's scores, logits and weights
        show every cell's value two above two, which needs about 600 px.
        """
        if not self.rooms and not self.compact_rooms:
            # One slot for every such tab: from one to another, the first's docks come back before
            # the second's step aside.
            self.view_tabs.currentChanged.connect(self._make_room)
        (self.compact_rooms if compact_only else self.rooms)[view] = tuple(docks)
        if compact_only:
            for dock in docks:
                # Brought back from the View menu while this tab is shown: the person's choice stays.
                dock.toggleViewAction().triggered.connect(
                    lambda on, view=view: on and self.view_tabs.currentWidget() is view
                    and self._kept_open.add(view))
        self._make_room(self.view_tabs.currentIndex())

    def make_room(self) -> None:
        """Set the docks aside for the shown tab again (after a fitting, a reset, a dock shown meanwhile)."""
        if self.rooms or self.compact_rooms:
            self._make_room(self.view_tabs.currentIndex())

    def follow_width(self) -> None:
        """The window was resized: make the room again if it became wider or narrower than a laptop."""
        if self.compact_rooms and self._compact is not None and self._compact != self.compact():
            self.make_room()

    def withdraw(self, dock: QtWidgets.QDockWidget) -> bool:
        """Take ``dock`` out of the docks stepped aside, so that it stays hidden when they come back (a panel
        that does not apply any more); True when it was aside."""
        if dock not in self.set_aside:
            return False
        self.set_aside.remove(dock)
        self.buttons.show(self.set_aside)
        return True

    def forget(self) -> None:
        """Nothing aside and no choice kept (the layout reset puts every dock back)."""
        self.set_aside = []
        self.buttons.clear()
        self._kept_open.clear()

    def bring_back(self) -> None:
        """Show the docks set aside again, each tab in front or not as it was."""
        docks, self.set_aside = self.set_aside, []
        self.buttons.clear()
        self.returning = True
        try:
            for dock in docks:
                dock.show()
        finally:
            self.returning = False

    def _make_room(self, index: int) -> None:
        self.bring_back()
        view = self.view_tabs.widget(index)
        self._compact = self.compact()
        compact = self._compact and view not in self._kept_open
        docks = self.rooms.get(view) or (self.compact_rooms.get(view, ()) if compact else ())
        for dock in docks:
            if dock.isVisible() and not dock.isFloating():
                dock.hide()
                self.set_aside.append(dock)
        if self.set_aside:
            # Said, so that a person does not think the panels are lost (View still lists them), and a
            # button each in the status bar brings them back.
            self.window.statusBar().showMessage(docks_aside_message(self.set_aside, self.view_tabs.tabText(index)),
                                                ASIDE_MESSAGE_MS)
            self.buttons.show(self.set_aside)


class AsideButtons:
    """One status-bar button per dock set aside; :meth:`show` them for ``docks``, :meth:`clear` them."""

    def __init__(self, status_bar: QtWidgets.QStatusBar):
        self.status_bar = status_bar
        self.buttons: dict = {}  # dock -> its button (made once, kept hidden when the dock is back)

    def show(self, docks) -> None:
        """A button for each of ``docks`` (stepped aside just now); the others' buttons hidden."""
        for dock, button in self.buttons.items():
            button.setVisible(dock in docks)
        for dock in docks:
            if dock not in self.buttons:
                self.buttons[dock] = self._button(dock)

    def clear(self) -> None:
        for button in self.buttons.values():
            button.hide()

    def _button(self, dock: QtWidgets.QDockWidget) -> QtWidgets.QToolButton:
        button = QtWidgets.QToolButton()
        button.setObjectName(f"{dock.objectName()}Back")
        button.setText(f"{dock.windowTitle()} ▴")
        button.setToolTip(f"Bring the {dock.windowTitle()} panel back beside this tab "
                          f"(View → {dock.windowTitle()} does the same)")
        button.setAutoRaise(True)

        def bring_back() -> None:
            button.hide()
            if dock.isHidden():
                dock.toggleViewAction().trigger()  # as the View menu does: kept open beside this tab

        button.clicked.connect(bring_back)
        self.status_bar.addPermanentWidget(button)
        return button
