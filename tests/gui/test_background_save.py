"""Saving never freezes the window: large saves and autosaves run off the GUI thread, one at a time."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6 import QtCore

from attn_studio import document, session
from attn_studio.gui import MainWindow
from attn_studio.limits import MAX_D_HEAD, MAX_D_MODEL, MAX_HEADS, MAX_WEIGHT_EDITS
from attn_studio.session import read_session
from attn_studio.state import StudioState
from gui_helpers import finish, settle


@pytest.fixture
def win(document_window):
    # One window serves every test but the closing one: no save left running, its state undone (the
    # shared reset; undoing the largest session is one cheap recompute of the opening model), its
    # document (file, example, recent files, message, title), status bar and recovery file put back.
    # Checked.
    w = document_window
    w.files.autosave_timer.stop()  # a test's edit may have started it
    w.statusBar().clearMessage()
    w.document.recovery.clear()
    settle(w)
    assert not w.files.saves.busy and not w.files.autosave_timer.isActive()
    assert not w.studio.is_modified and w.statusBar().currentMessage() == ""
    assert not w.recovery.path.exists()
    return w


def largest_session() -> StudioState:
    """The largest session the studio saves: every dimension at its maximum, nearly every edit allowed."""
    state = StudioState(sentence="the largest model", d_model=MAX_D_MODEL, heads=MAX_HEADS, d_head=MAX_D_HEAD)
    w = np.array(state.w_q)
    cols = MAX_WEIGHT_EDITS // (MAX_HEADS * MAX_D_MODEL)  # 122 columns: 999,424 edited cells
    w[:, :, :cols] = 0.25
    return state.replace(w_q=w)


class Gate:
    """Holds every session write until released (so a test decides when a save ends), counting writes."""

    def __init__(self, monkeypatch):
        self.open = threading.Event()
        self.writes = 0
        self.running = 0
        self.most_at_once = 0
        self._lock = threading.Lock()
        real = session.write_session

        def gated(path, state, training=None):
            with self._lock:
                self.writes += 1
                self.running += 1
                self.most_at_once = max(self.most_at_once, self.running)
            try:
                self.open.wait(30)
                real(path, state, training)
            finally:
                with self._lock:
                    self.running -= 1

        monkeypatch.setattr(session, "write_session", gated)
        monkeypatch.setattr(document, "write_session", gated)


def test_the_window_keeps_ticking_while_the_largest_session_is_saved(win, qtbot, tmp_path):
    state = largest_session()
    win.studio.set_state(state)  # a large model: computed off the GUI thread
    finish(win, qtbot)  # installed, and the views draw it before the clock starts
    ticks = []
    timer = QtCore.QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    path = tmp_path / "largest.attn.json"
    assert win.save_to(path)
    # The save runs in the background: the event loop is free, and the title still says unsaved.
    assert win.files.saves.busy and win.studio.is_modified
    qtbot.waitUntil(lambda: not win.files.saves.busy, timeout=120_000)
    timer.stop()
    # Blocked for the whole save, a 10 ms timer would fire once at most (missed ticks are not queued).
    assert len(ticks) >= 10
    assert not win.studio.is_modified and win.current_path == path
    assert "Saved" in win.statusBar().currentMessage()
    # Read back whole: every field and every cell of every store equal, and the stores' growth
    # history (which equality leaves out), without writing both states as text twice more.
    loaded = read_session(path)
    assert loaded == state
    assert loaded._layers == state._layers


def test_edits_made_during_a_save_stay_unsaved(win, qtbot, tmp_path, monkeypatch):
    gate = Gate(monkeypatch)
    win.studio.update(causal=True)
    path = tmp_path / "a.attn.json"
    assert win.save_to(path, background=True)
    win.studio.update(temperature=2.0)  # typed while the file is written
    gate.open.set()
    qtbot.waitUntil(lambda: not win.files.saves.busy, timeout=30_000)
    saved = read_session(path)
    assert saved.causal is True and saved.temperature == 1.0
    assert win.studio.is_modified and win.windowTitle().startswith("a.attn.json •")


def test_a_failed_background_save_changes_nothing_and_says_why(win, qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(document, "BACKGROUND_SAVE_CELLS", 0)
    win.studio.update(causal=True)
    before = win.studio.state
    assert win.save_to(tmp_path / "no" / "such" / "folder.attn.json")  # started
    qtbot.waitUntil(lambda: not win.files.saves.busy, timeout=30_000)
    assert win.studio.state is before and win.studio.is_modified
    assert win.current_path is None
    assert "does not exist" in win.message_label.text() and "Nothing was saved" in win.message_label.text()


def test_autosaves_never_overlap_and_a_newer_state_replaces_a_waiting_one(win, qtbot, monkeypatch):
    monkeypatch.setattr(document, "BACKGROUND_SAVE_CELLS", 0)
    gate = Gate(monkeypatch)
    win.studio.update(causal=True)
    win.autosave()  # starts, and waits at the gate
    for t in (2.0, 3.0, 4.0):
        win.studio.update(temperature=t)
        win.autosave()  # each replaces the one waiting before it
    qtbot.waitUntil(lambda: gate.writes == 1)
    gate.open.set()
    qtbot.waitUntil(lambda: not win.files.saves.busy, timeout=30_000)
    assert gate.writes == 2 and gate.most_at_once == 1
    assert read_session(win.recovery.path).temperature == 4.0


def test_closing_waits_for_a_save_in_flight(qtbot, tmp_path, monkeypatch):
    gate = Gate(monkeypatch)
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    w.studio.update(causal=True)
    path = tmp_path / "closing.attn.json"
    assert w.save_to(path, background=True)
    qtbot.waitUntil(lambda: gate.writes == 1)
    threading.Timer(0.2, gate.open.set).start()
    assert w.close()  # nothing is asked: the save in flight ends first, and then all is saved
    assert read_session(path).causal is True
    assert not w.studio.is_modified
    assert not [p for p in tmp_path.iterdir() if session.is_temporary(p)]
