"""The laptop side of Present on two screens: the window with every dock shown (Model, Numbers, the √d_k
plots, Scenes, the presenter console) stays within the laptop's screen at 1920×1080, 1366×768 and
1280×720, every dock still usable, and the window shows the view the stage shows unless the lecturer
chose another. Each screen layout runs in a process of its own (the offscreen platform reads its
screens once, from a file: DESIGN.md, "Two screens without a display")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    from PySide6 import QtCore, QtWidgets
    from PySide6.QtTest import QTest
    app = QtWidgets.QApplication([])
    sys.path[:0] = [sys.argv[4], os.path.dirname(sys.argv[4])]
    from _pytest.monkeypatch import MonkeyPatch
    from shared_runs import shared_training
    shared_training(MonkeyPatch()).__enter__()  # the training scenes' runs: the session's shared runs
    from attn_studio.gui.window import MainWindow

    def spin(cond=None, timeout=30.0, turns=5):
        end = time.monotonic() + timeout
        for _ in range(turns):
            app.processEvents()
        while cond is not None and not cond() and time.monotonic() < end:
            app.processEvents()
            time.sleep(0.01)
        return cond is None or bool(cond())

    shots, follow, larger = sys.argv[1], sys.argv[2] == "follow", sys.argv[3] == "larger"
    laptop, projector = app.screens()
    available = laptop.availableGeometry()
    out = {"available": available.getRect()}
    w = MainWindow(restore_settings=False)
    if larger:  # placed larger than the laptop's screen, as a window kept from a larger screen might be
        w.setGeometry(QtCore.QRect(100, 100, 1500, 900))
    w.show()
    spin()
    w.scenes.open_example()
    spin(lambda: not w.scenes.showing())
    docks = {"model": w.controls_dock, "numbers": w.tables_dock, "plots": w.variance_dock, "scenes": w.scenes_dock,
             "console": w.presenter_dock}
    for name in ("model", "numbers", "plots", "scenes"):
        docks[name].show()
    w.present_action.trigger()
    spin(lambda: w.presenter_dock.isVisible())
    spin()

    def measure():
        frame = w.frameGeometry()
        least = w.minimumSizeHint().expandedTo(w.minimumSize())
        open_docks = {}
        for name, dock in docks.items():
            # Open (not closed) and docked; shown, or a tab of a place whose shown dock is open.
            tabs = [d for d in w.tabifiedDockWidgets(dock) if not d.isHidden()]
            place = [dock] + tabs
            open_docks[name] = {"open": not dock.isHidden(), "floating": dock.isFloating(),
                                "visible": dock.isVisible(),
                                "place_shown": any(d.isVisible() for d in place),
                                "height": max(d.height() for d in place if d.isVisible()) if any(
                                    d.isVisible() for d in place) else 0,
                                "width": dock.width()}
        # The docks' tab bars: the titles of each place's tabs, and the one in front.
        bars = [bar for bar in w.findChildren(QtWidgets.QTabBar) if bar.parent() is w and bar.isVisible()]
        tabs_in_front = {bar.tabText(bar.currentIndex()): [bar.tabText(i) for i in range(bar.count())]
                         for bar in bars}
        return {"tabs_in_front": tabs_in_front, "frame": frame.getRect(), "within": available.contains(frame), "least": [least.width(), least.height()],
                "stage": w.present.stage.screen().name(), "window": w.screen().name(), "docks": open_docks}

    out["presenting"] = measure()
    # The console in front of its tabs, and what the lecturer needs of it in sight without scrolling:
    # the scene, the clock, Previous and Next, the notes.
    console, holder = w.presenter_console, w.presenter_dock.widget()
    view = holder.viewport() if isinstance(holder, QtWidgets.QAbstractScrollArea) else holder
    def in_sight(widget):
        top_left = widget.mapTo(view, QtCore.QPoint(0, 0))
        return view.rect().contains(QtCore.QRect(top_left, widget.size()))
    out["console_in_sight"] = {name: w.presenter_dock.isVisible() and in_sight(part) for name, part in (
        ("current", console.current), ("clock", console.clock), ("previous", console.buttons["previous"]),
        ("next", console.buttons["next"]))}
    out["notes_lines"] = console.notes.viewport().height() / console.notes.fontMetrics().lineSpacing()
    w.grab().save(f"{shots}/window-every-dock-{available.width()}x{available.height()}.png")
    # A dock shown again later from the View menu: the window stays within its screen.
    action = w.tables_dock.toggleViewAction()
    action.trigger()
    spin()
    action.trigger()
    spin()
    out["after_view_menu"] = measure()
    if follow:
        stage = w.present.stage
        tab = lambda: w.view_tabs.tabText(w.view_tabs.currentIndex()).replace("&", "")
        seen = []

        def press(key, until, most=15):
            for _ in range(most):
                QTest.keyClick(stage, key)
                # The next press once the stage shows what was asked for, as the lecturer waits: a training
                # scene trains its run first (the stage keeps the scene before meanwhile). Never shown: the
                # view the stage kept is what the assertions read.
                if not spin(lambda: not w.scenes.showing(), timeout=240) or until():
                    break
            spin()
            seen.append([w.present.view, tab()])

        out["first"] = [w.present.view, tab()]
        press(QtCore.Qt.Key_PageDown, lambda: w.present.view == "Attention")
        press(QtCore.Qt.Key_PageUp, lambda: w.present.view == "Step by step")
        press(QtCore.Qt.Key_PageDown, lambda: w.present.view == "Compare", most=30)
        out["followed"] = seen[:]
        # The lecturer chooses another view in the window: it stays there whatever the stage shows next.
        w.view_tabs.setCurrentWidget(w.positional_view)
        spin()
        seen.clear()
        press(QtCore.Qt.Key_PageDown, lambda: w.present.view != "Compare", most=30)
        press(QtCore.Qt.Key_PageUp, lambda: w.present.view == "Step by step", most=40)
        out["kept"] = seen[:]
        # Present left and entered again: the window follows the stage again.
        w.present.leave()
        spin()
        w.present_action.trigger()
        spin(lambda: w.presenter_dock.isVisible())
        stage = w.present.stage
        seen.clear()
        press(QtCore.Qt.Key_PageDown, lambda: w.present.view not in ("Positions", "Step by step"), most=30)
        out["again"] = seen[:]
        # A training panel on the stage: the window's Training tab, on that panel.
        for key in (QtCore.Qt.Key_G, QtCore.Qt.Key_1, QtCore.Qt.Key_1, QtCore.Qt.Key_Return):
            QTest.keyClick(stage, key)
        spin(lambda: not w.scenes.showing() and w.present.view.startswith("Training: "), timeout=60)
        spin()
        inner = w.training.tab.tabs
        out["training"] = [w.present.view, tab(), inner.tabText(inner.currentIndex())]
        out["training_fit"] = measure()
        # Another panel of the lab chosen in the window: it stays when the stage goes to the next panel.
        chosen = next(i for i in range(inner.count()) if inner.tabText(i) not in out["training"][2]
                      and inner.tabText(i) != "Why two layers")
        inner.setCurrentIndex(chosen)
        spin()
        before = w.present.view
        press(QtCore.Qt.Key_PageDown, lambda: w.present.view != before, most=30)
        out["training_kept"] = [w.present.view, tab(), inner.tabText(inner.currentIndex()), inner.tabText(chosen)]
    print("RESULT" + json.dumps(out))
    sys.stdout.flush()
    import os
    os._exit(0)
""")


