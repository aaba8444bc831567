"""Editable matrix tables: the view of a :class:`~.matrix_model.MatrixModel` (compact columns
fitted to their numbers, editing, copy and paste of blocks) and the fitting of its columns.
"""

from __future__ import annotations

import time

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

# The model lives beside the view; it is imported from here as it always was.
from .matrix_model import MatrixModel, display_number, parse_clipboard  # noqa: F401
from .. import presentation
from ..views.token_axis import MIN_LABEL_PX, font_pixels

SAME_SHAPE_MEASURED = 4  # numbers of one shape measured per column (digit widths can differ a little)


def longest_rows(values: np.ndarray, digits: int, advance) -> list[list[int]]:
    """Per column of ``values`` (rows × columns), the rows whose text (:func:`display_number`) may be
    the widest, without writing every number: the width of an ordinary number (|x| < 10⁶, written
    with exactly ``digits`` decimals) follows from its digits, point and sign, counted with NumPy over
    the whole table at once; the others (huge, non-finite) are few and always measured. Of the
    numbers whose estimate is within a digit of the column's widest, a few of each shape (sign, whole
    digits) are kept, so that glyph widths cannot hide the widest."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or not values.size:
        return [[] for _ in range(values.shape[1] if values.ndim == 2 else 0)]
    w_digit, w_dot, w_minus = advance("0"), advance("."), advance("\u2212")
    magnitude = np.abs(values)
    with np.errstate(invalid="ignore"):
        ordinary = np.isfinite(values) & (magnitude < 1e6)
    scale = 10 ** int(digits)
    scaled = np.round(np.where(ordinary, magnitude, 0.0) * scale)
    whole = np.floor(scaled / scale)
    whole_digits = np.where(whole >= 1, np.floor(np.log10(np.maximum(whole, 1))) + 1, 1).astype(np.int64)
    decimals = int(digits)
    negative = (values < 0) & (scaled > 0)  # a number that rounds to zero is written without its minus
    estimate = (whole_digits + decimals) * w_digit + (decimals > 0) * w_dot + negative * w_minus
    estimate = np.where(ordinary, estimate, -np.inf)
    top = estimate.max(axis=0)
    near = ordinary & (estimate >= top - w_digit - 1)
    shape = negative * 100 + whole_digits
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
DRAWN_WIDTHS = 10_000  # texts whose widths are kept (beyond, they are measured again)
MEASURE_EVERY_ROW = 32  # up to this many rows every text of a column is measured (cheaper than ranking them)
FIT_BUDGET = 0.008  # seconds of column fitting per event-loop turn (it shares a turn with a drawing step)
FIT_AT_ONCE = 4  # an edit of up to this many columns fits them in its own turn, not the next


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
        # Fitted after a change (an edit's few columns at once, more over event-loop turns), from
        # a bounded sample of rows.
        self.horizontalHeader().setResizeContentsPrecision(FIT_SAMPLE_ROWS)
        self._fit_timer = QtCore.QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self.fit_columns)
        self._candidates = None  # (key, {column: rows}, array): longest_rows of the numbers shown
        self._fit_next = 0  # the column the fitting goes on from (it is spread over event-loop turns)
        self._fit_stop = None  # the column it stops before (None: the last)
        self._fit_pending = False  # a hidden table fits its columns when shown
        # What the header and the delegate said, kept while the font stays: a cell's width depends on
        # its text only, a header's on its label (a change of labels or shape forgets them). Asking
        # them again was most of fitting an edited column.
        self._widths_font, self._text_widths, self._header_widths, self._advances = None, {}, {}, {}
        for signal in (model.modelReset, model.headerDataChanged):
            signal.connect(self._refit)
        model.dataChanged.connect(self._refit_changed)
        self._fit_header_font()
        self.fit_columns()

    def _fit_header_font(self) -> None:
        """The rows' and columns' labels (the tokens, d1 …) at least as large as the heatmaps' token
        labels (MIN_LABEL_PX at 100 %), else in the table's font: the numbers stay compact, the
        tokens read from the back of the room."""
        font = QtGui.QFont(self.font())
        least = MIN_LABEL_PX * min(presentation.STYLE.zoom, 1.0)
        if font_pixels(font) < least:
            font.setPixelSize(int(-(-least // 1)))
        for header in (self.verticalHeader(), self.horizontalHeader()):
            if header.font() != font:
                header.setFont(font)
        # Rows as tall as their labels need.
        rows = max(int(self.fontMetrics().height() * 1.5) + 2, QtGui.QFontMetrics(font).height() + 6)
        if self.verticalHeader().defaultSectionSize() != rows:
            self.verticalHeader().setDefaultSectionSize(rows)

    def _refit(self, *args) -> None:
        self._fit_next, self._fit_stop = 0, None
        self._header_widths = {}
        self._fit_timer.start()

    def _widths(self, font_key: str) -> tuple[dict, dict, dict]:
        """(text -> the delegate's width, column -> the header's width, text -> its advance) for the
        font ``font_key``."""
        if self._widths_font != font_key or len(self._advances) > DRAWN_WIDTHS:
            self._widths_font, self._text_widths, self._header_widths, self._advances = font_key, {}, {}, {}
        return self._text_widths, self._header_widths, self._advances

    def _refit_changed(self, top_left, bottom_right, roles=()) -> None:
        # An edit changes a cell or a block: only its columns are fitted again (the others' numbers
        # are the same, and a column's width depends on its own numbers only). Fitting all 64
        # columns of a (64, 64) table after a one-cell edit was most of the edit's time. A fitting
        # under way is widened to take them in.
        first, stop = max(0, top_left.column()), bottom_right.column() + 1
        if not self.isVisible():
            self._fit_pending = True  # every column is fitted when the table is shown
            return
        if self._fit_timer.isActive():
            self._fit_next = min(self._fit_next, first)
            self._fit_stop = None if self._fit_stop is None else max(self._fit_stop, stop)
            return
        self._fit_next, self._fit_stop = first, stop
        if stop - first <= FIT_AT_ONCE:
            # A cell's column (or a few) is fitted in the turn that changed it, before it is painted:
            # a turn of its own for it cost more than the fitting.
            self.fit_columns()
        else:
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
        stop = columns if self._fit_stop is None else min(self._fit_stop, columns)
        while self._fit_next < stop:
            self.fit_column(self._fit_next, stop)
            self._fit_next += 1
            if time.perf_counter() >= end:
                break
        if self._fit_next < stop:
            self._fit_timer.start()
        else:
            self._fit_next, self._fit_stop = 0, None

    def fit_uniform(self) -> None:
        """Give every column of a wide table (a trained model's 384 dimensions) one width: that of its
        widest number, found among the few values whose text is longest, not by measuring every cell.

        The longest texts are those of the largest magnitude (more digits before the point), the most
        negative (its minus sign), the values nearest zero on either side and any overflow; the
        delegate is asked for the size of each.
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
            picks.add(int(np.argmin(np.where(finite, flat, np.inf))))  # the most negative: its minus sign
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

    def fit_column(self, column: int, stop: int | None = None) -> None:
        """Make ``column`` as wide as its widest number (of the first FIT_SAMPLE_ROWS rows) and its header.

        The width Qt's ``resizeColumnToContents`` gives, found faster: Qt asks the delegate for the
        size of every sampled cell, each asking the model for eight roles; here each cell's text is
        measured once with the view's font, and the delegate is asked only for the widest few.
        ``stop``: the columns up to it are about to be fitted too (their candidates are found at once).
        """
        model = self.model()
        array = model.array()  # first: a stale model is refreshed, and its shape is the one measured
        rows = min(model.rowCount(), FIT_SAMPLE_ROWS)
        header = self.horizontalHeader()
        if column >= model.columnCount() or header.isSectionHidden(column):
            return
        font_key = self.font().key()
        text_widths, header_widths, advances = self._widths(font_key)
        width = header_widths.get(column)
        if width is None:
            width = header_widths[column] = header.sectionSizeHint(column)
        if rows:
            advance = self.fontMetrics().horizontalAdvance
            # The candidates of the columns being fitted at once, kept while the numbers, precision
            # and font stay (an edit's one column is not worth the whole table's).
            key = (id(array), model.digits, font_key, rows)
            if self._candidates is None or self._candidates[0] != key or self._candidates[2] is not array:
                self._candidates = (key, {}, array)
            found = self._candidates[1]
            if rows <= MEASURE_EVERY_ROW:
                # A short column: measuring its few texts costs less than ranking them with NumPy.
                found[column] = range(rows)
            elif column not in found:
                stop = max(column + 1, model.columnCount() if stop is None else stop)
                found.update(zip(range(column, stop), longest_rows(array[:rows, column:stop], model.digits, advance)))
            widest: dict[str, int] = {}
            for row in found[column]:
                widest.setdefault(model.display_text(row, column), row)
            # The few widest texts by advance: the delegate adds the same margins to each, and a
            # glyph's overhang may reorder near-equal widths, so up to three within 2 px are asked.
            for text in widest:
                if text not in advances:
                    advances[text] = advance(text)
            measured = sorted(((advances[text], text) for text in widest), reverse=True)
            # Texts of one advance get one size from the delegate: one of each width is asked.
            by_width = dict((width_, text) for width_, text in reversed(measured[:3]) if width_ >= measured[0][0] - 2)
            candidates = list(by_width.values())
            for text in candidates:
                if text not in text_widths:
                    text_widths[text] = self.sizeHintForIndex(model.index(widest[text], column)).width()
            content = max(text_widths[text] for text in candidates)
            width = max(width, content + (1 if self.showGrid() else 0))
        header.resizeSection(column, width)

    def restyled(self) -> None:
        """The text size changed (a zoom step): rows as tall and columns as wide as the new font needs.

        Called by :func:`~attn_studio.gui.presentation.restyle` once the new font has reached the
        table; the columns are fitted at once (as many as the budget allows, the rest in the next
        event-loop turns), so a zoom never shows a number elided, not even for a frame.
        """
        self._fit_header_font()
        self._fit_timer.stop()
        self._fit_next = 0
        self.fit_columns()

    def changeEvent(self, event):
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.FontChange:
            # A new font (however it came): the numbers need other widths, the labels another size.
            self._fit_header_font()
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
            self._fit_next, self._fit_stop = 0, None
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
