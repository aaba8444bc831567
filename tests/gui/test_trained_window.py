"""The main window on all-MiniLM-L6-v2: choosing the model, the views drawing its heads,
editing a head, undo, back to the toy model, sessions. Skipped where the model is not installed."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtWidgets

from attn_studio.gui.views.heatmap_drawing import NEXT_TURN
from attn_studio.pretrained import default_model_zip
from attn_studio.trained import SELECTION_FIELDS
from gui_helpers import settle, wait_idle

pytestmark = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")

ANIMAL = "The animal didn't cross the street because it was too tired."


def choose(window, text: str) -> None:
    combo = window.findChild(QtWidgets.QComboBox, "modelCombo")
    index = combo.findText(text, flags=__import__("PySide6").QtCore.Qt.MatchStartsWith)
    assert index >= 0, [combo.itemText(i) for i in range(combo.count())]
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


@pytest.fixture
def fresh_trained(window, qtbot, minilm):
    """A new window showing MiniLM on the "animal" sentence, for a test that closes it or edits its toy model."""
    from attn_studio.trained import TrainedStudio

    window.trained.room.set_studio(TrainedStudio(minilm))
    wait_idle(qtbot, window)
    yield window
    window.trained.room.use_toy()


@pytest.fixture
def toy_window(shared_window, qtbot):
    """The module's window on its toy model, nothing loading, no message: for a test that tries to load
    a model that is not there (and so changes nothing). Checked."""
    w = shared_window
    wait_idle(qtbot, w)
    panel = w.trained.room.panel
    panel.show_message("")
    w.clear_message()
    settle(w)
    assert not w.studio.is_trained and not w.studio.can_undo and not w.studio.can_redo
    assert w.findChild(QtWidgets.QComboBox, "modelCombo").currentText().startswith("Toy")
    assert not panel.status.isVisibleTo(w) and not w.message_label.isVisible()
    assert panel.choose_folder == panel._choose_folder_dialog  # the dialog, not a test's stand-in
    yield w
    wait_idle(qtbot, w)


@pytest.fixture(scope="module")
def _loaded(_module_window, minilm):
    """The module's window as it is right after MiniLM was loaded into it: what each test starts from."""
    from attn_studio.trained import TrainedStudio

    w, _ = _module_window
    room = w.trained.room
    room.set_studio(TrainedStudio(minilm))
    while room.worker.is_busy():
        QtWidgets.QApplication.processEvents()
    settle(w)
    w.bridge.flush()
    settle(w)
    doc = w.document
    start = {
        "studio": room.studio, "state": room.studio.state, "toy": w.trained.toy, "toy_state": w.trained.toy.state,
        "tab": w.view_tabs.currentIndex(), "table": w.numbers.table_tabs.currentWidget(),
        "lab": w.training.settings(), "recent": list(doc.recent_files), "title": w.windowTitle(),
        "message": w.message_label.text(), "status": w.statusBar().currentMessage(),
        "autosave": w.files.autosave_timer.isActive(),
    }
    assert start["state"].sentence == ANIMAL and not start["studio"].can_undo and not start["studio"].is_modified
    # Between tests the window shows its toy model, as shared_window expects when it resets it.
    room.use_toy()
    settle(w)
    yield w, start


