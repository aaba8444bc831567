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

Parameter names: ``W_E`` (vocab × d_model) and ``W_pos`` (n_ctx × d_model), the embeddings;
``layer{l}.W_Q``, ``layer{l}.W_K``, ``layer{l}.W_V`` (d_model × heads·d_head) and
``layer{l}.W_O`` (heads·d_head × d_model) for each layer l = 0, 1, ...; ``W_U``
(d_model × vocab), the unembedding. Head h owns columns h·d_head .. (h+1)·d_head - 1 of
W_Q, W_K and W_V and the same rows of W_O.
"""

from __future__ import annotations

import functools

import numpy as np

from .layers import cross_entropy_backward, log_softmax, softmax, softmax_backward

__all__ = [
    "AttentionOnlyTransformer",
    "attention_backward",
    "attention_forward",
    "causal_mask",
    "embed_backward",
    "embed_forward",
    "next_token_losses",
    "unembed_backward",
    "unembed_forward",
]


# --- embeddings ------------------------------------------------------------------------

def embed_forward(tokens: np.ndarray, W_E: np.ndarray, W_pos: np.ndarray):
    """Residual stream at the start: x[b, t] = W_E[tokens[b, t]] + W_pos[t].

    Returns ``(x, cache)``; x is (B, T, d_model).
    """
    t = tokens.shape[1]
    x = W_E[tokens] + W_pos[:t]
    return x, (tokens, W_E.shape[0], W_pos.shape[0])


def embed_backward(dx: np.ndarray, cache):
    """Gradients ``(dW_E, dW_pos)`` from dx (B, T, d_model).

    A token's row collects the gradient of every position it sits at: a one-hot matrix
    product does that sum for all rows at once (repeated tokens add up, unused rows stay 0).
    """
    tokens, vocab, n_ctx = cache
    b, t, d = dx.shape
    one_hot = np.zeros((b * t, vocab))
    one_hot[np.arange(b * t), tokens.reshape(-1)] = 1.0
    dW_E = one_hot.T @ dx.reshape(b * t, d)
    dW_pos = np.zeros((n_ctx, d))
    dW_pos[:t] = dx.sum(axis=0)
    return dW_E, dW_pos


# --- causal multi-head attention -------------------------------------------------------

@functools.lru_cache(maxsize=None)
def causal_mask(t: int) -> np.ndarray:
    """(T, T) additive mask: 0 where key j <= query i, -inf above the diagonal (read-only)."""
    mask = np.zeros((t, t))
    mask[np.triu_indices(t, k=1)] = -np.inf
    mask.flags.writeable = False
    return mask


def _split_heads(a: np.ndarray, heads: int) -> np.ndarray:
    """(B, T, heads·d) -> (B, heads, T, d)."""
    b, t, hd = a.shape
    return a.reshape(b, t, heads, hd // heads).transpose(0, 2, 1, 3)


def _merge_heads(a: np.ndarray) -> np.ndarray:
    """(B, heads, T, d) -> (B, T, heads·d)."""
    b, h, t, d = a.shape
    return a.transpose(0, 2, 1, 3).reshape(b, t, h * d)


def attention_forward(x: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray,
                      W_O: np.ndarray, heads: int):
    """One causal multi-head attention layer; returns ``(out, cache)``.

    q, k, v = x W_Q, x W_K, x W_V split into ``heads`` heads of d_head; scores = q kᵀ /
    sqrt(d_head) plus the causal mask; weights = softmax over the keys; each head's output
    is weights v; the heads are concatenated and multiplied by W_O. ``out`` (B, T, d_model)
    is what the layer adds to the residual stream; ``cache["weights"]`` is (B, heads, T, T).
    """
    b, t, d = x.shape
    hd = W_Q.shape[1]
    d_head = hd // heads
    scale = 1.0 / np.sqrt(d_head)
    # One matrix product for q, k and v: at this size the call overhead is the cost.
    W_QKV = np.concatenate([W_Q, W_K, W_V], axis=1)
    qkv = x.reshape(b * t, d) @ W_QKV
    q = _split_heads(qkv[:, :hd].reshape(b, t, hd), heads)
    k = _split_heads(qkv[:, hd:2 * hd].reshape(b, t, hd), heads)
    v = _split_heads(qkv[:, 2 * hd:].reshape(b, t, hd), heads)
    scores = (q @ k.transpose(0, 1, 3, 2)) * scale + causal_mask(t)
    weights = softmax(scores)  # -inf above the diagonal: weight exactly 0
    z = _merge_heads(weights @ v)
    out = (z.reshape(b * t, hd) @ W_O).reshape(b, t, d)
    cache = {"x": x, "W_QKV": W_QKV, "W_O": W_O, "q": q, "k": k, "v": v,
             "weights": weights, "z": z, "scale": scale}
    return out, cache


def attention_backward(d_out: np.ndarray, cache):
    """Gradients through one attention layer: ``(dx, {"W_Q", "W_K", "W_V", "W_O"})``.

    ``dx`` is the gradient that reaches the layer's input through q, k and v only; the
    residual connection's own path is added by the caller.
    """
    x, W_QKV, W_O = cache["x"], cache["W_QKV"], cache["W_O"]
    q, k, v, weights, z = cache["q"], cache["k"], cache["v"], cache["weights"], cache["z"]
    b, t, d = x.shape
    hd = W_O.shape[0]
    heads = q.shape[1]
    d_out2 = d_out.reshape(b * t, d)
    dW_O = z.reshape(b * t, hd).T @ d_out2
    dz = _split_heads((d_out2 @ W_O.T).reshape(b, t, hd), heads)
    d_weights = dz @ v.transpose(0, 1, 3, 2)
    dv = weights.transpose(0, 1, 3, 2) @ dz
    d_scores = softmax_backward(d_weights, weights) * cache["scale"]
    dq = d_scores @ k
    dk = d_scores.transpose(0, 1, 3, 2) @ q
    d_qkv = np.concatenate([_merge_heads(dq), _merge_heads(dk), _merge_heads(dv)],
                           axis=2).reshape(b * t, 3 * hd)
    dW_QKV = x.reshape(b * t, d).T @ d_qkv
    dx = (d_qkv @ W_QKV.T).reshape(b, t, d)
    grads = {"W_Q": dW_QKV[:, :hd], "W_K": dW_QKV[:, hd:2 * hd], "W_V": dW_QKV[:, 2 * hd:],
             "W_O": dW_O}
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
    softmax of those positions' logits (B·(T-1), vocab), which the backward pass reuses.
    """
    b, t, vocab = logits.shape
    log_probs = log_softmax(logits[:, :-1].reshape(b * (t - 1), vocab))
    targets = tokens[:, 1:].reshape(-1)
    losses = -log_probs[np.arange(targets.size), targets]
    return losses.reshape(b, t - 1), np.exp(log_probs)


