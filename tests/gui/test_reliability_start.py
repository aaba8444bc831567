"""Startup never depends on luck: hostile settings and recovery folders together, and the window opens."""

from __future__ import annotations

import logging
import os

import pytest
from PySide6 import QtWidgets

from attn_studio.gui import MainWindow, presentation, settings
from attn_studio.recovery import QUARANTINE, RecoveryStore
from attn_studio.state import StudioState


def hostile_start(zoom: str) -> None:
    folder = settings.data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.ini").write_text(
        f"[General]\nzoom={zoom}\ntheme=purple\ncolormap=42\nrecentFiles=7\n", encoding="utf-8")
    (folder / "recovery-31.attn.json").symlink_to(folder / "gone.attn.json")  # dangling
    (folder / "recovery-32.attn.json").mkdir()  # a folder named like a recovery file
    (folder / "recovery-32.attn.json" / "keep.txt").write_text("keep")
    # Work of a studio that ran as process 1 (as in a container) and was killed: no lock is held.
    RecoveryStore(folder, pid=1).save(StudioState(sentence="work of process one", causal=True))


@pytest.mark.parametrize("zoom", ["nan", "1e9"])
def test_the_window_opens_on_hostile_settings_and_recovery_folder(qtbot, caplog, zoom):
    hostile_start(zoom)
    caplog.set_level(logging.WARNING)
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    w.bridge.flush()
    assert w.windowTitle().startswith("journey")
    # Bad values fall back to their defaults (an out-of-range zoom to the nearest it may be), with a note.
    lo, hi = presentation.ZOOM_STEPS[0], presentation.ZOOM_STEPS[-1]
    assert presentation.STYLE.zoom == (1.0 if zoom == "nan" else hi) and lo <= presentation.STYLE.zoom <= hi
    assert presentation.STYLE.theme.name == settings.DEFAULT_THEME
    assert presentation.STYLE.weights_cmap == settings.DEFAULT_COLORMAP
    assert w.recent_files() == []
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "purple" in logged and "42" in logged and "recentFiles" in logged
    # The link and the folder are moved aside (never opened, never deleted), with a note saying where.
    folder = settings.data_dir()
    assert not os.path.lexists(folder / "recovery-31.attn.json")
    assert not os.path.lexists(folder / "recovery-32.attn.json")
    assert (next((folder / QUARANTINE).glob("*recovery-32.attn.json")) / "keep.txt").read_text() == "keep"
    assert QUARANTINE in w.message_label.text()
    # Process 1's work is offered (no "pid 1 is alive" guess): and it is what is restored.
    banner = w.findChild(QtWidgets.QFrame, "recoveryBanner")
    assert banner is not None and banner.isVisible()
    w.findChild(QtWidgets.QPushButton, "restoreButton").click()
    w.bridge.flush()
    assert w.studio.state.sentence == "work of process one" and w.studio.is_modified
    w.studio.mark_saved()
