"""A lecture's files in the window, as sessions have theirs: Save / Save As, File → Open Recent, a
dropped lecture file, the unsaved-changes question (closing, opening another), autosave and the
recovery of an unsaved lecture after a crash (offered with the session's work)."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6 import QtGui, QtWidgets

from attn_studio.gui import MainWindow
from attn_studio.gui.window import data_dir
from attn_studio.scenes import Lecture, LectureRecovery, example_lecture, read_lecture, write_lecture
from attn_studio.recovery import RecoveryStore
from attn_studio.state import StudioState
from gui_helpers import drop_files, settle

Box = QtWidgets.QMessageBox


def _own_lecture() -> Lecture:
    lecture = example_lecture()
    first = dataclasses.replace(lecture.scenes[0], title="Written before the crash", caption="kept")
    return Lecture("Tuesday's lecture", (first, *lecture.scenes[1:4]))


@pytest.fixture
def win(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    settle(w)
    yield w
    w.studio.mark_saved()
    w.lecture_files.saved = w.scenes.lecture  # nothing to ask about on closing
    w.close()


def _answer(monkeypatch, w, answer):
    asked = []
    monkeypatch.setattr(w.lecture_files, "ask_unsaved", lambda: asked.append(1) or answer)
    return asked


def test_save_marks_the_lecture_saved_and_lists_it_in_open_recent(win, tmp_path):
    w = win
    w.scenes.add_current()
    assert w.lecture_files.is_modified and w.scenes.title_label.text().endswith("not saved yet •")
    files = w.lecture_files
    # Save with no file yet asks for a name (Save As).
    target = tmp_path / "talk"
    asked = []
    files.save_as_dialog = lambda: asked.append(1) or files.save_to(target)
    w.findChild(QtGui.QAction, "saveLectureAction").trigger()
    path = tmp_path / "talk.attn-lecture.json"
    assert asked and path.exists() and read_lecture(path) == w.scenes.lecture
    assert not files.is_modified and w.scenes.title_label.text().endswith("talk.attn-lecture.json")
    assert w.recent_files()[0] == str(path.resolve())
    # A change, then Save writes to the same file without asking.
    w.scenes.list.setCurrentRow(0)
    w.scenes.duplicate()
    assert files.is_modified
    w.findChild(QtGui.QAction, "saveLectureAction").trigger()
    assert len(asked) == 1 and len(read_lecture(path).scenes) == 2 and not files.is_modified
    # File → Open Recent lists the lecture, and choosing it opens it.
    w.scenes.set_lecture(None, record=False)
    w.files.recent_menu.aboutToShow.emit()
    entry = next(a for a in w.files.recent_menu.actions() if a.toolTip() == str(path.resolve()))
    assert entry.text() == "talk.attn-lecture.json"
    entry.trigger()
    settle(w)
    assert w.scenes.lecture == read_lecture(path) and files.path == path and w.scenes.current == 0


def test_a_dropped_lecture_file_opens_it(win, tmp_path):
    w = win
    path = tmp_path / "dropped.attn-lecture.json"
    write_lecture(_own_lecture(), path)
    before = w.studio.state
    assert drop_files(w, path).isAccepted()
    settle(w)
    assert w.scenes.lecture == _own_lecture() and w.scenes.current == 0
    assert w.studio.state.sentence == _own_lecture().scenes[0].session["sentence"]
    assert w.scenes_dock.isVisible() and w.lecture_files.path == path


def test_unsaved_changes_are_asked_about_on_closing_and_opening_another(win, tmp_path, monkeypatch, qtbot):
    w = win
    other = tmp_path / "other.attn-lecture.json"
    write_lecture(_own_lecture(), other)
    w.scenes.add_current()
    mine = w.scenes.lecture
    # Cancel: the window stays open, the lecture stays.
    asked = _answer(monkeypatch, w, Box.Cancel)
    w.close()
    assert asked and w.isVisible() and w.scenes.lecture is mine
    assert not w.lecture_files.open(other) and w.scenes.lecture is mine
    assert not w.scenes.open_example() and w.scenes.lecture is mine
    # Save: written first (asked for a name: there is none yet), then the other opens.
    saved_to = tmp_path / "mine.attn-lecture.json"
    _answer(monkeypatch, w, Box.Save)
    monkeypatch.setattr(w.lecture_files, "save_as_dialog", lambda: w.lecture_files.save_to(saved_to))
    assert w.lecture_files.open(other)
    assert read_lecture(saved_to) == mine and w.scenes.lecture == _own_lecture()
    # Nothing unsaved: nothing asked.
    asked = _answer(monkeypatch, w, Box.Cancel)
    assert w.scenes.open_example() and not asked
    # Discard: the window closes.
    w.scenes.delete()
    _answer(monkeypatch, w, Box.Discard)
    w.close()
    assert not w.isVisible()


def test_an_unsaved_lecture_is_autosaved_and_a_clean_close_leaves_nothing(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    files = w.lecture_files
    files.autosave_timer.setInterval(20)
    w.scenes.open_example()
    settle(w)
    qtbot.wait(60)
    assert not files.recovery.path.exists()  # the example as shipped: nothing to keep
    w.scenes.list.setCurrentRow(2)
    w.scenes.delete()
    qtbot.waitUntil(lambda: files.recovery.path.exists(), timeout=3000)
    assert read_lecture(files.recovery.path) == w.scenes.lecture
    assert len(w.scenes.lecture.scenes) == len(example_lecture().scenes) - 1
    files.saved = w.scenes.lecture  # nothing to ask about
    w.close()
    assert not files.recovery.path.exists()


def test_after_a_crash_the_lecture_is_offered_with_the_session_and_restored(qtbot):
    # What a crash leaves: a session and a lecture autosaved by a process that no longer runs.
    crashed_session = RecoveryStore(data_dir(), pid=2**22 + 4321)
    crashed_session.save(StudioState(sentence="work from before the crash", d_model=2, d_head=2))
    crashed = LectureRecovery(data_dir(), pid=2**22 + 4321)
    crashed.save(_own_lecture())
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    banner = w.findChild(QtWidgets.QFrame, "recoveryBanner")
    assert banner is not None and banner.isVisible()
    texts = " ".join(label.text() for label in banner.findChildren(QtWidgets.QLabel))
    assert "unsaved work and a lecture" in texts
    w.findChild(QtWidgets.QPushButton, "restoreButton").click()
    settle(w)
    assert w.studio.state.sentence == "work from before the crash"
    assert w.scenes.lecture == _own_lecture() and w.scenes_dock.isVisible()
    assert w.lecture_files.is_modified and w.lecture_files.path is None  # unsaved until saved somewhere
    assert not crashed.path.exists() and not crashed_session.path.exists()
    w.lecture_files.saved = w.scenes.lecture
    w.studio.mark_saved()
    w.close()


def test_a_lecture_alone_is_offered_and_a_running_studios_is_not(qtbot):
    crashed = LectureRecovery(data_dir(), pid=2**22 + 9876)
    crashed.save(_own_lecture())
    running = LectureRecovery(data_dir())  # this process's: its lock is held
    running.save(example_lecture())
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    banner = w.findChild(QtWidgets.QFrame, "recoveryBanner")
    texts = " ".join(label.text() for label in banner.findChildren(QtWidgets.QLabel))
    assert "an unsaved lecture" in texts
    w.findChild(QtWidgets.QPushButton, "discardRecoveryButton").click()
    assert not crashed.path.exists() and running.path.exists()
    assert w.scenes.lecture is None and not banner.isVisible()
    running.clear()
    w.close()
