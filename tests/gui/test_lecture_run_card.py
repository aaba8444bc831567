"""A training scene whose run must be trained first, played with a clicker: the stage shows a card for it at
once (the scene's title, its run, the steps done as they go, that PageDown moves on), painted, not the
scene before held silently; the scene replaces the card by itself, without another key. PageDown during
it goes on and the training goes on: coming back finds the run done, not trained again. While presenting,
the lecture's runs are trained ahead (warm-up: from Present's start, or a lecture opened on the stage), one
training at a time, so that a clicker reaching them finds them ready; closing the window meanwhile stops the training at its next piece.

Runs here are short (40 steps) versions of the example lecture's training scenes, trained for real: what
is tested is their training. The test holds the training piece by piece where it reads the card's
progress (``Pieces``), so that nothing depends on the machine's speed."""

from __future__ import annotations

import dataclasses
import threading

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.gui.qt.worker import wait_all
from attn_studio.gui.training import panel as panel_module
from attn_studio.scenes import Lecture, Scene, example_lecture
from attn_studio.session import load_preset
from attn_studio.training.experiment import Experiment
from attn_studio.training.lab_models import experiment_name
from lecture_walk import idle
from stage_measure import drawn_texts

PROJECTOR = QtCore.QRect(0, 0, 1280, 720)
PIECE = 10  # steps a piece: a 40-step run is four
STEPS = 40
SQRT, TWO, KNOCK = "Why √d_k, trained", "Why two layers", "Why two layers: knock the heads out"


class Pieces:
    """``Experiment.run`` watched piece by piece: each piece of a scene's run (experiment, seed, steps) is
    recorded; ``inside`` counts the trainings in a piece or held before one, ``most`` the most ever at once.
    ``held``: a piece trains only once the test lets it (:meth:`allow`, :meth:`open`), or once ``until()``
    is True (the window closes)."""

    def __init__(self, monkeypatch, held: bool, until=lambda: False):
        self.held, self.until = held, until
        self.gate = threading.Semaphore(0)
        self.lock = threading.Lock()
        self.pieces: list[tuple[str, int, int]] = []
        self.inside = self.most = self.finished = 0
        real = Experiment.run

        def run(exp, n, callback=None):
            with self.lock:
                self.inside += 1
                self.most = max(self.most, self.inside)
            try:
                while self.held and not self.gate.acquire(timeout=0.02):
                    if self.until():
                        break
                with self.lock:
                    self.pieces.append((experiment_name(exp), exp.seed, n))
                return real(exp, n, callback)
            finally:
                with self.lock:
                    self.inside -= 1
                    self.finished += 1

        monkeypatch.setattr(Experiment, "run", run)
        monkeypatch.setattr(panel_module, "PLAY_TO_PIECE", PIECE)

    def allow(self, n: int = 1) -> None:
        for _ in range(n):
            self.gate.release()

    def open(self) -> None:
        self.held = False
        self.gate.release()

    def trained(self, name: str) -> int:
        """Steps trained so far for experiment ``name``, every piece counted."""
        with self.lock:
            return sum(n for exp, _, n in self.pieces if exp == name)


@pytest.fixture
def pieces(monkeypatch):
    """``pieces(held)``: :class:`Pieces` for this test; every piece let go when it ends (a test failing
    while it holds them leaves no worker blocked)."""
    made = []

    def make(held: bool) -> Pieces:
        made.append(Pieces(monkeypatch, held))
        return made[-1]

    yield make
    for watched in made:
        watched.until = lambda: True
        watched.open()


def example(title: str, **selection) -> Scene:
    """The example lecture's scene ``title``, its selection changed by ``selection``."""
    scene = next(s for s in example_lecture().scenes if s.title == title)
    return dataclasses.replace(scene, selection={**scene.selection, **selection})


def toy(title: str) -> Scene:
    return Scene.of_state(title, load_preset("journey"), selection={"page": 0, "last": 0})


def present(w, qtbot, scenes) -> QtWidgets.QWidget:
    """``scenes`` as the window's lecture, its first scene shown, on a 1280×720 stage."""
    w.scenes.set_lecture(Lecture("runs", tuple(scenes)), record=False)
    w.scenes.go(0)
    idle(w)
    stage = w.present.enter(geometry=PROJECTOR)
    idle(w)
    return stage


def card_texts(w) -> dict[str, tuple[str, float]]:
    """The run card's lines by name: (text, pixel height as the room sees it)."""
    card = w.present.stage.content
    assert card is not None and card.objectName() == "presentRunCard"
    return {label.objectName(): (label.text(), max(px for t, px in drawn_texts(label)))
            for label in card.findChildren(QtWidgets.QLabel) if label.text()}


def steps_line(w) -> str:
    card = w.present.card
    if card is None:
        return ""
    return card[1].findChild(QtWidgets.QLabel, "runCardSteps").text()


