"""Seq2SeqExperiment: the reversal task, exact gradients through time, greedy decoding, alignment."""

import copy

import numpy as np
import pytest

from attn_studio.training import Seq2SeqExperiment, TrainingError, accuracy_by_length
from attn_studio.training.gradcheck import directional_errors, gradient_errors
from attn_studio.training.layers import Adam, clip_by_global_norm
from attn_studio.training.seq2seq import Seq2SeqModel

TOL = 1e-6
SHARED = ("enc_embed", "dec_embed", "enc_Wx", "enc_Wh", "enc_b", "dec_Wx", "dec_Wh", "dec_b", "out_W", "out_b")
ATTENTION = ("att_Ws", "att_Uh", "att_b", "att_v")


@pytest.fixture(scope="module")
def exp():
    """Made once, never trained: tests that train make their own."""
    return Seq2SeqExperiment(seed=0)


def _short_batch(rng, rows=3, length=4):
    source = rng.integers(0, 8, size=(rows, length))
    return {"source": source, "target": source[:, ::-1].copy()}


def _short_seed(steps: int, longest: int = 5, start: int = 0) -> int:
    """The first seed from ``start`` whose first ``steps`` batches are all at most ``longest`` long:
    the bookkeeping tests need a few real steps, not long sequences."""
    return next(seed for seed in range(start, start + 500)
                if all(Seq2SeqExperiment.batch(_Seeded(seed), s)["source"].shape[1] <= longest for s in range(steps)))


class _Seeded:
    """Just enough of an experiment for Seq2SeqExperiment.batch: its seed and random streams."""

    def __init__(self, seed):
        self.seed = seed

    rng = Seq2SeqExperiment.rng


def _twin(model):
    return Seq2SeqModel(copy.deepcopy(model.params), attention=model.attention)


@pytest.mark.parametrize("arm", ["encoder-decoder", "attention"])
def test_every_gradient_matches_central_differences(exp, arm):
    rng = np.random.default_rng(11)
    model = _twin(exp.models[arm])
    batch = _short_batch(rng)
    loss, grads = model.loss_and_grads(batch)
    assert loss == model.loss(batch)
    assert set(grads) == set(model.params) == set(SHARED + (ATTENTION if arm == "attention" else ()))
    assert all(g.shape == model.params[n].shape and np.abs(g).max() > 0 for n, g in grads.items())
    f = lambda: model.loss(batch)
    sampled = gradient_errors(f, model.params, grads, samples=24, rng=rng)   # entry by entry
    along = directional_errors(f, model.params, grads, rng=rng)             # every entry at once
    assert max(sampled.values()) <= TOL, sampled
    assert max(along.values()) <= TOL, along


def test_gradient_check_rejects_one_wrong_entry(exp):
    rng = np.random.default_rng(12)
    model = _twin(exp.models["attention"])
    batch = _short_batch(rng)
    _, grads = model.loss_and_grads(batch)
    wrong = {name: g.copy() for name, g in grads.items()}
    wrong["att_Ws"][3, 5] += 0.01 * np.linalg.norm(grads["att_Ws"])  # one entry off
    errors = directional_errors(lambda: model.loss(batch), model.params, wrong, rng=rng)
    assert errors["att_Ws"] > TOL
    assert max(v for k, v in errors.items() if k != "att_Ws") <= TOL


def test_batches_reverse_one_length_per_step(exp):
    lengths = set()
    for step in range(40):
        b = exp.batch(step)
        assert b["source"].shape[0] == 64 and 1 <= b["source"].shape[1] <= 20
        np.testing.assert_array_equal(b["target"], b["source"][:, ::-1])
        assert b["source"].min() >= 0 and b["source"].max() <= 7
        lengths.add(b["source"].shape[1])
    assert len(lengths) > 8  # lengths vary from step to step


def test_arms_start_equal_train_on_the_same_batches_and_record_before_the_update():
    exp = Seq2SeqExperiment(seed=_short_seed(3))
    ed, att = exp.models["encoder-decoder"].params, exp.models["attention"].params
    for name in SHARED:
        np.testing.assert_array_equal(ed[name], att[name])
        assert ed[name] is not att[name]
    assert set(att) - set(ed) == set(ATTENTION)
    assert np.abs(ed["enc_Wh"]).max() <= 1 / np.sqrt(32) and np.abs(ed["out_W"]).max() <= 1 / 8
    seen = {arm: [] for arm in exp.arms}
    for arm, model in exp.models.items():
        original = model.measure
        model.measure = lambda batch, arm=arm, original=original: (seen[arm].append(batch), original(batch))[1]
    before = [exp.batch(s) for s in range(3)]
    for step in range(3):
        twins = {arm: _twin(m) for arm, m in exp.models.items()}
        returned = exp.step()
        for arm in exp.arms:
            np.testing.assert_array_equal(seen[arm][step]["source"], before[step]["source"])
            expected, _ = twins[arm].measure(before[step])
            assert returned[arm] == pytest.approx(expected, rel=1e-12)
            assert {k: v[-1] for k, v in exp.history[arm].items()} == returned[arm]
            assert all(len(v) == step + 1 == exp.step_count for v in exp.history[arm].values())
        np.testing.assert_array_equal(exp.batch(step)["source"], before[step]["source"])
    assert not np.array_equal(ed["dec_Wh"], att["dec_Wh"])


