"""Lecture scenes in the window: Help → Example lecture, the Scenes panel's edits (undoable), and
playing the scenes on the stage with a clicker's keys (PageDown, ←/→ past the last stage, Home, End,
G + number + Enter); a live edit never changes the saved scene.

The training scenes show their runs from the suite's shared runs (tests/shared_runs.py: the same runs,
trained once for the session); test_lecture_ablation_scene.py trains one on the stage."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.gui.files.figures import done_with
from attn_studio.gui.lecture import handout
from attn_studio.scenes import example_lecture, read_lecture
from gui_helpers import put_lecture_away, settle, wait_idle
from shared_runs import shared_training

WINDOW_PRESET = "journey"
WINDOW_SIZE = (1280, 720)
PROJECTOR = QtCore.QRect(0, 0, 1280, 720)


@pytest.fixture
def window(shared_window, qtbot, monkeypatch):
    w = shared_window
    w.scenes.set_lecture(None, record=False)
    w.scenes._undo.clear()
    w.scenes._redo.clear()
    with shared_training(monkeypatch):
        yield w
        put_lecture_away(qtbot, w)


def test_help_opens_the_example_lecture_on_its_first_scene(window):
    w = window
    action = w.findChild(QtGui.QAction, "exampleLectureAction")
    assert action is not None
    action.trigger()
    settle(w)
    lecture = w.scenes.lecture
    assert lecture == example_lecture() and w.scenes.current == 0
    assert w.scenes_dock.isVisible()
    scene = lecture.scenes[0]
    assert w.studio.state.sentence == scene.session["sentence"]
    assert w.view_tabs.tabText(w.view_tabs.currentIndex()) == scene.view
    items = w.scenes.list
    assert [items.item(i).text() for i in range(items.count())][0] == f"1. {scene.title}"


def test_a_clicker_plays_the_scenes_on_the_stage_and_a_live_edit_keeps_the_saved_scene(window, qtbot):
    w = window
    w.scenes.open_example()
    settle(w)
    stage = w.present.enter(geometry=PROJECTOR)
    settle(w)
    caption = stage.findChild(QtWidgets.QLabel, "presentCaption")
    assert caption.text().startswith(w.scenes.lecture.scenes[0].caption[:30])
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown, QtCore.Qt.ShiftModifier)  # scene to scene
    settle(w)
    second = w.scenes.lecture.scenes[1]
    assert w.scenes.current == 1 and w.present.view == second.view and not w.studio.state.scale
    assert caption.text().startswith(second.caption[:30])
    # A live change during the scene: the lecture keeps its own.
    QTest.keyClick(stage, QtCore.Qt.Key_S)
    settle(w)
    assert w.studio.state.scale
    assert w.scenes.lecture.scenes[1].session["scale"] is False
    QTest.keyClick(stage, QtCore.Qt.Key_PageUp, QtCore.Qt.ShiftModifier)
    settle(w)
    assert w.scenes.current == 0
    for key in (QtCore.Qt.Key_G, QtCore.Qt.Key_6, QtCore.Qt.Key_Return):
        QTest.keyClick(stage, key)
    settle(w)
    assert w.scenes.current == 5 and w.studio.state.heads == 4
    QTest.keyClick(stage, QtCore.Qt.Key_3)  # a digit alone still chooses the head
    settle(w)
    assert w.scenes.current == 5 and w.studio.state.shown_head == 2
    QTest.keyClick(stage, QtCore.Qt.Key_Home)
    settle(w)
    assert w.scenes.current == 0
    # ← → go through the view's own steps first (from the scene's start), then to the next scene.
    steps, start = len(w.pipeline_view.steps), w.pipeline_view.current_step
    assert start == w.scenes.lecture.scenes[0].selection["step"]
    for _ in range(steps - 1 - start):
        QTest.keyClick(stage, QtCore.Qt.Key_Right)
    settle(w)
    assert w.scenes.current == 0 and w.pipeline_view.current_step == steps - 1
    QTest.keyClick(stage, QtCore.Qt.Key_Right)
    settle(w)
    assert w.scenes.current == 1
    QTest.keyClick(stage, QtCore.Qt.Key_End)
    wait_idle(qtbot, w)
    assert w.scenes.current == len(w.scenes.lecture.scenes) - 1
    assert w.present.view == w.scenes.lecture.scenes[-1].view


def test_every_view_of_the_stage_becomes_a_scene_that_plays_back(window, qtbot, tmp_path):
    """Ctrl+M on each view the stage can show (the √d_k plots' page 2 among them) adds a scene; the
    lecture saved and opened again plays each back: its view, its page and the model as it was."""
    w = window
    stage = w.present.enter(geometry=PROJECTOR)
    settle(w)
    shown = []
    for i, view in enumerate(w.present.views()):
        w.present.go_to(view)
        w.studio.update(temperature=1.0 + 0.1 * i)  # each scene a state of its own
        wait_idle(qtbot, w)
        if view == "Why divide by √d_k":
            QTest.keyClick(stage, QtCore.Qt.Key_Right)  # its second plot
            settle(w)
            assert w.present.page == 1
        QTest.keyClick(stage, QtCore.Qt.Key_M, QtCore.Qt.ControlModifier)
        settle(w)
        assert stage.caption.text() == f"Added as scene {i + 1} of {i + 1}"  # said on the stage itself
        shown.append((view, w.present.page, w.studio.state.temperature))
    lecture = w.scenes.lecture
    assert [s.view for s in lecture.scenes] == [view for view, _, _ in shown]
    path = tmp_path / "every.attn-lecture.json"
    assert w.scenes.files.save_to(path) and read_lecture(path) == lecture
    assert w.scenes.files.open(path, ask=False) and w.scenes.lecture == lecture
    for i in reversed(range(len(shown))):  # backwards: each scene from another view
        w.scenes.go(i)
        wait_idle(qtbot, w)
        view, page, temperature = shown[i]
        assert (w.present.view, w.present.page, w.studio.state.temperature) == (view, page, temperature)
    # Its hand-out page is the √d_k panel's second plot, as on the stage.
    variance = next(i for i, s in enumerate(lecture.scenes) if s.view == "Why divide by √d_k")
    panel = handout.scene_panel(w, lecture.scenes[variance])
    try:
        assert panel.name == "saturation"
    finally:
        done_with(panel)


def test_the_panel_adds_renames_reorders_and_deletes_scenes_undoably(window):
    w = window
    panel = w.scenes
    w.studio.update(causal=True)
    settle(w)
    panel.add_action.trigger()
    settle(w)
    assert panel.lecture is not None and len(panel.lecture.scenes) == 1
    assert panel.lecture.scenes[0].session["causal"] is True and w.scenes_dock.isVisible()
    w.studio.update(heads=2, projections=True)
    settle(w)
    panel.add_current()
    settle(w)
    assert len(panel.lecture.scenes) == 2 and panel.lecture.scenes[1].session["heads"] == 2
    panel.list.setCurrentRow(1)
    panel.scene_title.setText("Two heads")
    panel.scene_title.editingFinished.emit()
    panel.caption.setText("two heads, one sentence")
    panel.caption.editingFinished.emit()
    assert panel.lecture.scenes[1].title == "Two heads" and panel.lecture.scenes[1].caption == "two heads, one sentence"
    panel.scene_title.setText("")  # refused: the old title stays
    panel.scene_title.editingFinished.emit()
    assert panel.lecture.scenes[1].title == "Two heads" and panel.scene_title.text() == "Two heads"
    panel.list.model().moveRow(QtCore.QModelIndex(), 1, QtCore.QModelIndex(), 0)  # a drag to the top
    settle(w)
    assert [s.title for s in panel.lecture.scenes] == ["Two heads", "Scene 1"]
    panel.list.setCurrentRow(0)
    panel.duplicate()
    assert [s.title for s in panel.lecture.scenes] == ["Two heads", "Two heads (copy)", "Scene 1"]
    panel.list.setCurrentRow(2)
    panel.delete()
    assert [s.title for s in panel.lecture.scenes] == ["Two heads", "Two heads (copy)"]
    panel.undo()
    assert [s.title for s in panel.lecture.scenes] == ["Two heads", "Two heads (copy)", "Scene 1"]
    panel.redo()
    assert len(panel.lecture.scenes) == 2
    # Update: what is shown now becomes the selected scene's own, its title and caption kept.
    panel.list.setCurrentRow(0)
    w.studio.update(temperature=2.0)
    settle(w)
    panel.update_current()
    scene = panel.lecture.scenes[0]
    assert scene.session["temperature"] == 2.0 and scene.title == "Two heads"
    assert scene.caption == "two heads, one sentence"
    assert panel.go(1) and w.studio.state.temperature == 1.0


def test_a_lecture_is_saved_and_opened_again_the_same(window, tmp_path):
    w = window
    w.scenes.open_example()
    path = tmp_path / "mine.attn-lecture.json"
    assert w.scenes.save_lecture(path) and path.exists()
    w.scenes.set_lecture(None, record=False)
    assert w.scenes.open_lecture(path)
    assert w.scenes.lecture == example_lecture() and w.scenes.current == 0
    broken = tmp_path / "broken.attn-lecture.json"
    broken.write_text('{"kind": "lecture", "schema_version": 1, "title": "x", "scenes": [{"view": 3}]}')
    assert not w.scenes.open_lecture(broken)
    assert w.scenes.lecture == example_lecture()  # what was open stays
    assert "scene 1" in w.message_label.text()


def test_the_windows_handout_writes_a_page_a_scene_and_cancel_stops_it(window, tmp_path):
    import re

    w = window
    action = w.findChild(QtGui.QAction, "exportHandoutAction")
    assert action is not None
    w.scenes.open_example()
    lecture = w.scenes.lecture
    short = type(lecture)(lecture.title, lecture.scenes[:4])
    w.scenes.set_lecture(short)
    w.scenes.go(3)  # the causal mask
    out = tmp_path / "handout.pdf"
    seen = []
    assert w.scenes.export_handout(out, ask_cancel=lambda d, t: seen.append((d, t)) and False) == [out]
    assert seen[-1] == (4, 4)
    assert len(re.findall(rb"/Type\s*/Page\b", out.read_bytes())) == 4
    assert w.scenes.current == 3 and w.studio.state.causal  # the scene shown before is shown again
    cancelled = tmp_path / "cancelled.pdf"
    assert w.scenes.export_handout(cancelled, ask_cancel=lambda d, t: d >= 2) == []
    assert not cancelled.exists()
