"""The one number formatter: the seeds' style, a true minus sign, a precision setting."""

import math

import numpy as np
import pytest

from attn_studio.formatting import MINUS, format_fixed, format_number, format_vector


@pytest.mark.parametrize("x, digits, fixed, text", [
    (0.1385, 4, False, "0.1385"),
    (-0.1061, 4, False, f"{MINUS}0.1061"),
    (0.5, 4, False, "0.5"),
    (0.5, 2, True, "0.50"),
    (-0.001, 2, True, "0.00"),          # never "−0.00"
    (0.00356, 4, False, "0.00356"),
    (1.254e-56, 4, False, f"1.254e{MINUS}56"),
    (-math.inf, 2, True, f"{MINUS}inf"),
    (math.nan, 4, False, "overflow"),
])
def test_format_number(x, digits, fixed, text):
    assert format_number(x, digits, fixed=fixed) == text


def test_precision_changes_decimals():
    assert format_number(1.23456, 2) == "1.23"
    assert format_number(1.23456, 4) == "1.2346"


def test_short_overflow_fits_a_cell():
    assert format_number(math.inf, 2, fixed=True, short=True) == "+inf"
    assert format_number(math.nan, 2, fixed=True, short=True) == "NaN"


def test_no_ascii_hyphen_as_minus():
    for x in (-1.5, -2e-9, -3e9):
        assert "-" not in format_number(x) and format_number(x).startswith(MINUS)


def test_vector():
    assert format_vector([0.55, -0.87]) == f"(0.55, {MINUS}0.87)"
    assert format_vector(range(64)).endswith("…) d=64")


def test_format_fixed_writes_every_value_as_format_number_does():
    # Numbers of every kind a heatmap cell shows: negative zeros and numbers rounding to zero
    # (written without a minus), the rounding edges, huge, tiny and non-finite ones.
    rng = np.random.default_rng(3)
    values = rng.normal(size=4000) * 10.0 ** rng.integers(-7, 9, size=4000)
    values[:16] = [-0.0, 0.0, np.nan, np.inf, -np.inf, -0.004999, -0.005, 0.005, -1e-300, 1e300, -1e300,
                   -0.995, 0.999999, -0.00004999, -0.00005, -0.5]
    grid = values.reshape(80, 50)
    for digits in (0, 2, 4):
        for short in (True, False):
            expected = [format_number(x, digits, fixed=True, short=short) for x in grid.ravel()]
            assert format_fixed(grid, digits, short=short) == expected
    assert format_fixed(np.array([[-0.001, -1.25]]), 2) == ["0.00", f"{MINUS}1.25"]
