"""Bahdanau (additive) scores: v_a^T tanh(q_i W_1 + k_j W_2) with row vectors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attn_studio.engine import EngineError, additive_scores, attend_scores, softmax

ELEMENTS = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=64)


def loop_additive(q, k, w_1, w_2, v_a):
    """The textbook formula, one (i, j) pair and one component at a time."""
    t_q, d_q = q.shape
    t_k, d_k = k.shape
    d_a = v_a.shape[0]
    out = np.zeros((t_q, t_k))
    for i in range(t_q):
        for j in range(t_k):
            total = 0.0
            for a in range(d_a):
                pre = sum(q[i, c] * w_1[c, a] for c in range(d_q)) + sum(k[j, c] * w_2[c, a] for c in range(d_k))
                total += v_a[a] * math.tanh(pre)
            out[i, j] = total
    return out


@st.composite
def additive_inputs(draw, min_t=0):
    tq, tk = draw(st.integers(min_t, 6)), draw(st.integers(min_t, 6))
    d_q, d_k, d_a = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 5))
    arr = lambda shape: draw(arrays(np.float64, shape, elements=ELEMENTS))  # noqa: E731
    return arr((tq, d_q)), arr((tk, d_k)), arr((d_q, d_a)), arr((d_k, d_a)), arr((d_a,))


@settings(max_examples=40, deadline=None)
@given(additive_inputs())
def test_additive_matches_explicit_loop(inputs):
    q, k, w_1, w_2, v_a = inputs
    scores = additive_scores(q, k, w_1, w_2, v_a)
    assert scores.shape == (q.shape[0], k.shape[0])
    np.testing.assert_allclose(scores, loop_additive(q, k, w_1, w_2, v_a), rtol=1e-10, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(additive_inputs(min_t=1))
def test_additive_weights_sum_to_one(inputs):
    q, k, w_1, w_2, v_a = inputs
    scores = additive_scores(q, k, w_1, w_2, v_a)
    weights = softmax(scores)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    # Through the shared attention back half, with no scaling, the same.
    v = np.arange(k.shape[0] * 2, dtype=float).reshape(k.shape[0], 2)
    logits, w2, output, factor, _ = attend_scores(scores, v, d_k=k.shape[1], scale=False)
    assert factor == 1.0
    np.testing.assert_allclose(w2, weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(output, weights @ v, rtol=1e-12, atol=1e-12)


def test_additive_scores_are_bounded_by_norm_of_v_a():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(4, 3)) * 100, rng.normal(size=(5, 2)) * 100
    w_1, w_2, v_a = rng.normal(size=(3, 6)), rng.normal(size=(2, 6)), rng.normal(size=6)
    scores = additive_scores(q, k, w_1, w_2, v_a)
    # tanh saturates, so |score| <= sum |v_a| however large the inputs.
    assert np.all(np.abs(scores) <= np.abs(v_a).sum() + 1e-12)


@pytest.mark.parametrize(
    "shapes, needle",
    [
        (((2, 3), (4, 2), (2, 5), (2, 5), (5,)), "w_1"),  # w_1 rows != q cols
        (((2, 3), (4, 2), (3, 5), (3, 5), (5,)), "w_2"),  # w_2 rows != k cols
        (((2, 3), (4, 2), (3, 5), (2, 4), (5,)), "d_a"),  # hidden sizes differ
        (((2, 3), (4, 2), (3, 5), (2, 5), (4,)), "d_a"),  # v_a length differs
    ],
)
def test_additive_shape_errors(shapes, needle):
    arrays_ = [np.ones(s) for s in shapes]
    with pytest.raises(EngineError, match=needle):
        additive_scores(*arrays_)
