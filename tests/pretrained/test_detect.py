"""The head detector (TransformerLens's detect_head, error_measure="mul"): its scores against a
computation written out cell by cell from the attention patterns, the repeated random tokens it
runs on, run_ids against run(text), and MiniLM's previous-token head named by both the detector and
the report card."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from attn_studio.pretrained import DETECTORS, ModelError, detect_heads, repeated_tokens
from attn_studio.pretrained.detect import (detect, detected_roles, detection_ceiling, detection_pattern,
                                           ordinary_token_ids, top_heads)
from attn_studio.pretrained.heads import head_report

ANIMAL = "The animal didn't cross the street because it was too tired."


def slow_score(attention: np.ndarray, ids, name: str) -> float:
    """One head's score written out from the contract, a loop over cells: the share of the head's
    attention on the cells of its kind's pattern."""
    t = len(ids)
    on = total = 0.0
    for i in range(t):
        for j in range(t):
            total += attention[i, j]
            if name == "previous":
                hit = j == i - 1
            elif name == "duplicate":
                hit = j < i and ids[j] == ids[i]
            else:
                hit = 1 <= j <= i and ids[j - 1] == ids[i]
            if hit:
                on += attention[i, j]
    return on / total if total else 0.0


def slow_scores(run, name: str) -> np.ndarray:
    a = run.attentions
    return np.array([[slow_score(a[l, h], list(run.ids), name) for h in range(a.shape[1])]
                     for l in range(a.shape[0])])


def test_the_detectors_are_named_as_the_contract_says():
    assert DETECTORS == ("previous", "duplicate", "induction")


def test_patterns_of_a_hand_made_sequence():
    ids = [7, 3, 5, 7, 3, 9]
    prev = detection_pattern(ids, "previous")
    assert prev[1, 0] == prev[5, 4] == 1 and prev.sum() == 5
    dup = detection_pattern(ids, "duplicate")
    assert {tuple(x) for x in np.argwhere(dup)} == {(3, 0), (4, 1)}
    ind = detection_pattern(ids, "induction")
    # Token 7 at 3 follows an earlier 7 at 0: the token after it (position 1); 3 at 4 -> position 2.
    assert {tuple(x) for x in np.argwhere(ind)} == {(3, 1), (4, 2)}
    with pytest.raises(ModelError, match="unknown detector"):
        detection_pattern(ids, "copying")


def test_scores_of_random_patterns_match_the_cell_by_cell_computation():
    rng = np.random.default_rng(3)
    ids = np.array([4, 1, 4, 2, 1, 4, 2, 0, 1])
    a = rng.random((2, 3, 9, 9))
    a[0, 1] = 0.0  # a head with no attention at all scores 0
    run = SimpleNamespace(attentions=a, ids=ids)
    for name in DETECTORS:
        np.testing.assert_allclose(detect_heads(run, name), slow_scores(run, name), rtol=1e-12, atol=1e-15)
    assert np.all(detect_heads(run, "induction")[0, 1] == 0.0)


def test_a_perfect_previous_token_head_scores_the_share_of_rows_that_have_a_previous_token():
    t = 8
    a = np.zeros((1, 1, t, t))
    a[0, 0, 0, 0] = 1.0
    a[0, 0, np.arange(1, t), np.arange(t - 1)] = 1.0
    run = SimpleNamespace(attentions=a, ids=np.arange(t))
    assert detect_heads(run, "previous")[0, 0] == pytest.approx((t - 1) / t)


def test_mismatched_runs_are_refused_with_a_message():
    with pytest.raises(ModelError, match="8 positions"):
        detect_heads(SimpleNamespace(attentions=np.zeros((1, 1, 8, 8)), ids=np.arange(5)), "previous")
    with pytest.raises(ModelError, match="token ids"):
        detect_heads(SimpleNamespace(attentions=np.zeros((1, 1, 4, 4))), "previous")


