"""Why attention: an RNN encoder-decoder against the same network with Bahdanau attention.

The task is to reverse a sequence of symbols 0..7 (length 1..20). The encoder-decoder squeezes the
whole input into its last hidden state h_L (32 numbers) and the decoder must unpack it: it reverses
short inputs perfectly and loses track on long ones. With attention (Bahdanau et al. 2015), each
output step looks back at every encoder state, and the alignment it learns is the anti-diagonal:
output t reads input L + 1 - t. Both arms share every array they have in common at the start and
train on the same batches.

Encoder: embedding 16, tanh RNN, hidden 32, h_0 = 0. Decoder: tanh RNN, hidden 32, s_0 = h_L, input
at step t = [embedding of the previous target symbol (<bos> first); c_t], logits = [s_t; c_t] W + b.
"encoder-decoder": c_t = h_L. "attention": c_t = sum_j a_tj h_j, a_t = softmax_j(v · tanh(s_{t-1} W_s
+ h_j U_h + b)). Teacher forcing; mean cross-entropy over every output token.
"""

from __future__ import annotations

import numpy as np

from .experiment import STREAM_BATCH, STREAM_EVAL, Experiment, TrainingError, check_int
from .layers import additive_attention, cross_entropy, cross_entropy_backward, softmax_backward

__all__ = ["Seq2SeqExperiment", "Seq2SeqModel", "accuracy_by_length", "evaluation_sources", "SYMBOLS", "BOS", "MAX_LENGTH",
           "EMBED", "HIDDEN", "ATTENTION", "BATCH"]

SYMBOLS = 8        # the alphabet 0..7
BOS = SYMBOLS      # the decoder's extra embedding row: the input of its first step
MAX_LENGTH = 20
EMBED = 16
HIDDEN = 32
ATTENTION = 32
BATCH = 64


