"""The example lecture's ablation scene on the stage: shown while presenting, it trains the run it saved
(seed 0 to step 2,000) on the panel's worker, then shows the panel's third page, the ablation bars, at
the room's sizes, its words beside them; the caption's numbers are that run's."""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6 import QtCore
from PySide6.QtTest import QTest

from attn_studio.gui.training.ablation_chart import bar_labels
from attn_studio.pretrained.detect import detect
from attn_studio.scenes import example_lecture
from attn_studio.training.ablation import detector_scores, guessing_words
from gui_helpers import put_lecture_away, settle
from stage_measure import drawn_texts

WINDOW_PRESET = "journey"
WINDOW_SIZE = (1280, 720)
PROJECTOR = QtCore.QRect(0, 0, 1280, 720)
TITLE = "Why two layers: knock the heads out"


@pytest.fixture
def window(shared_window, qtbot):
    w = shared_window
    w.scenes.set_lecture(None, record=False)
    yield w
    if w.present.active:
        w.present.leave()
    put_lecture_away(qtbot, w)


def test_the_scene_follows_why_two_layers_and_keeps_its_run():
    scenes = example_lecture().scenes
    index = [s.title for s in scenes].index(TITLE)
    # After "Why two layers" and its model opened in the studio: the same run, taken apart.
    assert [s.title for s in scenes[index - 2: index]] == ["Why two layers", "The induction head, opened"]
    scene = scenes[index]
    assert scene.view == "Training: Why two layers"
    assert scene.selection == {"page": 2, "steps": 2000, "seed": 0}


def test_on_the_stage_it_trains_its_run_and_shows_the_bars(window, qtbot):
    w = window
    w.scenes.open_example()
    settle(w)
    stage = w.present.enter(geometry=PROJECTOR)
    settle(w)
    lecture = w.scenes.lecture
    index = [s.title for s in lecture.scenes].index(TITLE)
    scene = lecture.scenes[index]
    panel = w.present.training_panel(scene.view)
    w.scenes.go(index)
    settle(w)

    def trained():
        snap = panel.runner.snapshot()
        study = snap.extras.get("ablation")
        return snap.exp is not None and snap.exp.seed == 0 and snap.steps == 2000 and study is not None \
            and study.step == 2000

    qtbot.waitUntil(trained, timeout=900_000)  # trained headless on the panel's worker
    assert panel.runner.wait_idle()
    settle(w)
    panel.redraw()
    w.present.render()
    settle(w)
    assert w.present.view == scene.view and w.present.page == 2
    # The bars are the page shown; the curves are folded away; the bars' words are under them.
    assert panel.ablation.plot.isVisible() and not panel.loss_plot.plot.isVisible()
    assert panel.ablation_text.isVisible() and not panel.predictions.isVisible()
    assert stage.isAncestorOf(panel)
    names = bar_labels(panel.runner.snapshot().extras["ablation"])
    drawn = {}

    def named():  # the bars' names as the stage draws them (on a loaded machine a few turns after the bars)
        drawn["texts"] = drawn_texts(stage)
        return len([t for t, _ in drawn["texts"] if t in names]) >= 5

    qtbot.waitUntil(named, timeout=5_000)
    texts = drawn["texts"]
    ticks = [px for t, px in texts if t in names]
    assert len(ticks) >= 5 and min(ticks) >= 23.5  # the heads' names read from the back row
    assert any("Nats added by silencing a head" in t for t, _ in texts)
    assert stage.caption.text().startswith(scene.caption[:40])

    # The caption states this run's numbers.
    snap = panel.runner.snapshot()
    study = snap.extras["ablation"]
    intact = study.intact["two layers"]["loss_repeat"]
    head = study.head("two layers", 0, 0)
    both = study.layer_out["two layers"][1]["loss_repeat"]
    stated = [float(x) for x in re.findall(r"\d+\.\d\d", scene.caption)]
    assert stated == [round(intact, 2), round(head.loss_repeat, 2), round(both, 2)]
    assert min(study.head("two layers", 1, h).added_repeat for h in range(2)) >= 1.0  # "a nat or more"
    assert guessing_words(both) == "no better than guessing"
    # Head 1.1 is the one the detector calls the previous-token head.
    scores = detector_scores(snap.exp.models["two layers"])
    ids = np.random.default_rng(0).choice(np.arange(32), size=16, replace=False)
    roles = detect(type("Run", (), {"ids": np.concatenate([ids, ids]),
                                    "attentions": snap.exp.models["two layers"].attention(
                                        np.concatenate([ids, ids])[None])[:, 0]})()).roles
    assert roles[0, 0] == "previous token" and scores["previous"][0, 0] == scores["previous"][0].max()
    # After the plots, each head of the two-layer model is a page: its title names the panel and the head,
    # each once ("Why two layers: layer 1 head 1", not "Why two layers: two layers: layer 1 head 1 · two
    # layers"), and the room reads it whole.
    titles = []
    for _ in range(2 * 2):
        QTest.keyClick(stage, QtCore.Qt.Key_Right)
        settle(w)
        titles.append((stage.whole_title, stage.title.text()))
    assert w.present.view == scene.view and w.present.page == w.present.pages - 1
    heads = [f"Why two layers: layer {layer} head {head}" for layer in (1, 2) for head in (1, 2)]
    assert [whole.split(" · ")[0] for whole, _ in titles] == heads, titles
    assert all(shown == whole for whole, shown in titles), titles
    w.present.leave()
    settle(w)
