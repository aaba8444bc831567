"""Knock a head out and measure it: ablations of the "Why two layers" models.

A head is silenced by zeroing its output before W_O (its weighted values z_h = A_h v_h), the
rest of the forward pass unchanged; the loss on the first copy and on the repeat is measured
on a fixed held-out batch (`heldout_batch`: its own random stream of the seed, never trained
on). Silencing the first layer's previous-token head or a second-layer induction head sends
the two-layer model's repeat loss back up towards ln 32; the first copy, which no head can
predict, barely moves.

- `ablated_losses(model, tokens, head_mask)`: per-position next-token losses with heads out;
- `ablate(exp, arm, batch, head_mask)`: the Induction API's "loss_repeat" and "loss_first"
  with heads out (``InductionExperiment.ablate`` calls it);
- `ablation_study(exp)`: the intact models, every head alone, every layer's heads together,
  and the detector's scores of every head: what the panel and ``attn-studio train induction
  --ablate`` show.

Layers and heads count from 0 here (the panel and the CSV write them from 1). No Qt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from ..formatting import format_number
from ..pretrained.detect import DETECTORS, detect_heads, repeated_tokens
from .claims import GUESSING, GUESSING_MARGIN
from .experiment import STREAM_EVAL, TrainingError
from .induction import SEQ_LEN, _check_batch, make_induction_batch, repeat_losses
from .transformer import _merge_heads, attention_forward, embed_forward, embed_project, next_token_losses, \
    qkv_weights

__all__ = ["HELDOUT_ROWS", "DETECT_LENGTH", "DETECT_SEED", "AblationStudy", "HeadAblation", "ablate",
           "ablated_losses", "ablation_study", "check_head_mask", "detector_scores", "heldout_batch",
           "ablation_rows", "ABLATION_COLUMNS", "MATTERS", "head_label", "needed_text", "silenced_text",
           "guessing_words"]

# Rows of the held-out batch: 256 rows hold some 2,800 repeat positions, enough that a head's
# effect on the repeat loss is read to about a hundredth of a nat.
HELDOUT_ROWS = 256
# The sequence the detector scores the lab's heads on: 16 distinct tokens twice fill T = 32.
DETECT_LENGTH = SEQ_LEN // 2
DETECT_SEED = 0
# A head "matters" to the repeat when silencing it adds at least this many nats to the repeat loss.
MATTERS = 0.25


def heldout_batch(exp, rows: int = HELDOUT_ROWS) -> dict[str, np.ndarray]:
    """A fixed batch of ``rows`` induction rows from the seed's held-out stream (never trained on):
    the same for every step of a run, so ablations at different steps compare."""
    return make_induction_batch(exp.rng(STREAM_EVAL, 0), batch_size=rows)


def check_head_mask(model, head_mask) -> np.ndarray:
    """``head_mask`` as a float (layers, heads) array of finite numbers, or a TrainingError naming what is wrong.
    Each entry multiplies its head's output before W_O: 1 keeps the head, 0 silences it."""
    try:
        mask = np.array(head_mask, dtype=np.float64)
    except (TypeError, ValueError):
        raise TrainingError("head_mask must be an array of numbers (1 keeps a head, 0 silences it)") from None
    if mask.shape != (model.layers, model.heads):
        raise TrainingError(f"head_mask must be (layers, heads) = ({model.layers}, {model.heads}), "
                            f"got shape {mask.shape}")
    if not np.isfinite(mask).all():
        raise TrainingError("head_mask must hold finite numbers (1 keeps a head, 0 silences it)")
    return mask


def ablated_logits(model, tokens, head_mask) -> np.ndarray:
    """``(B, T, vocab)``: the model's logits with each head scaled by ``head_mask[l, h]`` (0 silences it).

    The model's own layers (`transformer.attention_forward`); where a layer's mask is not all
    ones, its output is formed again from the heads' outputs z_h scaled by the mask, then W_O.
    """
    tokens = model._check_tokens(tokens)
    mask = check_head_mask(model, head_mask)
    p = model.params
    x, embed_cache = embed_forward(tokens, p["W_E"], p["W_pos"])
    for layer in range(model.layers):
        W_Q, W_K, W_V, W_O = (p[f"layer{layer}.{name}"] for name in ("W_Q", "W_K", "W_V", "W_O"))
        qkv = embed_project(qkv_weights(W_Q, W_K, W_V, model.heads), embed_cache) if layer == 0 else None
        out, cache = attention_forward(x, W_Q, W_K, W_V, W_O, model.heads, qkv=qkv)
        if not np.all(mask[layer] == 1.0):
            z = _merge_heads(cache["z_heads"] * mask[layer][None, :, None, None])
            out = z @ W_O
        x = x + out
    return x @ p["W_U"]


