"""The heatmap panel: raw scores -> logits (scaled when scaling is on) -> weights of the chosen head (in
a row, or two above two where a row is too narrow for the cells' values), a head bar that chooses the
head, every head in an even grid in the height left under them, and the formula of a clicked cell.

The view holds the stages, the header and the clicks; its parts, each with its own state, are in modules
of their own: the heads' grid and head bar (``heatmap_heads.HeadsGrid``), the drawing a heatmap per step
(``heatmap_drawing.StagedDrawing``), the layout for a sentence being computed (``heatmap_coming``), the
pinned formula (``heatmap_formula``) and how the room is shared (``heatmap_sizing``)."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ...explain import cell_tooltip, stable_weight_tooltip
from ...formatting import DEFAULT_DIGITS
from .highlight import highlight_for
from .heatmap import SCORES_CMAP, WEIGHTS_CMAP, Heatmap, relabel_bar
from .heatmap_sizing import (
    ALL_LABELS_UP_TO, GRID_PEEK, MIN_HEAD_PX, MIN_STAGE_PX, READABLE_VALUE_PX, SHORT_VIEW_PX, SMALL_SCREEN_VIEW_PX,
    StageSizing,
)
from .heatmap_parts import Prepared, _levels, heads_grid_shape
from .heatmap_coming import ComingTokens
from .heatmap_formula import PinnedFormula
from .heatmap_heads import HeadsGrid
from .heatmap_drawing import LONG_INPUT, StagedDrawing
from .heatmap_canvas import TOOLTIP_MS, HeatmapCanvas
from ..widgets import caption_label, view_layout

# Importable from here too, as before the panel's parts had modules of their own.
__all__ = ["HeatmapView", "HeatmapCanvas", "Prepared", "TOOLTIP_MS", "LONG_INPUT", "ALL_LABELS_UP_TO", "GRID_PEEK",
           "MIN_HEAD_PX", "MIN_STAGE_PX", "READABLE_VALUE_PX", "SHORT_VIEW_PX", "SMALL_SCREEN_VIEW_PX", "_levels",
           "heads_grid_shape"]


class HeatmapView(StageSizing, QtWidgets.QWidget):
    """Every attention matrix of the current state, drawn from ``studio.result``.

    ``stages`` holds the chosen head's ``scores``, ``logits`` and ``weights``
    heatmaps; ``head_maps`` one weights heatmap per head (shown when there is
    more than one head). Clicking a row selects that query token everywhere.
    """

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.setObjectName("heatmapView")
        self.studio = studio
        self.setFocusPolicy(QtCore.Qt.ClickFocus)  # Esc clears the pointer
        top = view_layout(self, spacing=2)
        self.header = caption_label("heatmapHeader")
        self.header.setAlignment(QtCore.Qt.AlignCenter)
        self.header.setToolTip("Click a row to follow another token; click a cell to keep its formula.")
        header_row = QtWidgets.QHBoxLayout()
        header_row.setSpacing(6)
        top.addLayout(header_row)
        self.heads = HeadsGrid(self)  # the heads' maps, their grid and the head bar
        header_row.addWidget(self.heads.title)
        header_row.addWidget(self.heads.bar)
        header_row.addWidget(self.header, 1)
        # The stages scroll only when the window is too small for their labels (a 1024 × 768 screen
        # zoomed in), rather than thin or squash them; the heads' grid has a place of its own below.
        self.scroll = QtWidgets.QScrollArea()
        self.scroll.setObjectName("heatmapScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QtWidgets.QFrame.NoFrame)
        body = QtWidgets.QWidget()
        body.setAutoFillBackground(False)
        self.scroll.setWidget(body)
        top.addWidget(self.scroll, 1)
        outer = QtWidgets.QVBoxLayout(body)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(2)
        # The stages stand in a row (scores → logits → weights); where the row is too narrow for the
        # cells' values and the view tall enough, two above two (the scores and logits, then the
        # weights): an 11-token sentence at 1366 × 768 shows every value so.
        self._stage_grid = QtWidgets.QGridLayout()
        self._stage_grid.setSpacing(0)
        outer.addLayout(self._stage_grid, 1)
        self.wrapped = False  # two above two (True) or a row
        self.stages = {
            "scores": Heatmap("raw scores q·k", SCORES_CMAP),
            "logits": Heatmap("logits", SCORES_CMAP),
            "weights": Heatmap("weights softmax", WEIGHTS_CMAP),
            # Shown only with the naive or sum softmax: what the stable one gives.
            "stable": Heatmap("stable softmax (compare)", WEIGHTS_CMAP),
        }
        self.canvases: dict[str, HeatmapCanvas] = {}
        for key, heatmap in self.stages.items():
            # Every heatmap carries its own row labels: equal widths, and each reads alone.
            heatmap.show_row_labels(True)
            canvas = HeatmapCanvas(heatmap, with_bar=key != "stable")  # stable shares the weights' 0..1 bar
            canvas.setMinimumHeight(MIN_STAGE_PX)
            self.canvases[key] = canvas
            canvas.scene().sigMouseClicked.connect(self._on_click)
            canvas.tooltip_provider = self.tooltip_for
        self._place_stages(False)
        self.scroll.viewport().installEventFilter(self)
        self.stage_bars = {key: c.bar for key, c in self.canvases.items() if c.bar is not None}
        self.canvases["stable"].hide()

        top.addWidget(self.heads.scroll)  # its own scrolled place under the stages

        # A clicked cell's formula stays under the heatmaps, large and selectable (PinnedFormula).
        self.formula = PinnedFormula(self)
        self.formula_panel = self.formula.panel
        top.addWidget(self.formula_panel)
        self._stage_min: dict[str, tuple[int, int, int]] = {}  # each stage's least size for its labels, its title
        self._wrapped_min: dict[str, int] = {}  # each stage's least height two stages across
        self._chrome: dict[str, tuple[int, int, int]] = {}  # each stage's room around its cells (_values_px)
        self._shape_tokens = (0, 0)  # the query and key tokens the stages were last fitted for
        self._coming_chars: dict[str, float] = {}  # the widest value of each stage about to be drawn (values_coming)
        self._title_room = 0  # the rows' title's width, once measured
        # A zoom step changes the labels' font: the stages' least sizes are measured again once the
        # axes have it (restyle() gives it to them after the widgets' font, in the same turn).
        self._refit_timer = QtCore.QTimer(self)
        self._refit_timer.setSingleShot(True)
        self._refit_timer.setInterval(0)
        self._refit_timer.timeout.connect(self._refit_stages)
        self._show_pinned()

        self.highlight = highlight_for(studio)
        self.highlight.changed.connect(self._apply_highlight)
        self.digits = DEFAULT_DIGITS  # decimals in tooltips (cells keep their own, shorter ones)
        self.drawing = StagedDrawing(self)  # each heatmap drawn in a step of its own
        self.coming = ComingTokens(self)  # laid out for a trained model's sentence while it is computed

    def expect(self, state) -> bool:
        """A change being computed brings ``state``'s tokens: lay the heatmaps out for them now, held
        unpainted until its numbers are drawn (None: nothing comes after all, back to what is shown)."""
        if state is None:
            self.coming.drop()
            return False
        return self.coming.expect(state)

    def set_digits(self, digits: int):
        """Write cell values, tooltips and the pinned formula with ``digits`` decimals (the precision setting)."""
        self.digits = int(digits)
        for canvas in list(self.canvases.values()) + self.head_canvases:
            canvas.digits = self.digits
            canvas.heatmap.set_digits(self.digits)
            relabel_bar(canvas.bar, self.digits)
        self._show_pinned()

    # -- the heads' grid (HeadsGrid): its parts, by the names the window, figures and tests read --------
    @property
    def heads_shown(self) -> int:
        """How many per-head heatmaps are laid out (0 with one head; -1 before the first render)."""
        return self.heads.shown

    _heads_shown = heads_shown  # its name before the heads had a part of their own

    @property
    def head_maps(self) -> list[Heatmap]:
        """One weights heatmap per head built so far (the first ``heads_shown`` laid out)."""
        return self.heads.maps

    @property
    def head_canvases(self) -> list[HeatmapCanvas]:
        """The canvases of ``head_maps``."""
        return self.heads.canvases

    @property
    def grid_shape(self) -> tuple[int, int]:
        """(rows, columns) of the heads' grid."""
        return self.heads.shape

    @property
    def head_bar(self) -> QtWidgets.QTabBar:
        """The head bar: one tab per head, the shown head's current."""
        return self.heads.bar

    @property
    def heads_widget(self) -> QtWidgets.QWidget:
        """The heads' grid."""
        return self.heads.widget

    @property
    def heads_scroll(self) -> QtWidgets.QScrollArea:
        """The heads' grid's scrolled place under the stages."""
        return self.heads.scroll

    # -- rendering -----------------------------------------------------------
    def _heatmaps(self):
        return list(self.stages.values()) + self.head_maps[: max(self.heads_shown, 0)]

    def prepare(self, state, result) -> Prepared:
        """The pictures :meth:`render_steps` will draw of ``result``, made now on any thread
        (:meth:`StagedDrawing.prepare <.heatmap_drawing.StagedDrawing.prepare>`)."""
        return self.drawing.prepare(state, result)

    def use_prepared(self, prepared: Prepared | None) -> None:
        """Draw ``prepared`` (:meth:`prepare`) when its result is the one shown; None forgets it."""
        self.drawing.use(prepared)

    @property
    def _prepared(self) -> Prepared | None:
        return self.drawing.prepared

    def render(self):
        """Redraw from the studio's current state and result."""
        for _ in self.render_steps():
            pass

    def render_steps(self, source=None):
        """:meth:`render` one heatmap at a time: a generator that draws the next heatmap each time it is
        advanced (:meth:`StagedDrawing.steps <.heatmap_drawing.StagedDrawing.steps>`); ``source``: a
        (state, result) computed and not installed yet, drawn early."""
        return self.drawing.steps(source)

    def prepare_paint(self) -> None:
        """Ready the heatmaps drawn in the last step for their paint (the window's stepped drawing calls
        this once they are laid out)."""
        self.drawing.prepare_paint()

    def changeEvent(self, event):
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.FontChange:
            self._refit_timer.start()

    # -- interaction -----------------------------------------------------------
    def tooltip_for(self, heatmap: Heatmap, i: int, j: int) -> str:
        """The filled-in formula of cell (query ``i``, key ``j``) of ``heatmap``."""
        state, result = self.studio.state, self.studio.result
        head = state.shown_head
        if heatmap in self.head_maps:
            return cell_tooltip(state, result, "weights", self.head_maps.index(heatmap), i, j, digits=self.digits)
        stage = next(key for key, hm in self.stages.items() if hm is heatmap)
        if stage == "stable":
            return stable_weight_tooltip(state, result, self.studio.weights_with("stable"), head, i, j,
                                         digits=self.digits)
        return cell_tooltip(state, result, stage, head, i, j, digits=self.digits)

    def figure_widget(self) -> QtWidgets.QWidget:
        """The heatmaps alone, whole (also the parts scrolled out of sight): what a figure shows."""
        return self.scroll.widget()

    def heatmap_for(self, key: str) -> Heatmap:
        """The heatmap called ``key``: "scores", "logits", "weights", "stable" or "head N" (1-based)."""
        if key.startswith("head "):
            return self.head_maps[int(key.split()[1]) - 1]
        return self.stages[key]

    def _key_of(self, heatmap: Heatmap) -> str:
        if heatmap in self.head_maps:
            return f"head {self.head_maps.index(heatmap) + 1}"
        return next(key for key, hm in self.stages.items() if hm is heatmap)

    @property
    def pinned(self) -> tuple[str, int, int] | None:
        """(heatmap key, query, key) of the cell whose formula is pinned, or None."""
        return self.formula.pinned

    @pinned.setter
    def pinned(self, cell) -> None:
        self.formula.pinned = cell

    def formula_text(self) -> str:
        """What the formula panel shows."""
        return self.formula.text()

    def pin_formula(self, key: str, i: int, j: int) -> None:
        """Keep the formula of cell (query ``i``, key ``j``) of heatmap ``key`` in the formula panel."""
        self.formula.pin(key, i, j)
        for hm in self.head_maps[: max(self.heads_shown, 0)]:
            self.heads.keep_labels(hm)

    def _show_pinned(self) -> None:
        self.formula.show()

    def _apply_highlight(self) -> None:
        for hm in self.stages.values():
            hm.set_highlight(self.highlight.row, self.highlight.col)
        for hm in self.head_maps:
            hm.set_highlight(self.highlight.row, self.highlight.col)
            self.heads.keep_labels(hm)

    def resizeEvent(self, event):
        super().resizeEvent(event)
        if getattr(self, "_small", None) is not None and self._small != self._small_screen():
            self._refit_timer.start()  # the labels' floor changes with the room: their least sizes too
        self._size_stages()
        self._size_heads()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.scroll.viewport() and event.type() == QtCore.QEvent.Resize:
            self._size_stages()  # the grid took or gave back height: the stages follow
            # Much wider or narrower (the docks stepped aside or came back): whether the column labels
            # stand slanted or upright, and so the stages' least height, is measured again.
            if abs(event.size().width() - event.oldSize().width()) > 20:
                self._refit_timer.start()
        return False

    def keyPressEvent(self, event):
        if event.key() == QtCore.Qt.Key_Escape and self.highlight.active:
            self.highlight.clear()
            event.accept()
            return
        super().keyPressEvent(event)

    def _on_click(self, event):
        if event.button() != QtCore.Qt.LeftButton:
            return
        for hm in self._heatmaps():
            if hm.plot.scene() is None or hm.plot.scene() is not self.sender():
                continue
            self.setFocus(QtCore.Qt.MouseFocusReason)
            cell = hm.cell_at(event.scenePos())
            if cell is not None:
                self.pin_formula(self._key_of(hm), *cell)
                self.highlight.set(None, cell[1])  # the row is outlined as the query already
                changes = {"query": cell[0]}
                if hm in self.head_maps:
                    changes["head"] = self.head_maps.index(hm)
                self.studio.select(**changes)
                event.accept()
                return
            hit = hm.label_hit(event.scenePos())
            if hit is not None:
                kind, index = hit
                self.highlight.set(index if kind == "row" else None, index if kind == "col" else None)
            else:
                self.highlight.clear()
            event.accept()
            return
