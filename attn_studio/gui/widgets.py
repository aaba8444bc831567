"""Small building blocks shared by the views and the window's rooms."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets


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


def short_token(token: str, limit: int = 40) -> str:
    """``token`` cut to ``limit`` characters with "…", for labels and captions.

    A single 20,000-character word must not make a label (or the window) hundreds
    of thousands of pixels wide; tooltips give the word whole.
    """
    return token if len(token) <= limit else token[: limit - 1] + "…"


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
