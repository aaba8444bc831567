"""Attention flow (Abnar & Zuidema 2020): the maximum flow through the layered graph of
attention, checked against a plain augmenting-path max-flow written here, and against
the capacities that bound it."""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

import numpy as np
import pytest

from attn_studio.pretrained import attention_flow
from attn_studio.pretrained.heads import flow_capacities

# Capacities are rounded to 2**-30 before scipy's integer max-flow: a cut of c edges
# moves by at most c * 2**-31, a few 1e-9 here.
TOL = 1e-7


def pattern_run(attentions):
    return SimpleNamespace(attentions=np.asarray(attentions, dtype=np.float64), tokens=[],
                           model=SimpleNamespace(kind="bert"))


def random_attentions(rng, layers, heads, t, causal=False):
    logits = rng.normal(scale=2.0, size=(layers, heads, t, t))
    if causal:
        logits[..., np.triu(np.ones((t, t), dtype=bool), k=1)] = -np.inf
    w = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


def reference_flow(r: np.ndarray) -> np.ndarray:
    """Edmonds-Karp in floating point on the layered graph, one pair at a time."""
    layers, t, _ = r.shape
    n = (layers + 1) * t
    cap = np.zeros((n, n))
    for layer in range(layers):
        cap[layer * t:(layer + 1) * t, (layer + 1) * t:(layer + 2) * t] = r[layer].T  # j below -> i above
    out = np.zeros((t, t))
    for i in range(t):
        for j in range(t):
            residual = cap.copy()
            source, sink, total = j, layers * t + i, 0.0
            while True:
                parent = np.full(n, -1)
                parent[source] = source
                queue = deque([source])
                while queue and parent[sink] < 0:
                    u = queue.popleft()
                    for v in np.flatnonzero((residual[u] > 1e-15) & (parent < 0)):
                        parent[v] = u
                        queue.append(v)
                if parent[sink] < 0:
                    break
                path, v = [], sink
                while v != source:
                    path.append((parent[v], v))
                    v = parent[v]
                push = min(residual[u, v] for u, v in path)
                for u, v in path:
                    residual[u, v] -= push
                    residual[v, u] += push
                total += push
            out[i, j] = total
    return out


@pytest.mark.parametrize("layers, t, causal", [(4, 4, False), (3, 5, True), (2, 3, False)])
def test_flow_equals_an_augmenting_path_max_flow(layers, t, causal):
    rng = np.random.default_rng(layers * 10 + t)
    run = pattern_run(random_attentions(rng, layers, 3, t, causal))
    flow = attention_flow(run)
    np.testing.assert_allclose(flow, reference_flow(flow_capacities(run)), rtol=0, atol=TOL)


def test_flow_of_a_tiny_model_equals_the_reference(tiny_gpt2):
    run = tiny_gpt2.run("the animal was")
    flow = attention_flow(run)
    np.testing.assert_allclose(flow, reference_flow(flow_capacities(run)), rtol=0, atol=TOL)
    t = len(run.tokens)
    np.testing.assert_array_equal(flow[np.triu(np.ones((t, t), dtype=bool), k=1)], 0.0)  # no path to the past


def test_capacities_are_what_rollout_multiplies(tiny_bert):
    run = tiny_bert.run("the animal was tired")
    r = flow_capacities(run)
    current = np.eye(r.shape[-1])
    for layer in range(r.shape[0]):
        current = r[layer] @ current
    np.testing.assert_allclose(current, run.rollout()[-1], rtol=0, atol=1e-14)


def test_flow_stays_within_the_capacity_bounds(tiny_bert):
    run = tiny_bert.run("the animal didn't cross the street")
    r = flow_capacities(run)
    flow = attention_flow(run)
    out_of_input = r[0].sum(axis=0)         # all edges leaving input token j
    assert (flow >= 0).all()
    assert (flow <= 1 + TOL).all()          # all edges entering output token i carry 1
    assert (flow <= out_of_input[None, :] + TOL).all()
    # At least the widest single path gets through.
    widest = r[0].copy()
    for layer in range(1, r.shape[0]):
        widest = np.max(np.minimum(r[layer][:, :, None], widest[None, :, :]), axis=1)
    assert (flow >= widest - TOL).all()
    assert (flow > widest + 1e-3).any()     # and flow is more than one path


def test_one_layer_and_one_token():
    rng = np.random.default_rng(3)
    one_layer = pattern_run(random_attentions(rng, 1, 2, 4))
    np.testing.assert_array_equal(attention_flow(one_layer), flow_capacities(one_layer)[0])
    np.testing.assert_allclose(attention_flow(pattern_run(np.ones((3, 2, 1, 1)))), [[1.0]], atol=TOL)
