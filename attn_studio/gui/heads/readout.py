"""The Head Lab's words about heads: a head's name as the window shows it, and what silencing or
scaling heads changed."""

from __future__ import annotations

import numpy as np

from ...engine import cosine
from ...formatting import format_number
from ...pretrained.heads import sentence_embedding
from .. import presentation


def head_name(layer: int, head: int) -> str:
    """``"5.3"``: layer 5, head 3, counted from 1 (as the window shows them)."""
    return f"{layer + 1}.{head + 1}"


def silencing_readout(computed, query: int | None = None) -> str:
    """What the edits changed, in words: the heads silenced or scaled, how far the sentence
    embedding moved (per cent of its length, and the cosine), and where the selected query
    now looks most in the head whose answer changed most (``query``: that token instead of the
    state's query, e.g. the word of the last find)."""
    run, trained = computed.run, computed.trained_run
    scale = np.asarray(run.head_scale)
    changed = [(l, h, float(scale[l, h])) for l, h in zip(*np.nonzero(scale != 1.0))]
    if run is trained or not changed:
        if run is not trained:
            what = "your edits"
        else:
            return ("The trained model, unedited. Silence or scale a head (Model panel, or the model view) "
                    "to see what it changes.")
    else:
        parts = [f"silencing {head_name(l, h)}" if s == 0 else f"scaling {head_name(l, h)} by {format_number(s, 2)}"
                 for l, h, s in changed[:4]]
        what = ", ".join(parts) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
    e0, e1 = sentence_embedding(trained), sentence_embedding(run)
    n0 = float(np.linalg.norm(e0))
    moved = float(np.linalg.norm(e1 - e0)) / n0 * 100 if n0 else 0.0
    cos = cosine(e0, e1) if n0 and np.any(e1) else 1.0
    digits = presentation.digits()
    text = (f"{what[0].upper()}{what[1:]} moved the sentence embedding by {format_number(moved, digits)} % "
            f"(cosine {format_number(cos, digits)})")
    q = computed.state.query_index if query is None else query
    a0, a1 = trained.attentions[:, :, q], run.attentions[:, :, q]
    before, after = a0.argmax(axis=-1), a1.argmax(axis=-1)
    moved_heads = np.argwhere(before != after)
    tokens = run.tokens
    if len(moved_heads):
        gain = [a1[l, h, after[l, h]] - a0[l, h, after[l, h]] for l, h in moved_heads]
        l, h = moved_heads[int(np.argmax(gain))]
        text += (f"; '{tokens[q]}' now attends '{tokens[after[l, h]]}' most in {head_name(l, h)} "
                 f"(before: '{tokens[before[l, h]]}')")
        if len(moved_heads) > 1:
            text += f", and changed its strongest key in {len(moved_heads) - 1} more heads"
    else:
        text += f"; '{tokens[q]}' attends the same key most in every head"
    return text + "."
