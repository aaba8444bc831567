"""Help → Keyboard shortcuts and About."""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets

from ... import __version__

EXTRA_SHORTCUTS = [("Up / Down (on a heatmap)", "Previous / next query token"),
                   ("Alt+Up / Alt+Down", "Previous / next query token, anywhere but the Scenes list"),
                   ("Alt+Up / Alt+Down (in the Scenes list)", "Move the selected scene up / down (the panel's Undo)"),
                   ("Delete (in the Scenes list)", "Delete the selected scene (the panel's Undo)"),
                   ("Click a heatmap row", "Follow that query token"),
                   ("Type in a table cell, Enter", "Edit that number (Esc cancels)"),
                   ("PageDown / PageUp (on the stage)", "Next / previous page or step of the scene, then scene"),
                   ("Shift+PageDown / Shift+PageUp (on the stage)", "Next / previous scene, at its start"),
                   ("B or . / W or , (on the stage)", "Black / white screen; any key brings the stage back"),
                   ("F1 or ? (on the stage)", "Every key of the stage, over it")]


def shortcut_list(menu_bar: QtWidgets.QMenuBar) -> list[tuple[str, str]]:
    """(keys, what they do) for every menu action with a shortcut, and the keys no menu shows."""
    rows = []
    for menu in menu_bar.findChildren(QtWidgets.QMenu):
        for action in menu.actions():
            found = [k.toString(QtGui.QKeySequence.NativeText) for k in action.shortcuts() if not k.isEmpty()]
            if found:
                rows.append((" or ".join(dict.fromkeys(found)), action.text().replace("&", "")))
    return rows + EXTRA_SHORTCUTS


def shortcuts_dialog(parent: QtWidgets.QWidget, rows: list[tuple[str, str]]) -> QtWidgets.QDialog:
    """A non-modal table of ``rows`` (keys, what they do), shown at once."""
    dialog = QtWidgets.QDialog(parent)
    dialog.setObjectName("shortcutsDialog")
    dialog.setWindowTitle("Keyboard shortcuts")
    layout = QtWidgets.QVBoxLayout(dialog)
    table = QtWidgets.QTableWidget(len(rows), 2)
    table.setHorizontalHeaderLabels(["Keys", "Does"])
    for i, (found, text) in enumerate(rows):
        table.setItem(i, 0, QtWidgets.QTableWidgetItem(found))
        table.setItem(i, 1, QtWidgets.QTableWidgetItem(text))
    table.resizeColumnsToContents()
    table.horizontalHeader().setStretchLastSection(True)
    table.verticalHeader().hide()
    table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
    layout.addWidget(table)
    close = QtWidgets.QPushButton("Close")
    close.clicked.connect(dialog.close)
    layout.addWidget(close)
    dialog.resize(560, 480)
    dialog.show()
    return dialog


def about(parent: QtWidgets.QWidget) -> None:
    """The About box."""
    QtWidgets.QMessageBox.about(
        parent, "About Attention Studio",
        f"<h3>Attention Studio {__version__}</h3><p>A live playground for the attention mechanism: "
        "edit token vectors and Q/K/V weights, and watch scores, weights and outputs follow.</p>")
