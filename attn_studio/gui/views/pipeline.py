"""The step-by-step view: one query token's attention, laid out like the spreadsheet seed.

One row per step (q, every k, q·k, scaled, masked, exp, normalised, α·v,
output), one column per key token and a last column for the step's result
(Σ of the exps, the output vector z). The numbers and the words come from
:mod:`attn_studio.explain`, which reads them from the engine's result; the
view only lays them out, highlights the current step and explains it.
"""

from __future__ import annotations

import html

from PySide6 import QtCore, QtGui, QtWidgets

from ... import explain
from ..widgets import no_widen
from .pipeline_model import (  # noqa: F401 (names this view has always offered)
    CURRENT_BG, DARK_COLOURS, ERROR_BG, ERROR_FG, EXPLANATION_BG, LIGHT_COLOURS, MASKED_BG, MASKED_FG, RESULT_BG,
    PipelineModel, step_colours,
)

Qt = QtCore.Qt

MIN_POINT_SIZE = 12.0      # no tiny fonts: the view is read from the back of a lecture hall
HEADER_POINT_SIZE = 15.0
MAX_COLUMN_WIDTH = 175     # px; longer vectors wrap onto a second line (the tooltip has everything)
MIN_COLUMN_WIDTH = 70
RESIZE_COLUMNS_UP_TO = 64  # beyond this many keys, columns keep a fixed width (resizing costs time)

class _StepTable(QtWidgets.QTableView):
    """The steps' table; after a change of text size (:func:`presentation.restyle`) it fits its columns
    and rows again (``refit``), instead of taking the default widths that would elide its vectors."""

    def __init__(self, refit):
        super().__init__()
        self._refit = refit

    def restyled(self) -> None:
        """The text size changed: columns as wide and rows as tall as the steps need."""
        self._refit()


_NEXT_KEYS = (Qt.Key_Down, Qt.Key_N)
_PREV_KEYS = (Qt.Key_Up, Qt.Key_P)


