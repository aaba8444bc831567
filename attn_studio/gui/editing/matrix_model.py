"""The table model of an editable matrix: a QAbstractTableModel over one of the studio's arrays.

The model keeps no numbers of its own: ``data`` reads the studio's current
state, ``setData`` goes through the studio, and a refused value leaves the
state (and so the table) as it was, with the reason emitted as ``refused``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6 import QtCore

from ...engine import EngineError
from ...formatting import DEFAULT_DIGITS, EXACT_NOTE, format_exact, format_number
from ...state import StateError
from ..widgets import short_token

Qt = QtCore.Qt
# Role numbers as plain ints: data() is called for every visible cell and role
# on each repaint, and comparing ints is far cheaper than comparing enums.
_DISPLAY = Qt.ItemDataRole.DisplayRole.value
_EDIT = Qt.ItemDataRole.EditRole.value
_ALIGN = Qt.ItemDataRole.TextAlignmentRole.value
_TOOLTIP = Qt.ItemDataRole.ToolTipRole.value
_USER = Qt.ItemDataRole.UserRole.value
_RIGHT = int((Qt.AlignRight | Qt.AlignVCenter).value)
_HORIZONTAL = Qt.Orientation.Horizontal
_EDITABLE = Qt.ItemIsEnabled | Qt.ItemIsSelectable | Qt.ItemIsEditable
_READ_ONLY = Qt.ItemIsEnabled | Qt.ItemIsSelectable


def display_number(value: float, digits: int = DEFAULT_DIGITS) -> str:
    """A table cell's number: :func:`~attn_studio.formatting.format_number` (``digits`` decimals, true minus)."""
    return format_number(value, digits)


