"""Geometry and the training lab's panels leave the window as figures for the page.

Each figure is exported at three window sizes and its texts read back from an SVG rendering
(`stage_measure.drawn_texts`): the same texts and the same size every time, and none of the
window's controls (read off the live panel, not listed here) or hints in it. ``attn-studio train
--png`` writes the very figure the panel's Export writes for the same run, and the panels' claims
are what the run's numbers say.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6 import QtGui, QtWidgets

from attn_studio import cli
from attn_studio.gui import presentation
from attn_studio.gui.files import export
from attn_studio.gui.qt.pg import pg
from attn_studio.gui.training.induction_figure import InductionFigure
from attn_studio.gui.training.runner import Snapshot
from attn_studio.gui.training.scaling_figure import ScalingFigure
from attn_studio.training import InductionExperiment, ScalingExperiment
from shared_runs import trained
from stage_measure import drawn_texts
from test_export_page import HINTS, screen

WINDOW_PRESET = "animal"
SIZES = [(1024, 600), (1280, 720), (1600, 900)]  # a small laptop, a projector, the command's default


@pytest.fixture
def window(shared_window):
    return shared_window


def control_texts(widget, figure=None) -> set[str]:
    """What the controls of ``widget`` (outside ``figure``) say: buttons, labels, combo boxes' items.
    Only texts with a letter: numbers (a seed, a d_k) and signs ("·" between two boxes) are a
    figure's too."""
    texts = set()
    for kind in (QtWidgets.QAbstractButton, QtWidgets.QLabel):
        for child in widget.findChildren(kind):
            if figure is None or not figure.isAncestorOf(child):
                texts.add(child.text())
    for combo in widget.findChildren(QtWidgets.QComboBox):
        texts.update(combo.itemText(i) for i in range(combo.count()))
    return {t.strip() for t in texts if any(c.isalpha() for c in t)}


def assert_no_controls_or_hints(texts, controls, tag):
    found = [t for t in texts if t in controls or any(h in t for h in HINTS)]
    assert not found, (tag, found)


def page_at_sizes(window, name, controls):
    """The figure of panel ``name`` at every window size: (texts, image size) of each; checked for
    controls and hints."""
    seen = []
    for size in SIZES:
        screen(window, *size)
        panel = export.find_panel(window, name)
        assert panel.widget.window() is panel.widget, "a figure is its own page, not a part of the window"
        texts = [text for text, _ in drawn_texts(panel.widget)]
        assert_no_controls_or_hints(texts, controls, (name, size))
        seen.append((sorted(texts), export.render_panel(panel, scale=1).size()))
    assert all(s == seen[0] for s in seen), f"the {name} figure changed with the window's size"
    return seen[0][0], panel


# -- geometry ---------------------------------------------------------------------------

def test_geometry_is_drawn_for_the_page_without_its_boxes_and_its_labels_apart(window):
    view = window.geometry_view
    window.view_tabs.setCurrentWidget(view)
    controls = control_texts(view) - {view.caption.text(), view.readout.text()}  # those two: the figure's
    assert "Show" in controls and "Pair" in controls  # what the view shows beside its plot
    texts, panel = page_at_sizes(window, "geometry", controls)
    tokens = window.studio.state.tokens
    for token in set(tokens):  # every arrow named (the x mode: one arrow a token)
        assert token in texts, token
    assert "token vectors x" in texts
    page = panel.widget
    assert not page.findChildren(QtWidgets.QComboBox)
    # The arrows' labels as painted (scale 1: the on-screen placement) cover no other label.
    export.render_panel(panel, scale=1)
    rects = [rect for rect, _ in page.arrows._label_rects]
    assert len(rects) == len(view.arrows.labels)
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not a.intersects(b), (a, b)
    # The numbers are the view's: the pair's readout and the arrows' tips.
    np.testing.assert_array_equal(page.arrows.tips, view.arrows.tips)
    assert "cos =" in page.readout.text() and "show “q and k”" not in page.readout.text()


# -- the training lab ---------------------------------------------------------------------

def stepped(window, name, steps, **settings):
    """Panel ``name`` paused after ``steps`` steps from ``settings``."""
    panel = window.training.open(name)
    panel.apply_settings({"speed": 0, "seed": 0, **settings})
    assert panel.runner.wait_idle()
    for _ in range(steps):
        panel.runner.single_step()
    assert panel.runner.wait_idle(60)
    QtWidgets.QApplication.processEvents()
    assert panel.runner.snapshot().steps == steps
    return panel