@pytest.fixture
def trained(shared_window, _loaded, qtbot, minilm):
    """The module's window showing MiniLM on the "animal" sentence, put back as it was right after loading:
    the studio unedited (no undo or redo), its first layer, head and query, no second sentence; the toy
    model behind it untouched; the first tab and table; no file, nothing modified, nothing to recover;
    the lab's settings and recent files as they were."""
    from attn_studio.trained import TrainedStudio

    w, start = _loaded
    room, doc = w.trained.room, w.document
    assert w is shared_window and not w.studio.is_trained  # the last test's teardown went back to the toy model
    # A test that edits the toy model needs a window of its own (fresh_trained): undo leaves a redo here.
    toy = w.trained.toy
    assert toy is start["toy"] and toy.state is start["toy_state"] and not toy.can_undo and not toy.can_redo
    w.files.autosave_timer.stop()  # a test's edit may have started it; loading starts it again
    studio = start["studio"]
    if studio.can_undo or studio.can_redo or studio.state.changed_fields(start["state"]) - SELECTION_FIELDS:
        studio = start["studio"] = TrainedStudio(minilm)  # edited: a new one, as loading makes it
        start["state"] = studio.state
    elif studio.state != start["state"]:
        s = start["state"]
        studio.select(layer=s.layer_index, head=s.head_index, query=s.query_index)  # not an edit: no history
    studio.mark_saved()
    room.set_studio(studio)
    wait_idle(qtbot, w)
    w.view_tabs.setCurrentIndex(start["tab"])
    w.numbers.table_tabs.setCurrentWidget(start["table"])
    w.training.apply_settings(start["lab"])
    doc.recent_files = list(start["recent"])
    doc.recovery.clear()  # nothing to recover: what a clean window has
    w.show_message(start["message"])
    w.statusBar().showMessage(start["status"]) if start["status"] else w.statusBar().clearMessage()
    settle(w)
    # The reset worked: the window is as loading MiniLM left it.
    s = w.studio.state
    assert w.studio.target is studio and s == start["state"] and s.sentence == ANIMAL and not s.second_sentence
    assert s.edits.is_trained and not studio.can_undo and not studio.can_redo and not w.undo_action.isEnabled()
    assert w.findChild(QtWidgets.QLineEdit, "sentenceEdit").text() == ANIMAL
    assert w.current_path is None and not w.isWindowModified() and w.windowTitle() == start["title"]
    assert not doc.recovery.path.exists() and w.training.settings() == start["lab"]
    assert w.view_tabs.currentIndex() == start["tab"] and w.numbers.table_tabs.currentWidget() is start["table"]
    assert w.message_label.text() == start["message"] and w.statusBar().currentMessage() == start["status"]
    assert not w.variance_dock.isVisibleTo(w) and w.files.autosave_timer.isActive() == start["autosave"]
    yield w
    wait_idle(qtbot, w)
    room.use_toy()  # shared_window puts the toy model back before the next test
    settle(w)


def test_choosing_minilm_in_the_combo_loads_it_off_the_gui_thread(window, qtbot):
    toy_sentence = window.studio.state.sentence
    choose(window, "all-MiniLM")
    assert window.studio.state.sentence == toy_sentence  # nothing changed while it loads
    assert window.findChild(QtWidgets.QProgressBar, "modelBusy").isVisibleTo(window)  # and it says it is working
    assert window.statusBar().currentMessage().startswith("Loading ")
    qtbot.waitUntil(lambda: window.studio.is_trained, timeout=60000)
    wait_idle(qtbot, window)
    # Once loaded, nothing says it is still loading: the status bar names what was loaded.
    assert not window.statusBar().currentMessage().startswith("Loading")
    assert "all-MiniLM-L6-v2" in window.statusBar().currentMessage()
    assert not window.findChild(QtWidgets.QProgressBar, "modelBusy").isVisibleTo(window)
    s = window.studio.state
    assert s.model.name == "all-MiniLM-L6-v2" and s.tokens[0] == "[CLS]" and s.tokens[-1] == "[SEP]"
    # The toy-only controls are disabled and say why.
    spin = window.findChild(QtWidgets.QSpinBox, "dModelSpin")
    assert not spin.isEnabled() and "trained model" in spin.toolTip()
    assert not spin.isVisibleTo(window) and not window.variance_dock.isVisibleTo(window)
    assert window.findChild(QtWidgets.QSpinBox, "layerSpin").isEnabled()
    assert window.numbers.table_tabs.currentWidget() is window.numbers.tables["w_q"]


def test_the_heatmaps_show_the_selected_layer_and_head_of_the_model(trained, qtbot, minilm):
    w = trained
    w.findChild(QtWidgets.QSpinBox, "layerSpin").setValue(4)
    head_combo = w.findChild(QtWidgets.QComboBox, "headCombo")
    assert head_combo.count() == 12 and head_combo.isEnabled()
    head_combo.setCurrentIndex(6)
    head_combo.activated.emit(6)
    wait_idle(qtbot, w)
    s = w.studio.state
    assert (s.layer_index, s.head_index) == (3, 6)
    expected = minilm.run(ANIMAL).attentions[3, 6]
    np.testing.assert_allclose(w.studio.result.weights[6], expected, atol=1e-12)
    # The weights heatmap on screen holds those numbers, its axes the word pieces.
    view = w.heatmap_view
    w.view_tabs.setCurrentWidget(view)
    settle(w)
    (values,), drawn = view.stages["weights"]._last
    np.testing.assert_allclose(values, expected, atol=1e-12)
    assert drawn["col_labels"][0] == "[CLS]" and "animal" in drawn["col_labels"]
    # The W_Q table shows that head's trained weights.
    wq = w.numbers.models["w_q"].array()
    np.testing.assert_array_equal(wq, minilm.head_weights(3, 6)["q"])


