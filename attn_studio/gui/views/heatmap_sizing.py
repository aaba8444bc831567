"""How the heatmap panel shares its room: each stage's least size for its labels (every label up to a
couple of dozen tokens, at 14 px or, on a small screen, smaller), the stages in a row or two above two, and
the heads' grid in the height left under them. A part of :class:`~.heatmap_view.HeatmapView` (its stages,
canvases, scroll areas and heads), kept apart by job."""

from __future__ import annotations

import math

from PySide6 import QtCore

from .cells import widest_em
from .token_axis import MIN_LABEL_PX, SMALL_SCREEN_LABEL_PX

ALL_LABELS_UP_TO = 24  # up to this many tokens the stages keep every label (and scroll if they must):
# a trained model's sentence of a dozen words is 16-20 tokens with [CLS] and [SEP]
SMALL_SCREEN_VIEW_PX = 900  # views narrower than this (1024 × 768: 736 px) let stage labels go below 14 px
MIN_STAGE_PX = 240  # below this the stages scroll rather than thin a dozen labels
MIN_HEAD_PX = 200   # side of one head's heatmap in the grid
# The heads' grid has its own place under the stages, never taking their least height: a whole row of
# heads where it fits, else what is left (it scrolls there), and none where less than this is left (the
# head bar beside the title reaches every head).
GRID_PEEK = 120
READABLE_VALUE_PX = 9.0  # cell values smaller than this in a row: the stages go two above two if that writes them larger
SHORT_VIEW_PX = 560  # a view shorter than this (a 720-pixel projector) gives the formula panel's room to the stages