def test_detected_roles_and_top_heads():
    scores = {"previous": np.array([[0.9, 0.1], [0.2, 0.3]]),
              "duplicate": np.array([[0.0, 0.5], [0.2, 0.1]]),
              "induction": np.array([[0.1, 0.6], [0.2, 0.35]])}
    # 1.2's induction (0.6) beats its duplicate (0.5); 2.2's induction (0.35) is below 0.4; previous
    # 0.3 of 2.2 is under half the model's best previous-token head (0.9).
    roles = detected_roles(scores, threshold=0.4)
    assert roles.tolist() == [["previous token", "induction"], ["", ""]]
    # As shares of their ceilings: induction can reach 0.5 at most, so 0.35 is 70 % of it.
    ceilings = {"previous": np.full((2, 2), 0.9), "duplicate": np.full((2, 2), 0.5),
                "induction": np.full((2, 2), 0.5)}
    assert detected_roles(scores, ceilings, threshold=0.4)[1, 1] == "induction"
    assert top_heads(scores["induction"], 2) == [(0, 1, 0.6), (1, 1, 0.35)]


def test_the_ceiling_is_what_a_perfect_head_of_the_kind_would_score():
    ids = np.array([5, 2, 8, 5, 2, 8])
    rng = np.random.default_rng(0)
    a = rng.random((1, 2, 6, 6))
    a /= a.sum(axis=-1, keepdims=True)
    run = SimpleNamespace(attentions=a, ids=ids)
    for name in DETECTORS:
        pattern = detection_pattern(ids, name)
        # The head's own row sums moved onto the pattern's cells of each row that has some.
        perfect = np.zeros_like(a)
        for h in range(2):
            for i in range(6):
                cells = np.flatnonzero(pattern[i])
                if cells.size:
                    perfect[0, h, i, cells] = a[0, h, i].sum() / cells.size
                else:
                    perfect[0, h, i, i] = a[0, h, i].sum()
        np.testing.assert_allclose(detection_ceiling(run, name),
                                   detect_heads(SimpleNamespace(attentions=perfect, ids=ids), name), rtol=1e-12)
    assert detection_ceiling(run, "induction")[0, 0] == pytest.approx(0.5)  # the second copy's rows


# -- repeated random tokens on real models ------------------------------------------------------------

def test_repeated_tokens_are_a_seeded_stretch_twice(tiny_bert, tiny_gpt2):
    ids = repeated_tokens(tiny_gpt2, length=6, seed=4)
    assert ids.dtype == np.int64 and ids.shape == (12,)
    np.testing.assert_array_equal(ids[:6], ids[6:])
    assert len(set(ids[:6].tolist())) == 6  # drawn without repeats: the only earlier copy is the first stretch
    np.testing.assert_array_equal(ids, repeated_tokens(tiny_gpt2, length=6, seed=4))
    assert not np.array_equal(ids, repeated_tokens(tiny_gpt2, length=6, seed=5))
    framed = repeated_tokens(tiny_bert, length=5, seed=0)
    run = tiny_bert.run_ids(framed)
    assert run.tokens[0] == "[CLS]" and run.tokens[-1] == "[SEP]" and len(run.tokens) == 12
    np.testing.assert_array_equal(framed[1:6], framed[6:11])
    pool = set(ordinary_token_ids(tiny_bert).tolist())
    assert set(framed[1:-1].tolist()) <= pool
    specials = {tiny_bert._tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]")}
    assert not (pool & specials)


def test_repeated_tokens_refuse_what_the_model_cannot_hold(tiny_gpt2):
    with pytest.raises(ModelError, match="at most"):
        repeated_tokens(tiny_gpt2, length=tiny_gpt2.max_positions)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ModelError, match="length"):
            repeated_tokens(tiny_gpt2, length=bad)
    with pytest.raises(ModelError, match="seed"):
        repeated_tokens(tiny_gpt2, seed=-1)


