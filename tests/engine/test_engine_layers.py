"""Layer norm, GELU, the feed-forward network, attention rollout and the layer
measures; biases and head scales in multi-head attention."""

import math

import numpy as np
import pytest

from attn_studio.engine import (
    EngineError,
    attention_rollout,
    feed_forward,
    gelu,
    gelu_new,
    layer_drift,
    layer_norm,
    layerwise_cosine,
    multi_head_attention,
    relu,
)

rng = np.random.default_rng(7)


def test_layer_norm_by_hand():
    x = np.array([[1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 0.0, 4.0]])
    gamma = np.array([1.0, 2.0, 0.5, 1.0])
    beta = np.array([0.0, 1.0, 0.0, -1.0])
    out = layer_norm(x, gamma, beta, eps=1e-5)
    for row, got in zip(x, out):
        mean = sum(row) / 4
        var = sum((v - mean) ** 2 for v in row) / 4   # biased, as BERT and GPT-2
        want = [(v - mean) / math.sqrt(var + 1e-5) * g + b for v, g, b in zip(row, gamma, beta)]
        np.testing.assert_allclose(got, want, atol=1e-14)
    with pytest.raises(EngineError, match="gamma"):
        layer_norm(x, gamma[:3], beta)


def test_gelu_is_the_exact_erf_form():
    xs = np.linspace(-6, 6, 49)
    want = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in xs]
    np.testing.assert_allclose(gelu(xs), want, rtol=1e-15, atol=1e-16)


def test_gelu_new_is_the_tanh_approximation():
    xs = np.linspace(-6, 6, 49)
    want = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))) for v in xs]
    # 1 + tanh(...) cancels for large negative x: compare absolutely there.
    np.testing.assert_allclose(gelu_new(xs), want, rtol=1e-13, atol=1e-15)
    # The approximation is close to, but not, the exact GELU.
    assert 0 < np.abs(gelu_new(xs) - gelu(xs)).max() < 1e-3


def test_feed_forward_by_hand():
    x = rng.standard_normal((3, 4))
    w_1, b_1 = rng.standard_normal((4, 6)), rng.standard_normal(6)
    w_2, b_2 = rng.standard_normal((6, 5)), rng.standard_normal(5)
    for act, f in (("gelu", gelu), ("gelu_new", gelu_new), ("relu", relu)):
        np.testing.assert_allclose(feed_forward(x, w_1, b_1, w_2, b_2, act), f(x @ w_1 + b_1) @ w_2 + b_2, atol=1e-13)
    with pytest.raises(EngineError, match="activation"):
        feed_forward(x, w_1, b_1, w_2, b_2, "swish")
    with pytest.raises(EngineError, match="shapes"):
        feed_forward(x, w_1, b_1, w_2[:5], b_2)


def test_attention_rollout_by_hand():
    # Two layers, one head, three tokens.
    a1 = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    a2 = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1 / 3, 1 / 3, 1 / 3]])
    att = np.stack([a1, a2])[:, None]
    r1 = 0.5 * a1 + 0.5 * np.eye(3)
    r2 = (0.5 * a2 + 0.5 * np.eye(3)) @ r1
    out = attention_rollout(att)
    np.testing.assert_allclose(out[0], r1, atol=1e-15)
    np.testing.assert_allclose(out[1], r2, atol=1e-15)


def test_attention_rollout_renormalises_rows_not_columns():
    # Rows that do not sum to 1 (a head mask can do that): each row is divided by its own sum.
    att = np.array([[[[3.0, 1.0], [0.0, 1.0]]]])
    mixed = 0.5 * att[0, 0] + 0.5 * np.eye(2)           # row sums 2.5 and 1.0, column sums 1.5 and 2.0
    want = mixed / mixed.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(attention_rollout(att)[0], want, atol=1e-15)
    np.testing.assert_allclose(attention_rollout(att)[0].sum(-1), 1.0)


