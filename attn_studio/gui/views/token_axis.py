"""Token labels of a heatmap's axes.

A :class:`TokenAxis` draws one label per token, at its row or column. When the
labels do not fit at their full size they shrink down to a floor
(``MIN_LABEL_SCALE``); a column axis then turns its labels upright (90°
instead of 45°, which needs less room per token); only when even that cannot
fit every token (hundreds of tokens) does it label every n-th token, and it
says so on the axis ("1 in n labelled"). It never draws more labels than fit,
so a 2,000-token sentence costs a few dozen texts, not thousands.

Its texts are measured and laid out once per font (:mod:`.text_layout`). The switch to a figure and the
heatmaps' registry are :mod:`.export_marks`'; both modules' names are imported from here still (``__all__``).
"""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from ..qt.pg import pg
from .export_marks import _heatmaps, _redraw_marks, exporting, is_exporting, query_outlined, register, registered_heatmaps
from .text_layout import LAID_OUT_KEPT, LISTS_KEPT, MEASURES_KEPT, font_pixels, label_measures, laid_out, token_labels

__all__ = [  # this module's own, then export_marks' and text_layout's
    "LABEL_SLACK", "LABEL_EM", "MIN_LABEL_SCALE", "MIN_LABEL_PX", "SMALL_SCREEN_LABEL_PX", "MIN_EXPORT_LABEL_SCALE", "TokenAxis",
    "register", "exporting", "registered_heatmaps", "is_exporting", "query_outlined",
    "_heatmaps", "_redraw_marks",  # the registry itself (the same WeakSet), read by a test and a benchmark
    "laid_out", "font_pixels", "label_measures", "token_labels", "LAID_OUT_KEPT", "MEASURES_KEPT", "LISTS_KEPT",
]

LABEL_SLACK = 0.06  # labels may be this much closer than their full spacing and still all show
LABEL_EM = 8  # a token label is elided past this many font heights (the full word is in the tooltip)
MIN_LABEL_SCALE = 0.65  # labels shrink this far (and then turn upright) before some are left out
MIN_LABEL_PX = 14.0  # ...and never below this font size in pixels (nor below the font they were given)
SMALL_SCREEN_LABEL_PX = 8.0  # the floor where a view is narrower than a 1280-pixel screen gives (1024 × 768)
MIN_EXPORT_LABEL_SCALE = MIN_LABEL_SCALE  # the same floor in a figure


def _ticks(labels: list[str]) -> list[list[tuple[int, str]]]:
    # Every label; TokenAxis shows as many as fit when it paints.
    return [[(i, label) for i, label in enumerate(labels)]]


