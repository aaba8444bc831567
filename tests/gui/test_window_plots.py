"""The variance plot marks the current model; the window renders and fits a 1366x768 screen."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets

from attn_studio.formatting import format_number
from gui_helpers import find, settle

Qt = QtCore.Qt


@pytest.fixture
def window(shared_window):
    # These tests change the Studio's state and the window's size only: one window serves the module.
    return shared_window


def marker_xy(plot) -> tuple[np.ndarray, np.ndarray]:
    x, y = plot.model_points.getData()
    return np.asarray(x, dtype=float), np.asarray(y, dtype=float)


def check_marker(w, d_k: int):
    plot = w.variance_plot
    assert w.studio.state.d_k == d_k
    x, y = marker_xy(plot)
    assert len(x) == 2  # unscaled and scaled
    np.testing.assert_allclose(x, np.log10(d_k))
    raw = float(np.var(w.studio.result.scores))
    np.testing.assert_allclose(y, [np.log10(raw), np.log10(raw / d_k)], rtol=1e-9)
    np.testing.assert_allclose(plot.dk_line.value(), np.log10(d_k))
    assert f"d_k = {d_k}" in plot.model_label.toPlainText()
    caption = find(w, QtWidgets.QLabel, "varianceCaption").text()
    assert "d_k" in caption and f"√{d_k}" in caption, caption
    assert format_number(raw) in caption


def test_variance_plot_marks_this_model_and_follows_d_head(window):
    w = window
    assert find(w, QtWidgets.QWidget, "variancePlot") is w.variance_plot
    # journey: projections off, so d_k = d_model = 3
    check_marker(w, 3)
    w.load_preset("animal")
    settle(w)
    check_marker(w, 4)
    find(w, QtWidgets.QSpinBox, "dHeadSpin").setValue(16)
    settle(w)
    check_marker(w, 16)
    # the marker sits where the curves are drawn
    curve_x = w.variance_plot.raw_curve.getData()[0]  # log10(d), as the axis is logarithmic
    assert curve_x.min() <= np.log10(16) <= curve_x.max()
    find(w, QtWidgets.QSpinBox, "dHeadSpin").setValue(2)
    settle(w)
    check_marker(w, 2)


def test_scaling_off_is_said_in_the_caption(window):
    w = window
    box = find(w, QtWidgets.QCheckBox, "scaleCheck")
    caption = find(w, QtWidgets.QLabel, "varianceCaption")
    assert not w.studio.state.scale  # journey is unscaled, like its seed
    assert "unscaled" in caption.text()
    box.click()
    settle(w)
    assert w.studio.state.scale
    assert "heatmaps are scaled" in caption.text()


def test_window_renders(window):
    w = window
    image = w.grab().toImage()
    assert not image.isNull()
    assert image.width() >= w.minimumSize().width() and image.height() >= w.minimumSize().height()
    assert image.width() >= w.width() and image.height() >= w.height()
    # not a blank window: many distinct colours (heatmaps, text, controls)
    small = image.scaled(200, 120)
    colours = {small.pixel(x, y) for x in range(small.width()) for y in range(small.height())}
    assert len(colours) > 50
    # the weights heatmap has been painted with a real size
    canvas = w.heatmap_view.canvases["weights"]
    assert canvas.isVisible() and canvas.width() > 100 and canvas.height() > 100


def test_window_fits_a_1366x768_screen(window, qtbot):
    w = window
    hint = w.minimumSizeHint()
    assert hint.width() <= 1366 and hint.height() <= 768, hint
    assert w.minimumSize().width() <= 1366 and w.minimumSize().height() <= 768
    w.resize(1366, 768)
    settle(w)
    qtbot.wait(10)
    assert w.width() <= 1366 and w.height() <= 768, w.size()
    # every part is still there and usable (the Numbers and the plots beside Step by step: at 1366 px they
    # step aside for the Attention tab)
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    for cls, name in ((QtWidgets.QLineEdit, "sentenceEdit"), (QtWidgets.QTableView, "embeddingTable"),
                      (QtWidgets.QWidget, "variancePlot")):
        widget = find(w, cls, name)
        assert widget.isVisible() and widget.width() > 50 and widget.height() > 20, name
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    settle(w)
    widget = find(w, QtWidgets.QWidget, "heatmapView")
    assert widget.isVisible() and widget.width() > 50 and widget.height() > 20
    for canvas in w.heatmap_view.canvases.values():
        assert canvas.width() >= canvas.minimumWidth() and canvas.height() >= canvas.minimumHeight()
    image = w.grab().toImage()
    assert (image.width(), image.height()) == (w.width(), w.height())


def test_a_new_window_after_the_first_is_closed(qtbot):
    """Opening a second window (a new session) must not touch the first one's deleted plot items."""
    from attn_studio.gui.window import MainWindow

    first = MainWindow()
    first.show()
    first.close()
    first.deleteLater()
    QtWidgets.QApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
    QtWidgets.QApplication.processEvents()
    second = MainWindow()
    qtbot.addWidget(second)
    second.show()
    settle(second)
    # The second window draws its own studio's numbers, and keeps doing so after an edit
    # (an edit that reached the first window's deleted items would raise here).
    second.studio.update(causal=True)
    settle(second)
    shown = second.heatmap_view.stages["weights"].image.image
    weights = second.studio.result.weights[second.studio.state.shown_head]
    upper = np.triu(np.ones(weights.shape, dtype=bool), k=1)
    assert upper.any() and np.isnan(shown[upper]).all()
    np.testing.assert_allclose(shown[~upper], weights[~upper])
    curve_x, curve_y = second.variance_plot.raw_curve.getData()
    assert len(curve_x) == len(second.studio.variance_curve().dims) and np.isfinite(curve_y).all()


