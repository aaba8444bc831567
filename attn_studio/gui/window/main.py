"""The main window: it assembles the rooms and wires them to the Studio.

Rooms: ``controls`` (the Model panel), ``numbers`` (the tables), ``lecture``
(full screen, zoom, themes, precision, play), ``present`` (the stage for the room, F5,
on one screen or two), ``export_actions`` (export menus and dialogs), ``files``
(the File menu's questions and dialogs) over ``document`` (file, recent files,
autosave and recovery; Qt-free), ``edit`` (undo from anywhere, copy, paste),
``layout`` (the central area and docks, kept within the screen), ``follow_stage``, ``settings``.
The views draw ``studio.result``."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from ...document import Document, open_preset
from ...recovery import RecoveryStore
from ...session import SessionError
from ...studio import Studio
from .. import settings
from ..bridge import BackgroundEdits, StudioBridge, StudioProxy
from ..editing.controls import ControlsPanel, scrolled
from ..editing.edit_actions import EditActions
from ..editing.numbers import NumbersPanel
from ..files.export_actions import ExportActions
from ..files.file_actions import FileActions
from ..heads import HeadsTab
from ..lecture.mode import Lecture
from ..lecture import scenes_panel
from ..lecture.present import Present
from ..qt.worker import collect_on_gui_thread
from ..settings import data_dir
from ..trained.wiring import TrainedWiring
from ..training.wiring import DOCKS as TRAINING_DOCKS, TrainingWiring
from ..views.plots import VariancePlot
from . import help
from .drawing import VIEWS, SeenWhenGrabbed, ViewDrawer
from .follow import FollowStage
from .layout import WindowLayout
from .menus import build_menus, name_parts

DEFAULT_PRESET = "journey"
COMPUTING_MESSAGE = "Computing the model…"

class MainWindow(SeenWhenGrabbed, QtWidgets.QMainWindow):
    """Attention Studio's window. ``studio`` is the Qt-free Studio behind it.

    Every widget edit goes through ``studio.update``; every view redraws from
    ``studio.state`` and ``studio.result`` when the bridge says something changed,
    and only when it can be seen. ``restore_settings=False`` neither reads nor
    writes the user's saved settings (headless export draws the same everywhere).
    ``recovery=False`` is a window that only draws figures: it has no work of its own to keep,
    so it never writes a recovery file, however long it lives, and offers none.
    """

    def __init__(self, studio: Studio | None = None, *, preset: str | None = None, restore_settings: bool = True,
                 recovery: bool = True):
        super().__init__()
        collect_on_gui_thread()  # cycles freed on the GUI thread, however the window was opened (once)
        self.setObjectName("mainWindow")
        # Without a studio, open on ``preset`` (journey by default); with one, it names the example it came from.
        if studio is None:
            studio, preset = open_preset(preset or DEFAULT_PRESET)
        self.studio = studio = StudioProxy(studio)  # a trained model switches its target (trained.wiring)
        self.bridge = StudioBridge(studio, self)
        # Large toy models compute off the GUI thread; the window only installs and draws.
        self.background = studio.background = BackgroundEdits(studio.target, self)
        self.statusBar().setObjectName("statusBar")
        self._status = self.statusBar().showMessage
        self.restore_settings = restore_settings
        prefs = settings.load() if restore_settings else settings.Preferences()
        self.document = Document(studio, RecoveryStore(data_dir(), enabled=recovery), preset=preset, recent_files=prefs.recent_files,
                                 on_recent_changed=settings.write_recent if restore_settings else None)

        self.view_tabs = QtWidgets.QTabWidget()
        self.view_tabs.setObjectName("viewTabs")
        self.view_tabs.setDocumentMode(True)
        # On a small projector the titles stay whole: the tab bar scrolls rather than cut them.
        self.view_tabs.setElideMode(QtCore.Qt.ElideNone)
        self.view_tabs.setUsesScrollButtons(True)
        self.drawer = ViewDrawer(self)  # what is drawn when: only what can be seen, a large model in steps
        self.views, self._stale, self._steps = self.drawer.views, self.drawer.stale, self.drawer.steps
        for attr, cls, title, tip in VIEWS:
            setattr(self, attr, cls(studio))
            self.add_view(getattr(self, attr), title, tip)
        self.view_tabs.currentChanged.connect(lambda i: self._render_visible())
        # A large model's heatmap pictures are coloured beside its numbers, off the GUI thread.
        self.background.add_preparer(self.heatmap_view.prepare, self.heatmap_view.use_prepared)
        self.layout_room = WindowLayout(self, self.view_tabs)  # the central area scrolls when zoomed in
        self.central_scroll = self.layout_room.central_scroll
        self.numbers = NumbersPanel(studio)
        self.layout_room.show_above_views(self.numbers.message_label)  # seen on every tab, Numbers open or not
        self.controls = ControlsPanel(studio, self.show_message, self.clear_message)
        self.controls.preset_chosen.connect(self.load_preset)
        self.lecture = Lecture(self, studio, self.fit_controls, self._status)
        self.lecture.add_query_keys((self.heatmap_view, self.heads_summary_view, self.compare_view))
        self.controls.add_row("walk", self.lecture.play_row)
        self.export_actions = ExportActions(self, self.show_message, self._status)
        self.files = FileActions(self, self.document, self.show_message, self._status, self._update_title)
        self.edit = EditActions(self, self._status)
        self.numbers.table_menu_requested.connect(self.export_actions.table_menu)
        self.controls_scroll = scrolled(self.controls)
        self.controls_dock = self.layout_room.dock("Model", "controlsDock", self.controls_scroll, QtCore.Qt.LeftDockWidgetArea)
        self.tables_dock = self.layout_room.dock("Numbers", "tablesDock", self.numbers, QtCore.Qt.RightDockWidgetArea)
        self.variance_plot = VariancePlot(studio)
        self.views.append(self.variance_plot)
        self.variance_dock = self.layout_room.dock("Why divide by √d_k", "varianceDock", self.variance_plot, QtCore.Qt.BottomDockWidgetArea)
        self.variance_dock.visibilityChanged.connect(lambda on: on and self._render_visible())
        # Present (F5): the current view as a stage for the room; F presents the panel under the pointer.
        self.present = self.focus = Present(self)
        self.present_action, self.focus_action = self.present.action, self.present.focus_action
        build_menus(self)
        scenes_panel.install(self)  # the Scenes dock (a lecture's scenes) and Help → Example lecture
        self.follow_stage = FollowStage(self)  # on two screens the window shows the stage's view
        name_parts(self)  # the rooms' parts by name on the window (w.sentence_edit, w.undo ...)
        self.setAcceptDrops(True)
        self.bridge.changed.connect(self._on_studio_change)
        self.background.failed.connect(self.show_message)
        self.background.busy.connect(self._on_computing)
        self.trained = TrainedWiring(self)  # after the window's own redraw on every change: see its apply()
        self._add_heads_tab()
        self.training = TrainingWiring(self)  # the training lab's tab and menu, after every other tab
        self.training.open_in_studio = self.trained.open_lab_model  # a lab panel's "Open in the studio"
        self.document.lab = self.training  # its settings are saved in the session file and reopen with it
        # Docks step aside for the lab, the Head Lab, and on a laptop the Attention tab (11 tokens' values).
        self.layout_room.give_room(self.training.page, [getattr(self, name) for name in TRAINING_DOCKS])
        self.layout_room.give_room(self.heads_tab, (self.tables_dock, self.variance_dock))
        self.layout_room.give_room(self.heatmap_view, (self.tables_dock, self.variance_dock), compact_only=True)
        self.layout_room.fit_to_screen()
        self.layout_room.remember_default()
        self._apply_preferences(prefs)
        self._render_all()
        self.files.offer_recovery()
        self.recovery, self.recovery_banner = self.document.recovery, self.files.recovery_banner

    # -- construction ------------------------------------------------------------
    def add_view(self, view, title: str, tip: str = "") -> None:
        """Add a view (a widget with ``render()``) as a tab of the central area."""
        self.view_tabs.setTabToolTip(self.view_tabs.addTab(view, title), tip)
        self.drawer.add(view)

    def render_view(self, view) -> None:
        """Bring ``view`` up to date now, visible or not (exports call this)."""
        self.drawer.render_view(view)

    def drawing(self) -> bool:
        """True while a model is still being drawn in steps, or tables are still refreshed or fitted."""
        return bool(self._steps) or self.numbers.refreshing()

    def finish_drawing(self) -> None:
        """Draw now whatever is still waiting to be drawn in steps."""
        self.drawer.finish()
        self.numbers.finish_refresh()

    def _render_visible(self) -> None:
        self.drawer.render_visible()

    def _draw_step(self) -> None:
        self.drawer.draw_step()

    def _add_heads_tab(self) -> None:
        # The Head Lab's wing meets the trained room here: it gets the studio and a way to select a head.
        room = self.trained.room
        self.heads_tab = HeadsTab(lambda layer, head, query=None: room.select(layer=layer, head=head, query=query),
                                  lambda: self.view_tabs.setCurrentWidget(self.heatmap_view), submit=room.measure)
        self.trained.add_tab(self.heads_tab, "Heads", "The Head Lab: every head's report card, find the head "
                             "that links two words, importance, flow beside rollout, what silencing changed")
        room.studioChanged.connect(self.heads_tab.set_studio)
        self.heads_tab.message.connect(lambda text: self._status(text, 5000))

    def _apply_preferences(self, prefs: settings.Preferences):
        # Text size first: it sets the panels' minimum widths, which the restored geometry must respect.
        self.lecture.apply(prefs.theme, prefs.zoom, prefs.colormap)
        self.lecture.set_precision(prefs.digits)
        self.present.set_stage_digits(prefs.stage_digits)
        if prefs.geometry is not None:
            self.restoreGeometry(prefs.geometry)
        if prefs.window_state is not None:
            self.restoreState(prefs.window_state)

    def fit_controls(self):
        """Fit the panels to the current text size: the Model panel's width, and the views' zoomed size."""
        self.layout_room.fit_panel(self.controls_scroll)
        self.layout_room.fit_views()

    # -- edits and messages -------------------------------------------------------
    def load_preset(self, name: str) -> bool:
        """Load example ``name`` as a new untitled document (undoable); False if it is not loaded.

        An example is not a file: the open file is asked about when it has unsaved
        changes, and is let go of, so the next Save asks for a name instead of overwriting it.
        """
        if self.document.path is not None and not self.confirm_discard():
            self.controls.sync(self.document.preset_name, self.document.preset_edited())
            return False
        previous = (self.document.preset_name, self.document.preset_state)
        try:
            state = self.document.load_preset(name)
        except SessionError as exc:
            self.show_message(str(exc))
            return False
        if not self.controls.guard(self.studio.set_state, state, label=f"load example '{name}'"):
            self.document.preset_name, self.document.preset_state = previous
            return False
        self.document.path = None
        self.studio.mark_saved()  # a new document: nothing to ask about until it is edited
        self._update_title()
        return True

    def show_message(self, text: str):
        """Why an edit was refused: in the window, the status bar and, while presenting, on the stage."""
        self.numbers.show_message(text)
        self._status(text, 10000)
        if text and getattr(self, "present", None) is not None and self.present.active:
            self.present.stage.say(text)

    def clear_message(self):
        self.numbers.clear_message()

    def menuBar(self) -> QtWidgets.QMenuBar:  # noqa: N802 (Qt's name)
        """The window's one menu bar, also while the recovery banner holds it (QMainWindow.menuBar() would
        make a new, empty bar in the holder's place: the menus and the banner gone, autosave with them)."""
        bar = getattr(self, "_menu_bar", None)
        if bar is None:
            bar = self._menu_bar = super().menuBar()
        return bar

    def show_shortcuts(self) -> QtWidgets.QDialog:
        self.shortcuts_dialog = help.shortcuts_dialog(self, help.shortcut_list(self.menuBar()))
        return self.shortcuts_dialog

    def reset_layout(self):
        """Put every panel back where it was at the first start."""
        self.layout_room.reset()

    # -- sessions (the work is ``files``'s; the window is where they are asked for) ----------
    @property
    def current_path(self) -> Path | None:
        """The session file being edited, or None."""
        return self.document.path

    png_scale = property(lambda self: self.export_actions.png_scale,
                         lambda self, scale: setattr(self.export_actions, "png_scale", float(scale)),
                         doc="The scale of PNG exports (2.0 = 192 dpi).")

    def dragEnterEvent(self, event):
        if any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event):
        if self.files.open_dropped([u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]):
            event.acceptProposedAction()

    # -- following the studio ---------------------------------------------------------
    def _on_studio_change(self, fields: frozenset):
        self._render_all()
        self.files.changed(fields)

    def _render_all(self):
        self.controls.sync(self.document.preset_name, self.document.preset_edited())
        self.numbers.refresh()
        # Only what can be seen is drawn now; the rest when it is shown.
        self._stale.update(self.views)
        self._render_visible()
        self.edit.refresh()
        self._update_title()

    def _on_computing(self, busy: bool):
        bar = self.statusBar()
        if busy:
            bar.showMessage(COMPUTING_MESSAGE)
        elif bar.currentMessage() == COMPUTING_MESSAGE:
            bar.clearMessage()

    def _update_title(self):
        if self.isWindowModified() != (modified := self.studio.is_modified):  # each call tells the window system
            self.setWindowModified(modified)
        self.setWindowTitle(self.document.title())

    def save_settings(self):
        """Keep window geometry, panel layout, theme, zoom and colour map for the next run."""
        if self.restore_settings:
            settings.save(self)

    def closeEvent(self, event):
        if not (self.confirm_discard() and self.lecture_files.confirm_discard()):  # the session's, the lecture's
            event.ignore()
            return
        self.present.leave()  # a view lent to the stage goes back before the layout is kept
        self.lecture.stop()
        self.files.close()
        self.lecture_files.close()
        self.save_settings()
        self.bridge.close()
        self.background.wait()
        self.trained.close()
        self.training.close()
        self.heads_tab.shutdown()
        super().closeEvent(event)
