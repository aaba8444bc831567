"""Vectors on a flat screen: a 2-d view of d-dimensional vectors, and the true angle between two.

The geometry view draws token vectors (and queries and keys) as arrows. When
the vectors are 2-d (or 1-d) they are drawn as they are; otherwise they are
projected onto the plane of their first two principal components, and the
view says how much of the variance that plane keeps. Angles and cosines that
the studio prints are always computed in the full dimension, here.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ._checks import as_array
from .errors import EngineError

ZERO_VECTOR_MESSAGE = "a zero vector has no direction"


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=np.float64, copy=True)
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class Projection2D:
    """Where ``n`` points of dimension ``d`` land on a plane, and which plane.

    - ``coords`` ``(n, 2)``: the points in plane coordinates;
    - ``components`` ``(2, d)``: the plane's axes as unit rows (for ``d == 1``
      the second row is 0: a line has no second direction);
    - ``mean`` ``(d,)``: the point that lands on (0, 0) (zero without centring);
    - ``explained`` ``(2,)``: the fraction of the points' spread along each
      axis (variance about the mean, or mean square about the origin when not
      centred); ``explained.sum()`` is the share the picture keeps;
    - ``exact``: True when ``d <= 2``; then ``coords`` are the points themselves
      (a zero second column when ``d == 1``), ``mean`` is 0, ``components`` the
      identity, and nothing is approximate.
    """

    coords: np.ndarray
    components: np.ndarray
    mean: np.ndarray
    explained: np.ndarray
    exact: bool

    @property
    def dim(self) -> int:
        """The dimension ``d`` of the projected vectors."""
        return int(self.components.shape[1])

    @property
    def shown(self) -> float:
        """The fraction of the spread the plane keeps (1.0 when ``exact``)."""
        return float(np.sum(self.explained))


def _shares(spread: np.ndarray, fallback) -> np.ndarray:
    total = float(np.sum(spread))
    if total > 0:
        return spread / total
    # No spread at all: every point sits on the mean, the picture loses nothing.
    return np.asarray(fallback, dtype=np.float64)


# Above this many entries the axes come from the smaller Gram matrix (an
# eigendecomposition) instead of an SVD: a 2048 x 512 SVD can take a second,
# the Gram route a few tens of milliseconds, and a picture needs no more digits.
SVD_MAX_ENTRIES = 1 << 12


def _leading_axes(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two leading right-singular vectors of ``x`` ``(n, d)``, ``d > 2``, and their singular values.

    Always two orthonormal rows, also when ``x`` has fewer than two rows or rank < 2.
    """
    n, d = x.shape
    if x.size <= SVD_MAX_ENTRIES:
        _, s, vt = np.linalg.svd(x, full_matrices=False)
        axes, values = vt[:2], s[:2]
    elif n >= d:
        evals, evecs = np.linalg.eigh(x.T @ x)
        axes = evecs[:, ::-1][:, :2].T
        values = np.sqrt(np.clip(evals[::-1][:2], 0.0, None))
    else:
        evals, evecs = np.linalg.eigh(x @ x.T)
        values = np.sqrt(np.clip(evals[::-1][:2], 0.0, None))
        u = evecs[:, ::-1][:, :2]
        axes = np.zeros((2, d))
        for k in range(values.size):  # one value when n == 1
            if values[k] > 0:
                axes[k] = (x.T @ u[:, k]) / values[k]
        axes = _orthonormal_rows(axes)
    axes = np.array(axes, dtype=np.float64)
    singular = np.zeros(2)
    singular[: values.size] = values
    if axes.shape[0] < 2 or not np.allclose(axes @ axes.T, np.eye(2), atol=1e-9):
        axes = _orthonormal_rows(axes)
    return axes, singular


def _orthonormal_rows(rows: np.ndarray) -> np.ndarray:
    """Two orthonormal rows: ``rows`` (0-2 of them) kept where usable, completed deterministically."""
    d = rows.shape[1]
    out: list[np.ndarray] = []
    # The unit vectors are made one at a time: a list of np.eye(d)[j] would build
    # d identity matrices (450 MB for d = 384) just to complete two rows.
    units = (np.eye(1, d, j)[0] for j in range(d))
    for v in itertools.chain(rows, units):
        v = np.array(v, dtype=np.float64)
        for u in out:
            v = v - np.dot(v, u) * u
        norm = np.linalg.norm(v)
        if norm > 1e-8:
            out.append(v / norm)
        if len(out) == 2:
            break
    return np.array(out)


