"""The window's two curves of the √d_k lecture: var(q·k) against d_k and the softmax's
saturation, computed once per setting and shared by every studio; the default ones ship
precomputed (``resources/curves.npz``), because drawing their samples took 0.3 s of every start.

No Qt here. ``save_default_curves`` writes the shipped file again after the curves' code or
sizes change; a test checks the file equals what the engine computes now.
"""

from __future__ import annotations

import functools
from dataclasses import fields

import numpy as np

from .engine import SaturationCurve, VarianceCurve, dot_product_variance, softmax_saturation
from .resources import resources_dir

# The dimensions the variance and saturation curves are drawn over.
CURVE_DIMS = np.unique(np.round(np.logspace(0, 10, 41, base=2)).astype(int))
CURVE_DIMS.flags.writeable = False
VARIANCE_SAMPLES = 2500
SATURATION_SAMPLES = 200
SATURATION_SEQ_LEN = 16


def _frozen(curve):
    """``curve`` with read-only arrays: a cached curve is shared by every Studio."""
    for f in fields(curve):
        value = getattr(curve, f.name)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return curve


# The window's curves, computed ahead and shipped (drawing their samples took 0.3 s of
# every start). Made by save_default_curves; a test checks it equals a fresh computation.
CURVES_FILE = "curves.npz"
_CURVE_TYPES = {"variance": VarianceCurve, "saturation": SaturationCurve}


def _shipped_curve(kind: str, dims: tuple[int, ...], params: tuple[int, ...]):
    """Curve ``kind`` from the shipped file when it was made for ``dims`` and ``params``; else None."""
    try:
        with np.load(resources_dir() / CURVES_FILE, allow_pickle=False) as data:
            if tuple(int(d) for d in data[f"{kind}_dims"]) != dims or \
                    tuple(int(p) for p in data[f"{kind}_params"]) != params:
                return None
            cls = _CURVE_TYPES[kind]
            return cls(**{f.name: np.array(data[f"{kind}_{f.name}"], dtype=np.float64 if f.name != "dims" else None)
                          for f in fields(cls)})
    except (OSError, KeyError, ValueError):
        return None


@functools.lru_cache(maxsize=16)
def cached_variance_curve(dims: tuple[int, ...], n_samples: int, seed: int):
    """:func:`~attn_studio.engine.dot_product_variance`, computed once per (dims, n_samples, seed).

    The curve does not depend on the model, so every Studio (and every window)
    shares one copy instead of drawing thousands of samples again; the default
    one comes from the shipped file.
    """
    curve = _shipped_curve("variance", dims, (n_samples, seed))
    if curve is None:
        curve = dot_product_variance(np.asarray(dims), n_samples=n_samples, seed=seed)
    return _frozen(curve)


@functools.lru_cache(maxsize=16)
def cached_saturation_curve(dims: tuple[int, ...], seq_len: int, n_samples: int, seed: int):
    """:func:`~attn_studio.engine.softmax_saturation`, computed once per (dims, seq_len, n_samples, seed)."""
    curve = _shipped_curve("saturation", dims, (seq_len, n_samples, seed))
    if curve is None:
        curve = softmax_saturation(np.asarray(dims), seq_len=seq_len, n_samples=n_samples, seed=seed)
    return _frozen(curve)


def default_curves() -> dict[str, np.ndarray]:
    """The window's two curves, computed now by the engine, as the named arrays of :data:`CURVES_FILE`."""
    dims = np.asarray(CURVE_DIMS)
    curves = {
        "variance": (dot_product_variance(dims, n_samples=VARIANCE_SAMPLES, seed=0), (VARIANCE_SAMPLES, 0)),
        "saturation": (softmax_saturation(dims, seq_len=SATURATION_SEQ_LEN, n_samples=SATURATION_SAMPLES, seed=0),
                       (SATURATION_SEQ_LEN, SATURATION_SAMPLES, 0)),
    }
    arrays = {}
    for kind, (curve, params) in curves.items():
        arrays[f"{kind}_params"] = np.asarray(params, dtype=np.int64)
        for f in fields(curve):
            arrays[f"{kind}_{f.name}"] = np.asarray(getattr(curve, f.name))
    return arrays


def save_default_curves(path) -> None:
    """Write :func:`default_curves` to ``path`` (``resources/curves.npz``), after the curves' code or sizes change."""
    np.savez(path, **default_curves())
