"""While the stage draws what a key brought, the runs a lecture trains ahead wait: beside such a training a
scene took twice as long to draw (the training's Python took the interpreter's lock from the drawing)."""

from __future__ import annotations

import threading

from PySide6 import QtCore
from PySide6.QtTest import QTest

from attn_studio.gui.qt import worker
from attn_studio.gui.training import turns as turns_module
from attn_studio.gui.training.turns import HeadlessTurns


class Panel:  # what the turns rank: any object a weak reference can hold
    pass


def test_a_run_trained_ahead_waits_while_the_stage_is_quiet_and_a_run_waited_for_does_not(monkeypatch):
    quiet = {"left": 5.0}
    monkeypatch.setattr(turns_module, "quiet_left", lambda: quiet["left"])
    monkeypatch.setattr(turns_module, "TURN_LOOK_S", 0.01)
    turns, ahead, waited = HeadlessTurns(), Panel(), Panel()
    turns.ahead(ahead, 3, keep_higher=False)
    got, said = threading.Event(), []

    def train_ahead():
        if turns.wait_turn(ahead, lambda: False, said.append):
            got.set()
            turns.done(ahead)

    thread = threading.Thread(target=train_ahead)
    thread.start()
    assert not got.wait(0.3), "a run trained ahead took its turn while the stage was quiet"
    assert said == []  # held back by the quiet stage alone: it does not say it waits for another run
    turns.first(waited)  # the stage waits for this one: it trains, quiet or not
    assert turns.wait_turn(waited, lambda: False, lambda on: None)
    turns.done(waited)
    turns.leave(waited)
    quiet["left"] = 0.0  # the stage has drawn: the run trained ahead goes on
    assert got.wait(5)
    thread.join(5)
    assert said == []


def test_a_key_on_the_stage_and_a_scene_asked_for_keep_the_machine_quiet(window, qtbot, monkeypatch):
    from attn_studio.scenes import Lecture, Scene
    from attn_studio.session import load_preset
    from lecture_walk import idle

    asked = []
    monkeypatch.setattr(worker, "_QUIET_UNTIL", [0.0])
    real = worker.keep_quiet
    monkeypatch.setattr("attn_studio.gui.lecture.stage.keep_quiet", lambda s: asked.append(("key", s)) or real(s))
    monkeypatch.setattr("attn_studio.gui.lecture.scene_show.keep_quiet",
                        lambda s: asked.append(("scene", s)) or real(s))
    w = window
    scenes = tuple(Scene.of_state(title, load_preset("journey"), selection={"page": 0, "last": 0})
                   for title in ("one", "two"))
    w.scenes.set_lecture(Lecture("quiet", scenes), record=False)
    w.scenes.go(0)
    idle(w)
    stage = w.present.enter(geometry=QtCore.QRect(0, 0, 1280, 720))
    idle(w)
    try:
        asked.clear()
        monkeypatch.setattr(worker, "_QUIET_UNTIL", [0.0])
        QTest.keyClick(stage, QtCore.Qt.Key_PageDown)  # the clicker's next: a key, then the scene it asks for
        idle(w)
        assert [what for what, _ in asked] == ["key", "scene"] and all(s >= 1.0 for _, s in asked)
        assert w.scenes.current == 1  # the second scene is shown
    finally:
        w.present.leave()
