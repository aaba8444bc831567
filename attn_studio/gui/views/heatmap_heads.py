"""The heatmap panel's heads: one weights map per head in an even grid, in a scrolled place of its own under
the stages, and the head bar beside the header (one tab per head) that chooses the head the stages show.

The maps are built one at a time (a dozen plots at once would freeze the window), laid out hidden and
shown as the drawing gives each its numbers (:meth:`~.heatmap_view.HeatmapView.render_steps`), so that
heads appearing paint one per step. How tall the grid's place is, the view works out with the stages'
room (:meth:`~.heatmap_sizing.StageSizing._size_heads`); :meth:`HeadsGrid.fit` gives the grid that height.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from .. import presentation
from .heatmap import WEIGHTS_CMAP, Heatmap
from .heatmap_canvas import HeatmapCanvas
from .heatmap_parts import heads_grid_shape
from .heatmap_sizing import GRID_PEEK, MIN_HEAD_PX


class HeadsGrid:
    """Part of a :class:`~.heatmap_view.HeatmapView` (``view``): ``maps`` and ``canvases`` one per head
    built so far, ``shown`` how many are laid out (0 with one head, -1 before the first layout), ``shape``
    the grid's (rows, columns); ``widget`` the grid in its scrolled place ``scroll``; ``bar`` the head
    bar and ``title`` its label, for the view's header row."""

    def __init__(self, view):
        self.view = view
        # One tab per head: the chosen head's scores → logits → weights, one click away for every head
        # (the heads' grid below needs more height than a projector has).
        bar = self.bar = QtWidgets.QTabBar()
        bar.setObjectName("headBar")
        bar.setDocumentMode(True)
        bar.setExpanding(False)
        bar.setUsesScrollButtons(True)
        bar.setElideMode(QtCore.Qt.ElideNone)
        bar.setDrawBase(False)
        bar.setToolTip("Show this head's scores, logits and weights")
        # As tall as the header's line: on a 720-pixel projector the stages need every pixel of height.
        bar.setStyleSheet("QTabBar::tab { padding: 1px 8px; min-width: 14px; }")
        bar.currentChanged.connect(self._on_tab)
        self.title = QtWidgets.QLabel("head")
        self.title.setObjectName("headBarTitle")
        for part in (self.bar, self.title):
            part.hide()

        self.widget = QtWidgets.QWidget()
        self.widget.setObjectName("headsGrid")
        self._grid = QtWidgets.QGridLayout(self.widget)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(0)
        # Its own scrolled place under the stages: a scroll bar there never covers a stage's colour bar.
        self.scroll = QtWidgets.QScrollArea()
        self.scroll.setObjectName("headsScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QtWidgets.QFrame.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.widget)
        self.scroll.hide()
        self.maps: list[Heatmap] = []
        self.canvases: list[HeatmapCanvas] = []
        self.shown = -1  # nothing laid out yet
        self.shape = (0, 0)  # (rows, columns) of the grid

    def add_map(self) -> None:
        """Build the next head's heatmap (laid out by :meth:`lay_out`)."""
        view = self.view
        i = len(self.maps)
        hm = Heatmap(f"head {i + 1}", WEIGHTS_CMAP)
        hm.show_row_labels(True)
        canvas = HeatmapCanvas(hm, with_bar=False)
        # The view's own from the start (hidden until laid out): a canvas without a parent would be
        # freed by the cycle collector, not by Qt with the view (see widgets.discard).
        canvas.hide()
        canvas.setParent(view)
        canvas.setMinimumSize(MIN_HEAD_PX, MIN_HEAD_PX)
        canvas.scene().sigMouseClicked.connect(view._on_click)
        canvas.tooltip_provider = view.tooltip_for
        canvas.digits = view.digits
        if presentation.STYLE.digits is not None:  # the precision setting, once chosen
            hm.set_digits(presentation.STYLE.digits)
        hm.set_highlight(view.highlight.row, view.highlight.col)
        self.maps.append(hm)
        self.canvases.append(canvas)

    def lay_out(self, n: int) -> None:
        """The grid for ``n`` heads (none for one head), each canvas in its cell, hidden until drawn."""
        shown = n if n > 1 else 0
        if shown == self.shown:
            return
        while len(self.maps) < n:
            self.add_map()
        for canvas in self.canvases:
            self._grid.removeWidget(canvas)
            canvas.hide()
        rows, cols = heads_grid_shape(shown)
        for i in range(shown):
            # Laid out hidden, keeping its cell: each head's canvas is shown when its numbers are
            # set (render_steps), so that a dozen heads appearing paint one per step, not all at once.
            canvas = self.canvases[i]
            policy = canvas.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            canvas.setSizePolicy(policy)
            self._grid.addWidget(canvas, i // cols, i % cols)
        # Equal stretch in every row and column: equal, square-ish cells.
        for c in range(max(self._grid.columnCount(), cols)):
            self._grid.setColumnStretch(c, 1 if c < cols else 0)
        for r in range(max(self._grid.rowCount(), rows)):
            self._grid.setRowStretch(r, 1 if r < rows else 0)
        self.widget.setVisible(shown > 0)
        self.shape = (rows, cols)
        self.shown = shown
        self.view._size_heads()

    def show_bar(self, n_heads: int, head: int) -> None:
        """One tab per head (none with one head), the shown head's current."""
        bar = self.bar
        blocked = bar.blockSignals(True)
        try:
            while bar.count() > n_heads:
                bar.removeTab(bar.count() - 1)
            while bar.count() < n_heads:
                bar.addTab(str(bar.count() + 1))
                bar.setTabToolTip(bar.count() - 1, f"head {bar.count()}: its scores, logits and weights")
            if 0 <= head < bar.count() and bar.currentIndex() != head:
                bar.setCurrentIndex(head)
        finally:
            bar.blockSignals(blocked)
        if bar.isHidden() == (n_heads > 1):
            bar.setVisible(n_heads > 1)
            self.title.setVisible(n_heads > 1)
            self.view._size_heads()

    def _on_tab(self, index: int) -> None:
        # A person chose a head: its scores, logits and weights become the stages (as the Model panel's
        # "show head" does).
        studio = self.view.studio
        if index >= 0 and index != studio.state.shown_head:
            studio.select(head=index)

    def keep_labels(self, hm: Heatmap) -> None:
        """A head's small map names its query row and the pinned or pointed-at column whatever else
        it thins, no larger than the stages' labels (their floor)."""
        view = self.view
        state = view.drawing.state()
        pinned = view.pinned[1:] if view.pinned is not None else (None, None)
        hm.left_axis.keep({state.query_index if state.query_tokens else None, view.highlight.row, pinned[0]})
        hm.bottom_axis.keep({view.highlight.col, pinned[1]})
        floor = view.stages["weights"].left_axis.min_label_px
        for axis in (hm.left_axis, hm.bottom_axis):
            if axis.min_label_px != floor:
                axis.min_label_px = floor
                axis.picture = None

    def fit(self, room: int, stages_least: int, head_least: int, stages_wanted: int, width: int) -> None:
        """Give the grid its place in ``room`` pixels of height under the stages (whose least height is
        ``stages_least``, ``stages_wanted`` as tall as square-ish cells make them), ``width`` wide: a row
        of heads (each at least ``head_least`` tall) whole where it fits, else what is left (GRID_PEEK or
        more, scrolled); none where less is left (the head bar reaches every head)."""
        rows, cols = self.shape
        show = self.shown > 0 and room - stages_least >= GRID_PEEK
        if show:
            # A whole row of heads where it fits beside the stages' least; else what is left, scrolled.
            wanted = min(head_least, room - stages_least)
            stages = max(stages_least, min(stages_wanted, room - wanted))
            grid = room - stages
            # Square-ish cells: as tall as about 0.8 of their width (labels included), never shorter
            # than their labels need; a row of heads fits the place, further rows scroll in it.
            width = width / cols
            side = int(max(head_least, width * 0.5 + 1, min(width * 0.8, 420, grid)))
            for canvas in self.canvases[: self.shown]:
                if canvas.minimumHeight() != side:
                    canvas.setMinimumHeight(side)
            grid = min(grid, rows * side)
            if self.scroll.maximumHeight() != grid:
                self.scroll.setFixedHeight(grid)
        if self.scroll.isHidden() == show:
            self.scroll.setVisible(show)
