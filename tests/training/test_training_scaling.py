"""ScalingExperiment: the associative-recall task, exact gradients, the loop's bookkeeping, the effect."""

import copy

import numpy as np
import pytest

from attn_studio.training import ScalingExperiment, TrainingError
from attn_studio.training.gradcheck import directional_errors, gradient_errors, numerical_gradient
from attn_studio.training.layers import cross_entropy, softmax
from attn_studio.training.scaling import N_KEYS, ScalingModel

TOL = 1e-6


@pytest.fixture(scope="module")
def trained_small():
    """d_k 8 after 25 steps: the read-out is no longer zero, so every gradient is non-trivial."""
    exp = ScalingExperiment(d_k=8, seed=3)
    exp.run(25)
    return exp


def _small_batch(exp, step, rows=4):
    return {name: value[:rows] for name, value in exp.batch(step).items()}


@pytest.mark.parametrize("arm", ["scaled", "unscaled"])
def test_every_gradient_matches_central_differences(trained_small, arm):
    model = trained_small.models[arm]
    batch = _small_batch(trained_small, 1000)
    params = copy.deepcopy(model.params)
    probe = ScalingModel(model.embeddings, params, scaled=model.scaled)
    loss, grads = probe.loss_and_grads(batch)
    assert loss == probe.loss(batch)
    assert all(np.abs(g).max() > 0 for g in grads.values())
    rng = np.random.default_rng(1)
    f = lambda: probe.loss(batch)
    sampled = gradient_errors(f, probe.params, grads, samples=32, rng=rng)   # entry by entry
    along = directional_errors(f, probe.params, grads, rng=rng)             # every entry at once
    assert max(sampled.values()) <= TOL, sampled
    assert max(along.values()) <= TOL, along
    # ...and the check has teeth on this model: one wrong factor in one array is rejected.
    wrong = dict(grads, Wk=grads["Wk"] * 1.001)
    assert directional_errors(f, probe.params, wrong, rng=rng)["Wk"] > TOL
    assert gradient_errors(f, {"bo": probe.params["bo"]}, dict(grads, bo=grads["bo"] + 1e-4))["bo"] > TOL


def test_batch_is_the_task():
    exp = ScalingExperiment(d_k=4, seed=0)
    b = exp.batch(5)
    assert b["keys"].shape == (32, 32) and b["labels"].shape == (32, 32)
    assert b["query"].shape == (32,) and b["target"].shape == (32,)
    assert b["keys"].min() >= 0 and b["keys"].max() < N_KEYS
    assert all(len(set(row)) == 32 for row in b["keys"])             # distinct keys per example
    assert b["labels"].min() >= 0 and b["labels"].max() < 8
    for row in range(32):
        where = np.flatnonzero(b["keys"][row] == b["query"][row])
        assert len(where) == 1                                          # the query is one of the keys
        assert b["target"][row] == b["labels"][row, where[0]]           # the answer is its label
    assert not np.array_equal(exp.batch(6)["keys"], b["keys"])


def test_arms_start_equal_and_train_on_the_same_batches():
    exp = ScalingExperiment(d_k=16, seed=1)
    scaled, unscaled = exp.models["scaled"].params, exp.models["unscaled"].params
    for name in ("Wq", "Wk", "Wo", "bo"):
        np.testing.assert_array_equal(scaled[name], unscaled[name])
        assert scaled[name] is not unscaled[name]
    assert not np.any(scaled["Wo"]) and not np.any(scaled["bo"])
    assert np.std(scaled["Wq"]) == pytest.approx(1 / np.sqrt(32), rel=0.1)

    seen = {arm: [] for arm in exp.arms}
    for arm, model in exp.models.items():
        original = model.measure
        model.measure = lambda batch, arm=arm, original=original: (seen[arm].append(batch), original(batch))[1]
    before = [exp.batch(s) for s in range(3)]
    exp.run(3)
    for step in range(3):
        for arm in exp.arms:
            for name in before[step]:
                np.testing.assert_array_equal(seen[arm][step][name], before[step][name])
        np.testing.assert_array_equal(exp.batch(step)["keys"], before[step]["keys"])  # same after training
    assert not np.array_equal(scaled["Wq"], unscaled["Wq"])  # and the arms have parted


def test_history_and_recorded_metrics_are_the_step_before_its_update():
    exp = ScalingExperiment(d_k=16, seed=2)
    assert exp.step_count == 0 and all(len(v) == 0 for h in exp.history.values() for v in h.values())
    for step in range(4):
        before = {arm: copy.deepcopy(m.params) for arm, m in exp.models.items()}
        returned = exp.step()
        assert exp.step_count == step + 1
        for arm, model in exp.models.items():
            twin = ScalingModel(model.embeddings, before[arm], scaled=model.scaled)
            expected, _ = twin.measure(exp.batch(step))
            assert set(returned[arm]) == {"loss", "accuracy", "entropy", "score_grad", "score_spread"}
            for name, value in expected.items():
                assert returned[arm][name] == pytest.approx(value, rel=1e-12, abs=1e-15)
                assert exp.history[arm][name][-1] == returned[arm][name]
                assert len(exp.history[arm][name]) == exp.step_count
            assert twin.loss(exp.batch(step)) == pytest.approx(returned[arm]["loss"], rel=1e-12)
    assert exp.run(0) is None and exp.step_count == 4


