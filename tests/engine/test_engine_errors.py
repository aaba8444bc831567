"""Bad input raises EngineError (a ValueError) with a message that names the problem.

Empty sequences are not errors: they give empty arrays of the right shapes.
"""

import re

import numpy as np
import pytest

from attn_studio.engine import (
    EngineError,
    attention,
    dot_product_variance,
    multi_head_attention,
    softmax,
    softmax_saturation,
)


def ones(*shape):
    return np.ones(shape)


def test_engine_error_is_a_value_error():
    assert issubclass(EngineError, ValueError)
    with pytest.raises(ValueError):
        attention(ones(2, 3), ones(2, 4), ones(2, 1))


# --------------------------------------------------------------------------- attention


def test_q_k_column_mismatch_names_the_shapes():
    with pytest.raises(EngineError) as info:
        attention(ones(3, 4), ones(5, 2), ones(5, 1))
    msg = str(info.value)
    assert "(3, 4)" in msg and "(5, 2)" in msg
    assert "d_k" in msg


def test_k_v_row_mismatch():
    with pytest.raises(EngineError, match=r"3 keys and 4 values") as info:
        attention(ones(2, 2), ones(3, 2), ones(4, 2))
    assert "(3, 2)" in str(info.value) and "(4, 2)" in str(info.value)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("which", ["q", "k", "v"])
def test_non_finite_attention_input(bad, which):
    args = {"q": ones(2, 3), "k": ones(2, 3), "v": ones(2, 3)}
    args[which] = args[which].copy()
    args[which][1, 2] = bad
    with pytest.raises(EngineError, match=rf"^{which} contains a non-finite value .* at index \(1, 2\)"):
        attention(args["q"], args["k"], args["v"])


@pytest.mark.parametrize("which", ["q", "k", "v"])
def test_zero_width_vectors_refused(which):
    args = {"q": ones(2, 3), "k": ones(2, 3), "v": ones(2, 3)}
    args[which] = np.zeros((2, 0))
    with pytest.raises(EngineError, match=rf"{which} has a vector dimension of 0; it must be at least 1"):
        attention(args["q"], args["k"], args["v"])


@pytest.mark.parametrize("shape", [(3,), (2, 3, 1)])
def test_wrong_number_of_dimensions(shape):
    with pytest.raises(EngineError, match=re.escape(str(shape))):
        attention(np.ones(shape), ones(2, 3), ones(2, 3))


def test_non_numeric_input():
    with pytest.raises(EngineError, match="array of numbers"):
        attention([["a", "b"]], ones(2, 2), ones(2, 2))


@pytest.mark.parametrize("temperature", [0, 0.0, -1.0, np.nan, np.inf])
def test_temperature_must_be_positive(temperature):
    with pytest.raises(EngineError, match="temperature"):
        attention(ones(2, 2), ones(2, 2), ones(2, 2), temperature=temperature)
    with pytest.raises(EngineError, match="temperature"):
        multi_head_attention(ones(2, 2), ones(1, 2, 2), ones(1, 2, 2), ones(1, 2, 2), temperature=temperature)


def test_blocked_wrong_shape():
    with pytest.raises(EngineError, match=r"blocked has shape \(2, 2\).*\(2, 3\)"):
        attention(ones(2, 2), ones(3, 2), ones(3, 2), blocked=np.zeros((2, 2), dtype=bool))
    with pytest.raises(EngineError, match="blocked"):
        multi_head_attention(ones(3, 2), ones(1, 2, 2), ones(1, 2, 2), ones(1, 2, 2),
                             blocked=np.zeros((2, 3), dtype=bool))


@pytest.mark.parametrize("blocked", [np.zeros((2, 2), dtype=int), np.zeros((2, 2)), [[0, 1], [0, 0]]])
def test_blocked_must_be_bool(blocked):
    with pytest.raises(EngineError, match="boolean"):
        attention(ones(2, 2), ones(2, 2), ones(2, 2), blocked=blocked)


def test_unknown_softmax_kind():
    with pytest.raises(EngineError, match=r"stable, naive, sum.*'softer'"):
        softmax(ones(2, 2), kind="softer")
    with pytest.raises(EngineError, match="softmax kind"):
        attention(ones(2, 2), ones(2, 2), ones(2, 2), kind="softer")
    with pytest.raises(EngineError, match="softmax kind"):
        multi_head_attention(ones(2, 2), ones(1, 2, 2), ones(1, 2, 2), ones(1, 2, 2), kind="softer")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_softmax_refuses_nan_and_plus_inf(bad):
    with pytest.raises(EngineError, match="NaN or \\+inf"):
        softmax(np.array([0.0, bad]))


# --------------------------------------------------------------------------- multi-head


def test_heads_must_agree():
    with pytest.raises(EngineError, match=r"same number of heads; got 2, 3 and 2"):
        multi_head_attention(ones(4, 3), ones(2, 3, 2), ones(3, 3, 2), ones(2, 3, 2))
    with pytest.raises(EngineError, match=r"same number of heads; got 2, 2 and 1"):
        multi_head_attention(ones(4, 3), ones(2, 3, 2), ones(2, 3, 2), ones(1, 3, 2))


def test_w_o_rows_must_match_concat():
    with pytest.raises(EngineError, match=r"w_o has shape \(5, 3\).*2 x 2 = 4.*\(4, d_out\)"):
        multi_head_attention(ones(4, 3), ones(2, 3, 2), ones(2, 3, 2), ones(2, 3, 2), ones(5, 3))


