"""The presenter console on two screens (a process of its own: the offscreen platform reads the screens
from a file): the next scene's picture, made from its own state off the GUI thread once per scene and
matching the engine's weights, and the toggle "instead of the window" (the console full screen on
the laptop, its keys and buttons still playing the lecture), and back beside it."""

from __future__ import annotations

import os
import textwrap

from attn_studio.scenes import example_lecture
from test_present_two_screens import run_on_two_screens

SCRIPT = textwrap.dedent("""
    import json, sys, time
    from PySide6 import QtCore, QtWidgets
    from PySide6.QtTest import QTest
    app = QtWidgets.QApplication([])
    from attn_studio.gui.lecture import console as console_module
    calls = []
    real = console_module.scene_weights
    console_module.scene_weights = lambda scene: calls.append(scene.title) or real(scene)
    from attn_studio.gui.window import MainWindow

    def spin(cond, timeout=60):
        end = time.monotonic() + timeout
        while not cond() and time.monotonic() < end:
            app.processEvents()
            time.sleep(0.01)
        return bool(cond())

    out = {}
    w = MainWindow(restore_settings=False, preset="animal")
    w.setGeometry(QtCore.QRect(100, 100, 1500, 900))
    w.show()
    w.scenes.open_example()
    app.processEvents()
    w.present_action.trigger()
    spin(lambda: w.presenter_dock.isVisible(), 5)
    lecture = w.scenes.lecture
    picture = w.findChild(QtWidgets.QLabel, "presenterNextPicture")
    made = lambda: picture.pixmap() is not None and not picture.pixmap().isNull()
    out["picture_made"] = spin(made)
    weights = real(lecture.scenes[1])
    image = picture.pixmap().toImage()
    cell = image.width() // weights.shape[1]
    # The darkest cell of the picture is the engine's largest weight, the lightest its smallest.
    def shade(r, c):
        return QtWidgets.QApplication.instance() and image.pixelColor(c * cell + cell // 2, r * cell + cell // 2).red()
    shades = [[shade(r, c) for c in range(weights.shape[1])] for r in range(weights.shape[0])]
    # A larger weight (by more than 0.01) is always a darker cell: the picture orders the cells as the
    # engine's weights do.
    flat = [(float(weights[r, c]), shades[r][c]) for r in range(weights.shape[0]) for c in range(weights.shape[1])]
    out["pairs"] = sum(1 for a, sa in flat for b, sb in flat if a > b + 0.01)
    out["misordered"] = sum(1 for a, sa in flat for b, sb in flat if a > b + 0.01 and not sa < sb)
    out["picture_size"] = [image.width(), image.height()]
    out["cells"] = list(weights.shape)
    # Forward and back: each scene's picture is made once.
    for key in (QtCore.Qt.Key_PageDown, QtCore.Qt.Key_PageUp, QtCore.Qt.Key_PageDown):
        QTest.keyClick(w.present.stage, key, QtCore.Qt.ShiftModifier)  # scene to scene
        spin(lambda: not w.scenes.showing())
        spin(made)
    out["calls"] = calls
    w.presenter_dock.grab().save(sys.argv[2] + "/console-beside.png")
    # Instead of the window: the console full screen on the laptop.
    toggle = w.findChild(QtWidgets.QPushButton, "presenter_instead")
    toggle.click()
    app.processEvents()
    screen = w.presenter_screen
    out["instead_visible"] = screen.isVisible() and screen.isFullScreen()
    out["instead_screen"] = screen.screen().name()
    out["instead_size"] = [screen.width(), screen.height()]
    out["dock_hidden"] = not w.presenter_dock.isVisible()
    out["stage_still"] = w.present.stage.screen().name()
    before = w.scenes.current
    QTest.keyClick(screen, QtCore.Qt.Key_PageDown, QtCore.Qt.ShiftModifier)
    spin(lambda: not w.scenes.showing())
    out["key_moved"] = w.scenes.current - before
    screen.findChild(QtWidgets.QPushButton, "presenter_next").click()
    spin(lambda: not w.scenes.showing())
    out["button_moved"] = w.scenes.current - before
    out["position"] = screen.findChild(QtWidgets.QLabel, "presenterPosition").text()
    spin(made, 10)
    screen.grab().save(sys.argv[2] + "/console-instead.png")
    toggle.click()
    app.processEvents()
    out["back_beside"] = w.presenter_dock.isVisible() and not screen.isVisible()
    print("RESULT" + json.dumps(out))
    sys.stdout.flush()
    import os
    os._exit(0)
""")


def test_the_console_shows_the_next_scene_and_can_replace_the_window(tmp_path):
    out = run_on_two_screens(SCRIPT, tmp_path, os.environ.get("ATTN_STUDIO_SHOTS", str(tmp_path)))
    assert out["picture_made"]
    assert out["pairs"] > 100 and out["misordered"] == 0
    assert out["picture_size"][0] >= out["cells"][1] * 4  # cells large enough to be seen
    titles = out["calls"]
    assert len(titles) == len(set(titles)) and len(titles) >= 2  # made once per scene
    assert out["instead_visible"] and out["instead_screen"] == "laptop" and out["instead_size"] == [1920, 1080]
    assert out["dock_hidden"] and out["stage_still"] == "projector"
    assert out["key_moved"] == 1 and out["button_moved"] == 2
    assert out["position"].startswith(f"Scene {out['button_moved'] + 2} of {len(example_lecture().scenes)}")
    assert out["back_beside"]


def test_the_console_s_instead_of_the_window_is_kept_for_the_next_run(qtbot, tmp_path, monkeypatch):
    from attn_studio.gui.window import MainWindow

    monkeypatch.setenv("ATTN_STUDIO_DATA_DIR", str(tmp_path))
    first = MainWindow()
    qtbot.addWidget(first)
    assert not first.presenter_console.buttons["instead"].isChecked()
    first.presenter_console.buttons["instead"].setChecked(True)
    second = MainWindow()
    qtbot.addWidget(second)
    assert second.presenter_console.buttons["instead"].isChecked()
    headless = MainWindow(restore_settings=False)  # an export's window reads nothing of the person's
    qtbot.addWidget(headless)
    assert not headless.presenter_console.buttons["instead"].isChecked()
    second.presenter_console.buttons["instead"].setChecked(False)
    third = MainWindow()
    qtbot.addWidget(third)
    assert not third.presenter_console.buttons["instead"].isChecked()