def test_attention_rollout_averages_heads():
    att = rng.random((3, 4, 5, 5))
    att /= att.sum(-1, keepdims=True)
    mean_only = attention_rollout(att.mean(axis=1, keepdims=True))
    np.testing.assert_allclose(attention_rollout(att), mean_only, atol=1e-14)
    with pytest.raises(EngineError):
        attention_rollout(att[..., :4])


def test_layerwise_cosine_and_drift():
    a = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    b = np.array([[2.0, 0.0], [-1.0, -1.0], [1.0, 0.0]])
    np.testing.assert_allclose(layerwise_cosine(a, b), [1.0, -1.0, 0.0], atol=1e-15)
    h = rng.standard_normal((3, 4, 5))
    moved = h.copy()
    moved[2, 1] = -moved[2, 1]     # one of four tokens turned around in the last layer
    np.testing.assert_allclose(layer_drift(moved, h), [0.0, 0.0, 2.0 / 4], atol=1e-15)
    with pytest.raises(EngineError):
        layer_drift(h, h[:, :2])


def _mha_inputs(heads=3, t=4, d_model=6, d_head=2):
    x = rng.standard_normal((t, d_model))
    w = [rng.standard_normal((heads, d_model, d_head)) for _ in range(3)]
    w_o = rng.standard_normal((heads * d_head, d_model))
    return x, w, w_o


def test_biases_equal_an_extra_constant_input():
    # A bias is a weight row on a constant-1 input column.
    x, (w_q, w_k, w_v), w_o = _mha_inputs()
    b_q, b_k, b_v = (rng.standard_normal((3, 2)) for _ in range(3))
    b_o = rng.standard_normal(6)
    got = multi_head_attention(x, w_q, w_k, w_v, w_o, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o)
    x1 = np.hstack([x, np.ones((4, 1))])
    aug = [np.concatenate([w, b[:, None, :]], axis=1) for w, b in ((w_q, b_q), (w_k, b_k), (w_v, b_v))]
    want = multi_head_attention(x1, *aug, w_o)
    np.testing.assert_allclose(got.weights, want.weights, atol=1e-13)
    np.testing.assert_allclose(got.output, want.output + b_o, atol=1e-13)


def test_head_mask_equals_scaling_that_heads_rows_of_w_o():
    x, (w_q, w_k, w_v), w_o = _mha_inputs()
    mask = np.array([1.0, 0.0, 1.75])
    got = multi_head_attention(x, w_q, w_k, w_v, w_o, head_mask=mask)
    scaled = w_o * np.repeat(mask, 2)[:, None]
    want = multi_head_attention(x, w_q, w_k, w_v, scaled)
    np.testing.assert_allclose(got.output, want.output, atol=1e-13)
    np.testing.assert_array_equal(got.weights, want.weights)   # the pattern itself is the head's own
    np.testing.assert_array_equal(got.head_outputs[1], 0.0)


def test_new_arguments_are_checked():
    x, (w_q, w_k, w_v), w_o = _mha_inputs()
    with pytest.raises(EngineError, match="b_q"):
        multi_head_attention(x, w_q, w_k, w_v, b_q=np.zeros((2, 2)))
    with pytest.raises(EngineError, match="needs w_o"):
        multi_head_attention(x, w_q, w_k, w_v, b_o=np.zeros(6))
    with pytest.raises(EngineError, match="head_mask"):
        multi_head_attention(x, w_q, w_k, w_v, head_mask=np.ones(2))
    with pytest.raises(EngineError, match="head_mask"):
        multi_head_attention(x, w_q, w_k, w_v, head_mask=np.array([1.0, np.nan, 1.0]))


def test_gelu_without_scipy_gives_the_same_numbers(monkeypatch):
    import builtins

    xs = np.linspace(-5, 5, 41).reshape(1, 41)
    with_scipy = gelu(xs)
    real_import = builtins.__import__

    def no_scipy(name, *args, **kwargs):
        if name.startswith("scipy"):
            raise ImportError("scipy hidden for this test")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_scipy)
    without = gelu(xs)
    assert without.dtype == np.float64 and without.shape == xs.shape
    np.testing.assert_allclose(without, with_scipy, rtol=1e-15, atol=1e-17)