class MatrixModel(QtCore.QAbstractTableModel):
    """A 2-D view of one array of the studio.

    ``read()`` returns the array to show; ``row_labels()`` / ``col_labels()``
    the headers; ``write(row, col, text)`` applies an edit through the studio
    (or is None for a read-only table). ``version()``, when given, returns an
    object that is replaced whenever what ``read()`` returns may change (the
    studio's immutable state): the array is then read once per version.
    ``tooltip(row, col, digits)`` writes a cell's tooltip at the precision setting.
    """

    refused = QtCore.Signal(str)
    accepted = QtCore.Signal()  # an edit went through (the window clears an old refusal)

    def __init__(self, name: str, read: Callable[[], np.ndarray], row_labels: Callable[[], list[str]],
                 col_labels: Callable[[], list[str]], write: Callable[[int, int, str], None] | None = None,
                 tooltip: Callable[[int, int, int], str] | None = None,
                 write_block: Callable[[int, int, list[list[str]]], None] | None = None,
                 version: Callable[[], object] | None = None, parent=None):
        super().__init__(parent)
        self.name = name
        self._version = version
        self._read_for: tuple | None = None  # (version, the array read at it)
        self._write_block = write_block
        self._read, self._rows, self._cols, self._write = read, row_labels, col_labels, write
        self._tooltip = tooltip
        self._array = self._current()
        self._painted = self._array  # the numbers the view was last told about
        self._display: dict[tuple[int, int], str] = {}
        self._flags = _EDITABLE if write is not None else _READ_ONLY
        self._row_labels = list(row_labels())
        self._col_labels = list(col_labels())
        self.digits = DEFAULT_DIGITS

    def set_digits(self, digits: int):
        """Show the numbers with ``digits`` decimals (the precision setting); editing keeps full precision."""
        digits = int(digits)
        if digits != self.digits:
            self.digits = digits
            self._display.clear()
            rows, cols = self.rowCount(), self.columnCount()
            if rows and cols:
                self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, cols - 1), [Qt.DisplayRole])

    # -- Qt model API ----------------------------------------------------------
    def rowCount(self, parent=QtCore.QModelIndex()):
        return 0 if parent.isValid() else self._array.shape[0]

    def columnCount(self, parent=QtCore.QModelIndex()):
        return 0 if parent.isValid() else (self._array.shape[1] if self._array.ndim == 2 else 0)

    def data(self, index, role=_DISPLAY):
        if not index.isValid():
            return None
        role = int(role) if not isinstance(role, int) else role
        r, c = index.row(), index.column()
        if role == _DISPLAY:
            return self.display_text(r, c)
        if role == _ALIGN:
            return _RIGHT
        if role == _EDIT:
            # Text, so the editor is a line edit that accepts anything and lets
            # setData explain what is wrong, instead of a spin box that clamps.
            return repr(float(self._array[r, c]))
        if role == _TOOLTIP:
            if self._tooltip is not None:
                return self._tooltip(r, c, self.digits)
            value = self._array[r, c]
            # The stored value too: a person who reads a cell to type it again needs every digit.
            return (f"{self.name}[{self._row_labels[r]}, {self._col_labels[c]}] = {format_number(value, self.digits)} "
                    f"({EXACT_NOTE}: {format_exact(value)})")
        if role == _USER:
            return float(self._array[r, c])
        return None

    def display_text(self, row: int, column: int) -> str:
        """The text cell (``row``, ``column``) shows (made once per number and precision)."""
        text = self._display.get((row, column))
        if text is None:
            text = self._display[(row, column)] = display_number(float(self._array[row, column]), self.digits)
        return text

    def headerData(self, section, orientation, role=_DISPLAY):
        # Ints, not enums (as in data()): a header asks this for hundreds of sections at a reset.
        if (role if isinstance(role, int) else int(role.value)) != _DISPLAY:
            return None
        labels = self._col_labels if orientation == _HORIZONTAL else self._row_labels
        return labels[section] if 0 <= section < len(labels) else None

    def flags(self, index):
        return self._flags

    def setData(self, index, value, role=Qt.EditRole):
        """Apply an edit through the studio; False (and ``refused``) when the value is bad."""
        if role != Qt.EditRole or not index.isValid() or self._write is None:
            return False
        if not self._current_cell(index.row(), index.column()):
            return False
        try:
            self._write(index.row(), index.column(), value if isinstance(value, str) else str(value))
        except (StateError, EngineError) as exc:
            # A label is a token: quoted shortened (a 5,000-character word would be the whole message).
            row = short_token(str(self._row_labels[index.row()]))
            col = short_token(str(self._col_labels[index.column()]))
            self.refused.emit(f"{self.name} [{row}, {col}]: {exc}. The old value is kept.")
            return False
        return self._accept()

    def _current_cell(self, row: int, col: int) -> bool:
        """Bring a table that waited to be read (hidden, or its window under the stage) up to date before
        it is written to; False when (``row``, ``col``) is no longer a cell of it (its shape changed)."""
        self.refresh_if_stale()
        return 0 <= row < self.rowCount() and 0 <= col < self.columnCount()

    def _accept(self) -> bool:
        # A script calling setData reads the new value at once (without signalling, so the view is
        # not painted twice); the view is told once the bridge reports the change (refresh
        # compares with what it painted).
        self._array = self._current()
        self._display = {}
        self.accepted.emit()
        return True

    def paste_block(self, row: int, col: int, rows: list[list[str]]) -> bool:
        """Write a pasted block at (``row``, ``col``) as one edit; False (and ``refused``) if any cell is bad."""
        if self._write_block is None:
            self.refused.emit(f"{self.name} is computed, not edited: nothing was pasted.")
            return False
        if not self._current_cell(row, col):
            return False
        try:
            self._write_block(row, col, rows)
        except (StateError, EngineError) as exc:
            self.refused.emit(f"{self.name}: {exc}. Nothing was pasted; the old values are kept.")
            return False
        return self._accept()

    def block_text(self, top: int, left: int, bottom: int, right: int) -> str:
        """Cells [top..bottom] x [left..right] as tab-separated text, full precision (for spreadsheets)."""
        return "\n".join("\t".join(repr(float(self._array[r, c])) for c in range(left, right + 1))
                         for r in range(top, bottom + 1))

    # -- following the studio ----------------------------------------------------
    def _current(self) -> np.ndarray:
        """The studio's array now, read again only when its version changed (an edit's refresh
        read the embeddings again right after the edit itself had, and every hidden table twice)."""
        version = self._version() if self._version is not None else None
        if version is None or self._read_for is None or self._read_for[0] is not version:
            array = np.asarray(self._read())
            self._read_for = (version, array) if version is not None else None
            return array
        return self._read_for[1]

    def needs_reset(self) -> bool:
        """True when the studio's array has another shape than the one shown (a refresh would reset the
        table, which costs a view its header sizes: tens of milliseconds at hundreds of rows)."""
        return self._current().shape != self._painted.shape

    def mark_stale(self) -> None:
        """Refresh later (a hidden table): :meth:`array` and the next :meth:`refresh_if_stale` bring it up to date."""
        self._stale = True

    def refresh_if_stale(self) -> None:
        if getattr(self, "_stale", False):
            self.refresh()

    def refresh(self):
        """Re-read the array and headers from the studio; reset only if the shape changed."""
        self._stale = False
        array = self._current()
        self._display = {}
        rows, cols = list(self._row_labels), list(self._col_labels)
        new_rows, new_cols = list(self._rows()), list(self._cols())
        if array.shape != self._painted.shape:
            self.beginResetModel()
            self._array = self._painted = array
            self._row_labels, self._col_labels = new_rows, new_cols
            self.endResetModel()
            return
        old = self._painted
        self._array = self._painted = array
        if new_rows != rows:
            self._row_labels = new_rows
            self.headerDataChanged.emit(Qt.Vertical, 0, max(len(new_rows) - 1, 0))
        if new_cols != cols:
            self._col_labels = new_cols
            self.headerDataChanged.emit(Qt.Horizontal, 0, max(len(new_cols) - 1, 0))
        if not array.size:
            return
        # Signal only the block of cells that changed: an edit changes one cell
        # (or one word's rows), and repainting a whole table costs a frame.
        changed = np.argwhere(old != array)
        if changed.size:
            (r0, c0), (r1, c1) = changed.min(axis=0), changed.max(axis=0)
            self.dataChanged.emit(self.index(int(r0), int(c0)), self.index(int(r1), int(c1)),
                                  [Qt.DisplayRole, Qt.EditRole, Qt.ToolTipRole])

    def array(self) -> np.ndarray:
        """The array currently shown (a read-only view of the studio's numbers)."""
        self.refresh_if_stale()
        return self._array


def parse_clipboard(text: str) -> list[list[str]]:
    """Rows of cells from pasted text: tab-separated (spreadsheets), else commas, else spaces."""
    lines = [line for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n") if line.strip()]
    if any("\t" in line for line in lines):
        return [line.split("\t") for line in lines]
    if any("," in line for line in lines):
        return [line.split(",") for line in lines]
    return [line.split() for line in lines]
