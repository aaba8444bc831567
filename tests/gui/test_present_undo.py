"""Undo and redo from anywhere in the window, and examples that open as new untitled documents."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.session import load_preset, write_session
from gui_helpers import settle

CTRL = QtCore.Qt.ControlModifier
CTRL_SHIFT = QtCore.Qt.ControlModifier | QtCore.Qt.ShiftModifier


@pytest.fixture
def window(shared_window, qtbot):
    shared_window.activateWindow()
    qtbot.waitUntil(lambda: QtWidgets.QApplication.activeWindow() is shared_window)
    return shared_window


def focus(window, widget, qtbot):
    window.controls_dock.show()
    window.tables_dock.show()
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus)


def key(widget, k, modifiers=QtCore.Qt.NoModifier):
    QTest.keyClick(widget, k, modifiers)
    settle(widget.window())


def test_ctrl_z_in_a_spin_box_undoes_the_committed_value(window, qtbot):
    spin = window.d_model_spin
    start = window.studio.state.d_model
    focus(window, spin, qtbot)
    key(spin, QtCore.Qt.Key_Up)  # a committed change (one step up)
    assert window.studio.state.d_model == start + 1
    key(spin, QtCore.Qt.Key_Z, CTRL)
    assert window.studio.state.d_model == start
    assert spin.value() == start
    key(spin, QtCore.Qt.Key_Z, CTRL_SHIFT)
    assert window.studio.state.d_model == start + 1 and spin.value() == start + 1


def test_uncommitted_typing_in_a_spin_box_is_taken_back_first_then_the_app_undoes(window, qtbot):
    spin = window.seed_spin
    start = window.studio.state.seed
    window.studio.update(causal=not window.studio.state.causal)  # an earlier edit to undo
    settle(window)
    causal = window.studio.state.causal
    focus(window, spin, qtbot)
    spin.selectAll()
    QTest.keyClicks(spin, "77")  # typed, not yet committed (no Enter)
    assert spin.text() == "77" and window.studio.state.seed == start
    key(spin, QtCore.Qt.Key_Z, CTRL)
    assert spin.text() == str(start) and window.studio.state.causal == causal  # only the typing went
    key(spin, QtCore.Qt.Key_Z, CTRL)
    assert window.studio.state.causal != causal  # the second Ctrl+Z reached the app


def test_ctrl_z_in_the_sentence_box_undoes_the_app_edit(window, qtbot):
    edit = window.sentence_edit
    before = window.studio.state.sentence
    focus(window, edit, qtbot)
    edit.end(False)
    QTest.keyClicks(edit, " again")
    settle(window)
    assert window.studio.state.sentence == before + " again"
    key(edit, QtCore.Qt.Key_Z, CTRL)
    assert window.studio.state.sentence == before and edit.text() == before
    key(edit, QtCore.Qt.Key_Z, CTRL_SHIFT)
    assert window.studio.state.sentence == before + " again"


def test_ctrl_z_in_a_table_undoes_the_app_edit(window, qtbot):
    window.studio.update(scale=not window.studio.state.scale)
    settle(window)
    scale = window.studio.state.scale
    table = next(t for t in window.tables_dock.findChildren(QtWidgets.QTableView) if t.isVisible())
    focus(window, table, qtbot)
    key(table, QtCore.Qt.Key_Z, CTRL)
    assert window.studio.state.scale != scale


def test_the_edit_menu_names_an_example_switch(window):
    window.load_preset("bank")
    settle(window)
    assert window.undo_action.text().replace("&", "") == "Undo load example 'bank'"
    window.undo()
    settle(window)
    assert window.redo_action.text().replace("&", "") == "Redo load example 'bank'"
    assert window.undo_action.text().replace("&", "") == "Undo"


def test_an_example_chosen_over_an_open_file_never_overwrites_it(window, tmp_path, monkeypatch, qtbot):
    path = tmp_path / "mine.attn.json"
    mine = load_preset("animal").replace(causal=True)
    write_session(path, mine)
    assert window.open_file(path)
    written = path.read_bytes()
    window.studio.update(scale=False)  # unsaved changes: asked about first
    settle(window)
    asked = []
    monkeypatch.setattr(window, "ask_unsaved", lambda: asked.append(1) or QtWidgets.QMessageBox.Discard)
    chosen = []
    target = tmp_path / "example.attn.json"
    monkeypatch.setattr(window, "save_as_dialog", lambda: chosen.append(1) or window.save_to(target))
    window.preset_combo.activated.emit(window.preset_combo.findData("bank"))
    settle(window)
    assert asked == [1]
    assert window.studio.state.sentence == load_preset("bank").sentence
    assert window.current_path is None and "bank" in window.windowTitle()
    window.activateWindow()
    key(window.view_tabs, QtCore.Qt.Key_S, CTRL)
    assert chosen == [1] and target.exists()
    assert path.read_bytes() == written  # the file that was open is untouched


def test_cancel_keeps_the_open_file_and_its_changes(window, tmp_path, monkeypatch):
    path = tmp_path / "mine.attn.json"
    write_session(path, load_preset("animal"))
    assert window.open_file(path)
    window.studio.update(scale=False)
    settle(window)
    monkeypatch.setattr(window, "ask_unsaved", lambda: QtWidgets.QMessageBox.Cancel)
    assert not window.load_preset("bank")
    assert not window.studio.state.scale and window.current_path == path


def test_ctrl_z_in_an_open_table_editor_takes_back_the_typing_then_the_app_edit(window, qtbot):
    window.studio.update(causal=not window.studio.state.causal)
    settle(window)
    causal = window.studio.state.causal
    table = next(t for t in window.tables_dock.findChildren(QtWidgets.QTableView) if t.isVisible())
    focus(window, table, qtbot)
    index = table.model().index(0, 0)
    shown = table.model().data(index)
    table.setCurrentIndex(index)
    table.edit(index)
    editor = QtWidgets.QApplication.focusWidget()
    assert isinstance(editor, QtWidgets.QLineEdit)
    editor.selectAll()
    QTest.keyClicks(editor, "9")
    assert editor.text() == "9"
    key(editor, QtCore.Qt.Key_Z, CTRL)
    assert editor.text() != "9" and window.studio.state.causal == causal  # the typing went back first
    key(editor, QtCore.Qt.Key_Escape)
    assert table.model().data(index) == shown
    table.setFocus()
    key(table, QtCore.Qt.Key_Z, CTRL)
    assert window.studio.state.causal != causal
