"""The variance and saturation curves the window shows are shipped precomputed; they must equal the engine's."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from attn_studio import studio as studio_module
from attn_studio.resources import resources_dir
from attn_studio.studio import CURVES_FILE, Studio, default_curves


def test_the_shipped_curves_are_what_the_engine_computes_now():
    fresh = default_curves()
    with np.load(resources_dir() / CURVES_FILE, allow_pickle=False) as shipped:
        assert set(shipped.files) == set(fresh)
        for name, array in fresh.items():
            # Made on another machine: float64 sums of up to 1024 products and exp/log,
            # whose last bits differ between BLAS builds and SIMD paths (tests/conftest.py).
            # The softmax-Jacobian norms come from s2 - 2*s3 + s2**2, which cancels to
            # ~1e-6 of its terms where the softmax saturates, so one ulp of exp moves
            # them by ~1e-10 absolute (2.4e-9 relative measured on another CPU). Any real
            # change of the curves (code, sizes, seed) moves them by 1e-3 or more.
            np.testing.assert_allclose(shipped[name], array, rtol=1e-7, atol=1e-9, err_msg=name)


def test_a_studio_reads_the_shipped_curves_and_computes_others():
    s = Studio()
    curve = s.variance_curve()
    with np.load(resources_dir() / CURVES_FILE, allow_pickle=False) as shipped:
        for f in fields(curve):
            np.testing.assert_array_equal(getattr(curve, f.name), shipped[f"variance_{f.name}"])
    assert not curve.raw.flags.writeable  # shared by every Studio
    # Other sizes than the shipped ones are computed by the engine (and are not the shipped arrays).
    other = studio_module.cached_variance_curve((1, 2, 4), 100, 3)
    assert other.dims.tolist() == [1, 2, 4] and np.isfinite(other.raw).all()
    assert studio_module._shipped_curve("variance", (1, 2, 4), (100, 3)) is None