def ablated_losses(model, tokens, head_mask) -> np.ndarray:
    """``(B, T-1)``: next-token cross-entropy at every position with the masked heads out."""
    tokens = model._check_tokens(tokens, predict=True)
    return next_token_losses(ablated_logits(model, tokens, head_mask), tokens)[0]


def _arm_model(exp, arm: str):
    if arm not in getattr(exp, "arms", ()):
        raise TrainingError(f"unknown arm {arm!r}; the arms are {', '.join(exp.arms)}")
    return exp.models[arm]


def ablate(exp, arm: str, batch, head_mask) -> dict[str, float]:
    """``{"loss_repeat": float, "loss_first": float}`` of ``arm`` on ``batch`` with the heads whose
    ``head_mask[l, h]`` is 0 silenced (their output zeroed before W_O); the Induction API's metrics."""
    model = _arm_model(exp, arm)
    tokens, n = _check_batch(batch)
    first, repeat = repeat_losses(ablated_losses(model, tokens, head_mask), n)
    return {"loss_repeat": repeat, "loss_first": first}


def detector_scores(model, length: int = DETECT_LENGTH, seed: int = DETECT_SEED) -> dict[str, np.ndarray]:
    """The head detector (`pretrained.detect`) on a lab model: each kind's (layers, heads) scores on
    ``length`` random tokens twice (`pretrained.repeated_tokens`, from ``seed``)."""
    stand_in = SimpleNamespace(name="the lab model", kind="attention-only", vocab_size=model.vocab,
                               max_positions=model.n_ctx)
    ids = repeated_tokens(stand_in, length, seed)
    run = SimpleNamespace(ids=ids, attentions=model.attention(ids[None])[:, 0])
    return {name: detect_heads(run, name) for name in DETECTORS}


@dataclass(frozen=True)
class HeadAblation:
    """One head of one arm silenced alone: its losses, the intact arm's, and the detector's scores."""

    arm: str
    layer: int
    head: int
    loss_repeat: float
    loss_first: float
    intact_repeat: float
    intact_first: float
    scores: dict = field(default_factory=dict)

    @property
    def added_repeat(self) -> float:
        """Nats the repeat loss rises by without this head."""
        return self.loss_repeat - self.intact_repeat

    @property
    def added_first(self) -> float:
        """Nats the first copy's loss rises by without this head."""
        return self.loss_first - self.intact_first


@dataclass(frozen=True)
class AblationStudy:
    """Every ablation of one run at one step, on one held-out batch.

    ``intact[arm]`` and ``layer_out[arm][l]`` are ``{"loss_repeat", "loss_first"}`` (the arm
    as trained; layer l's heads all silenced); ``heads`` every head of every arm alone
    (`HeadAblation`); ``step`` the steps taken; ``rows`` the held-out rows.
    """

    step: int
    rows: int
    intact: dict
    heads: tuple
    layer_out: dict

    def head(self, arm: str, layer: int, head: int) -> HeadAblation:
        for item in self.heads:
            if (item.arm, item.layer, item.head) == (arm, layer, head):
                return item
        raise TrainingError(f"{arm!r} has no head ({layer}, {head})")

    def arm_heads(self, arm: str) -> list[HeadAblation]:
        return [item for item in self.heads if item.arm == arm]

    def needed(self, arm: str = "two layers", matters: float = MATTERS) -> list[HeadAblation]:
        """The heads of ``arm`` the repeat needs: silencing one alone adds at least ``matters`` nats."""
        return [item for item in self.arm_heads(arm) if item.added_repeat >= matters]