class TokenAxis(pg.AxisItem):
    """An axis of token labels; on the bottom they are drawn at 45° so long words never overlap.

    pyqtgraph drops tick text whose upright box does not fit; tokens must all
    show, so this axis places its labels itself, one per tick, at the tick.
    """

    ANGLE = 45

    def __init__(self, orientation: str):
        self._labels: list[tuple[float, str]] = []
        self._full: list[str] = []  # the tokens before eliding
        self.shown_step = 1  # every n-th label was drawn at the last paint
        self.drawn: list[tuple[float, str]] = []  # (position, text) of the labels drawn at the last paint
        self.shown_angle, self.shown_scale = self.ANGLE, 1.0  # of the labels at the last paint
        self.thinned_note = ""  # what the axis said about thinned labels at the last paint
        self.min_label_px = MIN_LABEL_PX  # the floor of this axis' labels (a view on a small screen lowers it)
        self.kept: frozenset = frozenset()  # tokens labelled even where the others are thinned (keep())
        # Grow for upright labels as soon as laid out, not at the next paint: for a view whose layout does
        # not follow the axis' height (the heatmap view's stages do, and would chase every passing size).
        self.grow_when_laid_out = False
        # How much closer than their line height labels may stand and still show at full size (a fraction,
        # and pixels). A figure for a room (the stage) allows none: neighbouring labels' boxes never overlap.
        self.slack, self.slack_px = LABEL_SLACK, 0.5
        # A column axis as tall as its labels reach at the spacing given to fit_spacing (the stage's figure),
        # rather than a line taller: that room goes to the rows.
        self.snug = False
        self._snug_scale = 1.0
        self._widest, self._line = 0.0, 0.0
        super().__init__(orientation)
        # Token positions need no SI prefix; pyqtgraph would otherwise re-typeset the axis
        # title on every range change (a window build sets ranges hundreds of times).
        self.enableAutoSIPrefix(False)
        self.setStyle(tickLength=0, tickFont=presentation.token_font())

    def max_label_px(self) -> float:
        """The widest a label may be drawn, in pixels: longer tokens are elided with "…"."""
        metrics = QtGui.QFontMetricsF(self.style.get("tickFont") or QtGui.QFont())
        return LABEL_EM * metrics.height()

    def set_labels(self, ticks: list[tuple[int, str]]):
        """Label position ``v`` with token ``t`` for each ``(v, t)``; long tokens are elided."""
        # Every axis with the same font shares the measurements: a 2,000-token sentence measures each
        # word once, not once per axis and edit.
        metrics, limit, cache, font_key = label_measures(self.style.get("tickFont") or QtGui.QFont(), LABEL_EM)
        self._full = full = [str(t) for _, t in ticks]
        positions = tuple(float(v) for v, _ in ticks)
        labels, widest = token_labels(metrics, limit, cache, font_key, positions, full)
        self._labels = list(labels)
        # No tick marks or texts of pyqtgraph's own: this axis draws the labels (and pyqtgraph,
        # handed a tick per token, would lay out thousands of empty ones on every paint).
        self.setTicks([[]])
        if self.orientation == "bottom":
            # The room slanted labels need, and upright ones (when the columns are too narrow
            # for slanted labels, the axis grows to this at its next paint rather than cut them).
            self._widest, self._line = widest, metrics.height()
            self._heights = self._label_heights()
            self.setHeight(self._heights[self._shown_fit_angle()])
            self._adjust_label()
        elif self.style["showValues"]:
            label = self.label.boundingRect().height() + 4 if self.label.isVisible() else 0
            self.setWidth(int(widest + label + 8))
        self.picture = None

    def _label_heights(self) -> dict:
        """{angle: height} of a column axis for its labels slanted (ANGLE) and upright (90)."""
        widest, line = self._widest, self._line
        if not self.snug:
            return {self.ANGLE: int(widest * np.sin(np.radians(self.ANGLE)) + line + 8), 90: int(widest + line + 8)}
        # What a label drawn by drawPicture reaches below the axis' top: 3 px, then its box (its text, 2 px
        # wider) turned by the angle about its right end's middle; and under the labels the axis' title.
        k, angle = self._snug_scale, math.radians(self.ANGLE)
        title = self.label.boundingRect().height() + 2 if self.label.isVisible() else 0
        slanted = 3 + (k * widest + 2) * math.sin(angle) + k * line / 2 * math.cos(angle) + 1
        return {self.ANGLE: math.ceil(slanted + title), 90: math.ceil(k * widest + 2 + 3 + 6 + title)}

    def _shown_fit_angle(self) -> int:
        # The angle the labels were last drawn at (45 before the first paint).
        return 90 if self.shown_angle >= 90 else self.ANGLE

    def linkedViewChanged(self, view, newRange=None):
        super().linkedViewChanged(view, newRange)
        # Laid out where the labels must stand upright: the axis grows to their height before it is
        # painted. Left to the paint, the first paint of a view just shown drew them cut to the slanted
        # labels' height ("o…" for "out 1" in Heads → output, first shown at 90 %) and grew a turn later.
        if self.grow_when_laid_out and self.orientation == "bottom" and len(self._labels) > 1:
            heights = getattr(self, "_heights", None)
            if heights and view.width() > 1 and (self.fixedHeight or 0) < heights[90] and self.fit()[1] >= 90:
                self._fit_height(90)

    def _fit_height(self, angle: float) -> None:
        """Make a column axis as tall as its labels need at ``angle`` (upright labels need their whole width)."""
        heights = getattr(self, "_heights", None)
        if self.orientation != "bottom" or not heights:
            return
        height = heights[90 if angle >= 90 else self.ANGLE]
        if self.fixedHeight != height:
            self.setHeight(height)
            self._adjust_label()

    def fit_height_now(self) -> None:
        """Take the height the labels need at the angle they will be drawn at with the axis as laid out now
        (what the next paint would otherwise find, and then grow or shrink to, a paint too late)."""
        if self.orientation == "bottom" and len(self._labels) > 1:
            self._fit_height(self.fit()[1])

    def fit_spacing(self, spacing: float) -> None:
        """Take the height the labels will need at ``spacing`` pixels a token: upright where slanted ones do
        not fit (a figure laid out before its first paint, which would otherwise cut them to the old height)."""
        if self.snug and self.orientation == "bottom" and self._labels:
            scale, angle, _ = self._fit_at(spacing)
            self._snug_scale = scale
            self._heights = self._label_heights()
            self._fit_height(angle)
            return
        self._fit_height(90 if spacing < self.label_spacing() else self.ANGLE)

    def relabel(self):
        """Recompute the room the slanted labels need (after a font change)."""
        if self._labels:
            self.set_labels([(int(v), t) for (v, _), t in zip(self._labels, self._full)])

    def boundingRect(self):
        # Slanted labels reach left of the axis (the first token's label hangs
        # below the row labels); include that area so it is painted.
        rect = super().boundingRect()
        if self.orientation == "bottom" and self._labels:
            rect = rect.adjusted(-self.height(), 0, 0, 0)
        return rect

    def _adjust_label(self):
        # Keep the axis title below the slanted labels.
        if self.label.isVisible():
            self.label.setPos(self.label.pos().x(), self.height() - self.label.boundingRect().height() + 2)

    def labels(self) -> list[tuple[float, str]]:
        """(position, label) of every label this axis has, as drawn (elided; some may be thinned)."""
        return list(self._labels)

    def full_label(self, index: int) -> str:
        """The whole token at position ``index`` (its label may be elided)."""
        return self._full[index] if 0 <= index < len(self._full) else ""

    def widest_label_px(self) -> float:
        """Width in pixels of the widest label as drawn."""
        metrics = QtGui.QFontMetricsF(self.style.get("tickFont") or QtGui.QFont())
        return max((metrics.horizontalAdvance(t) for _, t in self._labels), default=0.0)

    def label_spacing(self, font: QtGui.QFont | None = None, angle: float | None = None) -> float:
        """Pixels between neighbouring labels for all of them to show without touching.

        ``angle``: of the column labels (45 by default; 90 upright); row labels are level.
        """
        metrics = QtGui.QFontMetricsF(font or self.style.get("tickFont") or QtGui.QFont())
        # Slanted labels need their line height / sin(angle) along the axis (then parallel
        # labels just do not touch); level row labels their line height.
        angle = self.ANGLE if angle is None else angle
        slant = np.sin(np.radians(angle)) if self.orientation == "bottom" else 1.0
        return metrics.height() / slant - self.slack_px

    def min_label_spacing(self) -> float:
        """The least room per token in which every label still shows (the floor font, upright, the slack
        that :meth:`fit` allows)."""
        return self.label_spacing(angle=90) * self._floor_scale() * (1 - self.slack)

    def _floor_scale(self) -> float:
        # The floor is a font size as the viewer sees it (14 px), not a line height: a label drawn
        # smaller than that is not read from the back of a room; crowded labels are thinned instead.
        pixels = font_pixels(self.style.get("tickFont") or QtGui.QFont())
        # On a small screen (min_label_px lowered) the labels may shrink to that floor in pixels, as
        # far as they did at 12 px before labels were 14 px.
        least = MIN_LABEL_SCALE if self.min_label_px >= MIN_LABEL_PX else 0.0
        return min(1.0, max(least, self.min_label_px / max(pixels, 1e-6)))

    def _spacing(self) -> float:
        """Pixels between neighbouring tokens along this axis at the current size (inf: one token)."""
        view = self.linkedView()
        if view is None or len(self._labels) < 2:
            return math.inf
        a = self.mapFromScene(view.mapViewToScene(QtCore.QPointF(self._labels[0][0], self._labels[0][0])))
        b = self.mapFromScene(view.mapViewToScene(QtCore.QPointF(self._labels[1][0], self._labels[1][0])))
        return max(abs(b.x() - a.x()) if self.orientation == "bottom" else abs(b.y() - a.y()), 1e-6)

    def fit(self) -> tuple[float, float, int]:
        """(font scale, angle, step) of the labels at the current size.

        Full size if they fit (a few per cent closer still reads); else smaller, down to
        the floor; then (columns) upright; only then every ``step``-th token.
        """
        return self._fit_at(self._spacing())

    def _fit_at(self, spacing: float) -> tuple[float, float, int]:
        """(font scale, angle, step) of the labels ``spacing`` pixels apart (see :meth:`fit`)."""
        need = self.label_spacing()
        if spacing >= need * (1 - self.slack):
            return 1.0, self.ANGLE, 1
        floor = self._floor_scale()
        scale = spacing / need
        if scale >= floor * (1 - self.slack):  # at the floor, a few per cent closer still reads
            return max(scale, floor), self.ANGLE, 1
        if self.orientation == "bottom":
            need = self.label_spacing(angle=90)
            upright = spacing / need
            if upright >= 1 - self.slack:
                upright = 1.0  # a few per cent closer still reads, as slanted labels do
            elif upright >= floor * (1 - self.slack):
                upright = max(upright, floor)
            if upright >= floor:
                # Upright, the axis grows to the longest label (see _fit_height): never elided.
                return min(1.0, upright), 90, 1
            return floor, 90, max(2, int(np.ceil(need * floor / spacing)))
        return floor, self.ANGLE, max(2, int(np.ceil(need * floor / spacing)))

    def keep(self, indices) -> None:
        """Label the tokens at ``indices`` (a query row, a pinned or pointed-at column) even where the
        axis labels only every n-th token: a small map still names the row a lecturer talks about."""
        kept = frozenset(int(i) for i in indices if i is not None and i >= 0)
        if kept != self.kept:
            self.kept = kept
            self.picture = None
            self.update()

    def _thinned(self, step: int) -> list[tuple[float, str]]:
        """Every ``step``-th label, and the kept ones in place of their thinned neighbours."""
        if step <= 1 or not self.kept:
            return self._labels[::step]
        chosen = set(range(0, len(self._labels), step))
        for k in self.kept:
            if k < len(self._labels):
                chosen = {j for j in chosen if abs(j - k) >= step or j in self.kept}
                chosen.add(k)
        return [self._labels[j] for j in sorted(chosen)]

    def visible_step(self) -> int:
        """Label every n-th token: 1 unless even the floor font, upright, cannot fit them all."""
        return self.fit()[2]

    def _crowding(self, font: QtGui.QFont | None = None) -> float:
        """Room the labels need at full size over the room they have (above 1: they would overlap)."""
        spacing = self._spacing()
        return 0.0 if math.isinf(spacing) else self.label_spacing(font) / spacing

    def paint(self, p, opt, widget):
        # Drawn straight onto the painter, not recorded into a QPicture and played back: recording lays
        # every label's text out and playing lays it out again, and the picture was never played twice
        # (the axis paints into its item cache, cache_static, so it is painted only when it changed). Without
        # a cache (a figure being drawn) it keeps pyqtgraph's picture, so a figure's pixels are as they were.
        if self.cacheMode() == QtWidgets.QGraphicsItem.NoCache:
            super().paint(p, opt, widget)
            return
        p.save()
        self._on_screen = True  # labels drawn from laid-out texts (laid_out): the screen only
        try:
            if self.style["tickFont"]:
                p.setFont(self.style["tickFont"])
            specs = self.generateDrawSpecs(p)
            if specs is not None:
                self.drawPicture(p, *specs)
        finally:
            self._on_screen = False
            p.restore()

    def generateDrawSpecs(self, p):
        # This axis has no ticks or texts of pyqtgraph's (its labels are drawn in drawPicture): only the
        # axis line is left of pyqtgraph's specs, and working out the rest (tick pens, levels, text
        # boxes) cost a millisecond per paint, 20-odd paints when a sentence of a new length is drawn.
        if self._tickLevels != [[]] or self.grid is not False or any(self.style["stopAxisAtTick"]):
            return super().generateDrawSpecs(p)
        if self.style["tickFont"] is not None:
            p.setFont(self.style["tickFont"])
        if self.deviceTransform_() is None:  # not in a view: nothing to draw (as pyqtgraph says)
            return None
        bounds = self.mapRectFromParent(self.geometry())
        # The line as pyqtgraph places it, a pixel past the axis' ends (its span is never of length 0).
        if self.orientation == "left":
            span = (bounds.topRight() + QtCore.QPointF(-1, -1), bounds.bottomRight() + QtCore.QPointF(-1, 1))
        elif self.orientation == "right":
            span = (bounds.topLeft() + QtCore.QPointF(1, -1), bounds.bottomLeft() + QtCore.QPointF(1, 1))
        elif self.orientation == "top":
            span = (bounds.bottomLeft() + QtCore.QPointF(-1, -1), bounds.bottomRight() + QtCore.QPointF(1, -1))
        else:
            span = (bounds.topLeft() + QtCore.QPointF(-1, 1), bounds.topRight() + QtCore.QPointF(1, 1))
        return (self.pen(), span[0], span[1]), [], []

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        super().drawPicture(p, axisSpec, tickSpecs, [])
        view = self.linkedView()
        if view is None or not self.style["showValues"]:
            return
        font = QtGui.QFont(self.style.get("tickFont") or p.font())
        scale, angle, step = self.fit()
        if scale < 1.0:
            if font.pixelSize() > 0:
                font.setPixelSize(max(1, int(font.pixelSize() * scale + 1e-6)))
            else:
                font.setPointSizeF(font.pointSizeF() * scale)
        p.setFont(font)
        p.setPen(self.textPen())
        metrics = QtGui.QFontMetricsF(p.font())
        bounds = self.boundingRect()
        self.shown_step, self.shown_angle, self.shown_scale = step, angle, scale
        self._fit_height(angle)
        self.drawn = []
        self.thinned_note = ""
        # Upright column labels are cut to the axis' height (the whole word is in the tooltip).
        room = self.height() - metrics.height() - 6 if self.label.isVisible() else self.height() - 6
        # Token position -> this axis' coordinates: the view's mapping is a scale and a shift, so two
        # points give every label's place (mapping each label through the scene cost a frame at
        # thousands of tokens).
        origin = self.mapFromScene(view.mapViewToScene(QtCore.QPointF(0.0, 0.0)))
        unit = self.mapFromScene(view.mapViewToScene(QtCore.QPointF(1.0, 1.0)))
        x0, dx, y0, dy = origin.x(), unit.x() - origin.x(), origin.y(), unit.y() - origin.y()
        # On the screen each label is drawn from its laid-out text, placed where drawText's alignment puts it;
        # a figure (SVG, PDF, PNG) keeps drawText's texts.
        static = getattr(self, "_on_screen", False)
        line = metrics.height()
        font = p.font()
        font_key = font.key() if static else None
        right = self.width() - 4
        left = self.label.boundingRect().height() + 2 if self.label.isVisible() else 0.0
        for value, text in self._thinned(step):
            point = QtCore.QPointF(x0 + value * dx, y0 + value * dy)
            if self.orientation != "bottom":
                if point.y() < bounds.top() - 1 or point.y() > bounds.bottom() + 1:
                    continue
                top = point.y() - line / 2
                if static:
                    laid, half_w, half_h = laid_out(text, font, font_key)
                    p.drawStaticText(QtCore.QPointF(right - 2 * half_w, top + line / 2 - half_h), laid)
                else:
                    rect = QtCore.QRectF(left, top, right - left, line)
                    p.drawText(rect, int(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter), text)
                self.drawn.append((value, text))
                continue
            x = point.x()
            if x < bounds.left() - 1 or x > bounds.right() + 1:
                continue
            p.save()
            if angle >= 90:
                p.translate(x, 3)
                if metrics.horizontalAdvance(text) > room:
                    text = metrics.elidedText(text, QtCore.Qt.ElideRight, max(room, metrics.height()))
            else:
                p.translate(x + metrics.height() * 0.3, 3)
            p.rotate(-angle)
            if static:
                laid, half_w, half_h = laid_out(text, font, font_key)
                p.drawStaticText(QtCore.QPointF(-2 * half_w, -half_h), laid)
            else:
                width = metrics.horizontalAdvance(text) + 2
                p.drawText(QtCore.QRectF(-width, -metrics.height() / 2, width, metrics.height()),
                           int(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter), text)
            p.restore()
            self.drawn.append((value, text))
        if step > 1:
            self._draw_thinned_note(p, step)

    def _draw_thinned_note(self, p, step: int) -> None:
        # Said where the labels are: a reader must not take the labels shown for every token.
        note = f"1 in {step} labelled"
        font = QtGui.QFont(p.font())
        font.setItalic(True)
        p.setFont(font)
        metrics = QtGui.QFontMetricsF(font)
        # Beside the axis title ("query", "key"), never over it: on the longer side of it, and as
        # "1 in n" where the whole note does not fit (a small heatmap at 1280 × 720).
        along = self.width() if self.orientation == "bottom" else self.height()
        start, end = 2.0, along - 2.0
        if self.label.isVisible():
            title = self.label.mapRectToParent(self.label.boundingRect())
            first, last = (title.left(), title.right()) if self.orientation == "bottom" else (title.top(), title.bottom())
            before, after = (start, first - 4), (last + 4, end)
            start, end = max(before, after, key=lambda span: span[1] - span[0])
        text = note if metrics.horizontalAdvance(note) <= end - start else f"1 in {step}"
        if metrics.horizontalAdvance(text) + 2 > end - start:
            # Whole in a smaller hand rather than cut to "1 in" (a head's small map beside its title).
            size = font.pixelSize() if font.pixelSize() > 0 else font_pixels(font)
            fitted = size * max(end - start - 2, 1.0) / (metrics.horizontalAdvance(text) + 2)
            font.setPixelSize(max(8, int(fitted)))
            p.setFont(font)
            metrics = QtGui.QFontMetricsF(font)
        length = metrics.horizontalAdvance(text) + 2
        if self.orientation == "bottom":
            rect = QtCore.QRectF(end - length, self.height() - metrics.height() - 1, length, metrics.height())
            p.drawText(rect, int(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter), text)
        else:
            p.save()
            p.translate(metrics.height(), start)
            p.rotate(90)
            p.drawText(QtCore.QRectF(0, 0, length, metrics.height()),
                       int(QtCore.Qt.AlignLeft | QtCore.Qt.AlignVCenter), text)
            p.restore()
        self.thinned_note = note
        self.thinned_note_rect = (start, end, text)

    def resizeEvent(self, ev=None):
        super().resizeEvent(ev)
        if self.orientation == "bottom" and self._labels:
            self._adjust_label()
        self.picture = None  # the spacing changed: thin the labels again

