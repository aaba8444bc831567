"""The one number formatter: the seeds' style, a true minus sign, a precision setting."""

import math

import pytest

from attn_studio.formatting import MINUS, format_number, format_vector


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
