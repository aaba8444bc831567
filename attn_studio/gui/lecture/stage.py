"""The stage of Present: its sizes from the screen's height, its window (title, body, caption,
control strip) and the soft pointer that follows the mouse.

Sizes follow the AV standard for displays a room must read (AVIXA DISCAS, basic decision making):
an element at least 3 % of the image height for a back row six image heights away. At 720 px:
token labels of a 31 px font, cell values of 26 px, titles larger; 1080p and 4K the same proportions.
"""

from __future__ import annotations

import math

import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from ..widgets import discard
from .basics import _font
from .strip import ControlStrip

# Sizes as a fraction of the stage's height (720 px: labels 31, values 26, titles 36, strip ≤ 86).
LABEL_FRACTION = 0.043     # token labels: a 31 px font at 720 px, letters about 3 % of the height
VALUE_FRACTION = 0.036     # cell values: 26 px at 720 px
TITLE_FRACTION = 0.05      # the stage's title: 36 px at 720 px
CAPTION_FRACTION = 0.036   # the caption and the strip's controls: 26 px at 720 px
STRIP_FRACTION = 0.12      # the control strip's most
MARGIN_FRACTION = 0.012
TRAINING_PLOTS_PER_PAGE = 1  # a training panel's plots on the stage one at a time: its legend and title read at the room's size



def stage_sizes(height: int) -> dict:
    """Pixel sizes of the stage's text for a stage ``height`` pixels tall."""
    return {"label": math.ceil(LABEL_FRACTION * height), "value": math.ceil(VALUE_FRACTION * height),
            "title": math.ceil(TITLE_FRACTION * height), "caption": math.ceil(CAPTION_FRACTION * height),
            "strip": int(STRIP_FRACTION * height), "margin": max(4, round(MARGIN_FRACTION * height))}


def stage_zoom(label_px: float, dpi: float = 96.0) -> float:
    """The text zoom (presentation.STYLE.zoom) at which a plot's tick labels are ``label_px`` pixels."""
    return label_px / (presentation.BASE_TICK_PT * dpi / 72.0)


class _AtZoom:
    """Within: new plot items and restyles take the stage's text size."""

    def __init__(self, zoom: float):
        self.zoom = zoom

    def __enter__(self):
        self.saved = presentation.STYLE.zoom
        presentation.STYLE.zoom = self.zoom

    def __exit__(self, *exc):
        presentation.STYLE.zoom = self.saved


_discard = discard  # a figure the stage no longer shows, deleted now (see widgets.discard)


