"""A widget of the window lent to the stage of Present: taken out of its tab or dock with a
placeholder there, its text at the stage's size, a training panel's plots folded to one a page,
and everything given back as it was when the stage lets it go."""

from __future__ import annotations

import re

import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from ..files import sheet as sheets
from ..qt.pg import pg
from .basics import DRIFT, GEOMETRY, MEANING, TRAINING_PREFIX, VARIANCE, _font
from .stage import TRAINING_PLOTS_PER_PAGE, _AtZoom

def training_page_title(panel: str, heatmap: str) -> str:
    """The stage's title over a training panel's heatmap: the panel's name, then the heatmap's title
    without a first part the name says already ("Why two layers" and "two layers: layer 1 head 1" make
    "Why two layers: layer 1 head 1", not "Why two layers: two layers: layer 1 head 1")."""
    heatmap = heatmap.replace(" ◀", "")
    first, colon, rest = heatmap.partition(": ")
    if colon and rest and says(panel, first):
        heatmap = rest
    return f"{panel}: {heatmap}"


def says(title: str, name: str) -> bool:
    """True when ``title`` has ``name`` in it already, as whole words (any case)."""
    words = re.escape(name.strip()).replace(r"\ ", r"\s+")
    return bool(name.strip()) and re.search(rf"(?<!\w){words}(?!\w)", title, re.IGNORECASE) is not None