@pytest.mark.parametrize("name, settings, expected", [
    ("scaling", {"d_k": 8}, ("Accuracy", "accuracy", "loss (nats)", "chance 1/8", "chance: ln 8", "scaled", "unscaled")),
    ("seq2seq", {}, ("Loss (nats per output symbol)", "symbols right", "chance: ln 8", "encoder-decoder",
                     "Alignment of the attention model")),
    ("induction", {}, ("guessing: ln 32 = 3.47", "loss (nats)", "score", "two layers: layer 2 head 2")),
])
def test_a_training_panel_is_the_same_figure_at_every_window_size(window, name, settings, expected):
    panel = stepped(window, name, 25, **settings)
    controls = control_texts(panel, panel.figure)
    assert {"Reset", "Seed"} <= controls
    if name != "scaling":
        assert "Random" in controls  # the sequence's box and button are the panel's, not its figure's
    texts, figure = page_at_sizes(window, f"training:{name}", controls)
    for text in expected:  # titled for people, y axes labelled, chance / guessing lines, a key
        assert text in texts, (name, text)
    assert not [t for t in texts if "_" in t and t.split("_")[0] in ("loss", "score")]  # no raw metric names
    # Legends never over the data: the key is a line above the plots, no legend inside one.
    scene = figure.widget.graphics.scene()
    assert not [item for item in scene.items() if isinstance(item, pg.LegendItem)]
    window.training.open(name).apply_settings({"seed": 0})


@pytest.mark.parametrize("name, settings, steps", [("scaling", {"d_k": 8}, 60), ("seq2seq", {}, 20),
                                                   ("induction", {}, 20)])
