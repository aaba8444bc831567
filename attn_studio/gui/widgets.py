"""Small building blocks shared by the views and the window's rooms."""

from __future__ import annotations

import re
import time

import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets


def settle(window) -> None:
    """Let ``window`` catch up: its layouts, the studio bridge's one emission, every view drawn
    (what a few event-loop turns do; a figure drawn without a display needs it before drawing)."""
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
        window.bridge.flush()
    window.finish_drawing()
    QtWidgets.QApplication.processEvents()


def view_layout(view: QtWidgets.QWidget, spacing: int = 4) -> QtWidgets.QVBoxLayout:
    """Give ``view`` the plots' background and return its top-level vertical layout.

    The window recolours this background with the theme (``MainWindow.set_theme``).
    """
    view.setAutoFillBackground(True)
    palette = view.palette()
    palette.setColor(view.backgroundRole(), QtCore.Qt.white)
    view.setPalette(palette)
    layout = QtWidgets.QVBoxLayout(view)
    layout.setContentsMargins(4, 4, 4, 4)
    layout.setSpacing(spacing)
    return layout


def caption_label(name: str) -> QtWidgets.QLabel:
    """A caption that wraps instead of widening its view (a long sentence must never
    push the window past a laptop's screen)."""
    label = QtWidgets.QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Preferred)
    return label


class OutsideLayouts(QtWidgets.QWidget):
    """Holds one widget filling it, outside any layout, so that a change of the widget's text does
    not lay the window out again: QLabel.setText asks its parent's layout, and every layout above
    it up to the window, to lay out anew (half a millisecond on every edit for the √d_k plot's
    caption, whose size never changes). The holder takes the widget's size constraints, and lays
    out again when they change (a new font, a fixed height freed on the stage), not its text."""

    def __init__(self, widget: QtWidgets.QWidget, parent=None):
        super().__init__(parent)
        self.widget = widget
        widget.setParent(self)
        self.setSizePolicy(widget.sizePolicy())
        self._constraints = None
        self._follow()

    def _follow(self) -> None:
        w = self.widget
        constraints = (w.minimumSize(), w.maximumSize())
        if constraints != self._constraints:
            self._constraints = constraints
            self.setMinimumSize(constraints[0])
            self.setMaximumSize(constraints[1])
            self.updateGeometry()

    def event(self, event):
        if event.type() == QtCore.QEvent.LayoutRequest:
            self._follow()  # the widget asks for a new layout: only its constraints count
            return True
        return super().event(event)

    def sizeHint(self):
        return self.widget.sizeHint()

    def minimumSizeHint(self):
        return self.widget.minimumSizeHint()

    def hasHeightForWidth(self):
        return self.widget.hasHeightForWidth()

    def heightForWidth(self, width):
        return self.widget.heightForWidth(width)

    def resizeEvent(self, event):
        self.widget.setGeometry(self.rect())
        super().resizeEvent(event)


def short_token(token: str, limit: int = 40) -> str:
    """``token`` cut to ``limit`` characters with "…", for labels and captions.

    A single 20,000-character word must not make a label (or the window) hundreds
    of thousands of pixels wide; tooltips give the word whole.
    """
    return token if len(token) <= limit else token[: limit - 1] + "…"


# A word of a message longer than this may break anywhere (after every BREAK_EVERY characters).
BREAK_EVERY = 16
_ZWSP = "\u200b"  # zero-width space: where a line may break, drawn as nothing
_LONG_WORD = re.compile(r"\S{%d,}" % (BREAK_EVERY + 1))


def breakable(text: str) -> str:
    """``text`` with a zero-width space after every ``BREAK_EVERY`` characters of a longer word, so
    that word wrapping can break it anywhere (a word is never wider than its label)."""
    return _LONG_WORD.sub(lambda m: _ZWSP.join(m.group(0)[i:i + BREAK_EVERY]
                                                for i in range(0, len(m.group(0)), BREAK_EVERY)), text)