def test_weights_d_model_mismatch():
    with pytest.raises(EngineError, match=r"w_k has shape \(1, 4, 2\).*d_model = 3"):
        multi_head_attention(ones(4, 3), ones(1, 3, 2), ones(1, 4, 2), ones(1, 3, 2))


def test_query_key_projection_width_mismatch():
    with pytest.raises(EngineError, match="same d_k, got 2 and 3"):
        multi_head_attention(ones(4, 3), ones(1, 3, 2), ones(1, 3, 3), ones(1, 3, 2))


def test_zero_heads_refused():
    with pytest.raises(EngineError, match="at least one head"):
        multi_head_attention(ones(4, 3), np.zeros((0, 3, 2)), np.zeros((0, 3, 2)), np.zeros((0, 3, 2)))


def test_x_kv_d_model_mismatch():
    with pytest.raises(EngineError, match="x_kv has d_model = 4"):
        multi_head_attention(ones(2, 3), ones(1, 3, 2), ones(1, 3, 2), ones(1, 3, 2), x_kv=ones(5, 4))


@pytest.mark.parametrize("which", ["x", "x_kv", "w_q", "w_k", "w_v", "w_o"])
def test_non_finite_multi_head_input(which):
    args = {"x": ones(2, 3), "x_kv": ones(4, 3), "w_q": ones(2, 3, 2), "w_k": ones(2, 3, 2),
            "w_v": ones(2, 3, 2), "w_o": ones(4, 3)}
    args[which] = args[which].copy()
    args[which].flat[-1] = np.nan
    with pytest.raises(EngineError, match=rf"^{which} contains a non-finite value"):
        multi_head_attention(args["x"], args["w_q"], args["w_k"], args["w_v"], args["w_o"], x_kv=args["x_kv"])


def test_multi_head_zero_width_refused():
    with pytest.raises(EngineError, match="x has a vector dimension of 0"):
        multi_head_attention(np.zeros((2, 0)), np.zeros((1, 0, 2)), np.zeros((1, 0, 2)), np.zeros((1, 0, 2)))
    with pytest.raises(EngineError, match="w_q has a vector dimension of 0"):
        multi_head_attention(ones(2, 3), np.zeros((1, 3, 0)), np.zeros((1, 3, 0)), ones(1, 3, 2))


# --------------------------------------------------------------------------- statistics


@pytest.mark.parametrize("func", [dot_product_variance, softmax_saturation])
@pytest.mark.parametrize("dims", [[0], [1, 0, 4], [-3]])
def test_dims_below_one_refused(func, dims):
    with pytest.raises(EngineError, match="at least 1"):
        func(dims, n_samples=10, seed=0)


@pytest.mark.parametrize("func", [dot_product_variance, softmax_saturation])
def test_bad_dims_and_samples(func):
    with pytest.raises(EngineError, match="whole numbers"):
        func([1.5, 2], n_samples=10, seed=0)
    with pytest.raises(EngineError, match="non-empty"):
        func([], n_samples=10, seed=0)
    with pytest.raises(EngineError, match="n_samples"):
        func([2], n_samples=0, seed=0)


def test_too_many_samples_refused_before_allocating():
    with pytest.raises(EngineError, match="too large"):
        dot_product_variance([100_000], n_samples=10_000_000, seed=0)


# --------------------------------------------------------------------------- empty sequences


@pytest.mark.parametrize("tq, tk", [(0, 0), (0, 3), (3, 0)])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_empty_sequences(tq, tk, causal):
    res = attention(np.zeros((tq, 4)), np.zeros((tk, 4)), np.zeros((tk, 5)), causal=causal)
    assert res.scores.shape == (tq, tk)
    assert res.logits.shape == (tq, tk)
    assert res.weights.shape == (tq, tk)
    assert res.output.shape == (tq, 5)
    # Queries with no keys at all attend to nothing: output 0, not NaN.
    assert np.all(res.output == 0.0)


@pytest.mark.parametrize("with_w_o", [False, True])
def test_multi_head_empty_sequence(with_w_o):
    heads, d_model, d_k, d_v, d_out = 2, 3, 4, 5, 6
    w_o = ones(heads * d_v, d_out) if with_w_o else None
    res = multi_head_attention(np.zeros((0, d_model)), ones(heads, d_model, d_k), ones(heads, d_model, d_k),
                               ones(heads, d_model, d_v), w_o, causal=True)
    assert res.q.shape == (heads, 0, d_k)
    assert res.k.shape == (heads, 0, d_k)
    assert res.v.shape == (heads, 0, d_v)
    assert res.scores.shape == res.logits.shape == res.weights.shape == (heads, 0, 0)
    assert res.head_outputs.shape == (heads, 0, d_v)
    assert res.concat.shape == (0, heads * d_v)
    assert res.output.shape == (0, d_out if with_w_o else heads * d_v)


def test_multi_head_empty_cross_sequence():
    res = multi_head_attention(ones(3, 2), ones(2, 2, 2), ones(2, 2, 2), ones(2, 2, 1), x_kv=np.zeros((0, 2)))
    assert res.weights.shape == (2, 3, 0)
    assert res.output.shape == (3, 2)
    assert np.all(res.output == 0.0)


def test_softmax_of_empty_array():
    assert softmax(np.zeros((3, 0))).shape == (3, 0)
