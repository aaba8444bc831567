"""A lab model in the window: "Open in the studio" on the "Why two layers" panel opens its two-layer or
one-layer model (during a run too) in the Model view; its views show its tokens, its real q, k and v;
the random-stretch button, silencing a head, Save model from the panel and Open model folder…; a
session keeps the model's name, hash and recipe. Nothing is timed: the workers are waited for."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.pretrained import LabModel, load_pretrained
from attn_studio.training import InductionExperiment
from gui_helpers import axis_tokens, settle, wait_idle

WINDOW_SIZE = (1280, 720)


@pytest.fixture
def window(shared_window, qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # "Open in the studio" writes its cache here
    w = shared_window
    yield w
    wait_idle(qtbot, w)
    if w.studio.is_trained:
        w.view_tabs.setCurrentIndex(0)
        w.trained.room.use_toy()
        wait_idle(qtbot, w)


def _panel(w, qtbot, steps: int = 0):
    panel = w.training.open("induction")
    panel.runner.set_speed(0)
    panel.reset()
    assert panel.runner.wait_idle()
    if steps:
        panel.play()
        qtbot.waitUntil(lambda: panel.runner.snapshot().steps >= steps, timeout=120_000)
        panel.pause()
        assert panel.runner.wait_idle()
    return panel


def _open(w, qtbot, panel, arm: str):
    """Choose ``arm`` in the panel's "Open in the studio" menu, then wait for the model to be shown."""
    room = w.trained.room
    action = panel.model_buttons.open_button.menu().findChild(QtGui.QAction, f"openModel_{arm.replace(' ', '_')}")
    assert action is not None and action.text() in ("Two-layer model", "One-layer model")
    action.trigger()
    qtbot.waitUntil(lambda: room.studio is not None and isinstance(room.studio.model, LabModel)
                    and room.studio.model.layers == (2 if arm == "two layers" else 1), timeout=60_000)
    wait_idle(qtbot, w)
    return room.studio


def test_open_in_the_studio_shows_the_two_layer_model_in_the_model_view(window, qtbot):
    w = window
    panel = _panel(w, qtbot, steps=3)
    steps = panel.runner.snapshot().steps
    studio = _open(w, qtbot, panel, "two layers")
    model = studio.model
    assert model.name == f"lab two layers (seed 0, step {steps})" and model.kind == "attention-only"
    assert w.view_tabs.currentWidget() is w.trained.room.model_view  # the Model view, every layer × head
    # The model is the panel's run at that step: its attention is the lab's own.
    exp = panel.runner.snapshot().exp
    tokens = np.array(studio.run.ids)
    np.testing.assert_allclose(studio.run.attentions, exp.models["two layers"].attention(tokens[None])[:, 0],
                               rtol=0, atol=1e-12)
    # Its sentence is a random stretch twice, in the sentence box as letters.
    text = w.controls.sentence_edit.text()
    first, second = text.split()
    assert first == second and len(first) == 10 and studio.state.sentence == text
    assert w.findChild(QtWidgets.QComboBox, "modelCombo").currentText().startswith("lab two layers")
    # The Model view draws 2 layers × 2 heads (and the mean) of the 20 tokens.
    data = w.trained.room.model_view.data
    assert data is not None and len(data.tokens) == 20 and "2 layers × 2 heads" in w.trained.room.model_view.header.text()


def test_its_views_show_its_tokens_and_real_q_k_v_and_a_head_can_be_silenced(window, qtbot):
    w = window
    panel = _panel(w, qtbot)
    _open(w, qtbot, panel, "two layers")
    room = w.trained.room
    box = w.controls.sentence_edit
    box.setText("KDQB KDQB")
    box.textEdited.emit("KDQB KDQB")  # as a person's typing
    wait_idle(qtbot, w)
    assert room.studio.state.tokens == tuple("KDQBKDQB")
    room.select(layer=1, head=1, query=6)
    wait_idle(qtbot, w)
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    settle(w)
    for stage in ("scores", "weights"):  # its tokens on the heatmaps' axes, no special tokens
        assert axis_tokens(w.heatmap_view.stages[stage].bottom_axis) == list("KDQBKDQB")
        assert axis_tokens(w.heatmap_view.stages[stage].left_axis) == list("KDQBKDQB")
    # Step by step: the keys are its tokens, the query its 7th ("Q"), and q is the real one of layer 2, head 2.
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    steps = w.pipeline_view.model
    headers = [steps.headerData(c, QtCore.Qt.Horizontal) for c in range(steps.columnCount())]
    assert [h for h in headers if h in set("KDQB")] == list("KDQBKDQB"), headers
    result = room.studio.result
    x = room.studio.x
    w_q = room.studio.model.head_weights(1, 1)["q"]
    np.testing.assert_allclose(result.q[1], x @ w_q, rtol=0, atol=1e-12)
    assert room.studio.state.causal and np.isinf(result.logits[1][0, 1])  # causal: a later key is blocked
    # Silence layer 1, head 1: layer 2 changes, layer 1 does not (Drift says so).
    before = room.studio.run.attentions.copy()
    room.set_head_scale(0, 0, 0.0)
    wait_idle(qtbot, w)
    after = room.studio.run.attentions
    np.testing.assert_array_equal(after[0], before[0])
    assert not np.allclose(after[1], before[1])
    drift = room.studio.drift()
    assert abs(drift[0]) < 1e-12 and drift[1] > 1e-3
    assert room.panel.silence_button.text() == "Silenced" or room.studio.head_scale(0, 0) == 0.0
    # A bad sequence is refused with a message naming it; the tokens stay.
    box.setText("KD!Q")
    box.textEdited.emit("KD!Q")
    wait_idle(qtbot, w)
    assert room.studio.state.tokens == tuple("KDQBKDQB")
    assert "'!'" in room.panel.status.text()