class Seq2SeqModel:
    """A tanh-RNN encoder and decoder, with (``attention=True``) or without Bahdanau attention.

    ``params``: "enc_embed" (8 × 16), "enc_Wx" (16 × 32), "enc_Wh" (32 × 32), "enc_b" (32),
    "dec_embed" (9 × 16, row 8 = <bos>), "dec_Wx" (48 × 32: [embedding; context]), "dec_Wh"
    (32 × 32), "dec_b" (32), "out_W" (64 × 8: [s_t; c_t]), "out_b" (8); with attention also
    "att_Ws" (32 × 32), "att_Uh" (32 × 32), "att_b" (32), "att_v" (32).
    """

    def __init__(self, params: dict[str, np.ndarray], attention: bool):
        self.params = params
        self.attention = bool(attention)

    # ------------------------------------------------------------------------------ inputs
    @staticmethod
    def _symbols(name, value) -> np.ndarray:
        arr = np.asarray(value)
        if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
            raise TrainingError(f"{name} must be a (B, L) array of symbols with B, L >= 1, got shape {arr.shape}")
        if not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= SYMBOLS:
            raise TrainingError(f"{name} must be integers in 0..{SYMBOLS - 1}")
        return arr

    def _batch(self, batch):
        try:
            source, target = batch["source"], batch["target"]
        except (KeyError, TypeError):
            raise TrainingError('a seq2seq batch is a dict with "source" and "target", both int (B, L)') from None
        source, target = self._symbols("source", source), self._symbols("target", target)
        if source.shape != target.shape:
            raise TrainingError(f"source {source.shape} and target {target.shape} must have the same shape")
        return source, target

    # ----------------------------------------------------------------------------- encoder
    def _encode(self, source):
        p = self.params
        B, L = source.shape
        x = p["enc_embed"][source]                          # (B, L, E)
        x_proj = x @ p["enc_Wx"] + p["enc_b"]               # the input's share of every step at once
        H = np.empty((B, L, HIDDEN))
        h = np.zeros((B, HIDDEN))
        for j in range(L):
            h = np.tanh(x_proj[:, j] + h @ p["enc_Wh"])
            H[:, j] = h
        keys = H @ p["att_Uh"] if self.attention else None  # h_j U_h, fixed for the whole decoding
        return x, H, keys

    def _decoder(self, H, keys):
        """A decoder step function ``step(embedded, s_prev, hidden_out=None) -> (s, context, weights,
        cache)``, where ``embedded`` is the previous symbol's row already multiplied into dec_Wx (plus
        dec_b) and ``hidden_out`` (attention arm) receives the step's attention energies."""
        p = self.params
        Wx_context, Wh = p["dec_Wx"][EMBED:], p["dec_Wh"]
        if not self.attention:
            context = H[:, -1]
            from_context = context @ Wx_context          # c_t = h_L at every step: project it once

            def step(embedded, s_prev, hidden_out=None):
                return np.tanh(embedded + from_context + s_prev @ Wh), context, None, None
            return step

        Ws, b, v = p["att_Ws"], p["att_b"], p["att_v"]

        def step(embedded, s_prev, hidden_out=None):
            context, weights, cache = additive_attention(s_prev, H, keys, Ws, b, v, hidden_out=hidden_out)
            return np.tanh(embedded + context @ Wx_context + s_prev @ Wh), context, weights, cache
        return step

    # ------------------------------------------------------------------------ greedy decoding
    def _greedy(self, sources):
        p = self.params
        source = self._symbols("sources", sources)
        B, L = source.shape
        _, H, keys = self._encode(source)
        step = self._decoder(H, keys)
        embedded = p["dec_embed"] @ p["dec_Wx"][:EMBED] + p["dec_b"]   # every symbol's input share
        prev = np.full(B, BOS)
        s = H[:, -1]
        predictions = np.empty((B, L), dtype=np.int64)
        alignment = np.empty((B, L, L)) if self.attention else None
        for t in range(L):
            s_next, context, weights, _ = step(embedded[prev], s)
            logits = np.concatenate([s_next, context], axis=1) @ p["out_W"] + p["out_b"]
            prev = np.argmax(logits, axis=1)           # its own output is the next input
            predictions[:, t] = prev
            if alignment is not None:
                alignment[:, t] = weights
            s = s_next
        return predictions, alignment

    def predict(self, sources) -> np.ndarray:
        """Greedy decoding: int (B, L), L symbols per input row, each output fed back as the next input."""
        return self._greedy(sources)[0]

    def alignment(self, sources) -> np.ndarray:
        """(B, L, L) attention weights during greedy decoding: row t = output step t, column j =
        input position j; rows sum to 1. Only the attention arm has one."""
        if not self.attention:
            raise TrainingError("the encoder-decoder has no alignment: it reads only h_L (use the attention arm)")
        return self._greedy(sources)[1]

    # ----------------------------------------------------------------- teacher forcing
    def _forward(self, source, target):
        p = self.params
        B, L = source.shape
        x, H, keys = self._encode(source)
        prev = np.concatenate([np.full((B, 1), BOS), target[:, :-1]], axis=1)  # teacher forcing
        prev_embed = p["dec_embed"][prev]                                     # (B, L, E)
        embedded = prev_embed @ p["dec_Wx"][:EMBED] + p["dec_b"]              # every step's input share
        step = self._decoder(H, keys)
        S = np.empty((B, L + 1, HIDDEN))    # S[:, 0] = s_0 = h_L, S[:, t] = s_t
        S[:, 0] = H[:, -1]
        C = np.empty((B, L, HIDDEN))
        # The attention arm keeps every step's energies tanh(s_{t-1} W_s + h_j U_h + b) and weights
        # for its backward pass, which then handles all steps' (B, L, A) arrays in a few passes.
        energies = np.empty((L, B, L, ATTENTION)) if self.attention else None  # step-major: each step contiguous
        weights = np.empty((B, L, L)) if self.attention else None
        for t in range(L):
            S[:, t + 1], C[:, t], a_t, _ = step(embedded[:, t], S[:, t],
                                                energies[t] if self.attention else None)
            if self.attention:
                weights[:, t] = a_t
        out = np.concatenate([S[:, 1:], C], axis=2)                           # (B, L, 2H)
        logits = out @ p["out_W"] + p["out_b"]                               # (B, L, 8)
        return dict(source=source, target=target, prev=prev, prev_embed=prev_embed, x=x, H=H, S=S, C=C,
                    out=out, logits=logits, energies=energies, weights=weights)

    def _loss(self, f):
        B, L = f["target"].shape
        return cross_entropy(f["logits"].reshape(B * L, SYMBOLS), f["target"].reshape(-1))

    def logits(self, batch) -> np.ndarray:
        """(B, L, 8) under teacher forcing: the scores for each output symbol."""
        return self._forward(*self._batch(batch))["logits"]

    def loss(self, batch) -> float:
        """Mean cross-entropy (nats) over every output token, teacher forcing; changes nothing."""
        return self._loss(self._forward(*self._batch(batch)))[0]

    def loss_and_grads(self, batch) -> tuple[float, dict[str, np.ndarray]]:
        """(loss, {name: d loss / d params[name]}) by backpropagation through time."""
        f = self._forward(*self._batch(batch))
        loss, probs = self._loss(f)
        return loss, self._backward(f, probs)

    def measure(self, batch) -> tuple[dict[str, float], dict[str, np.ndarray]]:
        """The step's metrics ("loss", "accuracy" per output token under teacher forcing) and the
        gradients, both at the current params."""
        f = self._forward(*self._batch(batch))
        loss, probs = self._loss(f)
        accuracy = float(np.mean(np.argmax(f["logits"], axis=2) == f["target"]))
        return {"loss": loss, "accuracy": accuracy}, self._backward(f, probs)

    def _backward(self, f, probs):
        p = self.params
        B, L = f["target"].shape
        g = {}
        d_logits = cross_entropy_backward(probs, f["target"].reshape(-1))          # (B L, 8)
        g["out_W"] = f["out"].reshape(B * L, -1).T @ d_logits
        g["out_b"] = d_logits.sum(axis=0)
        d_out = (d_logits @ p["out_W"].T).reshape(B, L, 2 * HIDDEN)
        d_S_out, d_C = d_out[:, :, :HIDDEN], d_out[:, :, HIDDEN:]
        S, C, H = f["S"], f["C"], f["H"]
        gate = 1.0 - S[:, 1:] ** 2                              # tanh' at every decoder step
        Wx_context_T, Wh_T = p["dec_Wx"][EMBED:].T, p["dec_Wh"].T
        d_H = np.zeros_like(H)
        d_pre_all = np.empty((B, L, HIDDEN))                    # at each step's tanh input
        d_contexts = np.empty((B, L, HIDDEN))
        if self.attention:
            # The backward of `additive_attention` (layers.additive_attention_backward) for every
            # step, split into what the recurrence needs now (the query's gradient, through a
            # matrix-vector product per step) and what can wait for one pass over all steps
            # (the keys', v's and W_s's gradients).
            energies, weights = f["energies"], f["weights"]
            Ws_T, v = p["att_Ws"].T, p["att_v"]
            gates = energies * energies                         # tanh' = 1 - energy², (L out, B, L in, A)
            np.subtract(1.0, gates, out=gates)
            d_scores_all = np.empty((L, B, L))
            d_query_proj = np.empty((B, L, ATTENTION))
        d_s = np.zeros((B, HIDDEN))                             # at s_{t+1}, from the steps after it
        for t in range(L - 1, -1, -1):
            d_pre = (d_s + d_S_out[:, t]) * gate[:, t]
            d_pre_all[:, t] = d_pre
            d_context = d_pre @ Wx_context_T + d_C[:, t]
            d_contexts[:, t] = d_context
            d_s = d_pre @ Wh_T                                  # now at s_t
            if self.attention:
                d_w = (H @ d_context[:, :, None])[:, :, 0]      # at a_t (B, L)
                d_scores = softmax_backward(d_w, weights[:, t])
                d_scores_all[t] = d_scores
                d_q = (d_scores[:, None, :] @ gates[t])[:, 0] * v       # at s_{t-1} W_s (B, A)
                d_query_proj[:, t] = d_q
                d_s += d_q @ Ws_T
        d2 = d_pre_all.reshape(B * L, HIDDEN)
        g["dec_Wx"] = np.concatenate([f["prev_embed"].reshape(B * L, EMBED).T @ d2,
                                      C.reshape(B * L, HIDDEN).T @ d2])
        g["dec_Wh"] = S[:, :-1].reshape(B * L, HIDDEN).T @ d2
        g["dec_b"] = d2.sum(axis=0)
        g["dec_embed"] = _rows_grad(f["prev"], d2 @ p["dec_Wx"][:EMBED].T, SYMBOLS + 1)
        d_H[:, -1] += d_s                                       # s_0 = h_L
        if self.attention:
            d_q2 = d_query_proj.reshape(B * L, ATTENTION)
            g["att_Ws"] = S[:, :-1].reshape(B * L, HIDDEN).T @ d_q2
            g["att_b"] = d_q2.sum(axis=0)
            g["att_v"] = (d_scores_all.reshape(1, -1) @ energies.reshape(-1, ATTENTION))[0]
            gates *= d_scores_all[:, :, :, None]
            d_keys = gates.sum(axis=0) * v                      # at h_j U_h, summed over steps (B, L, A)
            g["att_Uh"] = H.reshape(B * L, HIDDEN).T @ d_keys.reshape(B * L, ATTENTION)
            d_H += d_keys @ p["att_Uh"].T
            # Through the contexts c_t = sum_j a_tj h_j of every step at once: d H = A^T d C.
            d_H += np.swapaxes(weights, 1, 2) @ d_contexts
        else:
            d_H[:, -1] += d_contexts.sum(axis=1)                # c_t = h_L at every step
        # Encoder: backpropagation through time.
        gate = 1.0 - H ** 2
        enc_Wh_T = p["enc_Wh"].T
        d_x_proj = np.empty((B, L, HIDDEN))
        d_h = np.zeros((B, HIDDEN))
        for j in range(L - 1, -1, -1):
            d_pre = (d_h + d_H[:, j]) * gate[:, j]
            d_x_proj[:, j] = d_pre
            d_h = d_pre @ enc_Wh_T
        d2 = d_x_proj.reshape(B * L, HIDDEN)
        g["enc_Wh"] = H[:, :-1].reshape(B * (L - 1), HIDDEN).T @ d_x_proj[:, 1:].reshape(B * (L - 1), HIDDEN)
        g["enc_Wx"] = f["x"].reshape(B * L, EMBED).T @ d2
        g["enc_b"] = d2.sum(axis=0)
        g["enc_embed"] = _rows_grad(f["source"], d2 @ p["enc_Wx"].T, SYMBOLS)
        return {name: g[name] for name in p}