def test_typing_runs_the_tokenizer_and_toy_views_follow(trained, qtbot):
    w = trained
    box = w.findChild(QtWidgets.QLineEdit, "sentenceEdit")
    box.setText("Tokenization works")
    box.textEdited.emit("Tokenization works")
    wait_idle(qtbot, w)
    tokens = w.studio.state.tokens
    assert tokens[0] == "[CLS]" and "##ization" in tokens
    query = w.findChild(QtWidgets.QComboBox, "queryCombo")
    assert [query.itemText(i).split(": ", 1)[1] for i in range(query.count())] == list(tokens)


def test_trained_tabs_show_only_for_a_trained_model(trained, qtbot):
    w = trained
    tabs = w.view_tabs
    titles = lambda: [tabs.tabText(i) for i in range(tabs.count()) if tabs.isTabVisible(i)]  # noqa: E731
    assert {"Model view", "Drift", "Meaning in context"} <= set(titles())
    # Compare shows the trained model against its edits; Positions draws a table the model does not use.
    assert "Compare" in titles() and "Positions" not in titles()
    w.trained.room.use_toy()
    settle(w)
    assert "Model view" not in titles() and "Compare" in titles() and "Positions" in titles()


def test_editing_a_weight_cell_is_undoable_and_recomputes(trained, qtbot):
    w = trained
    model = w.numbers.models["w_q"]
    before = w.studio.result.weights.copy()
    assert model.setData(model.index(0, 0), "3.5")
    wait_idle(qtbot, w)
    assert w.numbers.models["w_q"].array()[0, 0] == 3.5
    assert not np.allclose(w.studio.result.weights, before)
    assert w.studio.drift()[-1] > 0
    w.undo_action.trigger()
    wait_idle(qtbot, w)
    np.testing.assert_allclose(w.studio.result.weights, before, atol=1e-12)
    assert w.studio.state.is_trained


def test_a_bad_cell_is_refused_and_kept(trained, qtbot):
    w = trained
    model = w.numbers.models["w_q"]
    old = model.array()[0, 0]
    assert not model.setData(model.index(0, 0), "banana")
    assert w.numbers.models["w_q"].array()[0, 0] == old


def test_silencing_moves_the_drift_and_undo_brings_it_back(trained, qtbot):
    w = trained
    w.trained.room.set_head_scale(1, 3, 0.0)
    wait_idle(qtbot, w)
    assert w.studio.drift()[2] > 1e-3 and abs(w.studio.drift()[1]) < 1e-12
    assert w.undo_action.isEnabled()
    w.undo_action.trigger()
    wait_idle(qtbot, w)
    assert np.abs(w.studio.drift()).max() < 1e-12


def test_back_to_toy_brings_the_toy_session_back_exactly(window, qtbot, minilm):
    from attn_studio.trained import TrainedStudio

    spin = window.findChild(QtWidgets.QSpinBox, "dModelSpin")
    spin.setValue(spin.value() + 2)
    settle(window)
    toy_state = window.studio.state
    assert window.studio.can_undo
    layer = window.findChild(QtWidgets.QSpinBox, "layerSpin")
    assert not layer.isVisibleTo(window)  # the trained model's rows stay out of the toy model's way
    window.trained.room.set_studio(TrainedStudio(minilm))
    wait_idle(qtbot, window)
    assert window.studio.is_trained and layer.isVisibleTo(window)
    choose(window, "Toy model")
    settle(window)
    assert not window.studio.is_trained and not layer.isVisibleTo(window)
    assert window.studio.state is toy_state and window.studio.can_undo
    assert spin.isEnabled() and spin.isVisibleTo(window) and spin.value() == toy_state.d_model
    assert window.variance_dock.isVisibleTo(window)
    window.undo_action.trigger()
    settle(window)
    assert window.studio.state.d_model == toy_state.d_model - 2


