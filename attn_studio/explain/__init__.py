"""The studio's numbers in lecture words: filled-in formulas and the step-by-step chain.

No Qt here. Everything reads the engine's :class:`~attn_studio.engine.MultiHeadResult`
(``q, k, v, scores, logits, weights, head_outputs, scale_factor, blocked``) and
formats it the way the seeds write it::

    q2·k3 = 0.55×0.57 + 0.87×0.85 + 0.66×0.64 = 1.4754

Nothing here computes: the intermediates of the explained query (scaled
scores, shifted logits, exps and their sums, ``α_j·v_j``) come from
:func:`attn_studio.engine.query_steps`, computed once per result and query for
every head at once. Numbers are written by :mod:`attn_studio.formatting`;
every public function takes ``digits``, the precision setting (decimals).

Indices in the text are 1-based, as a lecturer counts tokens.

The three parts: :mod:`.reading` (numbers as the seeds write them, what the engine
computed for a row, the heatmaps' titles), :mod:`.formulas` (the filled-in formulas of a
heatmap cell or a table cell) and :mod:`.steps` (the step-by-step chain of one query).
"""

from ..formatting import MINUS
from .formulas import (
    cell_tooltip, output_formula, score_formula, stable_weight_tooltip, table_cell_tooltip, weight_formula,
)
from .reading import (
    MAX_COMPONENTS, MAX_TERMS, TOOLTIP_COMPONENTS, UNSHIFTED_LIMIT, fmt, fmt_vector, format_factor, format_value,
    logits_title, scores_title, selected_head, steps_for,
)
from .steps import STEP_KEYS, Step, pipeline_steps, step_tooltip

__all__ = [
    "MINUS",
    "Step",
    "STEP_KEYS",
    "cell_tooltip",
    "fmt",
    "fmt_vector",
    "format_value",
    "logits_title",
    "output_formula",
    "pipeline_steps",
    "score_formula",
    "scores_title",
    "selected_head",
    "stable_weight_tooltip",
    "step_tooltip",
    "steps_for",
    "weight_formula",
]