@pytest.fixture
def cards(window, monkeypatch):
    """The titles of the cards the stage shows, in order."""
    shown = []
    real = window.present.show_card
    monkeypatch.setattr(window.present, "show_card", lambda title, card, caption: (shown.append(title),
                                                                                   real(title, card, caption)))
    yield shown
    if window.present.active:
        window.present.leave()


def onto_the_card(w, qtbot, pieces):
    """The "Why √d_k" scene (to ``STEPS``) between two toy scenes, reached with PageDown while its run's
    pieces are held: (pieces, scene, stage, its panel)."""
    pieces = pieces(held=True)
    scene = example(SQRT, steps=STEPS)
    stage = present(w, qtbot, [toy("Before"), scene, toy("After")])
    lab = w.present.training_panel(scene.view)
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown)
    return pieces, scene, stage, lab


def test_the_scene_shows_a_card_while_its_run_trains_then_itself(window, qtbot, pieces, cards):
    w = window
    pieces, scene, stage, lab = onto_the_card(w, qtbot, pieces)
    # At once, painted: the card, not the scene before held silently.
    assert w.scenes.current == 1 and w.present.card is not None and cards == [SQRT]
    assert stage.updatesEnabled()
    assert stage.title.text() == SQRT and stage.number.text() == "2 / 3"
    texts = card_texts(w)
    assert texts["runCardRun"][0] == f"seed 0, to step {STEPS}"
    assert texts["runCardSteps"][0] == f"step 0 of {STEPS}"
    assert "appears by itself" in texts["runCardAfter"][0] and "PageDown" in texts["runCardAfter"][0]
    assert "PageDown" in stage.caption.text() and not stage.hints.text()
    # Read from the back of the room: the steps at the title's size, nothing under the caption's.
    sizes = stage.sizes()
    assert texts["runCardSteps"][1] >= sizes["title"] and min(px for _, px in texts.values()) >= sizes["caption"]
    # The presenter console says it too.
    w.presenter_console.refresh()
    assert f"step 0 of {STEPS}" in w.presenter_console.run_line.text()
    assert not w.presenter_console.run_line.isHidden()

    # The steps done, as they go.
    pieces.allow(1)
    qtbot.waitUntil(lambda: steps_line(w) == f"step {PIECE} of {STEPS}", timeout=60_000)
    assert w.present.card is not None and w.scenes.current == 1

    # The run trained: the scene replaces the card by itself, its own figure at the saved steps.
    pieces.open()
    qtbot.waitUntil(lambda: w.present.card is None, timeout=120_000)
    idle(w)
    assert (w.scenes.current, w.present.view) == (1, scene.view) and cards == [SQRT]
    snap = lab.runner.snapshot()
    assert (snap.exp.seed, snap.steps) == (0, STEPS)
    assert stage.isAncestorOf(lab) and stage.updatesEnabled()
    assert stage.caption.text().startswith(scene.caption[:40])
    assert any(f"{STEPS} steps" in t for t, _ in drawn_texts(stage.content))  # its sentence: this run's
    w.presenter_console.refresh()
    assert w.presenter_console.run_line.isHidden()
    assert pieces.trained("scaling") == STEPS


def test_pagedown_during_the_card_goes_on_and_coming_back_finds_the_run(window, qtbot, pieces, cards):
    w = window
    pieces, scene, stage, lab = onto_the_card(w, qtbot, pieces)
    assert w.present.card is not None
    pieces.allow(1)
    qtbot.waitUntil(lambda: steps_line(w) == f"step {PIECE} of {STEPS}", timeout=60_000)
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown)  # the lecturer goes on
    idle(w)
    assert (w.scenes.current, w.present.card, w.present.view) == (2, None, "Attention")
    pieces.open()  # the training goes on meanwhile...
    qtbot.waitUntil(lambda: (lab.runner.snapshot().steps, lab.training_progress().finished) == (STEPS, True),
                    timeout=120_000)
    idle(w)
    assert (w.scenes.current, w.present.view) == (2, "Attention")  # ...without taking the stage
    QTest.keyClick(stage, QtCore.Qt.Key_PageUp)  # and coming back finds it done: no card
    assert w.present.card is None
    idle(w)
    assert (w.scenes.current, w.present.view, w.present.card) == (1, scene.view, None) and cards == [SQRT]
    assert pieces.trained("scaling") == STEPS  # trained once, never again from the start


