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



FIGURES_SCRIPT = textwrap.dedent(r'''
    import gc, sys
    from collections import Counter
    from PySide6 import QtWidgets
    app = QtWidgets.QApplication([])
    from attn_studio.gui.views.heatmap import Heatmap
    from attn_studio.gui.window import MainWindow

    def figure_garbage():
        # What a collection would free now that is a figure's (plots, their items, heatmaps), by type.
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        gc.set_debug(0)
        found = Counter(type(obj).__name__ for obj in gc.garbage
                        if isinstance(obj, (QtWidgets.QGraphicsItem, QtWidgets.QGraphicsLayout, Heatmap)))
        gc.garbage.clear()
        gc.collect()
        return dict(found)

    window = MainWindow(restore_settings=False)
    window.resize(1366, 768)
    window.show()
    words = "the quick brown fox jumps over a lazy dog while the cat sleeps".split()
    window.studio.update(sentence=" ".join(words[i % len(words)] for i in range(40)))
    window.view_tabs.setCurrentWidget(window.compare_view)
    for _ in range(20):
        app.processEvents()
    out = sys.argv[1]
    figure_garbage()
    actions = window.export_actions
    QtWidgets.QFileDialog.getSaveFileName = staticmethod(lambda *a, **k: (out + "/compare.pdf", ""))
    assert actions.export_panel_dialog("compare")  # File → Export, in steps
    assert actions.wait_written()
    left = {"File → Export": figure_garbage()}
    actions.copy_current_figure()  # Edit → Copy figure
    assert actions.wait_written()
    left["Copy figure"] = figure_garbage()
    assert window.export_panel("compare", out + "/compare.png", scale=1.0)  # in one piece (scripts)
    left["in one piece"] = figure_garbage()
    print("left", left)
    window.studio.mark_saved()
    window.close()
    window.deleteLater()
    from PySide6 import QtCore
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
    del window
''')


def test_an_export_leaves_nothing_of_its_figure_to_the_collector(tmp_path):
    # Left in reference cycles, a figure written (and the sheets tried and dropped while it was fitted to
    # a slide) waited for the collector's next full pass, which then freed thousands of objects in one turn.
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "ATTN_STUDIO_DATA_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", FIGURES_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                         env=env, timeout=120, cwd=tmp_path)
    assert "left" in out.stdout, out.stdout + out.stderr
    assert out.stdout.split("left", 1)[1].strip() == str({"File → Export": {}, "Copy figure": {}, "in one piece": {}})
    assert (tmp_path / "compare.pdf").exists() and (tmp_path / "compare.png").exists()


FROZEN_SCRIPT = textwrap.dedent(r'''
    import gc, time, weakref
    from PySide6 import QtCore, QtWidgets
    app = QtWidgets.QApplication([])
    from attn_studio.gui.qt import worker
    from attn_studio.gui.window import MainWindow

    assert gc.isenabled() and gc.get_freeze_count() == 0
    window = MainWindow(restore_settings=False)  # however it is opened, the window starts the collector
    window.show()
    collector = app.findChild(worker._Collector)
    assert collector is not None and not gc.isenabled()
    frozen, walked = gc.get_freeze_count(), len(gc.get_objects())
    print("frozen", frozen, "walked", walked)

    class Cycle:
        pass

    made = []
    for _ in range(2_000):  # garbage in cycles, made after the start: the collector's timer frees it
        a, b = Cycle(), Cycle()
        a.b, b.a = b, a
        made.append(weakref.ref(a))
    del a, b
    deadline = time.monotonic() + 30
    while any(ref() is not None for ref in made) and time.monotonic() < deadline:
        app.processEvents(QtCore.QEventLoop.AllEvents, 50)
        time.sleep(0.01)
    print("cycles left", sum(ref() is not None for ref in made))
    window.studio.mark_saved()
    window.close()
    window.deleteLater()  # as attn-studio does: deleted while the application is there
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
    del window
    collector.stop()
    print("after stop", gc.isenabled(), gc.get_freeze_count())
''')


def test_the_collector_leaves_the_loaded_modules_out_of_its_passes_and_still_frees_cycles(tmp_path):
    # A full pass walked every object Python tracks (about 100,000 once Qt, NumPy and pyqtgraph are
    # loaded: 40-50 ms of a turn before any garbage). What was alive when the collector started is frozen.
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "ATTN_STUDIO_DATA_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", FROZEN_SCRIPT], capture_output=True, text=True, env=env,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    said = dict(line.split(" ", 1) for line in out.stdout.splitlines() if line.startswith(("frozen", "cycles")))
    frozen, walked = (int(v) for v in said["frozen"].split(" walked "))
    assert frozen > 50_000  # the modules loaded before the window: out of every pass
    assert walked < frozen / 4  # what a full pass walks: the window's own objects
    assert said["cycles"] == "left 0"  # garbage made since is freed by the collector as before
    assert "after stop True 0" in out.stdout  # stopped: automatic collection over everything again
