"""Reproducible weight initialisation that does not depend on the matrix shape.

Each entry is a function of (seed, matrix name, index) alone, so that growing
a matrix adds new entries without changing the existing ones, and the same
seed always gives the same numbers on every machine.
"""

from __future__ import annotations

import zlib

import numpy as np

from ._checks import check_positive

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _splitmix64(z: np.ndarray) -> np.ndarray:
    # Vectorised SplitMix64 finaliser: a good 64-bit integer hash. In place on a
    # fresh copy: a million-cell store would otherwise allocate a temporary per step.
    z = z + _GOLDEN
    z ^= z >> np.uint64(30)
    z *= _MIX1
    z ^= z >> np.uint64(27)
    z *= _MIX2
    z ^= z >> np.uint64(31)
    return z


def seeded_normal(seed: int, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal values, one per index of ``shape``, keyed by (seed, name, index).

    ``seeded_normal(s, n, (2, 3))`` equals ``seeded_normal(s, n, (4, 5))[:2, :3]``.
    """
    shape = tuple(int(n) for n in shape)
    if not shape or any(n == 0 for n in shape):
        return np.zeros(shape)
    # Combine the multi-index into one key with large odd multipliers per axis.
    # The key grows one axis at a time (broadcasting): every cell gets the same value as when the
    # key starts full size, but only the last axis's hash runs over every cell.
    key = np.full((1,) * len(shape), np.uint64((int(seed) & 0xFFFFFFFF) << 32 | zlib.crc32(name.encode())),
                  dtype=np.uint64)
    with np.errstate(over="ignore"):
        for axis, n in enumerate(shape):
            idx = np.arange(n, dtype=np.uint64).reshape([-1 if a == axis else 1 for a in range(len(shape))])
            key = _splitmix64(key ^ (idx * np.uint64(0x100000001B3 + 2 * axis)))
        u1 = (_splitmix64(key) >> np.uint64(11)).astype(np.float64)
        u2 = (_splitmix64(key ^ _GOLDEN) >> np.uint64(11)).astype(np.float64)
    # Box-Muller; 1 - u1 lies in (0, 1], so the log is finite. The same operations in the
    # same order as sqrt(-2 log1p(-u1)) cos(2 pi u2), in place (no temporary per step).
    u1 /= 2.0**53
    u2 /= 2.0**53
    np.negative(u1, out=u1)
    np.log1p(u1, out=u1)
    u1 *= -2.0
    np.sqrt(u1, out=u1)
    u2 *= 2.0 * np.pi
    np.cos(u2, out=u2)
    u1 *= u2
    return u1


def seeded_weights(seed: int, name: str, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    """Weights ~ N(0, 1/fan_in), rounded to two decimals so the tables read cleanly.

    The 1/fan_in variance keeps projected vectors at unit variance, which is
    what the seeds' variance argument assumes of q and k.
    """
    fan_in = check_positive("fan_in", fan_in, integer=True)
    return np.round(seeded_normal(seed, name, shape) / np.sqrt(fan_in), 2)
