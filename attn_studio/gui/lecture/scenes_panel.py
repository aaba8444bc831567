"""The Scenes panel: a lecture's scenes in the window, shown with a click, played with PageDown.

A scene is applied to the window (:func:`.scene_show.show_scene`): its model (the toy session, or a trained
session opened with its model off the GUI thread), its view (a tab, or the stage's view while
presenting) and what it selects. Showing a scene never changes the saved scene: live edits made
meanwhile stay until the next scene is shown, and "Update" makes them the scene's own. Every change
of the lecture (add, rename, caption, notes, reorder, duplicate, delete, update) is undoable in the
panel (its own Undo / Redo: the window's Ctrl+Z stays the model's).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from ...matrices import ExportError
from ...scenes import Lecture, LectureError, Scene
from . import console
from .lecture_files import LectureFiles
from .scene_show import capture_scene, paint_offscreen, show_scene

HISTORY = 200  # lecture edits kept for the panel's undo
SETTLED_TURNS = 2  # turns without drawing before a scene's stage is painted
NO_LECTURE = "No lecture: Help → Example lecture, or Add the current view (Ctrl+M)"


class ScenesPanel(QtWidgets.QWidget):
    """The lecture's scenes: a list (drag to reorder), the selected scene's title, caption and notes,
    and Add (Ctrl+M), Duplicate, Delete, Update, Undo, Redo. ``lecture`` is the lecture shown (None:
    none); ``current`` the index of the scene shown last."""

    lectureChanged = QtCore.Signal()
    sceneShown = QtCore.Signal(int)
    sceneDrawn = QtCore.Signal(int)  # the scene shown is drawn whole (and the stage painted, when presenting)

    def __init__(self, window):
        super().__init__()
        self.setObjectName("scenesPanel")
        self.window = window
        self.lecture: Lecture | None = None
        self.current = -1
        self.files = LectureFiles(window, self)  # Open, Save, Save As, recent files, autosave, recovery
        self._undo: list[Lecture | None] = []
        self._redo: list[Lecture | None] = []
        self._filling = False
        self._showing = None  # the scene being shown, until it is drawn whole
        layout = QtWidgets.QVBoxLayout(self)
        self.title_label = QtWidgets.QLabel(NO_LECTURE)
        self.title_label.setObjectName("lectureTitle")
        self.title_label.setWordWrap(True)
        layout.addWidget(self.title_label)
        self.list = QtWidgets.QListWidget()
        self.list.setObjectName("scenesList")
        self.list.setDragDropMode(QtWidgets.QAbstractItemView.InternalMove)
        self.list.model().rowsMoved.connect(self._moved)
        self.list.itemActivated.connect(lambda item: self.go(self.list.row(item)))
        self.list.itemClicked.connect(lambda item: self.go(self.list.row(item)))
        self.list.currentRowChanged.connect(self._fill_fields)
        layout.addWidget(self.list, 1)
        form = QtWidgets.QFormLayout()
        self.scene_title = QtWidgets.QLineEdit()
        self.scene_title.setObjectName("sceneTitle")
        self.caption = QtWidgets.QLineEdit()
        self.caption.setObjectName("sceneCaption")
        self.caption.setPlaceholderText("one line on the stage")
        self.notes = QtWidgets.QPlainTextEdit()
        self.notes.setObjectName("sceneNotes")
        self.notes.setPlaceholderText("notes for you only")
        self.notes.setMaximumHeight(90)
        form.addRow("Title", self.scene_title)
        form.addRow("Caption", self.caption)
        form.addRow("Notes", self.notes)
        layout.addLayout(form)
        self.scene_title.editingFinished.connect(lambda: self._edit_field("title", self.scene_title.text()))
        self.caption.editingFinished.connect(lambda: self._edit_field("caption", self.caption.text()))
        self.notes.textChanged.connect(self._notes_typed)
        self._notes_timer = QtCore.QTimer(self, singleShot=True, interval=600)
        self._notes_timer.timeout.connect(lambda: self._edit_field("notes", self.notes.toPlainText()))
        buttons = QtWidgets.QGridLayout()
        self.buttons = {}
        for i, (name, text, slot, tip) in enumerate((
                ("add", "Add", self.add_current, "Add what is shown now as a scene (Ctrl+M)"),
                ("duplicate", "Duplicate", self.duplicate, "A copy of the selected scene after it"),
                ("delete", "Delete", self.delete, "Delete the selected scene"),
                ("update", "Update", self.update_current, "Make what is shown now the selected scene's own"),
                ("undo", "Undo", self.undo, "Undo the last change of the lecture"),
                ("redo", "Redo", self.redo, "Redo it"),
                ("open", "Open…", lambda: self.files.open_dialog(), "Open a lecture file (.attn-lecture.json)"),
                ("save", "Save", lambda: self.files.save(), "Save the lecture to its file (.attn-lecture.json)"),
                ("save_as", "Save As…", lambda: self.files.save_as_dialog(), "Save the lecture to a new file"),
                ("handout", "Hand-out…", self.handout_dialog, "Each scene's figure: one PDF, or a file a scene"))):
            button = QtWidgets.QPushButton(text)
            button.setObjectName(f"scenes_{name}")
            button.setToolTip(tip)
            button.clicked.connect(slot)
            buttons.addWidget(button, i // 3, i % 3, 1, 3 if i == 9 else 1)
            self.buttons[name] = button
        layout.addLayout(buttons)
        self.add_action = QtGui.QAction("Add scene", window)
        self.add_action.setObjectName("addSceneAction")
        self.add_action.setShortcut(QtGui.QKeySequence("Ctrl+M"))
        self.add_action.triggered.connect(self.add_current)
        window.addAction(self.add_action)
        self._sync()

    # -- the lecture ----------------------------------------------------------------------------
    def set_lecture(self, lecture: Lecture | None, *, record: bool = True, fresh: bool = False) -> None:
        """Show ``lecture`` (an undoable change of the panel's lecture when ``record``; ``fresh``: a lecture
        opened, with no history to undo)."""
        if fresh:
            self._undo.clear()
            self._redo.clear()
        elif record:
            self._undo = (self._undo + [self.lecture])[-HISTORY:]
            self._redo.clear()
        self.lecture = lecture
        self.current = min(self.current, len(lecture.scenes) - 1) if lecture is not None else -1
        self._sync()
        self._build_ahead()
        self.lectureChanged.emit()

    def _build_ahead(self) -> None:
        # The training lab's panels the lecture shows take a tenth of a second each to build: built
        # when the lecture opens, one an event-loop turn, not when their scene is first played.
        views = [s.view for s in self.lecture.scenes if s.view.startswith("Training: ")] if self.lecture else []
        present = self.window.present

        def build(rest: list) -> None:
            if rest:
                present.training_panel(rest[0])
                QtCore.QTimer.singleShot(0, self, lambda: build(rest[1:]))

        if views:
            QtCore.QTimer.singleShot(0, self, lambda: build(list(dict.fromkeys(views))))

    def open_example(self) -> bool:
        """Help → Example lecture: the lecture that ships with the app, its first scene shown (unsaved
        changes of the lecture open asked about first)."""
        return self.files.open_example()

    def _replace(self, scenes, title: str | None = None) -> None:
        lecture = self.lecture
        try:
            new = Lecture(title if title is not None else (lecture.title if lecture else "My lecture"), tuple(scenes))
        except LectureError as exc:
            self.window.show_message(str(exc))
            self._sync()
            return
        self.set_lecture(new)

    def open_lecture(self, path) -> bool:
        """Open the lecture file ``path`` on its first scene (see :meth:`LectureFiles.open`; nothing is asked)."""
        return self.files.open(path, ask=False)

    def save_lecture(self, path) -> bool:
        """Write the lecture to ``path`` atomically; False with a message when it cannot be written."""
        return self.files.save_to(path)

    def show_file(self, path, modified: bool) -> None:
        """Show the lecture's title, its file and whether it has unsaved changes."""
        if self.lecture is None:
            self.title_label.setText(NO_LECTURE)
            return
        where = path.name if path is not None else "not saved yet"
        self.title_label.setText(f"{self.lecture.title} — {where}{' •' if modified else ''}")

    def export_handout(self, path, fmt: str = "png", ask_cancel=None, *, paper: str | None = None,
                       notes: bool = False, on_message=None) -> list:
        """Write the lecture's hand-out to ``path`` (a .pdf, or a folder of ``fmt`` pages), on ``paper``
        ("a4" or "letter"; None: the locale's), with the scenes' notes when ``notes``, each scene shown
        in turn; ``ask_cancel(done, total)`` returns True to stop (nothing is then written),
        ``on_message(text)`` hears what is being done (a training scene's steps). The scene shown
        before is shown again afterwards. The files written ([] when cancelled or refused, with a message)."""
        from .handout import Cancelled, write_handout

        if self.lecture is None or not self.lecture.scenes:
            self.window.show_message("There is no lecture to export: add a scene first (Ctrl+M)")
            return []
        shown = self.current

        def progress(done, total, message: str):
            if message and on_message is not None:
                on_message(message)
            return not ask_cancel(done, total) if ask_cancel else None

        try:
            written = write_handout(self.window, self.lecture, path, fmt=fmt, progress=progress, paper=paper,
                                    notes=notes)
        except Cancelled:
            self.window.show_message("The hand-out was cancelled: nothing was written")
            written = []
        except (ExportError, OSError) as exc:
            self.window.show_message(f"The hand-out was not written: {exc}")
            written = []
        if shown >= 0:
            self.go(shown)
        return written

    def handout_dialog(self) -> None:
        """File → Export lecture hand-out…: PDF, PNG or SVG pages on A4 or Letter, the notes or not;
        then where, then each scene drawn with progress and Cancel (a cancelled hand-out writes nothing)."""
        from .handout import HandoutDialog

        if self.lecture is None or not self.lecture.scenes:
            self.window.show_message("There is no lecture to export: add a scene first (Ctrl+M)")
            return
        options = HandoutDialog(self)
        if options.exec() != QtWidgets.QDialog.Accepted:
            return
        choice = options.choices()
        options.deleteLater()
        if choice["fmt"] == "pdf":
            path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export the lecture's hand-out", "handout.pdf",
                                                            "PDF (*.pdf)")
            if path and not path.lower().endswith(".pdf"):
                path += ".pdf"
        else:
            path = QtWidgets.QFileDialog.getExistingDirectory(self, f"A folder for the {choice['fmt'].upper()} pages")
        if not path:
            return
        total = len(self.lecture.scenes)
        progress = QtWidgets.QProgressDialog("Drawing each scene…", "Cancel", 0, total * 100, self)
        progress.setObjectName("handoutProgress")
        progress.setWindowTitle("Hand-out")
        progress.setWindowModality(QtCore.Qt.WindowModal)
        progress.setMinimumDuration(0)
        progress.setValue(0)

        def ask(done: float, total: int) -> bool:
            progress.setValue(min(round(done * 100), total * 100 - 1))
            QtWidgets.QApplication.processEvents()
            return progress.wasCanceled()

        written = self.export_handout(path, choice["fmt"], ask_cancel=ask, paper=choice["paper"],
                                      notes=choice["notes"], on_message=progress.setLabelText)
        progress.close()
        progress.deleteLater()
        if written:
            where = Path(path).name if choice["fmt"] == "pdf" else f"{len(written)} pages in {Path(path).name}"
            self.window.statusBar().showMessage(f"Wrote {where}", 5000)

    def undo(self) -> None:
        """Undo the last change of the lecture."""
        if self._undo:
            self._redo.append(self.lecture)
            self.set_lecture(self._undo.pop(), record=False)

    def redo(self) -> None:
        """Redo the last undone change of the lecture."""
        if self._redo:
            self._undo.append(self.lecture)
            self.set_lecture(self._redo.pop(), record=False)

    # -- editing --------------------------------------------------------------------------------
    def _selected(self) -> int:
        return self.list.currentRow()

    def add_current(self) -> bool:
        """Add what the window shows now as a scene, after the selected one (Ctrl+M); False, with a message
        in the window, when it cannot be a scene."""
        scenes = list(self.lecture.scenes) if self.lecture else []
        at = self._selected() + 1 if scenes and self._selected() >= 0 else len(scenes)
        try:
            scene = capture_scene(self.window, f"Scene {len(scenes) + 1}")
        except LectureError as exc:
            self.window.show_message(str(exc))
            return False
        scenes.insert(at, scene)
        self._replace(scenes)
        self.list.setCurrentRow(at)
        self.current = at
        return True

    def duplicate(self) -> None:
        """A copy of the selected scene, after it."""
        i = self._selected()
        if self.lecture and 0 <= i < len(self.lecture.scenes):
            scenes = list(self.lecture.scenes)
            copy = dataclasses.replace(scenes[i], title=(scenes[i].title + " (copy)")[:200])
            scenes.insert(i + 1, copy)
            self._replace(scenes)
            self.list.setCurrentRow(i + 1)

    def delete(self) -> None:
        """Delete the selected scene."""
        i = self._selected()
        if self.lecture and 0 <= i < len(self.lecture.scenes):
            scenes = list(self.lecture.scenes)
            del scenes[i]
            self._replace(scenes)
            self.list.setCurrentRow(min(i, len(scenes) - 1))

    def update_current(self) -> None:
        """Make what the window shows now the selected scene's own (its title, caption and notes kept)."""
        i = self._selected()
        if self.lecture and 0 <= i < len(self.lecture.scenes):
            old = self.lecture.scenes[i]
            shown = capture_scene(self.window, old.title)
            scenes = list(self.lecture.scenes)
            scenes[i] = dataclasses.replace(shown, caption=old.caption, notes=old.notes)
            self._replace(scenes)
            self.list.setCurrentRow(i)

    def _edit_field(self, name: str, value: str) -> None:
        i = self._selected()
        if self._filling or not self.lecture or not 0 <= i < len(self.lecture.scenes):
            return
        scene = self.lecture.scenes[i]
        if getattr(scene, name) == value:
            return
        try:
            changed = dataclasses.replace(scene, **{name: value})
        except LectureError as exc:  # an empty title, a caption of two lines: refused, the old kept
            self.window.show_message(f"Scene {i + 1}: {exc}")
            self._fill_fields(i)
            return
        scenes = list(self.lecture.scenes)
        scenes[i] = changed
        self._replace(scenes)
        self.list.setCurrentRow(i)

    def _notes_typed(self) -> None:
        if not self._filling:
            self._notes_timer.start()

    def _moved(self, *_):
        # The list was reordered by dragging: the lecture follows, one undoable change.
        if not self.lecture:
            return
        order = [self.list.item(r).data(QtCore.Qt.UserRole) for r in range(self.list.count())]
        self._replace([self.lecture.scenes[i] for i in order])

    # -- showing --------------------------------------------------------------------------------
    def go(self, index: int) -> bool:
        """Show scene ``index`` (from 0) in the window; False when there is none."""
        if not self.lecture or not 0 <= index < len(self.lecture.scenes):
            return False
        self.current = index
        self.list.blockSignals(True)
        self.list.setCurrentRow(index)
        self.list.blockSignals(False)
        self._fill_fields(index)
        scene = self.lecture.scenes[index]
        # The stage keeps showing the scene before until this one is drawn whole (a trained model takes
        # more than a turn): it is not painted meanwhile, and is painted once when all is drawn.
        self._showing = token = object()
        stage = self.window.present.stage
        if stage is not None:
            stage.setUpdatesEnabled(False)
            if not scene.trained or self.window.trained.kept_model is not None:
                # The stage first: the window (beside it on two screens) is drawn once the stage is, not
                # before it (a model still to be read, a second or so, leaves the window live meanwhile).
                self.window.drawer.hold(True)

        def shown(ok: bool) -> None:
            if self._showing is token:  # else a later scene was asked for: it will say so
                self.sceneShown.emit(index)
                self._release(token)

        try:
            show_scene(self.window, scene, on_shown=shown, wanted=lambda: self._showing is token)
        except BaseException:
            self._release(token, SETTLED_TURNS)  # nothing kept from being painted by a scene that failed
            raise
        return True

    def _release(self, token, settled: int = 0) -> None:
        # Painted again once nothing is left to draw and the layouts of the last drawing are done:
        # SETTLED_TURNS turns without drawing (a plot lays out its axes a turn after it is drawn).
        if self._showing is not token:
            return
        if settled < SETTLED_TURNS:
            stage = self.window.present.stage
            if settled == 1 and stage is not None:
                # A plot measures its axes' labels when it is first painted, and lays them out after
                # that: painted once off the screen now, so the stage's first painting is its last.
                for view in stage.findChildren(QtWidgets.QGraphicsView):
                    if view.isVisible() and view.scene() is not None:
                        paint_offscreen(view)
            QtCore.QTimer.singleShot(0, self, lambda: self._release(token, 0 if self.window.drawing() else settled + 1))
            return
        self._showing = None
        present = self.window.present
        if present.stage is not None:
            present.stage.setUpdatesEnabled(True)
            present.stage.repaint()  # now, before the window's own drawing that waited for it
        self.window.drawer.hold(present.covers_window())
        self.sceneDrawn.emit(self.current)

    def showing(self) -> bool:
        """True while a scene asked for is not yet drawn whole (the stage shows the scene before)."""
        return self._showing is not None

    def scene(self, index: int | None = None) -> Scene | None:
        """Scene ``index`` (default: the one shown last), or None."""
        index = self.current if index is None else index
        if self.lecture and 0 <= index < len(self.lecture.scenes):
            return self.lecture.scenes[index]
        return None

    def _sync(self) -> None:
        self._filling = True
        try:
            row = self.list.currentRow()
            self.list.blockSignals(True)
            self.list.clear()
            scenes = self.lecture.scenes if self.lecture else ()
            for i, scene in enumerate(scenes):
                item = QtWidgets.QListWidgetItem(f"{i + 1}. {scene.title}")
                item.setData(QtCore.Qt.UserRole, i)
                item.setToolTip(scene.caption or scene.view)
                self.list.addItem(item)
            self.list.setCurrentRow(min(max(row, 0), len(scenes) - 1) if scenes else -1)
            self.list.blockSignals(False)
            self.show_file(self.files.path, self.files.is_modified)
            for name in ("duplicate", "delete", "update"):
                self.buttons[name].setEnabled(bool(scenes))
            self.buttons["undo"].setEnabled(bool(self._undo))
            self.buttons["redo"].setEnabled(bool(self._redo))
        finally:
            self._filling = False
        self._fill_fields(self.list.currentRow())

    def _fill_fields(self, index: int) -> None:
        scene = self.scene(index) if index is not None and index >= 0 else None
        self._filling = True
        try:
            for widget in (self.scene_title, self.caption, self.notes):
                widget.setEnabled(scene is not None)
            self.scene_title.setText(scene.title if scene else "")
            self.caption.setText(scene.caption if scene else "")
            if self.notes.toPlainText() != (scene.notes if scene else ""):
                self.notes.setPlainText(scene.notes if scene else "")
        finally:
            self._filling = False


