"""Training-lab runs shared by the suite: a run of the lab (experiment, seed, steps) is trained once per test
session and kept for every module that reads it, on both workers and in the processes the tests start.

Several modules read the same runs: the induction experiment at seed 0 trained to 1,400, 1,800 or 2,000
steps (the ablation's numbers, the panel's bars, the figures' marks, the lecture's training scenes).
Each once cost 25-55 s of a worker. Here the first module that asks trains it, with the lab's own
``Experiment.run``, and writes its whole state (every arm's parameters, Adam's moments and step count, the
history, the step count) to a folder of this session; every other asker loads that state into a fresh
experiment of the same seed, which is then the same run to the last bit (a run is a function of its seed:
the batches and the initial weights are drawn from it; tests/training/test_shared_runs.py checks that a
loaded run is the trained one and trains on the same). A run of more steps trains on from the last state
kept, so seed 0 is trained to 2,000 steps once, whoever asks for 1,400, 1,800 or 2,000.

Only tests whose subject is not the training itself read runs from here: a test of training (that it runs,
that a scene trains headless, the command line's runs) trains as it always did.

The folder is one per session (under pytest's base temporary folder, shared by the xdist workers, named by
``RUNS_ENV`` for processes started by tests), so nothing is kept from one session to the next. Files are
NumPy ``.npz`` read with ``allow_pickle=False``, written atomically; one file lock per run (experiment,
seed, settings) makes a second asker wait for the first instead of training the same steps again.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path

import numpy as np
from filelock import FileLock

from attn_studio.training.experiment import Experiment

RUNS_ENV = "ATTN_TESTS_SHARED_RUNS"
KEEP_EVERY = 100  # a run's state is kept every this many steps, so a shorter run of it is a load too
_REAL_RUN = Experiment.run  # the lab's own training loop (shared_training patches Experiment.run)


def runs_folder() -> Path:
    """This session's folder of shared runs (set by tests/conftest.py; a private one when run alone)."""
    folder = os.environ.get(RUNS_ENV)
    if not folder:
        folder = tempfile.mkdtemp(prefix="shared-runs-")
        os.environ[RUNS_ENV] = folder
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _run_key(name: str, seed: int, settings: dict) -> str:
    parts = [name, f"seed{seed}", *(f"{k}{v:g}" for k, v in sorted(settings.items()) if v is not None)]
    return re.sub(r"[^A-Za-z0-9.=-]+", "-", "-".join(parts))


def state_arrays(exp) -> dict[str, np.ndarray]:
    """Everything training changes in ``exp``, as named arrays: each arm's parameters, Adam's moments and
    step count, the history; and the step count."""
    out = {"step_count": np.array(exp.step_count)}
    for n, arm in enumerate(exp.arms):
        opt = exp.optimisers[arm]
        out[f"arm{n}.t"] = np.array(opt.t)
        for pname, p in exp.models[arm].params.items():
            out[f"arm{n}.param.{pname}"] = p
            out[f"arm{n}.m.{pname}"] = opt.m[pname]
            out[f"arm{n}.v.{pname}"] = opt.v[pname]
        for metric, values in exp.history[arm].items():
            out[f"arm{n}.history.{metric}"] = np.array(values, dtype=np.float64)
    return out


def load_state(exp, path: Path) -> None:
    """Put the state kept at ``path`` into ``exp`` (a fresh experiment of the same seed and settings), in
    place: the optimisers keep holding the models' own arrays."""
    with np.load(path, allow_pickle=False) as kept:
        for n, arm in enumerate(exp.arms):
            opt = exp.optimisers[arm]
            for pname, p in exp.models[arm].params.items():
                for target, kind in ((p, "param"), (opt.m[pname], "m"), (opt.v[pname], "v")):
                    value = kept[f"arm{n}.{kind}.{pname}"]
                    assert value.shape == target.shape and value.dtype == target.dtype, (arm, kind, pname)
                    target[...] = value
            opt.t = int(kept[f"arm{n}.t"])
            exp.history[arm] = {metric: kept[f"arm{n}.history.{metric}"].tolist() for metric in exp.history[arm]}
        exp.step_count = int(kept["step_count"])


def _save_state(exp, path: Path) -> None:
    tmp = path.with_name(path.name + ".part.npz")
    np.savez(tmp, **state_arrays(exp))
    os.replace(tmp, path)


def _kept_steps(folder: Path, key: str) -> list[int]:
    return sorted(int(m.group(1)) for p in folder.glob(f"{key}-step*.npz")
                  if (m := re.fullmatch(re.escape(key) + r"-step(\d+)\.npz", p.name)))


def _key_of(exp) -> str:
    from attn_studio.training.lab_models import experiment_name

    settings = {"lr": exp.lr, "d_k": getattr(exp, "d_k", None)}
    return _run_key(experiment_name(exp), exp.seed, settings)


def train_to(exp, steps: int) -> None:
    """Bring ``exp``, a fresh experiment (step 0, its learning rate never changed), to ``steps``: the
    state this session kept for that run and step is loaded into it; else it is trained by
    ``Experiment.run`` from the nearest state kept before (or from 0), and kept."""
    assert exp.step_count == 0 and not exp.lr_changed, "only a fresh run is the run the shared runs hold"
    folder = runs_folder()
    key = _key_of(exp)
    with FileLock(str(folder / f"{key}.lock")):
        start = max((s for s in _kept_steps(folder, key) if s <= steps), default=0)
        if start:
            load_state(exp, folder / f"{key}-step{start}.npz")
        while exp.step_count < steps:
            _REAL_RUN(exp, min(KEEP_EVERY - exp.step_count % KEEP_EVERY, steps - exp.step_count))
            if exp.step_count % KEEP_EVERY == 0 or exp.step_count == steps:
                _save_state(exp, folder / f"{key}-step{exp.step_count}.npz")


def trained(name: str, seed: int, steps: int, d_k: int | None = None):
    """The lab's experiment ``name`` ("induction", "scaling", "seq2seq") at ``seed`` (and ``d_k``) trained to
    ``steps`` by ``Experiment.run``: loaded when this session trained it before (here or on the other
    worker), else trained now from the nearest state kept before it, and kept. A new object each call: the
    caller may train it on or change it."""
    from attn_studio.training.report import make_experiment

    exp = make_experiment(name, seed=seed, d_k=d_k)
    train_to(exp, steps)
    return exp


@contextlib.contextmanager
def shared_training(monkeypatch):
    """While in this block, a fresh run of the lab trained by ``Experiment.run`` without a callback (as the
    window's training panel plays a scene's run to its steps) is brought to its steps by :func:`train_to`
    instead of trained again: the run the scene shows is the same, its training done once for the session.
    A run that is not fresh (trained on from a step, its learning rate changed) trains as before."""
    from attn_studio.gui.training import panel as panel_module

    def run(self, n, callback=None):
        if callback is not None or n <= 0 or self.step_count != 0 or self.lr_changed:
            return _REAL_RUN(self, n, callback)
        train_to(self, n)
        return {arm: {metric: self.history[arm][metric][-1] for metric in self.metrics} for arm in self.arms}

    # A scene's run is played in pieces (a look at whether the window closes between two): here in one
    # piece, so that the piece is the whole run the shared runs hold.
    monkeypatch.setattr(panel_module, "PLAY_TO_PIECE", 1_000_000)
    monkeypatch.setattr(Experiment, "run", run)
    yield
