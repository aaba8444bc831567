"""On two screens the window on the laptop shows the view the stage shows (Attention, Step by step,
Compare, a training panel, the √d_k plots), so that what the lecturer sees is what the room sees,
unless the lecturer chooses another view in the window: then the window stays where it was put
until Present is left or entered again."""

from __future__ import annotations

from PySide6 import QtCore

from ..lecture.basics import TRAINING_PREFIX, VARIANCE


class FollowStage(QtCore.QObject):
    """Makes ``window`` show the stage's view (``Present.viewShown``) while the stage is on another
    screen. ``chosen`` is True once the lecturer changed the window's view while presenting."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.chosen = False
        self._following = False
        self._index = window.view_tabs.currentIndex()  # the tab shown before a change
        self._watched: list = []  # the training lab's panel tabs, once the window has followed the stage there
        present = window.present
        present.viewShown.connect(self.follow)
        present.action.toggled.connect(self._begin)
        window.view_tabs.currentChanged.connect(self._tab_changed)

    def _begin(self, on: bool) -> None:
        # Present entered or left: the window follows the stage again (from the next view shown).
        self.chosen = False
        if on:
            # The laptop's window, with the console beside it, within the laptop's screen (after the turn:
            # F5 checks the action before the stage is placed).
            QtCore.QTimer.singleShot(0, self, lambda: self.elsewhere() and self.window.layout_room.keep_whole_on_screen())

    def elsewhere(self) -> bool:
        """True while the stage is on a screen the window is not on."""
        present = self.window.present
        return present.active and present.screen is not None and present.screen is not self.window.screen() \
            and present.geometry is None

    def follow(self, view: str) -> None:
        """Show ``view`` in the window as the stage does (unless the lecturer chose another view)."""
        if self.chosen or not self.elsewhere():
            return
        w = self.window
        self._following = True
        try:
            if view == VARIANCE:  # a dock beside the tabs: in front of its tabs
                w.variance_dock.show()
                w.variance_dock.raise_()
            elif view.startswith(TRAINING_PREFIX):
                lab = getattr(w, "training", None)
                if lab is not None:
                    w.view_tabs.setCurrentWidget(lab.page)
                    inner = lab.tab.tabs  # the lab's panels (the one on the stage holds its placeholder)
                    if inner not in self._watched:  # the lab is built when first shown: watched from then
                        self._watched.append(inner)
                        inner.currentChanged.connect(lambda _i: self._chosen_here())
                    title = view[len(TRAINING_PREFIX):]
                    for i in range(inner.count()):
                        if inner.tabText(i).replace("&", "") == title:
                            inner.setCurrentIndex(i)
                            break
            else:
                tabs = w.view_tabs
                for i in range(tabs.count()):
                    if tabs.tabText(i).replace("&", "") == view and tabs.isTabVisible(i):
                        tabs.setCurrentIndex(i)
                        break
        finally:
            self._following = False
            self._index = w.view_tabs.currentIndex()

    def _tab_changed(self, index: int) -> None:
        tabs, before = self.window.view_tabs, self._index
        self._index = index
        if self._following or not self.elsewhere() or self.window.present.deferred:
            return  # the window following, or a scene being shown
        if 0 <= before < tabs.count() and not tabs.isTabVisible(before):
            return  # its tab was hidden (another model's views): Qt chose the next one, not the lecturer
        self.chosen = True

    def _chosen_here(self) -> None:
        # Another panel of the training lab chosen in the window while presenting.
        if not (self._following or not self.elsewhere() or self.window.present.deferred):
            self.chosen = True
