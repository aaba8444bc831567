"""Sessions in the window: save, open, unsaved mark, close question, drop, autosave, recovery."""


import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets

from attn_studio.gui import MainWindow
from attn_studio.gui.window import data_dir
from attn_studio.session import read_session, write_session
from attn_studio.recovery import RecoveryStore
from attn_studio.state import StudioState
from gui_helpers import drop_files


@pytest.fixture
def win(document_window):
    # One window serves the tests that do not close it: its state undone (the shared reset), then
    # its document (file, example, recent files, message, title) put back and checked.
    document_window.bridge.flush()
    return document_window


@pytest.fixture
def closing_win(qtbot):
    """A new window for a test that closes it."""
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    w.bridge.flush()
    return w


def test_save_and_open_round_trip_every_number(win, tmp_path, qtbot):
    win.studio.update(causal=True, projections=True, heads=2, d_model=4, d_head=2)
    win.studio.set_weight("w_q", 1, 2, 1, "0.123")
    win.studio.set_embedding("journey", 3, "-1.5")
    path = tmp_path / "lecture.attn.json"
    assert win.save_to(path)
    saved = win.studio.state
    result = win.studio.result

    other = MainWindow(preset="bank")
    qtbot.addWidget(other)
    assert other.open_file(path)
    other.bridge.flush()
    assert other.studio.state.to_dict() == saved.to_dict()
    for field in ("scores", "weights", "output"):
        np.testing.assert_array_equal(getattr(other.studio.result, field), getattr(result, field))
    assert other.causal_check.isChecked()
    assert "lecture.attn.json" in other.windowTitle()


def test_unsaved_change_marks_the_title_and_saving_clears_it(win, tmp_path):
    assert "•" not in win.windowTitle()
    win.studio.update(causal=True)
    win.bridge.flush()
    assert "•" in win.windowTitle() and win.isWindowModified()
    assert win.save_to(tmp_path / "a.attn.json")
    assert "•" not in win.windowTitle() and not win.isWindowModified()
    # Selecting a query token is not an edit.
    win.studio.select(query=3)
    win.bridge.flush()
    assert "•" not in win.windowTitle()


def test_close_with_unsaved_changes_asks_and_cancel_keeps_the_window(closing_win, monkeypatch, tmp_path):
    w = closing_win
    asked = []
    monkeypatch.setattr(w, "ask_unsaved", lambda: asked.append(1) or QtWidgets.QMessageBox.Cancel)
    w.studio.update(causal=True)
    assert not w.close()
    assert asked and w.isVisible()
    # Save writes the file and lets the window close.
    target = tmp_path / "kept.attn.json"
    monkeypatch.setattr(w, "ask_unsaved", lambda: QtWidgets.QMessageBox.Save)
    monkeypatch.setattr(w, "save_as_dialog", lambda: w.save_to(target))
    assert w.close()
    assert read_session(target).causal is True


def test_close_without_changes_does_not_ask(closing_win, monkeypatch):
    w = closing_win
    monkeypatch.setattr(w, "ask_unsaved", lambda: pytest.fail("asked although nothing changed"))
    assert w.close()


def test_opening_a_broken_file_changes_nothing_and_says_why(win, tmp_path):
    before = win.studio.state
    bad = tmp_path / "broken.attn.json"
    bad.write_text('{"schema_version": 1, "d_model": "three"}')
    assert not win.open_file(bad)
    assert win.studio.state is before
    assert win.message_label.isVisible()
    assert "d_model" in win.message_label.text()


def test_save_to_a_missing_folder_fails_with_a_message_and_keeps_the_state(win, tmp_path):
    win.studio.update(causal=True)
    assert not win.save_to(tmp_path / "no" / "such" / "folder.attn.json")
    assert win.studio.is_modified
    assert "does not exist" in win.message_label.text()


def test_dropping_a_session_file_opens_it(win, tmp_path):
    path = tmp_path / "dropped.attn.json"
    write_session(path, StudioState(sentence="drop me here", d_model=2, d_head=2))
    assert drop_files(win, path).isAccepted()
    win.bridge.flush()
    assert win.studio.state.sentence == "drop me here"
    assert win.sentence_edit.text() == "drop me here"


