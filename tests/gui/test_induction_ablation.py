"""Why two layers, taken apart: a box per head of the two-layer model silences it, measured on the worker
on a fixed held-out batch beside the intact model and the one-layer model; a bar per head shows what it
adds to the repeat's loss and the first copy's, and the words under the bars say what they show (no head
is needed yet before the phase change). Nothing is timed: the worker is waited for."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from attn_studio.formatting import format_number
from attn_studio.gui import presentation
from attn_studio.gui.training.ablation_chart import bar_labels
from attn_studio.gui.training.tab import TrainingTab
from attn_studio.training import InductionExperiment
from attn_studio.training.ablation import ablation_study, heldout_batch
from gui_helpers import panel_idle
import shared_runs

STEPS = 1800


@pytest.fixture(scope="module")
def trained():
    """Seed 0 trained to 1,800 steps: past the phase change (its repeat loss drops near step 1,115). The
    suite's shared run (tests/shared_runs.py): trained once for the session, tests/training/test_ablation.py
    reads the same."""
    return shared_runs.trained("induction", 0, STEPS)


@pytest.fixture(scope="module")
def lab(qapp):
    tab = TrainingTab()
    tab.resize(1280, 680)
    tab.show()
    panel = tab.show_panel("induction")
    panel.runner.set_speed(0)
    assert panel.runner.wait_idle()
    yield tab
    tab.close_runs()
    tab.close()


idle = panel_idle  # the worker done and the panel drawn: its snapshot


def num(x) -> str:
    return format_number(x, presentation.digits())


def use(panel, exp):
    """Show ``exp`` in the panel (as Reset shows a fresh run) with no head silenced."""
    panel.set_silenced(np.ones((2, 2)))
    panel.runner.reset(lambda: exp)
    return idle(panel)


def test_before_the_phase_change_the_bars_are_flat_and_the_panel_says_no_head_is_needed(lab):
    panel = lab.show_panel("induction")
    exp = InductionExperiment(seed=4)
    exp.run(30)
    snap = use(panel, exp)
    study = snap.extras["ablation"]
    assert study.step == 30 and study.rows == 256
    fresh = ablation_study(exp)
    repeat, first = panel.ablation.values
    heads = fresh.arm_heads("two layers")
    np.testing.assert_allclose(repeat[:4], [h.added_repeat for h in heads], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(first[:4], [h.added_first for h in heads], rtol=1e-9, atol=1e-12)
    assert panel.ablation.labels == ["1.1", "1.2", "2.1", "2.2", "2.1+2.2"]
    text = panel.ablation_text.text()
    biggest = max(abs(h.added_repeat) for h in heads)
    assert text.startswith("At step 30, on 256 held-out rows: No head is needed yet")
    assert f"by at most {num(biggest)} nats" in text and biggest < 0.25
    assert f"it is {num(fresh.intact['two layers']['loss_repeat'])}" in text


def test_silencing_heads_is_measured_beside_the_intact_and_one_layer_models(lab, trained):
    panel = lab.show_panel("induction")
    use(panel, trained)
    batch = heldout_batch(trained)
    intact = trained.ablate("two layers", batch, np.ones((2, 2)))
    one = trained.ablate("one layer", batch, np.ones((1, 2)))
    panel.silence_boxes[0, 0].setChecked(True)
    snap = idle(panel)
    mask = np.array([[0.0, 1.0], [1.0, 1.0]])
    silenced = trained.ablate("two layers", batch, mask)
    measured = snap.extras["silenced"]
    assert measured["mask"] == mask.tolist() and measured["step"] == STEPS
    assert measured["silenced"] == pytest.approx(silenced, rel=1e-12)
    text = panel.ablation_text.text()
    assert (f"With head 1.1 silenced: repeat loss {num(intact['loss_repeat'])} → {num(silenced['loss_repeat'])}, "
            f"first copy {num(intact['loss_first'])} → {num(silenced['loss_first'])}; the one-layer model's repeat "
            f"loss is {num(one['loss_repeat'])}.") in text
    assert silenced["loss_repeat"] - intact["loss_repeat"] > 1.9  # the previous-token head of seed 0
    assert panel.ablation.outlined() == ["1.1"]
    assert "without 1.1" in panel.predictions.text()
    # Both second-layer heads: back at guessing, the bar of the two together outlined.
    panel.set_silenced(np.array([[1.0, 1.0], [0.0, 0.0]]))
    snap = idle(panel)
    both = trained.ablate("two layers", batch, np.array([[1.0, 1.0], [0.0, 0.0]]))
    assert snap.extras["silenced"]["silenced"] == pytest.approx(both, rel=1e-12)
    assert abs(both["loss_repeat"] - np.log(32)) < 0.12
    assert (f"With heads 2.1 and 2.2 silenced: repeat loss {num(intact['loss_repeat'])} → "
            f"{num(both['loss_repeat'])}") in panel.ablation_text.text()
    assert "no better than guessing" in panel.ablation_text.text()
    assert panel.ablation.outlined() == ["2.1+2.2"]
    assert [box.isChecked() for box in panel.silence_boxes.values()] == [False, False, True, True]
    assert "without 2.1+2.2" in panel.predictions.text()
    panel.set_silenced(np.ones((2, 2)))
    idle(panel)
    assert "With head" not in panel.ablation_text.text() and "without" not in panel.predictions.text()


def test_the_bars_show_how_much_each_head_matters_to_the_repeat(lab, trained):
    panel = lab.show_panel("induction")
    snap = use(panel, trained)
    study = snap.extras["ablation"]
    fresh = ablation_study(trained)
    repeat, first = panel.ablation.values
    heads = fresh.arm_heads("two layers")
    np.testing.assert_allclose(repeat, [h.added_repeat for h in heads]
                               + [fresh.layer_out["two layers"][1]["loss_repeat"]
                                  - fresh.intact["two layers"]["loss_repeat"]], rtol=1e-9)
    np.testing.assert_allclose(first[:4], [h.added_first for h in heads], rtol=1e-9, atol=1e-12)
    assert bar_labels(study) == panel.ablation.labels
    # As measured here: the previous-token head about 2 nats, each second-layer head about 1, the first
    # copy under 0.2; the dashed line is where the repeat would be back at guessing.
    assert 1.9 <= repeat[0] <= 2.3 and all(0.9 <= r <= 1.5 for r in repeat[2:4])
    assert np.abs(first[:4]).max() < 0.2
    assert panel.ablation.guessing.value() == pytest.approx(np.log(32) - fresh.intact["two layers"]["loss_repeat"])
    text = panel.ablation_text.text()
    assert text.startswith(f"At step {STEPS:,}, on 256 held-out rows: The repeat needs heads ")
    assert f"it is {num(fresh.layer_out['two layers'][1]['loss_repeat'])}, no better than guessing" in text


def test_the_ablations_are_measured_on_the_worker_never_on_the_gui_thread(lab, monkeypatch):
    from attn_studio.gui.training import induction_figure

    threads = []
    original = induction_figure.ablation_study
    monkeypatch.setattr(induction_figure, "ablation_study",
                        lambda *a, **k: threads.append(threading.get_ident()) or original(*a, **k))
    panel = lab.show_panel("induction")
    panel.reset()
    panel.single_step()
    idle(panel)
    panel.silence_boxes[1, 1].setChecked(True)
    idle(panel)
    assert threads and threading.get_ident() not in threads
    panel.set_silenced(np.ones((2, 2)))
    idle(panel)


def test_the_page_figure_holds_the_bars_and_their_words(lab, trained, tmp_path):
    panel = lab.show_panel("induction")
    use(panel, trained)
    figure = panel.figure_panel()
    try:
        page = figure.widget
        assert page.ablation.labels == ["1.1", "1.2", "2.1", "2.2", "2.1+2.2"]
        np.testing.assert_array_equal(page.ablation.values[0], panel.ablation.values[0])
        assert page.ablation_text.text() == panel.ablation_text.text()
    finally:
        from attn_studio.gui.files import figures

        figures.done_with(figure)
