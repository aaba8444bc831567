"""``config.json``: which architecture, how big, checked before any weight is read."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .errors import ModelError

KINDS = ("bert", "gpt2")

# Far beyond any model a lecture shows; a config past these is damaged or hostile.
LIMITS = {
    "layers": 256,
    "heads": 1024,
    "d_model": 65_536,
    "d_ff": 262_144,
    "vocab_size": 2_000_000,
    "max_positions": 1_000_000,
    "type_vocab_size": 1024,
}
MAX_CONFIG_BYTES = 10 * 1024 * 1024

_BERT_ACTIVATIONS = {"gelu": "gelu", "gelu_python": "gelu", "gelu_new": "gelu_new", "relu": "relu"}
_GPT2_ACTIVATIONS = {"gelu_new": "gelu_new", "gelu": "gelu", "gelu_python": "gelu", "relu": "relu"}


@dataclass(frozen=True)
class ModelConfig:
    """The numbers of ``config.json`` that the forward pass needs, checked."""

    kind: str
    layers: int
    heads: int
    d_model: int
    d_ff: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    eps: float
    activation: str
    scale_attention: bool = True
    scale_by_layer: bool = False

    @property
    def d_head(self) -> int:
        return self.d_model // self.heads


def _kind(raw: dict, where: str) -> str:
    model_type = raw.get("model_type")
    archs = raw.get("architectures") or []
    if model_type in KINDS:
        return model_type
    if isinstance(archs, list):
        for arch in archs:
            if isinstance(arch, str) and arch.startswith("Bert"):
                return "bert"
            if isinstance(arch, str) and arch.startswith("GPT2"):
                return "gpt2"
    named = model_type or (archs[0] if isinstance(archs, list) and archs else None)
    raise ModelError(
        f"{where} describes a {named!r} model; only BERT (model_type \"bert\") and GPT-2 "
        "(model_type \"gpt2\") architectures, and the training lab's attention-only models, can be loaded"
    )


def _int(raw: dict, keys: tuple, what: str, where: str, default=None) -> int:
    for key in keys:
        if key in raw and raw[key] is not None:
            value = raw[key]
            break
    else:
        if default is not None:
            return default
        raise ModelError(f"{where} has no {keys[0]!r} ({what})")
    if type(value) is not int or value < 1:
        raise ModelError(f"{where}: {keys[0]} ({what}) must be a positive whole number, got {value!r}")
    limit = LIMITS.get(what)
    if limit is not None and value > limit:
        raise ModelError(f"{where}: {keys[0]} = {value} is absurd for {what} (the limit is {limit})")
    return value


def read_config(folder: Path) -> ModelConfig:
    """Parse and check ``folder/config.json``; raise :class:`ModelError` with the reason."""
    path = Path(folder) / "config.json"
    where = f"config.json in {folder}"
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ModelError(f"{where} is larger than {MAX_CONFIG_BYTES} bytes; it is not a model config")
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(f"{folder} has no config.json: it is not a Hugging Face model folder") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelError(f"{where} is not valid JSON ({exc}); download or save the model again") from None
    if not isinstance(raw, dict):
        raise ModelError(f"{where} is not a JSON object; download or save the model again")
    kind = _kind(raw, where)
    if kind == "bert":
        layers = _int(raw, ("num_hidden_layers",), "layers", where)
        heads = _int(raw, ("num_attention_heads",), "heads", where)
        d_model = _int(raw, ("hidden_size",), "d_model", where)
        d_ff = _int(raw, ("intermediate_size",), "d_ff", where)
        max_positions = _int(raw, ("max_position_embeddings",), "max_positions", where)
        type_vocab = _int(raw, ("type_vocab_size",), "type_vocab_size", where, default=2)
        eps = raw.get("layer_norm_eps", 1e-12)
        act = raw.get("hidden_act", "gelu")
        activation = _BERT_ACTIVATIONS.get(act) if isinstance(act, str) else None
        position = raw.get("position_embedding_type", "absolute")
        if position != "absolute":
            raise ModelError(f"{where}: position_embedding_type {position!r} is not supported (only \"absolute\")")
        if raw.get("is_decoder") or raw.get("add_cross_attention"):
            raise ModelError(f"{where}: BERT decoders with cross-attention are not supported")
        scale_attention, scale_by_layer = True, False
    else:
        layers = _int(raw, ("n_layer", "num_hidden_layers"), "layers", where)
        heads = _int(raw, ("n_head", "num_attention_heads"), "heads", where)
        d_model = _int(raw, ("n_embd", "hidden_size"), "d_model", where)
        d_ff = _int(raw, ("n_inner",), "d_ff", where, default=4 * d_model)
        max_positions = _int(raw, ("n_positions", "max_position_embeddings"), "max_positions", where)
        type_vocab = 1
        eps = raw.get("layer_norm_epsilon", 1e-5)
        act = raw.get("activation_function", "gelu_new")
        activation = _GPT2_ACTIVATIONS.get(act) if isinstance(act, str) else None
        scale_attention = bool(raw.get("scale_attn_weights", True))
        scale_by_layer = bool(raw.get("scale_attn_by_inverse_layer_idx", False))
    vocab = _int(raw, ("vocab_size",), "vocab_size", where)
    if activation is None:
        raise ModelError(f"{where}: the activation {act!r} is not supported (gelu, gelu_new or relu)")
    if d_model % heads:
        raise ModelError(
            f"{where}: the hidden size {d_model} is not divisible by the {heads} heads; "
            "every head needs the same d_head"
        )
    if d_model * d_ff > 2**31 or vocab * d_model > 2**33:
        raise ModelError(f"{where}: sizes d_model {d_model}, d_ff {d_ff}, vocab {vocab} are absurd for one model")
    if type(eps) not in (int, float) or not 0 < eps < 1:
        raise ModelError(f"{where}: the layer-norm epsilon must be a small positive number, got {eps!r}")
    return ModelConfig(kind, layers, heads, d_model, d_ff, vocab, max_positions, type_vocab, float(eps),
                       activation, scale_attention, scale_by_layer)


def peek_kind(folder: Path) -> str | None:
    """The architecture of a folder's config (for listing models), or None if it is not one we load."""
    try:
        return read_config(folder).kind
    except ModelError:
        return None
