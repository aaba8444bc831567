"""Checking a plain dict (a parsed session or preset file) field by field.

Nothing here trusts the input: every key is known, every value has the right
type and range, every matrix has exactly the shape the settings imply, before
a ``StudioState`` is built from it. Older schema versions are migrated here.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .state import (
    visible_store_shapes,
    MAX_D_HEAD,
    MAX_D_MODEL,
    MAX_HEADS,
    MAX_SEED,
    SCHEMA_VERSION,
    WEIGHT_NAMES,
    StateError,
)

_FIELDS = {
    "schema_version", "name", "sentence", "target_sentence", "d_model", "heads", "d_head",
    "seed", "scale", "causal", "positional", "projections", "temperature", "softmax", "score",
    "embeddings", "weights", "weight_stores", "selection", "description", "pinned",
}
_MAX_EDITED_WORDS = 5000


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
    in version 2 as well, so a version-1 dict needs no change beyond its number.
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
