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


def test_the_caption_says_which_variance_it_measures(window):
    """The journey's 36 scores: population variance (ddof 0), which a student checks against np.var;
    the sample variance (ddof 1) would differ in the third decimal."""
    w = window
    w.load_preset("journey")
    settle(w)
    scores = w.studio.result.scores
    caption = find(w, QtWidgets.QLabel, "varianceCaption").text()
    assert f"population variance (ddof 0) of its {scores.size} scores" in caption
    assert scores.size == 36
    assert format_number(np.var(scores)) in caption
    assert format_number(np.var(scores, ddof=1)) not in caption


def test_an_overflow_leaves_the_variance_plot_whole(window):
    """Naive softmax fed X[0, 0] = 1000: the variance is ~1e10, off the fixed log scale. The scale holds
    still (no "(x1e+09)" multiplier, the same ticks), the markers are arrows at its top edge with their
    numbers beside them, and the heatmaps' colour bars are labelled at both ends."""
    from attn_studio.formatting import format_size
    from attn_studio.gui.views.heatmap import bar_text

    w = window
    w.load_preset("journey")
    settle(w)
    plot = w.variance_plot
    y_range = list(plot.variance.vb.viewRange()[1])
    axis = plot.variance.getAxis("left")
    ticks = list(axis._tickLevels[0])
    try:
        w.studio.update(softmax="naive")
        w.studio.set_embedding(w.studio.state.sentence.split()[0], 0, "1000")
        settle(w)
        raw, scaled = w.studio.measured_score_variance()
        assert raw > 1e9 and scaled > 1e9
        assert plot.variance.vb.viewRange()[1] == pytest.approx(y_range)  # the scale did not move
        assert list(axis._tickLevels[0]) == ticks
        assert not axis.autoSIPrefix and "x1e" not in axis.labelString()
        x, y = marker_xy(plot)
        assert len(y) == 2 and all(y_range[0] < v < y_range[1] for v in y)  # both in sight, at the edge
        assert list(plot.model_points.data["symbol"]) == ["t1", "t1"]  # arrows pointing up
        assert plot.off_scale["raw"].toPlainText() == f"{format_size(raw, 1)} ↑"
        assert plot.off_scale["scaled"].toPlainText() == f"{format_size(scaled, 1)} ↑"
        # The two numbers at one edge do not overlap.
        boxes = [plot.off_scale[k].mapRectToScene(plot.off_scale[k].boundingRect()) for k in ("raw", "scaled")]
        assert not boxes[0].intersects(boxes[1])
        for key in ("scores", "logits"):
            bar = w.heatmap_view.stage_bars[key]
            lo, hi = bar.levels()
            labels = [text for _, text in bar.axis._tickLevels[0]]
            assert labels == [bar_text(lo, w.heatmap_view.digits), "0", bar_text(hi, w.heatmap_view.digits)]
            assert hi >= 1e6 and labels[-1].endswith("e6")
    finally:
        w.studio.update(softmax="stable")
        w.load_preset("journey")
        settle(w)
    x, y = marker_xy(plot)
    assert list(plot.model_points.data["symbol"]) == ["o", "o"] and plot.off_scale["raw"].toPlainText() == ""
