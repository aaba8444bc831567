"""The Numbers panel: the editable tables (embeddings, weights, output), its note and message line."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ...explain import table_cell_tooltip
from ..widgets import MessageLabel
from .tables import MatrixModel, MatrixTable

TAB_TIPS = {
    "embeddings": "Each token's vector; edit a cell to change that word everywhere it appears",
    "w_q": "W_Q of the chosen head: q = x·W_Q", "w_k": "W_K of the chosen head: k = x·W_K",
    "w_v": "W_V of the chosen head: v = x·W_V",
    "w_1": "Additive score: W_1 acts on the query", "w_2": "Additive score: W_2 acts on the key",
    "v_a": "Additive score: v_a weighs the tanh features, one row per head",
    "w_o": "W_O mixes the concatenated heads into the output",
    "output": "The output: one context vector per query token (read only)",
}
ADDITIVE_TABLES = ("w_1", "w_2", "v_a")
PROJECTION_TABLES = ("w_q", "w_k", "w_v", "w_o")


def _dims(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i + 1}" for i in range(n)]


class NumbersPanel(QtWidgets.QWidget):
    """Every matrix of the model as an editable table, one tab each.

    ``models[key]`` and ``tables[key]`` (keys as in ``TAB_TIPS``) are the
    table models and views; ``message_label`` says why an edit was refused.
    ``table_menu_requested(key, pos)`` asks for a table's right-click menu.
    """

    table_menu_requested = QtCore.Signal(str, QtCore.QPoint)

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.setObjectName("numbersPanel")
        self.studio = studio
        self.models: dict[str, MatrixModel] = {}
        self.tables: dict[str, MatrixTable] = {}
        self.table_tabs = QtWidgets.QTabWidget()
        self.table_tabs.setObjectName("tableTabs")
        for key, object_name, title, read, rows, cols, write, block in self._specs():
            tooltip = None if key == "output" else (
                lambda r, c, digits, key=key: table_cell_tooltip(self.studio, key, r, c, digits=digits))
            # Every table reads the studio's state (or its result, installed with it): one read per state.
            model = MatrixModel(title, read, rows, cols, write, tooltip=tooltip, write_block=block,
                                version=lambda: self.studio.state, parent=self)
            model.refused.connect(self.show_message)
            model.accepted.connect(self.clear_message)
            table = MatrixTable(model, object_name)
            table.setContextMenuPolicy(QtCore.Qt.CustomContextMenu)
            table.customContextMenuRequested.connect(
                lambda pos, key=key: self.table_menu_requested.emit(key, pos))
            self.models[key], self.tables[key] = model, table
            self.table_tabs.setTabToolTip(self.table_tabs.addTab(table, title), TAB_TIPS[key])

        self._held = False  # see hold()
        self._shown_once = False  # before the panel is first shown (a window built for a script), every refresh is done
        self._unread = False  # a refresh was left for when the panel is shown again
        # A trained model fixes some tables (disabled, with a note of its own): refresh leaves them so, rather
        # than enable them and have them disabled again after every edit (the dock was repainted each time).
        self.fixed: frozenset = frozenset()
        self.fixed_note: str | None = None
        self._refresh_timer = QtCore.QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(0)
        self._refresh_timer.timeout.connect(self._refresh_next)
        self.table_tabs.currentChanged.connect(lambda i: self.current_table().model().refresh_if_stale())

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.table_note = QtWidgets.QLabel()
        self.table_note.setObjectName("tableNote")
        self.table_note.setWordWrap(True)
        layout.addWidget(self.table_note)
        layout.addWidget(self.table_tabs, 1)
        self.message_label = MessageLabel("messageLabel")  # wraps anywhere, never widens the panel
        self.message_label.setStyleSheet("color: #b00020; font-weight: bold;")
        self.message_label.hide()
        # Here on its own; the window puts it above its views, where it is seen on every tab.
        self.message_label.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(self.message_label)

    def _specs(self):
        """(key, objectName, title, read, row labels, column labels, write cell, write block) per table."""
        studio = self.studio
        s = lambda: studio.state  # noqa: E731

        def words():
            st = s()
            return st.key_tokens + (st.target_tokens if st.cross else [])

        def rows():
            st = s()
            return st.key_tokens + ([f"→ {t}" for t in st.target_tokens] if st.cross else [])

        specs = [("embeddings", "embeddingTable", "Embeddings X", lambda: studio.embeddings(words()), rows,
                  lambda: _dims("d", s().d_model),
                  lambda r, c, text: studio.set_embedding(words()[r], c, text),
                  lambda r, c, block: studio.set_embedding_block(words()[r:], c, block))]
        # W_Q, W_K, W_V exist for every head; W_1, W_2 for the computed heads only.
        for key, letter in (("w_q", "q"), ("w_k", "k"), ("w_v", "v")):
            specs.append((key, f"w{letter.upper()}Table", f"W{letter.upper()}",
                          lambda key=key: getattr(s(), key)[s().head_index],
                          lambda: _dims("x", s().d_model), lambda letter=letter: _dims(letter, s().d_head),
                          lambda r, c, t, key=key: studio.set_weight(key, s().head_index, r, c, t),
                          lambda r, c, b, key=key: studio.set_block(key, s().head_index, r, c, b)))
        for key, title, prefix in (("w_1", "W1", "q"), ("w_2", "W2", "k")):
            specs.append((key, f"w{title[1]}Table", title, lambda key=key: getattr(s(), key)[s().shown_head],
                          lambda p=prefix: _dims(p, s().d_k), lambda: _dims("a", s().d_k),
                          lambda r, c, t, key=key: studio.set_weight(key, s().shown_head, r, c, t),
                          lambda r, c, b, key=key: studio.set_block(key, s().shown_head, r, c, b)))
        specs.append(("v_a", "vATable", "va", lambda: s().v_a,
                      lambda: [f"head {h + 1}" for h in range(s().v_a.shape[0])], lambda: _dims("a", s().d_k),
                      lambda r, c, t: studio.set_weight("v_a", r, 0, c, t),
                      lambda r, c, b: studio.set_block("v_a", s().head_index, r, c, b)))
        specs.append(("w_o", "wOTable", "WO", lambda: s().w_o,
                      lambda: [f"h{h + 1}·v{j + 1}" for h in range(s().heads) for j in range(s().d_head)],
                      lambda: _dims("out", s().d_model),
                      lambda r, c, t: studio.set_weight("w_o", 0, r, c, t),
                      lambda r, c, b: studio.set_block("w_o", s().head_index, r, c, b)))
        specs.append(("output", "outputTable", "Output", lambda: studio.result.output, lambda: s().query_tokens,
                      lambda: _dims("o", studio.result.output.shape[1]), None, None))
        return specs

    # -- messages ---------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        """Show why an edit was refused (it stays until the next accepted edit)."""
        self.message_label.setText(text)
        self.message_label.show()

    def clear_message(self) -> None:
        if self.message_label.isVisible():
            self.message_label.hide()
            self.message_label.setText("")

    # -- following the studio -----------------------------------------------------------
    def refreshing(self) -> bool:
        """True while hidden tables wait to be refreshed (one per event-loop turn) or a table's columns to
        be fitted; never while held (nothing is refreshed until released)."""
        return not self._held and not self._unread and (any(getattr(m, "_stale", False) for m in self.models.values())
                                   or any(t.fitting() for t in self.tables.values()))

    def showEvent(self, event):
        super().showEvent(event)
        self._shown_once = True
        if self._unread:
            self.refresh()

    def hold(self, held: bool) -> None:
        """Hold the tables while no one can see them (the window under the stage, on one screen): a change
        only marks them to be read again, and released they are read at once (the others a table per turn)."""
        if held != self._held:
            self._held = held
            if not held:
                self.refresh()

    def finish_refresh(self) -> None:
        """Refresh every table still waiting, now (held, they wait until released: see hold())."""
        if self._held:
            return
        if self._unread:
            self.refresh(force=True)
        self._refresh_timer.stop()
        for model in self.models.values():
            model.refresh_if_stale()
        for table in self.tables.values():
            table.finish_fitting()

    def _refresh_next(self) -> None:
        stale = [m for m in self.models.values() if getattr(m, "_stale", False)]
        if stale:
            stale[0].refresh()
        if len(stale) > 1:
            self._refresh_timer.start()

    def refresh(self, force: bool = False) -> None:
        """Re-read every table and show only the tables the model uses (``force``: also while no one sees them)."""
        if self._held or (self._shown_once and not self.isVisible() and not force):
            # No one sees the tables (held under the stage, or the panel stepped aside or closed): read
            # again when they are shown (2-3 ms of every sentence typed on a trained model otherwise).
            for model in self.models.values():
                model.mark_stale()
            self._unread = not self._held
            return
        self._unread = False
        st = self.studio.state
        current = self.table_tabs.currentWidget()
        for key, model in self.models.items():
            if self.tables[key] is not current and model.needs_reset():
                # A hidden table of another shape (a trained model's 384 rows) is reset a table per
                # event-loop turn, or when shown: nine resets at once froze the window.
                model.mark_stale()
                self._refresh_timer.start()
            else:
                model.refresh()
        keys = list(self.models)
        additive = st.score == "additive"
        for key in ADDITIVE_TABLES:
            if self.table_tabs.isTabVisible(keys.index(key)) != additive:
                self.table_tabs.setTabVisible(keys.index(key), additive)
        # Without projections there are no weights to edit.
        for key in PROJECTION_TABLES:
            enabled = st.projections and key not in self.fixed
            if self.tables[key].isEnabled() != enabled:
                self.tables[key].setEnabled(enabled)
        note = self.fixed_note or (
            "Projections are off: Q = K = V = X (simplified attention), so the weight tables are not used."
            if not st.projections else
            f"W_Q, W_K, W_V of head {st.head_index + 1}. Double-click or type in a cell to edit it.")
        if self.table_note.text() != note:
            self.table_note.setText(note)

    # -- copy and paste -------------------------------------------------------------------
    def focused_table(self) -> MatrixTable | None:
        """The table that has the keyboard focus (or holds the widget that has it), if any."""
        widget = QtWidgets.QApplication.focusWidget()
        while widget is not None and not isinstance(widget, MatrixTable):
            widget = widget.parentWidget()
        return widget

    def current_table(self) -> MatrixTable:
        """The table of the tab on top."""
        return self.tables[list(self.models)[self.table_tabs.currentIndex()]]

    def copy(self) -> bool:
        """Copy the selected cells of the focused table; False when no table has the focus."""
        table = self.focused_table()
        return table is not None and table.copy_selection()

    def paste(self) -> bool:
        """Paste a block of numbers into the focused table (else the one on top) at its current cell."""
        return (self.focused_table() or self.current_table()).paste()
