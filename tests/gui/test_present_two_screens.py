"""Present on two screens (a laptop and a projector), in a process of its own: Qt's offscreen platform
reads the screen layout once, from a file (DESIGN.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from attn_studio.scenes import example_lecture

SCREENS = {"screens": [
    {"name": "laptop", "x": 0, "y": 0, "width": 1920, "height": 1080, "logicalDpi": 96, "logicalBaseDpi": 96,
     "dpr": 1},
    {"name": "projector", "x": 1920, "y": 0, "width": 1280, "height": 720, "logicalDpi": 96, "logicalBaseDpi": 96,
     "dpr": 1}]}

SCRIPT = textwrap.dedent("""
    import json, sys
    from PySide6 import QtCore, QtWidgets
    app = QtWidgets.QApplication([])
    from attn_studio.gui.window import MainWindow
    sys.path.insert(0, sys.argv[1])
    from stage_measure import drawn_texts
    out = {}
    laptop, projector = app.screens()
    w = MainWindow(restore_settings=False, preset="animal")
    w.setGeometry(QtCore.QRect(100, 100, 1500, 900))
    w.show()
    app.processEvents()
    w.present_action.trigger()
    app.processEvents()
    stage = w.present.stage
    out["stage_screen"] = stage.screen().name()
    out["stage_size"] = [stage.width(), stage.height()]
    out["window_screen"] = w.screen().name()
    out["window_visible"] = w.isVisible()
    hm = w.present.sheet.heatmaps[0]
    tokens = set(w.studio.state.query_tokens)
    out["drawn_labels"] = [px for t, px in drawn_texts(stage) if t in tokens]
    font = hm.left_axis.style["tickFont"]
    out["labels"] = [font.pixelSize() if font.pixelSize() > 0 else font.pointSizeF() * 96 / 72]
    out["rows_labelled"] = [t for _, t in hm.left_axis.labels()] == list(hm.data.row_labels)
    # An edit in the window (on the laptop) shows on the stage at once.
    w.heads_spin.setValue(3)
    w.bridge.flush()
    app.processEvents()
    out["heads"] = w.studio.state.heads
    out["stage_title"] = stage.findChild(QtWidgets.QLabel, "presentTitle").text()
    before = bool(w.present.sheet.heatmaps[0].data.masked.any())
    w.causal_check.setChecked(True)
    w.bridge.flush()
    app.processEvents()
    out["stage_changed"] = bool(w.present.sheet.heatmaps[0].data.masked.any()) != before
    out["stage_masked"] = bool(w.present.sheet.heatmaps[0].data.masked.any())
    # The projector unplugged: the stage comes back to the laptop, the work kept.
    w.present._screen_removed(projector)
    app.processEvents()
    out["after_unplug_screen"] = w.present.stage.screen().name()
    out["after_unplug_size"] = [w.present.stage.width(), w.present.stage.height()]
    out["after_unplug_causal"] = w.studio.state.causal
    # A lecture on two screens: the presenter console on the laptop follows the stage's scenes.
    w.present.leave()
    app.processEvents()
    w.scenes.open_example()
    app.processEvents()
    w.present_action.trigger()
    for _ in range(5):
        app.processEvents()
    out["console_shown"] = w.presenter_dock.isVisible()
    out["console_first"] = w.findChild(QtWidgets.QLabel, "presenterPosition").text()
    from PySide6.QtTest import QTest
    QTest.keyClick(w.present.stage, QtCore.Qt.Key_PageDown, QtCore.Qt.ShiftModifier)  # the next scene
    for _ in range(5):
        app.processEvents()
    out["console_second"] = w.findChild(QtWidgets.QLabel, "presenterPosition").text()
    # The window on the laptop waits for the stage to be drawn, then shows the scene too (it is not hidden).
    for _ in range(5):
        app.processEvents()
    x = w.numbers.models["embeddings"]
    out["window_after_scene"] = [w.updatesEnabled(), w.drawer.held, x.rowCount(), len(w.studio.state.key_tokens),
                                 float(x.data(x.index(0, 0), QtCore.Qt.EditRole)),
                                 float(w.studio.embeddings(w.studio.state.key_tokens[:1])[0, 0])]
    out["console_next"] = w.findChild(QtWidgets.QLabel, "presenterNext").text()
    # Esc in the window (the lecturer's laptop, clicked) ends it.
    from PySide6.QtTest import QTest
    w.activateWindow()
    app.setActiveWindow(w) if hasattr(app, "setActiveWindow") else None
    app.processEvents()
    QTest.keyClick(w, QtCore.Qt.Key_Escape)
    app.processEvents()
    out["active_after_esc"] = w.present.active
    print("RESULT" + json.dumps(out))
""")


def run_on_two_screens(script: str, tmp_path, *args) -> dict:
    """Run ``script`` in a process whose screens are SCREENS (its argv: this folder, then ``args``); the
    dict it prints after "RESULT"."""
    config = tmp_path / "screens.json"
    config.write_text(json.dumps(SCREENS))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}",
               ATTN_STUDIO_DATA_DIR=str(tmp_path / "data"))
    here = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run([sys.executable, "-c", script, here, *args], env=env, capture_output=True, text=True,
                          timeout=180)
    line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT")), None)
    assert line is not None, done.stdout + done.stderr
    return json.loads(line[len("RESULT"):])


def test_the_stage_fills_the_projector_and_follows_the_laptop(tmp_path):
    out = run_on_two_screens(SCRIPT, tmp_path)
    assert out["window_screen"] == "laptop" and out["window_visible"]
    assert out["stage_screen"] == "projector" and out["stage_size"] == [1280, 720]
    assert out["labels"] and min(out["labels"]) >= 30 and out["rows_labelled"]
    assert len(out["drawn_labels"]) > 10 and min(out["drawn_labels"]) >= 30
    assert out["heads"] == 3 and "of 3" in out["stage_title"]
    assert out["stage_changed"] and out["stage_masked"]
    assert out["after_unplug_screen"] == "laptop" and out["after_unplug_size"] == [1920, 1080]
    assert out["after_unplug_causal"] is True
    assert out["active_after_esc"] is False
    scenes = len(example_lecture().scenes)
    assert out["console_shown"] and out["console_first"].startswith(f"Scene 1 of {scenes}")
    assert out["console_second"].startswith(f"Scene 2 of {scenes}") and out["console_next"].startswith("Next: ")
    live, held, rows, tokens, shown, value = out["window_after_scene"]
    assert live and not held and rows == tokens and shown == value