def test_run_ids_gives_the_run_of_the_same_tokens(tiny_bert, tiny_gpt2):
    for model in (tiny_bert, tiny_gpt2):
        text = model.run("the cat sat on the mat")
        again = model.run_ids(text.ids)
        assert again.tokens == text.tokens
        np.testing.assert_array_equal(again.attentions, text.attentions)
        np.testing.assert_array_equal(again.hidden_states, text.hidden_states)
        mask = np.ones((model.layers, model.heads))
        mask[0, 1] = 0.0
        np.testing.assert_array_equal(model.run_ids(text.ids, head_mask=mask).hidden_states,
                                      model.run(text.text, head_mask=mask).hidden_states)


def test_run_ids_refuses_bad_ids(tiny_gpt2):
    for bad, words in (([], "non-empty"), ([[1, 2]], "non-empty"), ([1.5, 2.0], "whole numbers"),
                       ([-1, 2], "lie in"), ([tiny_gpt2.vocab_size], "lie in"),
                       ([1] * (tiny_gpt2.max_positions + 1), "positions"), ("abc", "whole numbers")):
        with pytest.raises(ModelError, match=words):
            tiny_gpt2.run_ids(bad)


def test_detector_matches_the_cell_by_cell_computation_on_tiny_models(tiny_bert, tiny_gpt2):
    for model in (tiny_bert, tiny_gpt2):
        run = model.run_ids(repeated_tokens(model, length=8, seed=1))
        for name in DETECTORS:
            np.testing.assert_allclose(detect_heads(run, name), slow_scores(run, name), rtol=1e-12, atol=1e-15)


# -- MiniLM ------------------------------------------------------------------------------------------

def test_minilm_scores_match_the_cell_by_cell_computation(minilm):
    run = minilm.run_ids(repeated_tokens(minilm, length=20, seed=0))
    assert run.attentions.shape == (6, 12, 42, 42)
    for name in DETECTORS:
        np.testing.assert_allclose(detect_heads(run, name), slow_scores(run, name), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_minilm_detector_names_the_heads_the_report_card_calls_previous_token(minilm, seed):
    report = head_report(minilm.run(ANIMAL))
    carded = {tuple(int(v) for v in lh) for lh in np.argwhere(report.role == "previous token")}
    assert carded == {(0, 2)}  # 1.3 on screen
    run = minilm.run_ids(repeated_tokens(minilm, length=20, seed=seed))
    scores = detect_heads(run, "previous")
    detected = {(int(l), int(h)) for l, h in np.argwhere(detect(run).roles == "previous token")}
    assert detected == carded
    top = top_heads(scores, len(carded))
    assert {(l, h) for l, h, _ in top} == carded and top[0][2] > 0.9


def test_a_lab_model_gets_the_longest_stretch_its_positions_hold(tmp_path):
    """A lab model knows 32 positions: the usual stretch of 20 twice does not fit, so it gets 16 twice,
    and the detector's scores are those of its own attention on them."""
    from attn_studio.pretrained import detect_heads, load_pretrained
    from attn_studio.training import InductionExperiment

    exp = InductionExperiment(seed=0)
    exp.save_model("two layers", tmp_path / "lab")
    model = load_pretrained(tmp_path / "lab")
    ids = repeated_tokens(model, length=20, seed=3)
    assert ids.shape == (32,) and np.array_equal(ids[:16], ids[16:])
    attention = exp.models["two layers"].attention(ids[None])[:, 0]
    previous = np.zeros((32, 32))
    previous[np.arange(1, 32), np.arange(31)] = 1
    expected = (attention * previous).sum(axis=(-1, -2)) / attention.sum(axis=(-1, -2))
    np.testing.assert_allclose(detect_heads(model.run_ids(ids), "previous"), expected, atol=1e-12)
    with pytest.raises(ModelError, match="at most 16"):
        repeated_tokens(model, length=21)
