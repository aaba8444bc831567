"""The window's hand-out dialog: format, paper and notes."""

from __future__ import annotations

from PySide6 import QtWidgets

from ..files.pages import default_paper


class HandoutDialog(QtWidgets.QDialog):
    """The hand-out's choices: PDF (one file) or PNG / SVG (a page a file in a folder), the paper
    (A4 or Letter, the locale's first) and whether each page prints the scene's notes."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("handoutDialog")
        self.setWindowTitle("Export the lecture's hand-out")
        form = QtWidgets.QFormLayout(self)
        self.format_combo = QtWidgets.QComboBox(objectName="handoutFormat")
        for label, fmt in (("PDF: one file, a page a scene", "pdf"), ("PNG: a folder, a page a file", "png"),
                           ("SVG: a folder, a page a file", "svg")):
            self.format_combo.addItem(label, fmt)
        self.paper_combo = QtWidgets.QComboBox(objectName="handoutPaper")
        for key in ("a4", "letter"):
            self.paper_combo.addItem({"a4": "A4 landscape", "letter": "Letter landscape"}[key], key)
        self.paper_combo.setCurrentIndex(self.paper_combo.findData(default_paper()))
        self.notes_check = QtWidgets.QCheckBox("Print each scene's notes under its figure", objectName="handoutNotes")
        form.addRow("Format", self.format_combo)
        form.addRow("Paper", self.paper_combo)
        form.addRow("", self.notes_check)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.Ok | QtWidgets.QDialogButtonBox.Cancel)
        buttons.button(QtWidgets.QDialogButtonBox.Ok).setText("Export…")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def choices(self) -> dict:
        """{"fmt": "pdf" | "png" | "svg", "paper": "a4" | "letter", "notes": bool}"""
        return {"fmt": self.format_combo.currentData(), "paper": self.paper_combo.currentData(),
                "notes": self.notes_check.isChecked()}
