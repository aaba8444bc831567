"""The engine reproduces the numbers printed in the seeds (lecture notes and spreadsheet).

Every expected value here comes from the seed material, never from the engine.
"""

import numpy as np
import pytest

from attn_studio.engine import attention, softmax

# "Your journey starts with one step": 3-d embeddings, one row per token.
JOURNEY_X = np.array(
    [
        [0.43, 0.15, 0.89],  # Your
        [0.55, 0.87, 0.66],  # journey
        [0.57, 0.85, 0.64],  # starts
        [0.22, 0.58, 0.33],  # with
        [0.77, 0.25, 0.10],  # one
        [0.05, 0.80, 0.55],  # step
    ]
)

# The seed's 6x6 weight figure. Its values are the weights *truncated* (not
# rounded) to two decimals: e.g. "Your"->"Your" is 0.2098 in the seed's own
# full-precision print-out but 0.20 in the figure, "one"->"one" 0.1879 vs 0.18.
JOURNEY_TABLE = np.array(
    [
        [0.20, 0.20, 0.19, 0.12, 0.12, 0.14],  # Your
        [0.13, 0.23, 0.23, 0.12, 0.10, 0.15],  # journey
        [0.13, 0.23, 0.23, 0.12, 0.11, 0.15],  # starts
        [0.14, 0.20, 0.20, 0.14, 0.12, 0.17],  # with
        [0.15, 0.19, 0.19, 0.13, 0.18, 0.12],  # one
        [0.13, 0.21, 0.21, 0.14, 0.09, 0.18],  # step
    ]
)

# "A man has kept money in the bank": the spreadsheet seed, rows = words.
BANK_E = np.array(
    [
        [-0.03, -0.78, 0.006],  # A
        [-0.024, -0.259, -0.002],  # man
        [-0.148, -0.049, -0.242],  # has
        [-0.447, -0.265, -0.469],  # kept
        [-0.207, -0.336, -0.411],  # money
        [-0.133, 0.546, 0.076],  # in
        [-0.013, 0.833, -0.044],  # the
        [0.02, -0.286, 0.524],  # bank
    ]
)
BANK = 7


@pytest.fixture(scope="module")
def journey():
    return attention(JOURNEY_X, JOURNEY_X, JOURNEY_X, scale=False)


@pytest.fixture(scope="module")
def bank():
    return attention(BANK_E, BANK_E, BANK_E, scale=False)


def test_journey_scores_are_plain_dot_products(journey):
    # The seed's omega_2 = x_2 . x_i for every i, written out by hand.
    q = JOURNEY_X[1]
    expected = [sum(q[c] * JOURNEY_X[i][c] for c in range(3)) for i in range(6)]
    np.testing.assert_allclose(journey.scores[1], expected, rtol=0, atol=1e-12)
    assert journey.scale_factor == 1.0


def test_journey_weights_row(journey):
    np.testing.assert_allclose(
        journey.weights[1], [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581], rtol=0, atol=5e-5
    )


def test_journey_sum_normalisation(journey):
    np.testing.assert_allclose(
        softmax(journey.scores[1], kind="sum"),
        [0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656],
        rtol=0,
        atol=5e-5,
    )


def test_journey_context_vector(journey):
    np.testing.assert_allclose(journey.output[1], [0.4419, 0.6515, 0.5683], rtol=0, atol=5e-5)


def test_journey_full_weight_table(journey):
    # The figure truncates to two decimals, so each true weight lies in
    # [table, table + 0.01). (A rounding tolerance of 0.006 cannot hold: 20 of
    # the 36 figure cells differ from the rounded weights by 0.01.)
    w = journey.weights
    assert np.all(w >= JOURNEY_TABLE - 1e-12), w - JOURNEY_TABLE
    assert np.all(w < JOURNEY_TABLE + 0.01), w - JOURNEY_TABLE
    # And to the brief's looser reading: every cell within 0.01 of the figure.
    np.testing.assert_allclose(w, JOURNEY_TABLE, rtol=0, atol=0.01)


def test_spreadsheet_bank_scores(bank):
    np.testing.assert_allclose(
        bank.scores[BANK],
        [0.22562, 0.07255, -0.11575, -0.17891, -0.12341, -0.11899, -0.26155, 0.35677],
        rtol=0,
        atol=5e-5,
    )


def test_spreadsheet_bank_exps(bank):
    np.testing.assert_allclose(
        np.exp(bank.logits[BANK]),
        [1.2531, 1.07524, 0.89069, 0.83618, 0.8839, 0.88781, 0.76985, 1.42871],
        rtol=0,
        atol=1e-4,
    )


def test_spreadsheet_bank_weights(bank):
    np.testing.assert_allclose(
        bank.weights[BANK],
        [0.15614, 0.13398, 0.11098, 0.10419, 0.11014, 0.11062, 0.09593, 0.17802],
        rtol=0,
        atol=5e-5,
    )


def test_spreadsheet_modified_bank_vector(bank):
    # The scanned spreadsheet lost the minus signs; the weighted sum of the
    # (mostly negative) value rows confirms they are all negative.
    np.testing.assert_allclose(bank.output[BANK], [-0.1061, -0.13715, -0.02285], rtol=0, atol=5e-5)


@pytest.mark.parametrize("kind", ["stable", "naive"])
def test_spreadsheet_bank_same_for_naive_and_stable(kind):
    # The seed's scores are small, so the naive exp/sum gives the same table.
    res = attention(BANK_E, BANK_E, BANK_E, scale=False, kind=kind)
    np.testing.assert_allclose(
        res.weights[BANK],
        [0.15614, 0.13398, 0.11098, 0.10419, 0.11014, 0.11062, 0.09593, 0.17802],
        rtol=0,
        atol=5e-5,
    )
