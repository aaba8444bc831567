"""The Scenes panel: a lecture's scenes in the window, shown with a click, played with PageDown.

A scene is applied to the window (:func:`.scene_show.show_scene`): its model (the toy session, or a trained
session opened with its model off the GUI thread), its view (a tab, or the stage's view while
presenting) and what it selects. Showing a scene never changes the saved scene: live edits made
meanwhile stay until the next scene is shown, and "Update" makes them the scene's own. Every change
of the lecture (add, rename, caption, notes, reorder, duplicate, delete, update, pin) is undoable in
the panel (its own Undo / Redo: the window's Ctrl+Z stays the model's).

The title, caption and notes fields always show and edit the scene the list shows as selected: what
is typed there becomes that scene's own when the field is left, when the selection moves, and
before anything else changes the lecture. What the panel refuses (Ctrl+M on a view that cannot be a
scene, an empty title) is said in the panel itself as well as in the window's status bar.
"""

from __future__ import annotations

import dataclasses
import json

from PySide6 import QtCore, QtGui, QtWidgets

from ...scenes import TRAINED_ONLY, Lecture, LectureError, Scene
from ...session import session_from_json
from . import console, warm_up
from .lecture_files import LectureFiles
from .lecture_history import LectureHistory
from .scene_show import capture_scene, pinned_cell
from .scene_showing import SceneShowing
from .scenes_handout import LectureHandout
from .scenes_list_keys import SceneListKeys

NO_LECTURE = "No lecture: Help → Example lecture, or Add the current view (Ctrl+M)"
NO_CELL = "Click a cell in the Attention view first: Pin keeps that cell (query, key) in the selected scene"
MESSAGE_STYLE = "#scenesMessage { background: #fff4ce; color: #3a2f00; border: 1px solid #e0c060; padding: 3px; }"
# What Update keeps of the scene it replaces, unless what is shown now has its own: where it plays to,
# its precision, its training run's step count and its pinned cell.
KEPT_BY_UPDATE = ("last", "digits", "steps", "pin_query", "pin_key")