def test_a_bad_model_folder_keeps_the_current_model(toy_window, qtbot, tmp_path, monkeypatch):
    window = toy_window
    panel = window.trained.room.panel
    monkeypatch.setattr(panel, "choose_folder", lambda: str(tmp_path))
    choose(window, "Open model folder")
    wait_idle(qtbot, window)
    assert not window.studio.is_trained
    assert "is empty" in panel.status.text() and "config.json" in panel.status.text()
    assert window.findChild(QtWidgets.QComboBox, "modelCombo").currentText().startswith("Toy")


def test_save_writes_a_version_4_session_and_open_brings_it_back(trained, qtbot, tmp_path):
    import json

    w = trained
    w.trained.room.set_head_scale(2, 5, 0.0)
    w.trained.room.select(layer=3, head=1)
    w.training.apply_settings({"panel": "induction", "induction": {"seed": 9}})  # the lab travels along
    wait_idle(qtbot, w)
    assert w.isWindowModified()
    path = tmp_path / "animal.attn.json"
    assert w.save_to(path)
    data = json.loads(path.read_text())
    assert data["schema_version"] == 4 and data["model"]["name"] == "all-MiniLM-L6-v2"
    assert data["training"]["panel"] == "induction" and data["training"]["induction"]["seed"] == 9
    w.training.apply_settings({"panel": "scaling", "induction": {"seed": 1}})
    assert len(data["model"]["sha256"]) == 64 and path.stat().st_size < 20000  # a reference, never the weights
    assert not w.isWindowModified()
    # Back to the toy model, then open the file: the trained model and its edit come back.
    w.trained.room.use_toy()
    settle(w)
    assert w.current_path != path
    assert w.open_file(path)
    qtbot.waitUntil(lambda: w.studio.is_trained, timeout=60000)
    wait_idle(qtbot, w)
    s = w.studio.state
    assert s.edits.head_scale == {(2, 5): 0.0} and (s.layer_index, s.head_index) == (3, 1)
    assert w.current_path == path and not w.isWindowModified()
    lab = w.training.settings()
    assert lab["panel"] == "induction" and lab["induction"]["seed"] == 9


def test_a_session_whose_model_is_missing_says_so_and_changes_nothing(toy_window, qtbot, tmp_path):
    import json

    from attn_studio.schema import ModelRef
    from attn_studio.trained import TrainedState

    ref = ModelRef("bert-for-nobody", "/nonexistent/bert-for-nobody", "0" * 64)
    state = TrainedState(ref, "bert", 2, 2, 8, 4, 16, tokens=("[CLS]",), sentence="hi")
    path = tmp_path / "missing.attn.json"
    path.write_text(json.dumps(state.to_dict()))
    window = toy_window
    before = window.studio.state
    window.open_file(path)
    wait_idle(qtbot, window)
    assert not window.studio.is_trained and window.studio.state is before
    text = window.message_label.text()
    assert "bert-for-nobody" in text and "not on this machine" in text


def test_autosave_and_recovery_keep_a_trained_session(trained, qtbot):
    w = trained
    w.trained.room.set_head_scale(0, 0, 0.5)
    wait_idle(qtbot, w)
    assert w.document.autosave() is None
    recovered = w.document.recovery.path
    assert '"kind": "trained"' in recovered.read_text()
    copy = recovered.with_name("copy.attn.json")
    copy.write_bytes(recovered.read_bytes())
    w.trained.room.use_toy()
    settle(w)
    assert w.document.restore(copy) is None
    qtbot.waitUntil(lambda: w.studio.is_trained, timeout=60000)
    wait_idle(qtbot, w)
    assert w.studio.state.edits.head_scale == {(0, 0): 0.5} and w.studio.is_modified
    assert not copy.exists()