def test_metrics_mean_what_they_say():
    exp = ScalingExperiment(d_k=8, seed=4)
    exp.run(10)
    model = exp.models["scaled"]
    batch = exp.batch(10)
    metrics, _ = model.measure(batch)
    scores, weights = model.attention(batch)
    np.testing.assert_allclose(weights, softmax(scores), rtol=1e-12)
    assert metrics["entropy"] == pytest.approx(np.mean(-np.sum(weights * np.log(weights), axis=1)), rel=1e-10)
    assert metrics["score_spread"] == pytest.approx(np.mean(np.std(scores, axis=1)), rel=1e-12)
    logits = model.logits(batch)
    assert metrics["accuracy"] == np.mean(np.argmax(logits, axis=1) == batch["target"])

    # score_grad: the norm of example b's own loss against its scores, by central differences.
    values = model.embeddings[N_KEYS + batch["labels"]]
    norms = []
    for b in range(32):
        s = scores[b].copy()
        own_loss = lambda: cross_entropy((softmax(s) @ values[b] @ model.params["Wo"] + model.params["bo"])[None],
                                         batch["target"][b:b + 1])[0]
        norms.append(np.linalg.norm(numerical_gradient(own_loss, s)))
    assert metrics["score_grad"] == pytest.approx(np.mean(norms), rel=1e-6)


def test_same_seed_same_history_other_seed_other_history():
    runs = [ScalingExperiment(d_k=8, seed=s) for s in (5, 5, 6)]
    for exp in runs:
        exp.run(5)
    assert runs[0].history == runs[1].history
    assert runs[0].history != runs[2].history


def test_unscaled_starts_saturated_at_d_k_64():
    exp = ScalingExperiment(d_k=64, seed=0)
    first = exp.step()
    ln_t = np.log(32)
    assert first["unscaled"]["entropy"] < 0.35 * ln_t      # most of the weight on one key
    assert first["scaled"]["entropy"] > 0.8 * ln_t         # spread over many keys
    # The same weights, scores sqrt(64) = 8 times wider without the scale.
    assert first["unscaled"]["score_spread"] / first["scaled"]["score_spread"] == pytest.approx(8.0, rel=1e-9)
    assert first["scaled"]["loss"] == pytest.approx(np.log(8), rel=1e-12)  # a zero read-out: chance


def test_scaled_learns_while_unscaled_is_stuck_at_d_k_64():
    exp = ScalingExperiment(d_k=64, seed=0)
    exp.run(300)
    late = {arm: np.mean(exp.history[arm]["accuracy"][-50:]) for arm in exp.arms}
    assert late["scaled"] > 0.7
    assert late["unscaled"] < late["scaled"] - 0.4


@pytest.mark.parametrize("kwargs, message", [
    ({"d_k": 0}, "d_k"), ({"d_k": 2.5}, "d_k"), ({"d_k": True}, "d_k"), ({"seed": -1}, "seed"),
    ({"seed": "0"}, "seed"), ({"lr": 0}, "lr"), ({"lr": float("nan")}, "lr"), ({"lr": "1e-3"}, "lr"),
    ({"lr": 2.0}, "lr"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(TrainingError, match=message):
        ScalingExperiment(**kwargs)


def test_bad_batches_and_steps_are_named():
    exp = ScalingExperiment(d_k=4, seed=0)
    with pytest.raises(TrainingError, match="step"):
        exp.batch(-1)
    with pytest.raises(TrainingError, match="n must"):
        exp.run(-2)
    bad = dict(exp.batch(0), target=exp.batch(0)["target"] + 8)
    with pytest.raises(TrainingError, match="target"):
        exp.models["scaled"].loss(bad)
    with pytest.raises(TrainingError, match="keys and labels"):
        exp.models["scaled"].loss(dict(exp.batch(0), keys=np.zeros(3, dtype=int)))


def test_lr_keyword_sets_adam_and_none_keeps_the_experiment_default():
    default, same, faster = (ScalingExperiment(d_k=4, seed=1), ScalingExperiment(d_k=4, seed=1, lr=None),
                             ScalingExperiment(d_k=4, seed=1, lr=3e-2))
    assert default.lr == same.lr == ScalingExperiment.lr == 3e-4
    assert faster.lr == 3e-2 and faster.optimisers["scaled"].lr == 3e-2
    for exp in (default, same, faster):
        exp.run(3)
    assert default.history == same.history
    # The first step is measured before any update; the second already sees the larger step.
    assert faster.history["scaled"]["loss"][0] == default.history["scaled"]["loss"][0]
    assert faster.history["scaled"]["loss"][2] != default.history["scaled"]["loss"][2]
