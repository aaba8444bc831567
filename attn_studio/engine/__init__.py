"""The attention engine: pure NumPy, no Qt, no state. Functions in, arrays out.

Everything the studio shows (scores, logits, weights, head outputs, variance
curves) is computed here and nowhere else.
"""

from .attention import (
    SOFTMAX_KINDS,
    AttentionResult,
    MultiHeadResult,
    SoftmaxSteps,
    additive_scores,
    attend_scores,
    attention,
    causal_mask,
    multi_head_attention,
    softmax,
    softmax_steps,
)
from .errors import EngineError
from .layers import (
    ACTIVATIONS,
    attention_rollout,
    feed_forward,
    gelu,
    gelu_new,
    layer_drift,
    layer_norm,
    layerwise_cosine,
    relu,
)
from .positions import POSITION_BASE, position_periods
from .projection import Projection2D, VectorPair, angle_degrees, cosine, pca_2d, project, vector_pair
from .steps import QuerySteps, query_steps
from .statistics import SaturationCurve, VarianceCurve, dot_product_variance, softmax_saturation
from .text import Vocabulary, sinusoidal_positions, tokenize

__all__ = [
    "ACTIVATIONS",
    "POSITION_BASE",
    "SOFTMAX_KINDS",
    "AttentionResult",
    "EngineError",
    "MultiHeadResult",
    "Projection2D",
    "QuerySteps",
    "SaturationCurve",
    "SoftmaxSteps",
    "VarianceCurve",
    "VectorPair",
    "Vocabulary",
    "additive_scores",
    "angle_degrees",
    "attend_scores",
    "attention",
    "attention_rollout",
    "causal_mask",
    "cosine",
    "dot_product_variance",
    "feed_forward",
    "gelu",
    "gelu_new",
    "layer_drift",
    "layer_norm",
    "layerwise_cosine",
    "multi_head_attention",
    "pca_2d",
    "position_periods",
    "project",
    "relu",
    "query_steps",
    "sinusoidal_positions",
    "softmax",
    "softmax_saturation",
    "softmax_steps",
    "tokenize",
    "vector_pair",
]