class MessageLabel(QtWidgets.QLabel):
    """A plain-text message (why an edit was refused) that never widens its panel.

    It takes the width its layout gives it and asks for no more (a word-wrapped ``QLabel``'s least
    width is its longest word's: a 5,000-character token made the window 31,000 px wide), and a
    word longer than the label wraps anywhere. ``text()`` is the text as given.
    """

    def __init__(self, name: str = "", parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        if name:
            self.setObjectName(name)
        self._text = ""
        self.setTextFormat(QtCore.Qt.PlainText)
        self.setWordWrap(True)
        self.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Preferred)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        """Show ``text`` (plain), its long words breakable."""
        self._text = str(text)
        super().setText(breakable(self._text))

    def text(self) -> str:
        """The message as given (without the break points added for wrapping)."""
        return self._text

    def clear(self) -> None:
        """No message."""
        self.setText("")


def no_widen(widget: QtWidgets.QWidget) -> QtWidgets.QWidget:
    """Let ``widget`` take the width its layout gives it, never ask for more (wrapping text
    with one very long word would otherwise set the window's minimum width)."""
    widget.setSizePolicy(QtWidgets.QSizePolicy.Ignored, widget.sizePolicy().verticalPolicy())
    return widget


def keys(*sequences) -> list[QtGui.QKeySequence]:
    """Shortcuts without repeats: a platform's standard key may equal our own (F11 is
    FullScreen on Linux), and a repeated shortcut is ambiguous to Qt and does nothing."""
    seen, found = set(), []
    for seq in sequences:
        for key in (QtGui.QKeySequence.keyBindings(seq) if isinstance(seq, QtGui.QKeySequence.StandardKey)
                    else [QtGui.QKeySequence(seq)]):
            if not key.isEmpty() and key.toString() not in seen:
                seen.add(key.toString())
                found.append(key)
    return found


def discard(widget: QtWidgets.QWidget, *, empty: bool = True) -> None:
    """Delete ``widget``'s C++ side now: a figure drawn for the page or the stage and done with.

    Not left to Python: such a widget and its plot items hold each other in reference cycles, so the
    cycle collector frees them, and it first clears the items' Python attributes, then deletes the
    widget; the deletion takes its layouts apart, which ask those cleared items for their size
    ('LabelItem' object has no attribute '_sizeHint', raised inside the collection). Deleted here,
    while every item is whole, nothing is left to the collector but plain Python objects.

    With ``empty`` those are freed now too (:func:`break_apart`): a sheet tried and dropped while a
    figure is fitted is a few hundred objects, and a Model view figure's dropped sheets, left to the
    collector, made its next full pass 30 to 60 ms longer. Without it the caller empties them (in
    pieces, :func:`parts_of`), or a widget still read after it is deleted keeps its attributes."""
    if shiboken6.isValid(widget):
        parts = parts_of(widget) if empty else []
        widget.hide()
        widget.setParent(None)
        shiboken6.delete(widget)
        break_apart(parts, float("inf"))


def parts_of(widget: QtWidgets.QWidget) -> list:
    """The Python objects ``widget`` is made of: itself, its QObject children and the items of its
    graphics views' scenes (``widget`` included when it is a view); for :func:`break_apart` once deleted."""
    parts = [widget, *widget.findChildren(QtCore.QObject)]
    for view in [widget, *widget.findChildren(QtWidgets.QGraphicsView)]:
        if isinstance(view, QtWidgets.QGraphicsView) and view.scene() is not None:
            parts += view.scene().items()
    return parts


def break_apart(objects: list, budget: float) -> bool:
    """Empty the attributes of the deleted ``objects`` (:func:`parts_of` a deleted widget), from the end
    of the list, for up to ``budget`` seconds; True once none is left.

    A figure's Python side (its items, their plots, labels and numbers) is held together in reference
    cycles: left alone it lives on until the collector's full pass, which then frees a whole figure
    at once (a Model view figure's took 60 to 130 ms of one turn). Emptied a few at a time, each piece
    is freed as its last reference goes. An object whose C++ side is alive is left as it is."""
    end = time.perf_counter() + budget
    while objects:
        obj = objects.pop()
        if not shiboken6.isValid(obj):  # its C++ side is gone: nothing of Qt asks it for anything now
            attributes = getattr(obj, "__dict__", None)
            if attributes:
                attributes.clear()
        del obj
        if time.perf_counter() > end:
            break
    return not objects


def white_page() -> QtWidgets.QWidget:
    """A widget painted white all over: the paper a figure made for a page or a hand-out lies on."""
    page = QtWidgets.QWidget()
    page.setAutoFillBackground(True)
    palette = page.palette()
    palette.setColor(QtGui.QPalette.Window, QtGui.QColor("white"))
    page.setPalette(palette)
    return page
