"""Unsaved work is asked about on every platform, the offscreen one included: the session's and the
lecture's Save / Discard / Cancel question is really asked (here answered by the ``unsaved`` fixture,
as a person would), and each answer does what it says. A window an export makes asks nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6 import QtGui, QtWidgets

from attn_studio import cli
from attn_studio.scenes import Lecture, example_lecture, read_lecture, write_lecture
from attn_studio.session import read_session
from gui_helpers import settle

Box = QtWidgets.QMessageBox
TINY_BERT = Path(__file__).resolve().parents[1] / "data" / "pretrained" / "tiny-bert"


def test_the_question_is_a_real_dialog_on_the_offscreen_platform_too(window, monkeypatch):
    w = window
    assert QtGui.QGuiApplication.platformName() == "offscreen"
    shown = []

    def question(parent, title, text, buttons, default):
        shown.append((parent, title, text, buttons, default))
        return Box.Cancel

    monkeypatch.setattr(Box, "question", question)  # the dialog itself, as pytest-qt answers dialogs
    w.scenes.open_example()
    w.scenes.delete()
    assert w.lecture_files.ask_unsaved() == Box.Cancel
    assert w.ask_unsaved() == Box.Cancel
    (parent, title, text, buttons, default), (_, session_title, session_text, session_buttons, _) = shown
    assert parent is w and title == "Unsaved lecture" and example_lecture().title in text
    assert session_title == "Unsaved changes" and "session" in session_text
    assert buttons == session_buttons == Box.Save | Box.Discard | Box.Cancel and default == Box.Save
    # Cancel, from the dialog itself: the lecture stays.
    mine = w.scenes.lecture
    assert not w.scenes.open_example() and w.scenes.lecture is mine and len(shown) == 3
    w.lecture_files.saved = mine  # nothing left to ask about on closing
    w.studio.mark_saved()


def test_a_changed_lecture_is_asked_about_and_each_answer_does_what_it_says(window, unsaved, tmp_path):
    w = window
    files = w.lecture_files
    path = tmp_path / "mine.attn-lecture.json"
    mine = Lecture("Mine", example_lecture().scenes[:3])
    write_lecture(mine, path)
    assert files.open(path, ask=False)
    w.scenes.list.setCurrentRow(2)
    w.scenes.delete()
    changed = w.scenes.lecture
    assert files.is_modified and not unsaved.asked
    # Cancel: Help → Example lecture changes nothing.
    unsaved.answer = Box.Cancel
    w.findChild(QtGui.QAction, "exampleLectureAction").trigger()
    assert unsaved.asked == [("Unsaved lecture", "“Mine” has changes that are not saved. Save them first?")]
    assert w.scenes.lecture is changed and read_lecture(path) == mine
    # Save: the change is written to its file, then the example opens.
    unsaved.answer = Box.Save
    assert w.scenes.open_example()
    assert read_lecture(path) == changed and w.scenes.lecture == example_lecture() and len(unsaved.asked) == 2
    # Discard: the change is gone, the file untouched.
    w.scenes.list.setCurrentRow(0)
    w.scenes.delete()
    unsaved.answer = Box.Discard
    assert files.open(path)
    assert w.scenes.lecture == changed and read_lecture(path) == changed and len(unsaved.asked) == 3
    # A title still being typed is a change too: asked about, and saved with the rest.
    w.scenes.scene_title.setText("Typed, not yet left")
    unsaved.answer = Box.Save
    assert w.scenes.open_example() and len(unsaved.asked) == 4
    assert read_lecture(path).scenes[0].title == "Typed, not yet left"


def test_a_changed_session_is_asked_about_and_each_answer_does_what_it_says(window, unsaved, tmp_path, monkeypatch):
    w = window
    w.studio.update(causal=True)
    settle(w)
    unsaved.answer = Box.Cancel
    assert not w.new_session()
    assert w.studio.state.causal and unsaved.asked == [("Unsaved changes", "This session has changes that are not "
                                                                          "saved. Save them first?")]
    target = tmp_path / "kept.attn.json"
    monkeypatch.setattr(w, "save_as_dialog", lambda: w.save_to(target))
    unsaved.answer = Box.Save
    assert w.new_session()
    assert read_session(target).causal is True and not w.studio.state.causal and len(unsaved.asked) == 2
    w.studio.update(heads=3)
    settle(w)
    unsaved.answer = Box.Discard
    assert w.new_session() and w.studio.state.heads != 3 and len(unsaved.asked) == 3
    assert w.new_session() and len(unsaved.asked) == 3  # nothing changed: nothing asked


def test_closing_asks_about_the_session_and_the_lecture(window, unsaved):
    w = window
    w.scenes.open_example()
    w.scenes.delete()
    settle(w)
    w.studio.update(causal=not w.studio.state.causal)
    settle(w)
    unsaved.answer = Box.Cancel
    assert not w.close() and w.isVisible()
    assert [title for title, _ in unsaved.asked] == ["Unsaved changes"]  # cancelled at the first question
    unsaved.answer = Box.Discard
    assert w.close() and not w.isVisible()
    assert [title for title, _ in unsaved.asked] == ["Unsaved changes", "Unsaved changes", "Unsaved lecture"]


@pytest.mark.parametrize("kind", ["model", "lecture"])
def test_a_window_made_for_an_export_closes_without_asking(kind, unsaved, qapp, tmp_path):
    # A trained model's studio starts unsaved (nothing was opened from a file): the export's window
    # closing would ask, and on a server nobody answers.
    if kind == "model":
        out = tmp_path / "heatmaps.png"
        argv = ["export", "--model", str(TINY_BERT), "--text", "a river bank", "--panel", "heatmaps", "--out", str(out)]
    else:
        path = tmp_path / "two.attn-lecture.json"
        write_lecture(Lecture("Two", example_lecture().scenes[:2]), path)
        out = tmp_path / "handout.pdf"
        argv = ["export", "--lecture", str(path), "--out", str(out)]
    assert cli.main(argv) == 0
    assert out.exists() and unsaved.asked == []


def test_a_test_answers_the_dialog_itself_as_pytest_qt_does(window, monkeypatch):
    # The dialog is what asks (nothing in the product answers for the person): a test that replaces
    # QMessageBox.question answers it, closing included.
    w = window
    w.scenes.open_example()
    w.scenes.delete()
    mine = w.scenes.lecture
    answers = []
    monkeypatch.setattr(Box, "question", lambda parent, title, *rest: answers.append(title) or Box.Cancel)
    assert not w.close() and w.isVisible() and w.scenes.lecture is mine and answers == ["Unsaved lecture"]
    monkeypatch.setattr(Box, "question", lambda parent, title, *rest: answers.append(title) or Box.Discard)
    assert w.close() and not w.isVisible() and answers == ["Unsaved lecture", "Unsaved lecture"]