def test_warm_up_trains_the_runs_ahead_so_the_clicker_never_waits(window, qtbot, pieces, cards):
    w = window
    pieces = pieces(held=True)
    # The example's training scenes, short: "Why two layers" (the panel's seed, 0) and its ablation scene
    # (seed 0) are the same run, trained once.
    scenes = [toy("Before"), example(SQRT, steps=STEPS), example(TWO, steps=STEPS), toy("Between"),
              example(KNOCK, steps=STEPS)]
    sqrt, two = (w.present.training_panel(s.view) for s in scenes[1:3])
    # The earlier scene's panel busy a moment when Present starts: the later scene's run comes to its first
    # piece first, and the earlier one's, asking after it, must have the next turn all the same.
    busy = threading.Event()
    sqrt.runner.call(lambda exp: busy.wait(60), lambda result, error: None)
    present(w, qtbot, scenes)
    qtbot.waitUntil(lambda: pieces.inside >= 1, timeout=60_000)
    busy.set()

    def there(lab) -> bool:
        snap = lab.runner.snapshot()
        return snap.exp is not None and (snap.exp.seed, snap.steps) == (0, STEPS)

    # Nothing pressed: the runs are trained after Present starts, one training at a time: one comes to its
    # first piece, the other waits for its turn.
    qtbot.waitUntil(lambda: pieces.inside >= 1 and all(lab.training_progress() is not None for lab in (sqrt, two))
                    and any(lab.training_progress().waiting for lab in (sqrt, two)), timeout=60_000)
    # A piece at a time is let through, each done before the next: meanwhile a second training would come to
    # a piece too.
    while pieces.trained("scaling") + pieces.trained("induction") < 2 * STEPS:
        qtbot.waitUntil(lambda: pieces.inside >= 1, timeout=60_000)
        finished = pieces.finished
        pieces.allow(1)
        qtbot.waitUntil(lambda: pieces.finished > finished, timeout=60_000)
    qtbot.waitUntil(lambda: there(sqrt) and there(two), timeout=60_000)
    assert pieces.most == 1, pieces.pieces
    # In the scenes' order: after the piece under way when both asked, the earlier scene's run first.
    after = [name for name, _, _ in pieces.pieces][1:]
    assert after == sorted(after, key=["scaling", "induction"].index), pieces.pieces
    assert (pieces.trained("scaling"), pieces.trained("induction")) == (STEPS, STEPS)
    assert w.scenes.current == 0
    # The clicker reaches each (the next scene, past the pages of the one shown): at once, never a card.
    for index in range(1, len(scenes)):
        QTest.keyClick(w.present.stage, QtCore.Qt.Key_PageDown, QtCore.Qt.ShiftModifier)
        assert w.present.card is None
        idle(w)
        assert (w.scenes.current, w.present.view, w.present.card) == (index, scenes[index].view, None)
    assert cards == []
    assert (pieces.trained("scaling"), pieces.trained("induction")) == (STEPS, STEPS)
    snap = two.runner.snapshot()
    assert (snap.exp.seed, snap.steps) == (0, STEPS) and w.present.page == scenes[-1].selection["page"]


def test_leaving_present_and_closing_the_window_while_a_run_trains(window, qtbot, pieces, cards):
    w = window
    scene = example(TWO)  # 2,000 steps: far from done when the window closes
    pieces = pieces(held=True)
    stage = present(w, qtbot, [toy("Before"), scene])
    lab = w.present.training_panel(scene.view)
    pieces.until = lab.runner.stopping
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown)
    assert cards == [TWO] and steps_line(w) == "step 0 of 2,000"
    # The lecture's last scene: no next scene to go on to; PageUp goes back.
    assert "PageUp goes back" in card_texts(w)["runCardAfter"][0] and "PageUp" in stage.caption.text()
    pieces.allow(1)
    qtbot.waitUntil(lambda: lab.training_progress().done == PIECE, timeout=60_000)
    w.present.leave()  # Esc on the card: the stage goes, the training goes on
    assert not w.present.active and w.present.card is None
    w.close()  # stops the run at its next piece: the window closes, nothing left running
    assert lab.runner.stopping() and wait_all(30_000)
    progress = lab.training_progress()
    assert not progress.finished and progress.done < 2000
    assert pieces.trained("induction") <= 2 * PIECE


def test_a_lecture_opened_while_presenting_has_its_runs_trained_ahead(window, qtbot, pieces, cards):
    w = window
    watched = pieces(held=False)
    stage = w.present.enter("Attention", geometry=PROJECTOR)
    idle(w)
    scene = example(SQRT, steps=STEPS)
    lab = w.present.training_panel(scene.view)
    w.scenes.set_lecture(Lecture("opened on the stage", (toy("Before"), scene)), record=False)
    qtbot.waitUntil(lambda: lab.runner.snapshot().exp is not None
                    and (lab.runner.snapshot().exp.seed, lab.runner.snapshot().steps) == (0, STEPS), timeout=120_000)
    assert watched.trained("scaling") == STEPS and w.present.card is None
    w.scenes.go(0)
    idle(w)
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown)
    assert w.present.card is None
    idle(w)
    assert (w.scenes.current, w.present.view, cards) == (1, scene.view, [])
