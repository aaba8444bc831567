"""``attn-studio train NAME --save DIR`` writes a lab model's folder; ``attn-studio export --model DIR``
opens it (on its own example when no --text is given); bad requests say one line before any run."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from attn_studio.pretrained import load_pretrained
from attn_studio.training import InductionExperiment, ScalingExperiment
from test_cli_export import png_size, run_here


def test_train_induction_save_writes_the_two_layer_model_alone(tmp_path, capfd):
    folder = tmp_path / "two-layers"
    done = run_here(capfd, "train", "induction", "--seed", "1", "--steps", "30", "--save", str(folder))
    assert done.returncode == 0, done.stderr
    assert "30 steps of 'two layers' alone" in done.stdout and str(folder) in done.stdout
    model = load_pretrained(folder)
    assert model.name == "lab two layers (seed 1, step 30)" and model.training["steps"] == 30
    twin = InductionExperiment(seed=1)
    twin.run(30)  # trained beside the one-layer model, the same numbers
    tokens = twin.batch(99)["tokens"][0]
    np.testing.assert_allclose(model.run_ids(tokens).attentions, twin.models["two layers"].attention(tokens[None])[:, 0],
                               rtol=0, atol=1e-12)


def test_train_scaling_saves_the_arm_asked_for_beside_the_tables(tmp_path, capfd):
    done = run_here(capfd, "train", "scaling", "--d-k", "8", "--steps", "5", "--out", str(tmp_path / "runs"),
                    "--save", str(tmp_path / "m"), "--arm", "unscaled")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "runs" / "history.csv").is_file()
    model = load_pretrained(tmp_path / "m")
    twin = ScalingExperiment(d_k=8, seed=0)
    twin.run(5)
    assert model.name == "lab unscaled d_k 8 (seed 0, step 5)" and not model.config.scale_attention
    np.testing.assert_allclose(model.unembedding[-1], twin.models["unscaled"].params["bo"], rtol=0, atol=0)


@pytest.mark.parametrize("args, words", [
    (["train", "seq2seq", "--save", "{tmp}/m"], "not attention-only"),
    (["train", "scaling", "--d-k", "4", "--save", "{tmp}/m"], "d_k >= 8"),
    (["train", "induction", "--save", "{tmp}/m", "--arm", "three layers"], "--arm must be one of"),
    (["train", "induction", "--arm", "one layer", "--out", "{tmp}/o"], "--arm goes with --save"),
    (["train", "induction"], "give --out DIR for the tables, --save DIR for the model"),
    (["train", "induction", "--save", "{tmp}"], "already holds other files"),
])
def test_a_bad_save_is_refused_before_the_run(tmp_path, capfd, args, words):
    (tmp_path / "mine.txt").write_text("keep")
    done = run_here(capfd, *[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert done.returncode == 2 and words in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]  # nothing written


@pytest.fixture(scope="module")
def lab_folder(tmp_path_factory):
    exp = InductionExperiment(seed=0)
    exp.run(20)
    return exp.save_model("two layers", tmp_path_factory.mktemp("lab") / "model")


def test_export_model_draws_a_lab_model_on_its_own_example(lab_folder, tmp_path, capfd):
    out = tmp_path / "model.png"
    done = run_here(capfd, "export", "--model", str(lab_folder), "--panel", "model", "--layer", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert min(png_size(out.read_bytes())) > 200


def test_export_model_writes_a_lab_heads_weights_on_typed_tokens(lab_folder, tmp_path, capfd):
    out = tmp_path / "w.csv"
    done = run_here(capfd, "export", "--model", str(lab_folder), "--text", "KDQB KDQB", "--layer", "2", "--head", "1",
                    "--out", str(out))
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(out.read_text())))
    assert rows[0][1:] == list("KDQBKDQB") and [r[0] for r in rows[1:]] == list("KDQBKDQB")
    weights = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    expected = load_pretrained(lab_folder).run("KDQB KDQB").attentions[1, 0]
    np.testing.assert_allclose(weights, expected, rtol=0, atol=1e-9)
    done = run_here(capfd, "export", "--model", str(lab_folder), "--text", "KD?Q", "--out", str(tmp_path / "x.png"))
    assert done.returncode == 2 and "'?'" in done.stderr
