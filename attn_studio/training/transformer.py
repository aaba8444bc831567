"""An attention-only transformer with backpropagation written by hand (NumPy, float64).

The model of "A Mathematical Framework for Transformer Circuits" (Elhage et al. 2021) at
toy size: token and position embeddings, a stack of causal multi-head attention layers whose
outputs are added to the residual stream, and an unembedding. No MLP, no layer norm, no
biases, so every path from a token to a logit goes through attention and nothing else.

Each layer is one small forward function that returns its output and a cache, and one
backward function that takes the gradient of the output and that cache and returns the
gradients of its inputs and parameters. Everything runs on whole batches, (B, T, d_model)
for the residual stream and (B, heads, T, T) for the attention weights: no Python loop
over tokens, heads or rows.

Two shortcuts keep a training step in milliseconds without changing a number beyond float
rounding: the first layer reads the bare embeddings, so its q, k and v are looked up from
(vocab + T)-row tables (`embed_project`) instead of multiplied out for all B·T positions;
and the softmax's backward takes its row sums from the head outputs
(`causal_softmax_backward`).

Parameter names: ``W_E`` (vocab × d_model) and ``W_pos`` (n_ctx × d_model), the embeddings;
``layer{l}.W_Q``, ``layer{l}.W_K``, ``layer{l}.W_V`` (d_model × heads·d_head) and
``layer{l}.W_O`` (heads·d_head × d_model) for each layer l = 0, 1, ...; ``W_U``
(d_model × vocab), the unembedding. Head h owns columns h·d_head .. (h+1)·d_head - 1 of
W_Q, W_K and W_V and the same rows of W_O.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from .experiment import TrainingError

__all__ = [
    "AttentionOnlyTransformer",
    "attention_backward",
    "attention_forward",
    "causal_mask",
    "causal_softmax",
    "causal_softmax_backward",
    "embed_backward",
    "embed_forward",
    "embed_project",
    "embed_project_backward",
    "next_token_losses",
    "qkv_gradients",
    "qkv_weights",
    "unembed_backward",
    "unembed_forward",
]


# --- embeddings ------------------------------------------------------------------------

def embed_forward(tokens: np.ndarray, W_E: np.ndarray, W_pos: np.ndarray):
    """Residual stream at the start: x[b, t] = W_E[tokens[b, t]] + W_pos[t].

    Returns ``(x, cache)``; x is (B, T, d_model).
    """
    b, t = tokens.shape
    x = W_E[tokens] + W_pos[:t]
    # The backward pass sums gradients per token with this one-hot matrix (B·T, vocab).
    one_hot = np.zeros((b * t, W_E.shape[0]))
    one_hot[np.arange(b * t), tokens.reshape(-1)] = 1.0
    return x, {"one_hot": one_hot, "tokens": tokens.reshape(-1), "t": t, "W_E": W_E,
               "W_pos": W_pos}


def embed_backward(dx: np.ndarray, cache):
    """Gradients ``(dW_E, dW_pos)`` from dx (B, T, d_model).

    A token's row collects the gradient of every position it sits at: a one-hot matrix
    product does that sum for all rows at once (repeated tokens add up, unused rows stay 0).
    """
    b, t, d = dx.shape
    dW_E = cache["one_hot"].T @ dx.reshape(b * t, d)
    dW_pos = np.zeros_like(cache["W_pos"])
    dW_pos[:t] = dx.sum(axis=0)
    return dW_E, dW_pos


def embed_project(W_QKV: np.ndarray, cache) -> np.ndarray:
    """x W_QKV for the embeddings x of `embed_forward`, looked up rather than multiplied out.

    x[b, t] = W_E[token] + W_pos[t], so x[b, t] W = (W_E W)[token] + (W_pos W)[t]: two
    vocab-row and T-row products and a gather instead of a (B·T)-row product. The first
    attention layer takes its q, k and v this way. Returns (B·T, columns of W_QKV).
    """
    one_hot, t = cache["one_hot"], cache["t"]
    b = one_hot.shape[0] // t
    tokens = cache["tokens"]
    by_token = cache["W_E"] @ W_QKV
    by_position = cache["W_pos"][:t] @ W_QKV
    qkv = np.take(by_token, tokens, axis=0)
    qkv.reshape(b, t, -1)[...] += by_position
    return qkv


def embed_project_backward(d_qkv: np.ndarray, W_QKV: np.ndarray, cache):
    """Gradients ``(dW_E, dW_pos, dW_QKV)`` of `embed_project` from d_qkv (B·T, columns).

    Summing d_qkv per token (the one-hot product) and per position first leaves only
    vocab-row and T-row products: dW_QKV = W_Eᵀ G + W_posᵀ S, dW_E = G W_QKVᵀ,
    dW_pos = S W_QKVᵀ, with G the per-token and S the per-position sums.
    """
    one_hot, t = cache["one_hot"], cache["t"]
    b = one_hot.shape[0] // t
    per_token = one_hot.T @ d_qkv                                  # (vocab, columns)
    per_position = d_qkv.reshape(b, t, -1).sum(axis=0)             # (T, columns)
    W_E, W_pos = cache["W_E"], cache["W_pos"]
    dW_QKV = W_E.T @ per_token + W_pos[:t].T @ per_position
    dW_pos = np.zeros_like(W_pos)
    dW_pos[:t] = per_position @ W_QKV.T
    return per_token @ W_QKV.T, dW_pos, dW_QKV


# --- causal multi-head attention -------------------------------------------------------

@functools.lru_cache(maxsize=None)
def causal_mask(t: int) -> np.ndarray:
    """(T, T) additive mask: 0 where key j <= query i, -inf above the diagonal (read-only)."""
    mask = np.zeros((t, t))
    mask[np.triu_indices(t, k=1)] = -np.inf
    mask.flags.writeable = False
    return mask


@functools.lru_cache(maxsize=None)
def _visible(t: int) -> np.ndarray:
    """(T, T) bool: True where key j <= query i (read-only)."""
    visible = np.tril(np.ones((t, t), dtype=bool))
    visible.flags.writeable = False
    return visible


_scratch_space = threading.local()


def _scratch(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised float64 array of ``shape`` that this thread reuses for ``name``.

    Only for temporaries that die inside the function asking (never returned or cached): fresh
    arrays of these sizes are handed back to the system when freed and faulted in again on the
    next step, which measured several percent of a training step. One space per thread, so two
    threads training or inspecting models at once never share one.
    """
    arrays = getattr(_scratch_space, "arrays", None)
    if arrays is None:
        arrays = _scratch_space.arrays = {}
    a = arrays.get(name)
    if a is None or a.shape != shape:
        a = arrays[name] = np.empty(shape)
    return a


