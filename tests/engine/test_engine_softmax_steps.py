"""softmax_steps: the shift, exponentials and sums a lecture writes out, consistent with softmax."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attn_studio.engine import softmax, softmax_steps

rows = arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 7)),
              elements=st.floats(-30, 30, allow_nan=False))


@settings(max_examples=40, deadline=None)
@given(rows, st.data())
def test_exps_over_their_sum_are_the_softmax(x, data):
    blocked = data.draw(arrays(np.bool_, x.shape))
    blocked[:, 0] = False  # at least one key per row
    x = np.where(blocked, -np.inf, x)
    steps = softmax_steps(x)
    np.testing.assert_allclose(steps.exps / steps.total[:, None], softmax(x), rtol=1e-12, atol=1e-15)
    # the stable way subtracts each row's largest finite value, so its largest exp is exactly 1
    np.testing.assert_array_equal(steps.shift, np.max(np.where(blocked, -np.inf, x), axis=1))
    assert np.all(steps.exps.max(axis=1) == 1.0)
    assert np.all(steps.exps[blocked] == 0.0)


def test_bank_seed_exps_unshifted():
    scores = np.array([0.22562, 0.07255, -0.11575, -0.17891, -0.12341, -0.11899, -0.26155, 0.35677])
    steps = softmax_steps(scores, shifted=False)
    np.testing.assert_allclose(steps.exps, [1.2531, 1.07524, 0.89069, 0.83618, 0.8839, 0.88781, 0.76985, 1.42871],
                               atol=1e-4)
    assert steps.shift == 0.0


def test_naive_exps_overflow_to_inf_where_the_stable_ones_do_not():
    x = np.array([800.0, 1.0])
    assert np.isinf(softmax_steps(x, shifted=False).exps[0])
    assert np.all(np.isfinite(softmax_steps(x).exps))


@pytest.mark.parametrize("shape", [(0,), (3, 0)])
def test_no_keys_gives_empty_exps_and_zero_sums(shape):
    steps = softmax_steps(np.zeros(shape))
    assert steps.exps.shape == shape
    assert np.all(steps.total == 0) and steps.total.shape == shape[:-1]
