"""The training lab's tab: three panels whose runs play on worker threads.

Each test takes a few steps only (d_k 4 for the scaling panel). Nothing is timed: the worker is
waited for with ``Runner.wait_idle`` and ``qtbot.waitUntil``.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.gui import presentation
from attn_studio.training import ScalingExperiment, TrainingError
from attn_studio.gui.training.induction_panel import ALPHABET
from attn_studio.gui.training.tab import TrainingTab
from gui_helpers import panel_idle


@pytest.fixture(scope="module")
def lab(qapp):
    tab = TrainingTab()
    tab.resize(1280, 680)
    tab.show()
    tab.panels["scaling"].apply_settings({"d_k": 4, "speed": 0})
    for panel in tab.panels.values():
        panel.runner.set_speed(0)
        assert panel.runner.wait_idle()
    yield tab
    tab.close_runs()
    tab.close()


idle = panel_idle  # the worker done and the panel drawn: its snapshot


def played(qtbot, panel, steps):
    """Play until at least ``steps`` steps are published, then pause; returns the snapshot."""
    panel.play()
    qtbot.waitUntil(lambda: panel.runner.snapshot().steps >= steps, timeout=60_000)
    panel.pause()
    return idle(panel)


def test_window_has_a_training_tab_with_three_panels_and_a_menu_that_opens_each(window):
    tabs = window.view_tabs
    titles = [tabs.tabText(i) for i in range(tabs.count())]
    assert "Training" in titles
    menu = window.findChild(QtWidgets.QMenu, "trainingMenu")
    assert [a.text() for a in menu.actions()] == ["Why √dₖ", "Why attention", "Why two layers"]
    for name in ("scaling", "seq2seq", "induction"):
        window.findChild(QtGui.QAction, f"training_{name}_action").trigger()
        assert tabs.currentWidget() is window.training.page
        assert window.training.tab.current is window.training.tab.panels[name]
        assert window.training.tab.current.play_button.isEnabled()
    inner = window.training.tab.tabs
    # A subscript k, not "d_k": the tab bar cut the underscore off below the baseline.
    assert [inner.tabText(i) for i in range(inner.count())] == ["Why √dₖ", "Why attention", "Why two layers"]
    bar = inner.tabBar()
    for i in range(inner.count()):  # every title whole: its tab as wide and as tall as its text
        text_rect = bar.fontMetrics().boundingRect(inner.tabText(i))
        assert bar.tabRect(i).width() >= text_rect.width() and bar.tabRect(i).height() >= text_rect.height()
    # The toy model's docks step aside for the lab, which says so, and come back after it.
    assert not window.controls_dock.isVisible()
    said = window.statusBar().currentMessage()
    assert "aside while Training is shown; they come back when you leave it" in said, said
    assert window.controls_dock.windowTitle() in said
    tabs.setCurrentIndex(0)
    assert window.controls_dock.isVisible()


def test_play_steps_on_the_worker_and_the_curves_get_every_step(qtbot, lab, monkeypatch):
    panel = lab.show_panel("scaling")
    threads = set()
    original = ScalingExperiment.step

    def step(self):
        threads.add(threading.get_ident())
        return original(self)

    monkeypatch.setattr(ScalingExperiment, "step", step)
    snap = played(qtbot, panel, 3)
    assert threads and threading.get_ident() not in threads
    x, y = panel.loss_plot.data("unscaled")
    assert len(y) == snap.steps >= 3
    assert list(y) == snap.exp.history["unscaled"]["loss"][:snap.steps]
    assert panel.step_label.text() == f"step {snap.steps:,}"


def test_pause_takes_effect_before_the_next_step(qtbot, lab):
    panel = lab.show_panel("scaling")
    panel.reset()
    snap = played(qtbot, panel, 2)
    taken = snap.exp.step_count
    assert snap.steps == taken
    qtbot.wait(100)  # a playing worker would take more steps meanwhile
    assert idle(panel).steps == taken == snap.exp.step_count


def test_single_step_adds_exactly_one_step(qtbot, lab):
    panel = lab.show_panel("scaling")
    before = idle(panel).steps
    qtbot.mouseClick(panel.step_button, QtCore.Qt.LeftButton)
    assert idle(panel).steps == before + 1
    panel.single_step()
    panel.single_step()
    assert idle(panel).steps == before + 3


def test_reset_plays_the_same_run_as_a_fresh_experiment_of_that_seed(qtbot, lab):
    panel = lab.show_panel("scaling")
    played(qtbot, panel, 2)
    qtbot.mouseClick(panel.reset_button, QtCore.Qt.LeftButton)
    assert idle(panel).steps == 0
    for _ in range(3):
        panel.single_step()
    snap = idle(panel)
    fresh = ScalingExperiment(d_k=4, seed=panel.settings()["seed"])
    fresh.run(3)
    assert snap.exp.history == fresh.history


def test_changing_d_k_or_seed_rebuilds_the_run(qtbot, lab):
    panel = lab.show_panel("scaling")
    played(qtbot, panel, 1)
    panel.set_d_k(8)
    snap = idle(panel)
    assert (snap.exp.d_k, snap.steps) == (8, 0)
    panel.seed_spin.setValue(5)
    snap = idle(panel)
    assert (snap.exp.seed, snap.exp.d_k, snap.steps) == (5, 8, 0)
    panel.apply_settings({"d_k": 4, "seed": 0})
    assert idle(panel).exp.d_k == 4


def test_scaling_panel_histogram_and_sentence_read_the_run(qtbot, lab):
    panel = lab.show_panel("scaling")
    snap = played(qtbot, panel, 2)
    counts = snap.extras["counts"]
    assert set(counts) == {"scaled", "unscaled"} and sum(counts["scaled"]) == 32 * 32
    entropy = sum(snap.exp.history["unscaled"]["entropy"][-20:]) / len(snap.exp.history["unscaled"]["entropy"][-20:])
    saved = presentation.STYLE.digits
    try:
        # The sentence follows View → Precision: ln 32 = 3.4657 nats.
        presentation.set_digits(2, panel)
        assert f"entropy {entropy:.2f} of 3.47 nats" in panel.sentence.text()
        presentation.set_digits(4, panel)
        assert f"entropy {entropy:.4f} of 3.4657 nats" in panel.sentence.text()
    finally:
        presentation.STYLE.digits = saved


def test_the_alignment_heatmap_shows_the_typed_input_and_both_outputs(qtbot, lab):
    panel = lab.show_panel("seq2seq")
    assert panel.set_input_text("3 1 4 1 5")
    snap = idle(panel)
    cols = [label for _, label in panel.alignment.bottom_axis.labels()]
    rows = [label for _, label in panel.alignment.left_axis.labels()]
    assert cols == ["3", "1", "4", "1", "5"]
    assert rows == [str(s) for s in snap.extras["outputs"]["attention"]]
    assert "5 1 4 1 3" in panel.outputs.text()  # the right answer, under the heatmap
    for arm in ("encoder-decoder", "attention"):  # the worker is idle: its models hold still
        assert snap.extras["outputs"][arm] == snap.exp.models[arm].predict([[3, 1, 4, 1, 5]])[0].tolist()
    assert (snap.extras["alignment"] == snap.exp.models["attention"].alignment([[3, 1, 4, 1, 5]])[0]).all()


@pytest.mark.parametrize("text, says", [("3 9 1", "'9'"), ("a b", "'a'"), ("", "at least one"), ("1 " * 21, "at most 20")])
def test_bad_seq2seq_input_is_refused_and_the_old_one_stays(lab, text, says):
    panel = lab.show_panel("seq2seq")
    panel.set_input_text("2 2 7")
    idle(panel)
    assert not panel.set_input_text(text)
    assert panel.message_label.isVisibleTo(panel) and says in panel.message_label.text()
    assert panel.source == [2, 2, 7] and panel.input_edit.text() == "2 2 7"


def test_accuracy_by_length_is_measured_on_the_worker_for_every_length(qtbot, lab):
    panel = lab.show_panel("seq2seq")
    snap = idle(panel)
    by_length = snap.extras["by_length"]
    assert set(by_length) == {"encoder-decoder", "attention"} and len(by_length["attention"]) == 20
    x, y = panel.length_curves["attention"].getData()
    assert list(x) == list(range(1, 21)) and list(y) == by_length["attention"]


def test_induction_heads_show_the_sequence_as_letters(qtbot, lab):
    panel = lab.show_panel("induction")
    assert panel.set_sequence_text("abcdeabcde")
    snap = idle(panel)
    assert len(panel.heatmaps) == 2 and all(len(row) == 2 for row in panel.heatmaps)
    for row in panel.heatmaps:
        for heatmap in row:
            assert [label for _, label in heatmap.bottom_axis.labels()] == list("ABCDEABCDE")
            assert [label for _, label in heatmap.left_axis.labels()] == list("ABCDEABCDE")
    weights = snap.exp.models["two layers"].attention([[0, 1, 2, 3, 4, 0, 1, 2, 3, 4]])
    assert (snap.extras["weights"] == weights[:, 0]).all()
    assert "one layer predicts" in panel.predictions.text()
    assert not panel.set_sequence_text("AB*")
    assert "'*'" in panel.message_label.text() and panel.tokens == [ALPHABET.index(c) for c in "ABCDEABCDE"]


def test_induction_curves_and_sentence_follow_the_run(qtbot, lab):
    panel = lab.show_panel("induction")
    snap = played(qtbot, panel, 2)
    _, y = panel.loss_plot.data("two layers/loss_repeat")
    assert list(y) == snap.exp.history["two layers"]["loss_repeat"][:snap.steps]
    assert "layer 2 head" in panel.sentence.text() and "one-layer model" in panel.sentence.text()


def test_redraws_are_coalesced_not_one_per_published_step(qtbot, lab):
    panel = lab.show_panel("scaling")
    idle(panel)
    qtbot.wait(60)
    before = panel.draw_count
    for _ in range(50):
        panel.runner.changed.emit()
    qtbot.waitUntil(lambda: panel.draw_count > before)
    qtbot.wait(20)
    assert panel.draw_count == before + 1


def test_the_gui_thread_keeps_running_while_the_worker_trains(qtbot, lab):
    panel = lab.show_panel("scaling")
    ticks = []
    timer = QtCore.QTimer()
    timer.timeout.connect(lambda: ticks.append(panel.runner.snapshot().steps))
    timer.start(5)
    start = idle(panel).steps
    # At full speed a step of this small model takes a millisecond or two: 200 of them give the
    # GUI thread a few hundred milliseconds to show it runs beside the worker, even on a busy
    # machine (20 steps were over before a loaded machine scheduled it).
    steps = 200
    panel.play()
    qtbot.waitUntil(lambda: panel.runner.snapshot().steps >= start + steps, timeout=60_000)
    panel.pause()
    timer.stop()
    idle(panel)
    # The timer fired while steps were being taken, not only before and after.
    during = [s for s in ticks if start < s < start + steps]
    assert during, f"the GUI thread did not run between steps {start} and {start + steps}: {ticks[:10]}…"


def test_export_writes_the_figure_with_its_labels_and_the_history_as_csv(qtbot, lab, tmp_path):
    panel = lab.show_panel("scaling")
    snap = played(qtbot, panel, 2)
    panel.export_figure(tmp_path / "scaling.svg")
    svg = (tmp_path / "scaling.svg").read_text(encoding="utf-8")
    for label in ("Accuracy", "Attention entropy", "Why √dₖ", "d_k 4"):
        assert label in svg, label
    panel.export_figure(tmp_path / "scaling.png")
    assert (tmp_path / "scaling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    panel.export_csv(tmp_path / "history.csv")
    lines = (tmp_path / "history.csv").read_text().splitlines()
    assert lines[0].startswith("step,scaled/loss") and len(lines) == snap.steps + 1


def test_settings_round_trip_and_a_bad_field_changes_nothing(lab):
    before = lab.settings()
    assert before["scaling"]["d_k"] == 4 and set(before) == {"panel", "scaling", "seq2seq", "induction"}
    for bad, says in (({"scaling": {"d_k": 5}}, "d_k"), ({"seq2seq": {"lr": -1}}, "lr"),
                      ({"induction": {"speed": 7}}, "speed"), ({"panel": "nope"}, "nope"), ({"other": {}}, "other"),
                      ({"scaling": {"seed": "1"}}, "seed")):
        with pytest.raises(TrainingError, match=says):
            lab.apply_settings(bad)
        assert lab.settings() == before
    lab.apply_settings({"panel": "induction", "induction": {"seed": 3, "lr": 0.01, "speed": 5}})
    after = lab.settings()
    assert after["panel"] == "induction" and after["induction"] == {"seed": 3, "lr": 0.01, "speed": 5}
    assert idle(lab.panels["induction"]).exp.lr == 0.01


def test_the_runs_settings_are_kept_between_runs_and_a_bad_stored_value_is_ignored(qtbot, caplog):
    from attn_studio.gui import settings as app_settings
    from attn_studio.gui.training import wiring
    from attn_studio.gui.window import MainWindow

    wiring.write_settings({"panel": "seq2seq", "scaling": {"d_k": 16, "seed": 2, "lr": 0.001, "speed": 50}})
    first = MainWindow()
    qtbot.addWidget(first)
    panel = first.training.tab.panels["scaling"]
    assert panel.settings() == {"d_k": 16, "seed": 2, "lr": 0.001, "speed": 50}
    assert first.training.tab.current is first.training.tab.panels["seq2seq"]
    panel.set_d_k(32)
    first.training.close()
    assert wiring.read_settings()["scaling"]["d_k"] == 32

    app_settings.settings().setValue("training", '{"scaling": {"d_k": 5}}')
    with caplog.at_level("WARNING"):
        second = MainWindow()
        qtbot.addWidget(second)
        assert second.training.tab.panels["scaling"].d_k == 64
    assert "d_k" in caplog.text
    second.training.close()


def test_curve_axes_move_in_round_steps_and_start_again_for_a_new_run(qapp):
    from attn_studio.gui.training.panel import CurvePlot, nice_extent

    assert [nice_extent(n) for n in (0, 10, 11, 16, 99, 101, 1001)] == [10, 10, 15, 20, 100, 150, 1500]
    plot = CurvePlot("loss", "loss")
    plot.add_series("a", "a", "#000000")
    plot.set("a", [2.0, 2.1, 1.9])
    first = plot.plot.viewRange()
    plot.set("a", [2.0, 2.1, 1.9, 2.05])  # inside the round range: the axes stay
    assert plot.plot.viewRange() == first
    plot.set("a", [2.0] * 12 + [5.0])  # a 13th step and a larger loss: both axes grow
    (x0, x1), (y0, y1) = plot.plot.viewRange()
    assert x1 >= 15 > first[0][1] and y1 >= 5.0 > first[1][1]
    plot.set("a", [0.5, 0.4])  # a new run: fewer steps than drawn, the ranges start again
    (x0, x1), (y0, y1) = plot.plot.viewRange()
    assert x1 < 15 and y1 < 5.0 and y0 <= 0.4


def test_a_long_run_is_drawn_thinned_keeping_each_bins_extremes_and_ending_at_the_last_value():
    from attn_studio.gui.training.panel import peaks, thinned

    rng = np.random.default_rng(3)
    y = rng.normal(size=5003)
    y[1234] = 9.0  # a spike: the envelope keeps it
    x, drawn = peaks(y, max_points=1000)
    assert 500 < drawn.size <= 1000 + 16 and x[-1] == 5002 and drawn[-1] == y[-1]
    assert np.all(np.diff(x) >= 0) and (drawn == y[x.astype(int)]).all()
    assert drawn.max() == 9.0 and drawn.min() == y.min()
    x, mean = thinned(y, max_points=200)
    assert mean.size <= 200 + 32 and x[-1] == 5002 and mean[-1] == y[-1]
    assert np.isclose(mean[0], y[:int(x[0] * 2) + 1].mean())
    # A short run is drawn whole.
    assert (peaks(y[:50])[1] == y[:50]).all() and (thinned(y[:50])[1] == y[:50]).all()


def test_a_curve_of_a_long_run_ends_at_its_last_recorded_value(qapp):
    from attn_studio.gui.training.panel import MAX_FAINT_POINTS, CurvePlot

    plot = CurvePlot("loss", "loss")
    plot.add_series("a", "a", "#000000")
    values = 2.0 + np.sin(np.arange(20_000) / 300.0)
    values[-1] = 0.25
    plot.set("a", values)
    x, y = plot.data("a")
    assert y.size <= MAX_FAINT_POINTS + 32 and (x[-1], y[-1]) == (19_999, 0.25)
    (x0, x1), (y0, y1) = plot.plot.viewRange()
    assert x1 >= 19_999 and y0 <= 0.25


def test_the_panels_draw_from_what_the_worker_measured_and_never_evaluate_a_model(qtbot, lab, monkeypatch):
    from attn_studio.training import Seq2SeqExperiment
    from attn_studio.training.induction import InductionModel
    from attn_studio.training.scaling import ScalingModel
    from attn_studio.training.seq2seq import Seq2SeqModel

    threads = []
    for cls, name in ((Seq2SeqExperiment, "accuracy_by_length"), (Seq2SeqModel, "predict"),
                      (Seq2SeqModel, "alignment"),
                      (InductionModel, "attention"), (InductionModel, "logits"), (ScalingModel, "attention")):
        original = getattr(cls, name)
        monkeypatch.setattr(cls, name, lambda *a, _f=original, **k: threads.append(threading.get_ident()) or _f(*a, **k))
    for name in ("scaling", "seq2seq", "induction"):
        panel = lab.show_panel(name)
        panel.reset()
        panel.single_step()
        idle(panel)  # redraws the whole figure on the GUI thread
        panel.redraw()
    assert threads, "the worker measured nothing"
    assert threading.get_ident() not in threads


def test_while_a_run_plays_each_redraw_draws_one_part_until_the_figure_is_whole(qtbot, lab, monkeypatch):
    import dataclasses

    panel = lab.show_panel("induction")
    playing = dataclasses.replace(idle(panel), playing=True)
    monkeypatch.setattr(panel.runner, "snapshot", lambda: playing)
    parts = panel.draw_parts()
    drawn = []
    monkeypatch.setattr(panel, "draw_parts", lambda: tuple(
        (lambda snap, part=part: drawn.append(part.__name__) or part(snap)) for part in parts))
    before = panel.draw_count
    panel._draw_now()
    assert len(drawn) == 1 and panel.draw_count == before
    qtbot.waitUntil(lambda: panel.draw_count == before + 1)  # the rest follow without a new step
    assert drawn == [part.__name__ for part in parts]
    panel.redraw()  # an export or a test: every part at once
    assert drawn[len(parts):] == [part.__name__ for part in parts]


def test_why_two_layers_plays_faster_than_the_other_panels_by_default(lab):
    from attn_studio.gui.training.induction_panel import InductionPanel
    from attn_studio.gui.training.scaling_panel import ScalingPanel

    from attn_studio.training.settings import default_training_settings

    defaults = default_training_settings()
    assert defaults["induction"]["speed"] == 50 and defaults["scaling"]["speed"] == 20
    panels = InductionPanel(), ScalingPanel()
    try:
        assert [panel.speed for panel in panels] == [50, 20]
        assert [panel.settings()["speed"] for panel in panels] == [50, 20]
    finally:
        for panel in panels:
            panel.close_run()


def test_the_score_histograms_axes_hold_still_until_the_scores_leave_them(lab):
    panel = lab.show_panel("scaling")
    idle(panel)
    run = object()  # a run of its own: its ranges start afresh
    panel._fit_histogram(run, np.linspace(-2.1, 3.2, 41), 130)
    first = panel.hist_plot.viewRange()
    assert first[0][0] <= -2.1 and first[0][1] >= 3.2 and first[1][1] >= 130
    panel._fit_histogram(run, np.linspace(-1.9, 2.8, 41), 120)  # another batch, inside: nothing moves
    assert panel.hist_plot.viewRange() == first
    panel._fit_histogram(run, np.linspace(-9.0, 3.0, 41), 400)  # wider scores, a taller bin: both grow
    (x0, x1), (y0, y1) = panel.hist_plot.viewRange()
    assert x0 <= -9.0 < first[0][0] and y1 >= 400 > first[1][1]
    panel._fit_histogram(run, np.linspace(-0.3, 0.4, 41), 30)  # far narrower and lower: they shrink
    (x0, x1), (y0, y1) = panel.hist_plot.viewRange()
    assert -1.0 < x0 <= -0.3 and 0.4 <= x1 < 1.0 and 30 <= y1 < 100
    panel._fit_histogram(object(), np.linspace(-2.1, 3.2, 41), 130)  # a new run: set afresh
    assert panel.hist_plot.viewRange() == first


def test_the_first_opening_builds_only_the_panel_shown(window, qtbot):
    """Issue 32, defect 5: the tab's first opening built all three panels (a dozen plots) on the GUI
    thread, 0.45-0.55 s frozen; the panels nobody chose yet are built when first shown."""
    tabs = window.view_tabs
    tabs.setCurrentWidget(window.training.page)
    qtbot.waitUntil(lambda: window.training.built)
    lab = window.training.tab
    assert list(lab.built) == ["scaling"]
    assert lab.tabs.currentWidget() is lab.built["scaling"]
    lab.apply_settings({"induction": {"seed": 3}})  # waits for the panel, changes nothing else
    assert list(lab.built) == ["scaling"] and lab.settings()["induction"]["seed"] == 3
    lab.tabs.setCurrentIndex(2)  # a person clicks "Why two layers"
    assert lab.tabs.currentWidget() is lab.built["induction"]
    assert lab.built["induction"].settings()["seed"] == 3
    assert [lab.tabs.tabText(i) for i in range(3)] == ["Why √dₖ", "Why attention", "Why two layers"]
    assert "seq2seq" not in lab.built
