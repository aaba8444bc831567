"""Checkpoint names and shapes, and the weights rearranged for the engine.

Stored layouts differ: BERT's ``nn.Linear`` keeps ``(out, in)`` (``y = x·Wᵀ + b``),
GPT-2's ``Conv1D`` keeps ``(in, out)`` (``y = x·W + b``) and fuses q, k and v
in one ``c_attn``. Here every matrix becomes the row-vector form of the seeds,
``y = x·W + b``, and the projections are split per head: ``w_q (heads, d_model, d_head)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .config import ModelConfig
from .errors import ModelError
from .safetensors_io import FLOAT_DTYPES, WeightsFile

PREFIXES = ("bert.", "transformer.")


@dataclass(frozen=True)
class LayerWeights:
    """One transformer layer in the engine's form.

    ``w_q, w_k, w_v (heads, d_model, d_head)`` with biases ``(heads, d_head)``;
    ``w_o (d_model, d_model)``, ``b_o (d_model,)``; ``ln_1``/``ln_2`` are
    (gamma, beta) pairs: for BERT the norms after attention and after the
    feed-forward (post-LN), for GPT-2 the norms before them (pre-LN); the
    feed-forward ``w_1 (d_model, d_ff)``, ``b_1``, ``w_2 (d_ff, d_model)``, ``b_2``.
    """

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    b_q: np.ndarray
    b_k: np.ndarray
    b_v: np.ndarray
    w_o: np.ndarray
    b_o: np.ndarray
    ln_1: tuple
    ln_2: tuple
    w_1: np.ndarray
    b_1: np.ndarray
    w_2: np.ndarray
    b_2: np.ndarray


@dataclass(frozen=True)
class ModelWeights:
    """Embedding tables, final norm (GPT-2) or embedding norm (BERT), and the layers."""

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray | None
    ln_embed: tuple | None
    ln_final: tuple | None
    layers: tuple


def _canonical(name: str) -> str:
    for prefix in PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    # Checkpoints from before 2019 call the LayerNorm parameters gamma and beta.
    if name.endswith("LayerNorm.gamma"):
        name = name[: -len("gamma")] + "weight"
    elif name.endswith("LayerNorm.beta"):
        name = name[: -len("beta")] + "bias"
    return name


def expected_shapes(cfg: ModelConfig) -> dict[str, tuple]:
    """Every stored tensor the forward pass needs, by canonical name, with its stored shape."""
    d, ff, v, p = cfg.d_model, cfg.d_ff, cfg.vocab_size, cfg.max_positions
    shapes = {}
    if cfg.kind == "bert":
        shapes.update({
            "embeddings.word_embeddings.weight": (v, d),
            "embeddings.position_embeddings.weight": (p, d),
            "embeddings.token_type_embeddings.weight": (cfg.type_vocab_size, d),
            "embeddings.LayerNorm.weight": (d,),
            "embeddings.LayerNorm.bias": (d,),
        })
        for i in range(cfg.layers):
            pre = f"encoder.layer.{i}."
            for part in ("query", "key", "value"):
                shapes[f"{pre}attention.self.{part}.weight"] = (d, d)
                shapes[f"{pre}attention.self.{part}.bias"] = (d,)
            shapes.update({
                f"{pre}attention.output.dense.weight": (d, d),
                f"{pre}attention.output.dense.bias": (d,),
                f"{pre}attention.output.LayerNorm.weight": (d,),
                f"{pre}attention.output.LayerNorm.bias": (d,),
                f"{pre}intermediate.dense.weight": (ff, d),
                f"{pre}intermediate.dense.bias": (ff,),
                f"{pre}output.dense.weight": (d, ff),
                f"{pre}output.dense.bias": (d,),
                f"{pre}output.LayerNorm.weight": (d,),
                f"{pre}output.LayerNorm.bias": (d,),
            })
    else:
        shapes.update({"wte.weight": (v, d), "wpe.weight": (p, d), "ln_f.weight": (d,), "ln_f.bias": (d,)})
        for i in range(cfg.layers):
            pre = f"h.{i}."
            shapes.update({
                f"{pre}ln_1.weight": (d,), f"{pre}ln_1.bias": (d,),
                f"{pre}attn.c_attn.weight": (d, 3 * d), f"{pre}attn.c_attn.bias": (3 * d,),
                f"{pre}attn.c_proj.weight": (d, d), f"{pre}attn.c_proj.bias": (d,),
                f"{pre}ln_2.weight": (d,), f"{pre}ln_2.bias": (d,),
                f"{pre}mlp.c_fc.weight": (d, ff), f"{pre}mlp.c_fc.bias": (ff,),
                f"{pre}mlp.c_proj.weight": (ff, d), f"{pre}mlp.c_proj.bias": (d,),
            })
    return shapes


def _per_head(w: np.ndarray, heads: int) -> np.ndarray:
    """(d_model, heads*d_head) in row-vector form -> (heads, d_model, d_head)."""
    d_model, width = w.shape
    return np.ascontiguousarray(w.reshape(d_model, heads, width // heads).transpose(1, 0, 2))


def load_weights(path: Path, cfg: ModelConfig) -> ModelWeights:
    """Check every needed tensor's name, dtype and shape in the header, then read them as float64."""
    wf = WeightsFile(path)
    names = {}
    for stored in wf.tensors:
        names.setdefault(_canonical(stored), stored)
    shapes = expected_shapes(cfg)
    missing = [n for n in shapes if n not in names]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise ModelError(
            f"{path.name} in {path.parent} lacks weights the {cfg.kind} config needs: "
            f"{', '.join(missing[:3])}{more}. Is config.json from the same model?"
        )
    for name, shape in shapes.items():
        info = wf.tensors[names[name]]
        if info.shape != shape:
            raise ModelError(
                f"the weight {names[name]} in {path.name} has shape {info.shape}, but config.json "
                f"needs {shape}: the weights and the config are from different models"
            )
        if info.dtype not in FLOAT_DTYPES:
            raise ModelError(f"the weight {names[name]} in {path.name} is {info.dtype}; expected floating point")

    def get(name):
        return wf.get(names[name])

    heads = cfg.heads
    layers = []
    if cfg.kind == "bert":
        for i in range(cfg.layers):
            pre = f"encoder.layer.{i}."
            w = {part: get(f"{pre}attention.self.{part}.weight").T for part in ("query", "key", "value")}
            b = {part: get(f"{pre}attention.self.{part}.bias").reshape(heads, -1)
                 for part in ("query", "key", "value")}
            layers.append(LayerWeights(
                w_q=_per_head(w["query"], heads), w_k=_per_head(w["key"], heads),
                w_v=_per_head(w["value"], heads),
                b_q=b["query"], b_k=b["key"], b_v=b["value"],
                w_o=np.ascontiguousarray(get(f"{pre}attention.output.dense.weight").T),
                b_o=get(f"{pre}attention.output.dense.bias"),
                ln_1=(get(f"{pre}attention.output.LayerNorm.weight"), get(f"{pre}attention.output.LayerNorm.bias")),
                ln_2=(get(f"{pre}output.LayerNorm.weight"), get(f"{pre}output.LayerNorm.bias")),
                w_1=np.ascontiguousarray(get(f"{pre}intermediate.dense.weight").T),
                b_1=get(f"{pre}intermediate.dense.bias"),
                w_2=np.ascontiguousarray(get(f"{pre}output.dense.weight").T),
                b_2=get(f"{pre}output.dense.bias"),
            ))
        return ModelWeights(
            word=get("embeddings.word_embeddings.weight"),
            position=get("embeddings.position_embeddings.weight"),
            token_type=get("embeddings.token_type_embeddings.weight"),
            ln_embed=(get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias")),
            ln_final=None,
            layers=tuple(layers),
        )
    d = cfg.d_model
    for i in range(cfg.layers):
        pre = f"h.{i}."
        c_attn, c_bias = get(f"{pre}attn.c_attn.weight"), get(f"{pre}attn.c_attn.bias")
        layers.append(LayerWeights(
            w_q=_per_head(c_attn[:, :d], heads), w_k=_per_head(c_attn[:, d:2 * d], heads),
            w_v=_per_head(c_attn[:, 2 * d:], heads),
            b_q=c_bias[:d].reshape(heads, -1), b_k=c_bias[d:2 * d].reshape(heads, -1),
            b_v=c_bias[2 * d:].reshape(heads, -1),
            w_o=get(f"{pre}attn.c_proj.weight"), b_o=get(f"{pre}attn.c_proj.bias"),
            ln_1=(get(f"{pre}ln_1.weight"), get(f"{pre}ln_1.bias")),
            ln_2=(get(f"{pre}ln_2.weight"), get(f"{pre}ln_2.bias")),
            w_1=get(f"{pre}mlp.c_fc.weight"), b_1=get(f"{pre}mlp.c_fc.bias"),
            w_2=get(f"{pre}mlp.c_proj.weight"), b_2=get(f"{pre}mlp.c_proj.bias"),
        ))
    return ModelWeights(
        word=get("wte.weight"), position=get("wpe.weight"), token_type=None, ln_embed=None,
        ln_final=(get("ln_f.weight"), get("ln_f.bias")), layers=tuple(layers),
    )
