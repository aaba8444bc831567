"""Exports as the window sees them: figures, matrices, and the clipboard.

The work is done in two rooms:

- :mod:`attn_studio.gui.files.figures`: a panel found by name and drawn to PNG / SVG /
  PDF or the clipboard, with its title;
- :mod:`attn_studio.matrices` (no Qt): CSV with labels, ``.npy`` / ``.npz``,
  LaTeX ``bmatrix``, the whole model as arrays, atomic writes.

This module keeps the names the window and the command line have always used
(``export.find_panel``, ``export.save_matrix``, ...) and adds the two matrix
helpers that need Qt: reading a table model's headers and the clipboard.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...matrices import (
    MATRIX_FORMATS, ExportError, check_output_path, matrix_to_csv, matrix_to_latex, save_arrays, save_matrix,
    studio_arrays,
)
from .figures import (
    FORMATS, PANELS, Panel, check_panel_name, copy_figure, export_figure, export_pdf, export_png, export_svg,
    figure_format, find_panel, pdf_bytes, png_bytes, render_panel, resolve_scale, setting_title, show_panel,
    svg_bytes,
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


__all__ = [
    "PANELS", "FORMATS", "MATRIX_FORMATS", "ExportError", "Panel", "check_panel_name", "find_panel", "show_panel",
    "setting_title", "resolve_scale", "check_output_path",
    "render_panel", "png_bytes", "svg_bytes", "pdf_bytes", "export_png", "export_svg", "export_pdf",
    "export_figure", "figure_format", "copy_figure", "matrix_to_csv", "matrix_to_latex", "save_matrix", "table_matrix",
    "copy_latex", "studio_arrays", "save_arrays",
]
