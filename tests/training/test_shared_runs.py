"""The suite's shared training runs (tests/shared_runs.py) are the runs the lab trains: a run loaded from
them is the run trained here to the last bit, parameters, optimiser and history, and trains on the same."""

from __future__ import annotations

import numpy as np
import pytest

import shared_runs
from attn_studio.training import InductionExperiment
from attn_studio.training.report import make_experiment


@pytest.fixture
def own_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(shared_runs.RUNS_ENV, str(tmp_path / "runs"))
    monkeypatch.setattr(shared_runs, "KEEP_EVERY", 4)
    return tmp_path / "runs"


def assert_same_run(a, b):
    assert a.step_count == b.step_count and a.history == b.history
    for arm in a.arms:
        for name, p in a.models[arm].params.items():
            assert np.array_equal(p, b.models[arm].params[name]), (arm, name)
            assert np.array_equal(a.optimisers[arm].m[name], b.optimisers[arm].m[name])
            assert np.array_equal(a.optimisers[arm].v[name], b.optimisers[arm].v[name])
        assert a.optimisers[arm].t == b.optimisers[arm].t
        assert a.optimisers[arm].params is a.models[arm].params  # Adam still moves the model's own arrays


@pytest.mark.parametrize("name, d_k", [("induction", None), ("scaling", 8), ("seq2seq", None)])
def test_a_shared_run_is_the_run_trained_here_and_trains_on_the_same(own_folder, name, d_k):
    here = make_experiment(name, seed=3, d_k=d_k)
    here.run(6)
    first = shared_runs.trained(name, 3, 6, d_k=d_k)  # trained now (kept at step 4 and 6)
    assert_same_run(first, here)
    assert sorted(p.name for p in own_folder.glob("*.npz"))[-2:] == [
        f"{shared_runs._key_of(here)}-step{s}.npz" for s in (4, 6)]
    again = shared_runs.trained(name, 3, 6, d_k=d_k)  # loaded
    assert again is not first
    assert_same_run(again, here)
    here.run(3)
    again.run(3)
    assert_same_run(again, here)
    longer = shared_runs.trained(name, 3, 9, d_k=d_k)  # trained on from step 6, kept
    assert_same_run(longer, here)


def test_a_scene_played_with_shared_training_shows_the_same_run(own_folder, monkeypatch):
    here = make_experiment("induction", seed=1)
    here.run(5)
    with shared_runs.shared_training(monkeypatch):
        played = make_experiment("induction", seed=1)
        last = played.run(5)
        assert_same_run(played, here)
        assert last == {arm: {m: here.history[arm][m][-1] for m in here.metrics} for arm in here.arms}
        played.run(2)  # not fresh: trained as always
        here.run(2)
        assert_same_run(played, here)
        changed = InductionExperiment(seed=1, lr=1e-3)  # another learning rate: another run
        changed.run(5)
    other = InductionExperiment(seed=1, lr=1e-3)
    other.run(5)
    assert_same_run(changed, other)
