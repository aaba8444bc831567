"""File → Export and Copy figure in steps: the window's event loop runs while a figure is built and
painted, the pixels are the ones the whole figure painted at once has, files are whole."""

from __future__ import annotations

import contextlib
import time

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.gui.files import banded_image, export, figures
from attn_studio.gui.files.banded_image import BandedImage
from attn_studio.gui.files.filled_dashes import dashed
from gui_helpers import settle

SENTENCE = "the quick brown fox jumps over the lazy dog while the cat sleeps on a warm mat today"


@pytest.fixture
def window(_module_window, shared_window):
    shared_window.studio.update(sentence=SENTENCE, heads=4)
    settle(shared_window)
    assert shared_window.studio.state.heads == 4
    return shared_window


def pixels(image: QtGui.QImage) -> np.ndarray:
    image = image.convertToFormat(QtGui.QImage.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint32, count=image.width() * image.height()).reshape(
        image.height(), image.width()).copy()


def assert_same_figure(image: QtGui.QImage, reference: QtGui.QImage, scale: float) -> None:
    """The figure painted at once, but for one thing, said here.

    Text, lines, labels and titles are the very pixels they were. A heatmap's cells and a colour bar's
    steps are small images stretched by Qt's nearest-pixel image scaler, which counts the image's rows
    from where the clip starts; in a band that starts inside such an image an edge between two cells
    (or two steps of the colour map) may land a few device rows off, less than a pixel of the figure (the
    scaler's rounding adds up along a tall image). So a pixel that differs has the colour of the reference
    pixel at most ``scale`` + 1 rows above or below it in its column, and such pixels are few."""
    a, b = pixels(reference), pixels(image)
    assert a.shape == b.shape
    rows, cols = np.nonzero(a != b)
    got = b[rows, cols]
    near = np.zeros(rows.size, dtype=bool)
    reach = int(np.ceil(scale)) + 1
    for shift in [s for s in range(-reach, reach + 1) if s]:
        near |= got == a[np.clip(rows + shift, 0, a.shape[0] - 1), cols]
    assert near.all(), f"{(~near).sum()} pixels differ by more than an edge's shift"
    assert rows.size <= 0.01 * a.size, f"{rows.size} of {a.size} pixels differ"


@pytest.mark.parametrize("name, scale", [("heatmaps", 2.0), ("compare", 1.0), ("compare", 2.0),
                                         ("outputs", 3.0), ("outputs", 1.0), ("steps", 2.0), ("head:1", 2.0)])
def test_a_figure_painted_band_by_band_is_the_figure_painted_at_once(window, name, scale):
    panel = export.find_panel(window, name)
    reference = figures.render_panel(panel, scale)
    banded = BandedImage(panel, scale, budget=0.002)  # small bands: many band edges to check
    while not banded.step():
        pass
    assert len(banded.tops) >= 3, "painted in one piece"
    assert_same_figure(banded.image, reference, scale)
    export.done_with(panel)


def _dashed_plot_rects(panel, image_scale) -> list[QtCore.QRect]:
    """The image rects (device pixels) of the plots in ``panel`` that draw a dashed curve with data."""
    import pyqtgraph as pg

    layout = figures._Layout(panel, None)
    rects = []
    for view in [panel.widget, *panel.widget.findChildren(QtWidgets.QGraphicsView)]:
        if not isinstance(view, QtWidgets.QGraphicsView) or view.scene() is None:
            continue
        for item in view.scene().items():
            if isinstance(item, pg.PlotCurveItem) and item.opts["pen"].style() == QtCore.Qt.DashLine \
                    and item.xData is not None and len(item.xData) > 1:
                box = view.mapFromScene(item.getViewBox().sceneBoundingRect()).boundingRect()
                top_left = view.viewport().mapTo(panel.widget, box.topLeft()) + layout.panel_pos - layout.source.topLeft()
                rects.append(QtCore.QRect(round(top_left.x() * image_scale), round(top_left.y() * image_scale),
                                          round(box.width() * image_scale), round(box.height() * image_scale)))
    return rects


def _banded_pixels(panel, scale):
    banded = BandedImage(panel, scale, budget=0.002)  # small bands: many band edges
    while not banded.step():
        pass
    return banded, pixels(banded.image)


def _same_in(image, reference, rect) -> bool:
    rows, cols = slice(rect.top(), rect.bottom() + 1), slice(rect.left(), rect.right() + 1)
    return bool((image[rows, cols] == reference[rows, cols]).all())


