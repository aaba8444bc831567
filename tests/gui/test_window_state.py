"""Undo/redo, presets, d_model, projections and the coalescing bridge, driven through the window."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.engine import attention, tokenize
from attn_studio.session import load_preset, preset_names
from gui_helpers import stage_maps, assert_result_matches, expected_embeddings, expected_inputs, expected_result, find, settle, shown_image

Qt = QtCore.Qt


@pytest.fixture
def window(document_window, opening_document):
    # One window serves the module: undone to how it opened before each test (the shared reset),
    # then its document put back, so the preset box shows the example it opened with. Checked.
    w = document_window
    assert find(w, QtWidgets.QComboBox, "presetCombo").currentData() == opening_document["preset_name"]
    return w


def test_undo_redo_restore_state_and_widgets(window, qtbot):
    w = window
    d_model = find(w, QtWidgets.QSpinBox, "dModelSpin")
    causal = find(w, QtWidgets.QCheckBox, "causalCheck")
    s0 = w.studio.state
    assert not w.undo_action.isEnabled()

    d_model.setValue(4)
    settle(w)
    s1 = w.studio.state
    causal.click()
    settle(w)
    s2 = w.studio.state
    assert (s1.d_model, s1.causal, s2.d_model, s2.causal) == (4, False, 4, True)
    assert w.undo_action.isEnabled() and not w.redo_action.isEnabled()

    w.undo_action.trigger()
    settle(w)
    assert w.studio.state == s1
    assert not causal.isChecked() and d_model.value() == 4
    assert w.redo_action.isEnabled()

    # Ctrl+Z, typed on the window
    qtbot.keyClick(w, Qt.Key_Z, Qt.ControlModifier)
    settle(w)
    assert w.studio.state == s0
    assert d_model.value() == 3 and not causal.isChecked()
    assert w.models["embeddings"].columnCount() == 3
    assert_result_matches(w.studio, expected_result(w.studio.state))
    np.testing.assert_allclose(shown_image(w.heatmap_view.stages["weights"]), expected_result(s0)["weights"][0])
    assert not w.undo_action.isEnabled()

    w.redo_action.trigger()
    settle(w)
    assert w.studio.state == s1
    assert d_model.value() == 4 and not causal.isChecked()

    # the platform's redo shortcut
    redo_key = QtGui.QKeySequence(QtGui.QKeySequence.Redo)[0]
    qtbot.keyClick(w, redo_key.key(), redo_key.keyboardModifiers())
    settle(w)
    assert w.studio.state == s2
    assert d_model.value() == 4 and causal.isChecked()
    assert w.studio.result.weights[0, 0, -1] == 0.0
    assert np.isnan(shown_image(w.heatmap_view.stages["weights"])[0, -1])
    assert not w.redo_action.isEnabled()


def test_undo_after_a_cell_edit_restores_the_table(window):
    w = window
    model = w.models["embeddings"]
    before = model.array().copy()
    s0 = w.studio.state
    assert model.setData(model.index(0, 0), "2") is True
    settle(w)
    assert model.array()[0, 0] == 2.0
    w.undo_action.trigger()
    settle(w)
    assert w.studio.state == s0
    np.testing.assert_array_equal(model.array(), before)


def activate_preset(w, name: str):
    combo = find(w, QtWidgets.QComboBox, "presetCombo")
    index = combo.findData(name)
    assert index >= 0, f"{name} is not in the preset list"
    combo.setCurrentIndex(index)
    combo.activated.emit(index)  # what choosing it with the mouse emits
    settle(w)


def test_each_preset_loads_from_the_combo_box(window):
    w = window
    names = preset_names()
    assert {"journey", "bank", "money-bank-2d", "animal"} <= set(names)
    # every preset, then journey again (the window opens on it: come back from elsewhere)
    for name in names[1:] + names[:1]:
        activate_preset(w, name)
        check_preset_shown(w, name)


def check_preset_shown(w, name):
    state = w.studio.state
    assert state == load_preset(name)
    combo = find(w, QtWidgets.QComboBox, "presetCombo")
    assert combo.currentData() == name
    assert name in w.windowTitle() or state.name in w.windowTitle()
    assert find(w, QtWidgets.QLineEdit, "sentenceEdit").text() == state.sentence
    assert find(w, QtWidgets.QSpinBox, "dModelSpin").value() == state.d_model
    assert find(w, QtWidgets.QSpinBox, "headsSpin").value() == state.heads
    assert find(w, QtWidgets.QSpinBox, "dHeadSpin").value() == state.d_head
    assert find(w, QtWidgets.QCheckBox, "scaleCheck").isChecked() == state.scale
    assert find(w, QtWidgets.QCheckBox, "projectionsCheck").isChecked() == state.projections
    assert find(w, QtWidgets.QComboBox, "queryCombo").currentIndex() == state.query_index

    want = expected_result(state)
    assert_result_matches(w.studio, want)
    head = state.head_index
    for key, heatmap in stage_maps(w.heatmap_view):
        np.testing.assert_allclose(shown_image(heatmap), want[key][head], atol=1e-12, err_msg=key)
    tokens = tokenize(state.sentence)
    embeddings = w.models["embeddings"]
    assert [embeddings.headerData(r, Qt.Vertical) for r in range(embeddings.rowCount())] == tokens
    np.testing.assert_allclose(embeddings.array(), expected_embeddings(state), atol=0)
    np.testing.assert_allclose(w.models["output"].array(), want["output"], atol=1e-12)


def output_row(model, row: int) -> tuple[np.ndarray, list[str]]:
    values = np.array([model.data(model.index(row, c), Qt.UserRole) for c in range(model.columnCount())])
    texts = [model.data(model.index(row, c), Qt.DisplayRole) for c in range(model.columnCount())]
    return values, texts


def test_journey_preset_shows_the_seed_numbers(window):
    w = window
    w.load_preset("bank")
    activate_preset(w, "journey")
    weights = shown_image(w.heatmap_view.stages["weights"])
    np.testing.assert_allclose(weights[1], [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581], atol=5e-5)
    values, texts = output_row(w.models["output"], 1)
    np.testing.assert_allclose(values, [0.4419, 0.6515, 0.5683], atol=5e-5)
    assert texts == ["0.4419", "0.6515", "0.5683"]
    assert w.studio.state.query_index == 1  # the seed follows "journey"


def test_bank_preset_shows_the_seed_numbers(window):
    w = window
    activate_preset(w, "bank")
    weights = shown_image(w.heatmap_view.stages["weights"])
    np.testing.assert_allclose(
        weights[7], [0.15614, 0.13398, 0.11098, 0.10419, 0.11014, 0.11062, 0.09593, 0.17802], atol=5e-6)
    values, texts = output_row(w.models["output"], 7)
    np.testing.assert_allclose(values, [-0.1061, -0.13715, -0.02285], atol=5e-6)
    assert texts[0] == "\u22120.1061"  # a true minus sign, as the seed prints it


def test_presets_by_keyboard(window, qtbot):
    """Arrow keys on the focused preset box load each preset in turn."""
    # The preset combo starts on the example the window opened with (the reset puts it back).
    w = window
    combo = find(w, QtWidgets.QComboBox, "presetCombo")
    combo.setFocus()
    names = preset_names()
    assert combo.currentData() == names[0] == "journey"
    for name in names[1:]:
        qtbot.keyClick(combo, Qt.Key_Down)
        settle(w)
        assert combo.currentData() == name
        assert w.studio.state == load_preset(name)
    for _ in names[1:]:
        w.undo_action.trigger()
    settle(w)
    assert w.studio.state == load_preset(names[0])


def test_d_model_grow_and_shrink_restores_values(window):
    w = window
    w.load_preset("animal")
    settle(w)
    spin = find(w, QtWidgets.QSpinBox, "dModelSpin")
    models = w.models

    def snapshot():
        return {key: models[key].array().copy() for key in ("embeddings", "w_q", "w_k", "w_v", "w_o")}

    def check_shapes(d):
        state = w.studio.state
        assert state.d_model == d and spin.value() == d
        assert models["embeddings"].columnCount() == d
        assert [models["embeddings"].headerData(c, Qt.Horizontal) for c in range(d)] == [f"d{i + 1}" for i in range(d)]
        for key in ("w_q", "w_k", "w_v"):
            assert models[key].rowCount() == d and models[key].columnCount() == state.d_head
        assert models["w_o"].columnCount() == d
        assert models["output"].columnCount() == d
        assert_result_matches(w.studio, expected_result(state))
        np.testing.assert_allclose(models["embeddings"].array(), expected_embeddings(state), atol=0)

    spin.setValue(3)
    settle(w)
    check_shapes(3)
    at3 = snapshot()
    spin.setValue(5)
    settle(w)
    check_shapes(5)
    at5 = snapshot()
    # weights are the top-left corner of larger stores: growing keeps the first rows
    for key in ("w_q", "w_k", "w_v"):
        np.testing.assert_array_equal(at5[key][:3], at3[key])
    np.testing.assert_array_equal(at5["w_o"][:, :3], at3["w_o"])
    spin.setValue(3)
    settle(w)
    check_shapes(3)
    back = snapshot()
    for key in at3:
        np.testing.assert_array_equal(back[key], at3[key], err_msg=key)


def test_d_model_keeps_an_edited_embedding(window):
    w = window
    model = w.models["embeddings"]
    spin = find(w, QtWidgets.QSpinBox, "dModelSpin")
    assert model.setData(model.index(0, 2), "0.777") is True
    spin.setValue(2)
    settle(w)
    assert model.columnCount() == 2
    spin.setValue(3)
    settle(w)
    assert model.array()[0, 2] == 0.777


def test_projections_off_is_simplified_attention(window, qtbot):
    w = window
    w.load_preset("animal")
    settle(w)
    box = find(w, QtWidgets.QCheckBox, "projectionsCheck")
    assert box.isChecked()
    for name in ("wQTable", "wKTable", "wVTable", "wOTable"):
        assert find(w, QtWidgets.QTableView, name).isEnabled()
    box.click()
    settle(w)

    state = w.studio.state
    assert not state.projections and not box.isChecked()
    for name in ("wQTable", "wKTable", "wVTable", "wOTable"):
        assert not find(w, QtWidgets.QTableView, name).isEnabled(), name
    assert not find(w, QtWidgets.QSpinBox, "headsSpin").isEnabled()
    x, _ = expected_inputs(state)
    plain = attention(x, x, x, scale=state.scale, causal=state.causal, temperature=state.temperature,
                      kind=state.softmax)
    result = w.studio.result
    assert result.weights.shape == (1, x.shape[0], x.shape[0])
    np.testing.assert_allclose(result.weights[0], plain.weights, atol=1e-12)
    np.testing.assert_allclose(result.scores[0], plain.scores, atol=1e-12)
    np.testing.assert_allclose(result.output, plain.output, atol=1e-12)
    np.testing.assert_allclose(shown_image(w.heatmap_view.stages["weights"]), plain.weights, atol=1e-12)
    np.testing.assert_allclose(w.models["output"].array(), plain.output, atol=1e-12)
    assert w.heatmap_view.heads_shown == 0  # one head: no per-head maps
    # scaling divides by sqrt(d_model) now
    assert state.scale and "√8" in w.heatmap_view.stages["logits"].title

    box.click()
    settle(w)
    assert w.studio.state.projections
    assert find(w, QtWidgets.QTableView, "wQTable").isEnabled()
    assert w.heatmap_view.heads_shown == 2


def test_a_burst_of_spin_changes_is_one_repaint(window, qtbot, monkeypatch):
    w = window
    spin = find(w, QtWidgets.QSpinBox, "dModelSpin")
    emissions = []
    w.bridge.changed.connect(lambda fields: emissions.append(fields))
    renders = []
    original = w.heatmap_view.render
    monkeypatch.setattr(w.heatmap_view, "render", lambda: (renders.append(1), original()))
    start = w.studio.state
    # The burst's edits are close together by this clock, however slow the machine.
    monkeypatch.setattr(w.studio, "clock", lambda: 100.0)

    values = [4 + (i % 6) for i in range(20)]  # 4..9 and around, ending on 5
    for v in values:
        spin.setValue(v)
    assert emissions == []  # nothing until the event loop turns
    with qtbot.waitSignal(w.bridge.changed, timeout=2000):
        pass
    for _ in range(5):
        QtWidgets.QApplication.processEvents()
    qtbot.wait(20)

    assert len(emissions) == 1
    assert "d_model" in emissions[0]
    assert len(renders) == 1
    assert w.studio.state.d_model == values[-1]
    assert w.models["embeddings"].columnCount() == values[-1]
    assert_result_matches(w.studio, expected_result(w.studio.state))
    # the burst is one undo step too
    w.undo_action.trigger()
    settle(w)
    assert w.studio.state == start
