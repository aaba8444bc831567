"""The model worker: work runs off the GUI thread, stale results are dropped, errors become messages."""

from __future__ import annotations

import threading

import pytest
from PySide6 import QtCore

from attn_studio.gui.trained.model_worker import LOAD, RUN, ModelWorker, error_message


@pytest.fixture
def worker(qtbot):
    w = ModelWorker()
    yield w
    w.wait()
    QtCore.QCoreApplication.processEvents()


def test_event_loop_keeps_turning_while_a_slow_compute_runs(qtbot, worker):
    release = threading.Event()
    ticks = []
    timer = QtCore.QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    results = []

    def slow():
        # Holds the worker thread until the GUI thread has shown it is alive.
        assert release.wait(20)
        return threading.get_ident()

    worker.submit(slow, results.append)
    # The GUI thread's timer ticks while the compute is blocked in the other thread.
    qtbot.waitUntil(lambda: len(ticks) >= 5, timeout=10_000)
    assert results == []
    release.set()
    qtbot.waitUntil(lambda: bool(results), timeout=10_000)
    timer.stop()
    assert results[0] != threading.get_ident()  # computed on another thread
    assert not worker.is_busy()


def test_result_is_delivered_on_the_gui_thread(qtbot, worker):
    seen = []
    worker.submit(lambda: 42, lambda r: seen.append((r, threading.get_ident())))
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    assert seen == [(42, threading.get_ident())]


def test_a_stale_result_never_replaces_a_newer_one(qtbot, worker):
    first_started, release_first = threading.Event(), threading.Event()
    delivered = []

    def old():
        first_started.set()
        assert release_first.wait(20)
        return "old"

    g1 = worker.submit(old, delivered.append)
    assert first_started.wait(10)
    g2 = worker.submit(lambda: "middle", delivered.append)   # waits, then is superseded: never runs
    g3 = worker.submit(lambda: "new", delivered.append)
    assert g1 < g2 < g3 == worker.latest(RUN)
    release_first.set()
    qtbot.waitUntil(lambda: not worker.is_busy(), timeout=10_000)
    assert delivered == ["new"]
    assert worker.dropped == 2  # "old" finished and was dropped; "middle" never started


def test_newer_request_finishing_first_wins_even_if_the_old_one_arrives_later(qtbot, worker):
    release = threading.Event()
    got = []
    worker.resultReady.connect(lambda kind, gen, result: got.append((kind, gen, result)))
    worker.submit(lambda: release.wait(20) and "old")
    gen = worker.submit(lambda: "new")
    release.set()
    qtbot.waitUntil(lambda: not worker.is_busy(), timeout=10_000)
    assert got == [(RUN, gen, "new")]


def test_errors_arrive_as_messages(qtbot, worker):
    messages, failed = [], []
    worker.failed.connect(lambda kind, msg: failed.append((kind, msg)))

    def bad():
        raise ValueError("the text is longer than the model's 512 positions")

    worker.submit(bad, on_error=messages.append)
    qtbot.waitUntil(lambda: bool(messages), timeout=10_000)
    assert messages == ["the text is longer than the model's 512 positions"]
    assert failed == [(RUN, messages[0])]
    assert error_message(KeyError("x")) == "KeyError: 'x'"


def test_busy_signal_brackets_the_work(qtbot, worker):
    states = []
    worker.busy.connect(states.append)
    release = threading.Event()
    worker.submit(lambda: release.wait(20))
    worker.submit(lambda: 1)
    assert states == [True]
    release.set()
    qtbot.waitUntil(lambda: states == [True, False], timeout=10_000)


def test_loading_does_not_cancel_runs_and_runs_do_not_cancel_loading(qtbot, worker):
    loads, runs = [], []
    release = threading.Event()
    worker.submit(lambda: release.wait(20) and "model", loads.append, kind=LOAD, label="Loading a model…")
    worker.submit(lambda: "run", runs.append)
    release.set()
    qtbot.waitUntil(lambda: not worker.is_busy(), timeout=10_000)
    assert loads == ["model"] and runs == ["run"]


def test_load_model_reports_progress_and_a_bad_folder_as_a_message(qtbot, worker, tmp_path):
    progress, errors, loaded = [], [], []
    worker.progress.connect(progress.append)
    worker.modelLoaded.connect(loaded.append)
    worker.load_model(tmp_path / "no-such-model", on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=10_000)
    assert progress[0].startswith("Loading ") and "no-such-model" in progress[0]
    assert progress[-1] == ""
    assert loaded == []
    assert "no-such-model" in errors[0] or "not" in errors[0].lower()


def test_cancel_drops_a_waiting_request(qtbot, worker):
    release = threading.Event()
    got = []
    worker.submit(lambda: release.wait(20) and "running", got.append)
    worker.cancel(RUN)
    release.set()
    qtbot.waitUntil(lambda: not worker.is_busy(), timeout=10_000)
    assert got == []
    with pytest.raises(ValueError):
        worker.submit(lambda: 1, kind="other")
