"""Trained models in the window: the room wired to the window's views, controls, files and menus.

The window's rooms and views hold one :class:`~attn_studio.gui.bridge.StudioProxy`; choosing a
trained model points it at the room's :class:`~attn_studio.trained.TrainedStudio`,
choosing "Toy model (editable)" points it back at the toy studio, which was
never touched meanwhile (same state, same undo history). Controls that have no
meaning for a trained model are disabled with a tooltip saying why; the model
view, drift plot and meaning view are tabs shown only for a trained model.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from ...trained import TrainedStudio, resolve_model
from .model_worker import BUSY_WORDS, LOAD
from .room import TrainedRoom

TRAINING_WORD = "Training "  # how a lab model's training from its recipe is said, step by step
FIXED_TIP = "Fixed by the trained model ({model}); choose \"Toy model (editable)\" to change it"
# The toy controls a trained model has no use for (window attribute names).
TOY_ONLY_CONTROLS = ("target_sentence_edit", "d_model_spin", "heads_spin", "d_head_spin", "seed_spin",
                     "randomize_button", "scale_check", "causal_check", "positional_check", "projections_check",
                     "temperature_spin", "softmax_combo", "score_combo")
TOY_ONLY_TABLES = ("embeddings", "w_o", "w_1", "w_2", "v_a")
TOY_ONLY_VIEWS = ("positional_view",)
TRAINED_TABS = (
    ("model_view", "Model view", "Every layer and head of the trained model; click one to select it"),
    ("drift_plot", "Drift", "How far each layer's output moved from the trained model after your edits"),
    ("meaning_view", "Meaning in context", "One word in two sentences, layer by layer (type the second "
     "sentence and the word in the Model panel)"),
)


class TrainedWiring(QtCore.QObject):
    """Adds the trained-model room to ``window`` (whose ``studio`` is a ``StudioProxy``).

    ``room`` is the :class:`TrainedRoom`; ``toy`` the toy studio kept while a
    trained model is shown. ``open_session(session, path)`` opens a trained
    session file (its model resolved off the GUI thread).
    """

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.proxy = window.studio
        self.toy = self.proxy.target
        self.room = room = TrainedRoom(window)
        room.needs_intact, room.drawing = self.reads_intact, window.drawing
        room.message.connect(self.say_training_on_stage)  # a scene's lab model training, said on the stage
        self._toy_document = None  # the toy's file and example while a trained model is shown
        # The last model a session opened, kept while the toy is shown: a lecture going from a toy
        # scene to a trained one opens it again without reading its files.
        self.kept_model = None
        self._tips: dict = {}
        self._sentence_tips = None  # the sentence box's own tooltip and placeholder while a lab model shows its tokens
        self._variance_shown = False
        self._rows_hidden = False  # the toy-only rows of the controls are hidden (a trained model shown)
        window.controls.form.insertRow(0, room.panel)
        self.tab_indices = {}
        for attr, title, tip in TRAINED_TABS:
            widget = getattr(room, attr)
            index = window.view_tabs.addTab(widget, title)
            window.view_tabs.setTabToolTip(index, tip)
            window.view_tabs.setTabVisible(index, False)
            self.tab_indices[attr] = index
        window.view_tabs.currentChanged.connect(lambda i: room.render_shown())
        window.bridge.changed.connect(lambda fields: self.apply())  # after the window's own redraw
        room.studioChanged.connect(self._on_studio)
        room.coming.connect(window.drawer.expect)  # a new sentence laid out while it is computed
        room.draw_early = window.drawer.draw_early  # and its shown layer drawn before the pass ends
        # "Loading …" and refusals reach the status bar too (the panel's moving bar shows work going on).
        room.message.connect(self._status)
        window.document.open_trained = lambda session, path, training=None: self.open_session(
            session, recovered=path, training=training)
        window.installEventFilter(self)

    def _status(self, text: str) -> None:
        """Say ``text`` in the status bar; an empty text ends a "Loading …" or "Opening …" said there."""
        bar = self.window.statusBar()
        if text:
            bar.showMessage(text, 10000)
        elif bar.currentMessage().startswith(BUSY_WORDS):
            bar.clearMessage()

    def eventFilter(self, obj, event) -> bool:
        # The layout kept for the next run is the toy's: the √d_k plot the trained model hid comes back
        # before the window saves it on closing.
        if obj is self.window and event.type() == QtCore.QEvent.Close and self.is_trained and self._variance_shown:
            self.window.variance_dock.show()
        return False

    def add_tab(self, widget, title: str, tip: str = "") -> int:
        """Add ``widget`` (another wing's view, handed in by the window) as a tab shown only for a trained model."""
        tabs = self.window.view_tabs
        index = tabs.addTab(widget, title)
        tabs.setTabToolTip(index, tip)
        tabs.setTabVisible(index, self.is_trained)
        self.tab_indices[widget.objectName() or title] = index
        return index

    @property
    def is_trained(self) -> bool:
        return self.proxy.is_trained

    # -- switching --------------------------------------------------------------------------
    def _on_studio(self, studio) -> None:
        doc = self.window.document
        dock = self.window.variance_dock
        if studio is None:
            if self.proxy.is_trained:
                if self._variance_shown:
                    dock.show()
                self.proxy.set_target(self.toy, None)
                self.window.layout_room.make_room()  # the √d_k plot back: aside again if the shown tab wants the room
                if self._toy_document is not None:
                    path, preset_name, preset_state = self._toy_document
                    doc.path = path
                    if not doc.preset_name:  # else an example chosen just now brings the toy back: it names it
                        doc.preset_name, doc.preset_state = preset_name, preset_state
                    self._toy_document = None
        else:
            if not self.proxy.is_trained:
                self._toy_document = (doc.path, doc.preset_name, doc.preset_state)
                # The √d_k plot is about the toy's random vectors; the room goes to the trained views. Set
                # aside for the toy's Attention tab, it was shown all the same: it stays away when the rest
                # comes back, and is back with the toy.
                self._variance_shown = dock.isVisible() or self.window.layout_room.withdraw(dock)
                dock.hide()
            doc.path, doc.preset_name, doc.preset_state = getattr(studio, "_session_path", None), "", None
            self.proxy.set_target(studio, self.room)
            tables = self.window.numbers
            if tables.current_table() is tables.tables["embeddings"]:
                tables.table_tabs.setCurrentWidget(tables.tables["w_q"])  # the trained head's own numbers
        self.window.bridge.flush()

    # -- after every change: what applies to which model ------------------------------------
    def apply(self) -> None:
        """Enable the controls, tables and tabs that apply to the model shown (after every change,
        once the window has redrawn)."""
        w, trained = self.window, self.is_trained
        tip = FIXED_TIP.format(model=self.proxy.target.model.name) if trained else ""
        back_to_toy = not trained and bool(self._tips)
        # The toy's rows are hidden once when a trained model comes and shown again when it goes: looking
        # each row up in the form on every edit took a few milliseconds before a new sentence was drawn.
        rows = (trained or back_to_toy) and self._rows_hidden != trained
        self._rows_hidden = trained
        for name in TOY_ONLY_CONTROLS:
            widget = getattr(w.controls, name)
            if rows:
                _set_row_visible(w.controls.form, widget, not trained)  # a shorter panel: the model's rows fit
            if trained:
                self._tips.setdefault(name, widget.toolTip())
                widget.setEnabled(False)
                widget.setToolTip(tip)
            elif name in self._tips:
                widget.setToolTip(self._tips.pop(name))
                widget.setEnabled(True)
        self._sentence_tip(trained)
        if back_to_toy:
            w.controls.sync()  # the bound controls' own rules decide again
        elif trained:
            wanted = self.room._wanted.get("sentence")
            box = w.controls.sentence_edit
            if wanted is not None and box.text() != wanted:
                blocker = QtCore.QSignalBlocker(box)
                box.setText(wanted)  # what was typed stays while its computation runs
                del blocker
        numbers = w.numbers
        keys = list(numbers.models)
        # Set only what changes: a table enabled or a note rewritten relays out and repaints the whole dock.
        numbers.fixed = frozenset(TOY_ONLY_TABLES) if trained else frozenset()
        if trained or back_to_toy:
            for key in TOY_ONLY_TABLES:
                table = numbers.tables[key]
                if table.isEnabled() == trained:
                    table.setEnabled(not trained)
                if table.toolTip() != tip:
                    table.setToolTip(tip)
        if trained:
            s = self.proxy.state
            numbers.fixed_note = (
                f"W_Q, W_K, W_V of layer {s.layer_index + 1}, head {s.head_index + 1} of {s.model.name}: "
                "edit a cell to change the trained head (undoable; the layers above are recomputed). "
                "Embeddings X shows the vectors this layer projects; W_O is read only.")
        else:
            numbers.fixed_note = None
        if back_to_toy:
            numbers.refresh()  # the toy's own rules for its tables decide again
        if trained:
            for key in ("w_1", "w_2", "v_a"):
                if numbers.table_tabs.isTabVisible(keys.index(key)):
                    numbers.table_tabs.setTabVisible(keys.index(key), False)
            if numbers.table_note.text() != numbers.fixed_note:
                numbers.table_note.setText(numbers.fixed_note)
        tabs = w.view_tabs
        hidden = [tabs.indexOf(getattr(w, attr)) for attr in TOY_ONLY_VIEWS] if trained else list(
            self.tab_indices.values())
        if tabs.currentIndex() in hidden:
            # Qt would make the next visible tab current: after the trained views that is the training
            # lab, which hides the Model panel just used (and builds the lab). The Attention tab shows both.
            tabs.setCurrentWidget(w.heatmap_view)
        for attr in TOY_ONLY_VIEWS:
            index = tabs.indexOf(getattr(w, attr))
            if tabs.isTabVisible(index) == trained:
                tabs.setTabVisible(index, not trained)
        for attr, index in self.tab_indices.items():
            if tabs.isTabVisible(index) != trained:
                tabs.setTabVisible(index, trained)

    def _sentence_tip(self, trained: bool) -> None:
        # A lab model's sentence is a sequence of its token names: the box says which, while it is shown.
        box = self.window.controls.sentence_edit
        vocabulary = getattr(self.proxy.target.model, "vocabulary", None) if trained else None
        if vocabulary is not None:
            self._sentence_tips = self._sentence_tips or (box.toolTip(), box.placeholderText())
            example = self.proxy.target.model.example_text(0)
            box.setToolTip(f"The tokens of {self.proxy.target.model.name}: {vocabulary.describe()}, written together "
                           f"or spaced, e.g. {example}")
            box.setPlaceholderText(example)
        elif self._sentence_tips:
            box.setToolTip(self._sentence_tips[0])
            box.setPlaceholderText(self._sentence_tips[1])
            self._sentence_tips = None

    # -- sessions ------------------------------------------------------------------------------
    def open_session(self, session, path=None, on_done=None, *, recovered=None, training=None) -> int:
        """Open a trained session: its model is resolved off the GUI thread; a missing model is
        reported by name and the current session stays. ``on_done(ok)`` is called at the end.
        ``recovered``: the recovery file it came from (opened unsaved; the file is discarded once open).
        ``training``: the file's training lab settings (checked when it was read), applied once the
        model is open, so that a model that cannot be found changes nothing."""
        loaded = [m for m in (self.room.studio.model if self.room.studio is not None else None, self.kept_model)
                  if m is not None]
        name = session.model.name

        progress = self.room.worker.progress  # emitted from the worker thread: queued to the GUI thread

        def trained(done: int, total: int) -> None:  # a lab model trained from its recipe, once per machine
            progress.emit(f"{TRAINING_WORD}{name}: step {done:,} of {total:,}")

        def work():
            return TrainedStudio.from_session(session, resolve_model(session.model, loaded, progress=trained))

        def opened(studio):
            self.kept_model = studio.model
            studio._session_path = Path(path) if path is not None else None
            if recovered is not None:
                studio.mark_unsaved()
                self.window.document.discard_recovery(recovered)
            self.room.set_studio(studio)
            self.window.document.apply_lab(training)
            if path is not None:
                self.window.document.add_recent(path)
                self.window.statusBar().showMessage(f"Opened {path}", 5000)
            self.window._update_title()
            if on_done:
                on_done(True)

        def failed(message):
            self.window.show_message(message)
            if on_done:
                on_done(False)

        return self.room.worker.submit(work, opened, failed, kind=LOAD, label=f"Opening {name}…")

    def open_lab_model(self, folder) -> None:
        """Open a lab model's folder in the studio (off the GUI thread) and show its Model view."""
        room, tabs = self.room, self.window.view_tabs
        room.load_model(folder, on_loaded=lambda studio: tabs.setCurrentWidget(room.model_view))

    def reads_intact(self) -> bool:
        """True when a view in sight reads the unedited model's run beside the edited one (Drift, the Heads
        tab's readout, Compare), or the stage is up (its figures may): an edit then computes both at once."""
        window = self.window
        present = getattr(window, "present", None)
        if present is not None and present.active:
            return True
        views = (self.room.drift_plot, getattr(window, "heads_tab", None), getattr(window, "compare_view", None))
        return any(view is not None and view.isVisible() for view in views)

    def say_training_on_stage(self, text: str) -> None:
        """A scene's lab model trained from its recipe (once per machine): the room sees the steps go by."""
        present = getattr(self.window, "present", None)
        if text.startswith(TRAINING_WORD) and present is not None and present.active:
            present.stage.say_for_now(text, 3)

    def close(self) -> None:
        self.room.close()



def _set_row_visible(form, widget, visible: bool) -> None:
    """Show or hide the form row holding ``widget`` (directly or in the row's layout); a widget that
    shares its row with others (the switches) is shown or hidden alone."""
    for row in range(form.rowCount()):
        item = form.itemAt(row, form.ItemRole.FieldRole)
        if item is None:
            continue
        if item.widget() is widget:
            form.setRowVisible(row, visible)
            return
        layout = item.layout()
        if layout is not None and layout.indexOf(widget) >= 0:
            if layout.count() > 2 or isinstance(layout, QtWidgets.QVBoxLayout):
                widget.setVisible(visible)
            else:
                form.setRowVisible(row, visible)
            return
