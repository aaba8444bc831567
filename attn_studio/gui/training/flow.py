"""A layout that wraps its items onto more lines when the width runs out (the training lab's control bar).

A row of controls laid out by a ``QHBoxLayout`` asks for the width of all of them together: the lab's
bar (play, step, reset, speed, learning rate, seed, d_k, the step count, export) asked for 1,000 px,
which made the whole window wider than a 1280-pixel projector once the lab had been shown. In a
:class:`FlowLayout` the bar asks only for its widest item and takes as many lines as the width needs.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


class FlowLayout(QtWidgets.QLayout):
    """Items left to right, wrapped onto a new line when the next one does not fit.

    ``addStretch()`` marks the place where the rest of the items are pushed to the right of their
    line (as a stretch does in a box layout), e.g. a step count and an Export button at the end.
    """

    def __init__(self, parent: QtWidgets.QWidget | None = None, spacing: int = 6):
        super().__init__(parent)
        self._items: list[QtWidgets.QLayoutItem] = []
        self._stretch_at: int | None = None  # the index of the first item pushed right
        self._spacing = spacing
        self._heights: dict[int, int] = {}  # heightForWidth's answers, until the layout is invalidated
        self.setContentsMargins(0, 0, 0, 0)

    # -- QLayout's interface -------------------------------------------------------------------
    def addItem(self, item: QtWidgets.QLayoutItem) -> None:  # noqa: N802 (Qt's name)
        self._items.append(item)

    def addStretch(self, stretch: int = 1) -> None:  # noqa: N802 (a box layout's name)
        """The items added from now on sit at the right end of their line."""
        self._stretch_at = len(self._items)
        self.invalidate()

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):  # noqa: N802
        if not 0 <= index < len(self._items):
            return None
        if self._stretch_at is not None and index < self._stretch_at:
            self._stretch_at -= 1
        return self._items.pop(index)

    def spacing(self) -> int:
        return self._spacing

    def setSpacing(self, spacing: int) -> None:  # noqa: N802
        self._spacing = int(spacing)
        self.invalidate()

    def expandingDirections(self) -> QtCore.Qt.Orientations:  # noqa: N802
        return QtCore.Qt.Orientations(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        # Asked dozens of times per layout pass with the same widths (a panel's first showing): kept until an
        # item or its size hint changes (Qt then invalidates the layout).
        height = self._heights.get(width)
        if height is None:
            height = self._heights[width] = self._arrange(QtCore.QRect(0, 0, width, 0), place=False)
        return height

    def invalidate(self) -> None:
        self._heights.clear()
        super().invalidate()

    def setGeometry(self, rect: QtCore.QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._arrange(rect, place=True)

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802
        # Everything on one line: what the bar would like.
        visible = self._visible()
        m = self.contentsMargins()
        width = sum(item.sizeHint().width() for _, item in visible) + self._spacing * max(len(visible) - 1, 0)
        height = max((item.sizeHint().height() for _, item in visible), default=0)
        return QtCore.QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QtCore.QSize:  # noqa: N802
        # The widest single item: the rest wraps.
        m = self.contentsMargins()
        size = QtCore.QSize()
        for _, item in self._visible():
            size = size.expandedTo(item.minimumSize())
        return size + QtCore.QSize(m.left() + m.right(), m.top() + m.bottom())

    # -- placing -------------------------------------------------------------------------------
    def _visible(self) -> list[tuple[int, QtWidgets.QLayoutItem]]:
        return [(i, item) for i, item in enumerate(self._items) if not item.isEmpty()]

    def _lines(self, width: int) -> list[list[tuple[int, QtWidgets.QLayoutItem, QtCore.QSize]]]:
        lines: list[list] = [[]]
        x = 0
        for index, item in self._visible():
            hint = item.sizeHint().boundedTo(item.maximumSize()).expandedTo(item.minimumSize())
            if lines[-1] and x + self._spacing + hint.width() > width:
                lines.append([])
                x = 0
            x += (self._spacing if lines[-1] else 0) + hint.width()
            lines[-1].append((index, item, hint))
        return lines

    def _arrange(self, rect: QtCore.QRect, place: bool) -> int:
        """Lay the items out in ``rect`` (when ``place``) and return the height they take."""
        m = self.contentsMargins()
        inner = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        y = inner.y()
        lines = self._lines(inner.width())
        for n, line in enumerate(lines):
            if not line:
                continue
            height = max(hint.height() for _, _, hint in line)
            used = sum(hint.width() for _, _, hint in line) + self._spacing * (len(line) - 1)
            # Past the stretch, the items sit at the right end of the line.
            shift = max(inner.width() - used, 0)
            x = inner.x()
            for index, item, hint in line:
                at = x + (shift if self._stretch_at is not None and index >= self._stretch_at else 0)
                if place:
                    item.setGeometry(QtCore.QRect(at, y + (height - hint.height()) // 2, hint.width(), hint.height()))
                x += hint.width() + self._spacing
            y += height + (self._spacing if n < len(lines) - 1 else 0)
        return y - inner.y() + m.top() + m.bottom()


def group(*widgets: QtWidgets.QWidget, spacing: int = 4) -> QtWidgets.QWidget:
    """``widgets`` side by side in one box, so a flow layout never parts a label from its control."""
    box = QtWidgets.QWidget()
    layout = QtWidgets.QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(spacing)
    for widget in widgets:
        layout.addWidget(widget)
    return box
