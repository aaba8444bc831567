"""Editable matrix tables: a QAbstractTableModel over the state's arrays.

The model keeps no numbers of its own: ``data`` reads the studio's current
state, ``setData`` goes through the studio, and a refused value leaves the
state (and so the table) as it was, with the reason emitted as ``refused``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...engine import EngineError
from ...formatting import DEFAULT_DIGITS, format_number
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
    (or is None for a read-only table).
    """

    refused = QtCore.Signal(str)
    accepted = QtCore.Signal()  # an edit went through (the window clears an old refusal)

    def __init__(self, name: str, read: Callable[[], np.ndarray], row_labels: Callable[[], list[str]],
                 col_labels: Callable[[], list[str]], write: Callable[[int, int, str], None] | None = None,
                 tooltip: Callable[[int, int], str] | None = None,
                 write_block: Callable[[int, int, list[list[str]]], None] | None = None, parent=None):
        super().__init__(parent)
        self.name = name
        self._write_block = write_block
        self._read, self._rows, self._cols, self._write = read, row_labels, col_labels, write
        self._tooltip = tooltip
        self._array = np.asarray(read())
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
                return self._tooltip(r, c)
            return (f"{self.name}[{self._row_labels[r]}, {self._col_labels[c]}] = "
                    f"{format_number(self._array[r, c], max(self.digits, 15))}")
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
        try:
            self._write(index.row(), index.column(), value if isinstance(value, str) else str(value))
        except (StateError, EngineError) as exc:
            # A label is a token: quoted shortened (a 5,000-character word would be the whole message).
            row = short_token(str(self._row_labels[index.row()]))
            col = short_token(str(self._col_labels[index.column()]))
            self.refused.emit(f"{self.name} [{row}, {col}]: {exc}. The old value is kept.")
            return False
        # The window refreshes every table once the bridge reports the change;
        # re-read the numbers now too (without signalling, so the view is not
        # painted twice) so that a script calling setData reads the new value.
        # A script calling setData reads the new value at once; the view is told
        # once the bridge reports the change (refresh compares with what it painted).
        self._array = np.asarray(self._read())
        self._display = {}
        self.accepted.emit()
        return True

    def paste_block(self, row: int, col: int, rows: list[list[str]]) -> bool:
        """Write a pasted block at (``row``, ``col``) as one edit; False (and ``refused``) if any cell is bad."""
        if self._write_block is None:
            self.refused.emit(f"{self.name} is computed, not edited: nothing was pasted.")
            return False
        try:
            self._write_block(row, col, rows)
        except (StateError, EngineError) as exc:
            self.refused.emit(f"{self.name}: {exc}. Nothing was pasted; the old values are kept.")
            return False
        self._array = np.asarray(self._read())
        self._display = {}
        self.accepted.emit()
        return True

    def block_text(self, top: int, left: int, bottom: int, right: int) -> str:
        """Cells [top..bottom] x [left..right] as tab-separated text, full precision (for spreadsheets)."""
        return "\n".join("\t".join(repr(float(self._array[r, c])) for c in range(left, right + 1))
                         for r in range(top, bottom + 1))

    # -- following the studio ----------------------------------------------------
    def needs_reset(self) -> bool:
        """True when the studio's array has another shape than the one shown (a refresh would reset the
        table, which costs a view its header sizes: tens of milliseconds at hundreds of rows)."""
        return np.shape(self._read()) != self._painted.shape

    def mark_stale(self) -> None:
        """Refresh later (a hidden table): :meth:`array` and the next :meth:`refresh_if_stale` bring it up to date."""
        self._stale = True

    def refresh_if_stale(self) -> None:
        if getattr(self, "_stale", False):
            self.refresh()

    def refresh(self):
        """Re-read the array and headers from the studio; reset only if the shape changed."""
        self._stale = False
        array = np.asarray(self._read())
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


SAME_SHAPE_MEASURED = 4  # numbers of one shape measured per column (digit widths can differ a little)


