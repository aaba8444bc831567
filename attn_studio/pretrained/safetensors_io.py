"""Reading ``model.safetensors`` without trusting it.

The header is checked here, against the file's size, before the file is handed
to the ``safetensors`` library: a truncated or hostile header becomes a
:class:`ModelError`, never a huge allocation or a crash. Tensors are then read
with ``safetensors``' NumPy API (memory-mapped) and converted to float64.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import ModelError

# safetensors itself refuses headers over 100 MB; real ones are a few hundred kB.
MAX_HEADER_BYTES = 100 * 1024 * 1024
MAX_TENSORS = 100_000

# Bytes per element of every dtype the format defines.
DTYPE_SIZES = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2,
    "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1,
    "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1,
}
FLOAT_DTYPES = ("F64", "F32", "F16", "BF16")
_NUMPY_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2"}


@dataclass(frozen=True)
class TensorInfo:
    """One tensor's entry in the header: dtype, shape and byte range in the data section."""

    name: str
    dtype: str
    shape: tuple
    begin: int
    end: int


def _no_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"the name {key!r} appears twice")
        seen[key] = value
    return seen


def read_header(path: Path) -> tuple[dict[str, TensorInfo], int]:
    """Return the checked tensor entries of a safetensors file and the offset of its data.

    Raises :class:`ModelError` for a file too short, a header length that does
    not fit in the file or exceeds :data:`MAX_HEADER_BYTES`, a header that is
    not a JSON object, unknown dtypes, bad shapes, or byte ranges that do not
    match the shapes or leave the file.
    """
    path = Path(path)
    where = f"{path.name} in {path.parent}"
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            start = fh.read(8)
            if len(start) < 8:
                raise ModelError(f"{where} is truncated ({size} bytes): it is not a safetensors file")
            (n,) = struct.unpack("<Q", start)
            if n > MAX_HEADER_BYTES:
                raise ModelError(
                    f"{where} claims a header of {n} bytes (more than {MAX_HEADER_BYTES}): "
                    "the file is damaged or not a safetensors file"
                )
            if 8 + n > size:
                raise ModelError(
                    f"{where} claims a header of {n} bytes but the file has only {size} bytes: "
                    "it is truncated; download or convert it again"
                )
            raw = fh.read(n)
    except OSError as exc:
        raise ModelError(f"cannot read {where}: {exc.strerror or exc}") from None
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelError(f"the header of {where} is not valid JSON ({exc}): the file is damaged") from None
    if not isinstance(header, dict):
        raise ModelError(f"the header of {where} is not a JSON object: the file is damaged")
    data_size = size - 8 - n
    header.pop("__metadata__", None)
    if len(header) > MAX_TENSORS:
        raise ModelError(f"{where} lists {len(header)} tensors; more than {MAX_TENSORS} is not a model we can show")
    tensors = {}
    for name, entry in header.items():
        bad = f"the entry {name!r} in the header of {where}"
        if not isinstance(entry, dict):
            raise ModelError(f"{bad} is not an object: the file is damaged")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if dtype not in DTYPE_SIZES:
            raise ModelError(f"{bad} has an unknown dtype {dtype!r}")
        if not isinstance(shape, list) or len(shape) > 8 or not all(
            type(s) is int and 0 <= s < 2**40 for s in shape
        ):
            raise ModelError(f"{bad} has an invalid shape {shape!r}")
        if not (isinstance(offsets, list) and len(offsets) == 2
                and all(type(o) is int for o in offsets) and 0 <= offsets[0] <= offsets[1] <= data_size):
            raise ModelError(
                f"{bad} points to bytes {offsets!r}, outside the file's {data_size} data bytes: "
                "the file is truncated or damaged"
            )
        count = int(np.prod(shape, dtype=object)) if shape else 1
        if count * DTYPE_SIZES[dtype] != offsets[1] - offsets[0]:
            raise ModelError(
                f"{bad} has shape {shape} of {dtype} ({count * DTYPE_SIZES[dtype]} bytes) but "
                f"{offsets[1] - offsets[0]} bytes of data: the file is damaged"
            )
        tensors[name] = TensorInfo(name, dtype, tuple(shape), offsets[0], offsets[1])
    return tensors, 8 + n


class WeightsFile:
    """An opened, checked ``model.safetensors``: ``names``, ``info(name)``, ``get(name)`` as float64."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.tensors, self.data_start = read_header(self.path)
        self._handle = None

    def _open(self):
        if self._handle is None:
            from safetensors import safe_open

            try:
                self._handle = safe_open(str(self.path), framework="np")
            except Exception as exc:  # the library's own checks: report, never crash
                raise ModelError(f"safetensors cannot open {self.path.name}: {exc}") from None
        return self._handle

    def get(self, name: str) -> np.ndarray:
        """The tensor ``name`` as a new float64 array; non-finite values are refused."""
        info = self.tensors[name]
        if info.dtype not in FLOAT_DTYPES:
            raise ModelError(f"the weight {name} in {self.path.name} is {info.dtype}, not a floating-point type")
        if info.dtype == "BF16":
            # safetensors' NumPy API has no bfloat16: a bfloat16 is the top half
            # of a float32, so widen the raw 16 bits and reinterpret.
            raw = np.memmap(self.path, dtype="<u2", mode="r",
                            offset=self.data_start + info.begin, shape=info.shape)
            value = (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        elif info.end == info.begin:
            value = np.zeros(info.shape)
        else:
            # The checked header gives every tensor's bytes: read them as a little-endian memory map and
            # widen. NumPy's copy runs without the GIL; safetensors' get_tensor holds it while it reads
            # (a 47 MB embedding table froze a window drawing on the GUI thread for 200 ms).
            try:
                raw = np.memmap(self.path, dtype=_NUMPY_DTYPES[info.dtype], mode="r",
                                offset=self.data_start + info.begin, shape=info.shape)
                value = raw.astype(np.float64)
                del raw
            except (OSError, ValueError) as exc:
                raise ModelError(f"cannot read the weight {name} from {self.path.name}: {exc}") from None
        if not np.isfinite(value).all():
            raise ModelError(
                f"the weight {name} in {self.path.name} contains NaN or infinite values: "
                "the checkpoint is damaged (or was saved after training diverged)"
            )
        return value


def file_size(path: Path) -> int:
    """Size in bytes, following symbolic links (hub caches link to blobs); 0 if unreadable."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