def _run(tmp_path, laptop: tuple[int, int], follow: bool, larger: bool = False) -> dict:
    width, height = laptop
    screens = {"screens": [
        {"name": "laptop", "x": 0, "y": 0, "width": width, "height": height, "logicalDpi": 96,
         "logicalBaseDpi": 96, "dpr": 1},
        {"name": "projector", "x": width, "y": 0, "width": 1280, "height": 720, "logicalDpi": 96,
         "logicalBaseDpi": 96, "dpr": 1}]}
    config = tmp_path / "screens.json"
    config.write_text(json.dumps(screens))
    shots = os.environ.get("ATTN_STUDIO_SHOTS", str(tmp_path))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}",
               ATTN_STUDIO_DATA_DIR=str(tmp_path / "data"))
    done = subprocess.run([sys.executable, "-c", SCRIPT, shots, "follow" if follow else "fit",
                           "larger" if larger else "fitted", os.path.dirname(os.path.abspath(__file__))], env=env,
                          capture_output=True, text=True, timeout=600)
    line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT")), None)
    assert line is not None, done.stdout + done.stderr
    return json.loads(line[len("RESULT"):])


def _fits(measured: dict, available: list[int]) -> None:
    assert measured["window"] == "laptop" and measured["stage"] == "projector"
    assert measured["within"], (measured["frame"], available)
    least_width, least_height = measured["least"]
    assert least_width <= 1280 and least_height <= available[3]
    for name, dock in measured["docks"].items():
        # Every dock open and docked, in sight or a tab beside the one in sight, and tall enough to use.
        assert dock["open"] and not dock["floating"], name
        assert dock["place_shown"], name
        assert dock["height"] >= 120 and dock["width"] >= 120, (name, dock)


@pytest.mark.parametrize("laptop", [(1920, 1080), (1366, 768), (1280, 720)])
def test_the_window_with_every_dock_stays_within_the_laptop(tmp_path, laptop):
    # At 1280×720 the window starts larger than the screen: Present on the projector brings it within.
    out = _run(tmp_path, laptop, follow=laptop == (1920, 1080), larger=laptop == (1280, 720))
    _fits(out["presenting"], out["available"])
    _fits(out["after_view_menu"], out["available"])
    # The console is the dock in front while presenting, and its scene, clock and buttons are in sight.
    front = out["presenting"]["tabs_in_front"]
    assert "Presenter console" in front or not any("Presenter console" in tabs for tabs in front.values()), front
    assert all(out["console_in_sight"].values()), out["console_in_sight"]
    assert out["notes_lines"] >= 3.5
    # Numbers shown again from the View menu comes in front of the dock it is a tab of.
    front = out["after_view_menu"]["tabs_in_front"]
    assert "Numbers" in front or not any("Numbers" in tabs for tabs in front.values()), front
    if laptop == (1920, 1080):
        # The window follows the stage's view: Step by step, Attention, Compare ...
        assert out["first"] == ["Step by step", "Step by step"]
        followed = out["followed"]
        assert [view for view, _ in followed] == ["Attention", "Step by step", "Compare"]
        assert all(view == shown for view, shown in followed), followed
        # ... until the lecturer chooses another view in the window: it stays there.
        kept = out["kept"]
        assert kept[0][0] != "Compare" and kept[1][0] == "Step by step"
        assert all(shown == "Positions" for _, shown in kept), kept
        # Present entered again: it follows again.
        again = out["again"]
        assert again[-1][0] not in ("Positions", "Step by step") and again[-1][0] == again[-1][1]
        view, tab, panel = out["training"]
        assert view.startswith("Training: ") and tab == "Training" and panel == view[len("Training: "):]
        view, tab, panel, chosen = out["training_kept"]
        assert view.startswith("Training: ") and view != out["training"][0] and (tab, panel) == ("Training", chosen)
        # The lab takes the window (the Model, Numbers and plots docks step aside): still within the screen.
        assert out["training_fit"]["within"] and out["training_fit"]["least"][0] <= 1280
