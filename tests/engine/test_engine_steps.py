"""engine.query_steps, vector_pair and position_periods against computations written out here in plain NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attn_studio.engine import (
    POSITION_BASE,
    EngineError,
    multi_head_attention,
    position_periods,
    query_steps,
    sinusoidal_positions,
    vector_pair,
)

RNG = np.random.default_rng(7)
X = RNG.normal(size=(5, 6))
W_Q, W_K, W_V = (RNG.normal(size=(3, 6, 4)) for _ in range(3))


def reference_row(x, w_q, w_k, w_v, i, *, scale, temperature, causal):
    """Head by head, key by key, as a lecture writes it: the numbers of query ``i``."""
    heads, _, d_k = w_q.shape
    out = {k: [] for k in ("terms", "scaled", "logits", "shift", "exps", "total", "naive", "weights", "weighted")}
    for h in range(heads):
        q = x[i] @ w_q[h]
        ks, vs = x @ w_k[h], x @ w_v[h]
        terms = np.array([[q[c] * ks[j][c] for c in range(d_k)] for j in range(len(x))])
        factor = 1 / math.sqrt(d_k) if scale else 1.0
        scaled = np.array([sum(t) * factor / temperature for t in terms])
        logits = np.array([-math.inf if causal and j > i else scaled[j] for j in range(len(x))])
        shift = max(v for v in logits if v != -math.inf)
        exps = np.array([0.0 if v == -math.inf else math.exp(v - shift) for v in logits])
        naive = np.array([0.0 if v == -math.inf else math.exp(v) for v in logits])
        weights = exps / exps.sum()
        for key, value in zip(out, (terms, scaled, logits, shift, exps, exps.sum(), naive, weights,
                                    weights[:, None] * vs)):
            out[key].append(value)
    return {k: np.array(v) for k, v in out.items()}


@pytest.mark.parametrize("scale, temperature, causal, i", [
    (True, 1.0, False, 0), (True, 0.5, True, 2), (False, 3.0, True, 4), (False, 1.0, False, 3),
])
def test_query_steps_match_a_written_out_computation(scale, temperature, causal, i):
    result = multi_head_attention(X, W_Q, W_K, W_V, scale=scale, temperature=temperature, causal=causal)
    st = query_steps(result, i, temperature=temperature)
    ref = reference_row(X, W_Q, W_K, W_V, i, scale=scale, temperature=temperature, causal=causal)
    assert st.dot_product and st.query == i
    np.testing.assert_allclose(st.terms, ref["terms"], rtol=1e-12)
    np.testing.assert_allclose(st.scaled, ref["scaled"], rtol=1e-12)
    np.testing.assert_array_equal(np.isinf(st.logits), np.isinf(ref["logits"]))
    np.testing.assert_allclose(st.shift, ref["shift"], rtol=1e-12)
    np.testing.assert_allclose(st.exps, ref["exps"], rtol=1e-12)
    np.testing.assert_allclose(st.exp_total, ref["total"], rtol=1e-12)
    np.testing.assert_allclose(st.naive_exps, ref["naive"], rtol=1e-12)
    np.testing.assert_allclose(st.weights, ref["weights"], rtol=1e-12)
    np.testing.assert_allclose(st.weight_total, 1.0, rtol=1e-12)
    np.testing.assert_allclose(st.weighted, ref["weighted"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(st.output, ref["weighted"].sum(axis=1), rtol=1e-12, atol=1e-15)
    assert st.blocked.shape == (3, 5) and st.blocked.sum() == (3 * (4 - i) if causal else 0)


def test_query_steps_of_additive_scores_have_no_dot_product_terms():
    w_1, w_2 = RNG.normal(size=(2, 3, 4, 4))
    v_a = RNG.normal(size=(3, 4))
    result = multi_head_attention(X, W_Q, W_K, W_V, additive=(w_1, w_2, v_a))
    st = query_steps(result, 1, additive=True)
    assert st.terms is None and not st.dot_product
    np.testing.assert_allclose(st.scaled, result.scores[:, 1])  # additive scores are not scaled


def test_naive_exps_overflow_to_inf_where_the_stable_ones_do_not():
    x = np.array([[30.0, 0.0], [0.0, 1.0], [-30.0, 2.0]])
    eye = np.eye(2)[None]
    result = multi_head_attention(x, eye * 1.0, eye * 30.0, eye, scale=False, kind="naive")
    st = query_steps(result, 0)
    assert np.isinf(st.naive_total[0]) and np.isfinite(st.exp_total[0])
    assert st.exps[0].max() == 1.0  # the row maximum shifted to exp(0)


def test_a_query_with_every_key_blocked_gets_zero_exps_and_a_zero_shift():
    blocked = np.zeros((5, 5), dtype=bool)
    blocked[2] = True
    result = multi_head_attention(X, W_Q, W_K, W_V, blocked=blocked)
    st = query_steps(result, 2)
    assert st.blocked.all() and (st.shift == 0).all() and (st.exps == 0).all() and (st.exp_total == 0).all()
    assert np.isneginf(st.shifted).all()


@pytest.mark.parametrize("query", [-1, 5, 1.5, True])
def test_query_steps_refuse_a_query_outside_the_sentence(query):
    result = multi_head_attention(X, W_Q, W_K, W_V)
    with pytest.raises(EngineError, match="query must be a token index"):
        query_steps(result, query)


def test_vector_pair_matches_its_definitions():
    a, b = np.array([3.0, 4.0, 0.0]), np.array([4.0, -3.0, 5.0])
    pair = vector_pair(a, b)
    assert pair.dot == 0.0 and pair.norm_a == 5.0 and pair.norm_b == pytest.approx(math.sqrt(50))
    assert pair.cosine == pytest.approx(0.0, abs=1e-15) and pair.angle == pytest.approx(90.0)
    pair = vector_pair([1.0, 1.0], [2.0, 0.0])
    assert pair.dot == 2.0 and pair.cosine == pytest.approx(1 / math.sqrt(2)) and pair.angle == pytest.approx(45.0)
    zero = vector_pair([0.0, 0.0], [1.0, 2.0])
    assert zero.dot == 0.0 and zero.cosine is None and zero.angle is None
    with pytest.raises(EngineError):
        vector_pair([1.0], [1.0, 2.0])


def test_position_periods_are_the_periods_of_the_encoding_columns():
    dim = 7
    periods = position_periods(dim)
    assert periods.shape == (4,)
    expected = [2 * math.pi * 10000.0 ** (2 * i / dim) for i in range(4)]
    np.testing.assert_allclose(periods, expected)
    assert POSITION_BASE == 10000.0
    # The same base as the encoding itself: column 2 is the sine of frequency 1.
    pe = sinusoidal_positions(8, dim)
    np.testing.assert_allclose(np.sin(np.arange(8) / 10000.0 ** (2 * 1 / dim)), pe[:, 2])