def _arm_ablations(model, tokens: np.ndarray, n: np.ndarray):
    """``(intact, per_head, layer_out)`` losses of one model, each ``{"loss_repeat", "loss_first"}``.

    One forward pass keeps each layer's residual stream and head outputs; silencing head h of
    layer l then takes its share z_h W_O^h out of the stream after layer l and recomputes only
    the layers above (the last layer's heads cost one unembedding each). The same numbers as
    :func:`ablate`, up to rounding (the tests compare them).
    """
    p = model.params
    d_head = model.d_head

    def weights(layer):
        return tuple(p[f"layer{layer}.{name}"] for name in ("W_Q", "W_K", "W_V", "W_O"))

    def measured(x) -> dict[str, float]:
        first, repeat = repeat_losses(next_token_losses(x @ p["W_U"], tokens)[0], n)
        return {"loss_repeat": repeat, "loss_first": first}

    def above(x, layer):
        for upper in range(layer + 1, model.layers):
            out, _ = attention_forward(x, *weights(upper), model.heads)
            x = x + out
        return measured(x)

    x, embed_cache = embed_forward(tokens, p["W_E"], p["W_pos"])
    stream, z_heads = [x], []
    for layer in range(model.layers):
        W_Q, W_K, W_V, W_O = weights(layer)
        qkv = embed_project(qkv_weights(W_Q, W_K, W_V, model.heads), embed_cache) if layer == 0 else None
        out, cache = attention_forward(stream[-1], W_Q, W_K, W_V, W_O, model.heads, qkv=qkv)
        stream.append(stream[-1] + out)
        z_heads.append(cache["z_heads"])
    intact = measured(stream[-1])
    per_head = {}
    for layer in range(model.layers):
        W_O = weights(layer)[3]
        for head in range(model.heads):
            share = z_heads[layer][:, head] @ W_O[head * d_head:(head + 1) * d_head]
            per_head[layer, head] = above(stream[layer + 1] - share, layer)
    layer_out = {layer: above(stream[layer], layer) for layer in range(model.layers)}
    return intact, per_head, layer_out


def ablation_study(exp, batch=None) -> AblationStudy:
    """Silence every head of every arm alone, and each layer's heads together, on ``batch``
    (default: `heldout_batch`); with the detector's scores of every head."""
    batch = heldout_batch(exp) if batch is None else batch
    tokens, n = _check_batch(batch)
    intact, layer_out, heads = {}, {}, []
    for arm in exp.arms:
        model = exp.models[arm]
        tokens = model._check_tokens(tokens, predict=True)
        intact[arm], per_head, layer_out[arm] = _arm_ablations(model, tokens, n)
        scores = detector_scores(model)
        for (layer, head), losses in per_head.items():
            heads.append(HeadAblation(arm, layer, head, losses["loss_repeat"], losses["loss_first"],
                                      intact[arm]["loss_repeat"], intact[arm]["loss_first"],
                                      {name: float(s[layer, head]) for name, s in scores.items()}))
    return AblationStudy(exp.step_count, int(tokens.shape[0]), intact, tuple(heads), layer_out)


ABLATION_COLUMNS = ("arm", "layer", "head", "step", "loss_repeat", "loss_first", "intact_loss_repeat",
                    "intact_loss_first", "added_repeat", "added_first", *(f"{name}_score" for name in DETECTORS))


def ablation_rows(study: AblationStudy) -> tuple[list[str], list[list]]:
    """``(header, rows)``: one row per head of every arm, layer and head from 1 (the CSV of ``--ablate``)."""
    rows = [[item.arm, item.layer + 1, item.head + 1, study.step, item.loss_repeat, item.loss_first,
             item.intact_repeat, item.intact_first, item.added_repeat, item.added_first,
             *(item.scores[name] for name in DETECTORS)] for item in study.heads]
    return list(ABLATION_COLUMNS), rows


# -- what the panel and the command line say about it ---------------------------------------


def head_label(layer: int, head: int) -> str:
    """A head as the window writes it: layer.head, both from 1 ("2.1")."""
    return f"{layer + 1}.{head + 1}"


def _heads_words(labels: list[str]) -> str:
    if len(labels) == 1:
        return f"head {labels[0]}"
    return "heads " + ", ".join(labels[:-1]) + " and " + labels[-1]


