"""``attn-studio export`` on a trained model's edits: a saved trained session, ``--silence``,
``--scale-head`` and ``--query``, and the requests it refuses (a learned position table drawn as
a sinusoid, an empty sentence).

The command's ``main()`` runs in this process (``run_here``, as in ``test_cli_trained``); what it
wrote is read back: the weights as CSV, the figures as SVG text. Skipped where all-MiniLM-L6-v2 is
not installed, except the refusals that need no model.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from attn_studio.pretrained import default_model_zip
from test_cli_export import run_here

ANIMAL = "The animal didn't cross the street because it was too tired."
MINILM = ("--model", "all-MiniLM-L6-v2")
needs_minilm = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")


def read_weights(path) -> tuple[list[str], np.ndarray]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    return rows[0][1:], np.array([[float(v) for v in r[1:]] for r in rows[1:]])


def svg_texts(path) -> str:
    import re

    return " ".join(re.findall(r">([^<]+)<", path.read_text(encoding="utf-8")))


@pytest.fixture
def silenced_session(tmp_path, minilm):
    """A session saved after silencing head 4.2 (from 1), with layer 5 head 1 selected."""
    from attn_studio.session import write_session
    from attn_studio.trained import TrainedStudio

    studio = TrainedStudio(minilm)
    studio.update(sentence=ANIMAL)
    studio.set_head_scale(3, 1, 0.0)
    studio.select(layer=4, head=0)
    path = tmp_path / "trained.attn.json"
    write_session(path, studio.state)
    return path


@needs_minilm
def test_a_trained_session_exports_with_its_silenced_head(tmp_path, capfd, minilm, silenced_session):
    out = tmp_path / "w.csv"
    done = run_here(capfd, "export", "--session", str(silenced_session), "--out", str(out))
    assert done.returncode == 0, done.stderr
    tokens, weights = read_weights(out)
    assert tokens == list(minilm.run(ANIMAL).tokens)
    # The session's selection (layer 5, head 1) above the silenced head: its weights are the edited
    # model's, not the trained model's.
    mask = np.ones((minilm.layers, minilm.heads))
    mask[3, 1] = 0.0
    np.testing.assert_allclose(weights, minilm.run(ANIMAL, head_mask=mask).attentions[4, 0], atol=1e-12)
    assert np.abs(weights - minilm.run(ANIMAL).attentions[4, 0]).max() > 1e-4


@needs_minilm
def test_drift_of_a_trained_session_shows_its_edit(tmp_path, capfd, silenced_session):
    out = tmp_path / "drift.svg"
    done = run_here(capfd, "export", "--session", str(silenced_session), "--panel", "drift", "--out", str(out))
    assert done.returncode == 0, done.stderr
    words = svg_texts(out)
    assert "4.2 silenced" in words and "unedited" not in words


@needs_minilm
def test_drift_names_every_edited_head_and_marks_each_layer(tmp_path, capfd, minilm):
    """Two heads silenced in layers 4 and 6: the figure names both, not only the lower one (most of the
    distance after layer 6 comes from the head silenced there), and each bar carries its value."""
    from attn_studio.formatting import format_number
    from attn_studio.pretrained import Edits

    out = tmp_path / "drift.svg"
    done = run_here(capfd, "export", *MINILM, "--text", ANIMAL, "--silence", "4.2", "--silence", "6.12",
                    "--panel", "drift", "--out", str(out))
    assert done.returncode == 0, done.stderr
    words = svg_texts(out)
    assert "4.2 silenced" in words and "6.12 silenced" in words
    assert "heads 4.2 silenced," in words  # the title says both (it may wrap after the comma)
    edited = minilm.run(ANIMAL, edits=Edits().with_head_scale(3, 1, 0.0).with_head_scale(5, 11, 0.0))
    drift = edited.drift(minilm.run(ANIMAL))
    for d in drift[1:]:
        assert format_number(d, 4) in words


@needs_minilm
def test_silence_and_scale_from_the_command_line(tmp_path, capfd, minilm):
    drift = tmp_path / "drift.svg"
    done = run_here(capfd, "export", *MINILM, "--text", ANIMAL, "--silence", "4.2", "--panel", "drift",
                    "--out", str(drift))
    assert done.returncode == 0, done.stderr
    assert "4.2 silenced" in svg_texts(drift)
    out = tmp_path / "w.csv"
    done = run_here(capfd, "export", *MINILM, "--text", ANIMAL, "--silence", "2.3", "--scale-head", "1.1=0.5",
                    "--layer", "3", "--head", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    from attn_studio.pretrained import Edits

    edits = Edits().with_head_scale(1, 2, 0.0).with_head_scale(0, 0, 0.5)
    np.testing.assert_allclose(read_weights(out)[1], minilm.run(ANIMAL, edits=edits).attentions[2, 0], atol=1e-12)


@needs_minilm
def test_command_line_edits_add_to_the_sessions(tmp_path, capfd, minilm, silenced_session):
    out = tmp_path / "w.csv"
    done = run_here(capfd, "export", "--session", str(silenced_session), "--silence", "1.1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    mask = np.ones((minilm.layers, minilm.heads))
    mask[3, 1] = mask[0, 0] = 0.0
    np.testing.assert_allclose(read_weights(out)[1], minilm.run(ANIMAL, head_mask=mask).attentions[4, 0], atol=1e-12)


@needs_minilm
@pytest.mark.parametrize("query, token", [("it", "it"), ("3", "animal"), ("TIRED", "tired")])
def test_query_chooses_the_trained_steps(tmp_path, capfd, query, token):
    out = tmp_path / "steps.svg"
    done = run_here(capfd, "export", *MINILM, "--text", ANIMAL, "--query", query, "--panel", "steps", "--out", str(out))
    assert done.returncode == 0, done.stderr
    words = svg_texts(out)
    assert f"query q “{token}”" in words and "“[CLS]”" not in words


@pytest.mark.parametrize("query, token", [("animal", "animal"), ("1", "The")])
def test_query_chooses_the_toy_steps(tmp_path, capfd, query, token):
    out = tmp_path / "steps.svg"
    done = run_here(capfd, "export", "--preset", "animal", "--query", query, "--panel", "steps", "--out", str(out))
    assert done.returncode == 0, done.stderr
    words = svg_texts(out)
    assert f"query q “{token}”" in words and "“it”" not in words  # the example's own query is "it"


@needs_minilm
@pytest.mark.parametrize("args, words", [
    (["--silence", "7.1"], "--silence 7.1: the layer must be 1 to 6 for all-MiniLM-L6-v2, got 7"),
    (["--silence", "4.13"], "the head must be 1 to 12"),
    (["--silence", "four.two"], "LAYER.HEAD"),
    (["--scale-head", "4.2=3"], "between 0 and 2"),
    (["--scale-head", "4.2"], "LAYER.HEAD=FACTOR"),
    (["--silence", "4.2", "--scale-head", "4.2=0.5"], "both edit head 4.2"),
    (["--query", "zebra"], "'zebra' is not a token"),
    (["--query", "17"], "16 tokens"),
    (["--panel", "positions"], "learns its positions"),
    (["--text", ""], "--text is empty"),
    (["--text", " \t "], "--text is empty"),
])
def test_trained_requests_refused_with_one_line(tmp_path, capfd, args, words):
    out = tmp_path / "x.png"
    text = [] if "--text" in args else ["--text", ANIMAL]
    done = run_here(capfd, "export", *MINILM, *text, *args, "--out", str(out))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr
    assert not out.exists()


@needs_minilm
@pytest.mark.parametrize("text", ["", "   "])
def test_heads_refuses_an_empty_text(tmp_path, capfd, text):
    out = tmp_path / "heads.csv"
    done = run_here(capfd, "heads", "--text", text, "--out", str(out))
    assert done.returncode == 2 and "--text is empty" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("args, words", [
    (["--preset", "animal", "--silence", "1.1"], "--silence edits or selects a trained model's heads"),
    (["--preset", "animal", "--head", "2"], "--panel head:N"),
    (["--preset", "animal", "--query", "zebra"], "'zebra' is not a token"),
])
def test_trained_flags_on_the_toy_model_are_refused(tmp_path, capfd, args, words):
    done = run_here(capfd, "export", *args, "--out", str(tmp_path / "x.png"))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr, done.stderr