class ScenesPanel(QtWidgets.QWidget):
    """The lecture's scenes: a list (drag, or Alt+↑ / Alt+↓, to reorder; Delete), the selected scene's
    title, caption, notes and pinned cell, and Add (Ctrl+M), Duplicate, Delete, Update, Pin, Unpin,
    Undo, Redo. ``lecture`` is the lecture shown (None: none); ``current`` the index of the scene shown
    last; the fields edit the list's selected scene."""

    lectureChanged = QtCore.Signal()
    lectureOpened = QtCore.Signal()  # a lecture where there was none, or another opened: the panel is shown
    sceneShown = QtCore.Signal(int)
    sceneDrawn = QtCore.Signal(int)  # the scene shown is drawn whole (and the stage painted, when presenting)

    def __init__(self, window):
        super().__init__()
        self.setObjectName("scenesPanel")
        self.window = window
        self.lecture: Lecture | None = None
        self.current = -1
        self.files = LectureFiles(window, self)  # Open, Save, Save As, recent files, autosave, recovery
        self.history = LectureHistory()  # the panel's own Undo / Redo of the lecture
        self.showing_scene = SceneShowing(self)  # a scene shown, the stage held until it is drawn whole
        self.handout = LectureHandout(self)  # File → Export lecture hand-out…
        self._filling = False
        self._editing = -1  # the scene the fields show (the list's selected one)
        self._pin_seen = None  # the window's pinned cell when a scene was last shown or added
        self._words: dict[int, tuple[Scene, tuple]] = {}  # a toy scene's tokens, by id, for its pin's words
        layout = QtWidgets.QVBoxLayout(self)
        self.title_label = QtWidgets.QLabel(NO_LECTURE)
        self.title_label.setObjectName("lectureTitle")
        self.title_label.setWordWrap(True)
        layout.addWidget(self.title_label)
        self.message = QtWidgets.QLabel()
        self.message.setObjectName("scenesMessage")
        self.message.setWordWrap(True)
        self.message.setStyleSheet(MESSAGE_STYLE)
        self.message.setTextInteractionFlags(QtCore.Qt.TextSelectableByMouse)
        self.message.hide()
        layout.addWidget(self.message)
        self.list = QtWidgets.QListWidget()
        self.list.setObjectName("scenesList")
        self.list.setDragDropMode(QtWidgets.QAbstractItemView.InternalMove)
        self.list.setToolTip("Click a scene to show it; drag it, or Alt+↑ / Alt+↓, to move it; Delete deletes it")
        self.list.model().rowsMoved.connect(self._moved)
        self.list.itemActivated.connect(lambda item: self.go(self.list.row(item)))
        self.list.itemClicked.connect(lambda item: self.go(self.list.row(item)))
        self.list.currentRowChanged.connect(self._row_changed)
        self.list.itemSelectionChanged.connect(self._keep_selected)
        self.list_keys = SceneListKeys(self)  # Alt+↑ / Alt+↓ and Delete, before the window's shortcuts
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
        self.pin_label = QtWidgets.QLabel()
        self.pin_label.setObjectName("scenePin")
        self.pin_label.setMinimumWidth(40)  # a long pair of words is cut (whole in its tooltip), never widens the panel
        form.addRow("Title", self.scene_title)
        form.addRow("Caption", self.caption)
        form.addRow("Notes", self.notes)
        form.addRow("Pinned", self.pin_label)
        layout.addLayout(form)
        self.scene_title.editingFinished.connect(self.commit_edits)
        self.caption.editingFinished.connect(self.commit_edits)
        self.notes.textChanged.connect(self._notes_typed)
        self._notes_timer = QtCore.QTimer(self, singleShot=True, interval=600)
        self._notes_timer.timeout.connect(self.commit_edits)
        buttons = QtWidgets.QGridLayout()
        self.buttons = {}
        for i, (name, text, slot, tip) in enumerate((
                ("add", "Add", self.add_current, "Add what is shown now as a scene (Ctrl+M)"),
                ("duplicate", "Duplicate", self.duplicate, "A copy of the selected scene after it"),
                ("delete", "Delete", self.delete, "Delete the selected scene (Delete)"),
                ("update", "Update", self.update_current,
                 "Make what is shown now the selected scene's own (its title, caption, notes and pinned cell kept)"),
                ("pin", "Pin", self.pin, "Pin the cell you clicked in the Attention view (query, key) to the "
                                         "selected scene: the stage keeps it in view and outlines it"),
                ("unpin", "Unpin", self.unpin, "The selected scene pins no cell"),
                ("undo", "Undo", self.undo, "Undo the last change of the lecture"),
                ("redo", "Redo", self.redo, "Redo it"),
                ("handout", "Hand-out…", self.handout_dialog, "Each scene's figure: one PDF, or a file a scene"),
                ("open", "Open…", lambda: self.files.open_dialog(), "Open a lecture file (.attn-lecture.json)"),
                ("save", "Save", lambda: self.files.save(), "Save the lecture to its file (.attn-lecture.json)"),
                ("save_as", "Save As…", lambda: self.files.save_as_dialog(), "Save the lecture to a new file"))):
            button = QtWidgets.QPushButton(text)
            button.setObjectName(f"scenes_{name}")
            button.setToolTip(tip)
            button.clicked.connect(lambda _=False, slot=slot: slot())
            buttons.addWidget(button, i // 3, i % 3)
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
            self.history.forget()
        elif record:
            self.history.record(self.lecture)
        opened = lecture is not None and (fresh or self.lecture is None)
        self.lecture = lecture
        self.current = min(self.current, len(lecture.scenes) - 1) if lecture is not None else -1
        self._unsay()  # a refusal said before is old news once the lecture changes
        self._sync()
        self._build_ahead()
        self.lectureChanged.emit()
        if opened:
            self.lectureOpened.emit()

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

    def _replace(self, scenes, title: str | None = None) -> bool:
        # The lecture with ``scenes``, one undoable change; False (said, nothing changed) when refused.
        lecture = self.lecture
        try:
            new = Lecture(title if title is not None else (lecture.title if lecture else "My lecture"), tuple(scenes))
        except LectureError as exc:
            self._sync()
            self.say(str(exc))
            return False
        self.set_lecture(new)
        return True

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
        return self.handout.export(path, fmt, ask_cancel, paper=paper, notes=notes, on_message=on_message)

    def handout_dialog(self) -> None:
        """File → Export lecture hand-out…: PDF, PNG or SVG pages on A4 or Letter, the notes or not;
        then where, then each scene drawn with progress and Cancel (a cancelled hand-out writes nothing)."""
        self.handout.dialog()

    def undo(self) -> None:
        """Undo the last change of the lecture (typing not yet made the scene's own is that change)."""
        self.commit_edits()
        if self.history.undo:
            self.set_lecture(self.history.back(self.lecture), record=False)

    def redo(self) -> None:
        """Redo the last undone change of the lecture."""
        if self.history.redo and not self.commit_edits():
            self.set_lecture(self.history.forward(self.lecture), record=False)

    # -- editing --------------------------------------------------------------------------------
    def _selected(self) -> int:
        return self.list.currentRow()

    def say(self, text: str, reason: str | None = None) -> None:
        """Say ``text`` in the panel itself, and ``reason`` (default: the same) in the window's message
        and status bar, where the stage reads it too: why something was refused."""
        self.message.setText(text)
        self.message.show()
        self.window.show_message(text if reason is None else reason)

    def _unsay(self) -> None:
        self.message.clear()
        self.message.hide()

    def add_current(self) -> bool:
        """Add what the window shows now as a scene, after the selected one (Ctrl+M), with the cell
        clicked since the last scene was shown or added as its pinned cell; False, with a message in
        the panel and the window, when it cannot be a scene."""
        self.commit_edits()
        scenes = list(self.lecture.scenes) if self.lecture else []
        at = self._selected() + 1 if scenes and self._selected() >= 0 else len(scenes)
        try:
            scene = capture_scene(self.window, f"Scene {len(scenes) + 1}", pin=self._new_pin())
        except LectureError as exc:
            reason = self._why_not(exc)
            self.say(f"Not added: {reason}", reason)
            return False
        scenes.insert(at, scene)
        if not self._replace(scenes):
            return False
        self.list.setCurrentRow(at)
        self.current = at
        self._pin_seen = self.window.heatmap_view.pinned
        return True

    def duplicate(self) -> None:
        """A copy of the selected scene, after it."""
        self.commit_edits()
        i = self._selected()
        if self.lecture and 0 <= i < len(self.lecture.scenes):
            scenes = list(self.lecture.scenes)
            copy = dataclasses.replace(scenes[i], title=(scenes[i].title + " (copy)")[:200])
            scenes.insert(i + 1, copy)
            if self._replace(scenes):
                self.list.setCurrentRow(i + 1)

    def delete(self) -> None:
        """Delete the selected scene (undoable, as every change of the lecture)."""
        self.commit_edits()
        i = self._selected()
        if self.lecture and 0 <= i < len(self.lecture.scenes):
            scenes = list(self.lecture.scenes)
            del scenes[i]
            if self.current > i:
                self.current -= 1  # the scene shown last stays the one shown
            if self._replace(scenes):
                self.list.setCurrentRow(min(i, len(scenes) - 1))

    def move(self, step: int) -> bool:
        """Move the selected scene ``step`` places (-1: up, +1: down), one undoable change, as a drag
        does (Alt+↑ / Alt+↓ in the list); False when it is already first or last."""
        self.commit_edits()
        i = self._selected()
        j = i + step
        if not self.lecture or not 0 <= i < len(self.lecture.scenes) or not 0 <= j < len(self.lecture.scenes):
            return False
        scenes = list(self.lecture.scenes)
        scenes[i], scenes[j] = scenes[j], scenes[i]
        if self.current in (i, j):
            self.current = j if self.current == i else i  # the scene shown last stays the one shown
        if not self._replace(scenes):
            return False
        self.list.setCurrentRow(j)
        return True

    def update_current(self) -> None:
        """Make what the window shows now the selected scene's own. Its title, caption and notes are
        kept, and so are where it plays to, its precision, its training run's step count and its
        pinned cell, unless a cell was clicked since it was shown (then that cell is its pin)."""
        self.commit_edits()
        i = self._selected()
        if self.lecture and 0 <= i < len(self.lecture.scenes):
            old = self.lecture.scenes[i]
            try:
                shown = capture_scene(self.window, old.title, pin=self._new_pin() or old.pin)
            except LectureError as exc:
                self.say(f"Not updated: {self._why_not(exc)}")
                return
            selection = {key: old.selection[key] for key in KEPT_BY_UPDATE if key in old.selection}
            selection.update(shown.selection)
            try:
                scene = dataclasses.replace(shown, caption=old.caption, notes=old.notes, selection=selection)
            except LectureError as exc:
                self.say(f"Not updated: {exc}")
                return
            scenes = list(self.lecture.scenes)
            scenes[i] = scene
            if self._replace(scenes):
                self.list.setCurrentRow(i)
                self._pin_seen = self.window.heatmap_view.pinned

    def _why_not(self, exc: LectureError) -> str:
        # What is shown cannot be a scene: said in the lecturer's words where the file's words would
        # puzzle (a tab of trained models while the toy model is open).
        present = self.window.present
        view = present.view if present.active else present.current_view()
        if view in TRAINED_ONLY and not self.window.studio.is_trained:
            return (f"the {view} tab shows a trained model, and the toy model is open: choose a trained "
                    "model in the Model panel first")
        return str(exc)

    def _new_pin(self) -> tuple[int, int] | None:
        # The cell clicked in the window since the last scene was shown or added (a click made for
        # another scene is not this one's pin).
        if self.window.heatmap_view.pinned == self._pin_seen:
            return None
        return pinned_cell(self.window)

    def pin(self) -> bool:
        """Pin the cell clicked in the window's Attention view (query, key) to the selected scene
        (undoable); False, with a message, when no cell is clicked or the scene has no such cell."""
        self.commit_edits()
        i = self._selected()
        if not self.lecture or not 0 <= i < len(self.lecture.scenes):
            return False
        cell = pinned_cell(self.window)
        if cell is None:
            self.say(NO_CELL)
            return False
        scene = self.lecture.scenes[i]
        tokens = self._tokens(i)
        if tokens is not None and not (cell[0] < len(tokens[0]) and cell[1] < len(tokens[1])):
            self.say(f"Not pinned: scene {i + 1} has {len(tokens[0])} queries and {len(tokens[1])} keys; the "
                     f"cell clicked is query {cell[0] + 1}, key {cell[1] + 1}")
            return False
        selection = dict(scene.selection, pin_query=cell[0], pin_key=cell[1])
        scenes = list(self.lecture.scenes)
        scenes[i] = dataclasses.replace(scene, selection=selection)
        if not self._replace(scenes):
            return False
        self.list.setCurrentRow(i)
        self._pin_seen = self.window.heatmap_view.pinned
        return True

    def unpin(self) -> bool:
        """The selected scene pins no cell any more (undoable); False when it pinned none."""
        self.commit_edits()
        i = self._selected()
        if not self.lecture or not 0 <= i < len(self.lecture.scenes) or self.lecture.scenes[i].pin is None:
            return False
        scene = self.lecture.scenes[i]
        selection = {key: value for key, value in scene.selection.items() if key not in ("pin_query", "pin_key")}
        scenes = list(self.lecture.scenes)
        scenes[i] = dataclasses.replace(scene, selection=selection)
        if not self._replace(scenes):
            return False
        self.list.setCurrentRow(i)
        return True

    def commit_edits(self) -> bool:
        """Make what is typed in the title, caption and notes fields the selected scene's own, as one
        undoable change (a refused value, such as an empty title, is said and the old one shown again);
        True when the lecture changed."""
        self._notes_timer.stop()
        i = self._editing
        if self._filling or not self.lecture or not 0 <= i < len(self.lecture.scenes):
            return False
        scene = changed = self.lecture.scenes[i]
        refused = []
        for name, value in (("title", self.scene_title.text()), ("caption", self.caption.text()),
                            ("notes", self.notes.toPlainText())):
            if getattr(changed, name) != value:
                try:
                    changed = dataclasses.replace(changed, **{name: value})
                except LectureError as exc:  # an empty title, a caption of two lines: refused, the old kept
                    refused.append(str(exc))
        done = False
        if changed is not scene:
            scenes = list(self.lecture.scenes)
            scenes[i] = changed
            done = self._replace(scenes)
        if refused:
            self.say(f"Scene {i + 1}: {'; '.join(refused)}")
            self._fill_fields(self.list.currentRow())  # the refused field shows its old value again
        return done

    def _notes_typed(self) -> None:
        if not self._filling:
            self._notes_timer.start()

    def _moved(self, *_):
        # The list was reordered by dragging: the lecture follows, one undoable change.
        if not self.lecture:
            return
        order = [self.list.item(r).data(QtCore.Qt.UserRole) for r in range(self.list.count())]
        if self.current in order:
            self.current = order.index(self.current)  # the scene shown last stays the one shown
        self._replace([self.lecture.scenes[i] for i in order])

    def _row_changed(self, row: int) -> None:
        # What was typed for the scene selected before is its own, then the fields show the new one.
        if not self._filling:
            self.commit_edits()
        self._fill_fields(self.list.currentRow())

    def _keep_selected(self) -> None:
        # A Ctrl+click can clear the selection while the current row stays: the list would show no
        # scene selected while the fields edit one. The current row is selected again.
        row = self.list.currentRow()
        if row >= 0 and not self.list.selectedItems():
            self.list.item(row).setSelected(True)

    # -- showing --------------------------------------------------------------------------------
    def go(self, index: int) -> bool:
        """Show scene ``index`` (from 0) in the window; False when there is none."""
        if not self.lecture or not 0 <= index < len(self.lecture.scenes):
            return False
        self.commit_edits()  # what was typed for the scene selected before is its own
        self._unsay()
        self.current = index
        self._pin_seen = self.window.heatmap_view.pinned  # a cell clicked from now on is for this scene
        self.list.blockSignals(True)
        self.list.setCurrentRow(index)
        self.list.blockSignals(False)
        self._fill_fields(index)
        self.showing_scene.start(index, self.lecture.scenes[index])
        return True

    def showing(self) -> bool:
        """True while a scene asked for is not yet drawn whole (the stage shows the scene before)."""
        return self.showing_scene.showing()

    @property
    def _undo(self) -> list:
        # The lectures Undo goes back to (the history's own list, so clearing it clears the history).
        return self.history.undo

    @property
    def _redo(self) -> list:
        return self.history.redo

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
            scenes = self.lecture.scenes if self.lecture else ()
            if self.list.count() != len(scenes):
                # Items made again only when scenes come or go: an edit, a move or a drag keeps them
                # (the list is never emptied while it tells of a change of its own selection).
                self.list.clear()
                for _ in scenes:
                    self.list.addItem(QtWidgets.QListWidgetItem())
            for i, scene in enumerate(scenes):
                item = self.list.item(i)
                item.setText(f"{i + 1}. {scene.title}")
                item.setData(QtCore.Qt.UserRole, i)
                tip = scene.caption or scene.view
                pin = self._pin_words(i)
                item.setToolTip(f"{tip}\npinned: {pin}" if pin else tip)
            self.list.setCurrentRow(min(max(row, 0), len(scenes) - 1) if scenes else -1)
            self.list.blockSignals(False)
            self.show_file(self.files.path, self.files.is_modified)
            for name in ("duplicate", "delete", "update", "pin"):
                self.buttons[name].setEnabled(bool(scenes))
            self.buttons["undo"].setEnabled(bool(self.history.undo))
            self.buttons["redo"].setEnabled(bool(self.history.redo))
            alive = {id(scene) for scene in scenes}
            self._words = {key: value for key, value in self._words.items() if key in alive}
        finally:
            self._filling = False
        self._fill_fields(self.list.currentRow())

    def _fill_fields(self, index: int) -> None:
        scene = self.scene(index) if index is not None and index >= 0 else None
        self._editing = index if scene is not None else -1
        self._filling = True
        try:
            for widget in (self.scene_title, self.caption, self.notes):
                widget.setEnabled(scene is not None)
            self.scene_title.setText(scene.title if scene else "")
            self.caption.setText(scene.caption if scene else "")
            if self.notes.toPlainText() != (scene.notes if scene else ""):
                self.notes.setPlainText(scene.notes if scene else "")
            pin = self._pin_words(index) if scene is not None else None
            self.pin_label.setText(pin or "none")
            self.pin_label.setToolTip(pin or NO_CELL)
            self.buttons["unpin"].setEnabled(pin is not None)
        finally:
            self._filling = False

    def _tokens(self, index: int) -> tuple[list, list] | None:
        """Scene ``index``'s (query tokens, key tokens), when known without loading a model: a toy
        scene's, or a trained scene's while the window shows its sentence; else None."""
        scene = self.scene(index)
        if scene is None:
            return None
        if not scene.trained:
            kept = self._words.get(id(scene))
            if kept is None:
                state = session_from_json(json.dumps(scene.session))
                kept = self._words[id(scene)] = (scene, (list(state.query_tokens), list(state.key_tokens)))
            return kept[1]
        studio = self.window.studio
        if studio.is_trained and index == self.current and studio.state.sentence == scene.session.get("sentence"):
            return list(studio.state.query_tokens), list(studio.state.key_tokens)
        return None

    def _pin_words(self, index: int) -> str | None:
        """Scene ``index``'s pinned cell in words (“it” → “animal”), or None when it pins none."""
        scene = self.scene(index)
        if scene is None or scene.pin is None:
            return None
        query, key = scene.pin
        tokens = self._tokens(index)
        if tokens is not None and query < len(tokens[0]) and key < len(tokens[1]):
            return f"“{tokens[0][query]}” → “{tokens[1][key]}”"
        return f"query {query + 1} → key {key + 1}"


def install(window) -> ScenesPanel:
    """The Scenes panel as a dock of ``window`` (hidden until a lecture is opened or a scene added;
    View → Scenes shows and hides it), and Help → Example lecture."""
    panel = ScenesPanel(window)
    dock = window.layout_room.dock("Scenes", "scenesDock", panel, QtCore.Qt.RightDockWidgetArea, scroll=True)
    dock.hide()
    # Shown when a lecture opens or its first scene is added; hidden by View → Scenes, it stays hidden
    # while the lecture is edited (a scene added on the stage does not bring it back).
    panel.lectureOpened.connect(dock.show)
    # View → Scenes shows and hides the panel (beside the other panels' entries, before Reset layout).
    toggle = dock.toggleViewAction()
    toggle.setObjectName("scenesDockAction")
    toggle.setText("&Scenes")
    toggle.setToolTip("Show or hide the Scenes panel: the lecture's scenes")
    view_menu = next((a.menu() for a in window.menuBar().actions() if a.menu() and "View" in a.text()), None)
    if view_menu is not None:
        reset = next((a for a in view_menu.actions() if a.objectName() == "resetLayoutAction"), None)
        view_menu.insertAction(reset, toggle) if reset is not None else view_menu.addAction(toggle)
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
    warm_up.install(window, panel)  # the training scenes' runs, trained ahead while presenting
    return panel
