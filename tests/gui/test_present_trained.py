"""Present with all-MiniLM-L6-v2: every trained view on the stage at 1280×720, read as a viewer sees it,
and the strip's layer, head and Silence. Skipped where the model is not installed."""

from __future__ import annotations

import re

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.pretrained import default_model_zip
from gui_helpers import settle, wait_idle
from stage_measure import drawn_texts

pytestmark = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")

PROJECTOR = QtCore.QRect(0, 0, 1280, 720)
NUMBER = re.compile(r"^[−-]?\d+\.\d+$")


@pytest.fixture
def trained(shared_window, qtbot, minilm):
    from attn_studio.trained import TrainedStudio

    w = shared_window
    w.trained.room.set_studio(TrainedStudio(minilm))
    wait_idle(qtbot, w)
    settle(w)
    yield w
    w.present.leave()
    w.trained.room.use_toy()
    wait_idle(qtbot, w)
    settle(w)


@pytest.mark.parametrize("view", ["Attention", "Model view", "Heads"])
def test_trained_heatmap_views_read_from_the_back_row(trained, view):
    w = trained
    assert view in w.present.views()
    stage = w.present.enter(view, geometry=PROJECTOR)
    settle(w)
    texts = drawn_texts(stage)
    tokens = set(w.studio.state.query_tokens)
    labels = [px for t, px in texts if t in tokens]
    values = [px for t, px in texts if NUMBER.match(t)]
    assert labels and min(labels) >= 29.5
    assert values and min(values) >= 23.5
    hm = w.present.sheet.heatmaps[0]
    assert "[CLS]" in hm.data.row_labels and hm.left_axis.visible_step() == 1 and hm.bottom_axis.visible_step() == 1
    caption = stage.findChild(QtWidgets.QLabel, "presentCaption").text()
    rows = len(hm.data.row_labels)
    if rows < len(w.studio.state.query_tokens):
        assert f"of {len(w.studio.state.query_tokens)}" in caption


@pytest.mark.parametrize("view", ["Drift", "Meaning in context"])
def test_drift_and_meaning_come_to_the_stage_large(trained, view):
    w = trained
    stage = w.present.enter(view, geometry=PROJECTOR)
    settle(w)
    widget = w.trained.room.drift_plot if view == "Drift" else w.trained.room.meaning_view
    assert stage.isAncestorOf(widget)
    texts = drawn_texts(stage)
    body = [px for t, px in texts if t != stage.findChild(QtWidgets.QLabel, "presentTitle").text()]
    assert body and min(body) >= 23.5, sorted(texts, key=lambda t: t[1])[:5]
    w.present.leave()
    settle(w)
    assert not stage.isAncestorOf(widget)


def test_the_strip_chooses_layer_and_head_and_silences_it(trained, qtbot):
    w = trained
    stage = w.present.enter("Attention", geometry=PROJECTOR)
    settle(w)
    strip = stage.findChild(QtWidgets.QFrame, "presentStrip")
    assert strip.height() <= 0.12 * stage.height()
    layer = strip.findChild(QtWidgets.QSpinBox, "presentLayer")
    layer.setValue(4)
    wait_idle(qtbot, w)
    settle(w)
    QTest.keyClick(stage, QtCore.Qt.Key_2)
    wait_idle(qtbot, w)
    settle(w)
    state = w.studio.state
    assert (state.layer_index, state.head_index) == (3, 1)
    assert "layer 4 · head 2" in stage.findChild(QtWidgets.QLabel, "presentTitle").text()
    before = w.present.sheet.heatmaps[0].data.values.copy()
    silence = strip.findChild(QtWidgets.QPushButton, "presentSilence")
    silence.click()
    wait_idle(qtbot, w)
    settle(w)
    assert w.trained.room.studio.head_scale(3, 1) == 0.0
    assert silence.isChecked() and silence.text() == "Silenced"
    w.present.go_to("Drift")
    settle(w)
    assert w.trained.room.drift_plot.drift is not None and w.trained.room.drift_plot.drift.max() > 0
    assert before.shape[0] >= 1
