"""The one number formatter: exactly the setting's decimals, a true minus sign, and two stated other forms."""

import math

import numpy as np
import pytest

from attn_studio.formatting import (MINUS, format_exact, format_fixed, format_number, format_setting, format_size,
                                   format_vector)


@pytest.mark.parametrize("x, digits, text", [
    (0.1385, 4, "0.1385"),
    (-0.1061, 4, f"{MINUS}0.1061"),
    (0.5, 4, "0.5000"),
    (0.5, 2, "0.50"),
    (1.0, 2, "1.00"),                   # never "1" beside "0.18"
    (-0.001, 2, "0.00"),                # never "−0.00"
    (0.006161, 2, "0.01"),
    (0.00356, 4, "0.0036"),
    (1.254e-56, 4, "0.0000"),
    (5.54e34, 2, "5.54e34"),            # from a million on: the decimals of the mantissa
    (-math.inf, 2, f"{MINUS}inf"),
    (math.nan, 4, "overflow"),
])
def test_format_number(x, digits, text):
    assert format_number(x, digits) == text


def test_precision_changes_decimals():
    assert format_number(1.23456, 2) == "1.23"
    assert format_number(1.23456, 4) == "1.2346"


def test_size_and_exact_forms():
    assert format_size(1.8193e-5, 2) == f"1.82e{MINUS}5"
    assert format_size(0.0046021, 4) == f"4.6021e{MINUS}3"
    assert format_size(0.03, 2) == f"3.00e{MINUS}2"  # one form down a column
    assert format_exact(-0.578989070668883) == f"{MINUS}0.578989070668883"


def test_a_setting_reads_as_typed():
    # A temperature the person chose is not a measurement: T = 2, T = 0.5, never T = 2.0000.
    assert format_setting(2.0) == "2"
    assert format_setting(0.5) == "0.5"
    assert format_setting(-0.25) == f"{MINUS}0.25"


def test_short_overflow_fits_a_cell():
    assert format_number(math.inf, 2, short=True) == "+inf"
    assert format_number(math.nan, 2, short=True) == "NaN"


def test_no_ascii_hyphen_as_minus():
    for x in (-1.5, -0.2, -3e9):
        assert "-" not in format_number(x) and format_number(x).startswith(MINUS)


def test_vector():
    assert format_vector([0.55, -0.87], 2) == f"(0.55, {MINUS}0.87)"
    assert format_vector([0.05, 0.8, 0.55], 2) == "(0.05, 0.80, 0.55)"
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
            expected = [format_number(x, digits, short=short) for x in grid.ravel()]
            assert format_fixed(grid, digits, short=short) == expected
    assert format_fixed(np.array([[-0.001, -1.25]]), 2) == ["0.00", f"{MINUS}1.25"]