class _Lent:
    """A widget of the window lent to the stage: where it was, to put it back."""

    def __init__(self, widget: QtWidgets.QWidget):
        self.widget = widget
        self.tabs = self.dock = None
        self.placeholder = QtWidgets.QLabel("Shown on the stage (Present); Esc there, or F5, brings it back here.")
        self.placeholder.setObjectName("presentPlaceholder")
        self.placeholder.setAlignment(QtCore.Qt.AlignCenter)
        self.placeholder.setWordWrap(True)
        parent = widget.parentWidget()
        while parent is not None and not isinstance(parent, (QtWidgets.QStackedWidget, QtWidgets.QDockWidget)):
            parent = parent.parentWidget()
        if isinstance(parent, QtWidgets.QDockWidget):
            self.dock = parent
            parent.setWidget(self.placeholder)
        elif parent is not None and isinstance(parent.parentWidget(), QtWidgets.QTabWidget):
            tabs = self.tabs = parent.parentWidget()
            self.index = tabs.indexOf(widget)
            self.text, self.tip = tabs.tabText(self.index), tabs.tabToolTip(self.index)
            current = tabs.currentIndex()
            tabs.blockSignals(True)
            tabs.removeTab(self.index)
            tabs.insertTab(self.index, self.placeholder, self.text)
            tabs.setCurrentIndex(current)
            tabs.blockSignals(False)
        self.font = QtGui.QFont(widget.font())
        self.had_font = widget.testAttribute(QtCore.Qt.WA_SetFont)
        # Labels and controls that chose their own size (a readout 1.45 times the text): each
        # is given back its own font when the stage lets the widget go.
        self.own_fonts = [(child, QtGui.QFont(child.font())) for child in widget.findChildren(QtWidgets.QWidget)
                          if child.testAttribute(QtCore.Qt.WA_SetFont)]
        widget.lent = True
        # A training panel on the stage: its own buttons are the strip's, its plots shown a few at a time.
        self.hidden_controls = []
        row = getattr(widget, "controls_row", None)
        if row is not None:
            for i in range(row.count()):
                child = row.itemAt(i).widget()
                if child is not None and child.isVisibleTo(widget):
                    child.hide()
                    self.hidden_controls.append(child)
        # Items painted from a pixmap cache at the window's size: drawn afresh on the stage, text as text.
        self.cached = []
        for view in widget.findChildren(QtWidgets.QGraphicsView):
            for item in view.scene().items():
                if item.cacheMode() != QtWidgets.QGraphicsItem.NoCache:
                    self.cached.append((item, item.cacheMode()))
                    item.setCacheMode(QtWidgets.QGraphicsItem.NoCache)
        # Labels of a height fixed for the window's text (a two-line caption): free on the stage.
        self.fixed_heights = [(child, child.minimumHeight()) for child in widget.findChildren(QtWidgets.QLabel)
                              if child.minimumHeight() == child.maximumHeight() and child.minimumHeight() > 0]
        for child, _ in self.fixed_heights:
            child.setMaximumHeight(16777215)
        graphics = getattr(widget, "graphics", None) or getattr(widget, "canvas", None)
        self.graphics = graphics if isinstance(graphics, pg.GraphicsLayoutWidget) else None
        graphics = self.graphics
        self.items = []
        # The panel's heatmaps (the heads of "Why two layers", the alignment of "Why attention") go
        # on the stage as page figures of their own, with every token labelled; the plots that hold
        # them are folded away on the curves' pages.
        self.heatmaps = [hm for row in getattr(widget, "heatmaps", []) for hm in row]
        if getattr(widget, "alignment", None) is not None:
            self.heatmaps.append(widget.alignment)
        self.folded = []
        if graphics is not None:
            plots = {hm.plot for hm in self.heatmaps}
            cells = sorted(graphics.ci.items.items(), key=lambda kv: min(kv[1]))
            for item, _ in cells:
                inner = set(getattr(item, "items", {}) or {})
                entry = (item, item.maximumSize(), item.minimumSize())
                (self.folded if item in plots or inner & plots else self.items).append(entry)

    def show_items(self, page: int, per_page: int) -> int:
        """Show plots ``page * per_page`` on of a training panel, the others folded away; the page count."""
        if not self.items:
            return 1
        pages = -(-len(self.items) // per_page)
        page = min(page, pages - 1)
        for item, largest, least in self.folded:
            item.setVisible(False)
            item.setMinimumSize(0, 0)
            item.setMaximumSize(0, 0)
        for n, (item, largest, least) in enumerate(self.items):
            shown = page * per_page <= n < (page + 1) * per_page
            item.setVisible(shown)
            if shown:
                item.setMaximumSize(largest)
                item.setMinimumSize(least)
            else:
                item.setMinimumSize(0, 0)
                item.setMaximumSize(0, 0)
        self._show_key()
        self.graphics.ci.layout.invalidate()
        return pages

    def _show_key(self) -> None:
        """The shown plots' legends as one line under them: at the room's text size a legend in the
        plot covered half its curves. The legends themselves are hidden while the widget is lent."""
        entries = []
        for item, _, _ in self.items:
            legend = getattr(item, "legend", None)
            if legend is None:
                continue
            legend.setVisible(False)
            if item.isVisible():
                for sample, label in legend.items:
                    pen = pg.mkPen(sample.item.opts.get("pen"))
                    entries.append((label.text, pen.color().name(), pen.style() != QtCore.Qt.SolidLine))
        if not entries:
            if getattr(self, "key", None) is not None:
                self.key.setVisible(False)
            return
        parts = [f"<span style='color:{colour}; font-weight:bold'>{'╍╍' if dashed else '━━'}</span>&nbsp;{label}"
                 for label, colour, dashed in entries]
        text = "&nbsp;&nbsp;&nbsp;".join(parts)
        size = f"{getattr(self, 'key_px', 26)}px"
        if getattr(self, "key", None) is None:
            cells = [cell for cell_list in self.graphics.ci.items.values() for cell in cell_list]
            row = max(r for r, _ in cells) + 1
            columns = max(c for _, c in cells) + 1
            self.key = pg.LabelItem(text, size=size, color=presentation.STYLE.theme.ink)
            self.graphics.ci.addItem(self.key, row, 0, 1, columns)
        else:
            self.key.setText(text, size=size, color=presentation.STYLE.theme.ink)
        self.key.setVisible(True)

    def fit_labels(self, width: int) -> None:
        """Labels whose height was fixed for the window: as tall as their text needs at ``width``."""
        for child, _ in self.fixed_heights:
            if shiboken6.isValid(child) and child.wordWrap():
                child.setMaximumHeight(16777215)  # a view may fix it again when its font changes
                child.setMinimumHeight(child.heightForWidth(width))

    def enlarge(self, px: int) -> None:
        """Every text of the widget at least ``px`` pixels (its own larger sizes kept in proportion)."""
        self.key_px = px
        self.widget.setFont(_font(px))
        # A style sheet that names a font family (a monospace table of letters) sets the size too:
        # the stage's size is added to it while the widget is on the stage.
        if not hasattr(self, "sheets"):
            self.sheets = [(child, child.styleSheet()) for child in self.widget.findChildren(QtWidgets.QWidget)
                           if "font" in child.styleSheet()]
        # Such a table is a line of letters a column each (32 tokens of "Why two layers"): at the
        # values' least size, 24 px at 720, it fits a 1280-px stage.
        small = max(24, round(px * 24 / 26))
        for child, sheet in self.sheets:
            if shiboken6.isValid(child):
                child.setStyleSheet(f"{sheet} font-size: {small}px;")
        for child, font in self.own_fonts:
            if shiboken6.isValid(child):
                own = font.pixelSize() if font.pixelSize() > 0 else font.pointSizeF() * 96 / 72
                big = QtGui.QFont(font)
                big.setPixelSize(max(px, round(own * px / 13)))
                child.setFont(big)

    def give_back(self) -> None:
        w = self.widget
        w.lent = False
        if not shiboken6.isValid(w):
            return
        w.hide()
        for child, height in self.fixed_heights:
            if shiboken6.isValid(child):
                child.setFixedHeight(height)
        for child, sheet in getattr(self, "sheets", []):
            if shiboken6.isValid(child):
                child.setStyleSheet(sheet)
        for item, mode in self.cached:
            if shiboken6.isValid(item):
                item.setCacheMode(mode)
        if getattr(self, "key", None) is not None and shiboken6.isValid(self.key):
            self.graphics.ci.removeItem(self.key)
        for item, largest, least in self.items + getattr(self, "folded", []):
            legend = getattr(item, "legend", None)
            if legend is not None and shiboken6.isValid(legend):
                legend.setVisible(True)
            item.setVisible(True)
            item.setMaximumSize(largest)
            item.setMinimumSize(least)
        for child in self.hidden_controls:
            if shiboken6.isValid(child):
                child.show()
        for child, font in self.own_fonts:
            if shiboken6.isValid(child):
                child.setFont(font)
        if self.had_font:
            w.setFont(self.font)
        else:
            w.setFont(QtGui.QFont())
            w.setAttribute(QtCore.Qt.WA_SetFont, False)
        if self.dock is not None:
            self.dock.setWidget(w)
        elif self.tabs is not None:
            tabs = self.tabs
            current = tabs.currentIndex()
            tabs.blockSignals(True)
            i = tabs.indexOf(self.placeholder)
            tabs.removeTab(i)
            tabs.insertTab(i, w, self.text)
            tabs.setTabToolTip(i, self.tip)
            tabs.setCurrentIndex(current)
            tabs.blockSignals(False)
        w.show() if (self.dock is not None or (self.tabs is not None and self.tabs.currentWidget() is w)) else None
        self.placeholder.deleteLater()
        presentation.restyle(w)


class LentViews:
    """The views ``present`` (:class:`~.present.Present`) shows as the window's own widget, lent to its stage
    (``lent``: the widget on loan, given back when the stage shows another view or closes)."""

    def __init__(self, present):
        self.present = present
        self.lent: _Lent | None = None

    def widget(self, view: str):
        """The window's widget that shows ``view`` on the stage (None: not for this model)."""
        p = self.present
        w = p.window
        if view == GEOMETRY:
            return w.geometry_view
        if view == VARIANCE:
            return w.variance_plot
        if view in (DRIFT, MEANING):
            room = w.trained.room
            return room.drift_plot if view == DRIFT else room.meaning_view
        panel = p.training_panel(view)
        return panel

    def render(self, view: str, s: dict, zoom: float) -> None:
        """Show ``view`` on the stage as the window's own widget, lent, at the stage's text size ``zoom``."""
        p = self.present
        stage, w = p.stage, p.window
        widget = self.widget(view)
        if widget is None:
            stage.set_title(view)
            stage.set_caption("Not available for this model.")
            stage.set_content(None)
            return
        if self.lent is None or self.lent.widget is not widget:
            self.give_back()
            self.lent = _Lent(widget)
            stage.set_content(widget)
        # Drawn at the stage's text size: what the view makes as it draws (labels, arrows' names)
        # takes the stage's size; what it had is restyled once, when it comes to the stage (or the
        # stage's size changes), not on every edit.
        styled = (round(zoom, 4), s["caption"])
        with _AtZoom(zoom):
            if hasattr(widget, "render") and widget in getattr(w, "views", []):
                w.render_view(widget)
            elif view in (DRIFT, MEANING):
                w.trained.room.render_shown(force=True)
            if getattr(self.lent, "styled", None) != styled:
                self.lent.enlarge(s["caption"])
                presentation.restyle(widget)
                self.lent.styled = styled
            self.lent.fit_labels(stage.body.width() - 24)
        stage.set_title(view if view.startswith(TRAINING_PREFIX) else p._title(view))
        p.pages = 1
        if view.startswith(TRAINING_PREFIX):
            self._render_training(view, widget, s, zoom)
        else:
            # A view of several plots (the √d_k variance and saturation) shows them one at a time.
            p.pages = self.lent.show_items(p.page, 1) if len(self.lent.items) > 1 else 1
            p.page = min(p.page, p.pages - 1)
            hint = p.figures.hint(view)
            stage.set_caption(f"plot {p.page + 1} of {p.pages} (← →) · {hint}" if p.pages > 1 else hint)

    def _render_training(self, view: str, panel, s: dict, zoom: float) -> None:
        """A training panel: its curves one plot a page, then each of its heatmaps as a page figure."""
        p = self.present
        stage, lent = p.stage, self.lent
        per = TRAINING_PLOTS_PER_PAGE
        n_plots = -(-len(lent.items) // per) if lent.items else 0
        heatmaps = [hm for hm in lent.heatmaps if hm.data is not None]
        pages = max(n_plots + len(heatmaps), 1)
        page = p.page = min(p.page, pages - 1)
        where = f"page {page + 1} of {pages} (← →)"
        if page < n_plots or not heatmaps:
            if stage.content is not panel:
                stage.set_content(panel)
                p.figures.last_sheet = None
            lent.show_items(page, per)
            stage.set_caption(f"{where} · Play / Pause, Step, Reset below · Esc leaves")
        else:
            hm = heatmaps[page - n_plots]
            n = hm.data.values.shape[0]
            p.centre = min(max(p.centre, 0), n - 1)
            p.figures.render_sheet(view, s, zoom, tiles=[sheets.Tile(hm)], centre=p.centre,
                                   title=training_page_title(view.removeprefix(TRAINING_PREFIX), hm.title))
            caption = stage.caption.text().strip()
            stage.set_caption(" · ".join(part for part in (where, caption) if part))
        p.page, p.pages = page, pages

    def give_back(self) -> None:
        """The widget on loan back in its place in the window."""
        p = self.present
        lent, self.lent = self.lent, None
        if lent is not None:
            if p.stage is not None and p.stage.content is lent.widget:
                p.stage.body_layout.removeWidget(lent.widget)
                p.stage.content = None
            lent.give_back()
