"""Property-based tests of softmax, attention and multi-head attention (hypothesis)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attn_studio.engine import attention, multi_head_attention, softmax

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

ELEMENTS = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)
T = st.integers(0, 8)
T_POS = st.integers(1, 8)
D = st.integers(1, 6)


def mat(rows, cols, elements=ELEMENTS):
    return arrays(np.float64, (rows, cols), elements=elements)


@st.composite
def qkv(draw, t_q=T, t_k=None):
    """q (Tq, d_k), k (Tk, d_k), v (Tk, d_v)."""
    tq = draw(t_q)
    tk = tq if t_k is None else draw(t_k)
    d_k, d_v = draw(D), draw(D)
    return draw(mat(tq, d_k)), draw(mat(tk, d_k)), draw(mat(tk, d_v))


@st.composite
def self_x(draw, t=T):
    return draw(mat(draw(t), draw(D)))


@st.composite
def mha_inputs(draw, cross=False, with_w_o=None):
    tq = draw(T)
    tk = draw(T.filter(lambda n: n != tq)) if cross else tq
    d_model, heads, d_k, d_v = draw(D), draw(st.integers(1, 4)), draw(D), draw(D)
    small = st.floats(-2, 2, allow_nan=False, allow_infinity=False, width=64)
    x = draw(mat(tq, d_model))
    x_kv = draw(mat(tk, d_model)) if cross else None
    w_q = draw(arrays(np.float64, (heads, d_model, d_k), elements=small))
    w_k = draw(arrays(np.float64, (heads, d_model, d_k), elements=small))
    w_v = draw(arrays(np.float64, (heads, d_model, d_v), elements=small))
    use_w_o = draw(st.booleans()) if with_w_o is None else with_w_o
    w_o = draw(arrays(np.float64, (heads * d_v, draw(D)), elements=small)) if use_w_o else None
    return x, x_kv, w_q, w_k, w_v, w_o


# --------------------------------------------------------------------------- attention


@SETTINGS
@given(qkv(t_q=T_POS, t_k=T_POS), st.booleans(), st.sampled_from([0.5, 1.0, 3.0]))
def test_weight_rows_sum_to_one(inputs, scale, temperature):
    q, k, v = inputs
    res = attention(q, k, v, scale=scale, temperature=temperature)
    assert res.weights.shape == (q.shape[0], k.shape[0])
    assert np.all(res.weights >= 0)
    np.testing.assert_allclose(res.weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # The output is the weighted sum of the values.
    np.testing.assert_allclose(res.output, res.weights @ v, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(st.data())
def test_fully_blocked_rows_give_zero_weights_and_output(data):
    q, k, v = data.draw(qkv(t_q=T_POS, t_k=T_POS))
    tq, tk = q.shape[0], k.shape[0]
    blocked = data.draw(arrays(bool, (tq, tk)))
    dead_rows = data.draw(st.lists(st.integers(0, tq - 1), min_size=1, max_size=tq))
    blocked[dead_rows] = True
    res = attention(q, k, v, blocked=blocked)
    assert not np.any(np.isnan(res.weights))
    assert not np.any(np.isnan(res.output))
    dead = blocked.all(axis=1)
    assert np.all(res.weights[dead] == 0.0)
    assert np.all(res.output[dead] == 0.0)
    # Blocked cells get weight exactly 0 and logit -inf; live rows still sum to 1.
    assert np.all(res.weights[blocked] == 0.0)
    assert np.all(np.isneginf(res.logits[blocked]))
    assert np.all(np.isfinite(res.logits[~blocked]))
    np.testing.assert_allclose(res.weights[~dead].sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(res.blocked, blocked)


@SETTINGS
@given(self_x(), st.booleans())
def test_causal_zeroes_strict_upper_triangle(x, scale):
    res = attention(x, x, x, causal=True, scale=scale)
    t = x.shape[0]
    upper = np.triu(np.ones((t, t), dtype=bool), k=1)
    assert np.all(res.weights[upper] == 0.0)
    assert np.all(np.isneginf(res.logits[upper]))
    if t:
        np.testing.assert_allclose(res.weights.sum(axis=1), 1.0, atol=1e-12)
        # The first token can only see itself: its output is its own value.
        np.testing.assert_allclose(res.output[0], x[0], atol=1e-12)


@SETTINGS
@given(st.data())
def test_causal_combines_with_blocked(data):
    x = data.draw(self_x(t=T_POS))
    t = x.shape[0]
    blocked = data.draw(arrays(bool, (t, t)))
    res = attention(x, x, x, causal=True, blocked=blocked)
    expected = blocked | np.triu(np.ones((t, t), dtype=bool), k=1)
    np.testing.assert_array_equal(res.blocked, expected)
    assert np.all(res.weights[expected] == 0.0)


@SETTINGS
@given(st.data())
def test_permuting_tokens_permutes_the_output(data):
    x = data.draw(self_x(t=T_POS))
    perm = np.array(data.draw(st.permutations(range(x.shape[0]))), dtype=int)
    base = attention(x, x, x)
    permuted = attention(x[perm], x[perm], x[perm])
    np.testing.assert_allclose(permuted.output, base.output[perm], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(permuted.weights, base.weights[perm][:, perm], rtol=1e-9, atol=1e-12)


@SETTINGS
@given(qkv(t_q=T_POS, t_k=T_POS))
def test_scale_equals_temperature_sqrt_dk(inputs):
    q, k, v = inputs
    d_k = q.shape[1]
    scaled = attention(q, k, v, scale=True)
    tempered = attention(q, k, v, scale=False, temperature=np.sqrt(d_k))
    assert scaled.scale_factor == pytest.approx(1 / np.sqrt(d_k))
    np.testing.assert_allclose(scaled.logits, q @ k.T / np.sqrt(d_k), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(scaled.logits, tempered.logits, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(scaled.weights, tempered.weights, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(scaled.output, tempered.output, rtol=1e-10, atol=1e-10)
    # Scores stay raw whatever the scaling.
    np.testing.assert_allclose(scaled.scores, q @ k.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(scaled.scores, tempered.scores)


@SETTINGS
@given(qkv(t_q=T_POS, t_k=T_POS), st.booleans(), st.floats(0.1, 10))
def test_logits_are_scores_times_scale_over_temperature(inputs, scale, temperature):
    q, k, v = inputs
    res = attention(q, k, v, scale=scale, temperature=temperature)
    factor = (1 / np.sqrt(q.shape[1]) if scale else 1.0) / temperature
    np.testing.assert_allclose(res.logits, (q @ k.T) * factor, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(qkv(t_q=T_POS, t_k=T_POS), st.booleans())
def test_huge_temperature_gives_uniform_rows(inputs, scale):
    q, k, v = inputs
    res = attention(q, k, v, scale=scale, temperature=1e6)
    tk = k.shape[0]
    np.testing.assert_allclose(res.weights, 1.0 / tk, rtol=0, atol=1e-3)
    np.testing.assert_allclose(res.output, np.broadcast_to(v.mean(axis=0), res.output.shape), atol=1e-2)


@SETTINGS
@given(st.data())
def test_cross_attention_shapes(data):
    tq = data.draw(T)
    tk = data.draw(T.filter(lambda n: n != tq))
    q, k, v = data.draw(qkv(t_q=st.just(tq), t_k=st.just(tk)))
    res = attention(q, k, v)
    assert res.scores.shape == (tq, tk)
    assert res.logits.shape == (tq, tk)
    assert res.weights.shape == (tq, tk)
    assert res.blocked.shape == (tq, tk)
    assert res.output.shape == (tq, v.shape[1])
    assert not np.any(np.isnan(res.output))


# --------------------------------------------------------------------------- softmax


@SETTINGS
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 8)),
              elements=st.floats(-50, 50, allow_nan=False, allow_infinity=False, width=64)))
def test_stable_equals_naive_without_overflow(x):
    stable = softmax(x, kind="stable")
    naive = softmax(x, kind="naive")
    np.testing.assert_allclose(stable, naive, rtol=1e-10, atol=1e-15)
    # And both equal the textbook formula, written out here.
    e = np.exp(x)
    np.testing.assert_allclose(stable, e / e.sum(axis=-1, keepdims=True), rtol=1e-10, atol=1e-15)


@SETTINGS
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 8)),
              elements=st.floats(-5, 5, allow_nan=False, allow_infinity=False, width=64)))
def test_stable_survives_scores_around_1e4_where_naive_overflows(offsets):
    x = 1e4 + offsets
    stable = softmax(x, kind="stable")
    assert np.all(np.isfinite(stable))
    np.testing.assert_allclose(stable.sum(axis=-1), 1.0, atol=1e-12)
    # Softmax is shift invariant: the stable result is the softmax of the offsets.
    e = np.exp(offsets)
    np.testing.assert_allclose(stable, e / e.sum(axis=-1, keepdims=True), rtol=1e-9, atol=1e-12)
    naive = softmax(x, kind="naive")
    assert np.all(np.isnan(naive))


def test_attention_naive_overflow_is_visible_stable_is_not():
    q = np.full((3, 4), 60.0)  # q.k = 14400 unscaled: exp overflows
    naive = attention(q, q, q, scale=False, kind="naive")
    stable = attention(q, q, q, scale=False, kind="stable")
    assert np.all(np.isnan(naive.weights))
    assert np.all(np.isfinite(stable.weights))
    np.testing.assert_allclose(stable.weights, 1 / 3, atol=1e-12)
    np.testing.assert_allclose(stable.output, q, atol=1e-9)


@SETTINGS
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 8)),
              elements=st.floats(0.01, 100, allow_nan=False, allow_infinity=False, width=64)))
def test_sum_kind_is_x_over_sum(x):
    out = softmax(x, kind="sum")
    np.testing.assert_allclose(out, x / x.sum(axis=-1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, atol=1e-12)


@pytest.mark.parametrize("kind", ["stable", "naive", "sum"])
def test_neg_inf_entries_get_zero_weight(kind):
    x = np.array([[1.0, -np.inf, 3.0, -np.inf], [-np.inf, 2.0, -np.inf, -np.inf]])
    out = softmax(x, kind=kind)
    assert np.all(out[np.isneginf(x)] == 0.0)
    assert not np.any(np.isnan(out))
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, atol=1e-12)
    if kind == "sum":
        np.testing.assert_allclose(out[0], [0.25, 0, 0.75, 0])
    else:
        e = np.exp([1.0, 3.0])
        np.testing.assert_allclose(out[0, [0, 2]], e / e.sum())
    np.testing.assert_allclose(out[1], [0, 1, 0, 0])


@pytest.mark.parametrize("kind", ["stable", "naive", "sum"])
def test_all_neg_inf_row_gives_zeros(kind):
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.5, 1.0, 2.0]])
    out = softmax(x, kind=kind)
    assert np.all(out[0] == 0.0)
    assert not np.any(np.isnan(out))
    np.testing.assert_allclose(out[1].sum(), 1.0)


@pytest.mark.parametrize("kind", ["stable", "naive", "sum"])
def test_softmax_axis_argument(kind):
    x = np.array([[1.0, 2.0], [3.0, 5.0], [0.5, 0.25]])
    np.testing.assert_allclose(softmax(x, axis=0, kind=kind), softmax(x.T, axis=-1, kind=kind).T)
    np.testing.assert_allclose(softmax(x, axis=0, kind=kind).sum(axis=0), 1.0)


# --------------------------------------------------------------------------- multi-head


@SETTINGS
@given(st.data())
def test_multi_head_cross_attention_shapes(data):
    x, x_kv, w_q, w_k, w_v, w_o = data.draw(mha_inputs(cross=True))
    heads, _, d_k = w_q.shape
    d_v = w_v.shape[2]
    tq, tk = x.shape[0], x_kv.shape[0]
    res = multi_head_attention(x, w_q, w_k, w_v, w_o, x_kv=x_kv)
    assert res.q.shape == (heads, tq, d_k)
    assert res.k.shape == (heads, tk, d_k)
    assert res.v.shape == (heads, tk, d_v)
    for field in ("scores", "logits", "weights"):
        assert getattr(res, field).shape == (heads, tq, tk), field
    assert res.blocked.shape[-2:] == (tq, tk)
    assert res.head_outputs.shape == (heads, tq, d_v)
    assert res.concat.shape == (tq, heads * d_v)
    d_out = heads * d_v if w_o is None else w_o.shape[1]
    assert res.output.shape == (tq, d_out)
    assert not np.any(np.isnan(res.output))


@SETTINGS
@given(st.data())
def test_each_head_is_single_head_attention(data):
    cross = data.draw(st.booleans())
    x, x_kv, w_q, w_k, w_v, w_o = data.draw(mha_inputs(cross=cross))
    src = x if x_kv is None else x_kv
    tq, tk = x.shape[0], src.shape[0]
    causal = data.draw(st.booleans())
    blocked = data.draw(st.none() | arrays(bool, (tq, tk)))
    opts = dict(
        scale=data.draw(st.booleans()),
        causal=causal,
        temperature=data.draw(st.sampled_from([0.5, 1.0, 2.0])),
        blocked=blocked,
        kind=data.draw(st.sampled_from(["stable", "naive"])),
    )
    res = multi_head_attention(x, w_q, w_k, w_v, w_o, x_kv=x_kv, **opts)
    tol = dict(rtol=1e-9, atol=1e-9)
    for i in range(w_q.shape[0]):
        q_i, k_i, v_i = x @ w_q[i], src @ w_k[i], src @ w_v[i]
        single = attention(q_i, k_i, v_i, **opts)
        np.testing.assert_allclose(res.q[i], q_i, **tol)
        np.testing.assert_allclose(res.k[i], k_i, **tol)
        np.testing.assert_allclose(res.v[i], v_i, **tol)
        np.testing.assert_allclose(res.scores[i], single.scores, **tol)
        np.testing.assert_allclose(res.logits[i], single.logits, **tol)
        np.testing.assert_allclose(res.weights[i], single.weights, **tol)
        np.testing.assert_allclose(res.head_outputs[i], single.output, **tol)
        np.testing.assert_array_equal(np.broadcast_to(res.blocked, (w_q.shape[0], tq, tk))[i], single.blocked)
        assert res.scale_factor == pytest.approx(single.scale_factor)


@SETTINGS
@given(st.data())
def test_output_is_concat_times_w_o(data):
    x, x_kv, w_q, w_k, w_v, w_o = data.draw(mha_inputs(cross=data.draw(st.booleans()), with_w_o=True))
    res = multi_head_attention(x, w_q, w_k, w_v, w_o, x_kv=x_kv)
    np.testing.assert_allclose(res.output, res.concat @ w_o, rtol=1e-10, atol=1e-10)
    without = multi_head_attention(x, w_q, w_k, w_v, x_kv=x_kv)
    np.testing.assert_array_equal(without.output, without.concat)
    np.testing.assert_array_equal(without.concat, res.concat)


@SETTINGS
@given(st.data())
def test_concat_puts_head_zero_columns_first(data):
    x, x_kv, w_q, w_k, w_v, w_o = data.draw(mha_inputs(cross=data.draw(st.booleans())))
    res = multi_head_attention(x, w_q, w_k, w_v, w_o, x_kv=x_kv)
    d_v = w_v.shape[2]
    for i in range(w_q.shape[0]):
        np.testing.assert_array_equal(res.concat[:, i * d_v:(i + 1) * d_v], res.head_outputs[i])
    # Same as an explicit concatenation along the columns.
    expected = np.concatenate(list(res.head_outputs), axis=1)
    np.testing.assert_array_equal(res.concat, expected)


def test_concat_layout_with_distinguishable_heads():
    # Head i's value projection picks column i of x, so head i's output is
    # recognisable; the concatenation must list head 0's columns first.
    x = np.array([[1.0, 10.0, 100.0], [1.0, 10.0, 100.0]])
    heads, d_model = 3, 3
    w_q = np.zeros((heads, d_model, 1))
    w_k = np.zeros((heads, d_model, 1))
    w_v = np.zeros((heads, d_model, 1))
    for i in range(heads):
        w_v[i, i, 0] = 1.0
    res = multi_head_attention(x, w_q, w_k, w_v)
    np.testing.assert_allclose(res.concat, [[1.0, 10.0, 100.0], [1.0, 10.0, 100.0]])