def _rows_grad(index: np.ndarray, d_rows: np.ndarray, vocab: int) -> np.ndarray:
    """Gradient of an embedding table from the gradients at its looked-up rows: one-hot^T @ d
    (the table is 8 or 9 rows, so this is one small matmul rather than a scatter-add)."""
    one_hot = (index.reshape(-1, 1) == np.arange(vocab)).astype(np.float64)
    return one_hot.T @ d_rows

def _uniform(rng, shape, bound):
    return rng.uniform(-bound, bound, size=shape)


class Seq2SeqExperiment(Experiment):
    """"Why attention": arms "encoder-decoder" and "attention", reversing sequences of 0..7.

    ``Seq2SeqExperiment(seed=0)``. Each batch: 64 sequences of one length L drawn uniformly from
    1..20 (from (seed, step)), target = source reversed. Adam lr 3e-3, betas (0.9, 0.999), eps 1e-8,
    after clipping the global gradient norm at 5. Metrics per step (on that step's batch, before its
    update): "loss", "accuracy" (per output token, teacher forcing).
    """

    arms = ("encoder-decoder", "attention")
    metrics = ("loss", "accuracy")
    lr = 3e-3
    betas = (0.9, 0.999)
    eps = 1e-8
    clip_norm = 5.0
    default_steps = 2000

    def _build_models(self, rng):
        rnn = 1.0 / np.sqrt(HIDDEN)
        out = 1.0 / np.sqrt(2 * HIDDEN)
        shared = {
            "enc_embed": rng.standard_normal((SYMBOLS, EMBED)),
            "dec_embed": rng.standard_normal((SYMBOLS + 1, EMBED)),     # row BOS = <bos>
            "enc_Wx": _uniform(rng, (EMBED, HIDDEN), rnn),
            "enc_Wh": _uniform(rng, (HIDDEN, HIDDEN), rnn),
            "enc_b": _uniform(rng, (HIDDEN,), rnn),
            "dec_Wx": _uniform(rng, (EMBED + HIDDEN, HIDDEN), rnn),
            "dec_Wh": _uniform(rng, (HIDDEN, HIDDEN), rnn),
            "dec_b": _uniform(rng, (HIDDEN,), rnn),
            "out_W": _uniform(rng, (2 * HIDDEN, SYMBOLS), out),
            "out_b": _uniform(rng, (SYMBOLS,), out),
        }
        extra = {
            "att_Ws": _uniform(rng, (HIDDEN, ATTENTION), rnn),
            "att_Uh": _uniform(rng, (HIDDEN, ATTENTION), rnn),
            "att_b": _uniform(rng, (ATTENTION,), rnn),
            "att_v": _uniform(rng, (ATTENTION,), rnn),
        }
        return {
            "encoder-decoder": Seq2SeqModel({k: v.copy() for k, v in shared.items()}, attention=False),
            "attention": Seq2SeqModel({**{k: v.copy() for k, v in shared.items()}, **extra}, attention=True),
        }

    def batch(self, step: int) -> dict[str, np.ndarray]:
        """{"source": int (64, L), "target": source reversed}, L uniform in 1..20, from (seed, step)."""
        step = check_int("step", step)
        rng = self.rng(STREAM_BATCH, step)
        length = int(rng.integers(1, MAX_LENGTH + 1))
        source = rng.integers(0, SYMBOLS, size=(BATCH, length))
        return {"source": source, "target": source[:, ::-1].copy()}

    def accuracy_by_length(self, lengths=range(1, MAX_LENGTH + 1), count: int = 256,
                           teacher_forcing: bool = False) -> dict[str, dict[int, float]]:
        """{arm: {L: per-token accuracy}} of every arm on held-out sequences of each length
        (`accuracy_by_length`, drawn from this experiment's seed, never a training batch)."""
        return {arm: accuracy_by_length(model, lengths, count=count, seed=self.seed,
                                        teacher_forcing=teacher_forcing)
                for arm, model in self.models.items()}