def test_a_training_figure_with_dashed_curves_is_painted_in_bands_with_its_dashes_unbroken(window):
    # The induction figure's loss and score plots draw dashed curves (first copy, previous-token score)
    # and a dashed "guessing" line. It is painted in bands, and its plots are the very pixels of the
    # figure painted at once, though band edges cross them.
    lab = window.training.open("induction")
    for _ in range(6):
        lab.single_step()
        assert lab.runner.wait_idle()
    QtWidgets.QApplication.processEvents()
    panel = export.find_panel(window, "training:induction")
    assert dashed(figures._scenes(panel))
    plots = _dashed_plot_rects(panel, 2.0)
    assert len(plots) >= 2, "no dashed curve drawn"
    reference = figures.render_panel(panel, 2.0)
    banded, image = _banded_pixels(panel, 2.0)
    assert len(banded.tops) >= 10, "painted in one piece"
    for rect in plots:
        assert [t for t in banded.tops if rect.top() < t < rect.bottom()], "no band edge crosses this plot"
        assert _same_in(image, pixels(reference), rect)
    assert_same_figure(banded.image, reference, 2.0)  # and the heatmaps beside them as the band code allows
    export.done_with(panel)


def test_a_dashed_curve_across_many_bands_keeps_its_dashes(window, monkeypatch):
    # The √d_k plot's theory lines are dashed and climb across the whole plot: painted in bands, the
    # figure is the figure painted at once, pixel for pixel.
    panel = export.find_panel(window, "variance")
    plots = _dashed_plot_rects(panel, 2.0)
    assert plots
    reference = pixels(figures.render_panel(panel, 2.0))
    banded, image = _banded_pixels(panel, 2.0)
    assert len(banded.tops) >= 5, "painted in one piece"
    assert (image == reference).all()
    # What this guards against: the same bands with the curves stroked by Qt's dashed pen start the
    # dashes again where a band's edge cuts a curve.
    monkeypatch.setattr(banded_image, "FilledDashes", lambda scenes: contextlib.nullcontext())
    _banded, stroked = _banded_pixels(panel, 2.0)
    assert not all(_same_in(stroked, reference, rect) for rect in plots)
    export.done_with(panel)


def test_file_export_runs_the_event_loop_between_its_pieces_and_writes_every_format(window, tmp_path,
                                                                                    monkeypatch):
    actions = window.export_actions
    window.view_tabs.setCurrentWidget(window.compare_view)
    ticks = []
    timer = QtCore.QTimer()
    timer.timeout.connect(lambda: ticks.append(actions.busy()))
    timer.start(0)
    messages = []
    monkeypatch.setattr(actions, "status", lambda text, ms=0: messages.append(text))
    for fmt in ("png", "svg", "pdf"):
        out = tmp_path / f"compare.{fmt}"
        monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
        del ticks[:]
        assert actions.export_panel_dialog("compare")
        assert not out.exists() and actions.busy()  # under way, not done inside the menu's click
        assert actions.wait_written()
        assert not actions.busy()
        assert sum(ticks) >= 3, f"the event loop ran {sum(ticks)} times while {fmt} was made"
        assert messages[-1] == f"Exported compare as {fmt.upper()} to {out}"
        assert any(m.startswith("Exporting compare") for m in messages)
    timer.stop()
    image = QtGui.QImage(str(tmp_path / "compare.png"))
    expected = figures.render_panel(export.find_panel(window, "compare"), actions.png_scale)
    assert (image.width(), image.height()) == (expected.width(), expected.height())
    assert bytes((tmp_path / "compare.pdf").read_bytes()[:5]) == b"%PDF-"
    assert b"<svg" in (tmp_path / "compare.svg").read_bytes()


def test_a_second_export_waits_for_the_first_and_both_files_are_whole(window, tmp_path, monkeypatch):
    actions = window.export_actions
    first, second = tmp_path / "heatmaps.png", tmp_path / "steps.png"
    for name, out in (("heatmaps", first), ("steps", second)):
        monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, o=out, **k: (str(o), ""))
        assert actions.export_panel_dialog(name)
    assert len(actions.exports) == 2
    assert actions.wait_written()
    for name, out in (("heatmaps", first), ("steps", second)):
        image = QtGui.QImage(str(out))
        expected = figures.render_panel(export.find_panel(window, name), actions.png_scale)
        assert (image.width(), image.height()) == (expected.width(), expected.height()), name
    assert [p.name for p in sorted(tmp_path.iterdir())] == ["heatmaps.png", "steps.png"]  # nothing half-written