def _split_heads(a: np.ndarray, heads: int) -> np.ndarray:
    """(B, T, heads·d) -> (B, heads, T, d)."""
    b, t, hd = a.shape
    return a.reshape(b, t, heads, hd // heads).transpose(0, 2, 1, 3)


def _merge_heads(a: np.ndarray) -> np.ndarray:
    """(B, heads, T, d) -> (B, T, heads·d)."""
    b, h, t, d = a.shape
    return a.transpose(0, 2, 1, 3).reshape(b, t, h * d)


def causal_softmax(scores: np.ndarray) -> np.ndarray:
    """Softmax over the keys (last axis) under the causal mask, computed in place.

    ``scores`` (..., T, T) is overwritten with the weights and returned: entries above the
    diagonal get weight exactly 0, each row sums to 1. The same numbers as `layers.softmax`
    with a causal mask, up to rounding, without its full-size temporaries (at this size
    they are most of a step's time).

    Softmax does not change when a row is shifted; the shift only keeps exp in range. When
    all scores lie within 600 of each other, one shift by their maximum does: every exp is
    then between e^-600 (a normal float64) and 1, so nothing overflows and no row sums to 0.
    Otherwise each row is shifted by its own maximum over the keys it may see.
    """
    t = scores.shape[-1]
    top, bottom = scores.max(), scores.min()
    if top - bottom <= 600.0:
        scores -= top
    else:
        scores += causal_mask(t)  # -inf above the diagonal: the maximum over visible keys
        scores -= scores.max(axis=-1, keepdims=True)
    # exp of the visible half only (exp(-inf) costs as much as any other). Above the diagonal
    # the shifted scores are left, all <= 0 (shifted by the maximum of all, or -inf in the
    # other branch), so max(0, .) turns them into exact +0.0 and leaves every exp (>= 0) as it
    # is: one plain pass, where a masked copy of zeros took several times as long.
    np.exp(scores, out=scores, where=_visible(t))
    np.maximum(0.0, scores, out=scores)
    scores /= _row_sums(scores)
    return scores


def causal_softmax_backward(d_weights: np.ndarray, weights: np.ndarray, dz: np.ndarray,
                            z: np.ndarray) -> np.ndarray:
    """Gradient of the scores from that of the weights, computed in ``d_weights``'s place.

    ds_ij = w_ij (dw_ij - Σ_k w_ik dw_ik), as in `layers.softmax_backward`. Here the weights
    feed z = weights v only, so dw_ik = dz_i · v_k and the row sum is Σ_k w_ik dz_i · v_k =
    dz_i · z_i: a sum over d_head numbers per row instead of a product over every key (the
    same identity FlashAttention uses). ``dz``, ``z``: (..., T, d_head).
    """
    inner = _row_sums(np.multiply(dz, z, out=_scratch("dz*z", z.shape)))
    d_weights -= inner
    d_weights *= weights
    return d_weights


def _row_sums(a: np.ndarray) -> np.ndarray:
    """Sum over the last axis, kept as an axis of 1, as one matrix-vector product (a short
    last axis makes ``a.sum(axis=-1)`` several times slower)."""
    return (a.reshape(-1, a.shape[-1]) @ np.ones(a.shape[-1])).reshape(a.shape[:-1] + (1,))


def attention_forward(x: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray,
                      W_O: np.ndarray, heads: int, qkv: np.ndarray | None = None,
                      out: np.ndarray | None = None):
    """One causal multi-head attention layer; returns ``(out, cache)``.

    q, k, v = x W_Q, x W_K, x W_V split into ``heads`` heads of d_head; scores = q kᵀ /
    sqrt(d_head) plus the causal mask; weights = softmax over the keys; each head's output
    is weights v; the heads are concatenated and multiplied by W_O. ``out`` (B, T, d_model)
    is what the layer adds to the residual stream; ``cache["weights"]`` is (B, heads, T, T).

    ``qkv``: x `qkv_weights` (B·T, 3·heads·d_head), when the caller has it already (the
    first layer looks it up from the embeddings, `embed_project`). ``out``: a contiguous
    (B, T, d_model) array to write the layer's output into (by default a new one).
    """
    b, t, d = x.shape
    hd = W_Q.shape[1]
    d_head = hd // heads
    scale = 1.0 / np.sqrt(d_head)
    # One matrix product for q, k and v, then views (3, B, heads, T, d_head) of it.
    W_QKV = qkv_weights(W_Q, W_K, W_V, heads)
    if qkv is None:
        qkv = x.reshape(b * t, d) @ W_QKV
    qkv = qkv.reshape(b, t, 3, heads, d_head).transpose(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    weights = causal_softmax(q @ k.swapaxes(-1, -2))
    # Each head's output weights v is written straight into its columns of z (B, T, heads·d_head),
    # the concatenation W_O reads, instead of into a (B, heads, T, d_head) array copied over.
    z = np.empty((b, t, hd))
    z_heads = _split_heads(z, heads)
    np.matmul(weights, v, out=z_heads)
    out = np.matmul(z.reshape(b * t, hd), W_O,
                    out=None if out is None else out.reshape(b * t, d)).reshape(b, t, d)
    cache = {"x": x, "W_QKV": W_QKV, "W_O": W_O, "q": q, "k": k, "v": v,
             "weights": weights, "z_heads": z_heads, "z": z, "scale": scale}
    return out, cache


def qkv_weights(W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray, heads: int) -> np.ndarray:
    """[W_Q / sqrt(d_head), W_K, W_V] side by side: x times it gives q (already scaled), k, v.

    (x W_Q / sqrt(d_head)) kᵀ are the scaled scores q kᵀ / sqrt(d_head); dividing a
    d_model × heads·d_head matrix costs less than dividing every score or every q.
    """
    scale = 1.0 / np.sqrt(W_Q.shape[1] // heads)
    return np.concatenate([W_Q * scale, W_K, W_V], axis=1)


def qkv_gradients(dW_QKV: np.ndarray, scale: float):
    """``(dW_Q, dW_K, dW_V)`` from the gradient of `qkv_weights`'s matrix."""
    hd = dW_QKV.shape[1] // 3
    return dW_QKV[:, :hd] * scale, dW_QKV[:, hd:2 * hd], dW_QKV[:, 2 * hd:]


def attention_backward(d_out: np.ndarray, cache, project: bool = True):
    """Gradients through one attention layer: ``(dx, {"W_Q", "W_K", "W_V", "W_O"})``.

    ``dx`` is the gradient that reaches the layer's input through q, k and v only; the
    residual connection's own path is added by the caller. With ``project=False`` the
    projections are left to the caller (`embed_project_backward`): returns
    ``(d_qkv (B·T, 3·heads·d_head), {"W_O"})``.
    """
    x, W_QKV, W_O = cache["x"], cache["W_QKV"], cache["W_O"]
    q, k, v, weights, z = cache["q"], cache["k"], cache["v"], cache["weights"], cache["z"]
    b, t, d = x.shape
    hd = W_O.shape[0]
    heads, d_head = q.shape[1], q.shape[3]
    d_out2 = d_out.reshape(b * t, d)
    dW_O = z.reshape(b * t, hd).T @ d_out2
    dz = np.matmul(d_out2, W_O.T, out=_scratch("dz", (b * t, hd)))
    dz = _split_heads(dz.reshape(b, t, hd), heads)
    # dq, dk, dv are written straight into one (B, T, 3·heads·d_head) array, laid out like
    # the forward's q|k|v columns, so that one product gives dW_Q|dW_K|dW_V and one dx.
    # (Returned without the projections, so then a new array.)
    d_qkv = (_scratch("d_qkv", (b, t, 3, heads, d_head)) if project
             else np.empty((b, t, 3, heads, d_head)))
    dq, dk, dv = (d_qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
    d_weights = np.matmul(dz, v.swapaxes(-1, -2), out=_scratch("d_weights", weights.shape))
    np.matmul(weights.swapaxes(-1, -2), dz, out=dv)
    d_scores = causal_softmax_backward(d_weights, weights, dz, cache["z_heads"])
    np.matmul(d_scores, k, out=dq)      # q is x W_Q / sqrt(d_head): the scale is in W_QKV
    np.matmul(d_scores.swapaxes(-1, -2), q, out=dk)
    d_qkv = d_qkv.reshape(b * t, 3 * hd)
    if not project:
        return d_qkv, {"W_O": dW_O}
    dW_QKV = x.reshape(b * t, d).T @ d_qkv
    dx = (d_qkv @ W_QKV.T).reshape(b, t, d)
    dW_Q, dW_K, dW_V = qkv_gradients(dW_QKV, cache["scale"])
    grads = {"W_Q": dW_Q, "W_K": dW_K, "W_V": dW_V, "W_O": dW_O}
    return dx, grads


# --- unembedding and the loss ----------------------------------------------------------

def unembed_forward(x: np.ndarray, W_U: np.ndarray):
    """logits = x W_U, (B, T, vocab); returns ``(logits, cache)``."""
    b, t, d = x.shape
    return (x.reshape(b * t, d) @ W_U).reshape(b, t, -1), (x, W_U)


def unembed_backward(d_logits: np.ndarray, cache):
    """Gradients ``(dx, dW_U)`` from d_logits (B, T, vocab)."""
    x, W_U = cache
    b, t, d = x.shape
    dl = d_logits.reshape(b * t, -1)
    return (dl @ W_U.T).reshape(b, t, d), x.reshape(b * t, d).T @ dl


def next_token_losses(logits: np.ndarray, tokens: np.ndarray):
    """Cross-entropy (nats) of position t's logits against token t + 1, for t = 0 .. T-2.

    Returns ``(losses, probs)``: losses (B, T-1), one per predicted position, and the
    softmax of those positions' logits (B·(T-1), vocab), which `layers.cross_entropy_backward`
    turns into the gradient. One exp serves both: loss = log Σ exp(z) - z[target], with z
    the logits less their row maximum.
    """
    b, t, vocab = logits.shape
    z = logits[:, :-1]
    z = (z - z.max(axis=2, keepdims=True)).reshape(b * (t - 1), vocab)  # a new array
    targets = tokens[:, 1:].reshape(-1)
    target_z = z[np.arange(targets.size), targets]
    e = np.exp(z, out=z)
    total = _row_sums(e)
    losses = np.log(total[:, 0]) - target_z
    e /= total
    return losses.reshape(b, t - 1), e


# --- the model -------------------------------------------------------------------------

class AttentionOnlyTransformer:
    """Embeddings, ``layers`` causal attention layers on a residual stream, unembedding.

    ``params`` is the dict of every trained array (float64), used as given (not copied):
    the optimiser updates it in place.
    """

    def __init__(self, params: dict[str, np.ndarray], layers: int, heads: int):
        if layers < 1 or heads < 1:
            raise TrainingError(f"an attention-only transformer needs layers >= 1 and heads >= 1, "
                                f"got layers={layers}, heads={heads}")
        expected = {"W_E", "W_pos", "W_U"} | {
            f"layer{l}.{name}" for l in range(layers) for name in ("W_Q", "W_K", "W_V", "W_O")}
        if set(params) != expected:
            raise TrainingError(f"parameters {sorted(params)} do not match a {layers}-layer model: "
                                f"expected {sorted(expected)}")
        vocab, d = np.shape(params["W_E"])
        hd = np.shape(params["layer0.W_Q"])[1]
        if hd % heads:
            raise TrainingError(f"W_Q has {hd} columns, not a multiple of heads={heads}")
        shapes = {"W_E": (vocab, d), "W_pos": (np.shape(params["W_pos"])[0], d), "W_U": (d, vocab)}
        for l in range(layers):
            shapes.update({f"layer{l}.W_Q": (d, hd), f"layer{l}.W_K": (d, hd),
                           f"layer{l}.W_V": (d, hd), f"layer{l}.W_O": (hd, d)})
        for name, shape in shapes.items():
            if np.shape(params[name]) != shape:
                raise TrainingError(f"{name} has shape {np.shape(params[name])}, expected {shape}")
        self.params = params
        self.layers = layers
        self.heads = heads
        self.d_head = hd // heads
        self.vocab = params["W_E"].shape[0]
        self.n_ctx = params["W_pos"].shape[0]

    def _check_tokens(self, tokens, predict: bool = False) -> np.ndarray:
        """``tokens`` as an integer array (B, T), or a TrainingError saying what is wrong;
        ``predict``: a next token is needed, so T >= 2."""
        try:
            tokens = np.asarray(tokens)
        except ValueError:  # ragged rows
            raise TrainingError("tokens must be rows of one length, (B, T)") from None
        if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
            raise TrainingError(f"tokens must be an integer array (B, T), got {tokens.dtype} "
                                f"{tokens.shape}")
        if tokens.shape[0] < 1:
            raise TrainingError("tokens must hold at least one sequence (B >= 1)")
        if not 1 <= tokens.shape[1] <= self.n_ctx:
            raise TrainingError(f"sequence length T={tokens.shape[1]} is outside 1..{self.n_ctx}")
        if tokens.min() < 0 or tokens.max() >= self.vocab:
            raise TrainingError(f"tokens must lie in 0..{self.vocab - 1}")
        if predict and tokens.shape[1] < 2:
            raise TrainingError("a sequence needs at least 2 tokens to predict a next one")
        return tokens

    def forward(self, tokens):
        """``(logits, caches)``: logits (B, T, vocab) and every layer's cache, in order."""
        tokens = self._check_tokens(tokens)
        p = self.params
        x, embed_cache = embed_forward(tokens, p["W_E"], p["W_pos"])
        layer_caches = []
        for l in range(self.layers):
            W_Q, W_K, W_V = p[f"layer{l}.W_Q"], p[f"layer{l}.W_K"], p[f"layer{l}.W_V"]
            # The first layer reads the bare embeddings: its q, k, v are table look-ups.
            qkv = (embed_project(qkv_weights(W_Q, W_K, W_V, self.heads), embed_cache)
                   if l == 0 else None)
            # The layer's output lives only until it is added: a scratch array takes it.
            out, cache = attention_forward(x, W_Q, W_K, W_V, p[f"layer{l}.W_O"], self.heads,
                                           qkv=qkv, out=_scratch("attention out", x.shape))
            x = x + out
            layer_caches.append(cache)
        logits, unembed_cache = unembed_forward(x, p["W_U"])
        return logits, (embed_cache, layer_caches, unembed_cache)

    def backward(self, d_logits: np.ndarray, caches) -> dict[str, np.ndarray]:
        """Gradients of every parameter from d_logits (B, T, vocab) and ``forward``'s caches."""
        embed_cache, layer_caches, unembed_cache = caches
        grads: dict[str, np.ndarray] = {}
        dx, grads["W_U"] = unembed_backward(d_logits, unembed_cache)
        for l in reversed(range(1, self.layers)):
            # x_{l+1} = x_l + attn(x_l): the residual passes dx on unchanged, plus the
            # gradient that flows back through the layer's q, k and v.
            d_in, layer_grads = attention_backward(dx, layer_caches[l])
            dx = dx + d_in
            for name, g in layer_grads.items():
                grads[f"layer{l}.{name}"] = g
        # The first layer's q, k, v came from the embedding tables (`embed_project`).
        d_qkv, layer_grads = attention_backward(dx, layer_caches[0], project=False)
        W_QKV = layer_caches[0]["W_QKV"]
        dW_E, dW_pos, dW_QKV = embed_project_backward(d_qkv, W_QKV, embed_cache)
        grads["layer0.W_Q"], grads["layer0.W_K"], grads["layer0.W_V"] = qkv_gradients(
            dW_QKV, layer_caches[0]["scale"])
        grads["layer0.W_O"] = layer_grads["W_O"]
        # The residual stream's own path to the embeddings.
        dW_E_residual, dW_pos_residual = embed_backward(dx, embed_cache)
        grads["W_E"] = dW_E + dW_E_residual
        grads["W_pos"] = dW_pos + dW_pos_residual
        return grads

    def logits(self, tokens) -> np.ndarray:
        """(B, T, vocab): position t's scores for token t + 1."""
        return self.forward(tokens)[0]

    def attention(self, tokens) -> np.ndarray:
        """(layers, B, heads, T, T): each layer's causal attention weights, rows summing to 1."""
        _, (_, layer_caches, _) = self.forward(tokens)
        return np.stack([cache["weights"] for cache in layer_caches])

    def losses(self, tokens) -> np.ndarray:
        """(B, T-1): next-token cross-entropy at every position 0 .. T-2."""
        tokens = self._check_tokens(tokens, predict=True)
        return next_token_losses(self.forward(tokens)[0], tokens)[0]

    def losses_and_grads(self, tokens):
        """``(losses, grads, weights)`` of the mean next-token loss at the current params.

        losses (B, T-1) per predicted position; grads {name: gradient of the mean of losses};
        weights, one (B, heads, T, T) array per layer. One forward and one backward pass: the
        losses and weights a metric needs come from the pass that gives the gradients.
        """
        tokens = self._check_tokens(tokens, predict=True)
        logits, caches = self.forward(tokens)
        losses, probs = next_token_losses(logits, tokens)
        # The mean runs over every prediction; the last position predicts nothing. This is
        # `layers.cross_entropy_backward`, (probs - onehot(targets)) / N, done in probs' place
        # (a fresh array no one else holds) and divided straight into d_logits.
        b, t = tokens.shape
        probs[np.arange(probs.shape[0]), tokens[:, 1:].reshape(-1)] -= 1.0
        d_logits = np.empty_like(logits)
        np.divide(probs.reshape(b, t - 1, self.vocab), probs.shape[0], out=d_logits[:, :-1])
        d_logits[:, -1] = 0.0
        grads = self.backward(d_logits, caches)
        # Keep this pass's arrays alive until the next one has made its own: when a step
        # frees all its megabytes, the allocator hands the pages back to the system and the
        # next step faults them in again, which measured a fifth of a step's time.
        self._last_pass = (logits, caches, d_logits)
        return losses, grads, [cache["weights"] for cache in caches[1]]