def test_the_markers_keep_their_colours_and_are_drawn_once_per_kind(window):
    # Every redraw reuses the two markers (unscaled, scaled): pyqtgraph keeps one image per
    # marker brush, and a new brush per edit would add two images on every edit.
    plot = window.variance_plot
    for i in range(6):
        window.studio.set_embedding(window.studio.state.query_tokens[0], 0, f"{0.1 * (i + 1):.1f}")
        settle(window)
        plot.grab()  # painted: the markers' images are made when they are drawn
    assert len(plot.model_points.fragmentAtlas) <= 2
    brushes = [brush.color().name() for brush in plot.model_points.data["brush"]]
    assert brushes == ["#d55e00", "#0072b2"]  # unscaled vermillion, scaled blue


def test_an_edit_moves_the_marker_without_stroking_the_curves_again(window, monkeypatch):
    # The curves are fixed: painted once into a cache, they are copied when the marker on them
    # moves. A figure still draws them as lines (its export turns the caches off).
    plot = window.variance_plot
    plot.canvas.viewport().repaint()
    strokes = []
    curves = [item.curve for chart in (plot.variance, plot.saturation) for item in chart.listDataItems()
              if hasattr(item, "curve")]
    assert len(curves) == 8
    for curve in curves:  # on each item: PySide calls a class's paint as it was when the item was made
        paint = curve.paint
        monkeypatch.setattr(curve, "paint", lambda *args, curve=curve, paint=paint: (strokes.append(curve), paint(*args)))
    for i in range(3):
        window.studio.set_embedding(window.studio.state.query_tokens[0], 1, f"{0.2 * (i + 1):.1f}")
        settle(window)
        plot.canvas.viewport().repaint()
    assert strokes == []
    x, _ = marker_xy(plot)
    assert len(x) == 2  # the marker was drawn anew
    from attn_studio.gui.files import figures

    figures.render_panel(plot, scale=1.0)
    assert len(set(strokes)) == 8  # every curve, drawn for the figure


def test_an_edit_lays_nothing_out_again_and_the_caption_says_its_numbers(window, qtbot):
    # The caption's numbers change on every edit, its size never: the window, the dock and the
    # plot are not laid out again (that cost half a millisecond an edit), and the words are new.
    w = window
    settle(w)
    asked = []

    class Watch(QtCore.QObject):
        def eventFilter(self, obj, event):
            if event.type() == QtCore.QEvent.LayoutRequest and obj in (w, w.variance_dock, w.variance_plot):
                asked.append(obj.objectName())
            return False

    watch = Watch()
    QtWidgets.QApplication.instance().installEventFilter(watch)
    try:
        for i in range(3):
            w.studio.set_embedding(w.studio.state.query_tokens[0], 2, f"{0.3 * (i + 1):.1f}")
            settle(w)
            check_marker(w, w.studio.state.d_k)  # the caption says this model's numbers
    finally:
        QtWidgets.QApplication.instance().removeEventFilter(watch)
    assert asked == []
    caption = w.variance_plot.caption
    assert caption.isVisible() and caption.height() >= caption.heightForWidth(caption.width())