def test_the_random_button_gives_a_new_stretch_twice(window, qtbot):
    w = window
    panel = _panel(w, qtbot)
    studio = _open(w, qtbot, panel, "one layer")
    room = w.trained.room
    button = room.panel.random_button
    assert button.isVisibleTo(w) and button.text() == "Random stretch, twice"
    assert "A–Z and 0–5" in w.controls.sentence_edit.toolTip()  # the box says which tokens it takes
    old = studio.state.sentence
    button.click()
    wait_idle(qtbot, w)
    new = room.studio.state.sentence
    first, second = new.split()
    assert new != old and first == second and w.controls.sentence_edit.text() == new
    room.use_toy()
    settle(w)
    assert not button.isVisibleTo(w) and "A–Z" not in w.controls.sentence_edit.toolTip()


def test_open_during_a_run_takes_the_step_reached_and_the_run_goes_on(window, qtbot):
    w = window
    panel = _panel(w, qtbot)
    panel.runner.set_speed(20)
    panel.play()
    qtbot.waitUntil(lambda: panel.runner.snapshot().steps >= 2, timeout=60_000)
    studio = _open(w, qtbot, panel, "two layers")
    opened_at = int(studio.model.name.split("step ")[1].rstrip(")"))
    assert opened_at >= 2
    qtbot.waitUntil(lambda: panel.runner.snapshot().steps > opened_at + 1, timeout=60_000)  # still playing
    panel.pause()
    assert panel.runner.wait_idle()
    # The model saved is whole: exactly the run's arrays at that step.
    exp = InductionExperiment(seed=0)
    exp.run(opened_at)
    tokens = np.array(studio.run.ids)
    np.testing.assert_allclose(studio.run.attentions, exp.models["two layers"].attention(tokens[None])[:, 0],
                               rtol=0, atol=1e-12)


def test_save_model_from_the_panel_and_open_the_folder_from_the_model_panel(window, qtbot, tmp_path):
    w = window
    panel = _panel(w, qtbot, steps=2)
    target = tmp_path / "two-layers"
    panel.model_buttons.choose_folder = lambda: str(target)
    panel.model_buttons.save_button.menu().findChild(QtGui.QAction, "saveModel_two_layers").trigger()
    qtbot.waitUntil(lambda: panel.message_label.text().startswith("Saved"), timeout=60_000)
    assert str(target) in panel.message_label.text()
    config = json.loads((target / "config.json").read_text())
    assert config["model_type"] == "attention-only" and config["training"]["steps"] == panel.runner.snapshot().steps
    # A folder that holds other files gets a folder of the model's own inside it.
    (tmp_path / "notes.txt").write_text("mine")
    panel.model_buttons.choose_folder = lambda: str(tmp_path)
    panel.model_buttons.save_arm_dialog("one layer")
    qtbot.waitUntil(lambda: "one-layer" in panel.message_label.text() or "one" in panel.message_label.text(),
                    timeout=60_000)
    inner = [p for p in tmp_path.iterdir() if p.is_dir() and p.name.startswith("lab-one-layer")]
    assert len(inner) == 1 and load_pretrained(inner[0]).layers == 1
    # Open model folder… in the Model panel opens it like any model.
    room = w.trained.room
    room.panel.choose_folder = lambda: str(target)
    combo = w.findChild(QtWidgets.QComboBox, "modelCombo")
    index = combo.findData("open")
    combo.setCurrentIndex(index)
    combo.activated.emit(index)
    qtbot.waitUntil(lambda: room.studio is not None and room.studio.model.path == target, timeout=60_000)
    wait_idle(qtbot, w)
    assert room.studio.model.layers == 2 and room.studio.state.tokens[:10] == room.studio.state.tokens[10:]


def test_a_session_keeps_the_lab_models_name_hash_and_recipe(window, qtbot, tmp_path):
    w = window
    panel = _panel(w, qtbot, steps=2)
    studio = _open(w, qtbot, panel, "two layers")
    w.trained.room.set_head_scale(1, 0, 0.0)
    wait_idle(qtbot, w)
    path = tmp_path / "lab.attn.json"
    assert w.save_to(path)
    settle(w)
    data = json.loads(path.read_text())
    model = data["model"]
    assert model["name"] == studio.model.name and model["sha256"] == studio.model.weights_sha256()
    assert model["lab"] == {"experiment": "induction", "arm": "two layers", "seed": 0,
                            "steps": panel.runner.snapshot().steps, "lr": 0.003}
    assert data["edits"]["head_scale"] == [[1, 0, 0.0]]
