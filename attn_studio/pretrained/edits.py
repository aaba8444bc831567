"""Edits to a trained model: a head silenced or scaled, a head's W_Q / W_K / W_V replaced.

An immutable value (:class:`Edits`); ``ModelRun.rerun(edits)`` recomputes from the lowest layer
it touches. Layers and heads are counted from 0, like the arrays they index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from .errors import ModelError

PROJECTIONS = ("q", "k", "v")
MAX_HEAD_SCALE = 2.0


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class Edits:
    """Changes to a trained model, as a value (compare, store, undo by keeping the old one).

    ``head_scale`` maps ``(layer, head)`` to a multiplier in [0, 2] of that
    head's weighted values before W_O (0 silences the head). ``weights`` maps
    ``(layer, head, "q" | "k" | "v")`` to a replacement ``(d_model, d_head)``
    matrix in the row-vector form ``Q = X·W_Q``. A head absent from both is the
    trained head. Build them with the ``with_*`` methods; the empty ``Edits()``
    is the trained model.
    """

    head_scale: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    weights: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def with_head_scale(self, layer: int, head: int, scale: float) -> Edits:
        """A copy in which head ``head`` of layer ``layer`` is scaled by ``scale`` (0 to 2; 1 is trained)."""
        try:
            scale = float(scale)
        except (TypeError, ValueError):
            raise ModelError(f"a head scale must be a number, got {scale!r}") from None
        if not 0.0 <= scale <= MAX_HEAD_SCALE:
            raise ModelError(f"a head scale must be between 0 and {MAX_HEAD_SCALE:g}, got {scale!r}")
        scales = dict(self.head_scale)
        if scale == 1.0:
            scales.pop((int(layer), int(head)), None)
        else:
            scales[(int(layer), int(head))] = scale
        return Edits(MappingProxyType(scales), self.weights)

    def with_weights(self, layer: int, head: int, which: str, matrix) -> Edits:
        """A copy in which head ``head`` of layer ``layer`` uses ``matrix`` as its W_``which``.

        ``which`` is ``"q"``, ``"k"`` or ``"v"``; ``matrix`` is ``(d_model, d_head)``,
        finite (its shape is checked against the model when it runs).
        """
        if which not in PROJECTIONS:
            raise ModelError(f"which must be one of q, k, v; got {which!r}")
        try:
            matrix = np.asarray(matrix, dtype=np.float64)
        except (TypeError, ValueError):
            raise ModelError(f"W_{which.upper()} must be an array of numbers") from None
        if matrix.ndim != 2 or not np.isfinite(matrix).all():
            raise ModelError(f"W_{which.upper()} must be a finite (d_model, d_head) matrix, got shape {matrix.shape}")
        weights = dict(self.weights)
        weights[(int(layer), int(head), which)] = _frozen(matrix)
        return Edits(self.head_scale, MappingProxyType(weights))

    def reset_head(self, layer: int, head: int) -> Edits:
        """A copy with head ``head`` of layer ``layer`` back to its trained scale and weights."""
        key = (int(layer), int(head))
        scales = {k: v for k, v in self.head_scale.items() if k != key}
        weights = {k: v for k, v in self.weights.items() if k[:2] != key}
        return Edits(MappingProxyType(scales), MappingProxyType(weights))

    @property
    def is_trained(self) -> bool:
        """True when nothing is edited."""
        return not self.head_scale and not self.weights

    def layers_touched(self) -> set[int]:
        """The layers this value changes."""
        return {k[0] for k in self.head_scale} | {k[0] for k in self.weights}

    def edit_names(self) -> dict[int, list[str]]:
        """What is edited, per layer (0-based, lowest first), as the window names heads (from 1):
        ``{3: ["4.2 silenced"], 5: ["6.12 × 0.5", "6.3 W_Q"]}``."""
        names: dict[int, list[str]] = {}
        for (layer, head), scale in sorted(self.head_scale.items()):
            what = "silenced" if scale == 0.0 else f"× {scale:g}"
            names.setdefault(int(layer), []).append(f"{layer + 1}.{head + 1} {what}")
        for layer, head, which in sorted(self.weights):
            names.setdefault(int(layer), []).append(f"{layer + 1}.{head + 1} W_{which.upper()}")
        return dict(sorted(names.items()))

    def first_attention_changed(self) -> int | None:
        """The lowest layer (0-based) whose attention weights these edits change; None when nothing is
        edited. A scaled or silenced head, or an edited W_V, changes what its layer passes on, so the
        attention of the layers above it only; an edited W_Q or W_K changes its own head's in its layer.
        A layer past the last means that no attention changes (only the output does)."""
        layers = [layer + 1 for layer, _ in self.head_scale]
        layers += [layer + (which == "v") for layer, _, which in self.weights]
        return min(layers) if layers else None

    def first_difference(self, other: Edits) -> int | None:
        """The lowest layer where ``self`` and ``other`` differ, or None if they are the same."""
        layers = set()
        for key in set(self.head_scale) | set(other.head_scale):
            if self.head_scale.get(key, 1.0) != other.head_scale.get(key, 1.0):
                layers.add(key[0])
        for key in set(self.weights) | set(other.weights):
            a, b = self.weights.get(key), other.weights.get(key)
            if a is None or b is None or a.shape != b.shape or not np.array_equal(a, b):
                layers.add(key[0])
        return min(layers) if layers else None

    def to_dict(self) -> dict:
        """Plain JSON-able form (lists of numbers) for session files."""
        return {
            "head_scale": [[l, h, s] for (l, h), s in sorted(self.head_scale.items())],
            "weights": [[l, h, w, m.tolist()] for (l, h, w), m in sorted(self.weights.items(), key=lambda i: i[0])],
        }

    @classmethod
    def from_dict(cls, data) -> Edits:
        """Inverse of :meth:`to_dict`; raises :class:`ModelError` on anything malformed."""
        edits = cls()
        try:
            for layer, head, scale in data.get("head_scale", []):
                edits = edits.with_head_scale(_index(layer), _index(head), scale)
            for layer, head, which, matrix in data.get("weights", []):
                edits = edits.with_weights(_index(layer), _index(head), which, matrix)
        except (AttributeError, TypeError, ValueError) as exc:
            if isinstance(exc, ModelError):
                raise
            raise ModelError(f"the model edits are malformed ({exc})") from None
        return edits


def _index(value) -> int:
    if type(value) is not int or value < 0:
        raise ModelError(f"a layer or head index must be a whole number >= 0, got {value!r}")
    return value
