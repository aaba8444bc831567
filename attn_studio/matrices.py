"""Matrices out of the studio: CSV with labels, NumPy ``.npy`` / ``.npz``, LaTeX ``bmatrix``.

Qt-free: the command line, scripts and the window all use it. Every file is
rendered to bytes first and then written atomically (``session.write_atomic``):
a failure leaves an existing file as it was. Copying to the clipboard is the
window's job (``attn_studio.gui.files.export.copy_latex``).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from .session import SessionError, write_atomic

MATRIX_FORMATS = ("csv", "npy", "npz")


class ExportError(ValueError):
    """A figure or matrix that cannot be exported, with a one-line reason a person can act on."""


# -- files -----------------------------------------------------------------------------

def check_output_path(path) -> Path:
    """``path`` as a Path if its folder exists and it is not a folder itself; else ``ExportError``."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ExportError(f"the folder {folder} does not exist")
    if path.is_dir():
        raise ExportError(f"{path} is a folder; give a file name")
    return path



def write_output(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically; any failure becomes an ``ExportError`` (one line)."""
    try:
        write_atomic(path, data)
    except SessionError as exc:
        raise ExportError(str(exc)) from None
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None


# -- matrices ------------------------------------------------------------------------------

def _as_2d(array) -> np.ndarray:
    arr = np.asarray(array, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ExportError(f"a matrix must have 2 dimensions, got shape {arr.shape}")
    return arr


def _labels(labels, n: int, what: str) -> list[str]:
    if labels is None:
        return [str(i + 1) for i in range(n)]
    labels = [str(x) for x in labels]
    if len(labels) != n:
        raise ExportError(f"{len(labels)} {what} labels for {n} {what}s")
    return labels


def matrix_to_csv(array, row_labels=None, col_labels=None) -> str:
    """CSV text: a header row (an empty cell, then the column labels), then one labelled row per matrix row.

    Values keep their full precision (``repr``); labels are quoted when needed.
    """
    arr = _as_2d(array)
    rows = _labels(row_labels, arr.shape[0], "row")
    cols = _labels(col_labels, arr.shape[1], "column")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([""] + cols)
    for label, values in zip(rows, arr):
        writer.writerow([label] + [repr(float(v)) for v in values])
    return out.getvalue()


def _latex_number(value: float, precision: int) -> str:
    if np.isnan(value):
        return r"\text{NaN}"
    if np.isinf(value):
        return r"\infty" if value > 0 else r"-\infty"
    text = f"{value:.{precision}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = rf"{mantissa} \times 10^{{{int(exponent)}}}"
    return "0" if text == "-0" else text


def matrix_to_latex(array, precision: int = 4) -> str:
    r"""A ``\begin{bmatrix} ... \end{bmatrix}`` of ``array`` (``precision`` significant digits).

    Columns are separated by ``&``, rows end with ``\\`` (except the last);
    masked entries (-inf) become ``-\infty``.
    """
    if isinstance(precision, bool) or not isinstance(precision, (int, np.integer)) or not 1 <= precision <= 17:
        raise ExportError(f"the precision must be a whole number from 1 to 17, got {precision!r}")
    arr = _as_2d(array)
    lines = [" & ".join(_latex_number(float(v), int(precision)) for v in row) for row in arr]
    return "\\begin{bmatrix}\n" + " \\\\\n".join(lines) + "\n\\end{bmatrix}"



def _npy_bytes(arr: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, arr, allow_pickle=False)
    return out.getvalue()


def _npz_bytes(arrays: dict) -> bytes:
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def save_matrix(path, array, row_labels=None, col_labels=None) -> None:
    """Save a matrix by ``path``'s extension, atomically.

    - ``.csv``: :func:`matrix_to_csv` (labels included);
    - ``.npy``: the array alone (``np.load(path)`` reads it);
    - ``.npz``: ``array``, ``row_labels`` and ``col_labels`` (unicode arrays;
      ``np.load(path, allow_pickle=False)`` reads them).
    """
    path = check_output_path(path)
    ext = path.suffix.lower().lstrip(".")
    if ext not in MATRIX_FORMATS:
        raise ExportError(f"unknown matrix format {path.suffix or '(none)'}; use .csv, .npy or .npz")
    if ext == "csv":
        data = matrix_to_csv(array, row_labels, col_labels).encode("utf-8")
    else:
        arr = _as_2d(array)
        if ext == "npy":
            data = _npy_bytes(arr)
        else:
            data = _npz_bytes({
                "array": arr,
                "row_labels": np.array(_labels(row_labels, arr.shape[0], "row"), dtype=str),
                "col_labels": np.array(_labels(col_labels, arr.shape[1], "column"), dtype=str),
            })
    write_output(path, data)



def studio_arrays(studio) -> dict[str, np.ndarray]:
    """Every array of the current model, for a whole-model ``.npz``.

    ``x`` (queries' inputs), ``x_kv`` (keys' and values' inputs; = ``x`` in
    self-attention), the weights the engine used (``w_q, w_k, w_v`` per head,
    ``w_o``; identities when projections are off, as Q = K = V = X), the
    intermediates ``q, k, v, scores, logits, weights, head_outputs, concat,
    output``, ``blocked`` (True = masked) and the tokens as unicode arrays.
    """
    state, result = studio.state, studio.result
    w_q, w_k, w_v, w_o = studio.used_weights
    if w_o is None:
        # No output projection: the output is the concatenation itself.
        w_o = np.eye(result.concat.shape[-1])
    arrays = {
        "x": studio.x, "x_kv": studio.x_kv,
        "w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o,
        "q": result.q, "k": result.k, "v": result.v,
        "scores": result.scores, "logits": result.logits, "weights": result.weights,
        "head_outputs": result.head_outputs, "concat": result.concat, "output": result.output,
        "blocked": result.blocked,
    }
    arrays = {k: np.array(v) for k, v in arrays.items()}
    arrays["tokens"] = np.array(list(state.key_tokens), dtype=str)
    arrays["query_tokens"] = np.array(list(state.query_tokens), dtype=str)
    return arrays


def save_arrays(path, arrays: dict) -> None:
    """Save named arrays (e.g. :func:`studio_arrays`) as an ``.npz``, atomically, without pickles."""
    path = check_output_path(path)
    if path.suffix.lower() != ".npz":
        raise ExportError(f"save the model as .npz, not {path.suffix or '(no extension)'}")
    clean = {}
    for key, value in arrays.items():
        arr = np.asarray(value)
        if arr.dtype == object:
            raise ExportError(f"{key} is not a plain numeric or text array")
        clean[key] = arr
    write_output(path, _npz_bytes(clean))



__all__ = [
    "MATRIX_FORMATS", "ExportError", "check_output_path", "write_output", "matrix_to_csv", "matrix_to_latex",
    "save_matrix", "studio_arrays", "save_arrays",
]