def longest_rows(values: np.ndarray, digits: int, advance) -> list[list[int]]:
    """Per column of ``values`` (rows × columns), the rows whose text (:func:`display_number`) may be
    the widest, without writing every number: the width of an ordinary number (0.01 ≤ |x| < 10⁶,
    written with up to ``digits`` decimals, trailing zeros dropped) follows from its digits, point
    and sign, counted with NumPy over the whole table at once; the others (zero, tiny, huge,
    non-finite) are few and always measured. Of the numbers whose estimate is within a digit of
    the column's widest, a few of each shape (sign, whole digits, decimals) are kept, so that glyph
    widths cannot hide the widest."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or not values.size:
        return [[] for _ in range(values.shape[1] if values.ndim == 2 else 0)]
    w_digit, w_dot, w_minus = advance("0"), advance("."), advance("\u2212")
    magnitude = np.abs(values)
    with np.errstate(invalid="ignore"):
        ordinary = np.isfinite(values) & (magnitude >= 0.01) & (magnitude < 1e6)
    scale = 10 ** int(digits)
    scaled = np.round(np.where(ordinary, magnitude, 0.0) * scale)
    whole = np.floor(scaled / scale)
    frac = (scaled - whole * scale).astype(np.int64)
    whole_digits = np.where(whole >= 1, np.floor(np.log10(np.maximum(whole, 1))) + 1, 1).astype(np.int64)
    decimals = np.full(values.shape, int(digits), dtype=np.int64)
    for _ in range(int(digits)):  # trailing zeros of the decimals are dropped
        trailing = (frac % 10 == 0) & (decimals > 0)
        decimals = np.where(trailing, decimals - 1, decimals)
        frac = np.where(trailing, frac // 10, frac)
    negative = values < 0
    estimate = (whole_digits + decimals) * w_digit + (decimals > 0) * w_dot + negative * w_minus
    estimate = np.where(ordinary, estimate, -np.inf)
    top = estimate.max(axis=0)
    near = ordinary & (estimate >= top - w_digit - 1)
    shape = negative * 100 + whole_digits * 10 + decimals
    found: list[list[int]] = []
    for column in range(values.shape[1]):
        rows = np.flatnonzero(~ordinary[:, column]).tolist()
        seen: dict = {}
        candidates = np.flatnonzero(near[:, column])
        for i, key in zip(candidates.tolist(), shape[candidates, column].tolist()):
            if seen.get(key, 0) < SAME_SHAPE_MEASURED:
                seen[key] = seen.get(key, 0) + 1
                rows.append(i)
        found.append(rows)
    return found


FIT_COLUMNS_UP_TO = 128  # wider tables get one width for every column (fitting each costs time)
FIT_SAMPLE_ROWS = 200  # rows measured to fit a column
FIT_BUDGET = 0.008  # seconds of column fitting per event-loop turn (it shares a turn with a drawing step)


class MatrixTable(QtWidgets.QTableView):
    """A QTableView tuned for small matrices: compact columns, edit on typing or double click,
    Ctrl+C / Ctrl+V copy and paste blocks of numbers (to and from spreadsheets)."""

    def __init__(self, model: MatrixModel, object_name: str, parent=None):
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setModel(model)
        self.setEditTriggers(QtWidgets.QAbstractItemView.DoubleClicked | QtWidgets.QAbstractItemView.EditKeyPressed
                             | QtWidgets.QAbstractItemView.AnyKeyPressed | QtWidgets.QAbstractItemView.SelectedClicked)
        self.setSelectionMode(QtWidgets.QAbstractItemView.ContiguousSelection)
        self.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.Interactive)
        self.horizontalHeader().setDefaultSectionSize(64)
        self.horizontalHeader().setMinimumSectionSize(40)
        self.verticalHeader().setSectionResizeMode(QtWidgets.QHeaderView.Fixed)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        # Columns as wide as their numbers: a cell never elides one (−6.038e−5 stays whole).
        # Fitted once per event-loop turn after a change, from a bounded sample of rows.
        self.horizontalHeader().setResizeContentsPrecision(FIT_SAMPLE_ROWS)
        self._fit_timer = QtCore.QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self.fit_columns)
        self._candidates = None  # (key, rows per column, array): longest_rows of the numbers shown
        self._fit_next = 0  # the column the fitting goes on from (it is spread over event-loop turns)
        self._fit_pending = False  # a hidden table fits its columns when shown
        for signal in (model.modelReset, model.headerDataChanged):
            signal.connect(self._refit)
        model.dataChanged.connect(self._refit_changed)
        self.fit_columns()

    def _refit(self, *args) -> None:
        self._fit_next = 0
        self._fit_timer.start()

    def _refit_changed(self, top_left, bottom_right, roles=()) -> None:
        # An edit changes a cell or a block: only the columns from its first on are fitted again
        # (the others' numbers are the same), unless a fitting of earlier columns is under way.
        if not self._fit_timer.isActive():
            self._fit_next = max(0, top_left.column())
        else:
            self._fit_next = min(self._fit_next, max(0, top_left.column()))
        self._fit_timer.start()

    def fit_columns(self) -> None:
        """Make every column as wide as its widest number (and header), at least 40 pixels.

        A hidden table waits until it is shown. A visible one fits as many columns as fit in
        FIT_BUDGET seconds and goes on at the next event-loop turn: measuring a trained model's
        384 × 32 weights at once froze the window for a third of a second.
        """
        model = self.model()
        if model is None:
            return
        if not self.isVisible():
            self._fit_pending = True
            return
        self._fit_pending = False
        # A model refreshed late (hidden while the studio changed shape) is brought up to date before its
        # columns are counted: counted first, a table shown with fewer columns than before was measured
        # past its last one (an IndexError in a showEvent, which PySide turned into a crash).
        refresh = getattr(model, "refresh_if_stale", None)
        if refresh is not None:
            refresh()
        if model.columnCount() > FIT_COLUMNS_UP_TO:
            self.fit_uniform()
            return
        end = time.perf_counter() + FIT_BUDGET
        columns = model.columnCount()
        while self._fit_next < columns:
            self.fit_column(self._fit_next)
            self._fit_next += 1
            if time.perf_counter() >= end:
                break
        if self._fit_next < columns:
            self._fit_timer.start()
        else:
            self._fit_next = 0

    def fit_uniform(self) -> None:
        """Give every column of a wide table (a trained model's 384 dimensions) one width: that of its
        widest number, found among the few values whose text is longest, not by measuring every cell.

        The longest texts are those of the largest magnitude (more digits before the point), of the
        nonzero values nearest zero on either side (significant digits or an exponent: "−0.007339",
        "−6.038e−5") and of any overflow; the delegate is asked for the size of each.
        """
        model = self.model()
        array = np.asarray(model.array(), dtype=np.float64)
        if array.ndim != 2 or not array.size:
            return
        flat = array.ravel()
        picks = set()
        finite = np.isfinite(flat)
        if not finite.all():
            picks.add(int(np.flatnonzero(~finite)[0]))
        magnitude = np.where(finite, np.abs(flat), -1.0)
        if finite.any():
            picks.add(int(np.argmax(magnitude)))
        for side in (flat < 0, flat > 0):
            near_zero = np.where(side & finite, magnitude, np.inf)
            if np.isfinite(near_zero).any():
                picks.add(int(np.argmin(near_zero)))
        columns = array.shape[1]
        header = self.horizontalHeader()
        width = max(header.sectionSizeHint(columns - 1), header.minimumSectionSize())
        for pick in picks:
            row, column = divmod(pick, columns)
            width = max(width, self.sizeHintForIndex(model.index(row, column)).width() + (1 if self.showGrid() else 0))
        if header.defaultSectionSize() != width:
            header.setDefaultSectionSize(width)  # resets every section to it
        # Sections sized before the model was reset (a toy model's fitted columns) keep their sizes
        # when the default does not change: each is set.
        for column in range(columns):
            if header.sectionSize(column) != width:
                header.resizeSection(column, width)

    def fit_column(self, column: int) -> None:
        """Make ``column`` as wide as its widest number (of the first FIT_SAMPLE_ROWS rows) and its header.

        The width Qt's ``resizeColumnToContents`` gives, found faster: Qt asks the delegate for the
        size of every sampled cell, each asking the model for eight roles; here each cell's text is
        measured once with the view's font, and the delegate is asked only for the widest few.
        """
        model = self.model()
        array = model.array()  # first: a stale model is refreshed, and its shape is the one measured
        rows = min(model.rowCount(), FIT_SAMPLE_ROWS)
        header = self.horizontalHeader()
        if column >= model.columnCount() or header.isSectionHidden(column):
            return
        width = header.sectionSizeHint(column)
        if rows:
            advance = self.fontMetrics().horizontalAdvance
            # The candidates of every column at once, kept while the numbers, precision and font stay.
            key = (id(array), model.digits, self.font().key(), rows)
            if self._candidates is None or self._candidates[0] != key or self._candidates[2] is not array:
                self._candidates = (key, longest_rows(array[:rows], model.digits, advance), array)
            widest: dict[str, int] = {}
            for row in self._candidates[1][column]:
                widest.setdefault(model.display_text(row, column), row)
            # The few widest texts by advance: the delegate adds the same margins to each, and a
            # glyph's overhang may reorder near-equal widths, so up to three within 2 px are asked.
            measured = sorted(((advance(text), text) for text in widest), reverse=True)
            # Texts of one advance get one size from the delegate: one of each width is asked.
            by_width = dict((width_, text) for width_, text in reversed(measured[:3]) if width_ >= measured[0][0] - 2)
            candidates = list(by_width.values())
            content = max(self.sizeHintForIndex(model.index(widest[text], column)).width() for text in candidates)
            width = max(width, content + (1 if self.showGrid() else 0))
        header.resizeSection(column, width)

    def restyled(self) -> None:
        """The text size changed (a zoom step): rows as tall and columns as wide as the new font needs.

        Called by :func:`~attn_studio.gui.presentation.restyle` once the new font has reached the
        table; the columns are fitted at once (as many as the budget allows, the rest in the next
        event-loop turns), so a zoom never shows a number elided, not even for a frame.
        """
        self.verticalHeader().setDefaultSectionSize(int(self.fontMetrics().height() * 1.5) + 2)
        self._fit_timer.stop()
        self._fit_next = 0
        self.fit_columns()

    def changeEvent(self, event):
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.FontChange:
            # A new font (however it came): the numbers need other widths.
            self._refit()

    def fitting(self) -> bool:
        """True while a visible table's columns are still being fitted (a few per event-loop turn)."""
        return self._fit_timer.isActive()

    def finish_fitting(self) -> None:
        """Fit the columns still waiting now (for figures, scripts and tests)."""
        while self._fit_timer.isActive():
            self._fit_timer.stop()
            self.fit_columns()

    def showEvent(self, event):
        super().showEvent(event)
        if self._fit_pending:
            self._fit_next = 0
            self.fit_columns()

    def copy_selection(self) -> bool:
        """Copy the selected cells (their bounding block) as tab-separated numbers."""
        indexes = self.selectionModel().selectedIndexes() if self.selectionModel() else []
        if not indexes:
            current = self.currentIndex()
            if not current.isValid():
                return False
            indexes = [current]
        rows = [i.row() for i in indexes]
        cols = [i.column() for i in indexes]
        text = self.model().block_text(min(rows), min(cols), max(rows), max(cols))
        QtWidgets.QApplication.clipboard().setText(text)
        return True

    def paste(self) -> bool:
        """Paste a block of numbers at the current cell (top-left of the selection) as one edit."""
        rows = parse_clipboard(QtWidgets.QApplication.clipboard().text())
        indexes = self.selectionModel().selectedIndexes() if self.selectionModel() else []
        start = min(indexes, key=lambda i: (i.row(), i.column())) if indexes else self.currentIndex()
        if not start.isValid():
            start = self.model().index(0, 0)
        return self.model().paste_block(start.row(), start.column(), rows)

    def keyPressEvent(self, event):
        if event.matches(QtGui.QKeySequence.Copy):
            self.copy_selection()
            event.accept()
        elif event.matches(QtGui.QKeySequence.Paste):
            self.paste()
            event.accept()
        else:
            super().keyPressEvent(event)