def test_train_png_writes_the_panels_own_figure(window, tmp_path, name, settings, steps):
    panel = stepped(window, name, steps, **settings)
    own = tmp_path / "own.png"
    panel.export_figure(own)
    out = tmp_path / "run"
    options = [f"--{key.replace('_', '-')}={value}" for key, value in settings.items()]
    assert cli.main(["train", name, *options, "--seed", "0", "--steps", str(steps), "--png", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.glob("*.png")) == [f"{name}.png"]
    drawn, exported = QtGui.QImage(str(out / f"{name}.png")), QtGui.QImage(str(own))
    assert drawn.size() == exported.size()
    a = drawn.convertToFormat(QtGui.QImage.Format_RGB888)
    b = exported.convertToFormat(QtGui.QImage.Format_RGB888)
    assert a == b, "train --png drew another figure than the panel's Export"
    panel.apply_settings({"seed": 0})


# -- claims: what the sentences say is what the run measured ------------------------------

def first_mean_at_least(values, target=0.9, window=20):
    """Steps taken when the mean of the last 20 values first reached ``target`` (None if never)."""
    for end in range(window, len(values) + 1):
        if sum(values[end - window:end]) / window >= target:
            return end
    return None


def figure_of(cls, exp):
    figure = cls(page=True)
    snap = Snapshot(exp=exp, steps=exp.step_count, extras=cls.measure(exp, {}, True))
    figure.draw(snap)
    return figure, figure.sentence.text()


@pytest.mark.parametrize("d_k, seed, steps", [(256, 0, 200), (16, 1, 600)])
def test_the_scaling_sentence_says_when_each_arm_reached_90_percent(qapp, d_k, seed, steps):
    exp = ScalingExperiment(d_k=d_k, seed=seed)
    exp.run(steps)
    figure, text = figure_of(ScalingFigure, exp)
    for arm in exp.arms:
        reached = first_mean_at_least(exp.history[arm]["accuracy"])
        said = f"<b>{arm}</b> " + (f"at step {reached:,}" if reached is not None else f"not yet in {steps:,} steps")
        assert said in text, (arm, reached, text)
        line = figure.reached_lines[arm]
        assert line.isVisible() == (reached is not None)
        if reached is not None:
            assert line.value() == reached
    # The runs chosen show both answers: one arm there, the other not yet (d_k 256), both there (d_k 16).
    assert ("not yet" in text) == (d_k == 256)
    assert "near chance" not in text
    # The lesson's comparison is made at the start, from the same weights (the first 20 steps) ...
    d = presentation.digits()
    un, sc = (float(np.mean(exp.history[arm]["score_grad"][:20])) for arm in ("unscaled", "scaled"))
    entropy = float(np.mean(exp.history["unscaled"]["entropy"][:20]))
    assert f"At the start (steps 1–20), from the same weights, unscaled: entropy {entropy:.{d}f}" in text
    ratio = sc / un
    said = (f"its score gradient is {ratio:.1f}× smaller than the scaled one’s" if ratio >= 1.5 else
            f"its score gradient is {1 / ratio:.1f}× larger than the scaled one’s" if ratio <= 1 / 1.5 else
            "its score gradient and the scaled one’s are alike")
    assert said in text, text
    # ... and a gradient compared later says why it differs: the arm that learned has the small error.
    un, sc = (float(np.mean(exp.history[arm]["score_grad"][-20:])) for arm in ("unscaled", "scaled"))
    loss = {arm: float(np.mean(exp.history[arm]["loss"][-20:])) for arm in exp.arms}
    assert f"Now (last 20 steps): loss scaled {loss['scaled']:.{d}f}, unscaled {loss['unscaled']:.{d}f}" in text
    learned = un > 1.5 * sc and loss["scaled"] < loss["unscaled"] - 0.1
    assert ("because it has learned" in text) == learned
    if learned:
        assert f"score gradient is now {un / sc:.1f}× smaller than the unscaled one’s" in text
    assert "saturated; its score gradient is" not in text.split("Now")[-1]  # no "saturated, yet larger" later


def test_the_scaling_sentence_finds_the_unscaled_softmax_saturated_at_the_start(qapp):
    """d_k 64: the unscaled arm starts saturated (entropy ~0.5 of ln 32 nats); said of the start."""
    exp = ScalingExperiment(d_k=64, seed=0)
    exp.run(20)
    _, text = figure_of(ScalingFigure, exp)
    entropy = float(np.mean(exp.history["unscaled"]["entropy"]))
    assert entropy < 0.35 * math.log(32)
    assert "— the softmax is saturated;" in text and "Now (" not in text  # 20 steps: only the start


def test_the_one_layer_model_is_said_to_be_below_guessing_when_it_is(qapp):
    exp = trained("induction", 0, 300)  # the suite's shared run of seed 0 (tests/shared_runs.py), at step 300
    _, text = figure_of(InductionFigure, exp)
    one = float(np.mean(exp.history["one layer"]["loss_repeat"][-20:]))
    assert one < math.log(32) - 0.05  # measured: the run is below guessing by step 300
    d = presentation.digits()  # the sentence follows View → Precision
    assert f"the one-layer model's repeat loss is {one:.{d}f}, below guessing (ln 32 = {math.log(32):.{d}f})" in text
    assert "still guessing" not in text
    early = InductionExperiment(seed=0)
    early.run(20)
    _, text = figure_of(InductionFigure, early)
    first = float(np.mean(early.history["one layer"]["loss_repeat"][-20:]))
    where = "below" if first < math.log(32) - 0.05 else "above" if first > math.log(32) + 0.05 else "at"
    if where == "at":
        assert f"the one-layer model is guessing on the repeat ({first:.2f}" in text
    else:
        assert f"repeat loss is {first:.2f}, {where} guessing" in text


def test_a_page_figure_before_the_first_step_has_no_hint(qtbot):
    exp = ScalingExperiment(d_k=4, seed=0)
    _, text = figure_of(ScalingFigure, exp)
    assert "Play" not in text and not any(h in text for h in HINTS)
    on_screen = ScalingFigure()
    qtbot.addWidget(on_screen)
    on_screen.draw(Snapshot(exp=exp, steps=0, extras={}))
    assert "press Play" in on_screen.sentence.text()  # the window's own panel may say what to press


def test_a_training_panels_vector_figure_is_drawn_an_axis_a_step_as_in_one_piece(window):
    # Drawn with the rest of the figure, a training panel's ten plot axes held the window 55-60 ms: each
    # is now a step of its own, after the plots, and the file draws the same pixels and texts.
    from attn_studio.gui.files import figures, vector_figure
    from attn_studio.gui.views.token_axis import TokenAxis
    from svg_boxes import text_boxes
    from test_export_vector_steps import drawn

    stepped(window, "scaling", 25, d_k=8)
    panel = export.find_panel(window, "training:scaling")
    vector = vector_figure.SteppedVector(panel, "svg", budget=0.001)
    while not vector.step():
        QtWidgets.QApplication.processEvents()
    axes = [piece.axis for piece in vector.left if isinstance(piece, vector_figure._Axis)]
    assert len(axes) >= 6 and not [a for a in axes if isinstance(a, TokenAxis)]  # the plots' own axes
    assert vector.steps >= 2 + len(axes), "the axes were not drawn a step each"
    written = vector.data()
    export.done_with(panel)
    panel = export.find_panel(window, "training:scaling")
    expected = figures.svg_bytes(panel)
    export.done_with(panel)
    assert sorted(t for t, _ in text_boxes(written)) == sorted(t for t, _ in text_boxes(expected))
    assert "loss (nats)" in [t for t, _ in text_boxes(written)]
    assert (drawn(written) == drawn(expected)).all(), "the stepped SVG draws other pixels than the one-piece one"