# --- the model -------------------------------------------------------------------------

class AttentionOnlyTransformer:
    """Embeddings, ``layers`` causal attention layers on a residual stream, unembedding.

    ``params`` is the dict of every trained array (float64), used as given (not copied):
    the optimiser updates it in place.
    """

    def __init__(self, params: dict[str, np.ndarray], layers: int, heads: int):
        if layers < 1 or heads < 1:
            raise ValueError(f"an attention-only transformer needs layers >= 1 and heads >= 1, "
                             f"got layers={layers}, heads={heads}")
        expected = {"W_E", "W_pos", "W_U"} | {
            f"layer{l}.{name}" for l in range(layers) for name in ("W_Q", "W_K", "W_V", "W_O")}
        if set(params) != expected:
            raise ValueError(f"parameters {sorted(params)} do not match a {layers}-layer model: "
                             f"expected {sorted(expected)}")
        hd = params["layer0.W_Q"].shape[1]
        if hd % heads:
            raise ValueError(f"W_Q has {hd} columns, not a multiple of heads={heads}")
        self.params = params
        self.layers = layers
        self.heads = heads
        self.d_head = hd // heads
        self.vocab = params["W_E"].shape[0]
        self.n_ctx = params["W_pos"].shape[0]

    def _check_tokens(self, tokens) -> np.ndarray:
        tokens = np.asarray(tokens)
        if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
            raise ValueError(f"tokens must be an integer array (B, T), got {tokens.dtype} "
                             f"{tokens.shape}")
        if not 1 <= tokens.shape[1] <= self.n_ctx:
            raise ValueError(f"sequence length T={tokens.shape[1]} is outside 1..{self.n_ctx}")
        if tokens.size and (tokens.min() < 0 or tokens.max() >= self.vocab):
            raise ValueError(f"tokens must lie in 0..{self.vocab - 1}")
        return tokens

    def forward(self, tokens):
        """``(logits, caches)``: logits (B, T, vocab) and every layer's cache, in order."""
        tokens = self._check_tokens(tokens)
        p = self.params
        x, embed_cache = embed_forward(tokens, p["W_E"], p["W_pos"])
        layer_caches = []
        for l in range(self.layers):
            out, cache = attention_forward(x, p[f"layer{l}.W_Q"], p[f"layer{l}.W_K"],
                                           p[f"layer{l}.W_V"], p[f"layer{l}.W_O"], self.heads)
            x = x + out
            layer_caches.append(cache)
        logits, unembed_cache = unembed_forward(x, p["W_U"])
        return logits, (embed_cache, layer_caches, unembed_cache)

    def backward(self, d_logits: np.ndarray, caches) -> dict[str, np.ndarray]:
        """Gradients of every parameter from d_logits (B, T, vocab) and ``forward``'s caches."""
        embed_cache, layer_caches, unembed_cache = caches
        grads: dict[str, np.ndarray] = {}
        dx, grads["W_U"] = unembed_backward(d_logits, unembed_cache)
        for l in reversed(range(self.layers)):
            # x_{l+1} = x_l + attn(x_l): the residual passes dx on unchanged, plus the
            # gradient that flows back through the layer's q, k and v.
            d_in, layer_grads = attention_backward(dx, layer_caches[l])
            dx = dx + d_in
            for name, g in layer_grads.items():
                grads[f"layer{l}.{name}"] = g
        grads["W_E"], grads["W_pos"] = embed_backward(dx, embed_cache)
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
        tokens = self._check_tokens(tokens)
        return next_token_losses(self.forward(tokens)[0], tokens)[0]

    def losses_and_grads(self, tokens):
        """``(losses, grads, weights)`` of the mean next-token loss at the current params.

        losses (B, T-1) per predicted position; grads {name: gradient of the mean of losses};
        weights, one (B, heads, T, T) array per layer. One forward and one backward pass: the
        losses and weights a metric needs come from the pass that gives the gradients.
        """
        tokens = self._check_tokens(tokens)
        if tokens.shape[1] < 2:
            raise ValueError("a sequence needs at least 2 tokens to predict a next one")
        logits, caches = self.forward(tokens)
        losses, probs = next_token_losses(logits, tokens)
        # The mean runs over every prediction; the last position predicts nothing.
        d_logits = np.zeros_like(logits)
        d_logits[:, :-1] = cross_entropy_backward(probs, tokens[:, 1:].reshape(-1)).reshape(
            losses.shape + (self.vocab,))
        grads = self.backward(d_logits, caches)
        return losses, grads, [cache["weights"] for cache in caches[1]]