def token_window(n: int, fit: int, centre: int) -> tuple[int, int]:
    """(start, stop) of ``fit`` consecutive tokens of ``n`` around index ``centre`` (all of them when they fit)."""
    fit = max(1, int(fit))
    if n <= fit:
        return 0, n
    start = min(max(centre - fit // 2, 0), n - fit)
    return start, start + fit


class PointerOverlay(QtWidgets.QWidget):
    """A soft translucent circle where the mouse is, so a room sees what the lecturer points at.

    Transparent for the mouse: clicks and hovers reach the stage underneath. ``centre`` is None
    until the mouse moves over the stage.
    """

    def __init__(self, parent: QtWidgets.QWidget):
        super().__init__(parent)
        self.setObjectName("presentPointer")
        self.setAttribute(QtCore.Qt.WA_TransparentForMouseEvents)
        self.setAttribute(QtCore.Qt.WA_NoSystemBackground)
        self.centre: QtCore.QPoint | None = None
        self.radius = 34

    def move_to(self, pos: QtCore.QPoint | None) -> None:
        """Put the circle's centre at ``pos`` (this widget's coordinates); None hides it."""
        old = self.centre
        self.centre = None if pos is None else QtCore.QPoint(pos)
        for centre in (old, self.centre):
            if centre is not None:
                r = self.radius + 2
                self.update(QtCore.QRect(centre.x() - r, centre.y() - r, 2 * r, 2 * r))

    def paintEvent(self, event):  # noqa: N802 (Qt's name)
        if self.centre is None:
            return
        painter = QtGui.QPainter(self)
        painter.setRenderHint(QtGui.QPainter.Antialiasing)
        gradient = QtGui.QRadialGradient(QtCore.QPointF(self.centre), self.radius)
        gradient.setColorAt(0.0, QtGui.QColor(255, 214, 0, 120))
        gradient.setColorAt(0.7, QtGui.QColor(255, 214, 0, 70))
        gradient.setColorAt(1.0, QtGui.QColor(255, 214, 0, 0))
        painter.setPen(QtCore.Qt.NoPen)
        painter.setBrush(gradient)
        painter.drawEllipse(QtCore.QPointF(self.centre), self.radius, self.radius)


class Stage(QtWidgets.QWidget):
    """The stage window: a title, the view laid out for the room, a caption and the control strip."""

    def __init__(self, present):
        super().__init__(None, QtCore.Qt.Window | QtCore.Qt.FramelessWindowHint)
        self.setObjectName("presentStage")
        self.setWindowTitle("Attention Studio — Present")
        self.present = present
        self.setAutoFillBackground(True)
        self.setFocusPolicy(QtCore.Qt.StrongFocus)
        self.setAttribute(QtCore.Qt.WA_DeleteOnClose, False)
        layout = self.main_layout = QtWidgets.QVBoxLayout(self)
        self.title = QtWidgets.QLabel()
        self.title.setObjectName("presentTitle")
        self.title.setAlignment(QtCore.Qt.AlignCenter)
        self.title.setTextFormat(QtCore.Qt.PlainText)
        layout.addWidget(self.title)
        self.body = QtWidgets.QWidget()
        self.body.setObjectName("presentBody")
        self.body_layout = QtWidgets.QVBoxLayout(self.body)
        self.body_layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.body, 1)
        self.caption = QtWidgets.QLabel()
        self.caption.setObjectName("presentCaption")
        self.caption.setAlignment(QtCore.Qt.AlignCenter)
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(QtCore.Qt.PlainText)
        layout.addWidget(self.caption)
        self.strip = ControlStrip(present)
        layout.addWidget(self.strip)
        self.content: QtWidgets.QWidget | None = None
        self.pointer = PointerOverlay(self)
        self.setMouseTracking(True)
        QtWidgets.QApplication.instance().installEventFilter(self)  # the pointer follows the mouse

    def resizeEvent(self, event):  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self.pointer.radius = max(20, round(0.047 * self.height()))  # 34 px at 720 px
        self.pointer.setGeometry(self.rect())
        self.pointer.raise_()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        # Every event of the application passes here: the cheap tests first (an event's type() is
        # converted to a Python enum on each call, a thousand times a scene).
        if isinstance(event, QtGui.QMouseEvent):
            if isinstance(watched, QtWidgets.QWidget) and (watched is self or self.isAncestorOf(watched)) \
                    and event.type() == QtCore.QEvent.MouseMove:
                self.pointer.move_to(self.mapFromGlobal(event.globalPosition().toPoint()))
                self.pointer.raise_()
        elif watched is self and event.type() == QtCore.QEvent.Leave:
            self.pointer.move_to(None)
        return False

    def sizes(self) -> dict:
        """The stage's text sizes for its present height (the screen's, once full screen)."""
        return stage_sizes(max(self.height(), 200))

    def apply_sizes(self) -> dict:
        """Fonts and margins from the stage's height."""
        s = self.sizes()
        m = s["margin"]
        self.main_layout.setContentsMargins(m, m // 2, m, m // 2)
        self.main_layout.setSpacing(m // 2)
        self.title.setFont(_font(s["title"], bold=True))
        self.caption.setFont(_font(s["caption"]))
        self.body.setFont(_font(s["caption"]))
        # The stage is the plots' canvas colour all over: no grey frame around a white figure.
        theme = presentation.STYLE.theme
        palette = self.palette()
        palette.setColor(QtGui.QPalette.Window, QtGui.QColor(theme.canvas))
        palette.setColor(QtGui.QPalette.WindowText, QtGui.QColor(theme.ink))
        self.setPalette(palette)
        return s

    def set_content(self, widget: QtWidgets.QWidget | None) -> None:
        """Show ``widget`` in the body (the previous content is removed; a lent widget is not deleted)."""
        old = self.content
        if old is widget:
            return
        if old is not None and shiboken6.isValid(old):
            self.body_layout.removeWidget(old)
            old.hide()
            if not getattr(old, "lent", False):
                _discard(old)
        self.content = widget
        if widget is not None:
            self.body_layout.addWidget(widget, 1, QtCore.Qt.AlignCenter if getattr(widget, "fixed", False)
                                       else QtCore.Qt.Alignment())
            widget.show()
            for child in [widget] + widget.findChildren(QtWidgets.QWidget):
                child.setMouseTracking(True)  # the pointer follows a mouse moved without a button
            self.pointer.raise_()

    def set_caption(self, text: str) -> None:
        """One line under the view: what it shows first, then the keys; parts that do not fit the
        stage's width are left out from the end (a caption is never wrapped, cut or made smaller)."""
        scene = self.present.current_scene()
        if scene is not None and scene.caption and scene.view == self.present.view and text.strip():
            text = f"{scene.caption} · {text}"  # the scene's own line first: it is what the room reads
        parts = text.split(" · ")
        metrics = QtGui.QFontMetrics(self.caption.font())
        room = self.width() - 2 * self.sizes()["margin"] - 8
        while len(parts) > 1 and metrics.horizontalAdvance(" · ".join(parts)) > room:
            parts.pop()
        self.caption.setText(" · ".join(parts))

    def body_size(self) -> QtCore.QSize:
        """The room the body has for the view: the stage less its title, caption, strip and margins,
        as its layout gives them now."""
        s = self.sizes()
        line = QtGui.QFontMetrics(_font(s["caption"])).height()
        self.caption.setFixedHeight(line + 4)  # one line: the caption never takes the view's room
        self.title.setFixedHeight(QtGui.QFontMetrics(_font(s["title"], True)).height() + 4)
        self.main_layout.activate()
        return self.body.size()

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        if not self.present.key(event):
            super().keyPressEvent(event)

    def closeEvent(self, event):  # noqa: N802 (Qt's name)
        # Closed by the window system (Alt+F4): the same as Esc.
        event.ignore()
        QtCore.QTimer.singleShot(0, self.present.leave)