def test_optimiser_is_adam_after_clipping_at_five():
    exp = Seq2SeqExperiment(seed=_short_seed(3, start=1))
    model = _twin(exp.models["attention"])
    adam = Adam(model.params, lr=3e-3, betas=(0.9, 0.999), eps=1e-8)
    for step in range(3):
        _, grads = model.loss_and_grads(exp.batch(step))
        clipped, norm = clip_by_global_norm(grads, 5.0)
        adam.step(clipped)
        exp.step()
    assert norm > 0
    for name, value in model.params.items():
        np.testing.assert_allclose(exp.models["attention"].params[name], value, rtol=1e-12, atol=1e-15)


def test_same_seed_same_history():
    seed, other = _short_seed(3), _short_seed(3, start=_short_seed(3) + 1)
    a, b, c = Seq2SeqExperiment(seed=seed), Seq2SeqExperiment(seed=seed), Seq2SeqExperiment(seed=other)
    for e in (a, b, c):
        e.run(3)
    assert a.history == b.history
    assert a.history != c.history


def test_greedy_decoding_feeds_its_own_output_back(exp):
    sources = np.random.default_rng(5).integers(0, 8, size=(6, 7))
    for model in exp.models.values():
        guess = model.predict(sources)
        assert guess.shape == (6, 7) and np.issubdtype(guess.dtype, np.integer)
        # Teacher forcing with its own guesses as the targets reproduces every guess.
        logits = model.logits({"source": sources, "target": guess})
        np.testing.assert_array_equal(np.argmax(logits, axis=2), guess)


def test_alignment_rows_are_distributions_over_the_input(exp):
    sources = np.random.default_rng(6).integers(0, 8, size=(4, 9))
    a = exp.models["attention"].alignment(sources)
    assert a.shape == (4, 9, 9)
    assert np.all(a >= 0)
    np.testing.assert_allclose(a.sum(axis=2), 1.0, atol=1e-12)
    with pytest.raises(TrainingError, match="no alignment"):
        exp.models["encoder-decoder"].alignment(sources)


def test_accuracy_by_length(exp):
    model = exp.models["attention"]
    greedy = accuracy_by_length(model, lengths=[1, 3, 20], count=16)
    forced = accuracy_by_length(model, lengths=[1, 3], count=16, teacher_forcing=True)
    assert list(greedy) == [1, 3, 20] and all(0.0 <= v <= 1.0 for v in greedy.values())
    assert greedy[1] == forced[1]  # one output: both start from <bos>
    both = exp.accuracy_by_length(lengths=[2], count=8)
    assert set(both) == set(exp.arms)
    assert both["attention"][2] == accuracy_by_length(model, lengths=[2], count=8, seed=exp.seed)[2]


@pytest.mark.parametrize("batch, message", [
    ({"source": np.zeros((2, 3), dtype=int)}, "source.*target"),
    ({"source": np.zeros((2, 3), dtype=int), "target": np.zeros((2, 4), dtype=int)}, "same shape"),
    ({"source": np.full((2, 3), 8), "target": np.zeros((2, 3), dtype=int)}, "0..7"),
    ({"source": np.zeros((2, 3)), "target": np.zeros((2, 3), dtype=int)}, "integers"),
    ({"source": np.zeros((2, 0), dtype=int), "target": np.zeros((2, 0), dtype=int)}, "L >= 1"),
    ([1, 2], "dict"),
])
def test_bad_batches_are_named(exp, batch, message):
    with pytest.raises(TrainingError, match=message):
        exp.models["attention"].loss(batch)


def test_bad_arguments_are_named(exp):
    with pytest.raises(TrainingError, match="seed"):
        Seq2SeqExperiment(seed=-3)
    with pytest.raises(TrainingError, match="step"):
        exp.batch(1.5)
    with pytest.raises(TrainingError, match="sources"):
        exp.models["attention"].predict(np.zeros(5, dtype=int))
    with pytest.raises(TrainingError, match="length"):
        accuracy_by_length(exp.models["attention"], lengths=[0])
