"""Typing a sentence and editing cells: the tables and heatmaps show what the engine computes."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.engine import tokenize
from gui_helpers import bring_forward, stage_maps, assert_result_matches, axis_tokens, expected_inputs, expected_result, find, settle, shown_image

Qt = QtCore.Qt


@pytest.fixture
def window(shared_window):
    # One window serves the module: undone to how it opened before each test, with the
    # embedding table in front (a test may have switched to a weight table).
    bring_forward(find(shared_window, QtWidgets.QTableView, "embeddingTable"))
    return shared_window


def row_headers(model) -> list[str]:
    return [model.headerData(r, Qt.Vertical) for r in range(model.rowCount())]


def col_headers(model) -> list[str]:
    return [model.headerData(c, Qt.Horizontal) for c in range(model.columnCount())]


def test_typing_a_sentence_updates_rows_axes_and_heatmaps(window, qtbot):
    w = window
    edit = find(w, QtWidgets.QLineEdit, "sentenceEdit")
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key_A, Qt.ControlModifier)  # select all, then type over it
    text = "The cat sat, then slept."
    qtbot.keyClicks(edit, text)
    settle(w)

    tokens = tokenize(text)
    assert tokens == ["The", "cat", "sat", ",", "then", "slept", "."]
    assert w.studio.state.sentence == text
    table = find(w, QtWidgets.QTableView, "embeddingTable")
    model = table.model()
    assert row_headers(model) == tokens
    assert not find(w, QtWidgets.QLabel, "messageLabel").isVisible()
    assert col_headers(model) == [f"d{i + 1}" for i in range(w.studio.state.d_model)]
    np.testing.assert_allclose(model.array(), expected_inputs(w.studio.state)[1])
    assert row_headers(w.models["output"]) == tokens

    for key, heatmap in stage_maps(w.heatmap_view):
        assert axis_tokens(heatmap.left_axis) == tokens, key
        assert axis_tokens(heatmap.bottom_axis) == tokens, key
        # the ticks pyqtgraph draws carry the same labels at 0, 1, 2, ...
        ticks = heatmap.bottom_axis.labels()
        assert [t for _, t in ticks] == tokens and [v for v, _ in ticks] == list(range(len(tokens)))
        assert shown_image(heatmap).shape == (len(tokens), len(tokens)), key
    want = expected_result(w.studio.state)
    assert_result_matches(w.studio, want)
    np.testing.assert_allclose(shown_image(w.heatmap_view.stages["weights"]), want["weights"][0], atol=1e-12)
    query = find(w, QtWidgets.QComboBox, "queryCombo")
    assert [query.itemText(i) for i in range(query.count())] == [f"{i + 1}: {t}" for i, t in enumerate(tokens)]


def test_typing_a_shorter_sentence_with_a_late_query_selected(window, qtbot):
    w = window
    query = find(w, QtWidgets.QComboBox, "queryCombo")
    query.setCurrentIndex(5)
    query.activated.emit(5)  # follow "step", the last token
    settle(w)
    assert w.studio.state.query_index == 5
    edit = find(w, QtWidgets.QLineEdit, "sentenceEdit")
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key_A, Qt.ControlModifier)
    qtbot.keyClicks(edit, "a b c")
    settle(w)
    assert not find(w, QtWidgets.QLabel, "messageLabel").isVisible()
    assert w.studio.state.sentence == "a b c"
    assert row_headers(w.models["embeddings"]) == ["a", "b", "c"]
    assert 0 <= w.studio.state.query_index <= 2


def test_clearing_the_sentence_shows_empty_views(window, qtbot):
    w = window
    edit = find(w, QtWidgets.QLineEdit, "sentenceEdit")
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key_A, Qt.ControlModifier)
    qtbot.keyClick(edit, Qt.Key_Delete)
    settle(w)
    assert w.studio.state.sentence == ""
    assert w.models["embeddings"].rowCount() == 0
    assert axis_tokens(w.heatmap_view.stages["weights"].left_axis) == []
    # typing again brings everything back
    qtbot.keyClicks(edit, "one two")
    settle(w)
    assert row_headers(w.models["embeddings"]) == ["one", "two"]
    assert shown_image(w.heatmap_view.stages["weights"]).shape == (2, 2)


def test_set_data_on_an_embedding_cell_recomputes_everything(window):
    w = window
    model = w.models["embeddings"]
    row, col = 1, 0  # "journey", first component
    word = row_headers(model)[row]
    assert word == "journey"
    assert model.setData(model.index(row, col), "0.9") is True
    settle(w)

    state = w.studio.state
    assert state.embedding_edits[word][col] == 0.9
    x, _ = expected_inputs(state)
    assert x[row, col] == 0.9
    np.testing.assert_array_equal(w.studio.x, x)
    np.testing.assert_array_equal(model.array(), x)
    assert model.data(model.index(row, col), Qt.DisplayRole) == "0.9000"  # at the precision: four decimals
    assert model.data(model.index(row, col), Qt.UserRole) == 0.9
    want = expected_result(state)
    assert_result_matches(w.studio, want)
    head = state.head_index
    np.testing.assert_allclose(shown_image(w.heatmap_view.stages["weights"]), want["weights"][head], atol=1e-12)
    np.testing.assert_allclose(shown_image(w.heatmap_view.stages["scores"]), want["scores"][head], atol=1e-12)
    np.testing.assert_allclose(w.models["output"].array(), want["output"], atol=1e-12)


def test_edit_sticks_to_the_word_everywhere_it_appears(window, qtbot):
    w = window
    w.studio.update(sentence="the bank and the river")
    settle(w)
    model = w.models["embeddings"]
    assert model.setData(model.index(0, 2), "-0.5") is True  # first "the"
    settle(w)
    array = model.array()
    assert array[0, 2] == -0.5 and array[3, 2] == -0.5
    assert_result_matches(w.studio, expected_result(w.studio.state))


def open_editor(table) -> QtWidgets.QLineEdit | None:
    """The table's open cell editor (a closed one from an earlier edit may linger, hidden)."""
    shown = [e for e in table.findChildren(QtWidgets.QLineEdit) if e.isVisible()]
    return shown[0] if shown else None


