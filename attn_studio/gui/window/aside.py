"""Buttons in the status bar for the panels that stepped aside for the shown tab.

A panel that steps aside (``WindowLayout.give_room``) is still one click away: the status bar holds a
button per panel set aside ("Numbers ▴"), which brings it back beside that tab for as long as the
person keeps it open, as View → the panel's name does. The buttons go when the panels come back.
"""

from __future__ import annotations

from PySide6 import QtWidgets


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
