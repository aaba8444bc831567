"""The step view on the stage of Present: one step at a time, its numbers whole at the stage's precision,
a window of the keys around the query where they do not all fit, the step's explanation under them."""

from __future__ import annotations

import html

from PySide6 import QtCore, QtGui, QtWidgets

from ... import explain
from .basics import _font
from .stage import token_window


class StageSteps:
    """The step view on the stage of ``present`` (:class:`~.present.Present`): ``table`` and ``explanation``,
    the step's numbers and words as the stage shows them (None before the step view is first shown)."""

    def __init__(self, present):
        self.present = present
        self.table: QtWidgets.QTableWidget | None = None
        self.explanation: QtWidgets.QLabel | None = None

    def render(self, s: dict) -> None:
        """The step view's current step on the stage: its numbers at the stage's precision, a window of the
        keys around the query where they do not all fit, its explanation under them."""
        p = self.present
        stage, w = p.stage, p.window
        pipe = w.pipeline_view
        w.render_view(pipe)
        model = pipe.model
        steps = model.rowCount()
        current = min(pipe.current_step, max(steps - 1, 0))
        step_name = str(model.headerData(current, QtCore.Qt.Vertical, QtCore.Qt.DisplayRole) or "")
        name = " ".join(step_name.replace("▶", "").split())
        name = name.split(". ", 1)[1] if name[:1].isdigit() and ". " in name else name
        stage.set_title(f"Step {current + 1} of {steps}: {name}")
        stage.set_caption(" ")
        table = QtWidgets.QTableWidget()
        table.setObjectName("presentSteps")
        table.fixed = True
        keys = model.columnCount()
        table.setColumnCount(1)
        table.setHorizontalHeaderLabels([" "])
        table.horizontalHeader().hide()
        table.setWordWrap(True)
        table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        table.setSelectionMode(QtWidgets.QAbstractItemView.NoSelection)
        table.setFocusPolicy(QtCore.Qt.NoFocus)
        table.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        table.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        table.setTextElideMode(QtCore.Qt.ElideNone)
        label_font, value_font = _font(s["label"]), _font(s["value"])
        table.verticalHeader().setFont(label_font)
        table.setFont(value_font)
        labels, texts = [], []
        # The step's numbers at the stage's precision (the window's table writes the window's).
        state, result = w.studio.state, w.studio.result
        steps_here = explain.pipeline_steps(state, result, explain.selected_head(state, result),
                                            int(state.query_index), digits=p.figures.stage_digits())
        step = steps_here[current] if current < len(steps_here) else None
        for c in range(keys):
            header = model.headerData(c, QtCore.Qt.Horizontal, QtCore.Qt.DisplayRole)
            labels.append(" ".join(str(header or "").split()))
            if step is None:
                texts.append(str(model.data(model.index(current, c), QtCore.Qt.DisplayRole) or ""))
            else:
                texts.append(step.result_text() if c == keys - 1 else step.cell_text(c))
        if len(set(texts[:-1])) == 1 and not texts[-1]:
            # One vector for every key (the query q): shown once, not once per key.
            labels, texts = [labels[0] if len(labels) == 1 else step_name.split("“")[-1].rstrip("”") or " "], texts[:1]
            keys = 1
        elif texts and not texts[-1]:
            labels, texts = labels[:-1], texts[:-1]  # no result at this step
            keys = len(texts)
        room = stage.body_size()
        # The step's explanation in words (the window's step view says the same), under its numbers.
        explanation = QtWidgets.QLabel()
        explanation.setObjectName("presentStepExplanation")
        explanation.setTextFormat(QtCore.Qt.RichText)
        explanation.setWordWrap(True)
        explanation.setFont(_font(s["caption"]))
        if step is not None:  # its numbers at the stage's precision too
            explanation.setText(html.escape(step.explanation))
        else:
            text = pipe.explanation.text()
            explanation.setText(text.split("</b> — ", 1)[1] if "</b> — " in text else text)
        explanation_h = explanation.heightForWidth(room.width() - 8) if explanation.text() else 0
        room = QtCore.QSize(room.width(), max(room.height() - explanation_h - 12, 60))
        value_metrics = QtGui.QFontMetrics(value_font)
        label_w = max((QtGui.QFontMetrics(label_font).horizontalAdvance(t) for t in labels), default=40) + 24
        col_w = min(max((value_metrics.horizontalAdvance(t) for t in texts), default=80) + 30,
                    room.width() - label_w - 8)
        row_h = QtGui.QFontMetrics(label_font).height() + 10
        heights = []
        for t in texts:
            box = value_metrics.boundingRect(QtCore.QRect(0, 0, col_w - 20, 10_000), int(QtCore.Qt.TextWordWrap), t)
            heights.append(max(row_h, box.height() + 10))
        # A window of the keys around the query where they do not all fit.
        q = w.studio.state.query_index
        fit, total = 0, 0
        start, stop = 0, keys
        if sum(heights) > room.height():
            fit = max(1, int(room.height() // max(max(heights), 1)))
            start, stop = token_window(keys, fit, q)
        table.setRowCount(stop - start)
        table.setVerticalHeaderLabels(labels[start:stop])
        for r, c in enumerate(range(start, stop)):
            item = QtWidgets.QTableWidgetItem(texts[c])
            item.setTextAlignment(QtCore.Qt.AlignLeft | QtCore.Qt.AlignVCenter)
            table.setItem(r, 0, item)
            table.setRowHeight(r, heights[c])
            total += heights[c]
        table.setColumnWidth(0, col_w)
        table.verticalHeader().setFixedWidth(label_w)
        table.setFixedSize(label_w + col_w + 4, total + 4)
        page = QtWidgets.QWidget()
        page.fixed = True
        column = QtWidgets.QVBoxLayout(page)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(12)
        column.addWidget(table, 0, QtCore.Qt.AlignHCenter)
        explanation.setFixedSize(room.width() - 8, explanation_h)
        column.addWidget(explanation, 0, QtCore.Qt.AlignHCenter)
        page.setFixedSize(room.width(), total + 4 + 12 + explanation_h)
        stage.set_content(page)
        self.table = table
        self.explanation = explanation
        p.pages = steps
        note = f"keys {start + 1}–{stop} of {keys} · " if (start, stop) != (0, keys) else ""
        stage.set_caption(f"{note}← → step · ↑ ↓ query · Esc leaves")
