"""Central-difference gradient checks: the proof that a hand-written backward pass is right.

For each entry of a parameter array, (f(p + h) - f(p - h)) / 2h approximates d f / d p with an
error of order h² times the third derivative; the check compares it with the analytic gradient
by a relative error over the whole array, ||analytic - numeric|| / (||analytic|| + ||numeric||).
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

__all__ = ["numerical_gradient", "relative_error", "gradient_errors", "directional_errors"]


def numerical_gradient(f: Callable[[], float], array: np.ndarray, h: float = 1e-5,
                       index: np.ndarray | None = None) -> np.ndarray:
    """Central differences of ``f()`` (a function of the current contents of ``array``) with
    respect to every entry of ``array``, or only the flat positions in ``index``.

    ``array`` is perturbed in place and restored exactly after each entry.
    """
    if not array.flags.c_contiguous:
        raise ValueError("array must be C-contiguous so that it can be perturbed in place")
    flat = array.reshape(-1)  # a view: writing through it changes the array f reads
    grad = np.zeros(array.size)
    positions = range(array.size) if index is None else np.asarray(index).reshape(-1)
    for i in positions:
        keep = flat[i]
        flat[i] = keep + h
        up = f()
        flat[i] = keep - h
        down = f()
        flat[i] = keep
        grad[i] = (up - down) / (2.0 * h)
    return grad.reshape(array.shape)


def relative_error(analytic: np.ndarray, numeric: np.ndarray) -> float:
    """||analytic - numeric|| / (||analytic|| + ||numeric||), 0 when both are exactly zero."""
    diff = float(np.linalg.norm(np.ravel(analytic) - np.ravel(numeric)))
    scale = float(np.linalg.norm(analytic) + np.linalg.norm(numeric))
    return 0.0 if scale == 0.0 else diff / scale


def gradient_errors(loss: Callable[[], float], params: Mapping[str, np.ndarray],
                    grads: Mapping[str, np.ndarray], h: float = 1e-5, samples: int | None = None,
                    rng: np.random.Generator | None = None) -> dict[str, float]:
    """Relative error of every gradient array in ``grads`` against central differences of
    ``loss()`` over the matching array in ``params`` (perturbed in place, restored).

    ``samples``: check only that many entries of each array, drawn by ``rng`` (every entry of a
    smaller array); pair it with `directional_errors`, which sees every entry at once.
    """
    errors = {}
    for name, array in params.items():
        if samples is None or samples >= array.size:
            errors[name] = relative_error(grads[name], numerical_gradient(loss, array, h))
            continue
        rng = rng if rng is not None else np.random.default_rng(0)
        index = rng.choice(array.size, size=samples, replace=False)
        numeric = numerical_gradient(loss, array, h, index=index).reshape(-1)[index]
        errors[name] = relative_error(np.ravel(grads[name])[index], numeric)
    return errors


def directional_errors(loss: Callable[[], float], params: Mapping[str, np.ndarray],
                       grads: Mapping[str, np.ndarray], h: float = 1e-5,
                       rng: np.random.Generator | None = None, directions: int = 2) -> dict[str, float]:
    """For each array, the error of sum(grad * u) against the central difference of ``loss()``
    along random unit directions u of that array, relative to ||grad|| (the largest the
    directional derivative can be, so a direction nearly orthogonal to the gradient does not
    inflate it): two evaluations per direction, and every entry of the gradient takes part (a
    wrong entry moves the dot product)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    errors = {}
    for name, array in params.items():
        if not array.flags.c_contiguous:
            raise ValueError(f"{name} must be C-contiguous so that it can be perturbed in place")
        worst = 0.0
        for _ in range(directions):
            u = rng.standard_normal(array.shape)
            u /= np.linalg.norm(u)
            keep = array.copy()
            array += h * u
            up = loss()
            array[...] = keep - h * u
            down = loss()
            array[...] = keep
            analytic = float(np.sum(grads[name] * u))
            numeric = (up - down) / (2.0 * h)
            scale = float(np.linalg.norm(grads[name])) + abs(numeric)
            worst = max(worst, 0.0 if scale == 0.0 else abs(analytic - numeric) / scale)
        errors[name] = worst
    return errors
