"""Head Lab: find a head, read its report card, and measure what it does.

Every function takes a :class:`~attn_studio.pretrained.model.ModelRun`
(``run = load_pretrained().run(text)``). Layers and heads count from 0, arrays
are float64, ``T = len(run.tokens)`` with the special tokens ([CLS] ... [SEP]
for BERT-family models), and ``A = run.attentions (L, H, T, T)`` holds each
head's own softmax (rows are queries; a silenced head's pattern still counts,
as in ``run.rollout()``).

- :func:`norm_attention`: how much of each value vector reaches the output
  (Kobayashi et al. 2020, "Attention is not only a weight");
- :func:`head_report`: a head's report card (entropy, confidence, where it
  looks: previous, next, itself, first, last, punctuation) and a role name;
- :func:`find_heads`: which heads link a query token or word to a key;
- :func:`head_importance`: how far the sentence embedding moves when one head
  is silenced (an ablation of every head in turn);
- :func:`attention_flow`: attention flow through the layers as a maximum flow
  (Abnar & Zuidema 2020), the companion of ``run.rollout()``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..engine import attend_scores, feed_forward, layer_norm
from .errors import ModelError

ROLE_MEASURES = ("previous", "next", "self_", "first", "last", "punctuation")
ROLE_NAMES = {
    "previous": "previous token",
    "next": "next token",
    "self_": "self",
    "first": "first token",
    "last": "last token",
    "punctuation": "punctuation",
}
# A measure names the head when it holds at least this share of the attention;
# otherwise a head spread this evenly (entropy / ln T) is "broad".
ROLE_THRESHOLD = 0.5
BROAD_THRESHOLD = 0.8

# scipy's maximum flow works on integers: capacities are weights times FLOW_SCALE,
# rounded (one unit is 9.3e-10; every flow is at most 1, so int32 holds it).
FLOW_SCALE = 2**30
# Pairs solved in one call of maximum_flow, each in its own copy of the graph.
FLOW_BATCH = 32
GPT2_SPACE = "\u0120"  # 'Ġ', byte-level BPE's mark of a leading space


class Cancelled(Exception):
    """:func:`head_importance` stopped before its last head because it was asked to."""


def _attentions(run) -> np.ndarray:
    a = run.attentions
    if a.shape[-1] == 0:
        raise ModelError("the text has no tokens: give a sentence to measure the heads on")
    return a


def _frozen(a) -> np.ndarray:
    a = np.asarray(a)
    a.setflags(write=False)
    return a


# -- norm attention ---------------------------------------------------------------------


def value_vectors(run, layer: int) -> np.ndarray:
    """``(H, T, d_model)``: f_lh(x_j) = head_scale[l, h] · v[l, h, j] · W_O^h for one layer.

    What head ``h`` adds to the output for each key token ``j`` when it gives
    that token all its attention: the value (with b_V and any edited W_V) times
    the head's rows of the row-vector W_O (``y = x·W_O + b_O``), scaled as the
    run scales the head. ``sum_h sum_j A[l, h, i, j] f_lh(x_j) + b_O`` is the
    attention output of layer ``l`` for query ``i``.
    """
    model = run.model
    if not (isinstance(layer, (int, np.integer)) and not isinstance(layer, bool) and 0 <= layer < model.layers):
        raise ModelError(f"layer must be 0 to {model.layers - 1}, got {layer!r}")
    result = run.layer_results[layer]
    heads, d_head = model.heads, model.d_head
    w_o = model.weights.layers[layer].w_o.reshape(heads, d_head, -1)
    return np.matmul(result.v, w_o) * run.head_scale[layer][:, None, None]


def norm_attention(run) -> np.ndarray:
    """``(L, H, T, T)``: N[l, h, i, j] = || A[l, h, i, j] · f_lh(x_j) ||₂ (Kobayashi et al. 2020).

    ``f_lh(x_j)`` is :func:`value_vectors`: the value of token ``j`` (from the
    attention's input: the hidden state for BERT-family models, ln_1 of it for
    GPT-2; b_V and edited W_V included) through head ``h``'s rows of W_O, times
    the run's head scale. The output bias is not included. A silenced head is 0
    everywhere. Weights are never negative, so N = A · ||f_lh(x_j)||.
    """
    a = _attentions(run)
    norms = np.stack([np.linalg.norm(value_vectors(run, layer), axis=-1) for layer in range(a.shape[0])])
    return a * norms[:, :, None, :]


# -- the report card --------------------------------------------------------------------


@dataclass(frozen=True)
class HeadReport:
    """A report card of every head, each field an ``(L, H)`` array (read-only).

    Each measure is a mean over the T query rows of the head's attention:
    ``entropy`` (nats) and ``entropy_norm`` (over ln T), ``confidence`` (the
    largest weight of a row), and the share of attention on the ``previous``
    token, the ``next`` token, the query itself (``self_``), the ``first`` and
    ``last`` tokens, and ``punctuation``. ``role`` names the head (strings):
    "previous token", "next token", "self", "first token", "last token",
    "punctuation", "broad" or "mixed". See :func:`head_report`.
    """

    entropy: np.ndarray
    entropy_norm: np.ndarray
    confidence: np.ndarray
    previous: np.ndarray
    next: np.ndarray
    self_: np.ndarray
    first: np.ndarray
    last: np.ndarray
    punctuation: np.ndarray
    role: np.ndarray

    MEASURES = ("entropy", "entropy_norm", "confidence", "previous", "next", "self_", "first", "last",
                "punctuation")


def token_text(run, index: int) -> str:
    """The text of token ``index`` as the report reads it: GPT-2's tokens without their 'Ġ' marker.

    GPT-2's tokens are otherwise read as they are written: a character outside
    ASCII that the tokenizer splits into byte pieces ("«" as "Â", "«") is judged
    piece by piece.
    """
    token = run.tokens[index]
    if run.model.kind == "gpt2" and token.startswith(GPT2_SPACE):
        token = token[1:]
    return token


def is_punctuation(text: str) -> bool:
    """True when ``text`` is made only of Unicode punctuation (categories P*).

    « » — … % count; $ + = ^ | ~ € are symbols (S*) and do not; an empty text
    (a GPT-2 token that is only a space) is not punctuation.
    """
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


def punctuation_tokens(run) -> np.ndarray:
    """``(T,)`` bool: the tokens :func:`head_report` counts as punctuation.

    A token counts when its text (:func:`token_text`) is punctuation; for
    BERT-family models positions 0 and T - 1 ([CLS], [SEP]) never count.
    """
    t = len(run.tokens)
    mask = np.array([is_punctuation(token_text(run, j)) for j in range(t)], dtype=bool)
    if run.model.kind == "bert" and t:
        mask[0] = mask[-1] = False
    return mask


def head_report(run) -> HeadReport:
    """Every head's report card on this run (see :class:`HeadReport`).

    Per head, means over the query rows i of:
    entropy ``-sum_j A log A`` (0 log 0 = 0) and ``entropy_norm = entropy / ln T``;
    confidence ``max_j A[i, j]``; previous ``A[i, i-1]`` (rows 1..T-1); next
    ``A[i, i+1]`` (rows 0..T-2); self_ ``A[i, i]``; first ``A[i, 0]``; last
    ``A[i, T-1]``; punctuation ``sum of A[i, j]`` over :func:`punctuation_tokens`.
    When T = 1, entropy_norm, previous and next are 0.

    ``role``: the largest of previous, next, self_, first, last, punctuation
    names the head when it is at least 0.5 (exact ties go to the one earlier in
    that list); otherwise "broad" when entropy_norm >= 0.8, else "mixed".
    """
    a = _attentions(run)
    t = a.shape[-1]
    log_a = np.log(a, out=np.zeros_like(a), where=a > 0)
    entropy = -(a * log_a).sum(axis=-1).mean(axis=-1)
    zeros = np.zeros(a.shape[:2])
    entropy_norm = entropy / np.log(t) if t > 1 else zeros.copy()
    if t > 1:
        previous = np.diagonal(a, offset=-1, axis1=2, axis2=3).mean(axis=-1)
        following = np.diagonal(a, offset=1, axis1=2, axis2=3).mean(axis=-1)
    else:
        previous, following = zeros.copy(), zeros.copy()
    measures = {
        "entropy": entropy,
        "entropy_norm": entropy_norm,
        "confidence": a.max(axis=-1).mean(axis=-1),
        "previous": previous,
        "next": following,
        "self_": np.diagonal(a, axis1=2, axis2=3).mean(axis=-1),
        "first": a[..., 0].mean(axis=-1),
        "last": a[..., -1].mean(axis=-1),
        "punctuation": a[..., punctuation_tokens(run)].sum(axis=-1).mean(axis=-1),
    }
    stacked = np.stack([measures[name] for name in ROLE_MEASURES])
    best = stacked.argmax(axis=0)  # the first of equal maxima: ties go in ROLE_MEASURES order
    best_value = stacked.max(axis=0)
    names = np.array([ROLE_NAMES[name] for name in ROLE_MEASURES])
    role = np.where(best_value >= ROLE_THRESHOLD, names[best],
                    np.where(entropy_norm >= BROAD_THRESHOLD, "broad", "mixed"))
    return HeadReport(**{name: _frozen(value) for name, value in measures.items()}, role=_frozen(role))


# -- finding heads ----------------------------------------------------------------------


def _positions(run, which: str, item) -> tuple:
    t = len(run.tokens)
    if isinstance(item, (bool, np.bool_)):
        raise ModelError(f"the {which} must be a token index or a word, got {item!r}")
    if isinstance(item, (int, np.integer)):
        if item < 0:
            raise ModelError(f"the {which} token index {int(item)} is negative; indices count from 0 to {t - 1}")
        if item >= t:
            raise ModelError(f"the {which} token index {int(item)} is out of range: the text has {t} tokens "
                             f"(0 to {t - 1})")
        return (int(item),)
    if isinstance(item, str):
        if not item.strip():
            raise ModelError(f"the {which} word is empty: name a word of the sentence")
        return run.word_tokens(item)  # a ModelError naming the word when it is absent
    raise ModelError(f"the {which} must be a token index or a word, got {type(item).__name__}")


def find_heads(run, query, key) -> list[tuple[int, int, float]]:
    """Every head as ``(layer, head, weight)``, largest weight first (ties in (layer, head) order).

    ``query`` and ``key`` are token indices (0 <= index < T) or words (the tokens
    of the word's first occurrence, ``run.word_tokens``). The weight is the mean
    over the query's tokens of the sum over the key's tokens of A[l, h, q, k]:
    the share of the query word's attention that goes to the key word. Raises
    :class:`ModelError` naming a negative or out-of-range index or an absent word.
    """
    a = _attentions(run)
    rows = _positions(run, "query", query)
    cols = _positions(run, "key", key)
    weights = a[:, :, list(rows)][:, :, :, list(cols)].sum(axis=-1).mean(axis=-1)
    heads = a.shape[1]
    order = np.argsort(-weights.ravel(), kind="stable")
    return [(int(i // heads), int(i % heads), float(weights.flat[i])) for i in order]


# -- importance by ablation -------------------------------------------------------------

# Largest (sentences x heads x T x T) block of scores formed at once when the
# ablations of one layer run side by side: 4M floats, 32 MB.
ABLATION_BLOCK = 4_000_000


def _cosine_distance(a: np.ndarray, b: np.ndarray) -> float:
    norms = float(np.linalg.norm(a)) * float(np.linalg.norm(b))
    if norms == 0.0:
        return 0.0 if not (a.any() or b.any()) else 1.0
    return 1.0 - float(a @ b) / norms


def _finish_layer(model, layer: int, x: np.ndarray, att_out: np.ndarray) -> np.ndarray:
    """The rest of a layer after attention, on rows (n, d_model): residuals, norms, feed-forward."""
    cfg = model.config
    lw = model.weights.layers[layer]
    if lw.ln_1 is None:  # a lab model (attention only): the residual stream and nothing else
        return x + att_out
    if cfg.kind == "bert":
        h = layer_norm(att_out + x, *lw.ln_1, eps=cfg.eps)
        ff = feed_forward(h, lw.w_1, lw.b_1, lw.w_2, lw.b_2, cfg.activation)
        return layer_norm(ff + h, *lw.ln_2, eps=cfg.eps)
    h = x + att_out
    return h + feed_forward(layer_norm(h, *lw.ln_2, eps=cfg.eps), lw.w_1, lw.b_1, lw.w_2, lw.b_2, cfg.activation)


def _layer_batch(model, layer: int, x: np.ndarray, scale: np.ndarray, edits) -> np.ndarray:
    """``TrainedModel._layer`` for a batch of sentences ``x (B, T, d_model)`` of one length.

    The same layer as the model's own forward pass (checked against it in the
    tests), with every head's projection done as one product over all B·T
    rows, which is what makes ablating many heads affordable. The attention
    after the scores is the engine's ``attend_scores``.
    """
    cfg = model.config
    lw = model.weights.layers[layer]
    w = model._layer_weights(layer, edits)
    n, t, d = x.shape
    heads, d_head = model.heads, model.d_head
    rows = x.reshape(n * t, d)
    a_in = rows if cfg.kind == "bert" or lw.ln_1 is None else layer_norm(rows, *lw.ln_1, eps=cfg.eps)

    def project(which: str, bias: np.ndarray) -> np.ndarray:
        stacked = w[which].transpose(1, 0, 2).reshape(d, heads * d_head)
        out = a_in @ stacked + bias.reshape(-1)
        return out.reshape(n, t, heads, d_head).transpose(0, 2, 1, 3)

    q, k, v = project("q", lw.b_q), project("k", lw.b_k), project("v", lw.b_v)
    causal = cfg.kind == "gpt2" or getattr(model, "causal", False)  # a lab model says itself
    _, _, head_outputs, _, _ = attend_scores(
        q @ np.swapaxes(k, -1, -2), v, d_k=d_head, scale=cfg.scale_attention, causal=causal,
        temperature=float(layer + 1) if cfg.scale_by_layer else 1.0,
    )
    head_outputs *= scale[:, None, None]
    concat = head_outputs.transpose(0, 2, 1, 3).reshape(n * t, heads * d_head)
    att_out = concat @ lw.w_o + lw.b_o
    return _finish_layer(model, layer, rows, att_out).reshape(n, t, d)


def _silenced_embeddings(run, layer: int, silenced: list[int]) -> np.ndarray:
    """``(len(silenced), d_model)``: the sentence embedding with each listed head of ``layer`` silenced.

    Layer ``layer``'s scores and weights do not change when one of its heads
    is silenced: only that head's slice of the concatenated head outputs goes
    to 0 before W_O. The layers above are recomputed for all the variants at once.
    """
    model = run.model
    result = run.layer_results[layer]
    t, d = result.output.shape
    d_head = model.d_head
    concat = np.repeat(result.concat[None], len(silenced), axis=0)
    for row, head in enumerate(silenced):
        concat[row, :, head * d_head:(head + 1) * d_head] = 0.0
    lw = model.weights.layers[layer]
    att_out = concat.reshape(-1, concat.shape[-1]) @ lw.w_o + lw.b_o
    x = np.broadcast_to(run.hidden_states[layer], (len(silenced), t, d)).reshape(-1, d)
    states = _finish_layer(model, layer, x, att_out).reshape(len(silenced), t, d)
    for above in range(layer + 1, model.layers):
        states = _layer_batch(model, above, states, run.head_scale[above], run.edits)
    final = model.weights.ln_final
    if final is not None:
        states = layer_norm(states.reshape(-1, d), *final, eps=model.config.eps).reshape(states.shape)
    return states.mean(axis=1)


def sentence_embedding(run) -> np.ndarray:
    """The sentence embedding ``head_importance`` compares: the mean of the last hidden states
    over all T tokens (special tokens included), shape (d_model,)."""
    return run.hidden_states[-1].mean(axis=0)


def head_importance(run, progress: Callable[[int, int], object] | None = None, *,
                    cancel: Callable[[], bool] | None = None) -> np.ndarray:
    """``(L, H)``: 1 - cos(e, e_-h) for every head, silencing one head at a time.

    ``e`` is the sentence embedding of ``run`` (the mean of
    ``run.hidden_states[-1]`` over all T tokens) and ``e_-h`` the same with head
    (l, h) silenced (scale 0) on top of the run's own edits and head_mask. A
    head already silenced scores 0. The ablations reuse the run's layers below
    the silenced head's and its own attention weights; the heads of one layer
    are ablated side by side (a few at a time for long texts) through the
    layers above.

    ``progress(done, total)`` is called once per head with done = 1..total
    (total = L·H), in (layer, head) order. To stop early, have ``progress``
    return ``False`` (exactly False; None goes on) or pass ``cancel``, a
    callable asked before each group of heads is computed that returns True to
    stop: either raises :class:`Cancelled` and nothing is returned.
    """
    a = _attentions(run)
    layers, heads, t, _ = a.shape
    total = layers * heads
    e = sentence_embedding(run)
    importance = np.zeros((layers, heads))
    group = max(1, ABLATION_BLOCK // max(1, heads * t * t))
    done = 0
    for layer in range(layers):
        for first in range(0, heads, group):
            members = list(range(first, min(heads, first + group)))
            if cancel is not None and cancel():
                raise Cancelled(f"head importance stopped after {done} of {total} heads")
            live = [h for h in members if run.head_scale[layer, h] != 0.0]
            if live:
                for head, embedding in zip(live, _silenced_embeddings(run, layer, live)):
                    importance[layer, head] = _cosine_distance(e, embedding)
            for _ in members:
                done += 1
                if progress is not None and progress(done, total) is False:
                    raise Cancelled(f"head importance stopped after {done} of {total} heads")
    return importance


# -- attention flow ---------------------------------------------------------------------


def flow_capacities(run) -> np.ndarray:
    """``(L, T, T)``: R[l] = 0.5 · mean_h A[l] + 0.5 · I, rows renormalised (what ``run.rollout()`` multiplies).

    R[l, i, j] is the capacity of the edge from token j below layer l to token i above it.
    """
    a = _attentions(run)
    t = a.shape[-1]
    mixed = 0.5 * a.mean(axis=1) + 0.5 * np.eye(t)
    total = mixed.sum(axis=-1, keepdims=True)
    total[total == 0] = 1.0
    return mixed / total


def _batch_flows(cap: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Maximum flows (in capacity units) of ``pairs`` (k, 2) = (output i, input j), one scipy call.

    The graph holds one copy of levels 1..L-1 per pair, joined only through a
    common super source (node 0) and super sink (node 1): the source feeds copy
    k's level 1 as input token j_k would (capacities R[0, :, j_k]) and copy k's
    level L-1 drains into the sink as output token i_k would (R[L-1, i_k, :]).
    The copies share no node, so a maximum flow of the whole graph is a maximum
    flow of every copy, and copy k's value is what leaves the source into it.
    """
    # Imported here: scipy.sparse.csgraph takes most of a second to import, and
    # opening the window or a model never needs it.
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    layers, t, _ = cap.shape
    k = len(pairs)
    per = (layers - 1) * t                      # nodes in one copy
    base = 2 + np.arange(k) * per               # first node of each copy (its level 1)
    out_i, in_j = pairs[:, 0], pairs[:, 1]
    tokens = np.arange(t)
    # Level l (1..L-1) token m of copy c is node base[c] + (l - 1)·t + m.
    src_rows = np.zeros(k * t, dtype=np.int64)
    src_cols = (base[:, None] + tokens).ravel()
    src_data = cap[0][:, in_j].T.ravel()        # R[0, m, j_c]
    snk_rows = (base[:, None] + (layers - 2) * t + tokens).ravel()
    snk_cols = np.ones(k * t, dtype=np.int64)
    snk_data = cap[layers - 1][out_i].ravel()   # R[L-1, i_c, m]
    mid_rows, mid_cols, mid_data = [src_rows, snk_rows], [src_cols, snk_cols], [src_data, snk_data]
    for layer in range(1, layers - 1):
        to, frm = np.nonzero(cap[layer])
        local_from = (layer - 1) * t + frm
        local_to = layer * t + to
        mid_rows.append((base[:, None] + local_from).ravel())
        mid_cols.append((base[:, None] + local_to).ravel())
        mid_data.append(np.tile(cap[layer][to, frm], k))
    rows, cols, data = (np.concatenate(x) for x in (mid_rows, mid_cols, mid_data))
    keep = data > 0
    n = 2 + k * per
    graph = csr_matrix((data[keep].astype(np.int32), (rows[keep], cols[keep])), shape=(n, n))
    flow = maximum_flow(graph, 0, 1).flow
    start, end = flow.indptr[0], flow.indptr[1]
    copy = (flow.indices[start:end] - 2) // per
    return np.bincount(copy, weights=flow.data[start:end].astype(np.float64), minlength=k)


