"""The report card as a Qt table: one row per (layer, head), sortable by any column.

Layers and heads count from 1, as everywhere in the window. Each cell's
``UserRole`` holds the number it is sorted by (the role column sorts by name).
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...formatting import format_importance, format_number
from ...pretrained.heads import HeadReport
from .. import presentation

# (header, HeadReport field or None, tooltip)
COLUMNS = (
    ("Layer", None, "Layer, counted from 1"),
    ("Head", None, "Head, counted from 1"),
    ("Role", "role", "What the head mostly does (a share ≥ 0.5 names it; else broad or mixed)"),
    ("Entropy", "entropy", "Mean entropy of a query's weights, in nats (low: sharp, high: spread)"),
    ("Confidence", "confidence", "Mean largest weight of a query"),
    ("Previous", "previous", "Mean weight on the previous token"),
    ("Next", "next", "Mean weight on the next token"),
    ("Self", "self_", "Mean weight on the query itself"),
    ("First", "first", "Mean weight on the first token ([CLS] for BERT-family models)"),
    ("Last", "last", "Mean weight on the last token ([SEP] for BERT-family models)"),
    ("Punctuation", "punctuation", "Mean weight on punctuation tokens"),
    ("Importance", None, "1 − cosine between the sentence embedding with and without the head "
     "(Run importance; stale after an edit); four decimals, as attn-studio heads writes it"),
    ("Previous score", "det:previous", "Head detector: the share of the head's attention on the token just before "
     "(TransformerLens's detect_head), on the detector's sequence (Detect heads page)"),
    ("Duplicate score", "det:duplicate", "Head detector: the share of the head's attention on earlier copies of "
     "the query's own token, on the detector's sequence (Detect heads page)"),
    ("Induction score", "det:induction", "Head detector: the share of the head's attention on the token after an "
     "earlier copy of the query's token (what an induction head copies), on the detector's sequence"),
)
IMPORTANCE_COLUMN = next(i for i, column in enumerate(COLUMNS) if column[0] == "Importance")
DETECTOR_COLUMNS = tuple(i for i, column in enumerate(COLUMNS) if str(column[1]).startswith("det:"))

# One colour per role, the same in the table's badge and the grid beside it.
ROLE_COLOURS = {
    "previous token": QtGui.QColor(31, 119, 180),
    "next token": QtGui.QColor(44, 160, 44),
    "self": QtGui.QColor(148, 103, 189),
    "first token": QtGui.QColor(214, 39, 40),
    "last token": QtGui.QColor(255, 127, 14),
    "punctuation": QtGui.QColor(140, 86, 75),
    "broad": QtGui.QColor(190, 190, 190),
    "mixed": QtGui.QColor(240, 240, 240),
}
# The detector's kinds as the role grid marks them: a letter in the head's cell.
DETECTED_MARKS = {"previous token": "P", "duplicate token": "D", "induction": "I"}


class ReportCardModel(QtCore.QAbstractTableModel):
    """A :class:`HeadReport` (and importance, when computed) as L·H rows.

    Every cell's text, sort value, badge and colour are built once per report
    (``_cells``, by role): a table of 72 heads asks for its data thousands of
    times while it sorts and sizes its columns.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.report: HeadReport | None = None
        self.importance: np.ndarray | None = None
        self.importance_stale = False
        self.detection = None  # the head detector's answer (pretrained.detect.Detection), or None
        self._heads = 0
        self._cells: dict = {}

    def set_report(self, report: HeadReport | None) -> None:
        self.beginResetModel()
        self.report = report
        self._heads = 0 if report is None else report.role.shape[1]
        self._build()
        self.endResetModel()

    def set_importance(self, importance: np.ndarray | None, stale: bool = False) -> None:
        if importance is self.importance and stale == self.importance_stale:
            return
        self.importance, self.importance_stale = importance, stale
        self._build()
        if self.rowCount():
            self.dataChanged.emit(self.index(0, IMPORTANCE_COLUMN), self.index(self.rowCount() - 1, IMPORTANCE_COLUMN))

    def set_detection(self, detection) -> None:
        """Show the head detector's scores (a ``Detection``) in their columns; None empties them."""
        if detection is self.detection:
            return
        self.detection = detection
        self._build()
        if self.rowCount():
            first, last = DETECTOR_COLUMNS[0], DETECTOR_COLUMNS[-1]
            self.dataChanged.emit(self.index(0, first), self.index(self.rowCount() - 1, last))

    def _build(self) -> None:
        display, sort, decoration = [], [], []
        if self.report is not None:
            for row in range(int(self.report.role.size)):
                layer, head = self.head_of_row(row)
                values = [self._value(layer, head, column) for column in range(len(COLUMNS))]
                display.append([self._text(column, value) for column, value in enumerate(values)])
                sort.append([-1.0 if value is None else value for value in values])
                decoration.append(ROLE_COLOURS.get(values[2]))
        grey = QtGui.QColor(150, 150, 150) if self.importance_stale else None
        right = int(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter)
        self._cells = {QtCore.Qt.DisplayRole: display, QtCore.Qt.UserRole: sort, "decoration": decoration,
                       "grey": grey, "right": right}

    def _text(self, column: int, value):
        if value is None:
            return "—"
        if isinstance(value, int):
            return value  # layer and head numbers, from 1
        if isinstance(value, float):
            digits = presentation.digits()
            if column == IMPORTANCE_COLUMN:
                # Four decimals at any precision, as the command line prints it: most heads move the
                # embedding by less than 0.01, which two decimals would write 0.00.
                return format_importance(value) + (" (stale)" if self.importance_stale else "")
            return format_number(value, digits)
        return str(value)

    def column_texts(self) -> list[set[str]]:
        """Each column's distinct texts, for sizing the columns without asking the table to measure
        every cell: ``resizeColumnsToContents`` calls ``data`` 8,640 times for MiniLM's 144 heads
        (a third of a second on the GUI thread)."""
        texts: list[set[str]] = [set() for _ in COLUMNS]
        for row in self._cells.get(QtCore.Qt.DisplayRole, []):
            for column, value in enumerate(row):
                texts[column].add(str(value))
        return texts

    def head_of_row(self, row: int) -> tuple[int, int]:
        """(layer, head), 0-based, of source row ``row``."""
        return divmod(row, self._heads)

    def rowCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: N802 (Qt's name)
        return 0 if self.report is None or parent.isValid() else int(self.report.role.size)

    def set_digits(self, digits: int) -> None:
        """Write the numbers again at the precision setting (``presentation.set_digits`` calls this)."""
        if self.report is None:
            return
        self.beginResetModel()
        self._build()
        self.endResetModel()

    def columnCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=QtCore.Qt.DisplayRole):  # noqa: N802
        if orientation != QtCore.Qt.Horizontal:
            return None
        if role == QtCore.Qt.DisplayRole:
            return COLUMNS[section][0]
        if role == QtCore.Qt.ToolTipRole:
            return COLUMNS[section][2]
        return None

    def _value(self, layer: int, head: int, column: int):
        name = COLUMNS[column][1]
        if column == 0:
            return layer + 1
        if column == 1:
            return head + 1
        if column == IMPORTANCE_COLUMN:
            return None if self.importance is None else float(self.importance[layer, head])
        if name.startswith("det:"):
            detection = self.detection
            return None if detection is None else float(detection.scores[name[4:]][layer, head])
        value = getattr(self.report, name)[layer, head]
        return str(value) if name == "role" else float(value)

    def data(self, index, role=QtCore.Qt.DisplayRole):
        if self.report is None or not index.isValid():
            return None
        cells = self._cells.get(role)
        if cells is not None:
            return cells[index.row()][index.column()]
        column = index.column()
        if role == QtCore.Qt.DecorationRole:
            return self._cells["decoration"][index.row()] if column == 2 else None
        if role == QtCore.Qt.ForegroundRole:
            return self._cells["grey"] if column == IMPORTANCE_COLUMN else None
        if role == QtCore.Qt.TextAlignmentRole:
            return None if column == 2 else self._cells["right"]
        return None


def size_columns(table: QtWidgets.QTableView, model: ReportCardModel) -> None:
    """Size ``table``'s columns to their widest text, measured once per distinct text (a bold header with
    room for the sort arrow, and the role's colour badge, included) rather than by Qt over every cell."""
    cells = table.fontMetrics()
    bold = QtGui.QFont(table.horizontalHeader().font())
    bold.setBold(True)
    header = QtGui.QFontMetrics(bold)
    badge = table.iconSize().width() if table.iconSize().isValid() else cells.height()
    pad = 2 * table.style().pixelMetric(QtWidgets.QStyle.PM_FocusFrameHMargin, None, table) + 6
    for column, texts in enumerate(model.column_texts()):
        widest = max((cells.horizontalAdvance(text) for text in texts), default=0)
        width = max(widest + (badge + 6 if column == 2 else 0), header.horizontalAdvance(COLUMNS[column][0]) + 16)
        table.setColumnWidth(column, width + pad)
