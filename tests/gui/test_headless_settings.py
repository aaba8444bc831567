"""``attn-studio export`` draws the same figure whatever the user saved in the settings."""

from __future__ import annotations

import os
import subprocess
import sys

from PySide6 import QtWidgets

from attn_studio import cli
from attn_studio.gui import presentation, settings


def _write_settings(monkeypatch, folder, **values):
    monkeypatch.setenv("ATTN_STUDIO_DATA_DIR", str(folder))
    store = settings.settings()
    for key, value in values.items():
        store.setValue(key, value)
    store.sync()
    return folder / "settings.ini"


def _start_export(folder, out) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["ATTN_STUDIO_DATA_DIR"] = str(folder)
    return subprocess.Popen([sys.executable, "-m", "attn_studio", "export", "--preset", "journey",
                             "--panel", "heatmaps", "--out", str(out), "--scale", "1"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen) -> str:
    """Wait for an export process (killed if it hangs); its standard error."""
    try:
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return stderr


def test_export_ignores_saved_theme_and_zoom(tmp_path, monkeypatch, qtbot):
    dark = _write_settings(monkeypatch, tmp_path / "dark", theme="dark", zoom=1.5, colormap="magma")
    before = dark.read_bytes()
    # The interactive window does read this file: the settings are real ones.
    from attn_studio.gui import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    assert (presentation.STYLE.theme.name, presentation.STYLE.zoom, presentation.STYLE.weights_cmap) == \
        ("dark", 1.5, "magma")
    window.set_theme("light")
    window.set_zoom(1.0)
    window.set_colormap("viridis")
    window.restore_settings = False  # closing this test window must not rewrite the file
    window.close()

    # With the saved settings: a fresh process (nothing read at start-up either). Without any:
    # the command's main() in this process, drawn while that process starts up.
    themed_export = _start_export(tmp_path / "dark", tmp_path / "dark.png")
    try:
        monkeypatch.setenv("ATTN_STUDIO_DATA_DIR", str(tmp_path / "plain"))
        assert cli.main(["export", "--preset", "journey", "--panel", "heatmaps",
                         "--out", str(tmp_path / "plain.png"), "--scale", "1"]) == 0
        plain = (tmp_path / "plain.png").read_bytes()
    finally:
        stderr = _finish(themed_export)
    assert themed_export.returncode == 0, stderr
    themed = (tmp_path / "dark.png").read_bytes()
    assert themed == plain
    assert dark.read_bytes() == before  # the export wrote nothing into the user's settings
    assert not (tmp_path / "plain" / "settings.ini").exists()


def test_window_without_user_settings_uses_the_defaults(tmp_path, monkeypatch, qtbot):
    _write_settings(monkeypatch, tmp_path / "dark", theme="dark", zoom=2.0)
    from attn_studio.gui import MainWindow

    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    assert presentation.STYLE.theme.name == "light" and presentation.STYLE.zoom == 1.0
    window.close()
    assert QtWidgets.QApplication.instance() is not None