def test_copy_figure_from_the_menu_puts_the_figure_painted_at_once_on_the_clipboard(window):
    actions = window.export_actions
    window.view_tabs.setCurrentWidget(window.compare_view)
    clipboard = QtWidgets.QApplication.clipboard()
    clipboard.clear()
    actions.copy_figure_action.trigger()
    assert actions.busy()  # under way: the menu's click returned
    assert actions.wait_written()
    reference = figures.render_panel(export.find_panel(window, "compare"), actions.png_scale)
    copied = QtGui.QImage.fromData(bytes(clipboard.mimeData().data("image/png").data()))
    assert (copied.width(), copied.height()) == (reference.width(), reference.height())
    assert_same_figure(copied, reference, actions.png_scale)
    assert clipboard.mimeData().hasFormat("image/svg+xml")


def test_closing_the_window_during_an_export_does_not_crash(fresh_window, tmp_path, monkeypatch, qtbot):
    window = fresh_window
    window.studio.update(sentence=SENTENCE)
    out = tmp_path / "compare.png"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    actions = window.export_actions
    assert actions.export_panel_dialog("compare")
    QtWidgets.QApplication.processEvents()  # under way
    window.studio.mark_saved()
    window.close()
    assert actions.wait_written()
    assert not actions.busy()
    # The file is whole (written atomically) when it is there at all.
    if out.exists():
        assert not QtGui.QImage(str(out)).isNull()


def test_a_png_compressed_on_the_worker_has_the_pixels_and_dpi_of_qts_own(window):
    # Made with NumPy and zlib, which let go of Python's lock while they work (Qt's encoder holds it).
    image = figures.render_panel(export.find_panel(window, "compare"), 2.0)
    data = figures.png_off_the_gui_thread(image, 192)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[25] == 2  # RGB, no alpha: the figure is opaque
    back = QtGui.QImage.fromData(data)
    assert round(back.dotsPerMeterX() * 0.0254) == 192
    assert (pixels(back) == pixels(image)).all()
    qt = QtGui.QImage.fromData(figures.encode_png(QtGui.QImage(image), 192))
    assert (pixels(back) == pixels(qt)).all()
    # A transparent pixel: written by Qt, with its alpha.
    see_through = QtGui.QImage(image)
    see_through.setPixelColor(3, 2, QtGui.QColor(0, 0, 0, 0))
    assert figures.png_off_the_gui_thread(see_through, 96)[25] == 6


@pytest.mark.parametrize("name", ["training:scaling", "training:seq2seq"])
def test_a_figure_painted_in_bands_with_the_window_running_between_them_is_the_figure_painted_at_once(window, name):
    # As File → Export paints it: the window's event loop runs between two bands. Painting an axis may ask
    # for its plot to be laid out again (its labels need more room); done between two bands, the bands after
    # it showed the plots moved (the figure in misaligned strips). The layouts wait for the last band.
    panel = export.find_panel(window, name)
    reference = figures.render_panel(panel, 2.0)
    export.done_with(panel)
    panel = export.find_panel(window, name)
    banded = BandedImage(panel, 2.0, budget=0.002)
    while not banded.step():
        QtWidgets.QApplication.processEvents()
    assert len(banded.tops) >= 10, "painted in one piece"
    assert_same_figure(banded.image, reference, 2.0)
    export.done_with(panel)


def test_the_first_export_of_a_panel_never_opened_lets_the_window_run_while_its_run_is_built(
        fresh_window, tmp_path, monkeypatch):
    # A training panel never opened builds its experiment on its worker when it is first exported; the
    # export waited for it in a sleep on the GUI thread (a 340 ms turn for "Why two layers"). The build here
    # goes on once the window has turned a few times, or after two seconds.
    from attn_studio.gui.training.scaling_panel import ScalingPanel

    window = fresh_window
    ticks = []
    timer = QtCore.QTimer()
    timer.setInterval(1)
    timer.timeout.connect(lambda: ticks.append(1))
    turned = []
    real = ScalingPanel._make

    def make(panel, seed=None):
        start = len(ticks)
        for _ in range(400):
            if len(ticks) >= start + 3:
                break
            time.sleep(0.005)
        turned.append(len(ticks) - start)
        return real(panel, seed)

    monkeypatch.setattr(ScalingPanel, "_make", make)
    out = tmp_path / "scaling.png"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    assert "scaling" not in window.training.tab.built
    timer.start()
    try:
        assert window.export_actions.export_panel_dialog("training:scaling")
        assert window.export_actions.wait_written()
    finally:
        timer.stop()
    assert turned and turned[0] >= 3, "the window did not run while the panel's run was built"
    assert not QtGui.QImage(str(out)).isNull()