def install(window) -> ScenesPanel:
    """The Scenes panel as a dock of ``window`` (hidden until a lecture is opened or a scene added),
    and Help → Example lecture."""
    panel = ScenesPanel(window)
    dock = window.layout_room.dock("Scenes", "scenesDock", panel, QtCore.Qt.RightDockWidgetArea)
    dock.hide()
    panel.lectureChanged.connect(lambda: panel.lecture and dock.show())
    help_menu = next((a.menu() for a in window.menuBar().actions() if a.menu() and "Help" in a.text()), None)
    if help_menu is not None:
        action = help_menu.addAction("&Example lecture", panel.open_example)
        action.setObjectName("exampleLectureAction")
    file_menu = next((a.menu() for a in window.menuBar().actions() if a.menu() and "File" in a.text()), None)
    if file_menu is not None:
        files = panel.files
        before = next((a for a in file_menu.actions() if a.menu() is not None and a.menu() is not window.files.recent_menu),
                      None)  # the lecture's files after the session's, before Export
        for text, slot, name in (("Open &Lecture…", files.open_dialog, "openLectureAction"),
                                 ("Save Lectur&e", files.save, "saveLectureAction"),
                                 ("Save Lecture As…", files.save_as_dialog, "saveLectureAsAction")):
            action = QtGui.QAction(text, window)
            action.setObjectName(name)
            action.triggered.connect(lambda _=False, slot=slot: slot())
            file_menu.insertAction(before, action)
        file_menu.insertSeparator(before)
        handout = QtGui.QAction("Export lecture &hand-out…", window)
        handout.setObjectName("exportHandoutAction")
        handout.triggered.connect(panel.handout_dialog)
        quit_action = next((a for a in file_menu.actions() if a.text().replace("&", "") == "Quit"), None)
        file_menu.insertAction(quit_action, handout) if quit_action else file_menu.addAction(handout)
    window.lecture_files = panel.files
    window.present.lecture_panel = panel
    window.scenes = panel
    window.scenes_dock = dock
    # The presenter console: on the laptop while the stage is on another screen (View → Presenter console).
    console.install(window, panel)
    return panel