def evaluation_sources(length: int, count: int = 256, seed: int = 0) -> np.ndarray:
    """``count`` held-out inputs of one ``length``: int (count, length), from a random stream that
    no training batch uses."""
    length = check_int("length", length, 1)
    count = check_int("count", count, 1)
    seed = check_int("seed", seed, 0, 2**63 - 1)
    return np.random.default_rng([seed, STREAM_EVAL, length]).integers(0, SYMBOLS, size=(count, length))


def accuracy_by_length(model: Seq2SeqModel, lengths=range(1, MAX_LENGTH + 1), count: int = 256,
                       seed: int = 0, teacher_forcing: bool = False) -> dict[int, float]:
    """{L: the fraction of output symbols right} on ``count`` held-out inputs of each length L.

    By default the model decodes greedily (`predict`: its own outputs fed back), the way it would be
    used; ``teacher_forcing=True`` scores the argmax with the true previous symbols fed instead,
    the way the training metric "accuracy" does.
    """
    result = {}
    for length in lengths:
        sources = evaluation_sources(length, count, seed)
        targets = sources[:, ::-1]
        if teacher_forcing:
            guess = np.argmax(model.logits({"source": sources, "target": targets.copy()}), axis=2)
        else:
            guess = model.predict(sources)
        result[int(length)] = float(np.mean(guess == targets))
    return result
