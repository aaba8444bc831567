"""Variance of q.k and softmax saturation: the seeds' argument for 1/sqrt(d_k)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attn_studio.engine import dot_product_variance, softmax, softmax_saturation
from attn_studio.engine.statistics import _row_stats

SAT_DIMS = [1, 4, 16, 64, 256, 1024]


@pytest.fixture(scope="module")
def variance_64():
    return dot_product_variance([64], n_samples=20000, seed=0)


@pytest.fixture(scope="module")
def saturation():
    return softmax_saturation(SAT_DIMS, seq_len=16, n_samples=500, seed=0)


def test_raw_variance_grows_like_d(variance_64):
    assert variance_64.raw.shape == (1,)
    assert abs(variance_64.raw[0] - 64) < 0.1 * 64


def test_scaled_variance_stays_near_one(variance_64):
    assert abs(variance_64.scaled[0] - 1) < 0.1


def test_scaled_is_raw_over_d(variance_64):
    np.testing.assert_allclose(variance_64.scaled, variance_64.raw / 64, rtol=1e-12)


@pytest.mark.parametrize("dims", [[64], [1, 2, 8, 32], [3, 17]])
def test_theory_lines(dims):
    curve = dot_product_variance(dims, n_samples=200, seed=1)
    np.testing.assert_array_equal(curve.dims, dims)
    np.testing.assert_array_equal(curve.theory_raw, np.asarray(dims, dtype=float))
    np.testing.assert_array_equal(curve.theory_scaled, np.ones(len(dims)))
    assert curve.raw.shape == curve.scaled.shape == (len(dims),)


def test_variance_curve_tracks_theory_across_dims():
    dims = np.array([1, 8, 32, 128])
    curve = dot_product_variance(dims, n_samples=20000, seed=3)
    np.testing.assert_allclose(curve.raw, dims, rtol=0.1)
    np.testing.assert_allclose(curve.scaled, 1.0, rtol=0.1)


def test_variance_is_reproducible_for_a_seed():
    a = dot_product_variance([2, 16], n_samples=500, seed=7)
    b = dot_product_variance([2, 16], n_samples=500, seed=7)
    c = dot_product_variance([2, 16], n_samples=500, seed=8)
    np.testing.assert_array_equal(a.raw, b.raw)
    assert not np.array_equal(a.raw, c.raw)


def test_unscaled_softmax_saturates_as_d_grows(saturation):
    raw = saturation.max_weight_raw
    assert np.all(np.diff(raw) > 0), raw
    assert raw[-1] > 0.9  # nearly one-hot at d = 1024
    assert np.all(np.diff(saturation.entropy_raw) < 0), saturation.entropy_raw


def test_scaled_softmax_does_not_saturate(saturation):
    scaled = saturation.max_weight_scaled
    assert scaled.max() - scaled.min() < 0.1, scaled
    assert scaled.max() < 0.4  # far from one-hot with 16 keys
    ent = saturation.entropy_scaled
    assert ent.max() - ent.min() < 0.3, ent
    assert ent.min() > 0.8 * np.log(16)


def test_unscaled_gradient_vanishes_scaled_does_not(saturation):
    raw, scaled = saturation.grad_norm_raw, saturation.grad_norm_scaled
    assert raw[-1] < raw[0] / 3, raw
    assert scaled[-1] > 0.8 * scaled[0], scaled
    assert scaled.min() > 0.8 * scaled.max(), scaled


def test_d1_scaled_equals_raw(saturation):
    # sqrt(1) = 1: the two curves start at the same point.
    assert saturation.dims[0] == 1
    assert saturation.max_weight_raw[0] == pytest.approx(saturation.max_weight_scaled[0])
    assert saturation.grad_norm_raw[0] == pytest.approx(saturation.grad_norm_scaled[0])


def test_saturation_fields_have_one_value_per_dim(saturation):
    for name in ("max_weight_raw", "max_weight_scaled", "entropy_raw", "entropy_scaled",
                 "grad_norm_raw", "grad_norm_scaled"):
        assert getattr(saturation, name).shape == (len(SAT_DIMS),), name
    np.testing.assert_array_equal(saturation.dims, SAT_DIMS)


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, st.integers(1, 12),
              elements=st.floats(-30, 30, allow_nan=False, allow_infinity=False, width=64)))
def test_closed_form_jacobian_norm_matches_explicit_matrix(row):
    max_weight, entropy, grad_norm = _row_stats(row[None, :])
    p = softmax(row)
    jac = np.diag(p) - np.outer(p, p)
    explicit = np.linalg.norm(jac, "fro")
    # The closed form sum(p^2) - 2 sum(p^3) + sum(p^2)^2 cancels when p is
    # nearly one-hot, so it is only good to ~sqrt(machine eps) in absolute
    # terms (about 1e-8; invisible on the curve, whose values are ~0.05-0.3).
    assert float(grad_norm) == pytest.approx(explicit, rel=1e-6, abs=5e-8)
    if p.max() < 0.99:
        assert float(grad_norm) == pytest.approx(explicit, rel=1e-9)
    assert float(max_weight) == pytest.approx(p.max())
    nz = p[p > 0]
    assert float(entropy) == pytest.approx(-np.sum(nz * np.log(nz)), rel=1e-9, abs=1e-12)
