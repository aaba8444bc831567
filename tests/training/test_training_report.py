"""The registry of experiments and what a run writes: tables that read back as the history."""

import csv

import numpy as np
import pytest

from attn_studio.training import EXPERIMENTS, ScalingExperiment, Seq2SeqExperiment, TrainingError
from attn_studio.training.experiment import Experiment
from attn_studio.training.report import default_steps, figure_data, history_table, make_experiment, write_report


def test_registry_makes_experiments_by_name(monkeypatch):
    assert list(EXPERIMENTS)[:2] == ["scaling", "seq2seq"]
    exp = make_experiment("scaling", seed=3, d_k=16)
    assert isinstance(exp, ScalingExperiment) and exp.d_k == 16 and exp.seed == 3
    assert isinstance(make_experiment("seq2seq", seed=1), Seq2SeqExperiment)
    assert (default_steps("scaling"), default_steps("seq2seq")) == (1000, 2000)

    class Tiny(Experiment):  # a new experiment registers with one line
        arms = ("only",)
    monkeypatch.setitem(EXPERIMENTS, "tiny", Tiny)
    with pytest.raises(NotImplementedError):
        make_experiment("tiny")  # found by name (it builds no models, hence the error)


@pytest.mark.parametrize("name, kwargs, message", [
    ("nope", {}, "unknown experiment 'nope'; known: scaling, seq2seq"),
    ("seq2seq", {"d_k": 8}, "d_k applies to scaling only"),
    ("scaling", {"d_k": 0}, "d_k must be"),
    ("scaling", {"seed": -1}, "seed must be"),
])
def test_registry_names_what_is_wrong(name, kwargs, message):
    with pytest.raises(TrainingError, match=message):
        make_experiment(name, **kwargs)


def test_history_table_and_figures_follow_the_history():
    exp = ScalingExperiment(d_k=4, seed=0)
    exp.run(3)
    header, rows = history_table(exp)
    assert header[0] == "step" and "unscaled/score_grad" in header and len(header) == 1 + 2 * 5
    assert [r[0] for r in rows] == [0, 1, 2]
    assert rows[2][header.index("scaled/loss")] == exp.history["scaled"]["loss"][2]
    figures = figure_data(exp)
    assert set(figures) == set(exp.metrics)
    assert figures["entropy"]["series"]["unscaled"] == exp.history["unscaled"]["entropy"]
    assert figures["loss"]["x"] == [0, 1, 2]


def test_report_reads_back_exactly(tmp_path):
    exp = Seq2SeqExperiment(seed=2)
    exp.run(2)
    written = write_report(exp, tmp_path / "run" / "deep", count=4)
    assert set(written) == {"history", "accuracy by length"}
    with open(written["history"], newline="") as fh:
        table = list(csv.reader(fh))
    assert table[0] == ["step", "encoder-decoder/loss", "encoder-decoder/accuracy", "attention/loss",
                        "attention/accuracy"]
    assert len(table) == 3
    assert float(table[2][3]) == exp.history["attention"]["loss"][1]  # every digit kept
    with open(written["accuracy by length"], newline="") as fh:
        by_length = list(csv.reader(fh))
    assert by_length[0] == ["input_length", "encoder-decoder", "attention"]
    assert [int(r[0]) for r in by_length[1:]] == list(range(1, 21))
    values = np.array([[float(v) for v in r[1:]] for r in by_length[1:]])
    assert np.all((values >= 0) & (values <= 1))
    assert sorted(p.name for p in (tmp_path / "run" / "deep").iterdir()) == ["accuracy_by_length.csv",
                                                                            "history.csv"]  # no temporaries


def test_report_refuses_a_file_for_a_folder(tmp_path):
    target = tmp_path / "taken"
    target.write_text("x")
    with pytest.raises(TrainingError, match="is a file"):
        write_report(ScalingExperiment(d_k=4), target)
