"""What the views read beside a result, the same for the toy studio and a trained layer: the
weights under another softmax, the √d_k lecture's curves, and the scores' measured variance.
No Qt here."""

from __future__ import annotations

import numpy as np

from .curves import (
    CURVE_DIMS,
    SATURATION_SAMPLES,
    SATURATION_SEQ_LEN,
    VARIANCE_SAMPLES,
    cached_saturation_curve,
    cached_variance_curve,
)
from .engine import MultiHeadResult, softmax


class LayerReadings:
    """What the views read beside the result, the same for a toy model and a trained layer.

    A studio that mixes this in has ``result`` (a ``MultiHeadResult``), ``state``
    (with ``d_k``) and a ``_weights_with`` dict for its cache.
    """

    def weights_with(self, kind: str) -> np.ndarray:
        """The result's logits normalised with another softmax ``kind`` ``(heads, Tq, Tk)``.

        Lets a view put the stable result beside the naive one that overflowed.
        Computed once per result and kind (the heatmap and its tooltips ask often);
        the array is read-only.
        """
        cached = self._weights_with.get(kind)
        if cached is not None and cached[0] is self.result:
            return cached[1]
        weights = softmax(self.result.logits, axis=-1, kind=kind)
        weights.flags.writeable = False
        self._weights_with[kind] = (self.result, weights)
        return weights

    # -- curves (independent of the state; computed once per process) --------
    def variance_curve(self):
        """var(q·k) against d for random unit-variance vectors (shared by every studio)."""
        return cached_variance_curve(tuple(int(d) for d in CURVE_DIMS), VARIANCE_SAMPLES, 0)

    def saturation_curve(self):
        """Softmax saturation against d (shared by every studio)."""
        return cached_saturation_curve(tuple(int(d) for d in CURVE_DIMS), SATURATION_SEQ_LEN, SATURATION_SAMPLES, 0)

    def measured_score_variance(self) -> tuple[float, float]:
        """Variance of the result's raw scores q·k (all heads) and of the scaled ones (÷ d_k).

        NaN when there are fewer than two scores to measure.
        """
        result = self.result
        cached = getattr(self, "_score_variance", None)
        if cached is not None and cached[0] is result:
            raw = cached[1]
        else:
            raw = score_variance(result)
            self._score_variance = (result, raw)
        return raw, raw / self.state.d_k


def score_variance(result: MultiHeadResult) -> float:
    """The population variance (ddof 0, ``np.var``) of ``result``'s raw scores, all heads; NaN when
    there are fewer than two."""
    scores = result.scores
    return float(np.var(scores)) if scores.size >= 2 else float("nan")
