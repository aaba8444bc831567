"""Checking a toy session's plain dict (a parsed session or preset file) field by field.

Nothing here trusts the input: every key is known, every value has the right
type and range, every matrix has exactly the shape the settings imply, before
a ``StudioState`` is built from it. Older schema versions are migrated here.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from itertools import chain

import numpy as np

from ..engine.init import seeded_weights
from ..limits import (
    MAX_D_HEAD,
    MAX_D_MODEL,
    MAX_EDITED_WORDS,
    MAX_HEADS,
    MAX_SEED,
    MAX_WEIGHT_EDITS,
    StateError,
)

# Version 1: the first format. Version 2 adds the additive-score weights
# (w_1, w_2, v_a) and the optional weight_stores. Version 3 writes weights as
# edits: only the cells that differ from the values the seed gives them (so a
# large unedited model is a small file), with the shape of each store, and the
# visible matrices in full only for small models. Versions 1 and 2 load as they
# are (missing weights come from the seed).
SCHEMA_VERSION = 3

WEIGHT_NAMES = ("w_q", "w_k", "w_v", "w_o", "w_1", "w_2", "v_a")
# The additive (Bahdanau) score weights: v_aᵀ·tanh(q W_1 + k W_2), with d_a = d_k.
ADDITIVE_NAMES = ("w_1", "w_2", "v_a")
_MAX_AXIS = max(MAX_D_MODEL, MAX_D_HEAD)
# Growth steps remembered per weight store (older ones only make files larger).
MAX_LAYERS = 32
# Visible weights are written in full (readable, for NumPy) up to this many cells.
DENSE_WEIGHT_CELLS = 20_000


def visible_store_shapes(heads: int, d_model: int, d_head: int, projections: bool) -> dict[str, tuple[int, int, int]]:
    """The shape of the visible corner of every weight store for these settings."""
    h, d, k = heads, d_model, d_head
    # Additive weights act on q and k: d_k is d_head with projections, else d_model (Q = K = X).
    eh, dk = (heads, d_head) if projections else (1, d_model)
    return {"w_q": (h, d, k), "w_k": (h, d, k), "w_v": (h, d, k), "w_o": (h, k, d),
            "w_1": (eh, dk, dk), "w_2": (eh, dk, dk), "v_a": (eh, 1, dk)}


@functools.lru_cache(maxsize=16)
def seeded_store(seed: int, name: str, shape: tuple[int, int, int], fan_in: int) -> np.ndarray:
    """The seed's values of a whole store at one fan-in, read-only (cached: saves compare with them)."""
    arr = seeded_weights(seed, name, tuple(shape), fan_in)
    arr.flags.writeable = False
    return arr


def seeded_reference(seed: int, name: str, shape, layers, fan_in: int) -> np.ndarray:
    """The seed's values of a weight store of ``shape`` grown through ``layers``.

    ``layers`` is a sequence of ``(a, b, c, fan_in)``: the cells of the first
    box that holds a cell were drawn at that box's fan-in; cells in no box at
    ``fan_in``. Read-only.
    """
    shape = tuple(shape)
    layers = tuple(tuple(layer) for layer in layers)
    if layers == ((*shape, fan_in),):
        return seeded_store(seed, name, shape, fan_in)
    boxes = [((min(a, shape[0]), min(b, shape[1]), min(c, shape[2])), fan) for a, b, c, fan in layers]
    # A layer that covers the whole store hides whatever is painted before it (the values at
    # fan_in, the later layers): start from the first such layer, taken from the cache, where the
    # store it was drawn for usually still is (a model shrunk after it was large: a save and an
    # open then draw no store anew). Smaller boxes are drawn as before, outside the cache.
    whole = next((i for i, (box, _) in enumerate(boxes) if box == shape), None)
    if whole is None:
        ref = np.array(seeded_store(seed, name, shape, fan_in))
    else:
        ref = np.array(seeded_store(seed, name, shape, boxes[whole][1]))
        boxes = boxes[:whole]
    for box, fan in reversed(boxes):  # the first layer wins: paint it last
        ref[: box[0], : box[1], : box[2]] = seeded_weights(seed, name, box, fan)
    ref.flags.writeable = False
    return ref


def fan_ins(heads: int, d_model: int, d_head: int, projections: bool) -> dict[str, int]:
    """The fan-in each weight store is initialised with (weights ~ N(0, 1/fan_in))."""
    d_k = d_head if projections else d_model
    return {"w_q": d_model, "w_k": d_model, "w_v": d_model, "w_o": heads * d_head,
            "w_1": d_k, "w_2": d_k, "v_a": d_k}