def pca_2d(points, *, center: bool = True) -> Projection2D:
    """Project ``points`` ``(n, d)`` onto a plane that keeps as much of them as possible.

    ``d <= 2``: the points are returned as they are (see :class:`Projection2D`,
    ``exact``), never centred, so the lecturer's own 2-d vectors show exactly.

    ``d > 2``: principal component analysis. The points are centred on their
    mean (``center=True``) or not (``center=False``: the plane goes through the
    origin and keeps the most of the vectors' squared lengths and mutual dot
    products, the right plane for drawing vectors as arrows from 0), then the
    two leading right-singular vectors are the plane's axes. Signs are fixed so
    that the largest-magnitude entry of each axis is positive (the first such
    entry on a tie): the same points always give the same picture.

    Raises :class:`EngineError` when ``points`` is not 2-d, has no columns, or
    holds a non-finite value. ``n = 0`` is allowed (an empty picture).
    """
    pts = as_array("points", points, 2)
    n, d = pts.shape
    if d <= 2:
        coords = np.zeros((n, 2))
        coords[:, :d] = pts
        if n:
            spread = np.var(pts, axis=0) if center else np.mean(pts**2, axis=0)
        else:
            spread = np.zeros(d)
        spread2 = np.zeros(2)
        spread2[:d] = spread
        fallback = (1.0, 0.0) if d == 1 else (0.5, 0.5)
        return Projection2D(
            coords=_readonly(coords),
            components=_readonly(np.eye(2, d)),
            mean=_readonly(np.zeros(d)),
            explained=_readonly(_shares(spread2, fallback)),
            exact=True,
        )
    mean = pts.mean(axis=0) if (center and n) else np.zeros(d)
    centred = pts - mean
    if n == 0:
        components = np.eye(2, d)
        singular = np.zeros(2)
    else:
        components, singular = _leading_axes(centred)
    # Deterministic sign: the largest-|value| entry of each axis is positive.
    lead = np.argmax(np.abs(components), axis=1)
    signs = np.sign(components[np.arange(2), lead])
    signs[signs == 0] = 1.0
    components = components * signs[:, None]
    coords = centred @ components.T
    total = float(np.sum(centred**2))
    if total > 0:
        explained = singular**2 / total
    else:
        explained = np.array([1.0, 0.0])
    return Projection2D(
        coords=_readonly(coords),
        components=_readonly(components),
        mean=_readonly(mean),
        explained=_readonly(np.clip(explained, 0.0, 1.0)),
        exact=False,
    )


def project(points, projection: Projection2D) -> np.ndarray:
    """Place other vectors ``(m, d)`` on the plane of ``projection``: ``(m, 2)``.

    Exact projections copy the points (a zero second column when ``d == 1``);
    otherwise ``(points - mean) @ components.T``. Projecting the points the
    plane was fitted to gives its ``coords`` back.
    """
    if not isinstance(projection, Projection2D):
        raise EngineError(f"project needs a Projection2D from pca_2d, got {type(projection).__name__}")
    pts = as_array("points", points, 2)
    d = projection.dim
    if pts.shape[1] != d:
        raise EngineError(
            f"points of dimension {pts.shape[1]} cannot go on a plane fitted to {d}-dimensional vectors "
            f"(points have shape {pts.shape})"
        )
    if projection.exact:
        out = np.zeros((pts.shape[0], 2))
        out[:, :d] = pts
        return out
    return (pts - projection.mean) @ projection.components.T


def _pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    va = as_array("the first vector", a, 1)
    vb = as_array("the second vector", b, 1)
    if va.shape != vb.shape:
        raise EngineError(f"the two vectors have different lengths ({va.shape[0]} and {vb.shape[0]})")
    return va, vb


def _unit(v: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    if norm == 0.0:
        raise EngineError(ZERO_VECTOR_MESSAGE)
    return v / norm


def cosine(a, b) -> float:
    """The cosine of the angle between vectors ``a`` and ``b``: ``a·b / (|a| |b|)``, in [-1, 1].

    Raises :class:`EngineError` ("a zero vector has no direction") when either is 0.
    """
    va, vb = _pair(a, b)
    ua, ub = _unit(va), _unit(vb)
    return float(np.clip(np.dot(ua, ub), -1.0, 1.0))


def angle_degrees(a, b) -> float:
    """The angle between vectors ``a`` and ``b`` in degrees, in [0, 180].

    Computed as ``2·atan2(|â − b̂|, |â + b̂|)`` (accurate also for nearly
    parallel vectors, where ``arccos`` loses digits). Raises
    :class:`EngineError` ("a zero vector has no direction") when either is 0.
    """
    va, vb = _pair(a, b)
    ua, ub = _unit(va), _unit(vb)
    return float(np.degrees(2.0 * np.arctan2(np.linalg.norm(ua - ub), np.linalg.norm(ua + ub))))


@dataclass(frozen=True)
class VectorPair:
    """How two vectors relate, in their full dimension.

    ``dot`` = a·b, ``norm_a`` = |a|, ``norm_b`` = |b|, ``cosine`` and ``angle``
    (degrees, in [0, 180]); ``cosine`` and ``angle`` are None when either
    vector is zero (it has no direction). ``dot = norm_a × norm_b × cosine``.
    """

    dot: float
    norm_a: float
    norm_b: float
    cosine: float | None
    angle: float | None


def vector_pair(a, b) -> VectorPair:
    """Dot product, lengths, cosine and angle of vectors ``a`` and ``b`` (see :class:`VectorPair`)."""
    va, vb = _pair(a, b)
    dot = float(va @ vb)
    norm_a, norm_b = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    if norm_a == 0.0 or norm_b == 0.0:
        return VectorPair(dot, norm_a, norm_b, None, None)
    return VectorPair(dot, norm_a, norm_b, cosine(va, vb), angle_degrees(va, vb))
