"""attn_studio.explain: filled-in formulas and the step-by-step chain, checked against the seeds.

Expected numbers are typed in from the seeds or computed here independently
(plain Python / NumPy on the preset's vectors), never read back from explain.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys

import numpy as np
import pytest

from attn_studio import explain
from attn_studio.explain import MINUS, STEP_KEYS, fmt
from attn_studio.formatting import format_number
from attn_studio.session import load_preset
from attn_studio.studio import Studio

JOURNEY_X = np.array([
    [0.43, 0.15, 0.89],  # Your
    [0.55, 0.87, 0.66],  # journey
    [0.57, 0.85, 0.64],  # starts
    [0.22, 0.58, 0.33],  # with
    [0.77, 0.25, 0.10],  # one
    [0.05, 0.80, 0.55],  # step
])
# Seed 000: the weights and context vector of "journey" (query 2).
JOURNEY_WEIGHTS = [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581]
JOURNEY_OUTPUT = [0.4419, 0.6515, 0.5683]
# Seed 001: the spreadsheet for "bank" (query 8).
BANK_INNER = [0.22562, 0.07255, -0.11575, -0.17891, -0.12341, -0.11899, -0.26155, 0.35677]
BANK_EXPS = [1.2531, 1.07524, 0.89069, 0.83618, 0.8839, 0.88781, 0.76985, 1.42871]
BANK_WEIGHTS = [0.15614, 0.13398, 0.11098, 0.10419, 0.11014, 0.11062, 0.09593, 0.17802]
BANK_OUTPUT = [-0.1061, -0.13715, -0.02285]

NUMBER = r"[−-]?\d+(?:\.\d+)?(?:e[−-]?\d+)?"


def number(text: str) -> float:
    """Parse a number as explain prints it (typographic minus, e-notation)."""
    return float(text.replace(MINUS, "-"))


def numbers(text: str) -> list[float]:
    return [number(t) for t in re.findall(NUMBER, text)]


def journey(**changes) -> Studio:
    studio = Studio(load_preset("journey"))
    if changes:
        studio.update(**changes)
    return studio


def steps_of(studio, head=None, query=None) -> dict:
    steps = explain.pipeline_steps(studio.state, studio.result, head, query)
    return {s.key: s for s in steps}


# -- fmt -------------------------------------------------------------------------------
@pytest.mark.parametrize("value, text", [
    (0.55, "0.5500"),  # every number at the setting's four decimals: 0.5500 beside 0.1385
    (1.47543, "1.4754"),
    (-0.10612, f"{MINUS}0.1061"),
    (0.00356, "0.0036"),
    (-0.004684, f"{MINUS}0.0047"),
    (0.0, "0.0000"),
    (-0.0, "0.0000"),
    (-0.00004, "0.0000"),  # rounds to zero: no minus
    (1.0, "1.0000"),
    (300.0, "300.0000"),
    (123456.789, "123456.7890"),
    (2.1665e56, "2.1665e56"),  # from a million on, scientific
    (1.254e-56, "0.0000"),
    (-math.inf, f"{MINUS}inf"),
    (math.inf, "overflow"),
    (math.nan, "overflow"),
    (np.float64(0.2379), "0.2379"),
])
def test_fmt_writes_numbers_as_the_seeds_do(value, text):
    assert fmt(value) == text


def test_fmt_vector_is_compact_and_truncates_long_vectors():
    assert explain.fmt_vector([0.55, 0.87, 0.66]) == "(0.5500, 0.8700, 0.6600)"
    assert explain.fmt_vector([0.55, 0.87, 0.66], digits=2) == "(0.55, 0.87, 0.66)"
    long = explain.fmt_vector(np.arange(64) / 10)
    assert long.startswith("(0.0000, 0.1000, 0.2000, …")
    assert "d=64" in long


# -- score formula -----------------------------------------------------------------------
def test_score_formula_fills_in_the_seed_numbers():
    studio = journey()
    text = explain.score_formula(studio.state, studio.result, 0, 1, 2)
    expected = 0.55 * 0.57 + 0.87 * 0.85 + 0.66 * 0.64
    assert round(expected, 4) == 1.4754
    assert text.startswith("q2·k3 = ")
    assert "0.5500×0.5700 + 0.8700×0.8500 + 0.6600×0.6400" in text
    assert text.endswith(f"= {fmt(expected)}")
    assert "1.4754" in text
    assert "÷" not in text  # the preset does not scale


def test_score_formula_with_token_names():
    studio = journey()
    text = explain.score_formula(studio.state, studio.result, 0, 1, 2, names=True)
    assert text.startswith("q(journey)·k(starts) = 0.5500×0.5700")


def test_score_formula_shows_scaling_and_temperature():
    studio = journey(scale=True)
    text = explain.score_formula(studio.state, studio.result, 0, 1, 2)
    raw = 0.55 * 0.57 + 0.87 * 0.85 + 0.66 * 0.64
    assert f"÷√3 = {fmt(raw / math.sqrt(3))}" in text
    assert fmt(raw / math.sqrt(3)) == "0.8518"
    studio.update(temperature=2.0)
    text = explain.score_formula(studio.state, studio.result, 0, 1, 2)
    assert f"÷√3 ÷ T=2 = {fmt(raw / math.sqrt(3) / 2)}" in text
    studio.update(scale=False)
    text = explain.score_formula(studio.state, studio.result, 0, 1, 2)
    assert "√" not in text and f"÷ T=2 = {fmt(raw / 2)}" in text


def test_score_formula_negative_factors_are_parenthesised():
    studio = Studio(load_preset("bank"))
    text = explain.score_formula(studio.state, studio.result, 0, 7, 0)
    assert text.startswith("q8·k1 = ")
    assert f"0.0200×({MINUS}0.0300)" in text
    assert f"({MINUS}0.2860)×({MINUS}0.7800)" in text


def test_long_dot_products_show_first_three_and_last_terms():
    studio = journey(projections=True, d_model=8, d_head=8)
    r = studio.result
    text = explain.score_formula(studio.state, r, 0, 1, 2)
    assert " + … + " in text and "(8 terms)" in text
    q, k = r.q[0, 1], r.k[0, 2]
    terms = text.split(" = ")[1]
    assert terms.startswith(f"{explain.format_factor(q[0])}×{explain.format_factor(k[0])} + ")
    assert f"+ … + {explain.format_factor(q[7])}×{explain.format_factor(k[7])} (8 terms)" in terms
    assert f"= {fmt(float(np.dot(q, k)))}" in text


def test_masked_score_says_why():
    studio = journey(causal=True)
    text = explain.score_formula(studio.state, studio.result, 0, 1, 2)
    assert "masked (causal: key after query)" in text
    assert text.endswith(f"{MINUS}inf")
    visible = explain.score_formula(studio.state, studio.result, 0, 2, 1)
    assert "masked" not in visible


# -- weight formula ------------------------------------------------------------------------
def test_weight_formula_numbers_match_the_engine():
    studio = journey()
    r = studio.result
    logits = JOURNEY_X[1] @ JOURNEY_X.T  # unscaled, as in the preset
    for j in range(6):
        text = explain.weight_formula(studio.state, r, 0, 1, j)
        assert text.startswith(f"α = exp({fmt(logits[j])}) / Σ exp(row) = ")
        e, total, weight = numbers(text.split("Σ exp(row) = ")[1])
        assert e == pytest.approx(math.exp(logits[j]), abs=1e-4)
        assert total == pytest.approx(np.exp(logits).sum(), abs=1e-4)
        assert weight == pytest.approx(r.weights[0, 1, j], abs=5e-5)
        assert weight == pytest.approx(JOURNEY_WEIGHTS[j], abs=5e-5)


def test_weight_formula_shifted_says_the_max_is_subtracted():
    studio = journey()
    r = studio.result
    text = explain.weight_formula(studio.state, r, 0, 1, 0, shifted=True)
    logits = JOURNEY_X[1] @ JOURNEY_X.T
    assert "max" in text and "subtracted" in text
    assert f"exp({fmt(logits[0])} − {fmt(logits.max())})" in text
    assert f"= {fmt(r.weights[0, 1, 0])}" in text


def test_weight_formula_shifts_by_itself_when_logits_are_large():
    studio = journey(softmax="stable")
    studio.set_embedding("journey", 0, 40)
    text = explain.weight_formula(studio.state, studio.result, 0, 1, 0)
    assert "subtracted" in text
    assert text.split(" = ")[-1].split()[0] == fmt(studio.result.weights[0, 1, 0])


def test_weight_formula_plain_normalisation():
    studio = journey(softmax="sum")
    r = studio.result
    logits = JOURNEY_X[1] @ JOURNEY_X.T
    text = explain.weight_formula(studio.state, r, 0, 1, 2)
    assert text == (f"α = {fmt(logits[2])} / Σ row = {fmt(logits[2])} / {fmt(logits.sum())} = "
                    f"{fmt(logits[2] / logits.sum())}")
    assert numbers(text)[-1] == pytest.approx(r.weights[0, 1, 2], abs=5e-5)


def test_weight_formula_masked_and_overflow():
    studio = journey(causal=True)
    assert "masked: weight 0" in explain.weight_formula(studio.state, studio.result, 0, 1, 4)
    studio.update(causal=False, softmax="naive")
    studio.set_embedding("journey", 0, 300)
    r = studio.result
    # q2·k2 ≈ 90000: exp overflows.
    text = explain.weight_formula(studio.state, r, 0, 1, 1)
    assert "overflows to inf" in text and "undefined" in text and "stable softmax" in text
    # Another key's exp is finite, but the row's sum is not: still undefined, never "0".
    other = explain.weight_formula(studio.state, r, 0, 1, 0)
    assert "undefined" in other
    assert not other.rstrip().endswith("= 0")


# -- output formula ---------------------------------------------------------------------------
def test_output_formula_is_the_weighted_sum():
    studio = journey()
    r = studio.result
    weights = r.weights[0, 1]
    for c in range(3):
        text = explain.output_formula(studio.state, r, 0, 1, c)
        assert text.startswith(f"z2[{c + 1}] = Σ_j α_j·v_j[{c + 1}] = ")
        assert f"{fmt(weights[0])}×{fmt(JOURNEY_X[0, c])} + " in text
        assert numbers(text)[-1] == pytest.approx(JOURNEY_OUTPUT[c], abs=5e-5)


def test_output_formula_leaves_masked_keys_out():
    studio = journey(causal=True)
    text = explain.output_formula(studio.state, studio.result, 0, 1, 0)
    assert "4 masked keys add 0" in text
    assert text.count("×") == 2


# -- cell tooltips ------------------------------------------------------------------------------
def test_cell_tooltip_per_stage():
    studio = journey(scale=True)
    s, r = studio.state, studio.result
    scores = explain.cell_tooltip(s, r, "scores", 0, 1, 2)
    assert "“journey”" in scores and "“starts”" in scores
    assert "0.5500×0.5700 + 0.8700×0.8500 + 0.6600×0.6400 = 1.4754" in scores
    assert "÷√3" in explain.cell_tooltip(s, r, "logits", 0, 1, 2)
    weights = explain.cell_tooltip(s, r, "weights", 0, 1, 2)
    assert "α = exp(" in weights and fmt(r.weights[0, 1, 2]) in weights
    with pytest.raises(ValueError):
        explain.cell_tooltip(s, r, "values", 0, 1, 2)


def test_cell_tooltip_masked_and_heads():
    studio = journey(causal=True, projections=True, heads=2)
    s, r = studio.state, studio.result
    text = explain.cell_tooltip(s, r, "weights", 1, 0, 3)
    assert "head 2" in text
    assert "masked (causal: key after query)" in text and "weight 0" in text


# -- the step-by-step chain ----------------------------------------------------------------------
def test_pipeline_has_the_nine_steps_of_the_seeds():
    studio = journey()
    steps = explain.pipeline_steps(studio.state, studio.result, 0, 1)
    assert [s.key for s in steps] == list(STEP_KEYS)
    for step in steps:
        assert step.title and step.explanation
        assert len(step.values) == 6 and len(step.status) == 6


def test_pipeline_journey_reproduces_seed_000():
    studio = journey()
    steps = steps_of(studio, 0, 1)
    np.testing.assert_allclose(steps["query"].values[3], JOURNEY_X[1])
    np.testing.assert_allclose(np.array(steps["keys"].values), JOURNEY_X)
    np.testing.assert_allclose(steps["scores"].values, JOURNEY_X @ JOURNEY_X[1], atol=1e-12)
    np.testing.assert_allclose(steps["weights"].values, JOURNEY_WEIGHTS, atol=5e-5)
    assert steps["weights"].result == pytest.approx(1.0)
    np.testing.assert_allclose(steps["output"].result, JOURNEY_OUTPUT, atol=5e-5)
    # α_j·v_j add up to z.
    np.testing.assert_allclose(np.sum(steps["weighted"].values, axis=0), JOURNEY_OUTPUT, atol=5e-5)
    # The exps normalise to the weights.
    exps = np.array(steps["exp"].values)
    np.testing.assert_allclose(exps / steps["exp"].result, JOURNEY_WEIGHTS, atol=5e-5)
    assert steps["output"].result_text() == "z = (0.4419, 0.6515, 0.5683)"
    assert "0.4419" in steps["output"].explanation


def test_pipeline_bank_reproduces_seed_001():
    studio = Studio(load_preset("bank"))
    assert studio.state.query_tokens[7] == "bank"
    steps = steps_of(studio, 0, 7)
    np.testing.assert_allclose(steps["scores"].values, BANK_INNER, atol=1e-5)
    exps = np.array(steps["exp"].values)
    ratios = exps / np.array(BANK_EXPS)
    np.testing.assert_allclose(ratios, ratios[0], rtol=2e-4)  # the stable shift scales every exp alike
    assert max(exps) == pytest.approx(1.0)  # exp(max − max)
    assert "subtracts the row maximum" in steps["exp"].explanation
    np.testing.assert_allclose(steps["weights"].values, BANK_WEIGHTS, atol=5e-5)
    np.testing.assert_allclose(steps["output"].result, BANK_OUTPUT, atol=5e-5)
    # "bank" attends most to itself, then to "A".
    assert "“bank” attends most to “bank”" in steps["weights"].explanation


def test_pipeline_naive_exps_are_the_seed_exps():
    studio = Studio(load_preset("bank"))
    studio.update(softmax="naive")
    steps = steps_of(studio, 0, 7)
    np.testing.assert_allclose(steps["exp"].values, BANK_EXPS, atol=1e-4)
    assert steps["exp"].result == pytest.approx(sum(BANK_EXPS), abs=1e-3)


def test_pipeline_scaling_and_mask_steps_say_what_they_do():
    plain = steps_of(journey(), 0, 1)
    assert plain["scaled"].title == "no scaling"
    assert "Nothing is masked" in plain["masked"].explanation
    assert all(s == "" for s in plain["masked"].status)

    studio = journey(scale=True, causal=True, temperature=0.5)
    steps = steps_of(studio, 0, 1)
    raw = JOURNEY_X @ JOURNEY_X[1]
    np.testing.assert_allclose(steps["scaled"].values, raw / math.sqrt(3) / 0.5, atol=1e-12)
    assert "√3" in steps["scaled"].explanation and "T = 0.5" in steps["scaled"].explanation
    assert steps["masked"].status == ["", "", "masked", "masked", "masked", "masked"]
    assert steps["masked"].values[2] == -math.inf
    assert steps["masked"].cell_text(2) == f"{MINUS}inf (masked)"
    assert "Causal mask" in steps["masked"].explanation and "“starts”" in steps["masked"].explanation
    for key in ("exp", "weights", "weighted"):
        assert steps[key].cell_text(3) == "masked"
        assert steps[key].cell_text(0) not in ("masked", "")
    assert steps["weights"].values[2] == 0.0
    assert sum(steps["weights"].values) == pytest.approx(1.0)


def test_pipeline_naive_overflow_is_marked_never_zero():
    studio = journey(softmax="naive")
    studio.set_embedding("journey", 0, 300)
    steps = steps_of(studio, 0, 1)
    assert steps["exp"].cell_text(1) == "overflow"
    assert steps["exp"].result_text() == "Σ = overflow"
    assert all(steps["weights"].cell_text(j) == "overflow" for j in range(6))
    assert all(steps["weighted"].cell_text(j) == "overflow" for j in range(6))
    assert steps["output"].result_text() == "z = overflow"
    assert "stable softmax" in steps["weights"].explanation
    # Another query's row does not overflow: numbers as usual.
    fine = steps_of(studio, 0, 5)
    assert all(s == "" for s in fine["weights"].status)


def test_pipeline_plain_normalisation_skips_exp():
    steps = steps_of(journey(softmax="sum"), 0, 1)
    assert "skips exp" in steps["exp"].explanation
    logits = JOURNEY_X @ JOURNEY_X[1]
    np.testing.assert_allclose(steps["exp"].values, logits)
    np.testing.assert_allclose(steps["weights"].values, logits / logits.sum(), atol=1e-12)


def test_pipeline_reads_the_chosen_head():
    studio = journey(projections=True, heads=2)
    r = studio.result
    for head in (0, 1):
        steps = steps_of(studio, head, 2)
        np.testing.assert_allclose(steps["query"].values[0], r.q[head, 2])
        np.testing.assert_allclose(steps["scores"].values, r.q[head, 2] @ r.k[head].T)
        np.testing.assert_allclose(steps["weights"].values, r.weights[head, 2])
        np.testing.assert_allclose(steps["output"].result, r.head_outputs[head, 2])
    # Defaults follow the state's selection.
    studio.select(head=1, query=4)
    default = steps_of(studio)
    np.testing.assert_allclose(default["output"].result, r.head_outputs[1, 4])
    assert "x_j·W_K" in default["keys"].explanation


def test_pipeline_cross_attention_uses_key_tokens():
    studio = journey(target_sentence="Ihre Reise")
    assert studio.state.query_tokens == ["Ihre", "Reise"]
    steps = steps_of(studio, 0, 1)
    assert len(steps["scores"].values) == len(studio.state.key_tokens) == 6
    assert "“Reise”" in steps["query"].title


def test_pipeline_without_tokens_is_empty():
    studio = journey(sentence="")
    assert explain.pipeline_steps(studio.state, studio.result, 0, 0) == []
    studio.update(target_sentence="a b")  # queries but no keys
    steps = steps_of(studio, 0, 0)
    assert steps["output"].result_text() == "z = (0.0000, 0.0000, 0.0000)"
    assert "no keys" in steps["weights"].explanation


@pytest.mark.parametrize("changes", [
    {},
    {"causal": True, "scale": True, "temperature": 0.7},
    {"softmax": "naive", "embed": 300},
    {"softmax": "sum"},
    {"projections": True, "heads": 3, "d_model": 9, "d_head": 8, "head_index": 2},
    {"target_sentence": "Ihre Reise beginnt", "causal": True},
])
def test_step_tooltips_fill_in_every_cell(changes):
    changes = dict(changes)
    embed = changes.pop("embed", None)
    studio = journey(**changes)
    if embed is not None:
        studio.set_embedding("journey", 0, embed)
    s, r = studio.state, studio.result
    head = explain.selected_head(s, r)
    for query in range(len(s.query_tokens)):
        steps = explain.pipeline_steps(s, r, head, query)
        assert [step.key for step in steps] == list(STEP_KEYS)
        for step in steps:
            for j in [*range(len(s.key_tokens)), None]:
                text = explain.step_tooltip(s, r, head, query, step.key, j)
                assert "nan" not in text.lower()
                if j is None:
                    continue
                cell = step.cell_text(j)
                if step.key == "output":  # the output is one vector, in the result column
                    assert cell == "" and text == ""
                    continue
                assert cell and "nan" not in cell.lower(), (step.key, j)
                assert text, (step.key, j)  # every cell with a number explains it
                if step.key in ("scores", "weights") and not step.status[j]:
                    assert cell in text, (step.key, j, cell, text)  # the formula ends in the number shown
            if step.result is not None:
                assert step.result_text().startswith(f"{step.result_label} = "), step.key
            else:
                assert step.result_text() == ""
    scores_tip = explain.step_tooltip(s, r, head, 0, "scores", 0)
    assert scores_tip.startswith("q1·k1 = ")


def test_explain_imports_no_qt():
    probe = ("import attn_studio.explain, sys; "
             "print(any(m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6') for m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False", proc.stdout + proc.stderr


# -- what was computed, written with the precision setting ---------------------------------------
def test_formulas_follow_the_digits_setting():
    studio = journey()
    s, r = studio.state, studio.result
    assert explain.score_formula(s, r, 0, 1, 2, digits=2) == "q2·k3 = 0.55×0.57 + 0.87×0.85 + 0.66×0.64 = 1.48"
    assert explain.score_formula(s, r, 0, 1, 2) == "q2·k3 = 0.5500×0.5700 + 0.8700×0.8500 + 0.6600×0.6400 = 1.4754"
    logits = JOURNEY_X[1] @ JOURNEY_X.T  # unscaled, as in the preset
    exps = np.exp(logits)
    for digits in (2, 4):
        text = explain.weight_formula(s, r, 0, 1, 2, digits=digits)
        n = lambda x: format_number(x, digits)  # noqa: E731
        assert text == (f"α = exp({n(logits[2])}) / Σ exp(row) = {n(exps[2])} / {n(exps.sum())} = "
                        f"{n(exps[2] / exps.sum())}")
    assert explain.weight_formula(s, r, 0, 1, 2, digits=4).endswith(f"= {JOURNEY_WEIGHTS[2]:.4f}")


def test_step_texts_follow_the_digits_setting():
    studio = journey()
    steps = {st.key: st for st in explain.pipeline_steps(studio.state, studio.result, 0, 1, digits=2)}
    assert steps["weights"].cell_text(0) == format_number(JOURNEY_WEIGHTS[0], 2) == "0.14"
    assert steps["output"].result_text() == "z = (0.44, 0.65, 0.57)"
    steps4 = {st.key: st for st in explain.pipeline_steps(studio.state, studio.result, 0, 1)}
    assert steps4["output"].result_text() == f"z = ({', '.join(f'{v:.4f}' for v in JOURNEY_OUTPUT)})"
    logits = JOURNEY_X[1] @ JOURNEY_X.T
    exps = np.exp(logits - logits.max())
    tip = explain.step_tooltip(studio.state, studio.result, 0, 1, "exp", None, digits=2)
    assert tip == f"Σ = {' + '.join(format_number(e, 2) for e in exps)} = {format_number(exps.sum(), 2)}"


def test_negative_numbers_use_the_true_minus_sign():
    studio = Studio(load_preset("bank"))
    s, r = studio.state, studio.result
    text = explain.step_tooltip(s, r, 0, 7, "output", None)
    assert "-" not in text.replace("z8[", "") and MINUS in text
    assert f"= {MINUS}0.1061" in text  # the seed's first output component


@pytest.mark.parametrize("changes, title", [
    ({"scale": True}, "logits ÷ √3"),
    ({"scale": True, "temperature": 2.0}, "logits ÷ √3 ÷ T=2"),
    ({"scale": False}, "logits = scores"),
    ({"scale": False, "temperature": 0.5}, "logits ÷ T=0.5 (no √d_k)"),
    ({"scale": True, "score": "additive"}, "logits = scores (additive)"),
    ({"scale": True, "score": "additive", "temperature": 2.0}, "logits ÷ T=2 (additive: no √d_k)"),
])
def test_logits_title_says_what_was_computed(changes, title):
    studio = journey(**changes)
    assert explain.logits_title(studio.state, studio.result) == title


def test_additive_scores_are_explained_as_additive_and_unscaled():
    studio = journey(scale=True, score="additive")
    s, r = studio.state, studio.result
    assert r.scale_factor == 1.0
    score = explain.score_formula(s, r, 0, 1, 2)
    assert score == f"score(q2, k3) = {fmt(r.scores[0, 1, 2])} (not a dot product)"
    tip = explain.cell_tooltip(s, r, "logits", 0, 1, 2)
    assert "√" not in tip and tip.endswith("additive scores are not scaled: the logit is the score")
    steps = steps_of(studio, 0, 1)
    assert steps["scores"].title == "additive scores vᵀtanh(qW₁+kW₂)"
    assert steps["scaled"].title == "no scaling (additive)" and "√d_k" in steps["scaled"].explanation
    assert [steps["scaled"].cell_text(j) for j in range(6)] == [fmt(x) for x in r.scores[0, 1]]