_FIELDS = {
    "schema_version", "name", "sentence", "target_sentence", "d_model", "heads", "d_head",
    "seed", "scale", "causal", "positional", "projections", "temperature", "softmax", "score",
    "embeddings", "weights", "weight_stores", "weight_edits", "selection", "description", "pinned",
}
_MAX_EDITED_WORDS = MAX_EDITED_WORDS


def _int_field(data: Mapping, key: str, lo: int, hi: int):
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise StateError(f"“{key}” must be a whole number, got {value!r}"[:200])
    if not lo <= value <= hi:
        raise StateError(f"“{key}” must be between {lo} and {hi}, got {value}")
    return value


def _number_list(name: str, value, length: int) -> list[float]:
    if not isinstance(value, list) or len(value) != length:
        got = f"{len(value)} entries" if isinstance(value, list) else type(value).__name__
        raise StateError(f"{name} must be a list of {length} numbers, got {got}")
    for x in value:
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise StateError(f"{name} must contain only numbers, found {x!r}"[:200])
    return value


def _matrix(name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """Check nested lists against ``shape`` before NumPy ever sees them."""
    if len(shape) == 1:
        return np.asarray(_number_list(name, value, shape[0]), dtype=np.float64)
    if not isinstance(value, list) or len(value) != shape[0]:
        got = f"{len(value)} rows" if isinstance(value, list) else type(value).__name__
        raise StateError(f"{name} must have {shape[0]} rows for shape {shape}, got {got}")
    return np.stack([_matrix(f"{name}[{i}]", row, shape[1:]) for i, row in enumerate(value)]) if shape[0] else np.zeros(shape)


def _nested_shape(name: str, value) -> tuple[int, int, int]:
    """The (a, b, c) shape of nested lists, read from their first elements (checked fully later)."""
    shape = []
    node = value
    for _ in range(3):
        if not isinstance(node, list) or not node:
            raise StateError(f"the stored {name} must be a non-empty 3-d array of numbers")
        shape.append(len(node))
        node = node[0]
    return tuple(shape)


def migrate(data: Mapping) -> dict:
    """Bring an older file's dict up to the current schema.

    Version 1 lacks the additive weights and weight_stores, which are optional
    in version 2 as well, and version 3's weight_edits are optional too, so an
    older dict needs no change beyond its number.
    """
    version = data.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise StateError("this is not an Attention Studio session: “schema_version” is missing or not a number")
    if version > SCHEMA_VERSION:
        raise StateError(
            f"this file was written by a newer Attention Studio (format version {version}); "
            f"this version reads formats up to {SCHEMA_VERSION}. Update the app to open it."
        )
    if version < 1:
        raise StateError(f"format version {version} does not exist")
    migrated = dict(data)
    if version == 1 and isinstance(migrated.get("weights"), Mapping):
        extra = set(migrated["weights"]) & {"w_1", "w_2", "v_a"}
        if extra:
            raise StateError(f"a version-1 file cannot hold {', '.join(sorted(extra))} (added in version 2)")
    if version < 3 and "weight_edits" in migrated:
        raise StateError(f"a version-{version} file cannot hold “weight_edits” (added in version 3)")
    migrated["schema_version"] = SCHEMA_VERSION
    return migrated


def state_kwargs_from_dict(data) -> dict:
    """Validate ``data`` and return keyword arguments for ``StudioState``.

    Raises ``StateError`` on the first problem; never returns a partial result.
    """
    try:
        return _state_kwargs(data)
    except OverflowError:
        raise StateError("the file holds a number too large to be a float") from None


def _state_kwargs(data) -> dict:
    if not isinstance(data, Mapping):
        raise StateError(f"a session must be a JSON object, got {type(data).__name__}")
    data = migrate(data)
    unknown = set(data) - _FIELDS
    if unknown:
        raise StateError(f"unknown field{'s' if len(unknown) > 1 else ''} in the file: {', '.join(sorted(unknown))[:200]}")
    kwargs: dict = {}
    for key in ("sentence", "target_sentence", "name"):
        if key in data:
            if not isinstance(data[key], str):
                raise StateError(f"“{key}” must be text, got {type(data[key]).__name__}")
            kwargs[key] = data[key]
    if "description" in data and not isinstance(data["description"], str):
        raise StateError("“description” must be text")
    limits = {"d_model": MAX_D_MODEL, "heads": MAX_HEADS, "d_head": MAX_D_HEAD, "seed": MAX_SEED}
    for key, hi in limits.items():
        if key in data:
            kwargs[key] = _int_field(data, key, 0 if key == "seed" else 1, hi)
    for key in ("scale", "causal", "positional", "projections"):
        if key in data:
            if not isinstance(data[key], bool):
                raise StateError(f"“{key}” must be true or false, got {data[key]!r}"[:200])
            kwargs[key] = data[key]
    if "temperature" in data:
        t = data["temperature"]
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            raise StateError(f"“temperature” must be a number, got {t!r}"[:200])
        kwargs["temperature"] = float(t)
    for key in ("softmax", "score"):
        if key in data:
            if not isinstance(data[key], str):
                raise StateError(f"“{key}” must be text, got {data[key]!r}"[:200])
            kwargs[key] = data[key]

    if "embeddings" in data:
        emb = data["embeddings"]
        if not isinstance(emb, Mapping):
            raise StateError("“embeddings” must map words to {component: value}")
        if len(emb) > _MAX_EDITED_WORDS:
            raise StateError(f"“embeddings” edits {len(emb):,} words; the limit is {_MAX_EDITED_WORDS:,}")
        edits = {}
        for word, values in emb.items():
            if not isinstance(values, Mapping):
                raise StateError(f"the embedding of {word!r} must map components to values"[:200])
            if len(values) > MAX_D_MODEL:
                raise StateError(f"the embedding of {word!r} has {len(values)} components; the limit is {MAX_D_MODEL}"[:200])
            entry = {}
            for index, value in values.items():
                if not (isinstance(index, str) and index.isascii() and index.isdigit()) or int(index) >= MAX_D_MODEL:
                    raise StateError(f"component {index!r} of {word!r} is not an index from 0 to {MAX_D_MODEL - 1}"[:200])
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise StateError(f"component {index} of {word!r} must be a number, got {value!r}"[:200])
                entry[int(index)] = float(value)
            edits[word] = entry
        kwargs["embedding_edits"] = edits

    if "weights" in data:
        weights = data["weights"]
        if not isinstance(weights, Mapping):
            raise StateError("“weights” must map w_q, w_k, w_v, w_o to matrices")
        extra = set(weights) - set(WEIGHT_NAMES)
        if extra:
            raise StateError(f"unknown weight matrices: {', '.join(sorted(map(str, extra)))[:200]}")
        stores = visible_store_shapes(kwargs.get("heads", 1), kwargs.get("d_model", 3), kwargs.get("d_head", 3),
                                      kwargs.get("projections", True))
        for name in WEIGHT_NAMES:
            if name in weights:
                a, b, c = stores[name]
                # W_O is written (heads*d_head, d_model) and v_a (heads, d_k), as people read them.
                shape = (a * b, c) if name == "w_o" else (a, c) if name == "v_a" else (a, b, c)
                kwargs[f"{name}_store"] = _matrix(name, weights[name], shape).reshape(a, b, c)

    if "weight_edits" in data:
        if "weight_stores" in data:
            raise StateError("a file holds either “weight_edits” or “weight_stores”, not both")
        _apply_weight_edits(data["weight_edits"], kwargs)

    if "weight_stores" in data:
        stores = data["weight_stores"]
        if not isinstance(stores, Mapping) or set(stores) - set(WEIGHT_NAMES):
            raise StateError("“weight_stores” must map w_q, w_k, w_v, w_o to 3-d arrays")
        visible = visible_store_shapes(kwargs.get("heads", 1), kwargs.get("d_model", 3), kwargs.get("d_head", 3),
                                       kwargs.get("projections", True))
        for name, value in stores.items():
            shape = _nested_shape(name, value)
            if any(s < v for s, v in zip(shape, visible[name])) or shape[0] > MAX_HEADS \
                    or max(shape[1:]) > max(MAX_D_MODEL, MAX_D_HEAD):
                raise StateError(f"the stored {name} has shape {shape}; it must cover {visible[name]} "
                                 "and stay within the studio's limits")
            store = _matrix(f"stored {name}", value, shape)
            if f"{name}_store" in kwargs:  # the visible weights win over the stored corner
                store[: visible[name][0], : visible[name][1], : visible[name][2]] = kwargs[f"{name}_store"]
            kwargs[f"{name}_store"] = store

    if "selection" in data:
        sel = data["selection"]
        if not isinstance(sel, Mapping) or set(sel) - {"query", "head"}:
            raise StateError("“selection” must be {\"query\": n, \"head\": n}")
        for key, field in (("query", "query_index"), ("head", "head_index")):
            if key in sel:
                value = sel[key]
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise StateError(f"selection “{key}” must be a whole number >= 0, got {value!r}"[:200])
                kwargs[field] = value

    if "pinned" in data:  # optional: the compare view's "before" state, in this same format
        pinned = data["pinned"]
        if not isinstance(pinned, Mapping) or "pinned" in pinned:
            raise StateError("“pinned” must be one session state (without a pinned state of its own)")
        try:
            kwargs["pinned"] = _state_kwargs(pinned)
        except StateError as exc:
            raise StateError(f"the pinned comparison state: {exc}") from None
    return kwargs


def _apply_weight_edits(edits, kwargs: dict) -> None:
    """Rebuild weight stores from version 3's edits: seeded values, then the edited cells.

    ``edits`` maps a weight name to ``{"shape": [a, b, c], "cells": [[i, j, k, value], ...]}``;
    the shape is the whole store (the visible corner and the hidden values kept
    for growing back). Visible weights already in ``kwargs`` win over the cells.
    """
    if not isinstance(edits, Mapping) or set(edits) - set(WEIGHT_NAMES):
        raise StateError("“weight_edits” must map weight names (w_q, w_k, ...) to their edits")
    dims = (kwargs.get("heads", 1), kwargs.get("d_model", 3), kwargs.get("d_head", 3), kwargs.get("projections", True))
    visible = visible_store_shapes(*dims)
    fans = fan_ins(*dims)
    total = 0
    for name, entry in edits.items():
        if not isinstance(entry, Mapping) or not {"shape", "cells"} <= set(entry) <= {"shape", "layers", "cells"}:
            raise StateError(f"the edits of {name} must be {{\"shape\": [a, b, c], \"cells\": [[i, j, k, value], ...]}}")
        shape = entry["shape"]
        if not (isinstance(shape, list) and len(shape) == 3
                and all(isinstance(n, int) and not isinstance(n, bool) for n in shape)):
            raise StateError(f"the shape of the edited {name} must be three whole numbers")
        shape = tuple(shape)
        if any(s < v for s, v in zip(shape, visible[name])) or shape[0] > MAX_HEADS or max(shape[1:]) > _MAX_AXIS:
            raise StateError(f"the edited {name} has shape {shape}; it must cover {visible[name]} "
                             "and stay within the studio's limits")
        cells = entry["cells"]
        if not isinstance(cells, list):
            raise StateError(f"the edited cells of {name} must be a list of [i, j, k, value]")
        total += len(cells)
        if total > MAX_WEIGHT_EDITS:
            raise StateError(f"the file edits more than {MAX_WEIGHT_EDITS:,} weights; that is more than any model holds")
        # Checked with map() and slices of one flat list rather than a Python loop per cell:
        # a million cells are read in a fraction of the time, with the same checks.
        if not set(map(type, cells)) <= {list} or not set(map(len, cells)) <= {4}:
            raise StateError(f"every edited cell of {name} must be [i, j, k, value]")
        flat = list(chain.from_iterable(cells))
        index_types = set(map(type, flat[0::4])) | set(map(type, flat[1::4])) | set(map(type, flat[2::4]))
        value_types = set(map(type, flat[3::4]))
        if not index_types <= {int} or not value_types <= {int, float}:
            raise StateError(f"an edited cell of {name} holds something that is not a number")
        layers = entry.get("layers", [[*shape, fans[name]]])
        if not (isinstance(layers, list) and 1 <= len(layers) <= MAX_LAYERS
                and all(isinstance(layer, list) and len(layer) == 4 for layer in layers)
                and all(type(n) is int and 1 <= n <= max(MAX_HEADS * MAX_D_HEAD, _MAX_AXIS)
                        for layer in layers for n in layer)):
            raise StateError(f"the layers of the edited {name} must be up to {MAX_LAYERS} lists [a, b, c, fan_in] "
                             "of whole numbers within the studio's limits")
        layers = tuple(tuple(layer) for layer in layers)
        kwargs.setdefault("_layers", {})[name] = layers
        store = np.array(seeded_reference(kwargs.get("seed", 0), name, shape, layers, fans[name]))
        if cells:
            index = np.array([flat[0::4], flat[1::4], flat[2::4]], dtype=np.int64).T
            if np.any(index < 0) or np.any(index >= np.array(shape)):
                raise StateError(f"an edited cell of {name} lies outside its shape {shape}")
            store[index[:, 0], index[:, 1], index[:, 2]] = np.array(flat[3::4], dtype=np.float64)
        if f"{name}_store" in kwargs:  # the visible weights, when written, win
            a, b, c = visible[name]
            store[:a, :b, :c] = kwargs[f"{name}_store"]
        kwargs[f"{name}_store"] = store
