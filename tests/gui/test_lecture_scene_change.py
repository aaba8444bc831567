"""Going to a scene that takes longer than one event-loop turn (all-MiniLM-L6-v2 opened off the GUI
thread): the stage keeps showing the scene before, is not painted while the new one is computed and
drawn, and is painted first with the new scene drawn whole. Skipped where the model is not installed."""

from __future__ import annotations

import json
import time

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.pretrained import default_model_zip
from attn_studio.session import state_to_json
from gui_helpers import put_lecture_away, settle, wait_idle

pytestmark = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")

WINDOW_PRESET = "journey"
PROJECTOR = QtCore.QRect(0, 0, 1280, 720)


@pytest.fixture
def window(shared_window, qtbot):
    yield shared_window
    put_lecture_away(qtbot, shared_window)


class _Paints(QtCore.QObject):
    """Every paint of the stage or a widget on it, with whether the scene asked for was still being shown."""

    def __init__(self, stage, panel):
        super().__init__()
        self.stage, self.panel, self.seen = stage, panel, []

    def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
        if event.type() == QtCore.QEvent.Paint and isinstance(obj, QtWidgets.QWidget) \
                and (obj is self.stage or self.stage.isAncestorOf(obj)):
            self.seen.append(self.panel.showing())
        return False


def _page_down_and_watch(w, stage, key=QtCore.Qt.Key_PageDown, presses=1):
    """Press ``key`` on the stage and turn the event loop until the scene is drawn whole; returns
    (turns taken, turns in which the studio was still the scene before's, paints while showing)."""
    app = QtWidgets.QApplication.instance()
    paints = _Paints(stage, w.scenes)
    app.installEventFilter(paints)
    was_trained = w.studio.is_trained
    turns = old_turns = 0
    try:
        for _ in range(presses):
            QTest.keyClick(stage, key)
        deadline = time.monotonic() + 60
        while w.scenes.showing() and time.monotonic() < deadline:
            app.processEvents()
            turns += 1
            old_turns += w.studio.is_trained == was_trained and w.scenes.showing()
            time.sleep(0.005)
    finally:
        app.removeEventFilter(paints)
    assert not w.scenes.showing(), "the scene was never drawn"
    return turns, old_turns, sum(paints.seen)


def _before_minilm(w, qtbot):
    """The example lecture on the stage at the toy scene before MiniLM's: (lecture, MiniLM's index, stage)."""
    w.scenes.open_example()
    lecture = w.scenes.lecture
    minilm = next(i for i, s in enumerate(lecture.scenes) if s.trained)
    stage = w.present.enter(geometry=PROJECTOR)
    w.scenes.go(minilm - 1)
    wait_idle(qtbot, w)
    while w.present.position() < w.present.last_position():  # its last page: PageDown goes on to MiniLM
        QTest.keyClick(stage, QtCore.Qt.Key_Right)
        wait_idle(qtbot, w)
    return lecture, minilm, stage


def test_a_trained_scene_shows_the_scene_before_until_it_is_drawn_whole(window, qtbot):
    w = window
    lecture, minilm, stage = _before_minilm(w, qtbot)
    assert not w.scenes.showing() and not w.studio.is_trained
    turns, old_turns, painted_meanwhile = _page_down_and_watch(w, stage)
    # The model took turns to open, and in none of them was the stage painted.
    assert old_turns > 1 and turns > old_turns
    assert painted_meanwhile == 0
    # What is painted first is the new scene drawn whole: nothing changes when everything settles.
    first = stage.grab().toImage()
    wait_idle(qtbot, w)
    for _ in range(3):
        settle(w)
    assert w.studio.is_trained and w.scenes.current == minilm
    assert stage.grab().toImage() == first
    assert not w.statusBar().currentMessage().startswith("Opening ")  # opened: it no longer says it opens
    caption = stage.findChild(QtWidgets.QLabel, "presentCaption").text()
    assert caption.startswith(lecture.scenes[minilm].caption[:30])
    # From a trained scene to the next (head 4.2 silenced, a view lent to the stage): the same.
    turns, old_turns, painted_meanwhile = _page_down_and_watch(w, stage)
    assert turns >= 1 and painted_meanwhile == 0
    first = stage.grab().toImage()
    wait_idle(qtbot, w)
    for _ in range(3):
        settle(w)
    later = stage.grab().toImage()
    assert later == first
    assert w.present.view == lecture.scenes[minilm + 1].view
    assert json.loads(state_to_json(w.studio.state))["edits"]["head_scale"] == [[3, 1, 0.0]]


def test_pressed_twice_while_a_model_opens_it_ends_on_the_later_scene(window, qtbot):
    w = window
    lecture, minilm, stage = _before_minilm(w, qtbot)
    _, _, painted_meanwhile = _page_down_and_watch(w, stage, presses=2)
    wait_idle(qtbot, w)
    assert painted_meanwhile == 0
    assert w.scenes.current == minilm + 1 and w.present.view == lecture.scenes[minilm + 1].view
    assert stage.updatesEnabled()