def _open_editor(qtbot, table, index, first_key: str) -> QtWidgets.QLineEdit:
    """Select a cell and start typing: the table opens its editor with the first key in it."""
    table.setFocus()
    table.setCurrentIndex(index)
    qtbot.keyClicks(table, first_key)
    editor = open_editor(table)
    assert editor is not None and editor.isVisible(), "typing on a cell did not open an editor"
    return editor


def test_typing_into_the_embedding_table(window, qtbot):
    w = window
    table = find(w, QtWidgets.QTableView, "embeddingTable")
    model = table.model()
    index = model.index(2, 1)  # "starts", d2
    editor = _open_editor(qtbot, table, index, "0")
    assert editor.text() == "0"
    qtbot.keyClicks(editor, ".25")
    qtbot.keyClick(editor, Qt.Key_Return)
    settle(w)

    assert w.studio.state.embedding_edits["starts"][1] == 0.25
    assert model.data(model.index(2, 1), Qt.DisplayRole) == "0.2500"
    want = expected_result(w.studio.state)
    assert_result_matches(w.studio, want)
    np.testing.assert_allclose(shown_image(w.heatmap_view.stages["weights"]), want["weights"][0], atol=1e-12)
    assert not find(w, QtWidgets.QLabel, "messageLabel").isVisible()