def attention_flow(run) -> np.ndarray:
    """``(T, T)``: attention flow (Abnar & Zuidema 2020); flow[i, j] from input token j to output token i.

    A layered graph with T nodes per level 0..L: the edge from node j at level
    l to node i at level l + 1 has capacity R[l, i, j] (:func:`flow_capacities`).
    flow[i, j] is the value of the maximum flow from node j at level 0 to node
    i at level L, computed by scipy's ``maximum_flow`` (Dinic) on capacities
    scaled by 2**30 and rounded: accurate to about 1e-8 (a cut of c edges is
    off by at most c·2**-31). Where rollout multiplies the paths' weights, flow
    asks how much can get through the narrowest cut; flow[i, j] <= 1.

    The T² pairs are solved in batches: each call of ``maximum_flow`` takes one
    graph holding a disjoint copy of the network per pair (see
    ``_batch_flows``), so scipy's fixed cost per call is paid T²/32 times, not T² times.
    """
    r = flow_capacities(run)
    layers, t, _ = r.shape
    if layers == 1:
        return r[0].copy()  # one edge from j to i: its capacity is the flow
    cap = np.rint(r * FLOW_SCALE).astype(np.int64)
    pairs = np.array([(i, j) for i in range(t) for j in range(t)], dtype=np.int64)
    flows = np.empty(len(pairs))
    for start in range(0, len(pairs), FLOW_BATCH):
        chunk = pairs[start:start + FLOW_BATCH]
        flows[start:start + len(chunk)] = _batch_flows(cap, chunk)
    return flows.reshape(t, t) / FLOW_SCALE
