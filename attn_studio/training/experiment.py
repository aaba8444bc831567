"""The training loop every experiment of the lab shares.

An experiment trains a few models ("arms") side by side on the very same batches, so that the one
thing that differs between them (the 1/sqrt(d_k), the attention, the second layer) is the one
thing that explains the difference in their curves. It is deterministic: ``batch(step)`` depends
only on (seed, step), the models start from the seed, so a reset plays the same run again.

A subclass sets ``arms`` and ``metrics``, builds its models in ``_build_models`` and its batches in
``batch``. Each model provides ``measure(batch) -> (metrics, grads)``: the metrics of that batch
and the gradient of its loss, both at the parameters before the update.
"""

from __future__ import annotations

import numbers
from typing import Callable, Mapping

import numpy as np

from .layers import Adam, clip_by_global_norm

__all__ = ["Experiment", "TrainingError", "check_int", "check_lr"]

# Independent random streams of one seed: the models' initial weights, the training batches,
# and held-out evaluation data.
STREAM_INIT, STREAM_BATCH, STREAM_EVAL = 0, 1, 2


class TrainingError(ValueError):
    """A bad argument to an experiment (a seed, a size, a step, a batch)."""


def check_int(name: str, value, minimum: int = 0, maximum: int | None = None) -> int:
    """``value`` as an int, or a TrainingError naming ``name`` (bools and floats are refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TrainingError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise TrainingError(f"{name} must be {bound}, got {value}")
    return value


def check_lr(value) -> float:
    """A learning rate: a finite float in (0, 1], or a TrainingError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TrainingError(f"lr must be a number, got {value!r}")
    value = float(value)
    if not (0.0 < value <= 1.0):
        raise TrainingError(f"lr must be above 0 and at most 1, got {value!r}")
    return value


class Experiment:
    """Arms trained side by side, one optimiser step each on the same batch per `step()`.

    Attributes: ``arms`` (names, in order), ``models`` (arm -> model), ``step_count`` (steps
    taken), ``history`` (arm -> metric -> list of floats, one per step taken), ``seed``, ``lr``
    (Adam's learning rate: the experiment's own unless ``lr=`` was given).
    """

    arms: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ("loss", "accuracy")
    # Optimiser settings of every arm; clip_norm None means no gradient clipping.
    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    clip_norm: float | None = None
    # Steps a run takes unless told otherwise (attn-studio train): enough to see the effect.
    default_steps: int = 1000

    def __init__(self, seed: int = 0, lr: float | None = None):
        self.seed = check_int("seed", seed, 0, 2**63 - 1)
        if lr is not None:  # None keeps the experiment's own learning rate (the class's ``lr``)
            self.lr = check_lr(lr)
        self.step_count = 0
        # True once the learning rate changed after the first step: the run can no longer be
        # played again from (seed, lr, steps), so a saved model names no recipe.
        self.lr_changed = False
        self.models = self._build_models(self.rng(STREAM_INIT))
        if tuple(self.models) != tuple(self.arms):
            raise RuntimeError(f"models {tuple(self.models)} do not match arms {self.arms}")
        self.optimisers = {arm: Adam(model.params, lr=self.lr, betas=self.betas, eps=self.eps)
                           for arm, model in self.models.items()}
        self.history: dict[str, dict[str, list[float]]] = {
            arm: {name: [] for name in self.metrics} for arm in self.arms}

    # ---------------------------------------------------------------- for subclasses to fill
    def _build_models(self, rng: np.random.Generator) -> dict:
        """arm -> model, in the order of ``arms``, with their initial weights drawn from ``rng``."""
        raise NotImplementedError

    def batch(self, step: int) -> dict:
        """The batch every arm trains on at ``step``: a function of (seed, step) only."""
        raise NotImplementedError

    def set_lr(self, lr: float) -> None:
        """Adam's learning rate from the next step on, for every arm."""
        lr = check_lr(lr)
        if lr != self.lr and self.step_count > 0:
            self.lr_changed = True
        self.lr = lr
        for optimiser in self.optimisers.values():
            optimiser.lr = lr

    def save_model(self, arm: str, folder):
        """Write ``arm`` at its current step as a lab model folder (config.json, model.safetensors,
        vocab.json; atomically) that ``attn_studio.pretrained.load_pretrained(folder)`` opens.
        Returns the folder. See `lab_models` for what each experiment's model is."""
        from .lab_models import save_model

        return save_model(self, arm, folder)

    # ------------------------------------------------------------------------------ the loop
    def rng(self, stream: int, *key: int) -> np.random.Generator:
        """A generator for one stream of this seed (``STREAM_INIT``, ``STREAM_BATCH``, ...),
        further keyed by ``key`` (e.g. the step), independent of every other stream and key."""
        return np.random.default_rng([self.seed, stream, *key])

    def step(self) -> dict[str, dict[str, float]]:
        """One optimiser step of every arm on ``batch(step_count)``.

        Returns ``{arm: {metric: value}}``, measured on that batch with the parameters before the
        update, and appends the values to ``history``.
        """
        batch = self.batch(self.step_count)
        measured: dict[str, dict[str, float]] = {}
        updates = {}
        # Measure every arm first, then update: a failure leaves no arm half a step ahead.
        for arm in self.arms:
            values, grads = self.models[arm].measure(batch)
            measured[arm] = {name: float(values[name]) for name in self.metrics}
            if self.clip_norm is not None:
                grads, _ = clip_by_global_norm(grads, self.clip_norm)
            updates[arm] = grads
        for arm in self.arms:
            self.optimisers[arm].step(updates[arm])
            for name, value in measured[arm].items():
                self.history[arm][name].append(value)
        self.step_count += 1
        return measured

    def run(self, n: int, callback: Callable[[int, Mapping[str, Mapping[str, float]]], object] | None = None
            ) -> dict[str, dict[str, float]] | None:
        """``n`` calls of `step`; returns the last step's metrics (None when n is 0).

        ``callback(step_count, metrics)`` is called after each step (a progress bar, a stop flag
        raising an exception between steps).
        """
        n = check_int("n", n)
        last = None
        for _ in range(n):
            last = self.step()
            if callback is not None:
                callback(self.step_count, last)
        return last

    def latest(self, arm: str, metric: str) -> float | None:
        """The last recorded value of ``metric`` for ``arm`` (None before the first step)."""
        values = self.history[arm][metric]
        return values[-1] if values else None