def test_attn_studio_file_opens_a_trained_session(qtbot, tmp_path, monkeypatch, minilm):
    from attn_studio import cli
    from attn_studio.gui import MainWindow
    from attn_studio.session import write_session
    from attn_studio.trained import TrainedStudio

    studio = TrainedStudio(minilm)
    studio.set_head_scale(1, 1, 0.0)
    path = tmp_path / "silenced.attn.json"
    write_session(path, studio.state)
    windows, seen = [], []
    monkeypatch.setattr(MainWindow, "show", lambda self: windows.append(self))

    def run_app(self=None):
        w = windows[0]
        qtbot.waitUntil(lambda: w.studio.is_trained, timeout=60000)
        seen.append((dict(w.studio.state.edits.head_scale), w.current_path))
        w.trained.close()
        return 0

    monkeypatch.setattr(QtWidgets.QApplication, "exec", run_app)
    assert cli.main([str(path)]) == 0
    assert seen == [({(1, 1): 0.0}, path)]


def test_choosing_an_example_brings_the_toy_model_back_on_it(fresh_trained, qtbot):
    w = fresh_trained
    combo = w.findChild(QtWidgets.QComboBox, "presetCombo")
    index = combo.findData("animal")
    combo.setCurrentIndex(index)
    combo.activated.emit(index)
    settle(w)
    assert not w.studio.is_trained
    from attn_studio.session import load_preset

    assert w.studio.state.to_dict() == load_preset("animal").to_dict()
    assert combo.currentData() == "animal" and w.document.preset_name == "animal"
    assert w.findChild(QtWidgets.QComboBox, "modelCombo").currentText().startswith("Toy")


def test_export_menu_lists_the_trained_panels_and_exports_one(trained, qtbot, tmp_path):
    from PySide6 import QtGui

    w = trained
    menu = w.export_actions.export_menu
    menu.aboutToShow.emit()
    texts = [a.text() for a in menu.actions()]
    assert any(t.startswith("Model view") for t in texts) and any(t.startswith("Drift") for t in texts)
    assert any(t.startswith("Meaning") for t in texts)
    out = tmp_path / "model.png"
    assert w.export_panel("model", out, scale=1)
    image = QtGui.QImage(str(out))
    assert image.width() > 300 and image.height() > 200
    w.trained.room.use_toy()
    settle(w)
    menu.aboutToShow.emit()
    assert not any(a.text().startswith("Model view") for a in menu.actions())
    assert not w.export_panel("model", tmp_path / "toy.png")
    assert "trained model" in w.message_label.text()


def test_hover_formula_shows_the_real_it_to_animal_weight(trained, qtbot, minilm):
    w = trained
    w.trained.room.select(layer=3, head=1, query=10)
    wait_idle(qtbot, w)
    view = w.heatmap_view
    text = view.tooltip_for(view.stages["weights"], 10, 2)
    expected = minilm.run(ANIMAL).attentions[3, 1, 10, 2]
    assert "“it”" in text and "“animal”" in text and "head 2" in text
    assert f"{expected:.4f}" in text and "√32" in text


def test_a_hidden_trained_view_is_drawn_when_its_tab_is_shown(trained, qtbot):
    w = trained
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    box = w.findChild(QtWidgets.QLineEdit, "sentenceEdit")
    box.setText("A short one")
    box.textEdited.emit("A short one")
    wait_idle(qtbot, w)
    n = len(w.studio.state.tokens)
    view = w.trained.room.model_view
    assert view.data is None or view.data.attentions.shape[-1] != n  # not drawn while another tab is on top
    w.view_tabs.setCurrentWidget(view)
    settle(w)
    assert view.data.attentions.shape[-1] == n


def test_closing_on_a_trained_model_keeps_the_toy_layout_for_the_next_run(fresh_trained, qtbot, monkeypatch):
    w = fresh_trained
    assert not w.variance_dock.isVisibleTo(w)
    saved = []
    monkeypatch.setattr(w, "save_settings", lambda: saved.append(w.variance_dock.isVisibleTo(w)))
    w.close()
    assert saved == [True]


