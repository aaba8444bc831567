"""No text over text in the training lab, in the window's panels and in their exported figures, at
any step of a run: every text's box is read off an SVG of the figure (``svg_boxes``) and no two
overlap. Runs are taken to the steps where their marks appear (the 90 % line, the drop of the
repeat's loss), and before the first step, when the plots are empty."""

from __future__ import annotations

import pytest
from PySide6 import QtCore

from attn_studio.gui.files import figures as files
from attn_studio.gui.files.sheet import lay_out_offscreen
from attn_studio.gui.training.figures import FIGURES, measured_snapshot, page_figure
from shared_runs import trained
from stage_measure import widget_svg
from svg_boxes import overlapping, text_shapes

# (experiment's settings, the steps each figure is read at): the last is where the run's marks are on the
# plots. Seed 0's runs, taken from the suite's shared runs (tests/shared_runs.py: the same runs, trained
# once for the session; the induction run is the one the ablation and the lecture read further on).
RUNS = {
    "scaling": ({"d_k": 64}, (0, 30, 400)),
    "seq2seq": ({}, (0, 300)),
    "induction": ({}, (0, 1400)),
}
# The window's panel at the sizes a person meets: a 1280×720 projector's (the lab takes the window:
# its docks step aside) and a full-HD screen's.
WINDOW_SIZES = ((1260, 600), (1900, 950))


@pytest.mark.parametrize("name", list(RUNS))
def test_no_text_over_text_in_a_training_figure_at_any_step(qapp, tmp_path, name):
    settings, steps = RUNS[name]
    seen = []
    for step in steps:
        exp = trained(name, 0, step, **settings)
        snap = measured_snapshot(name, exp)
        # The exported figure, as File → Export writes it.
        panel = page_figure(name, snap)
        out = tmp_path / f"{name}-{step}.svg"
        files.export_figure(panel, out, fmt="svg")
        files.done_with(panel)
        boxes = text_shapes(out.read_bytes())
        assert len(boxes) > 20  # the figure's texts were read
        assert overlapping(boxes) == [], (name, step, "figure")
        seen.append(" ".join(t for t, _ in boxes))
        # The window's panel, at each size.
        for size in WINDOW_SIZES:
            figure = FIGURES[name](page=False)
            lay_out_offscreen(figure, QtCore.QSize(*size))
            figure.draw(snap)
            lay_out_offscreen(figure, QtCore.QSize(*size))
            boxes = text_shapes(widget_svg(figure))
            assert overlapping(boxes) == [], (name, step, size)
            figure.deleteLater()
    # The runs reached the marks this test is about.
    if name == "scaling":
        assert "scaled: 90% at step" in seen[-1]
    if name == "induction":
        assert "repeat's loss drops" in seen[-1]


def test_an_empty_plot_shows_whole_steps(qapp):
    """Before the first step a plot's step axis runs 0 … 10 (it read 0.2, 0.4, …), and a log axis
    shows three labelled decades."""
    from attn_studio.gui.training.curves import CurvePlot

    plot = CurvePlot("Loss", "loss")
    plot.add_series("a", "a", "#000000")
    plot.set("a", [])
    low, high = plot.plot.vb.viewRange()[0]
    assert low <= 0 < 10 <= high < 11
    log = CurvePlot("norm", "norm", log_y=True)
    log.add_series("a", "a", "#000000")
    log.set("a", [])
    major = [text for _, text in log.plot.getAxis("left")._tickLevels[0]]
    assert major == ["0.001", "0.01", "0.1", "1"]


def shown_texts_overlapping(widget) -> list:
    """The pairs of overlapping texts of ``widget`` rendered as the viewer sees it."""
    return overlapping(text_shapes(widget_svg(widget)))


@pytest.mark.parametrize("screen, preset", [((1366, 768), "journey"), ((1280, 720), "animal")])
def test_no_text_over_text_in_any_tab_of_the_window(shared_window, screen, preset):
    """Every tab of the toy model's window (the page a tab shows, and the √d_k panel), on a laptop's
    and a projector's screen. Each page is rendered on its own: a text a widget clips (a long sentence
    in its box) is whole in an SVG, which keeps no clipping."""
    from gui_helpers import settle

    w = shared_window
    w.fit_to_screen(QtCore.QRect(0, 0, *screen))
    w.resize(*screen)
    w.load_preset(preset)
    settle(w)
    seen = 0
    for i in range(w.view_tabs.count()):
        if w.view_tabs.tabText(i) == "Training":
            continue  # the lab's figures: the test above
        if w.view_tabs.tabText(i) == "Heads":
            # The Head Lab's report card on the toy model is an empty table whose header sections scroll
            # under the panel beside it: an SVG keeps no clipping, so cut sections would read as overlaps.
            continue
        w.view_tabs.setCurrentIndex(i)
        settle(w)
        page = w.view_tabs.currentWidget()
        assert shown_texts_overlapping(page) == [], (screen, preset, w.view_tabs.tabText(i))
        seen += 1
    assert seen >= 6
    assert shown_texts_overlapping(w.variance_plot) == []


def test_no_text_over_text_in_the_variance_plot_after_an_overflow(shared_window):
    """Naive softmax fed X[0, 0] = 1000: the √d_k plots and the heatmaps keep every text apart."""
    from gui_helpers import settle

    w = shared_window
    w.load_preset("journey")
    settle(w)
    try:
        w.studio.update(softmax="naive")
        w.studio.set_embedding(w.studio.state.sentence.split()[0], 0, "1000")
        settle(w)
        assert w.studio.measured_score_variance()[0] > 1e9
        w.view_tabs.setCurrentIndex(0)
        settle(w)
        assert shown_texts_overlapping(w.variance_plot) == []
        assert shown_texts_overlapping(w.view_tabs.currentWidget()) == []
    finally:
        w.studio.update(softmax="stable")
