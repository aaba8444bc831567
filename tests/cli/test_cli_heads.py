"""``attn-studio heads``: every head's report card as CSV, and the top heads on the terminal.

Run in this process (the command never starts Qt), on the committed tiny checkpoints;
the "it" -> "animal" heads on all-MiniLM-L6-v2 where it is installed.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

from attn_studio.cli import main
from attn_studio.pretrained import (
    default_model_zip,
    find_heads,
    head_importance,
    head_report,
    load_pretrained,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "pretrained"
TEXT = "The animal didn't cross the street because it was too tired."
MEASURES = ["entropy", "entropy_norm", "confidence", "previous", "next", "self", "first", "last", "punctuation"]


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    return rows[0], rows[1:]


def test_report_importance_and_find_as_csv(tmp_path, capsys):
    out = tmp_path / "heads.csv"
    code = main(["heads", "--model", str(DATA / "tiny-bert"), "--text", TEXT, "--find", "animal", "tired",
                 "--importance", "--out", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    header, rows = read_csv(out)
    assert header == ["layer", "head", "role", *MEASURES, "importance", "animal -> tired"]
    assert [(int(r[0]), int(r[1])) for r in rows] == [(l, h) for l in (1, 2) for h in (1, 2, 3, 4)]

    run = load_pretrained(DATA / "tiny-bert").run(TEXT)
    report, importance = head_report(run), head_importance(run)
    found = {(l, h): w for l, h, w in find_heads(run, "animal", "tired")}
    for row in rows:
        layer, head = int(row[0]) - 1, int(row[1]) - 1
        assert row[2] == report.role[layer, head]
        values = [float(v) for v in row[3:]]
        expected = [getattr(report, "self_" if m == "self" else m)[layer, head] for m in MEASURES]
        assert values == [*expected, importance[layer, head], found[(layer, head)]]   # written in full

    best = max(found, key=found.get)
    assert f"layer {best[0] + 1} head {best[1] + 1}: {found[best]:.3f}" in printed.out
    assert "Most important heads" in printed.out and f"wrote {out}" in printed.out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["heads.csv"]   # no temporary file left


def test_report_alone_on_gpt2_with_a_token_index(tmp_path, capsys):
    out = tmp_path / "g.csv"
    code = main(["heads", "--model", str(DATA / "tiny-gpt2"), "--text", "the animal was", "--find", "#2", "#0",
                 "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    header, rows = read_csv(out)
    assert header == ["layer", "head", "role", *MEASURES, "#2 -> #0"]
    run = load_pretrained(DATA / "tiny-gpt2").run("the animal was")
    weights = [float(r[-1]) for r in rows]
    assert weights == list(run.attentions[:, :, 2, 0].ravel())
    assert "importance" not in capsys.readouterr().out.lower()


@pytest.mark.parametrize("args, message, code", [
    (["--find", "zebra", "animal"], "'zebra' does not occur", 2),
    (["--find", "it", "#99"], "99 is out of range", 2),
    (["--find", "it"], "--find", 2),
    (["--top", "0"], "--top", 2),
    (["--model", "no-such-model"], "no-such-model", 2),
])
def test_bad_arguments_are_one_line_and_write_nothing(tmp_path, capsys, args, message, code):
    out = tmp_path / "x.csv"
    base = ["heads", "--text", TEXT, "--out", str(out)]
    if "--model" not in args:
        base += ["--model", str(DATA / "tiny-bert")]
    assert main(base + args) == code
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_a_missing_folder_is_reported(tmp_path, capsys):
    out = tmp_path / "no" / "x.csv"
    assert main(["heads", "--model", str(DATA / "tiny-bert"), "--text", TEXT, "--out", str(out)]) == 1
    assert "cannot write" in capsys.readouterr().err


@pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")
def test_it_to_animal_on_minilm(tmp_path, capsys):
    out = tmp_path / "m.csv"
    code = main(["heads", "--model", "all-MiniLM-L6-v2", "--text", TEXT, "--find", "it", "animal", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    lines = printed.splitlines()
    first = lines.index("Heads that send 'it' to 'animal' (share of its attention):")
    assert {lines[first + 1].split(":")[0].strip(), lines[first + 2].split(":")[0].strip()} == \
        {"layer 4 head 2", "layer 6 head 12"}
    header, rows = read_csv(out)
    weights = np.array([float(r[-1]) for r in rows]).reshape(6, 12)
    assert weights[3, 1] == pytest.approx(0.68, abs=0.005) and weights[5, 11] == pytest.approx(0.68, abs=0.01)


# -- the head detector -----------------------------------------------------------------------------

DETECT_COLUMNS = ["previous_score", "duplicate_score", "induction_score", "detected"]


def test_detect_writes_the_three_scores_of_every_head_on_repeated_tokens(tmp_path, capsys):
    from attn_studio.pretrained import DETECTORS, detect_heads, repeated_tokens
    from attn_studio.pretrained.detect import detect

    out = tmp_path / "d.csv"
    code = main(["heads", "--model", str(DATA / "tiny-bert"), "--text", TEXT, "--detect", "--seq-len", "6",
                 "--seed", "3", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    header, rows = read_csv(out)
    assert header == ["layer", "head", "role", *MEASURES, *DETECT_COLUMNS]
    model = load_pretrained(DATA / "tiny-bert")
    run = model.run_ids(repeated_tokens(model, length=6, seed=3))
    roles = detect(run).roles
    report = head_report(model.run(TEXT))  # the report card stays the sentence's
    for row in rows:
        layer, head = int(row[0]) - 1, int(row[1]) - 1
        assert row[2] == report.role[layer, head]
        assert [float(v) for v in row[-4:-1]] == [detect_heads(run, name)[layer, head] for name in DETECTORS]
        assert row[-1] == roles[layer, head]
    # The sequence it ran on and the top heads of each kind are printed.
    assert "Head detector on 6 random tokens twice, seed 3" in printed
    assert "tokens: " + " ".join(run.tokens) in printed
    for kind in ("previous token:", "duplicate token:", "induction:"):
        assert kind in printed


def test_detect_alone_measures_the_report_card_on_the_repeated_tokens(tmp_path, capsys):
    from attn_studio.pretrained import repeated_tokens

    out = tmp_path / "g.csv"
    assert main(["heads", "--model", str(DATA / "tiny-gpt2"), "--detect", "--seq-len", "5", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    model = load_pretrained(DATA / "tiny-gpt2")
    run = model.run_ids(repeated_tokens(model, length=5, seed=0))
    header, rows = read_csv(out)
    report = head_report(run)
    assert [r[2] for r in rows] == list(report.role.ravel())
    assert "10 tokens (the detector's)" in printed


@pytest.mark.parametrize("args, message", [
    (["--seq-len", "5"], "use them with --detect"),
    (["--seed", "1"], "use them with --detect"),
    (["--detect", "--seq-len", "0"], "length of the repeated stretch"),
    (["--detect", "--seq-len", "9999"], "use a length of at most"),
    (["--detect", "--seed", "-2"], "seed"),
])
def test_bad_detector_arguments_are_one_line(tmp_path, capsys, args, message):
    out = tmp_path / "x.csv"
    assert main(["heads", "--model", str(DATA / "tiny-bert"), "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_neither_text_nor_detect_is_refused(tmp_path, capsys):
    assert main(["heads", "--model", str(DATA / "tiny-bert"), "--out", str(tmp_path / "x.csv")]) == 2
    assert "--text" in capsys.readouterr().err


@pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")
def test_detect_on_minilm_names_the_report_cards_previous_token_head(tmp_path, capsys):
    out = tmp_path / "m.csv"
    assert main(["heads", "--model", "all-MiniLM-L6-v2", "--text", TEXT, "--detect", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    carded = next(line for line in printed if line.strip().startswith("previous token: layer"))
    detected = next(line for line in printed if line.strip().startswith("previous token: layer") and "detected" in line)
    assert carded.strip().startswith("previous token: layer 1 head 3 (1.00)")  # the report card's
    score = float(detected.split("previous token: layer 1 head 3 (")[1].split(")")[0])
    assert score > 0.9 and detected.endswith("detected: layer 1 head 3")
    header, rows = read_csv(out)
    named = [(r[0], r[1]) for r in rows if r[-1] == "previous token"]
    assert named == [(r[0], r[1]) for r in rows if r[2] == "previous token"] == [("1", "3")]
