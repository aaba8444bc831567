"""Help → Getting started, Keyboard shortcuts and About."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

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
                text = action.text().replace("&", "")
                if menu.objectName() == "trainingMenu":  # "Why √dₖ" alone does not say where it leads
                    text = f"Training lab: {text}"
                rows.append((" or ".join(dict.fromkeys(found)), text))
    return rows + EXTRA_SHORTCUTS


def shortcuts_dialog(parent: QtWidgets.QWidget, rows: list[tuple[str, str]]) -> QtWidgets.QDialog:
    """A non-modal table of ``rows`` (keys, what they do), shown at once, as wide as its longest row
    (within the screen: the columns' text is never cut)."""
    dialog = QtWidgets.QDialog(parent)
    dialog.setObjectName("shortcutsDialog")
    dialog.setWindowTitle("Keyboard shortcuts")
    layout = QtWidgets.QVBoxLayout(dialog)
    table = QtWidgets.QTableWidget(len(rows), 2)
    table.setObjectName("shortcutsTable")
    table.setHorizontalHeaderLabels(["Keys", "Does"])
    for i, (found, text) in enumerate(rows):
        table.setItem(i, 0, QtWidgets.QTableWidgetItem(found))
        table.setItem(i, 1, QtWidgets.QTableWidgetItem(text))
    table.resizeColumnsToContents()
    table.horizontalHeader().setStretchLastSection(True)
    table.verticalHeader().hide()
    table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
    table.setWordWrap(False)
    layout.addWidget(table)
    close = QtWidgets.QPushButton("Close")
    close.clicked.connect(dialog.close)
    layout.addWidget(close)
    # As wide as both columns and the vertical scroll bar, as tall as the rows, both within the screen.
    margins = layout.contentsMargins()
    width = (table.columnWidth(0) + table.columnWidth(1) + table.verticalScrollBar().sizeHint().width()
             + 2 * table.frameWidth() + margins.left() + margins.right() + 4)
    height = (table.horizontalHeader().sizeHint().height() + sum(table.rowHeight(i) for i in range(len(rows)))
              + 2 * table.frameWidth() + close.sizeHint().height() + layout.spacing() + margins.top() + margins.bottom())
    free = _free_area(parent)
    dialog.resize(min(width, free.width() - 40), min(max(height, 200), free.height() - 80))
    dialog.show()
    return dialog


def _free_area(widget: QtWidgets.QWidget) -> QtCore.QRect:
    """The free area of the screen ``widget`` is on (the primary one before it is shown)."""
    screen = widget.screen() if widget is not None else None
    screen = screen or QtGui.QGuiApplication.primaryScreen()
    return screen.availableGeometry()


# Help → Getting started: the first five minutes, a step per row, each with a button that shows it.
# (title, text, button, what the button does: a key of ``_tour_actions``)
TOUR = (
    ("1. Type a sentence",
     "In the Model panel on the left, type a sentence and press Enter, or choose an Example. "
     "“Your journey starts with one step” is the lecture notes' table: its six 3-d word vectors "
     "are in the Numbers panel, and every number there can be edited.",
     "Open the journey example", "journey"),
    ("2. Look at the Attention tab",
     "It shows the three steps: scores q·k, the logits (scaled by 1/√d_k when that box is ticked), "
     "and the weights the softmax makes of them. A row is a query, a column a key; each row of weights "
     "sums to 1. The outlined row is the query: click another row to follow it, hover a cell for its "
     "formula with the numbers, and see Step by step for one query's arithmetic.",
     "Show the Attention tab", "attention"),
    ("3. Read the colours",
     "Scores and logits: blue below 0, white at 0, gold above; the colour bar gives the numbers. "
     "Weights: dark violet at 0, yellow at 1. Hatched cells are masked (the causal mask: "
     "no token looks ahead). Red hatching marks a softmax that overflowed.",
     "", ""),
    ("4. Try an idea",
     "Untick “scale by 1/√d_k” and raise d_head: the weights sharpen and the “Why divide by √d_k” "
     "plot shows why. Tick the causal mask, change the temperature, or type a value into a vector. "
     "Edit → Undo (Ctrl+Z) takes any change back.",
     "", ""),
    ("5. Go further",
     "Help → Example lecture plays a prepared lecture (F5 presents it; PageDown steps). "
     "The box at the top of the Model panel opens all-MiniLM-L6-v2, a trained model: every layer and "
     "head in Model view, and heads to silence. The Training menu opens the training lab: "
     "why √d_k, why attention, why two layers.",
     "Open the example lecture", "lecture"),
)


def _tour_actions(window) -> dict:
    """What the tour's buttons do, in ``window`` (a MainWindow)."""
    def action(name):
        found = window.findChild(QtGui.QAction, name)
        return found.trigger if found is not None else None

    return {
        "journey": lambda: window.load_preset("journey"),
        "attention": lambda: window.view_tabs.setCurrentIndex(0),
        "lecture": action("exampleLectureAction"),
    }


TOUR_SHOWN_KEY = "help/getting_started_shown"


def getting_started_first_time(window) -> QtWidgets.QDialog | None:
    """Open Getting started on the app's first start only (the settings remember it was shown);
    None afterwards. The tour is non-modal: the window is usable beside it."""
    from .. import settings as app_settings

    store = app_settings.settings()
    if store.value(TOUR_SHOWN_KEY) is not None:
        return None
    store.setValue(TOUR_SHOWN_KEY, "1")
    store.sync()
    return getting_started(window)


def getting_started(window) -> QtWidgets.QDialog:
    """Help → Getting started: a short tour of the first five minutes, non-modal beside the window,
    whole on a 1366×768 screen."""
    old = getattr(window, "getting_started_dialog", None)
    if old is not None and old.isVisible():
        old.raise_()
        old.activateWindow()
        return old
    dialog = QtWidgets.QDialog(window)
    dialog.setObjectName("gettingStartedDialog")
    dialog.setWindowTitle("Getting started")
    layout = QtWidgets.QVBoxLayout(dialog)
    layout.setSpacing(10)
    intro = QtWidgets.QLabel("Attention Studio computes self-attention live: change anything and every "
                             "heatmap follows. Five steps for the first five minutes:")
    intro.setWordWrap(True)
    layout.addWidget(intro)
    actions = _tour_actions(window)
    for title, text, button, key in TOUR:
        heading = QtWidgets.QLabel(f"<b>{title}</b>")
        layout.addWidget(heading)
        body = QtWidgets.QLabel(text)
        body.setWordWrap(True)
        body.setObjectName("tourText")
        if button and actions.get(key) is not None:
            row = QtWidgets.QHBoxLayout()
            row.addWidget(body, 1)
            go = QtWidgets.QPushButton(button)
            go.setObjectName(f"tour_{key}")
            go.clicked.connect(actions[key])
            row.addWidget(go, 0, QtCore.Qt.AlignTop)
            layout.addLayout(row)
        else:
            layout.addWidget(body)
    close = QtWidgets.QPushButton("Close")
    close.clicked.connect(dialog.close)
    layout.addWidget(close, 0, QtCore.Qt.AlignRight)
    free = _free_area(window)
    width = min(760, free.width() - 40)
    dialog.resize(width, min(dialog.heightForWidth(width) if dialog.hasHeightForWidth() else
                             layout.heightForWidth(width), free.height() - 60))
    dialog.show()
    window.getting_started_dialog = dialog
    return dialog


def about(parent: QtWidgets.QWidget) -> None:
    """The About box."""
    QtWidgets.QMessageBox.about(
        parent, "About Attention Studio",
        f"<h3>Attention Studio {__version__}</h3><p>A live playground for the attention mechanism: "
        "edit token vectors and Q/K/V weights, and watch scores, weights and outputs follow.</p>")
