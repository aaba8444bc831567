"""Warm-up: the runs a lecture's training scenes show, trained ahead while presenting, so that a clicker
reaching one rarely waits.

When Present starts on a lecture (or the lecture changes, or another of its scenes is shown, while
presenting), each training panel the scenes to come use is given the run of its first scene from the
current one on (the same rule as the stage's: the scene's seed or else the panel's, to its steps,
``scene_show.saved_run``), trained headless on the panel's worker. One run per panel at a time (two scenes
of the same run share it: it is trained once), and one training at a time among the panels, the earliest
scene's first, after any run the stage waits for (``training.turns.TURNS``). A panel whose run plays in the
lab, or whose next scene shows the panel's own run (it saved no steps), is left as it is: the scene rule
alone changes it, when its scene is reached.
"""

from __future__ import annotations

from PySide6 import QtCore

from .basics import TRAINING_PREFIX
from .scene_show import saved_run


def runs_ahead(present, lecture, start: int) -> list[tuple[object, int, int, int]]:
    """(panel, seed, steps, scene index) of the runs to train ahead for ``lecture``'s scenes from ``start``
    on: per training panel, its first scene's run, in the scenes' order."""
    runs, seen = [], set()
    for index in range(max(start, 0), len(lecture.scenes)):
        scene = lecture.scenes[index]
        if not scene.view.startswith(TRAINING_PREFIX) or scene.view in seen:
            continue
        seen.add(scene.view)
        lab = present.training_panel(scene.view)
        if lab is None or not hasattr(lab, "play_to"):
            continue
        run = saved_run(lab, scene.selection)
        if run is not None and run[1] > 0:
            runs.append((lab, run[0], run[1], index))
    return runs


class WarmUp(QtCore.QObject):
    """Trains ahead the runs of ``panel``'s lecture (the Scenes panel of ``window``) while presenting."""

    def __init__(self, window, panel):
        super().__init__(panel)
        self.window, self.panel = window, panel
        self.asked: list[tuple[object, int, int, int]] = []  # the runs asked for last (tests read them)
        # After the turn: F5 toggles the action before the stage is made; a lecture opened or a scene shown
        # says so before the stage has drawn it.
        self._soon = QtCore.QTimer(self, singleShot=True, interval=0)
        self._soon.timeout.connect(self.refresh)
        window.present.action.toggled.connect(lambda on: on and self._soon.start())
        panel.lectureChanged.connect(self._soon.start)
        panel.sceneShown.connect(lambda _i: self._soon.start())

    def refresh(self) -> None:
        """Ask each training panel the coming scenes use for its run, trained ahead (while presenting)."""
        present, lecture = self.window.present, self.panel.lecture
        if not present.active or lecture is None:
            return
        self.asked = []
        for lab, seed, steps, index in runs_ahead(present, lecture, self.panel.current):
            if lab.runner.snapshot().playing:
                continue  # the lecturer's own run plays in the lab: its scene takes it over when reached
            lab.play_to(seed, steps, ahead=index)
            self.asked.append((lab, seed, steps, index))


def install(window, panel) -> WarmUp:
    """The warm-up of ``window``'s lecture (``panel``: its Scenes panel), as ``window.warm_up``."""
    window.warm_up = WarmUp(window, panel)
    return window.warm_up
