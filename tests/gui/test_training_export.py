"""The training lab's panels in File → Export: the figure whole (PNG, SVG) and the history as CSV,
through the window's own export path, like every other panel."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6 import QtGui, QtWidgets

from attn_studio.gui.files import figures
from attn_studio.training.report import history_table
from gui_helpers import settle
from window_reset import quiet


@pytest.fixture(scope="module")
def _lab_start(_module_window):
    return _module_window[0].training.settings()


@pytest.fixture
def window(_module_window, _lab_start, qtbot, shared_window):
    # One window serves the module: its state undone and its tab shown (the shared reset), then no
    # message, and once the lab is built every panel paused with its run started again from the
    # settings the window opened with (no step taken), the panel it opened with in front. Checked.
    w = shared_window
    quiet(w, qtbot)
    w.clear_message()
    if w.training.built:
        w.training.apply_settings(_lab_start)  # pauses each panel and rebuilds its run
        for panel in w.training.tab.panels.values():
            assert panel.runner.wait_idle()
    settle(w)
    assert w.training.settings() == _lab_start
    assert not w.message_label.isVisible()
    assert w.view_tabs.currentIndex() == _module_window[1]["tab"]
    if w.training.built:
        for panel in w.training.tab.panels.values():
            assert not panel.play_button.isChecked() and panel.runner.snapshot().steps == 0
    yield w
    quiet(w, qtbot)


def pixels(path) -> np.ndarray:
    image = QtGui.QImage(str(path)).convertToFormat(QtGui.QImage.Format_RGB888)
    assert not image.isNull(), f"{path} is not an image"
    rows = [np.frombuffer(image.constScanLine(y), np.uint8, image.width() * 3) for y in range(image.height())]
    return np.stack(rows).reshape(image.height(), image.width(), 3)


def test_the_shown_training_panel_exports_through_file_export(window, tmp_path):
    panel = window.training.open("scaling")
    panel.apply_settings({"d_k": 4, "speed": 0})
    for _ in range(3):
        panel.single_step()
        assert panel.runner.wait_idle()
    QtWidgets.QApplication.processEvents()
    snap = panel.runner.snapshot()
    assert snap.steps == 3
    name = window.current_panel_name()
    assert name == "training:scaling"

    # The Export menu lists the shown panel first and every panel of the lab by name.
    window.export_actions.export_menu.aboutToShow.emit()
    texts = [a.text() for a in window.export_actions.export_menu.actions()]
    assert texts[:2] == ["Why √dₖ figure (shown)…", "Why √dₖ history as CSV (shown)…"]
    lab_menu = window.findChild(QtWidgets.QMenu, "exportTrainingMenu")
    assert [a.text() for a in lab_menu.actions()] == [
        "Why √dₖ figure…", "Why √dₖ history as CSV…", "Why attention figure…", "Why attention history as CSV…",
        "Why two layers figure…", "Why two layers history as CSV…"]

    png = tmp_path / "scaling.png"
    assert window.export_panel(name, png, scale=1.0)
    image = pixels(png)
    page = type(panel.figure).page_size
    # The figure drawn for the page, not the panel on screen: its own size plus the page's margins,
    # and below the title band all of its height.
    assert image.shape[1] == page.width() + 2 * figures.MARGIN
    assert image.shape[0] > page.height() + 2 * figures.MARGIN
    ink = np.any(image < 200, axis=2)
    assert ink.mean() > 0.02, "the figure is (nearly) blank"
    scaled_blue = np.array([0x00, 0x72, 0xB2])  # the scaled arm's colour: its curves and histogram are drawn
    assert np.any(np.all(np.abs(image.astype(int) - scaled_blue) < 30, axis=2))
    # The same figure the panel's own Export button writes.
    own = tmp_path / "own.png"
    panel.export_figure(own, scale=1.0)
    assert pixels(own).shape == image.shape

    svg = tmp_path / "scaling.svg"
    assert window.export_panel(name, svg)
    text = svg.read_text(encoding="utf-8")
    for label in ("Accuracy", "Attention entropy", "d_k 4", "step 3"):
        assert label in text, label

    table = tmp_path / "scaling.csv"
    assert window.export_panel(name, table)
    with table.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, _ = history_table(snap.exp)
    assert rows[0] == list(header) and "scaled/loss" in rows[0] and "unscaled/accuracy" in rows[0]
    assert len(rows) == 1 + 3
    loss = [float(row[rows[0].index("scaled/loss")]) for row in rows[1:]]
    np.testing.assert_allclose(loss, snap.exp.history["scaled"]["loss"][:3], rtol=1e-12)


def test_a_panel_not_shown_exports_by_name_and_a_bad_name_is_refused(window, tmp_path):
    table = tmp_path / "seq2seq.csv"
    assert window.export_panel("training:seq2seq", table)  # builds the lab if not yet built; no step taken yet
    with table.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0][0] == "step" and "attention/loss" in rows[0] and len(rows) == 1
    shown = window.current_panel_name()
    assert window.export_panel("training:induction", tmp_path / "induction.png", scale=1.0)
    # Drawn for the page from the panel's run, whatever the window shows: the figure's own width.
    image = pixels(tmp_path / "induction.png")
    assert image.shape[1] == window.training.tab.panels["induction"].figure.page_size.width() + 2 * figures.MARGIN
    assert window.current_panel_name() == shown
    assert not window.export_panel("training:bigrams", tmp_path / "x.png")
    assert "training:seq2seq" in window.message_label.text()
