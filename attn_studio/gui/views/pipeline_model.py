"""The step-by-step table's model: rows = steps, columns = key tokens + "result", and its colours.

The steps, their numbers and words come from :mod:`attn_studio.explain`; the
model only hands them to the table, colours the current step, masked keys and
overflows, and gives each cell its filled-in formula as a tooltip.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui

from ... import explain
from ...formatting import DEFAULT_DIGITS
from .. import presentation
from ..widgets import short_token

Qt = QtCore.Qt

# Colours (light, so the numbers stay legible on a projector).
CURRENT_BG = QtGui.QColor("#fff1a8")   # the highlighted step
EXPLANATION_BG = QtGui.QColor("#fffbe6")
RESULT_BG = QtGui.QColor("#e8f0fb")    # the result column
MASKED_BG = QtGui.QColor("#cfcfcf")    # masked keys: visibly different from a weight of 0
MASKED_FG = QtGui.QColor("#4a4a4a")
ERROR_BG = QtGui.QColor("#f4a3a3")     # overflow / underflow / undefined
ERROR_FG = QtGui.QColor("#6b0000")
# The same roles on a dark theme: muted, so that the text (light) stays legible and
# no large light area glares on a projector.
DARK_COLOURS = {"current": QtGui.QColor("#5c4f16"), "explanation": QtGui.QColor("#3b3726"),
                "result": QtGui.QColor("#263447"), "masked_bg": QtGui.QColor("#4a4a4a"),
                "masked_fg": QtGui.QColor("#bdbdbd"), "error_bg": QtGui.QColor("#6e2a2a"),
                "error_fg": QtGui.QColor("#ffd6d6"), "text": QtGui.QColor("#d2d2d2")}
LIGHT_COLOURS = {"current": CURRENT_BG, "explanation": EXPLANATION_BG, "result": RESULT_BG,
                 "masked_bg": MASKED_BG, "masked_fg": MASKED_FG, "error_bg": ERROR_BG, "error_fg": ERROR_FG,
                 "text": QtGui.QColor("#1a1a1a")}


def step_colours() -> dict:
    """The step view's colours for the current theme (light or dark)."""
    return DARK_COLOURS if QtGui.QColor(presentation.STYLE.theme.base).lightness() < 128 else LIGHT_COLOURS

# Role numbers as plain ints: data() runs for every cell and role on each
# resize and repaint, and comparing ints is far cheaper than comparing enums.
_DISPLAY = Qt.ItemDataRole.DisplayRole.value
_TOOLTIP = Qt.ItemDataRole.ToolTipRole.value
_BACKGROUND = Qt.ItemDataRole.BackgroundRole.value
_FOREGROUND = Qt.ItemDataRole.ForegroundRole.value
_ALIGN = Qt.ItemDataRole.TextAlignmentRole.value
_FONT = Qt.ItemDataRole.FontRole.value
_CENTER = int(Qt.AlignCenter.value)
_LEFT = int((Qt.AlignLeft | Qt.AlignVCenter).value)

