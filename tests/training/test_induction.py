"""InductionExperiment: exact gradients, the data, the two measures, the loop's bookkeeping."""

import copy

import numpy as np
import pytest

from attn_studio.training import TrainingError
from attn_studio.training import transformer as tr
from attn_studio.training.gradcheck import numerical_gradient, relative_error
from attn_studio.training.layers import softmax
from attn_studio.training.induction import (InductionExperiment, InductionModel, induction_score,
                                            make_induction_batch, previous_token_score)

TOL = 1e-6
ARMS = ("one layer", "two layers")


@pytest.fixture(scope="module")
def trained_a_little():
    """Seed 2 after 8 steps: the attention is no longer uniform, so every gradient matters."""
    exp = InductionExperiment(seed=2)
    exp.run(8)
    return exp


def _rows(batch, rows):
    return {name: value[:rows] for name, value in batch.items()}


def _probe(model):
    """A model on a deep copy of ``model``'s params, to perturb without touching the original."""
    return InductionModel(copy.deepcopy(model.params), layers=model.layers, heads=model.heads)


def _gradient_errors(model, batch, grads, rng, names=None, entries=24):
    """Relative error, per array, of ``grads`` against central differences of ``model.loss``:
    on ``entries`` entries of each array (its largest gradients and random ones), and along one
    random direction through every entry of every array at once."""
    loss = lambda: model.loss(batch)  # noqa: E731
    errors = {}
    for name in names or model.params:
        array = model.params[name]
        largest = np.argsort(np.abs(grads[name]).ravel())[-entries // 2:]
        chosen = np.unique(np.concatenate([largest, rng.choice(array.size, entries // 2)]))
        numeric = numerical_gradient(loss, array, index=chosen).ravel()[chosen]
        errors[name] = relative_error(np.ravel(grads[name])[chosen], numeric)
    h = 1e-5
    direction = {name: rng.standard_normal(a.shape) for name, a in model.params.items()}
    keep = copy.deepcopy(model.params)
    for sign in (1, -1):
        for name, a in model.params.items():
            a[...] = keep[name] + sign * h * direction[name]
        if sign == 1:
            up = loss()
    down = loss()
    for name, a in model.params.items():
        a[...] = keep[name]
    analytic = sum(float(np.sum(grads[n] * direction[n])) for n in grads)
    errors["all, along a random direction"] = relative_error(
        np.array(analytic), np.array((up - down) / (2 * h)))
    return errors


@pytest.mark.parametrize("arm", ARMS)
def test_every_gradient_matches_central_differences(trained_a_little, arm):
    probe = _probe(trained_a_little.models[arm])
    batch = _rows(trained_a_little.batch(1000), 4)
    loss, grads = probe.loss_and_grads(batch)
    assert loss == probe.loss(batch)
    assert set(grads) == set(probe.params)
    assert all(grads[n].shape == probe.params[n].shape for n in grads)
    assert all(np.abs(g).max() > 1e-4 for g in grads.values())
    errors = _gradient_errors(probe, batch, grads, np.random.default_rng(0))
    assert max(errors.values()) <= TOL, errors
    # The check has teeth on this model: one array off by 0.1 % is rejected.
    wrong = dict(grads, **{"layer0.W_K": grads["layer0.W_K"] * 1.001})
    assert _gradient_errors(probe, batch, wrong, np.random.default_rng(0),
                            names=["layer0.W_K"])["layer0.W_K"] > TOL


def test_the_check_rejects_a_wrong_backward_line(trained_a_little, monkeypatch):
    """Drop the softmax Jacobian's row-sum term (ds = w ⊙ dw): the q and k gradients go wrong."""
    probe = _probe(trained_a_little.models["two layers"])
    batch = _rows(trained_a_little.batch(1000), 4)
    monkeypatch.setattr(tr, "causal_softmax_backward",
                        lambda d_weights, weights, dz, z: d_weights * weights)
    _, grads = probe.loss_and_grads(batch)
    names = ["layer0.W_Q", "layer0.W_K", "layer1.W_Q", "layer1.W_K", "W_U"]
    errors = _gradient_errors(probe, batch, grads, np.random.default_rng(0), names=names)
    for name in names[:4]:
        assert errors[name] > 1e-3, errors
    assert errors["W_U"] <= TOL  # the unembedding's gradient does not go through it


def test_the_check_rejects_a_wrong_first_layer_projection(trained_a_little, monkeypatch):
    """The first layer's q, k, v are looked up from the embeddings; forget the positions'
    share of W_Q/W_K/W_V's gradient and the check sees it."""
    probe = _probe(trained_a_little.models["one layer"])
    batch = _rows(trained_a_little.batch(1000), 4)
    right = tr.embed_project_backward

    def wrong(d_qkv, W_QKV, cache):
        dW_E, dW_pos, dW_QKV = right(d_qkv, W_QKV, cache)
        t = cache["t"]
        per_position = d_qkv.reshape(-1, t, d_qkv.shape[1]).sum(axis=0)
        return dW_E, dW_pos, dW_QKV - cache["W_pos"][:t].T @ per_position

    monkeypatch.setattr(tr, "embed_project_backward", wrong)
    _, grads = probe.loss_and_grads(batch)
    errors = _gradient_errors(probe, batch, grads, np.random.default_rng(1),
                              names=["layer0.W_Q", "layer0.W_V"])
    assert errors["layer0.W_Q"] > 1e-3 and errors["layer0.W_V"] > 1e-3, errors


def test_one_attention_layer_backward_matches_central_differences_everywhere():
    """The layer on its own, small enough to check every entry of x and of every weight."""
    rng = np.random.default_rng(3)
    b, t, d, heads, d_head = 2, 5, 6, 2, 3
    arrays = {"x": rng.normal(size=(b, t, d)), "W_Q": rng.normal(size=(d, heads * d_head)),
              "W_K": rng.normal(size=(d, heads * d_head)), "W_V": rng.normal(size=(d, heads * d_head)),
              "W_O": rng.normal(size=(heads * d_head, d))}
    read_out = rng.normal(size=(b, t, d))

    def loss():
        out, _ = tr.attention_forward(arrays["x"], arrays["W_Q"], arrays["W_K"], arrays["W_V"],
                                      arrays["W_O"], heads)
        return float(np.sum(out * read_out))

    out, cache = tr.attention_forward(arrays["x"], arrays["W_Q"], arrays["W_K"], arrays["W_V"],
                                      arrays["W_O"], heads)
    dx, grads = tr.attention_backward(read_out, cache)
    grads["x"] = dx
    for name, array in arrays.items():
        assert relative_error(grads[name], numerical_gradient(loss, array)) <= TOL, name
    # The weights are causal softmax rows.
    w = cache["weights"]
    assert w.shape == (b, heads, t, t)
    assert np.all(w[..., np.triu(np.ones((t, t), bool), k=1)] == 0.0)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("spread", [3.0, 1e3])  # one shift for all scores; a shift per row
def test_causal_softmax_is_the_masked_softmax(spread):
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(3, 2, 7, 7)) * spread
    scores[0, 0, 6] += 2000.0   # a row far above the others
    visible = np.tril(np.ones((7, 7), bool))
    expected = softmax(scores, mask=visible)
    weights = tr.causal_softmax(scores.copy())
    assert np.all(np.isfinite(weights)) and np.all(weights[..., ~visible] == 0.0)
    assert not np.signbit(weights).any()  # +0.0 above the diagonal: no "-0" in a table of weights
    np.testing.assert_allclose(weights, expected, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_the_first_layer_looks_up_what_multiplying_out_gives(trained_a_little):
    p = trained_a_little.models["two layers"].params
    tokens = trained_a_little.batch(5)["tokens"]
    x, cache = tr.embed_forward(tokens, p["W_E"], p["W_pos"])
    W_QKV = tr.qkv_weights(p["layer0.W_Q"], p["layer0.W_K"], p["layer0.W_V"], heads=2)
    np.testing.assert_allclose(tr.embed_project(W_QKV, cache), x.reshape(-1, 32) @ W_QKV,
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(W_QKV[:, :32], p["layer0.W_Q"] / 4)  # 1 / sqrt(d_head = 16)


def test_arms_start_equal_and_train_on_the_same_batches():
    exp = InductionExperiment(seed=4)
    assert exp.arms == ARMS and exp.step_count == 0
    one, two = exp.models["one layer"], exp.models["two layers"]
    assert (one.layers, two.layers) == (1, 2) and one.heads == two.heads == 2
    assert set(two.params) - set(one.params) == {f"layer1.{n}" for n in ("W_Q", "W_K", "W_V", "W_O")}
    for name, array in one.params.items():
        assert array.dtype == np.float64 and array.shape == (32, 32)
        np.testing.assert_array_equal(array, two.params[name])
        assert not np.shares_memory(array, two.params[name])
    for name, array in two.params.items():  # N(0, 1/32) for every array
        assert np.std(array) == pytest.approx(1 / np.sqrt(32), rel=0.12), name
        assert abs(np.mean(array)) < 0.03, name
    # With the same first layer, the one-layer model's attention is the two-layer model's first.
    tokens = exp.batch(0)["tokens"]
    np.testing.assert_array_equal(one.attention(tokens)[0], two.attention(tokens)[0])

    seen = {arm: [] for arm in exp.arms}
    for arm, model in exp.models.items():
        original = model.measure
        model.measure = lambda batch, arm=arm, original=original: (
            seen[arm].append(batch) or original(batch))
    exp.run(2)
    for step in range(2):
        for arm in ARMS:
            for key in ("tokens", "n"):
                np.testing.assert_array_equal(seen[arm][step][key], exp.batch(step)[key])
    assert exp.step_count == 2
    # Both arms moved, and the first-layer arrays they share at the start now differ.
    assert not np.array_equal(one.params["layer0.W_Q"], two.params["layer0.W_Q"])


def test_batch_is_deterministic_and_the_same_after_training():
    exp = InductionExperiment(seed=7)
    before = exp.batch(3)
    exp.run(2)
    after = exp.batch(3)
    again = InductionExperiment(seed=7).batch(3)
    for key in ("tokens", "n"):
        np.testing.assert_array_equal(before[key], after[key])
        np.testing.assert_array_equal(before[key], again[key])
    assert not np.array_equal(exp.batch(4)["tokens"], before["tokens"])
    assert not np.array_equal(InductionExperiment(seed=8).batch(3)["tokens"], before["tokens"])
    with pytest.raises(TrainingError, match="step"):
        exp.batch(-1)
    with pytest.raises(TrainingError, match="step"):
        exp.batch(1.5)


def test_each_row_repeats_its_first_n_tokens():
    exp = InductionExperiment(seed=0)
    ns = []
    for step in range(20):
        b = exp.batch(step)
        tokens, n = b["tokens"], b["n"]
        assert tokens.shape == (32, 32) and n.shape == (32,)
        assert np.issubdtype(tokens.dtype, np.integer) and np.issubdtype(n.dtype, np.integer)
        assert tokens.min() >= 0 and tokens.max() < 32
        assert n.min() >= 6 and n.max() <= 16
        assert len(set(n.tolist())) > 1  # n varies from row to row within a batch
        for row in range(32):
            k = n[row]
            np.testing.assert_array_equal(tokens[row, k:2 * k], tokens[row, :k])
        ns.extend(n.tolist())
    assert set(ns) == set(range(6, 17))  # both ends of 6..16 are drawn
    # Tokens are uniform over the vocabulary: every token occurs in 20 batches.
    assert len(np.unique(exp.batch(0)["tokens"])) > 20


def _metrics_from_definitions(model, batch):
    """The five metrics from the API's definitions, with loops, from logits and attention."""
    tokens, n = batch["tokens"], batch["n"]
    logits = model.logits(tokens)
    log_probs = logits - logits.max(axis=-1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(axis=-1, keepdims=True))
    b_rows, t_len = tokens.shape
    nll = np.array([[-log_probs[b, t, tokens[b, t + 1]] for t in range(t_len - 1)]
                    for b in range(b_rows)])
    first = [nll[b, t] for b in range(b_rows) for t in range(0, n[b] - 1)]
    repeat = [nll[b, t] for b in range(b_rows) for t in range(n[b], 2 * n[b] - 1)]
    attention = model.attention(tokens)
    prev = max(np.mean([attention[0, b, h, i, i - 1] for b in range(b_rows)
                        for i in range(1, t_len)]) for h in range(model.heads))
    induction = []
    for h in range(model.heads):
        per_query = []
        for b in range(b_rows):
            for i in range(n[b], 2 * n[b]):
                per_query.append(sum(attention[-1, b, h, i, j] for j in range(1, i + 1)
                                     if tokens[b, j - 1] == tokens[b, i]))
        induction.append(np.mean(per_query))
    return {"loss": nll.mean(), "loss_first": np.mean(first), "loss_repeat": np.mean(repeat),
            "previous_token": prev, "induction": max(induction)}


def test_recorded_metrics_are_the_definitions_before_the_update():
    exp = InductionExperiment(seed=5)
    exp.run(1)
    before = {arm: copy.deepcopy(model.params) for arm, model in exp.models.items()}
    batch = exp.batch(1)
    exp.step()
    for arm, model in exp.models.items():
        at_start = InductionModel(before[arm], layers=model.layers, heads=model.heads)
        expected = _metrics_from_definitions(at_start, batch)
        for name in exp.metrics:
            assert len(exp.history[arm][name]) == 2
            # Another summation order than the model's: agreement to float64 rounding.
            assert exp.history[arm][name][-1] == pytest.approx(expected[name], rel=1e-10), name
        assert exp.history[arm]["loss"][-1] == at_start.loss(batch)
        assert not np.array_equal(model.params["W_E"], before[arm]["W_E"])
    # At the start nothing is learnt: losses near ln 32, the first copy no easier than the repeat.
    fresh = InductionExperiment(seed=5)
    first = fresh.step()
    for arm in ARMS:
        assert first[arm]["loss"] == pytest.approx(np.log(32), abs=0.15)
        assert first[arm]["loss_first"] == pytest.approx(np.log(32), abs=0.3)
        assert first[arm]["loss_repeat"] == pytest.approx(np.log(32), abs=0.3)


def _uniform_causal(b, heads, t):
    w = np.tril(np.ones((t, t)))
    return np.broadcast_to(w / w.sum(axis=1, keepdims=True), (b, heads, t, t)).copy()


def test_previous_token_measure_on_hand_built_patterns():
    b, heads, t = 3, 2, 10
    perfect = np.zeros((b, heads, t, t))
    perfect[:, :, 0, 0] = 1.0
    perfect[:, :, np.arange(1, t), np.arange(t - 1)] = 1.0
    assert previous_token_score(perfect) == 1.0
    uniform = _uniform_causal(b, heads, t)
    assert previous_token_score(uniform) == pytest.approx(np.mean(1 / np.arange(2, t + 1)))
    diagonal = np.broadcast_to(np.eye(t), (b, heads, t, t))
    assert previous_token_score(diagonal) == 0.0
    # The best head counts: one perfect head beside a uniform one scores 1.
    mixed = uniform.copy()
    mixed[:, 1] = perfect[:, 1]
    assert previous_token_score(mixed) == 1.0
    # Half the weight on the previous token in every row but the first: 0.5.
    half = 0.5 * perfect + 0.5 * diagonal
    assert previous_token_score(half) == pytest.approx(0.5)


def _distinct_repeat(n, t, vocab=32, offset=0):
    """A row with no token twice in the first copy nor in the filler: x_1..x_n, x_1..x_n, filler."""
    first = (np.arange(n) + offset) % vocab
    filler = (np.arange(t - 2 * n) + offset + n) % vocab
    return np.concatenate([first, first, filler])


def test_induction_measure_on_hand_built_patterns():
    t, heads = 32, 2
    n = np.array([6, 11, 16])
    tokens = np.stack([_distinct_repeat(k, t, offset=3 * r) for r, k in enumerate(n)])
    b = len(n)
    # A perfect induction head: query i of the repeat attends to i - n + 1, the position after
    # the earlier occurrence of its token; every other query to itself.
    perfect = np.broadcast_to(np.eye(t), (b, heads, t, t)).copy()
    for row, k in enumerate(n):
        for i in range(k, 2 * k):
            perfect[row, :, i] = 0.0
            perfect[row, :, i, i - k + 1] = 1.0
    assert induction_score(perfect, tokens, n) == 1.0
    # Attending to the earlier occurrence itself (a duplicate-token head), or to the previous
    # token, is not induction.
    duplicate = np.broadcast_to(np.eye(t), (b, heads, t, t)).copy()
    previous = np.zeros((b, heads, t, t))
    previous[:, :, 0, 0] = 1.0
    previous[:, :, np.arange(1, t), np.arange(t - 1)] = 1.0
    for row, k in enumerate(n):
        for i in range(k, 2 * k):
            duplicate[row, :, i] = 0.0
            duplicate[row, :, i, i - k] = 1.0
    assert induction_score(duplicate, tokens, n) == 0.0
    assert induction_score(previous, tokens, n) == 0.0
    # Only the repeat's queries count: a perfect pattern outside them changes nothing.
    mixed = perfect.copy()
    mixed[:, 1] = previous[:, 1]
    assert induction_score(mixed, tokens, n) == 1.0
    # Uniform causal attention: each repeat query i has exactly one matching key, weight 1/(i+1).
    expected = np.mean([1 / (i + 1) for k in n for i in range(k, 2 * k)])
    assert induction_score(_uniform_causal(b, heads, t), tokens, n) == pytest.approx(expected)
    # A token seen twice before: the positions after both occurrences count (repeats are
    # allowed). Row 0 becomes 0 1 0 3 4 5 | 0 1 0 3 4 5 | filler; query 6 (token 0) splits its
    # weight between positions 1 and 3, every other query attends to itself (no match there).
    tokens2 = tokens.copy()
    tokens2[0, [2, 8]] = tokens2[0, 0]
    split = np.broadcast_to(np.eye(t), (b, heads, t, t)).copy()
    split[0, :, 6] = 0.0
    split[0, :, 6, [1, 3]] = 0.5
    assert induction_score(split, tokens2, n) == pytest.approx(1 / n.sum())
    assert induction_score(split, tokens, n) == pytest.approx(0.5 / n.sum())


def test_logits_and_attention_shapes_are_causal():
    exp = InductionExperiment(seed=1)
    exp.run(1)
    tokens = exp.batch(9)["tokens"][:5]
    for arm, layers in zip(ARMS, (1, 2)):
        model = exp.models[arm]
        logits = model.logits(tokens)
        attention = model.attention(tokens)
        assert logits.shape == (5, 32, 32) and logits.dtype == np.float64
        assert attention.shape == (layers, 5, 2, 32, 32)
        upper = np.triu(np.ones((32, 32), bool), k=1)
        assert np.all(attention[..., upper] == 0.0)
        assert np.all(attention[..., ~upper] > 0.0)
        np.testing.assert_allclose(attention.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
        # Position t sees tokens 0..t only: changing the later tokens leaves it unchanged (to
        # rounding: the softmax's shift, which cancels out, is shared by the whole batch).
        later = tokens.copy()
        later[:, 20:] = (later[:, 20:] + 1) % 32
        np.testing.assert_allclose(model.logits(later)[:, :20], logits[:, :20], rtol=1e-12,
                                   atol=1e-14)
        assert not np.array_equal(model.logits(later)[:, 20:], logits[:, 20:])
        # Shorter sequences work (a notebook's own prompt), each position as in the longer one.
        np.testing.assert_allclose(model.logits(tokens[:, :7]), logits[:, :7], rtol=1e-12, atol=1e-12)


def test_training_is_deterministic():
    a, b = InductionExperiment(seed=3), InductionExperiment(seed=3)
    a.run(2)
    b.run(2)
    assert a.history == b.history
    for arm in ARMS:
        for name, array in a.models[arm].params.items():
            np.testing.assert_array_equal(array, b.models[arm].params[name])
    c = InductionExperiment(seed=4)
    c.run(1)
    assert c.history["two layers"]["loss"][0] != a.history["two layers"]["loss"][0]


@pytest.mark.parametrize("batch, message", [
    ({"tokens": np.zeros((2, 8), int)}, "n"),
    ({"tokens": np.zeros((2, 8)), "n": np.array([2, 2])}, "integer"),
    ({"tokens": np.zeros((2, 8), int), "n": np.array([2])}, "n"),
    ({"tokens": np.zeros((2, 8), int), "n": np.array([2, 5])}, "fit"),
    ({"tokens": np.zeros((2, 8), int), "n": np.array([2, 1])}, "2..4"),
    ({"tokens": np.full((2, 8), 32), "n": np.array([2, 2])}, "0..31"),
    ({"tokens": np.zeros((2, 33), int), "n": np.array([2, 2])}, "T=33"),
    ({"tokens": [[1, 2, 3, 4], [1, 2]], "n": np.array([2, 1])}, "one length"),
    ({"tokens": np.zeros((0, 8), int), "n": np.zeros(0, int)}, "B >= 1"),
    ("tokens", "dict"),
])
def test_bad_batches_are_refused_with_a_clear_message(batch, message):
    model = InductionExperiment(seed=0).models["two layers"]
    for call in (model.measure, model.loss, model.loss_and_grads):
        with pytest.raises(TrainingError, match=message):
            call(batch)


@pytest.mark.parametrize("tokens, message", [
    (np.zeros((2, 1), int), "at least 2 tokens"),
    (np.zeros(5, int), "integer array"),
    (np.zeros((2, 3), float), "integer array"),
    ([[1, 2], [3]], "one length"),
    (np.full((1, 4), -1), "0..31"),
])
def test_bad_tokens_are_refused_with_a_clear_message(tokens, message):
    model = InductionExperiment(seed=0).models["one layer"]
    with pytest.raises(TrainingError, match=message):
        model.losses(tokens)
    assert model.logits(np.zeros((2, 1), int)).shape == (2, 1, 32)  # one token: logits, no loss


def test_bad_repeat_lengths_are_refused():
    rng = np.random.default_rng(0)
    for n_range in [(1, 4), (6, 17), (9, 8)]:
        with pytest.raises(TrainingError, match="n_range"):
            make_induction_batch(rng, n_range=n_range)
    short = make_induction_batch(rng, batch_size=3, seq_len=8, n_range=(2, 4))
    assert short["tokens"].shape == (3, 8) and np.all(short["n"] <= 4)


def test_bad_models_are_refused():
    params = InductionExperiment(seed=0).models["two layers"].params
    with pytest.raises(TrainingError, match="layer1"):
        InductionModel(params, layers=1, heads=2)
    with pytest.raises(TrainingError, match="multiple of heads"):
        InductionModel(params, layers=2, heads=3)
    bad = dict(params, W_U=params["W_U"][:, :5])
    with pytest.raises(TrainingError, match="W_U has shape"):
        InductionModel(bad, layers=2, heads=2)