def test_double_click_edit_of_a_weight_table(window, qtbot):
    w = window
    w.load_preset("animal")
    settle(w)
    table = find(w, QtWidgets.QTableView, "wQTable")
    tabs = w.table_tabs
    tabs.setCurrentWidget(table)
    model = table.model()
    index = model.index(1, 2)
    table.edit(index)  # what a double click does
    editor = open_editor(table)
    assert editor is not None
    editor.selectAll()
    # The typographic minus of slides is accepted. QTest.keyClicks aborts the
    # process on non-Latin-1 text, so this key event is sent by hand.
    for kind in (QtCore.QEvent.KeyPress, QtCore.QEvent.KeyRelease):
        QtWidgets.QApplication.sendEvent(editor, QtGui.QKeyEvent(kind, Qt.Key_Minus, Qt.NoModifier, "\u2212"))
    assert editor.text() == "\u2212"
    qtbot.keyClicks(editor, "1.5")
    qtbot.keyClick(editor, Qt.Key_Enter)
    settle(w)
    state = w.studio.state
    assert state.w_q[state.head_index, 1, 2] == -1.5
    assert_result_matches(w.studio, expected_result(state))


BAD_TEXTS = {
    "abc": "abc",
    "nan": "nan",
    "inf": "inf",
    "1e400": "1e400",
    "": "empty",
    "1e7": "too large",
}


def test_bad_cell_text_is_refused_with_a_visible_message(window):
    w = window
    model = w.models["embeddings"]
    before_state = w.studio.state
    before_array = model.array().copy()
    before_result = w.studio.result.weights.copy()
    label = find(w, QtWidgets.QLabel, "messageLabel")
    assert not label.isVisible()

    for text, mention in BAD_TEXTS.items():
        w.clear_message()
        assert not label.isVisible()
        assert model.setData(model.index(1, 0), text) is False, text
        settle(w)

        assert w.studio.state is before_state, text
        assert w.studio.state == before_state, text
        np.testing.assert_array_equal(model.array(), before_array, err_msg=text)
        np.testing.assert_array_equal(w.studio.result.weights, before_result, err_msg=text)
        np.testing.assert_array_equal(shown_image(w.heatmap_view.stages["weights"]), before_result[0], err_msg=text)
        assert not w.studio.can_undo, text  # nothing was recorded
        assert label.isVisible(), text
        message = label.text()
        assert mention in message.lower(), (text, message)
        assert "journey" in message and "old value is kept" in message, (text, message)


def test_bad_weight_text_is_refused(window):
    w = window
    w.load_preset("animal")
    settle(w)
    before = w.studio.state
    label = find(w, QtWidgets.QLabel, "messageLabel")
    for table_name in ("wQTable", "wKTable", "wVTable", "wOTable"):
        w.clear_message()
        model = find(w, QtWidgets.QTableView, table_name).model()
        old = model.array().copy()
        assert model.setData(model.index(0, 0), "1,5") is False, table_name  # a decimal comma is not a number
        settle(w)
        assert w.studio.state is before, table_name
        np.testing.assert_array_equal(model.array(), old)
        assert label.isVisible() and "1,5" in label.text(), (table_name, label.text())


def test_typing_a_bad_value_keeps_the_old_one(window, qtbot):
    w = window
    table = find(w, QtWidgets.QTableView, "embeddingTable")
    model = table.model()
    old = model.data(model.index(0, 0), Qt.UserRole)
    before = w.studio.state
    editor = _open_editor(qtbot, table, model.index(0, 0), "x")
    qtbot.keyClicks(editor, "yz")
    qtbot.keyClick(editor, Qt.Key_Return)
    settle(w)
    assert w.studio.state is before
    assert model.data(model.index(0, 0), Qt.UserRole) == old
    label = find(w, QtWidgets.QLabel, "messageLabel")
    assert label.isVisible() and "xyz" in label.text()


def test_refusal_message_goes_away_after_a_good_edit(window):
    w = window
    model = w.models["embeddings"]
    label = find(w, QtWidgets.QLabel, "messageLabel")
    assert model.setData(model.index(1, 0), "abc") is False
    assert label.isVisible()
    assert model.setData(model.index(1, 0), "0.5") is True
    settle(w)
    assert not label.isVisible(), f"still showing: {label.text()!r}"
