"""Input checks shared by the engine functions.

Every public engine function converts its inputs here, so that a bad value is
refused in one place with one style of message.
"""

from __future__ import annotations

import numpy as np

from .errors import EngineError


def as_array(name: str, value, ndim: int, *, allow_empty_rows: bool = True) -> np.ndarray:
    """Return ``value`` as a float64 array of ``ndim`` dimensions, or raise.

    The last axis (the vector dimension) must be at least 1; the other axes may
    be 0 (an empty sequence is a valid input). Values must be finite.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EngineError(f"{name} must be an array of numbers ({exc})") from None
    if arr.ndim != ndim:
        raise EngineError(
            f"{name} must have {ndim} dimension{'s' if ndim != 1 else ''}, "
            f"got shape {arr.shape}"
        )
    if ndim and arr.shape[-1] < 1:
        raise EngineError(f"{name} has a vector dimension of {arr.shape[-1]}; it must be at least 1")
    if not allow_empty_rows and arr.size == 0:
        raise EngineError(f"{name} is empty (shape {arr.shape})")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise EngineError(
            f"{name} contains a non-finite value ({arr[tuple(bad)]}) at index {tuple(int(i) for i in bad)}; "
            "every entry must be a finite number"
        )
    return arr


def check_positive(name: str, value, *, integer: bool = False) -> float:
    """Return ``value`` as a positive finite number, or raise."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise EngineError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(number) or number <= 0:
        raise EngineError(f"{name} must be a positive finite number, got {value!r}")
    if integer:
        if number != int(number):
            raise EngineError(f"{name} must be a whole number, got {value!r}")
        return int(number)
    return number


def check_dims(name: str, dims) -> np.ndarray:
    """Return ``dims`` as a 1-d int array of dimensions >= 1, or raise."""
    try:
        arr = np.atleast_1d(np.asarray(dims))
    except (TypeError, ValueError):
        raise EngineError(f"{name} must be a list of whole numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise EngineError(f"{name} must be a non-empty list of whole numbers, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number) or not np.all(np.isfinite(arr)):
        raise EngineError(f"{name} must contain finite whole numbers")
    as_int = arr.astype(np.int64)
    if np.any(as_int != arr):
        raise EngineError(f"{name} must contain whole numbers, got {arr.tolist()}")
    if np.any(as_int < 1):
        raise EngineError(f"every d in {name} must be at least 1, got {int(as_int.min())}")
    return as_int
