"""The Model panel's input widgets, made alike: named, with a tooltip, a sentence box that checks
what is pasted, a temperature box."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ...limits import MAX_SENTENCE_CHARS, TEMPERATURE_RANGE


def _tip(widget, name: str, tip: str):
    widget.setObjectName(name)
    widget.setToolTip(tip)
    return widget


def spin_box(name: str, lo: int, hi: int, tip: str) -> QtWidgets.QSpinBox:
    """An integer spin box that changes the model once per value, not per keystroke."""
    spin = _tip(QtWidgets.QSpinBox(), name, tip)
    spin.setRange(lo, hi)
    spin.setKeyboardTracking(False)  # typing "12" is one change, not "1" then "12"
    spin.setAccelerated(True)
    return spin


class SentenceEdit(QtWidgets.QLineEdit):
    """A line edit that holds a whole sentence of the budget and says when a paste was cut.

    ``pasted_cut`` carries a message when pasted text did not fit ``maxLength``.
    """

    pasted_cut = QtCore.Signal(str)

    def keyPressEvent(self, event):
        if event.matches(QtGui.QKeySequence.Paste) and not self.isReadOnly():
            self.paste_checked()
            event.accept()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event):
        menu = self.createStandardContextMenu()
        for action in menu.actions():
            if action.objectName() == "edit-paste":
                action.triggered.disconnect()
                action.triggered.connect(self.paste_checked)
        menu.exec(event.globalPos())
        menu.deleteLater()

    def paste_checked(self) -> None:
        """Paste the clipboard's text; if it does not all fit, paste what fits and say where it was cut."""
        text = QtWidgets.QApplication.clipboard().text()
        if not text:
            return
        text = " ".join(text.splitlines())  # one line: the line edit would keep only the first
        room = self.maxLength() - (len(self.text()) - len(self.selectedText()))
        self.insert(text)
        if len(text) > room:
            kept = text[:max(room, 0)]
            tail = kept[-30:].strip()
            self.pasted_cut.emit(
                f"The pasted text was cut: {len(text):,} characters, of which {max(room, 0):,} fit "
                f"(a sentence may have {self.maxLength():,}). It now ends at …{tail!r}" if tail else
                f"The pasted text was cut: the box already holds {self.maxLength():,} characters, the most "
                "a sentence may have")


def line_edit(name: str, placeholder: str, tip: str) -> QtWidgets.QLineEdit:
    edit = _tip(SentenceEdit(), name, tip)
    edit.setPlaceholderText(placeholder)
    # Qt's default (32,767) would cut a long paste silently; the state's own limit is the budget.
    edit.setMaxLength(MAX_SENTENCE_CHARS)
    return edit


def combo(name: str, tip: str, items: dict | None = None) -> QtWidgets.QComboBox:
    box = _tip(QtWidgets.QComboBox(), name, tip)
    for data, text in (items or {}).items():
        box.addItem(text, data)
    return box


def temperature_box() -> QtWidgets.QDoubleSpinBox:
    spin = _tip(QtWidgets.QDoubleSpinBox(), "temperatureSpin",
                "Divide the logits by T: high T flattens the weights, low T sharpens them")
    spin.setDecimals(3)
    spin.setRange(*TEMPERATURE_RANGE)  # the state's own range: every value the spin offers is accepted
    spin.setSingleStep(0.1)
    spin.setKeyboardTracking(False)
    return spin
