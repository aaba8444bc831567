"""attn-studio train: a headless run writes its curves; bad command lines say one line and write nothing."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from attn_studio.cli import main
from attn_studio.training import ScalingExperiment
from attn_studio.training.experiment import Experiment


def _read(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def test_train_scaling_writes_the_history(tmp_path, capsys):
    out = tmp_path / "runs" / "scaling"
    assert main(["train", "scaling", "--d-k", "8", "--seed", "2", "--steps", "3", "--out", str(out)]) == 0
    table = _read(out / "history.csv")
    assert len(table) == 4 and table[0][:3] == ["step", "scaled/loss", "scaled/accuracy"]
    twin = ScalingExperiment(d_k=8, seed=2)
    twin.run(3)
    for column, name in enumerate(table[0][1:], start=1):
        arm, metric = name.split("/")
        assert [float(row[column]) for row in table[1:]] == twin.history[arm][metric]
    printed = capsys.readouterr().out
    assert "scaling, seed 2, d_k 8: 3 steps" in printed and "history.csv" in printed


def test_train_seq2seq_writes_accuracy_by_length(tmp_path):
    assert main(["train", "seq2seq", "--steps", "2", "--out", str(tmp_path)]) == 0
    assert len(_read(tmp_path / "history.csv")) == 3
    assert len(_read(tmp_path / "accuracy_by_length.csv")) == 21


@pytest.mark.parametrize("args, message", [
    (["train", "nope"], "unknown experiment 'nope'"),
    (["train", "seq2seq", "--d-k", "8"], "d_k applies to scaling only"),
    (["train", "scaling", "--steps", "0"], "steps must be between 1 and"),
    (["train", "scaling", "--seed", "-4"], "seed must be"),
    (["train", "scaling", "--d-k", "x"], "invalid int value"),
])
def test_bad_arguments_say_one_line_and_write_nothing(tmp_path, capsys, args, message):
    out = tmp_path / "out"
    assert main(args + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("attn-studio train: error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


def test_out_must_be_given_and_be_a_folder(tmp_path, capsys):
    assert main(["train", "scaling"]) == 2
    assert "--out" in capsys.readouterr().err
    taken = tmp_path / "file"
    taken.write_text("")
    assert main(["train", "scaling", "--steps", "1", "--out", str(taken)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_ctrl_c_keeps_the_steps_taken(tmp_path, monkeypatch, capsys):
    step = Experiment.step

    def interrupted(self):
        if self.step_count == 2:
            raise KeyboardInterrupt
        return step(self)
    monkeypatch.setattr(Experiment, "step", interrupted)
    assert main(["train", "scaling", "--d-k", "4", "--steps", "10", "--out", str(tmp_path)]) == 130
    assert len(_read(tmp_path / "history.csv")) == 3
    assert "2 steps (stopped)" in capsys.readouterr().out


def test_train_command_imports_no_qt(tmp_path):
    code = ("import sys; from attn_studio.cli import main; "
            f"code = main(['train', 'scaling', '--d-k', '4', '--steps', '1', '--out', {str(tmp_path)!r}]); "
            "print(code, sorted({m.split('.')[0] for m in sys.modules} & {'PySide6', 'pyqtgraph', 'shiboken6'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "0 []"


def test_png_draws_the_panels_figure(tmp_path):
    from PySide6 import QtGui

    from attn_studio.gui.files.figures import MARGIN
    from attn_studio.gui.training.scaling_figure import ScalingFigure

    assert main(["train", "scaling", "--d-k", "4", "--steps", "30", "--png", "--out", str(tmp_path)]) == 0
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == ["scaling.png"]  # one figure, the panel's (its Export writes the same: tests/gui/test_lab_figures)
    image = QtGui.QImage(str(tmp_path / "scaling.png"))
    page = ScalingFigure.page_size
    assert image.width() == 2 * (page.width() + 2 * MARGIN) and image.height() > 2 * page.height()
    # Both arms' colours are on the page (a blank or single-curve figure fails).
    colours = {image.pixelColor(x, y).name() for x in range(0, image.width(), 3) for y in range(0, image.height(), 3)}
    assert {"#0072b2", "#d55e00"} <= colours
    assert not list(tmp_path.glob(".*"))  # no temporary file left


def test_train_induction_ablate_writes_a_row_per_head(tmp_path, capsys):
    from attn_studio.training import InductionExperiment
    from attn_studio.training.ablation import ablation_study

    assert main(["train", "induction", "--steps", "4", "--seed", "1", "--ablate", "--out", str(tmp_path)]) == 0
    table = _read(tmp_path / "ablation.csv")
    header, rows = table[0], table[1:]
    assert header[:6] == ["arm", "layer", "head", "step", "loss_repeat", "loss_first"]
    assert [tuple(r[:3]) for r in rows] == [("one layer", "1", "1"), ("one layer", "1", "2"), ("two layers", "1", "1"),
                                            ("two layers", "1", "2"), ("two layers", "2", "1"), ("two layers", "2", "2")]
    twin = InductionExperiment(seed=1)
    twin.run(4)
    study = ablation_study(twin)
    for row in rows:
        item = study.head(row[0], int(row[1]) - 1, int(row[2]) - 1)
        values = dict(zip(header, row))
        assert float(values["loss_repeat"]) == pytest.approx(item.loss_repeat, rel=1e-9)
        assert float(values["added_first"]) == pytest.approx(item.added_first, rel=1e-6, abs=1e-9)
        assert float(values["induction_score"]) == pytest.approx(item.scores["induction"], rel=1e-9)
    printed = capsys.readouterr().out
    assert "No head is needed yet" in printed and "ablation.csv" in printed


def test_ablate_is_for_the_induction_experiment_only(tmp_path, capsys):
    assert main(["train", "scaling", "--steps", "2", "--ablate", "--out", str(tmp_path / "o")]) == 2
    assert "--ablate" in capsys.readouterr().err and not (tmp_path / "o").exists()
