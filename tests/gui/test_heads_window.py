"""The Heads tab in the main window on all-MiniLM-L6-v2: shown only for a trained model, the
"it" -> "animal" head one click away, and the importance sweep running while the window keeps
ticking, cancellable. Skipped where the model is not installed."""

from __future__ import annotations

import pytest
from PySide6 import QtCore

from attn_studio.pretrained import default_model_zip
from gui_helpers import settle, wait_idle

pytestmark = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")

# The heads the lecture names for "it" -> "animal" (layer, head from 0): 4.2 and 6.12 on screen.
ANIMAL_HEADS = {(3, 1), (5, 11)}


@pytest.fixture
def window(shared_window):
    return shared_window


@pytest.fixture
def trained(window, qtbot, minilm):
    from attn_studio.trained import TrainedStudio

    tabs = window.view_tabs
    assert not tabs.isTabVisible(tabs.indexOf(window.heads_tab))  # the toy model has no Heads tab
    window.trained.room.set_studio(TrainedStudio(minilm))
    wait_idle(qtbot, window)
    tabs.setCurrentWidget(window.heads_tab)
    settle(window)
    yield window
    window.trained.room.use_toy()


def test_the_heads_tab_is_shown_only_for_a_trained_model(trained, qtbot):
    w = trained
    tabs = w.view_tabs
    index = tabs.indexOf(w.heads_tab)
    assert tabs.isTabVisible(index) and tabs.tabText(index) == "Heads"
    layers, heads = w.studio.target.model.layers, w.studio.target.model.heads
    assert w.heads_tab.proxy.rowCount() == layers * heads == 72
    w.trained.room.use_toy()
    wait_idle(qtbot, w)
    assert not tabs.isTabVisible(index)


def test_typing_it_and_animal_opens_the_lectures_head(trained, qtbot):
    w, lab = trained, trained.heads_tab
    qtbot.keyClicks(lab.query_edit, "it")
    qtbot.keyClicks(lab.key_edit, "animal")
    qtbot.mouseClick(lab.find_button, QtCore.Qt.LeftButton)
    wait_idle(qtbot, w)
    top = lab.found[0][:2]
    assert top in ANIMAL_HEADS
    assert lab.found_table.item(0, 0).text() == f"{top[0] + 1}.{top[1] + 1}"
    state = w.studio.state
    assert (state.layer_index, state.head_index) == top  # opened in the Attention view's head
    # A word the sentence does not have: a message, and nothing else moves.
    lab.key_edit.setText("giraffe")
    qtbot.mouseClick(lab.find_button, QtCore.Qt.LeftButton)
    wait_idle(qtbot, w)
    assert "giraffe" in lab.find_message.text()
    assert lab.found[0][:2] == top and (w.studio.state.layer_index, w.studio.state.head_index) == top


def test_the_importance_sweep_keeps_the_window_ticking_and_can_be_cancelled(trained, qtbot):
    lab = trained.heads_tab
    ticks = []
    timer = QtCore.QTimer()
    timer.timeout.connect(lambda: ticks.append(lab.importance_bar.value()))
    timer.start(10)
    lab.pages.setCurrentIndex(1)
    qtbot.mouseClick(lab.importance_button, QtCore.Qt.LeftButton)
    assert lab.job.is_running() and lab.cancel_button.isEnabled() and not lab.importance_button.isEnabled()
    # Progress arrives head by head while the GUI thread keeps serving its timer.
    qtbot.waitUntil(lambda: lab.importance_bar.value() >= 2, timeout=60000)
    qtbot.waitUntil(lambda: len([t for t in ticks if t >= 2]) >= 3 or not lab.job.is_running(), timeout=60000)
    assert lab.job.is_running(), "the sweep ended before the window could be seen ticking during it"
    assert lab.importance_bar.maximum() == 72
    with qtbot.waitSignal(lab.job.cancelled, timeout=60000):
        qtbot.mouseClick(lab.cancel_button, QtCore.Qt.LeftButton)
    timer.stop()
    assert "Cancelled" in lab.importance_status.text()
    assert lab.importance is None and lab.importance_button.isEnabled() and not lab.cancel_button.isEnabled()
    assert lab.importance_map.values is None
