"""Checking a plain dict (a parsed session or preset file) field by field, before any state
is built from it. Nothing here trusts the input: every key is known, every value has the
right type and range, every matrix has exactly the shape the settings imply.

Two kinds of file, one module each: :mod:`.toy` (the toy studio's sessions and presets,
versions 1 to 3, migrated here) and :mod:`.trained` (sessions of a trained model, version 4).
"""

from .cells import EditedCells
from .toy import (
    SCHEMA_VERSION,
    WEIGHT_NAMES,
    ADDITIVE_NAMES,
    MAX_LAYERS,
    DENSE_WEIGHT_CELLS,
    visible_store_shapes,
    seeded_store,
    seeded_reference,
    fan_ins,
    migrate,
    state_kwargs_from_dict,
)
from .trained import (
    TRAINED_SCHEMA_VERSION,
    MAX_MODEL_NAME_CHARS,
    MAX_FOLDER_CHARS,
    ModelRef,
    TrainedSession,
    model_ref_from_dict,
    trained_session_from_dict,
)

__all__ = [
    "SCHEMA_VERSION", "WEIGHT_NAMES", "ADDITIVE_NAMES", "MAX_LAYERS", "DENSE_WEIGHT_CELLS",
    "visible_store_shapes", "seeded_store", "seeded_reference", "fan_ins", "migrate",
    "state_kwargs_from_dict", "TRAINED_SCHEMA_VERSION", "MAX_MODEL_NAME_CHARS", "MAX_FOLDER_CHARS",
    "ModelRef", "TrainedSession", "model_ref_from_dict", "trained_session_from_dict", "EditedCells",
]
