"""Exports as the window sees them: figures, matrices, and the clipboard.

The work is done in two rooms:

- :mod:`attn_studio.gui.files.figures`: a panel found by name and drawn to PNG / SVG /
  PDF or the clipboard, with its title;
- :mod:`attn_studio.matrices` (no Qt): CSV with labels, ``.npy`` / ``.npz``,
  LaTeX ``bmatrix``, the whole model as arrays, atomic writes.

This module keeps the names the window and the command line have always used
(``export.find_panel``, ``export.save_matrix``, ...) and adds the two matrix
helpers that need Qt (reading a table model's headers and the clipboard) and a
training lab panel's history as CSV (:func:`export_history`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...training.experiment import TrainingError
from ...matrices import (
    MATRIX_FORMATS, ExportError, check_output_path, matrix_to_csv, matrix_to_latex, save_arrays, save_matrix,
    studio_arrays,
)
from .figures import (
    FORMATS, PANELS, TRAINING_PANELS, Panel, check_panel_name, copy_figure, done_with, export_figure, export_pdf,
    export_png, export_svg, figure_format, find_panel, pdf_bytes, png_bytes, render_panel, resolve_scale, setting_title,
    show_panel, svg_bytes, training_panel, write_png_image, BASE_DPI,
)


def table_matrix(model) -> tuple[np.ndarray, list[str], list[str]]:
    """``(array, row_labels, col_labels)`` of a table model (e.g. ``window.models["w_q"]``),
    ready for :func:`save_matrix` / :func:`matrix_to_csv`: the numbers as shown, with their headers."""
    array = np.asarray(model.array(), dtype=np.float64)
    vertical, horizontal = QtCore.Qt.Vertical, QtCore.Qt.Horizontal
    rows = [str(model.headerData(i, vertical) or i + 1) for i in range(model.rowCount())]
    cols = [str(model.headerData(j, horizontal) or j + 1) for j in range(model.columnCount())]
    return array, rows, cols


def copy_latex(array, precision: int = 4) -> str:
    """Put :func:`matrix_to_latex` of ``array`` on the clipboard as text; returns the text."""
    text = matrix_to_latex(array, precision)
    QtWidgets.QApplication.clipboard().setText(text)
    return text


def export_history(window, name: str, path) -> Path:
    """Write the history of training panel ``name`` ("training:scaling"...) as CSV to ``path``: one row
    per step taken, a column per arm and metric (what the panel's own "History as CSV" writes).
    ``ExportError`` with the reason; the file is written atomically."""
    panel = training_panel(window, name)
    path = Path(path)
    check_output_path(path)
    try:
        panel.export_csv(path)
    except TrainingError as exc:
        raise ExportError(str(exc)) from None
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


__all__ = [
    "PANELS", "FORMATS", "MATRIX_FORMATS", "ExportError", "Panel", "check_panel_name", "find_panel", "show_panel",
    "setting_title", "resolve_scale", "check_output_path",
    "render_panel", "png_bytes", "svg_bytes", "pdf_bytes", "export_png", "export_svg", "export_pdf",
    "export_figure", "figure_format", "copy_figure", "done_with", "write_png_image", "BASE_DPI",
    "matrix_to_csv", "matrix_to_latex", "save_matrix", "table_matrix",
    "copy_latex", "studio_arrays", "save_arrays", "TRAINING_PANELS", "training_panel", "export_history",
]