class StageSizing:
    """The sizing half of :class:`~.heatmap_view.HeatmapView`: ``_fit_stages`` measures each stage's least
    size for ``t_q`` × ``t_k`` tokens, ``_size_stages`` and ``_size_heads`` share the view's height between
    the stages and the heads' grid, ``_choose_shape`` lays the stages in a row or two above two."""

    def _small_screen(self) -> bool:
        # Narrower than the views get on a 1280-pixel screen (a 1024 × 768 projector): there the
        # three stages stay whole with labels below 14 px rather than scroll.
        return self.scroll.viewport().width() < SMALL_SCREEN_VIEW_PX

    def _fit_stages(self, t_q: int, t_k: int, heads: bool = True) -> bool:
        """Give each stage the least size its labels need for ``t_q`` × ``t_k`` tokens, in the shape its values
        want (:meth:`_choose_shape`); True when a size or the shape changed.
        ``heads=False`` leaves the heads' grid as it is (sized by a later :meth:`_size_heads`)."""
        floor = SMALL_SCREEN_LABEL_PX if self._small_screen() else MIN_LABEL_PX
        self._small = self._small_screen()
        for hm in self.stages.values():
            for axis in (hm.left_axis, hm.bottom_axis):
                if axis.min_label_px != floor:
                    axis.min_label_px = floor
                    axis.picture = None
                    axis.update()
        # Up to a dozen tokens every label of the chosen head's stages shows: each
        # stage is at least wide and tall enough for its labels, and the panel
        # scrolls (with a visible bar) on a screen too small for that.
        for key, canvas in self.canvases.items():
            hm = self.stages[key]
            width, height = 120, MIN_STAGE_PX
            # The rows' title ("query") beside the labels, which a narrow screen leaves out.
            title = hm.left_axis.label.boundingRect().height() + 4 if hm.left_axis.label.isVisible() else 0
            if t_k <= ALL_LABELS_UP_TO:
                # Axes, colour bar and margins: measured once laid out, else the axes'
                # sizes as set (their geometry follows one layout pass later) and a bar's.
                bar = canvas.bar.geometry().width() if canvas.bar is not None and canvas.bar.geometry().width() > 0 \
                    else (60 if canvas.bar is not None else 0)
                chrome = hm.left_axis.minimumWidth() + bar + 16  # margins and spacing of the canvas
                # A few per cent to spare: a zoomed font's line is not exactly the floor's (MiniLM's
                # columns at 115 % were thinned to 1 in 2 at the bare least width).
                width = int(chrome - title + t_k * hm.bottom_axis.min_label_spacing() * 1.08) + 1
            if t_q <= ALL_LABELS_UP_TO:
                # The column labels' height at the angle they will be drawn at: upright where the stage's
                # width leaves too little room for slanted ones (MiniLM's 16 tokens at 1280 × 720), and
                # upright labels are taller (measured as slanted, the rows were thinned to 1 in 2).
                axis = hm.bottom_axis
                labels_h = wrapped_h = axis.minimumHeight()
                heights = getattr(axis, "_heights", None)
                if heights and t_k > 1:
                    slanted = t_k * axis.label_spacing() * (1 - axis.slack)
                    chrome_w = hm.left_axis.minimumWidth() + 76
                    for cols in (None, 2):  # in a row, and two stages across
                        shown = max(sum(not c.isHidden() for c in self.canvases.values()), 1)
                        across = self.scroll.viewport().width() / (cols or shown)
                        need = heights[90] if max(width, across) - chrome_w < slanted else heights[axis.ANGLE]
                        if cols is None:
                            labels_h = max(labels_h, need)
                        else:
                            wrapped_h = max(wrapped_h, need)
                rows_h = t_q * hm.left_axis.min_label_spacing()
                height = max(height, int(40 + labels_h + 16 + rows_h) + 1)  # title, column labels, margins
                self._wrapped_min[key] = max(MIN_STAGE_PX, int(40 + wrapped_h + 16 + rows_h) + 1)
                # The room around the cells in a row and two above two, as laid out for these labels: the
                # shapes are compared on it (:meth:`_values_px`), not on the geometry of the shape shown,
                # whose axes differ (the labels' angle follows a stage's width) and made the choice turn.
                if t_k <= ALL_LABELS_UP_TO:
                    self._chrome[key] = (int(chrome), int(40 + labels_h + 16), int(40 + wrapped_h + 16))
            self._stage_min[key] = (width, height, int(title or self._title_room))
            self._title_room = max(self._title_room, int(title))
        self._shape_tokens = (t_q, t_k)
        # The shape first (a row, or two above two), then the sizes in it: sized before, the stages were
        # given the old shape's heights, and the next fit laid the whole panel out again.
        shape = self.wrapped
        self._share_height()
        changed = self._size_stages() or self.wrapped != shape
        if heads:
            self._size_heads()
        return changed

    def _refit_stages(self) -> None:
        state = self.drawing.state()
        self._fit_stages(len(state.query_tokens), len(state.key_tokens))

    def _place_stages(self, wrapped: bool) -> None:
        """Lay the stages out in a row, or (``wrapped``) two above two."""
        grid = self._stage_grid
        for key, canvas in self.canvases.items():
            grid.removeWidget(canvas)
        for i, key in enumerate(self.canvases):
            grid.addWidget(self.canvases[key], *(divmod(i, 2) if wrapped else (0, i)))
        # No stretch factors: the (expanding) stages share alike, and the column of a hidden stage (the
        # stable softmax's, most of the time) takes no room.
        self.wrapped = wrapped

    def _layout_shape(self) -> tuple[int, int]:
        """(rows, columns) of the stages as laid out."""
        shown = sum(not c.isHidden() for c in self.canvases.values())
        return (2, 2) if self.wrapped else (1, max(shown, 1))

    def _values_px(self, rows: int, cols: int, width: float, height: float) -> float:
        """The size of the smallest stage's cell values (pixels) with the stages ``rows`` × ``cols`` in
        ``width`` × ``height``: each stage's axes and colour bar as laid out for its labels (:meth:`_fit_stages`),
        the rest its cells."""
        t_q, t_k = (max(t, 1) for t in self._shape_tokens)
        smallest = math.inf
        for key, canvas in self.canvases.items():
            if canvas.isHidden() or key not in self._chrome:
                continue
            hm = self.stages[key]
            chrome_w, row_h, wrapped_h = self._chrome[key]
            chrome_h = wrapped_h if rows > 1 else row_h
            cell_w = (width / cols - chrome_w) / t_k
            cell_h = (height / rows - chrome_h) / t_q
            em = self._coming_chars.get(key) or hm.overlay.all_chars  # the widest value, in ems of the cells' font
            smallest = min(smallest, cell_h * hm.overlay.line_share, (cell_w - 3) / (em + 0.15))
        return smallest

    def values_coming(self, values: dict | None) -> None:
        """The stages' values about to be drawn (stage key -> array; None once drawn): the shape is chosen
        for them (their widest decides the cells' text), so that the drawing lays the panel out before it
        paints; chosen for the values shown, it changed at the drawing's end, in one long turn."""
        # Only a sentence whose every label shows has a choice of shape (a long one's values are not read).
        self._coming_chars = {} if values is None else {
            key: widest_em(v, self.stages[key].overlay.digits) for key, v in values.items()
            if max(v.shape, default=0) <= ALL_LABELS_UP_TO}

    def reshapes(self) -> bool:
        """Whether the stages would take the other shape now (a row, or two above two)."""
        return self._wants_wrap(self._room()) != self.wrapped

    def _choose_shape(self, room: int) -> None:
        """Two above two where the row leaves the values unreadable and two rows of stages, each with
        every label, fit ``room`` pixels of height and write them larger; else a row."""
        wrap = self._wants_wrap(room)
        if wrap != self.wrapped:
            self._place_stages(wrap)

    def _wants_wrap(self, room: int) -> bool:
        t = max(self._shape_tokens)  # the tokens last fitted: those coming, while a new sentence is laid out
        visible = [c for c in self.canvases.values() if not c.isHidden()]
        width = self.scroll.viewport().width()
        least = max((self._wrapped_min.get(k, MIN_STAGE_PX) for k, c in self.canvases.items()
                     if not c.isHidden()), default=MIN_STAGE_PX)
        wrap = False
        if 1 < t <= ALL_LABELS_UP_TO and len(visible) >= 3 and room >= 2 * least:
            in_row = self._values_px(1, len(visible), width, room)
            wrap = in_row < READABLE_VALUE_PX and self._values_px(2, 2, width, room) > in_row + 0.5
        return wrap

    def _size_stages(self) -> bool:
        # The stages come first: as tall as square-ish cells make them, up to the whole
        # viewport; the heads' grid gets the rest (and scrolls below them).
        visible = [key for key, c in self.canvases.items() if not c.isHidden()]
        viewport = self.scroll.viewport().size()
        rows, cols = self._layout_shape()
        across = viewport.width() / cols
        wanted = min(int(across * 0.95), viewport.height() // rows)
        # On a narrow screen (1024 pixels) the rows' titles give their room to the cells,
        # on every stage alike, so that the three stay as wide as each other.
        least = [self._stage_min.get(key, (120, MIN_STAGE_PX, 0)) for key in visible]
        narrow = sum(w + t for w, _, t in least[:cols]) > viewport.width()
        changed = False
        for key, canvas in self.canvases.items():
            self.stages[key].show_row_title(not narrow)
            width, height, title = self._stage_min.get(key, (120, MIN_STAGE_PX, 0))
            if self.wrapped:
                height = self._wrapped_min.get(key, height)
            size = QtCore.QSize(width + (0 if narrow else title), max(height, wanted))
            if canvas.minimumSize() != size:
                canvas.setMinimumSize(size)
                changed = True
        return changed

    def _share_height(self) -> int:
        """The stages' shape (a row, or two above two) and the pinned formula's place for the height under
        the header; the height left for the stages and the heads' grid."""
        room = self._room()
        spacing = self.layout().spacing()
        self._choose_shape(room)
        # On a short screen, or where the stages stand two above two, the pinned formula gives its
        # room to the stages (hovering a cell still shows its formula).
        formula = not self.wrapped and self.height() >= SHORT_VIEW_PX
        if self.formula_panel.isHidden() == formula:
            self.formula_panel.setVisible(formula)
        if formula:
            room -= self.formula_panel.height() + spacing
        return room

    def _room(self) -> int:
        """The height under the header: for the stages, the heads' grid and the pinned formula."""
        top = self.layout()
        margins = top.contentsMargins()
        header = max(self.header.height(), 0 if self.head_bar.isHidden() else self.head_bar.sizeHint().height())
        return self.height() - (margins.top() + margins.bottom() + header + top.spacing())

    def _size_heads(self) -> None:
        """Share the height under the header: the stages first, whole; the heads' grid below them in what
        is left (GRID_PEEK or more; else the head bar reaches every head), a row of heads whole where it
        fits, scrolling in its own place (:meth:`~.heatmap_heads.HeadsGrid.fit`)."""
        room = self._share_height()
        spacing = self.layout().spacing()
        least = self.stages_least_height()
        one = max((self._stage_min.get(k, (120, MIN_STAGE_PX, 0))[1] for k, c in self.canvases.items()
                   if not c.isHidden()), default=MIN_STAGE_PX)
        head_least = max(MIN_HEAD_PX, one)  # a head carries the same labels as a stage in a row
        # Stages wider than the view (MiniLM's 16 tokens at 1366 px) scroll sideways: their bar's height too.
        if self.scroll.widget().minimumSizeHint().width() > self.scroll.viewport().width() + 1 \
                or self.scroll.horizontalScrollBar().isVisible():
            least += self.scroll.horizontalScrollBar().sizeHint().height()
        rows, cols = self._layout_shape()
        across = self.scroll.viewport().width() / cols
        self.heads.fit(room - spacing, least, head_least, int(across * 0.95) * rows, self.scroll.viewport().width())

    def stages_least_height(self) -> int:
        """The least height of the stages with every label (their place scrolls below it)."""
        shown = [self._stage_min.get(key, (120, MIN_STAGE_PX, 0))[1] for key, c in self.canvases.items()
                 if not c.isHidden()]
        if self.wrapped:
            shown = [self._wrapped_min.get(key, MIN_STAGE_PX) for key, c in self.canvases.items() if not c.isHidden()]
            return 2 * max(shown, default=MIN_STAGE_PX)
        return max(shown, default=MIN_STAGE_PX)