def test_a_sentence_edit_is_drawn_a_heatmap_per_turn_and_every_table_follows(trained, qtbot, monkeypatch):
    window = trained
    view = window.heatmap_view
    window.view_tabs.setCurrentWidget(view)
    steps = view.drawing.steps
    drawn = []  # (event-loop turn, step) of every heatmap drawn

    def counted(source=None):
        for name in steps(source):
            if name != NEXT_TURN:
                drawn.append((turns[0], name))
            yield name

    turns = [0]
    draw_step = window.drawer.draw_step

    def turn():
        turns[0] += 1
        draw_step()

    monkeypatch.setattr(view.drawing, "steps", counted)
    monkeypatch.setattr(window.drawer, "draw_step", turn)
    window.studio.update(sentence="The bank of the river.")
    # Drawn early (the first layer, before the rest of the pass) or once installed: either way a drawing.
    qtbot.waitUntil(lambda: not window.trained.room.worker.is_busy() and not window.drawing(), timeout=60000)
    # Control comes back to the event loop between heatmaps: not everything is drawn in one turn.
    names = [name for _, name in drawn]
    assert {"scores", "logits", "weights", "head 12"} <= set(names), names
    assert len({turn for turn, _ in drawn}) >= 4, drawn
    studio = window.studio.target
    tokens = list(studio.state.tokens)
    s = studio.state
    np.testing.assert_array_equal(view.stages["weights"].data.values, studio.result.weights[s.head_index])
    for head, hm in enumerate(view.head_maps[:s.heads]):
        np.testing.assert_array_equal(hm.data.values, studio.result.weights[head])
        assert list(hm.data.col_labels) == tokens
    # The embeddings table (hidden or not) holds the vectors the selected layer projects.
    np.testing.assert_array_equal(window.models["embeddings"].array(), studio.x)
    np.testing.assert_array_equal(window.models["w_q"].array(), studio.head_weights()["q"])


def test_switching_to_a_trained_model_resets_hidden_tables_later_and_each_on_showing(window, qtbot, minilm):
    from attn_studio.trained import TrainedStudio

    numbers = window.numbers
    numbers.table_tabs.setCurrentWidget(numbers.tables["w_q"])
    window.trained.room.set_studio(TrainedStudio(minilm))
    # The table on top is reset at once; a hidden one of another shape waits for its turn.
    assert numbers.models["w_q"].rowCount() == minilm.d_model
    assert numbers.refreshing() and numbers.models["w_k"].rowCount() != minilm.d_model
    numbers.table_tabs.setCurrentWidget(numbers.tables["w_k"])  # shown: reset before it is drawn
    assert numbers.models["w_k"].rowCount() == minilm.d_model
    qtbot.waitUntil(lambda: not numbers.refreshing(), timeout=30000)
    assert numbers.models["w_v"].rowCount() == minilm.d_model
    window.trained.room.use_toy()
    wait_idle(qtbot, window)
    assert numbers.models["w_v"].rowCount() == window.studio.state.d_model


def test_an_edited_models_new_sentence_is_drawn_before_its_unedited_run_is_worked_out(trained, qtbot, minilm):
    # On the Attention tab nothing reads the unedited model's run: the pass runs the edited model alone, and
    # the unedited run (Drift, the Heads tab, Compare) is worked out on the worker once the edit is drawn.
    from attn_studio.pretrained import Edits
    from attn_studio.trained import TrainedStudio

    w, room = trained, trained.trained.room
    studio = w.studio.target
    room.set_head_scale(3, 3, 0.0)
    wait_idle(qtbot, w)
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    settle(w)
    known_at_install = []
    unsubscribe = studio.subscribe(lambda change: known_at_install.append(studio.computed.intact_known))
    try:
        assert room.set_sentence("She went to the bank to get money out.")
        wait_idle(qtbot, w)
        w.view_tabs.setCurrentWidget(room.drift_plot)  # the Drift tab reads it: this pass computes both
        settle(w)
        assert room.set_sentence("The bank of the river was quiet.")
        wait_idle(qtbot, w)
    finally:
        unsubscribe()
    assert known_at_install == [False, True]
    assert studio.computed.intact_known
    reference = TrainedStudio(minilm)  # the same edit on the same sentence, computed in one piece
    reference.update(sentence="The bank of the river was quiet.", edits=Edits().with_head_scale(3, 3, 0.0))
    # The window's passes run BLAS on one thread, this test's on the machine's: sums rounded in another order
    # leave the layers below the edit a rounding error (1e-17) away from zero.
    np.testing.assert_allclose(studio.drift(), reference.drift(), rtol=1e-9, atol=1e-12)
    assert reference.drift()[4] > 1e-4 and np.abs(reference.drift()[:4]).max() < 1e-12
    assert room.drift_plot.drift is studio.drift()  # what the Drift tab shows