class PipelineModel(QtCore.QAbstractTableModel):
    """Rows = steps, columns = key tokens + "result"; read-only.

    Holds the :class:`~attn_studio.explain.Step` list it displays and the
    (immutable) state and result they came from, for the tooltips.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._steps: list[explain.Step] = []
        self._keys: list[str] = []
        self._state = None
        self._result = None
        self._head = 0
        self._query = 0
        self._current = 0
        self.digits = DEFAULT_DIGITS  # decimals of the tooltips (the steps carry their own)
        self._texts: dict[tuple[int, int], str] = {}
        self._bold = QtGui.QFont()
        self._bold.setBold(True)

    # -- content ------------------------------------------------------------------
    def set_content(self, state, result, head: int, query: int, steps, keys) -> None:
        """Show ``steps`` (one per row) for ``keys``; resets only if the shape changes."""
        steps, keys = list(steps), list(keys)
        same_shape = (len(steps) == len(self._steps) and len(keys) == len(self._keys)
                      and [s.key for s in steps] == [s.key for s in self._steps])
        if not same_shape:
            self.beginResetModel()
        self._steps, self._state, self._result = steps, state, result
        self._head, self._query = head, query
        self._texts = {}
        old_keys, self._keys = self._keys, keys
        if not same_shape:
            self.endResetModel()
            return
        if old_keys != keys:
            self.headerDataChanged.emit(Qt.Horizontal, 0, max(self.columnCount() - 1, 0))
        self.headerDataChanged.emit(Qt.Vertical, 0, max(self.rowCount() - 1, 0))
        if steps:
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1))

    def set_current(self, row: int) -> None:
        """Highlight step ``row``."""
        old, self._current = self._current, row
        for r in {old, row}:
            if 0 <= r < self.rowCount():
                self.dataChanged.emit(self.index(r, 0), self.index(r, self.columnCount() - 1))
        if self.rowCount():
            self.headerDataChanged.emit(Qt.Vertical, 0, self.rowCount() - 1)

    @property
    def steps(self) -> list:
        return list(self._steps)

    def step(self, row: int):
        return self._steps[row]

    def result_column(self) -> int:
        """Index of the result column (after the key columns)."""
        return len(self._keys)

    # -- Qt model API ----------------------------------------------------------------
    def rowCount(self, parent=QtCore.QModelIndex()):
        return 0 if parent.isValid() else len(self._steps)

    def columnCount(self, parent=QtCore.QModelIndex()):
        if parent.isValid() or not self._steps:
            return 0
        return len(self._keys) + 1

    def _status(self, r: int, c: int) -> str:
        step = self._steps[r]
        if c == len(self._keys):
            return step.result_status
        return step.status[c] if c < len(step.status) else ""

    def _text(self, r: int, c: int) -> str:
        text = self._texts.get((r, c))
        if text is None:
            step = self._steps[r]
            text = step.result_text() if c == len(self._keys) else step.cell_text(c)
            self._texts[(r, c)] = text
        return text

    def cell_text(self, row: int, column: int) -> str:
        """The text of cell (``row``, ``column``) as shown."""
        return self._text(row, column)

    def data(self, index, role=_DISPLAY):
        if not index.isValid():
            return None
        role = role if isinstance(role, int) else int(role.value)
        r, c = index.row(), index.column()
        if role == _DISPLAY:
            return self._text(r, c)
        if role == _ALIGN:
            return _CENTER
        if role == _BACKGROUND:
            status = self._status(r, c)
            colours = step_colours()
            if status == "masked":
                return colours["masked_bg"]
            if status:
                return colours["error_bg"]
            if r == self._current:
                return colours["current"]
            if c == len(self._keys):
                return colours["result"]
            return None
        if role == _FOREGROUND:
            status = self._status(r, c)
            if status == "masked":
                return step_colours()["masked_fg"]
            if status:
                return step_colours()["error_fg"]
            if r == self._current or c == len(self._keys):
                return step_colours()["text"]  # on its own background, whatever the palette
            return None
        if role == _FONT:
            return self._bold if r == self._current else None
        if role == _TOOLTIP:
            key_index = None if c == len(self._keys) else c
            return explain.step_tooltip(self._state, self._result, self._head, self._query,
                                        self._steps[r].key, key_index, digits=self.digits) or None
        return None

    def headerData(self, section, orientation, role=_DISPLAY):
        role = role if isinstance(role, int) else int(role.value)
        if orientation == Qt.Horizontal:
            if role == _DISPLAY:
                if section < len(self._keys):
                    return short_token(self._keys[section], 24)
                return "result" if section == len(self._keys) else None
            if role == _TOOLTIP and section < len(self._keys):
                return f"key {section + 1}: “{self._keys[section]}”"
            return None
        if not 0 <= section < len(self._steps):
            return None
        if role == _DISPLAY:
            marker = "▶ " if section == self._current else "   "
            return f"{marker}{section + 1}. {short_token(self._steps[section].title, 48)}"
        if role == _FONT:
            return self._bold if section == self._current else None
        if role == _ALIGN:
            return _LEFT
        if role == _TOOLTIP:
            return self._steps[section].explanation
        return None

    def flags(self, index):
        return Qt.ItemIsEnabled
