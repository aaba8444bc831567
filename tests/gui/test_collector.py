"""The cycle collector runs on the GUI thread only, while jobs allocate beside it.

A job that allocates enough to cross the collector's threshold used to run the collection on
its own thread, finalizing the Qt objects of closed dialogs and plots there. The scenario runs
in a child process under faulthandler, so a crash fails the test with its traceback instead of
taking the test run down.
"""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(r'''
    import faulthandler, gc, threading, weakref
    faulthandler.enable()
    from PySide6 import QtCore, QtWidgets
    app = QtWidgets.QApplication([])
    import pyqtgraph as pg
    from attn_studio.gui.qt.worker import Job, collect_on_gui_thread

    collect_on_gui_thread()
    gui = threading.get_ident()
    threads = []
    gc.callbacks.append(lambda phase, info: phase == "start" and threads.append(threading.get_ident()))

    # Closed dialogs with plots, each in a reference cycle: only the collector can free them.
    freed = []
    for i in range(30):
        dialog = QtWidgets.QDialog()
        plot = pg.PlotWidget(dialog)
        plot.plot([1, 2, 3], [i, 2 * i, 0])
        timer = QtCore.QTimer(dialog)
        timer.start(50)
        dialog.cycle = dialog  # the cycle that leaves it to the collector
        dialog.show()
        app.processEvents()
        dialog.close()
        freed.append(weakref.ref(dialog))
    del dialog, plot, timer

    def allocate(progress, cancelled):
        # Many container objects, far past the generation-0 threshold, again and again, until
        # the dialogs are freed (the collector's full passes come when the counts call for them).
        kept, n = [], 0
        while not cancelled() and n < 20_000_000:
            kept.append([n, {"n": n}])
            n += 1
            if len(kept) > 5_000:
                kept = []
        return n

    jobs = [Job(allocate, controls=True).submit() for _ in range(2)]
    deadline = QtCore.QDeadlineTimer(60_000)
    while any(ref() is not None for ref in freed) and not deadline.hasExpired():
        app.processEvents(QtCore.QEventLoop.AllEvents, 50)
    for job in jobs:
        job.quit()
        job.take()
    alive = sum(ref() is not None for ref in freed)
    assert threads, "no collection ran"
    assert set(threads) == {gui}, f"{sum(t != gui for t in threads)} of {len(threads)} collections ran off the GUI thread"
    assert alive == 0, f"{alive} closed dialogs were never freed"
    print("ok", len(threads))
    from attn_studio.gui.qt.worker import wait_all
    assert wait_all(10_000)  # the pool's threads end before the application does
''')


def test_collections_run_on_the_gui_thread_while_a_job_allocates(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONFAULTHANDLER": "1"}
    out = subprocess.run([sys.executable, "-X", "faulthandler", "-c", SCRIPT], capture_output=True, text=True,
                         env=env, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("ok"), out.stdout + out.stderr
    # Qt says so when an object with timers is destroyed off its thread.
    assert "another thread" not in out.stderr, out.stderr


def _alive_and_left_to_the_collector() -> list[str]:
    """Qt objects that only the cycle collector could free while their C++ side is alive (parentless
    widgets, items in no scene): found by a collection that keeps what it would free."""
    import gc

    import shiboken6
    from PySide6 import QtWidgets

    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
    finally:
        gc.set_debug(0)
    found = []
    for obj in gc.garbage:
        if not isinstance(obj, (QtWidgets.QWidget, QtWidgets.QGraphicsItem)) or not shiboken6.isValid(obj):
            continue
        if isinstance(obj, QtWidgets.QWidget) and obj.parentWidget() is None:
            found.append(type(obj).__name__)
        elif isinstance(obj, QtWidgets.QGraphicsItem) and obj.parentItem() is None and obj.scene() is None:
            found.append(type(obj).__name__)
    gc.garbage.clear()
    gc.collect()
    return found


def test_figures_written_leave_no_live_qt_object_to_the_collector(fresh_window, tmp_path):
    # Left to the collector, such an object is cleared item by item and then deleted, and its
    # deletion asks the cleared items for their sizes ('LabelItem' has no '_sizeHint').
    window = fresh_window
    _alive_and_left_to_the_collector()
    for name in ("heatmaps", "compare", "outputs", "steps", "variance", "geometry", "positions"):
        assert window.export_panel(name, tmp_path / f"{name}.png", scale=1.0), name
        window.copy_current_figure()
    left = _alive_and_left_to_the_collector()
    assert not left, f"figures left alive to the cycle collector: {left}"


def test_a_closed_window_leaves_no_live_qt_object_to_the_collector(qtbot):
    from PySide6 import QtCore

    from attn_studio.gui.window import MainWindow

    _alive_and_left_to_the_collector()
    window = MainWindow(restore_settings=False, preset="animal")
    window.show()
    qtbot.waitExposed(window)
    window.present.enter(geometry=QtCore.QRect(0, 0, 1280, 720))
    window.present.leave()
    window.close()
    window.deleteLater()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
    del window
    left = _alive_and_left_to_the_collector()
    assert not left, f"parts of a closed window left alive to the cycle collector: {left}"


def test_the_trained_model_figure_leaves_no_live_qt_object_to_the_collector(fresh_window, tmp_path, qtbot):
    import pytest

    from attn_studio.pretrained import default_model_zip, load_pretrained

    if default_model_zip() is None:
        pytest.skip("all-MiniLM-L6-v2 is not installed")
    from attn_studio.trained import TrainedStudio

    window = fresh_window
    studio = TrainedStudio(load_pretrained())
    studio.update(sentence="The animal didn't cross the street because it was too tired.")
    window.trained.room.set_studio(studio)
    qtbot.waitUntil(lambda: window.studio.is_trained, timeout=30_000)
    _alive_and_left_to_the_collector()
    assert window.export_panel("model", tmp_path / "model.png", scale=1.0)
    left = _alive_and_left_to_the_collector()
    assert not left, f"the model figure left alive to the cycle collector: {left}"
