"""``attn-studio FILE`` opens a session; a broken file is refused with one line, no window."""

import subprocess
import sys

from PySide6 import QtWidgets

from attn_studio import cli
from attn_studio.gui import MainWindow
from attn_studio.session import load_preset, write_session
from attn_studio.state import StudioState


def test_attn_studio_file_opens_the_session(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "lecture.attn.json"
    saved = StudioState(sentence="opened from the command line", d_model=4, d_head=2, heads=2, causal=True)
    write_session(path, saved)
    shown = []
    monkeypatch.setattr(MainWindow, "show", lambda self: shown.append(self.studio.state))
    monkeypatch.setattr(QtWidgets.QApplication, "exec", lambda self=None: 0)
    assert cli.main([str(path)]) == 0
    assert len(shown) == 1 and shown[0].to_dict() == saved.to_dict()


def test_attn_studio_file_applies_the_labs_settings_the_file_keeps(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "lab.attn.json"
    write_session(path, StudioState(), {"panel": "seq2seq", "scaling": {"seed": 12, "d_k": 8}})
    windows, seen = [], []
    monkeypatch.setattr(MainWindow, "show", lambda self: windows.append(self))
    monkeypatch.setattr(QtWidgets.QApplication, "exec", lambda self=None: seen.append(windows[0].training.settings()) or 0)
    assert cli.main([str(path)]) == 0
    assert seen[0]["panel"] == "seq2seq" and seen[0]["scaling"]["seed"] == 12 and seen[0]["scaling"]["d_k"] == 8


def test_a_broken_file_exits_with_one_line(tmp_path):
    path = tmp_path / "broken.attn.json"
    path.write_text('{"schema_version": 1, "heads": 0}')
    done = subprocess.run([sys.executable, "-m", "attn_studio", str(path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "heads" in lines[0] and "Traceback" not in done.stderr


def test_attn_studio_preset_names_its_example(qtbot, monkeypatch):
    shown = []
    monkeypatch.setattr(MainWindow, "show", lambda self: shown.append(self.preset_combo.currentData()))
    monkeypatch.setattr(QtWidgets.QApplication, "exec", lambda self=None: 0)
    assert cli.main(["--preset", "animal"]) == 0
    assert shown == ["animal"]


def test_the_example_box_says_when_the_model_was_edited(qtbot):
    w = MainWindow(preset="journey")
    qtbot.addWidget(w)
    w.show()
    combo = w.preset_combo
    assert combo.currentData() == "journey"
    w.studio.update(causal=True)
    w.bridge.flush()
    assert combo.currentIndex() == -1 and combo.placeholderText() == "journey (edited)"
    w.studio.select(query=3)  # following another token is not an edit
    w.studio.undo()
    w.bridge.flush()
    assert combo.currentData() == "journey"
    assert w.load_preset("bank") is True
    w.bridge.flush()
    assert combo.currentIndex() == combo.findData("bank") and combo.currentData() == "bank"
    assert w.studio.state.sentence == load_preset("bank").sentence


def test_the_window_collects_on_the_gui_thread_while_it_runs_and_gives_collection_back(qtbot, monkeypatch):
    # While the window runs, cycles are collected by a timer on the GUI thread (automatic collection
    # off); when main() returns, automatic collection is on again for whoever called it.
    import gc

    from attn_studio.gui.qt import worker

    # The tests' own collector (conftest) is stopped meanwhile: main() starts the application's.
    running = QtWidgets.QApplication.instance().findChild(worker._Collector)
    if running is not None:
        running.stop()
    seen = []
    monkeypatch.setattr(MainWindow, "show", lambda self: None)
    monkeypatch.setattr(QtWidgets.QApplication, "exec", lambda self=None: seen.append(gc.isenabled()) or 0)
    assert gc.isenabled()
    assert cli.main(["--preset", "journey"]) == 0
    assert seen == [False]
    assert gc.isenabled()
    if running is not None:
        worker.collect_on_gui_thread()  # the tests' collector again


def test_the_first_start_offers_the_tour_and_later_starts_do_not(qtbot, monkeypatch):
    """Nothing said what to do first: the app's first plain start opens Help → Getting started beside
    the window (non-modal); the settings remember it, so the next start opens only the window."""
    windows, tours = [], []
    monkeypatch.setattr(QtWidgets.QApplication, "exec",
                        lambda self=None: tours.append(getattr(windows[-1], "getting_started_dialog", None)) or 0)
    original_show = MainWindow.show
    monkeypatch.setattr(MainWindow, "show", lambda self: windows.append(self) or original_show(self))
    assert cli.main([]) == 0
    assert tours[0] is not None and tours[0].isVisible() and not tours[0].isModal()
    tours[0].close()
    assert cli.main([]) == 0
    assert getattr(windows[1], "getting_started_dialog", None) is None