class PipelineView(QtWidgets.QWidget):
    """Step-by-step attention of the selected query token and head.

    Call :meth:`render` after every studio change: it re-reads
    ``studio.state`` and ``studio.result``. ``next_step`` / ``prev_step`` (or
    Down/Up, N/P, the buttons, a click on a row) move the highlighted step.
    """

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.setObjectName("pipelineView")
        self.studio = studio
        self._current = 0
        self._natural_widths: list[int] | None = None
        self.setFocusPolicy(Qt.StrongFocus)
        font = self.font()
        if font.pointSizeF() < MIN_POINT_SIZE:
            font.setPointSizeF(MIN_POINT_SIZE)
            self.setFont(font)

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(6)

        top = QtWidgets.QHBoxLayout()
        self.header = QtWidgets.QLabel()
        self.header.setObjectName("pipelineHeader")
        self.header.setTextFormat(Qt.PlainText)
        header_font = QtGui.QFont(font)
        header_font.setPointSizeF(max(HEADER_POINT_SIZE, font.pointSizeF() + 3))
        header_font.setBold(True)
        self.header.setFont(header_font)
        # Wrap rather than widen: a long sentence must not push the window off a laptop screen.
        self.header.setWordWrap(True)
        self.header.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Preferred)
        top.addWidget(self.header, 1)
        self.prev_button = QtWidgets.QPushButton("◀ previous")
        self.prev_button.setObjectName("pipelinePrev")
        self.prev_button.setToolTip("Previous step (Up or P)")
        self.prev_button.clicked.connect(self.prev_step)
        self.next_button = QtWidgets.QPushButton("next ▶")
        self.next_button.setObjectName("pipelineNext")
        self.next_button.setToolTip("Next step (Down or N)")
        self.next_button.clicked.connect(self.next_step)
        for button in (self.prev_button, self.next_button):
            button.setFocusPolicy(Qt.NoFocus)  # keep the keyboard on the view
        self.step_label = QtWidgets.QLabel()
        self.step_label.setObjectName("pipelineStepLabel")
        top.addWidget(self.step_label)
        top.addSpacing(8)
        top.addWidget(self.prev_button)
        top.addWidget(self.next_button)
        layout.addLayout(top)

        self.explanation = QtWidgets.QLabel()
        self.explanation.setObjectName("pipelineExplanation")
        self.explanation.setTextFormat(Qt.RichText)
        self.explanation.setWordWrap(True)
        self.explanation.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.explanation.setFrameShape(QtWidgets.QFrame.StyledPanel)
        self.explanation.setMargin(6)
        self.explanation.setAutoFillBackground(True)
        self._colour_explanation()
        self.explanation.setMinimumHeight(self.explanation.fontMetrics().lineSpacing() * 3 + 16)
        no_widen(self.explanation)
        layout.addWidget(self.explanation)

        self.model = PipelineModel(self)
        self.table = _StepTable(self._fit_columns)
        self.table.setObjectName("pipelineTable")
        self.table.setModel(self.model)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.NoSelection)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        # The keyboard stays on the view (Up/Down move the step, not a cell cursor).
        self.table.setFocusPolicy(Qt.NoFocus)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.ElideRight)
        self.table.setHorizontalScrollMode(QtWidgets.QAbstractItemView.ScrollPerPixel)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QtWidgets.QHeaderView.Interactive)
        hh.setMinimumSectionSize(MIN_COLUMN_WIDTH)
        hh.setDefaultSectionSize(140)
        vh = self.table.verticalHeader()
        vh.setSectionResizeMode(QtWidgets.QHeaderView.Fixed)
        vh.setDefaultSectionSize(self._row_height())
        vh.setDefaultAlignment(Qt.AlignLeft | Qt.AlignVCenter)
        self.table.installEventFilter(self)
        self.table.clicked.connect(self._on_click)
        self.table.verticalHeader().sectionClicked.connect(self._on_click_row)
        # As tall as its nine rows, no taller: spare room goes below, not into an empty grid.
        self.table.setSizeAdjustPolicy(QtWidgets.QAbstractScrollArea.AdjustToContents)
        self.table.setSizePolicy(QtWidgets.QSizePolicy.Expanding, QtWidgets.QSizePolicy.Maximum)
        layout.addWidget(self.table)
        layout.addStretch(1)

        self.render()

    # -- rendering ------------------------------------------------------------------
    @property
    def natural_widths(self) -> list[int] | None:
        """Each column's width before narrowing for the screen (a figure has no screen to fit)."""
        return None if self._natural_widths is None else list(self._natural_widths)

    @property
    def digits(self) -> int:
        """Decimals of every number shown (the precision setting)."""
        return self.model.digits

    def set_digits(self, digits: int) -> None:
        """Write every number with ``digits`` decimals and redraw."""
        self.model.digits = int(digits)
        self.render()

    def render(self) -> None:
        """Redraw from ``studio.state`` and ``studio.result``."""
        self._colour_explanation()
        state, result = self.studio.state, self.studio.result
        head = explain.selected_head(state, result)
        query = int(state.query_index)
        steps = explain.pipeline_steps(state, result, head, query, digits=self.model.digits)
        keys = list(state.key_tokens)
        self.model.set_content(state, result, head, query, steps, keys)
        if steps:
            self._current = max(0, min(self._current, len(steps) - 1))
        else:
            self._current = 0
        self.model.set_current(self._current)
        self.header.setText(self._header_text(state, result, head, query, bool(steps)))
        self._fit_columns()
        self._show_current()

    def _header_text(self, state, result, head, query, have_steps) -> str:
        if not have_steps:
            return "No query token: type a sentence to see attention step by step"
        q_tokens = state.query_tokens
        text = f"Query “{q_tokens[query]}” ({query + 1} of {len(q_tokens)}), head {head + 1}"
        n_heads = result.weights.shape[0]
        if not state.projections:
            text += " (simplified attention: Q = K = V = X)"
        elif n_heads > 1:
            text += f" of {n_heads}"
        if state.cross:
            text += " — a target token attending to the source sentence"
        return text

    def _fit_columns(self) -> None:
        hh = self.table.horizontalHeader()
        n = self.model.columnCount()
        if n == 0:
            return
        if n - 1 <= RESIZE_COLUMNS_UP_TO:
            self.table.resizeColumnsToContents()
            least = self._least_widths()
            widths = [max(MIN_COLUMN_WIDTH, least[c], min(hh.sectionSize(c) + 16, MAX_COLUMN_WIDTH)) for c in range(n)]
            self._natural_widths = list(widths)  # what a figure uses: it has no screen to fit
            # On a small screen (a 1280×720 projector) narrow the columns so that every
            # key shows: vectors wrap onto more lines, numbers still fit. A column is never
            # narrower than its longest number: past that the table scrolls sideways with a
            # visible bar (an elided "(0.44…" tells the room nothing).
            room = self.width() - self.table.verticalHeader().width() - 2 * self.table.frameWidth() - 24
            total = sum(widths)
            if total > room > 0:
                share = room / total
                widths = [max(MIN_COLUMN_WIDTH, least[c], int(w * share)) for c, w in enumerate(widths)]
            for c, width in enumerate(widths):
                hh.resizeSection(c, width)
            self.table.resizeRowsToContents()
            vh = self.table.verticalHeader()
            for r in range(self.model.rowCount()):
                vh.resizeSection(r, max(vh.sectionSize(r) + 8, self._row_height()))
        else:
            for c in range(n):
                hh.resizeSection(c, hh.defaultSectionSize())

    def _least_widths(self) -> list[int]:
        """Each column's least width: its longest unbreakable piece of text (a number with its comma,
        a bracket) and its header, in the bold font of the highlighted step, with the cell's margins.

        Vectors wrap at their spaces, so a column this wide shows every number whole, however many
        lines it takes.
        """
        font = QtGui.QFont(self.table.font())
        font.setBold(True)  # the highlighted step is bold, and any step may be highlighted
        advance = QtGui.QFontMetricsF(font).horizontalAdvance
        style = self.table.style()
        # The delegate's text margin on each side (QStyle: the focus frame's margin + 1), the grid line,
        # and a pixel for rounding.
        margins = 2 * (style.pixelMetric(QtWidgets.QStyle.PM_FocusFrameHMargin, None, self.table) + 1) + 2
        hh = self.table.horizontalHeader()
        widths = []
        for c in range(self.model.columnCount()):
            pieces = {piece for r in range(self.model.rowCount()) for piece in self.model.cell_text(r, c).split()}
            widest = max((advance(piece) for piece in pieces), default=0.0)
            widths.append(max(int(widest + 0.999) + margins, hh.sectionSizeHint(c)))
        return widths

    def _colour_explanation(self) -> None:
        colours = step_colours()
        palette = self.explanation.palette()
        if palette.color(QtGui.QPalette.Window) != colours["explanation"]:
            palette.setColor(QtGui.QPalette.Window, colours["explanation"])
            palette.setColor(QtGui.QPalette.WindowText, colours["text"])
            self.explanation.setPalette(palette)

    def changeEvent(self, event):
        super().changeEvent(event)
        if event.type() in (QtCore.QEvent.PaletteChange, QtCore.QEvent.ApplicationPaletteChange):
            self._colour_explanation()  # the theme changed
            self.table.viewport().update()

    def resizeEvent(self, event):
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width() and self.model.columnCount():
            self._fit_columns()

    def _row_height(self) -> int:
        return self.table.fontMetrics().lineSpacing() + 14

    def _show_current(self) -> None:
        steps = self.model.steps
        self.prev_button.setEnabled(bool(steps) and self._current > 0)
        self.next_button.setEnabled(bool(steps) and self._current < len(steps) - 1)
        if not steps:
            self.explanation.setText("")
            self.step_label.setText("")
            return
        step = steps[self._current]
        self.explanation.setText(
            f"<b>Step {self._current + 1}: {html.escape(step.title)}</b> — {html.escape(step.explanation)}")
        self.step_label.setText(f"step {self._current + 1} of {len(steps)}")
        # Bring the step's row into view without scrolling sideways.
        column = max(self.table.columnAt(0), 0)
        self.table.scrollTo(self.model.index(self._current, column), QtWidgets.QAbstractItemView.EnsureVisible)

    # -- the current step -------------------------------------------------------------
    @property
    def current_step(self) -> int:
        """Index (0-based) of the highlighted step."""
        return self._current

    @property
    def steps(self) -> list:
        """The :class:`~attn_studio.explain.Step` rows currently shown."""
        return self.model.steps

    def set_current_step(self, index: int) -> None:
        """Highlight step ``index`` (clamped to the steps that exist)."""
        n = self.model.rowCount()
        index = max(0, min(int(index), n - 1)) if n else 0
        if index != self._current:
            self._current = index
            self.model.set_current(index)
        self._show_current()

    def keep_step(self, index: int) -> None:
        """Highlight step ``index`` once next drawn (clamped then to the steps that exist): a view not
        drawn for the current numbers is not drawn for this."""
        self._current = max(0, int(index))

    def next_step(self) -> None:
        """Move the highlight one step down the chain."""
        self.set_current_step(self._current + 1)

    def prev_step(self) -> None:
        """Move the highlight one step up the chain."""
        self.set_current_step(self._current - 1)

    def _on_click(self, index) -> None:
        self.setFocus(Qt.MouseFocusReason)
        self.set_current_step(index.row())

    def _on_click_row(self, row: int) -> None:
        self.setFocus(Qt.MouseFocusReason)
        self.set_current_step(row)

    # -- keyboard ----------------------------------------------------------------------
    def _handle_key(self, event) -> bool:
        if event.modifiers() & (Qt.ControlModifier | Qt.AltModifier | Qt.MetaModifier):
            return False
        if event.key() in _NEXT_KEYS:
            self.next_step()
            return True
        if event.key() in _PREV_KEYS:
            self.prev_step()
            return True
        return False

    def keyPressEvent(self, event):
        if not self._handle_key(event):
            super().keyPressEvent(event)

    def eventFilter(self, obj, event):
        if obj is self.table and event.type() == QtCore.QEvent.KeyPress and self._handle_key(event):
            return True
        return super().eventFilter(obj, event)
