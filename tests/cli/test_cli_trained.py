"""``attn-studio export --model``: a trained model's figures and attention matrices from the command line.

The CSV comes from a real process, as in ``test_cli_export`` (which also proves that a
figure is drawn by a process with no display); the figures, the usage errors and the .npy
matrix run the command's ``main()`` in this process, which saves a second of start-up per
figure. Skipped where all-MiniLM-L6-v2 is not installed (the usage errors that need no
model run everywhere).
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from attn_studio.pretrained import default_model_zip
from test_cli_export import png_size, run, run_here

ANIMAL = "The animal didn't cross the street because it was too tired."
needs_minilm = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")


@needs_minilm
def test_csv_holds_the_selected_heads_weights_with_tokens_as_labels(tmp_path):
    from attn_studio.pretrained import load_pretrained

    out = tmp_path / "w.csv"
    done = run("export", "--model", "all-MiniLM-L6-v2", "--text", ANIMAL, "--layer", "3", "--head", "2",
               "--format", "csv", "--out", str(out))
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    run_ = load_pretrained().run(ANIMAL)
    assert rows[0] == [""] + list(run_.tokens)
    assert [r[0] for r in rows[1:]] == list(run_.tokens)
    values = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    np.testing.assert_array_equal(values, run_.attentions[2, 1])


@needs_minilm
def test_npy_from_the_extension(tmp_path, capfd):
    from attn_studio.pretrained import load_pretrained

    out = tmp_path / "w.npy"
    done = run_here(capfd, "export", "--model", "all-MiniLM-L6-v2", "--text", "a river bank", "--out", str(out))
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(out), load_pretrained().run("a river bank").attentions[0, 0])


@needs_minilm
@pytest.mark.parametrize("panel", ["model", "drift", "heatmaps"])
def test_trained_panels_as_png(tmp_path, capfd, panel):
    out = tmp_path / f"{panel}.png"
    done = run_here(capfd, "export", "--model", "all-MiniLM-L6-v2", "--text", ANIMAL, "--layer", "2", "--head", "5",
               "--panel", panel, "--out", str(out), "--scale", "1")
    assert done.returncode == 0, done.stderr
    width, height = png_size(out.read_bytes())
    assert width > 300 and height > 200


@needs_minilm
@pytest.mark.parametrize("args, words", [
    (["--model", "no-such-model", "--text", "hi"], "no-such-model"),
    (["--model", "all-MiniLM-L6-v2", "--text", "hi", "--layer", "7"], "--layer must be 1 to 6"),
    (["--model", "all-MiniLM-L6-v2", "--text", "hi", "--head", "0"], "--head must be 1 to 12"),
    (["--model", "all-MiniLM-L6-v2", "--text", "word " * 600], "positions"),
])
def test_bad_model_arguments_exit_2_with_one_line(tmp_path, capfd, args, words):
    out = tmp_path / "x.csv"
    done = run_here(capfd, "export", *args, "--out", str(out))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr
    assert not out.exists()


@pytest.mark.parametrize("args, words", [
    (["--text", "hi", "--out", "x.png"], "--text goes with --model"),
    (["--preset", "journey", "--format", "csv", "--out", "x.csv"], "give --model"),
    (["--model", "all-MiniLM-L6-v2", "--out", "x.png"], "--model needs --text"),
])
def test_usage_errors_need_no_model(tmp_path, capfd, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    done = run_here(capfd, "export", *args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr


@needs_minilm
def test_meaning_panel_of_two_bank_sentences(tmp_path, capfd):
    out = tmp_path / "bank.svg"
    done = run_here(capfd, "export", "--model", "all-MiniLM-L6-v2", "--text", "I sat on the bank of the river.",
               "--second", "I deposited money at the bank.", "--word", "bank", "--panel", "meaning",
               "--out", str(out))
    assert done.returncode == 0, done.stderr
    svg = out.read_text(encoding="utf-8")
    assert "bank" in svg and "deposited" in svg  # the title and the legend name the two sentences


@needs_minilm
def test_a_word_missing_from_a_sentence_exits_2(tmp_path, capfd):
    done = run_here(capfd, "export", "--model", "all-MiniLM-L6-v2", "--text", "I sat on the bank.", "--second", "No such word.",
               "--word", "bank", "--panel", "meaning", "--out", str(tmp_path / "x.png"))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "bank" in done.stderr