def test_recent_files_remember_saved_sessions(win, tmp_path):
    for name in ("one", "two"):
        assert win.save_to(tmp_path / f"{name}.attn.json")
    recent = win.recent_files()
    assert recent[0].endswith("two.attn.json") and recent[1].endswith("one.attn.json")
    # Kept in the settings file, so a new window sees them too.
    assert (data_dir() / "settings.ini").exists()


def test_autosave_writes_the_recovery_file_and_a_clean_close_removes_it(closing_win, qtbot, unsaved):
    w = closing_win
    w.files.autosave_timer.setInterval(20)
    w.studio.update(causal=True)
    w.bridge.flush()
    qtbot.waitUntil(lambda: w.recovery.path.exists(), timeout=3000)
    assert read_session(w.recovery.path).causal is True
    unsaved.answer = QtWidgets.QMessageBox.Discard
    assert w.close()
    assert [title for title, _ in unsaved.asked] == ["Unsaved changes"]  # asked, and Discard chosen
    assert not w.recovery.path.exists()


def test_after_a_crash_the_next_start_offers_the_work_and_restores_it(qtbot):
    # A recovery file left by a process that no longer runs is what a crash leaves.
    crashed = RecoveryStore(data_dir(), pid=2**22 + 12345)
    crashed.save(StudioState(sentence="work from before the crash", d_model=2, d_head=2, causal=True))
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    banner = w.findChild(QtWidgets.QFrame, "recoveryBanner")
    assert banner is not None and banner.isVisible()
    w.findChild(QtWidgets.QPushButton, "restoreButton").click()
    w.bridge.flush()
    assert w.studio.state.sentence == "work from before the crash"
    assert w.studio.state.causal is True
    assert w.studio.is_modified  # restored work is not saved anywhere yet
    assert not crashed.path.exists()
    assert not banner.isVisible()


def test_discarding_recovered_work_deletes_it(qtbot):
    crashed = RecoveryStore(data_dir(), pid=2**22 + 54321)
    crashed.save(StudioState(sentence="unwanted"))
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    before = w.studio.state
    w.findChild(QtWidgets.QPushButton, "discardRecoveryButton").click()
    assert not crashed.path.exists()
    assert w.studio.state is before


def test_new_session_starts_clean(win, unsaved):
    win.studio.update(causal=True)
    unsaved.answer = QtWidgets.QMessageBox.Discard
    assert win.new_session()
    assert [title for title, _ in unsaved.asked] == ["Unsaved changes"]  # the change was asked about
    assert win.studio.state == StudioState()
    assert not win.studio.is_modified


def test_the_shortcut_list_keeps_the_menu_bar_under_the_recovery_banner(qtbot):
    # The banner and the menu bar share the menu widget; asking Qt for menuBar() then
    # would put a new, empty bar in its place, and autosave would stop with it.
    crashed = RecoveryStore(data_dir(), pid=2**22 + 24680)
    crashed.save(StudioState(sentence="before the crash"))
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()  # shortcuts reach the active window only
    qtbot.waitUntil(lambda: QtWidgets.QApplication.activeWindow() is w)
    holder = w.menuWidget()
    menus = [a.text() for a in w.findChild(QtWidgets.QMenuBar).actions()]
    assert "&File" in menus
    qtbot.keyClick(w, QtCore.Qt.Key_F1)
    qtbot.waitUntil(lambda: getattr(w, "shortcuts_dialog", None) is not None, timeout=3000)
    dialog = w.shortcuts_dialog
    assert dialog is not None and dialog.isVisible()
    table = dialog.findChild(QtWidgets.QTableWidget)
    keys = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert "Ctrl+S" in keys  # the list is read from the real menus, not an empty new bar
    dialog.close()
    assert w.menuWidget() is holder
    bars = w.findChildren(QtWidgets.QMenuBar)
    assert len(bars) == 1 and [a.text() for a in bars[0].actions()] == menus
    assert w.findChild(QtWidgets.QFrame, "recoveryBanner").isVisible()
    # Autosave still runs.
    w.files.autosave_timer.setInterval(20)
    w.studio.update(causal=True)
    w.bridge.flush()
    qtbot.waitUntil(lambda: w.recovery.path.exists() and read_session(w.recovery.path).causal is True, timeout=3000)
