"""The shared layers: every backward against central differences, the optimiser against its formula."""

import numpy as np
import pytest

from attn_studio.training import layers as L
from attn_studio.training.gradcheck import gradient_errors, numerical_gradient, relative_error

TOL = 1e-6


def _check(loss, params, grads):
    errors = gradient_errors(loss, params, grads)
    assert max(errors.values()) <= TOL, errors


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_softmax_rows_sum_to_one_and_masked_entries_are_zero(rng):
    x = rng.normal(size=(4, 6)) * 30
    mask = rng.random((4, 6)) > 0.4
    mask[:, 0] = True
    w = L.softmax(x, mask=mask)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-15)
    assert np.all(w[~mask] == 0.0)
    assert np.all(L.softmax(x, mask=np.zeros_like(mask)) == 0.0)  # fully masked: zeros, not NaN
    np.testing.assert_allclose(L.softmax(x, axis=0).sum(axis=0), 1.0, atol=1e-15)


def test_softmax_backward_matches_central_differences(rng):
    x = rng.normal(size=(3, 5))
    probe = rng.normal(size=(3, 5))
    mask = np.array([True, True, False, True, True])
    for axis in (-1, 0):
        params = {"x": x.copy()}
        loss = lambda: float(np.sum(probe * L.softmax(params["x"], axis=axis, mask=mask if axis == -1 else None)))
        w = L.softmax(params["x"], axis=axis, mask=mask if axis == -1 else None)
        _check(loss, params, {"x": L.softmax_backward(probe, w, axis=axis)})


def test_cross_entropy_value_and_gradient(rng):
    logits = rng.normal(size=(5, 4))
    targets = np.array([0, 3, 1, 1, 2])
    loss, probs = L.cross_entropy(logits, targets)
    expected = np.mean([-np.log(np.exp(r[t]) / np.exp(r).sum()) for r, t in zip(logits, targets)])
    assert loss == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(L.token_losses(logits, targets).mean(), loss, rtol=1e-12)
    params = {"logits": logits}
    _check(lambda: L.cross_entropy(params["logits"], targets)[0], params,
           {"logits": L.cross_entropy_backward(probs, targets)})


@pytest.mark.parametrize("targets, message", [
    (np.array([0, 1]), "targets must be"),
    (np.array([0, 1, 9]), "0..3"),
    (np.array([0.0, 1.0, 2.0]), "integer"),
])
def test_cross_entropy_refuses_bad_targets(targets, message):
    with pytest.raises(ValueError, match=message):
        L.cross_entropy(np.zeros((3, 4)), targets)


def test_linear_and_rnn_step_backward(rng):
    params = {"x": rng.normal(size=(2, 3, 4)), "W": rng.normal(size=(4, 5)), "b": rng.normal(size=5)}
    probe = rng.normal(size=(2, 3, 5))
    loss = lambda: float(np.sum(probe * L.linear(params["x"], params["W"], params["b"])))
    dx, dW, db = L.linear_backward(probe, params["x"], params["W"])
    _check(loss, params, {"x": dx, "W": dW, "b": db})

    params = {"x": rng.normal(size=(3, 4)), "h": rng.normal(size=(3, 5)), "Wx": rng.normal(size=(4, 5)) * 0.5,
              "Wh": rng.normal(size=(5, 5)) * 0.5, "b": rng.normal(size=5)}
    probe = rng.normal(size=(3, 5))
    step = lambda: L.rnn_step(params["x"], params["h"], params["Wx"], params["Wh"], params["b"])
    h = step()
    dx, dh, dWx, dWh, db = L.rnn_step_backward(probe, params["x"], params["h"], h, params["Wx"], params["Wh"])
    _check(lambda: float(np.sum(probe * step())), params, {"x": dx, "h": dh, "Wx": dWx, "Wh": dWh, "b": db})


def test_additive_attention_backward(rng):
    B, Lq, D, A = 2, 4, 3, 5
    params = {"query": rng.normal(size=(B, D)), "values": rng.normal(size=(B, Lq, D)),
              "Uh": rng.normal(size=(D, A)), "Ws": rng.normal(size=(D, A)), "b": rng.normal(size=A),
              "v": rng.normal(size=A)}
    probe_c, probe_w = rng.normal(size=(B, D)), rng.normal(size=(B, Lq))

    def forward():
        p = params
        return L.additive_attention(p["query"], p["values"], p["values"] @ p["Uh"], p["Ws"], p["b"], p["v"])

    def loss():
        context, weights, _ = forward()
        return float(np.sum(probe_c * context) + np.sum(probe_w * weights))

    context, weights, cache = forward()
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-15)
    dq, dvalues, dkeys, dWs, db, dv = L.additive_attention_backward(probe_c, cache, params["Ws"], params["v"],
                                                                    d_weights=probe_w)
    grads = {"query": dq, "values": dvalues + dkeys @ params["Uh"].T,
             "Uh": np.einsum("bld,bla->da", params["values"], dkeys), "Ws": dWs, "b": db, "v": dv}
    _check(loss, params, grads)


def test_gradient_check_rejects_a_wrong_backward(rng):
    # The check must be able to fail: a backward that forgets the softmax's "- sum" term is rejected.
    x = rng.normal(size=(3, 5))
    probe = rng.normal(size=(3, 5))
    params = {"x": x}
    loss = lambda: float(np.sum(probe * L.softmax(params["x"])))
    w = L.softmax(x)
    wrong = w * probe
    assert gradient_errors(loss, params, {"x": wrong})["x"] > 1e-2
    right = L.softmax_backward(probe, w)
    bumped = right.copy()
    bumped[1, 2] += 1e-4  # one entry off by a little
    assert relative_error(bumped, numerical_gradient(loss, x)) > TOL


def test_adam_follows_its_formula(rng):
    p0 = rng.normal(size=(3, 2))
    params = {"w": p0.copy()}
    opt = L.Adam(params, lr=0.1, betas=(0.8, 0.9), eps=1e-6)
    g1, g2 = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    opt.step({"w": g1})
    opt.step({"w": g2})
    m = 0.8 * (0.2 * g1) + 0.2 * g2
    v = 0.9 * (0.1 * g1 ** 2) + 0.1 * g2 ** 2
    step1 = 0.1 * g1 / (np.abs(g1) + 1e-6)  # the first step: m_hat = g, v_hat = g²
    expected = p0 - step1 - 0.1 * (m / (1 - 0.8 ** 2)) / (np.sqrt(v / (1 - 0.9 ** 2)) + 1e-6)
    np.testing.assert_allclose(params["w"], expected, rtol=1e-12)
    with pytest.raises(ValueError, match="no gradient"):
        opt.step({})
    with pytest.raises(ValueError, match="shape"):
        opt.step({"w": np.zeros(3)})


def test_clip_by_global_norm(rng):
    grads = {"a": np.full((2, 2), 3.0), "b": np.array([4.0])}  # global norm sqrt(36 + 16)
    clipped, norm = L.clip_by_global_norm(grads, 1.0)
    assert norm == pytest.approx(np.sqrt(52.0))
    assert L.global_norm(clipped) == pytest.approx(1.0)
    assert grads["a"][0, 0] == 3.0  # the input is untouched
    kept, _ = L.clip_by_global_norm(grads, 100.0)
    np.testing.assert_array_equal(kept["a"], grads["a"])
