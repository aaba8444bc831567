"""A command that writes a figure keeps no work: it never writes a recovery file, however slow.

The export builds the whole main window, whose autosave writes unsaved work a few seconds after a
change; a trained model's export is unsaved work as far as the window knows, and a change can reach
the window while the export runs (a result its model worker installs late). Here the autosave is
made to fire at once, such a change arrives, and the export is made slow (its event loop turns for
half a second), as on a loaded machine: the data folder must stay without a recovery file, and a
recovery file another run left is neither offered nor touched.
"""

from __future__ import annotations

import time

import pytest

from attn_studio.pretrained import default_model_zip
from test_cli_export import run_here

ANIMAL = "The animal didn't cross the street because it was too tired."


@pytest.fixture
def slow_export(monkeypatch):
    """Autosave 1 ms after a change; when the export first settles, a change of the model it shows,
    then half a second of event-loop turns."""
    from PySide6 import QtWidgets

    from attn_studio.gui import widgets
    from attn_studio.gui.files import file_actions

    monkeypatch.setattr(file_actions, "AUTOSAVE_MS", 1)
    settle = widgets.settle
    changed = []

    def slow_settle(window):
        app = QtWidgets.QApplication.instance()
        settle(window)
        if not changed:
            changed.append(True)
            studio = window.studio.target
            if hasattr(studio, "model"):  # a trained model
                studio.update(second_sentence="A change that arrives late.")
            else:
                studio.update(temperature=2.0)
            window.bridge.flush()
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.02)

    monkeypatch.setattr(widgets, "settle", slow_settle)  # the export settles its window through it


def recovery_files():
    from attn_studio.gui.settings import data_dir

    folder = data_dir()
    return sorted(p.name for p in folder.glob("recovery-*")) if folder.exists() else []


@pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")
def test_a_slow_trained_export_writes_no_recovery_file(tmp_path, capfd, slow_export):
    out = tmp_path / "drift.png"
    done = run_here(capfd, "export", "--model", "all-MiniLM-L6-v2", "--text", ANIMAL, "--panel", "drift", "--scale", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert out.exists()
    assert recovery_files() == []


def test_a_slow_toy_export_writes_no_recovery_file(tmp_path, capfd, slow_export):
    done = run_here(capfd, "export", "--preset", "animal", "--panel", "steps", "--out", str(tmp_path / "s.svg"))
    assert done.returncode == 0, done.stderr
    assert recovery_files() == []


def test_an_export_leaves_another_runs_recovery_alone(tmp_path, capfd):
    from attn_studio.gui.settings import data_dir
    from attn_studio.recovery import RecoveryStore
    from attn_studio.state import StudioState

    crashed = RecoveryStore(data_dir(), pid=2**22 + 4321)
    crashed.save(StudioState(sentence="work of a crashed window"))
    before = crashed.path.read_bytes()
    done = run_here(capfd, "export", "--preset", "journey", "--panel", "steps", "--out", str(tmp_path / "s.svg"))
    assert done.returncode == 0, done.stderr
    assert crashed.path.read_bytes() == before  # still there for the window to offer
