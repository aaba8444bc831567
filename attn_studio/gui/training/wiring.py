"""The training lab in the main window: the "Training" tab, the Training menu, the docks, and the
runs' settings kept between runs of the app.

The toy model's docks (Model, Numbers, Why divide by √d_k) say nothing about a training run, so
while the Training tab is shown they step aside (the ones that were open come back when another
tab is chosen); the lab gets the whole window, which a 1280×720 projector needs. ``DOCKS`` names
them; the window's layout moves them (``WindowLayout.give_room``), as it does for the Heads tab.

The settings of every panel (seed, learning rate, speed, d_k, the panel shown) live in two places:

- the session file: Save writes them in the file's ``training`` section (the window's Document
  asks :meth:`TrainingWiring.settings`), and opening a file that has one applies it
  (:meth:`TrainingWiring.apply_settings`): the runs pause and start again from the file's
  settings. A session handed to a colleague reopens the same runs.
- the app's settings, under ``training`` as JSON, written when the window closes: the lab opens
  as it was left, also without a session or with a file that has no ``training`` section. A
  stored value that is not valid is logged and the defaults are used, so the app starts
  whatever the store holds.

Both are checked by the same rules (`training.settings`). Until the lab is first shown its panels
are not built; settings given meanwhile wait and are applied when it is built.
"""

from __future__ import annotations

import json
import logging

from PySide6 import QtCore, QtGui, QtWidgets

from ...training.experiment import TrainingError
from ...training.settings import check_training_settings, default_training_settings, merge_training_settings
from .. import settings as app_settings
from .tab import PANELS, TrainingTab

log = logging.getLogger(__name__)
SETTINGS_KEY = "training"
MAX_SETTINGS_CHARS = 10_000

__all__ = ["TrainingWiring"]

TAB_TITLE = "Training"
# The window's docks that step aside while the lab is shown (the window's layout moves them:
# one mechanism for every tab that needs the room, so that going from one to another is right).
DOCKS = ("controls_dock", "tables_dock", "variance_dock")


class TrainingWiring(QtCore.QObject):
    """Adds the Training tab and menu to ``window`` (a MainWindow with ``view_tabs`` and docks)."""

    def __init__(self, window: QtWidgets.QMainWindow):
        super().__init__(window)
        self.window = window
        # The lab is built when it is first shown (a dozen plots and three experiments a window that
        # never trains does not need); until then the tab holds an empty page.
        self.page = QtWidgets.QWidget()
        self.page.setObjectName("trainingPage")
        QtWidgets.QVBoxLayout(self.page).setContentsMargins(0, 0, 0, 0)
        self._tab: TrainingTab | None = None
        # The window's: open a lab model's folder in the studio (a panel's "Open in the studio").
        self.open_in_studio = None
        self.keep_settings = bool(getattr(window, "restore_settings", False))
        # Checked settings waiting for the lab to be built: the stored ones, then a session's.
        self.pending: dict = {}
        if self.keep_settings:
            stored = read_settings()
            if stored is not None:
                try:
                    self.pending = check_training_settings(stored)
                except TrainingError as exc:
                    log.warning("settings: ignoring the stored training settings (%s); using the defaults", exc)
        self._applied = False  # settings came from a session: remember them on closing even if never shown
        tabs = window.view_tabs
        self.index = tabs.addTab(self.page, TAB_TITLE)
        tabs.setTabToolTip(self.index, "The training lab: small models trained live — why √d_k, why attention, "
                                       "why two layers")
        tabs.currentChanged.connect(self._tab_changed)
        self.menu = self._build_menu(window.menuBar())

    def _build_menu(self, bar: QtWidgets.QMenuBar) -> QtWidgets.QMenu:
        menu = QtWidgets.QMenu("&Training", bar)
        menu.setObjectName("trainingMenu")
        for key, (name, cls, tip) in enumerate(PANELS, start=1):
            action = menu.addAction(cls.title, lambda name=name: self.open(name))
            action.setToolTip(tip)
            action.setObjectName(f"training_{name}_action")
            action.setShortcut(QtGui.QKeySequence(f"Ctrl+Alt+{key}"))
        # Before Help, where a menu bar ends.
        actions = bar.actions()
        if actions:
            bar.insertMenu(actions[-1], menu)
        else:
            bar.addMenu(menu)
        return menu

    @property
    def tab(self) -> TrainingTab:
        """The lab's inner tabs (built now if they were not yet)."""
        if self._tab is None:
            self._tab = TrainingTab()
            self._tab.open_in_studio = self._open_in_studio
            self.page.layout().addWidget(self._tab)
            if self.pending:
                self._tab.apply_settings(self.pending)  # checked when they came
            self.pending = {}
        return self._tab

    def _open_in_studio(self, folder) -> None:
        if self.open_in_studio is not None:
            self.open_in_studio(folder)

    @staticmethod
    def titles() -> dict:
        """Each panel's title by experiment name, without building the lab (menus list them)."""
        return {name: cls.title for name, cls, _ in PANELS}

    @property
    def built(self) -> bool:
        """True once the lab's panels exist (it has been shown or asked for)."""
        return self._tab is not None

    def settings(self) -> dict:
        """Every panel's settings and the panel shown, as plain values (what a session file keeps)."""
        if self._tab is not None:
            return self._tab.settings()
        return merge_training_settings(default_training_settings(), self.pending)

    def apply_settings(self, values) -> None:
        """Take settings as :meth:`settings` gives them (a session's ``training`` section; any key may be
        missing). A bad field raises a TrainingError naming it and changes nothing; otherwise each panel
        given pauses and starts its run again from the new settings."""
        checked = check_training_settings(values)
        self._applied = True
        if self._tab is not None:
            self._tab.apply_settings(checked)
        else:
            self.pending = merge_training_settings(self.pending, checked)

    def open(self, name: str):
        """Show the Training tab with the panel of experiment ``name`` in front, ready to play."""
        panel = self.tab.show_panel(name)
        self.window.view_tabs.setCurrentWidget(self.page)
        return panel

    def _tab_changed(self, index: int):
        if index == self.index:
            self.tab.setVisible(True)  # built at its first showing

    def close(self):
        """Stop every run (the window is closing)."""
        if self.keep_settings and (self._tab is not None or self._applied):
            write_settings(self.settings())
        if self._tab is not None:
            self._tab.close_runs()


def read_settings(store=None) -> dict | None:
    """The training lab's stored settings as a dict (checked when applied), or None."""
    store = store or app_settings.settings()
    value = store.value(SETTINGS_KEY)
    if value is None:
        return None
    try:
        if not isinstance(value, str) or len(value) > MAX_SETTINGS_CHARS:
            raise ValueError("not a short JSON text")
        data = json.loads(value)
        if not isinstance(data, dict):
            raise ValueError("not a table")
    except ValueError as exc:
        log.warning("settings: ignoring stored training=%r (%s)", str(value)[:80], exc)
        return None
    return data


def write_settings(values: dict, store=None) -> None:
    """Keep the training lab's settings for the next run."""
    store = store or app_settings.settings()
    store.setValue(SETTINGS_KEY, json.dumps(values, sort_keys=True))
    store.sync()