def guessing_words(loss: float) -> str:
    """A repeat loss against guessing (ln 32): "no better than guessing" from ln 32 - 0.05 up (a
    model that lost what it had learnt lands a little above ln 32 as often as on it), else
    "better than guessing"."""
    return "no better than guessing" if loss >= GUESSING - GUESSING_MARGIN else "better than guessing"


def needed_text(study: AblationStudy, arm: str = "two layers", digits: int = 2) -> str:
    """What the bars say, in words, for ``arm``: which heads the repeat needs and by how much, where
    the repeat loss goes with every last-layer head out, and how little the first copy moves; or,
    before the phase change, that no head is needed yet. Every number is the study's."""
    def num(x):
        return format_number(x, digits)

    heads = study.arm_heads(arm)
    intact = study.intact[arm]
    most = max(heads, key=lambda item: item.added_repeat)
    model = arm.replace(" layers", "-layer").replace(" layer", "-layer") + " model"  # "two-layer model"
    if most.added_repeat < MATTERS:
        return (f"No head is needed yet: silencing any one head of the {model} moves its repeat loss by at most "
                f"{num(max(abs(h.added_repeat) for h in heads))} nats (it is {num(intact['loss_repeat'])}; guessing "
                f"is ln 32 = {num(GUESSING)}).")
    needed = sorted(study.needed(arm, MATTERS), key=lambda item: (-item.added_repeat, item.layer, item.head))
    lo, hi = min(h.added_repeat for h in needed), max(h.added_repeat for h in needed)
    spread = num(hi) if len(needed) == 1 else f"{num(lo)} to {num(hi)}"
    losses = [num(h.loss_repeat) for h in needed]
    losses = losses[0] if len(losses) == 1 else ", ".join(losses[:-1]) + " and " + losses[-1]
    text = (f"The repeat needs {_heads_words([head_label(h.layer, h.head) for h in needed])}: silenced alone, "
            f"{'it sends' if len(needed) == 1 else 'each sends'} its loss from {num(intact['loss_repeat'])} up to "
            f"{losses} ({spread} nats more).")
    layers = max(h.layer for h in heads) + 1
    if layers > 1:
        out = study.layer_out[arm][layers - 1]["loss_repeat"]
        text += f" With every layer-{layers} head out it is {num(out)}, {guessing_words(out)} (ln 32 = {num(GUESSING)})."
    last = [h for h in needed if h.layer == layers - 1]
    if layers > 1 and len(last) >= 2:
        detected = max(last, key=lambda h: (h.scores.get("induction", 0.0), -h.head))
        if detected is not last[0]:
            text += (f" The detector's strongest induction head is {head_label(detected.layer, detected.head)} "
                     f"({num(detected.scores['induction'])}), but silencing {head_label(last[0].layer, last[0].head)} "
                     f"costs more.")
    moved = max(abs(h.added_first) for h in heads)
    text += f" The first copy, which no head can predict, moves by at most {num(moved)} nats."
    return text


def silenced_text(intact: dict, silenced: dict, mask, one_layer: dict | None = None, digits: int = 2) -> str:
    """"With head 1.1 silenced: repeat loss 0.84 → 2.82, first copy 3.74 → 3.77": the heads whose
    ``mask`` entry is 0, and the losses ``intact`` and ``silenced`` (``{"loss_repeat", "loss_first"}``),
    with the one-layer model's repeat loss beside them when given."""
    def num(x):
        return format_number(x, digits)

    mask = np.asarray(mask)
    out = [head_label(int(l), int(h)) for l, h in np.argwhere(mask == 0)]
    if not out:
        text = f"No head silenced: repeat loss {num(intact['loss_repeat'])}, first copy {num(intact['loss_first'])}"
    else:
        change = silenced["loss_repeat"] - intact["loss_repeat"]
        text = (f"With {_heads_words(out)} silenced: repeat loss {num(intact['loss_repeat'])} → "
                f"{num(silenced['loss_repeat'])}, first copy {num(intact['loss_first'])} → "
                f"{num(silenced['loss_first'])}")
        if abs(change) < MATTERS:
            text += " (the repeat barely moves)"
        elif change > 0 and guessing_words(silenced["loss_repeat"]) != "better than guessing":
            text += f" ({guessing_words(silenced['loss_repeat'])})"
    if one_layer is not None:
        text += f"; the one-layer model's repeat loss is {num(one_layer['loss_repeat'])}"
    return text + "."

