"""Large inputs: typing is debounced above the live size, and a paste that does not fit says where it was cut."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.gui.editing.controls import LARGE_INPUT_NOTE
from attn_studio.limits import MAX_SENTENCE_CHARS
from attn_studio.state import StudioState


@pytest.fixture
def win(document_window):
    # One window serves the module. Before each test: no typing waiting for its pause and no large
    # change computing, the state undone (the shared reset), the document and the count of stale
    # results thrown away put back, all checked.
    w = document_window
    w.background.dropped = 0
    w.bridge.flush()
    assert not w.studio.computing() and w.background.dropped == 0
    assert not note(w).isVisible() and not w.drawing()
    return w


def changes(studio) -> list:
    seen = []
    studio.subscribe(seen.append)
    return seen


def large_sentence(n: int = 2000) -> str:
    return " ".join(f"w{i}" for i in range(n))


def note(win) -> QtWidgets.QLabel:
    return win.findChild(QtWidgets.QLabel, "largeInputNote")


def test_small_inputs_follow_every_keystroke(win):
    seen = changes(win.studio)
    edit = win.findChild(QtWidgets.QLineEdit, "sentenceEdit")
    for text in ("the cat", "the cat s", "the cat sat"):
        edit.setText(text)
        edit.textEdited.emit(text)
    assert len(seen) == 3 and win.studio.state.sentence == "the cat sat"
    assert not note(win).isVisible()


def test_ten_keystrokes_on_a_2000_token_sentence_recompute_once_and_enter_applies_them(win, qtbot):
    assert not StudioState(sentence=large_sentence()).live_update  # the default model at 2,000 tokens
    seen = changes(win.studio)
    edit = win.findChild(QtWidgets.QLineEdit, "sentenceEdit")
    base = large_sentence()
    for i in range(10):
        edit.setText(base + " x" * (i + 1))
        edit.textEdited.emit(edit.text())
    assert seen == []  # nothing recomputed per keystroke
    assert note(win).isVisible() and note(win).text() == LARGE_INPUT_NOTE
    assert edit.text() == base + " x" * 10  # the typed text stays in the box meanwhile
    QTest.keyClick(edit, QtCore.Qt.Key_Return)
    # Enter starts the computation at once, off the GUI thread; the result is installed when done.
    assert win.studio.computing() and not win.controls.typing_timer.isActive()
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=30_000)
    assert win.studio.state.sentence == base + " x" * 10
    assert len(win.studio.state.tokens) == 2010
    assert note(win).isVisible()  # still large: the note stays
    # After Enter nothing else is waiting: the pause timer has nothing left to apply.
    assert not win.controls.typing_timer.isActive()


def test_a_pause_applies_large_typing(win, qtbot):
    seen = changes(win.studio)
    edit = win.findChild(QtWidgets.QLineEdit, "sentenceEdit")
    edit.setText(large_sentence())
    edit.textEdited.emit(edit.text())
    assert seen == [] and win.controls.typing_timer.isActive()
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=10_000)
    assert win.studio.state.sentence == large_sentence()
    # Back to a small sentence: typing is live again and the note goes away.
    edit.setText("a cat")
    edit.textEdited.emit("a cat")
    assert len(seen) == 2 and win.studio.state.sentence == "a cat"
    assert not note(win).isVisible()


def test_a_40000_character_paste_is_cut_at_the_budget_and_says_so(win, qtbot):
    edit = win.findChild(QtWidgets.QLineEdit, "sentenceEdit")
    assert edit.maxLength() == MAX_SENTENCE_CHARS
    words = [f"x{i:04d}" for i in range(40_000 // 6)]
    text = " ".join(words).ljust(40_000, "z")
    QtWidgets.QApplication.clipboard().setText(text)
    edit.setFocus()
    edit.selectAll()
    QTest.keySequence(edit, QtGui.QKeySequence.Paste)
    assert edit.text() == text[:MAX_SENTENCE_CHARS]
    message = win.message_label.text()
    assert "was cut" in message and "40,000" in message and f"{MAX_SENTENCE_CHARS:,}" in message
    assert repr(text[MAX_SENTENCE_CHARS - 20:MAX_SENTENCE_CHARS].strip())[1:-1] in message


def test_a_5000_character_word_is_elided_on_the_axes_and_named_in_full_on_hover(win):
    from attn_studio.gui.views.heatmap import TokenAxis

    word = "x" * 5000
    edit = win.findChild(QtWidgets.QLineEdit, "sentenceEdit")
    edit.setText(f"{word} cat")
    edit.textEdited.emit(edit.text())
    win.bridge.flush()
    view = win.heatmap_view
    stage = view.stages["weights"]
    bottom = stage.bottom_axis
    assert isinstance(bottom, TokenAxis)
    labels = [text for _, text in bottom.labels()]
    assert labels[1] == "cat" and labels[0].startswith("xxx") and labels[0].endswith("…")
    assert len(labels[0]) < 200 and bottom.widest_label_px() <= bottom.max_label_px()
    assert bottom.full_label(0) == word  # the hover names the whole word
    assert bottom.height() < 400  # not a 25,000 px axis under the heatmap
    assert word in view.tooltip_for(stage, 0, 0)


# -- large models compute off the GUI thread ---------------------------------------------------------


def test_a_large_sentence_returns_to_the_event_loop_before_its_result_is_installed(win, qtbot):
    seen = changes(win.studio)
    edit = win.findChild(QtWidgets.QLineEdit, "sentenceEdit")
    text = large_sentence(600)
    edit.setText(text)
    edit.textEdited.emit(text)
    win.controls.apply_typed()  # as the typing pause does
    # Control is back in the event loop: nothing installed yet, the old sentence still drawn.
    assert win.studio.computing() and seen == []
    assert win.studio.state.sentence != text
    assert win.statusBar().currentMessage() == "Computing the model…"
    assert edit.text() == text  # what was typed stays in the box meanwhile
    win.controls.sync()  # a redraw for another reason does not put the old sentence back
    assert edit.text() == text
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=30_000)
    assert win.studio.state.sentence == text and len(win.studio.state.tokens) == 600
    assert win.studio.result.weights.shape[-1] == 600
    assert win.statusBar().currentMessage() == ""
    # The Attention tab draws the new result a heatmap per event-loop turn, then shows all of it.
    win.bridge.flush()
    assert win.drawing()
    qtbot.waitUntil(lambda: not win.drawing(), timeout=30_000)
    np.testing.assert_array_equal(win.heatmap_view.stages["weights"].data.values, win.studio.result.weights[0])


def test_a_stale_large_result_is_dropped_and_the_newest_change_wins(win, qtbot):
    seen = changes(win.studio)
    start = win.studio.state.sentence
    first, second = large_sentence(560), large_sentence(600)
    win.studio.update(sentence=first)
    assert win.studio.computing()
    win.studio.update(sentence=second)  # asked for before the first one finished
    win.studio.update(causal=True)      # and a switch: merged with the sentence, nothing lost
    qtbot.waitUntil(lambda: not win.studio.computing(), timeout=60_000)
    assert [c.state.sentence for c in seen] == [second]  # the first result never went in
    assert win.studio.state.causal and len(win.studio.state.tokens) == 600
    assert win.background.dropped == 1  # the first one computed, then was thrown away
    assert win.studio.result.weights[0, 0, 1] == 0  # causal: the installed result is the newest state's
    win.studio.undo()  # one undo step: back to the window's first sentence, not to the dropped one
    qtbot.waitUntil(lambda: not win.studio.computing(), timeout=60_000)
    assert win.studio.state.sentence == start and not win.studio.state.causal


def test_a_click_while_a_large_change_computes_is_kept(win, qtbot):
    win.studio.update(sentence=large_sentence(560))
    qtbot.waitUntil(lambda: not win.studio.computing(), timeout=60_000)
    win.studio.update(causal=True)
    assert win.studio.computing()
    win.studio.select(query=7)  # at once: only the selection
    assert win.studio.state.query_index == 7 and not win.studio.state.causal
    qtbot.waitUntil(lambda: not win.studio.computing(), timeout=60_000)
    assert win.studio.state.causal and win.studio.state.query_index == 7


def test_an_edit_of_a_cell_while_a_large_change_computes_comes_after_it(win, qtbot):
    win.studio.update(sentence=large_sentence(560))
    assert win.studio.computing()
    win.studio.set_weight("w_q", 0, 0, 0, "0.25")  # completes the sentence first, then the cell
    qtbot.waitUntil(lambda: not win.studio.computing(), timeout=60_000)
    assert len(win.studio.state.tokens) == 560 and win.studio.state.w_q[0, 0, 0] == 0.25
    win.studio.undo()
    qtbot.waitUntil(lambda: not win.studio.computing(), timeout=60_000)
    assert len(win.studio.state.tokens) == 560 and win.studio.state.w_q[0, 0, 0] != 0.25
