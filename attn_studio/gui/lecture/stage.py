"""The stage of Present: its sizes from the screen's height, its window (title and the scene's number,
body, caption line, control strip) and the soft pointer that follows the mouse. The caption line's
text rules (hints, ranges, direction) are in ``stage_caption``; what the presenter's keys lay over the
stage (a black or white screen, the list of keys, a banner that says what was refused) is a
``stage_overlays.StageOverlays`` the stage holds.

Sizes follow the AV standard for displays a room must read (AVIXA DISCAS, basic decision making):
an element at least 3 % of the image height for a back row six image heights away. At 720 px:
token labels of a 31 px font, cell values of 26 px, titles larger; 1080p and 4K the same proportions.
"""

from __future__ import annotations

import math

import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from ..qt.worker import keep_quiet
from ..widgets import discard
from .basics import (
    ATTENTION, COMPARE, DRIFT, GEOMETRY, HEADS, MEANING, MODEL, OUTPUTS, POSITIONS, STAGE_QUIET_S, STEPS, _font,
)
from .stage_caption import _muted, is_key_hint, is_range, text_direction
from .stage_overlays import BANNER_SECONDS, SceneNumber, StageOverlays
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


VIEW_NAMES = (ATTENTION, STEPS, OUTPUTS, COMPARE, POSITIONS, GEOMETRY, HEADS, MODEL, DRIFT, MEANING, "Training")


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
        # The title, centred, and the scene's number "n / N" in the top right corner (N turns it off);
        # a blank as wide as the number on the left keeps the title in the middle.
        title_row = self.title_row = QtWidgets.QHBoxLayout()
        title_row.setContentsMargins(0, 0, 0, 0)
        self.scene_number = SceneNumber()
        self.number, self.number_room = self.scene_number.label, self.scene_number.room
        title_row.addWidget(self.number_room)
        self.title = QtWidgets.QLabel()
        self.title.setObjectName("presentTitle")
        self.title.setAlignment(QtCore.Qt.AlignCenter)
        self.title.setTextFormat(QtCore.Qt.PlainText)
        # Its width is the row's, never its text's: a long title must not push the number out of its corner
        # (set_title leaves parts out until it fits).
        self.title.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Preferred)
        self.whole_title = ""  # the title asked for (set_title); the label shows what of it fits
        title_row.addWidget(self.title, 1)
        title_row.addWidget(self.number, 0, QtCore.Qt.AlignTop)
        layout.addLayout(title_row)
        self.body = QtWidgets.QWidget()
        self.body.setObjectName("presentBody")
        self.body_layout = QtWidgets.QVBoxLayout(self.body)
        self.body_layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.body, 1)
        # The caption line: what the view shows (the scene's caption, then the view's notes), laid out in
        # its own direction, and apart from it, in a label of their own, the keys' hints: a right-to-left
        # caption keeps its words together (one label of both had the hints in its middle).
        self.caption_row = QtWidgets.QWidget()
        self.caption_row.setObjectName("presentCaptionRow")
        row = QtWidgets.QHBoxLayout(self.caption_row)
        row.setContentsMargins(0, 0, 0, 0)
        self.caption = QtWidgets.QLabel()
        self.caption.setObjectName("presentCaption")
        self.caption.setAlignment(QtCore.Qt.AlignLeft | QtCore.Qt.AlignVCenter)  # the leading side: right for Arabic
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(QtCore.Qt.PlainText)
        row.addWidget(self.caption, 1)
        self.hints = QtWidgets.QLabel()
        self.hints.setObjectName("presentHints")
        self.hints.setTextFormat(QtCore.Qt.PlainText)
        self.hints.setLayoutDirection(QtCore.Qt.LeftToRight)  # the keys' names read left to right
        self.hints.setAlignment(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter)
        row.addWidget(self.hints, 0)
        layout.addWidget(self.caption_row)
        self.strip = ControlStrip(present)
        layout.addWidget(self.strip)
        self.content: QtWidgets.QWidget | None = None
        self.pointer = PointerOverlay(self)
        # What the presenter's keys lay over the stage, above the pointer: a refusal said for a few seconds,
        # the list of keys (F1), a black or white screen (B, W).
        self.overlays = StageOverlays(self)
        self.banner, self._banner_timer = self.overlays.banner, self.overlays.banner_timer
        self._held = ""  # a line said on the caption line for now (Ctrl+M's answer), while _hold runs
        self._hold = QtCore.QTimer(self, singleShot=True)
        self._hold.timeout.connect(lambda: self.present.render())
        self.keys, self.blank = self.overlays.keys, self.overlays.blank
        self.setMouseTracking(True)
        QtWidgets.QApplication.instance().installEventFilter(self)  # the pointer follows the mouse

    def resizeEvent(self, event):  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self.pointer.radius = max(20, round(0.047 * self.height()))  # 34 px at 720 px
        self.pointer.setGeometry(self.rect())
        self.pointer.raise_()
        self.overlays.fit()
        self._raise_overlays()

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
        self.title_row.setSpacing(m)
        self._show_title()  # refitted to the new size
        for label in (self.caption, self.hints, self.number):
            label.setFont(_font(s["caption"]))
        self.overlays.apply_sizes(s)
        self.body.setFont(_font(s["caption"]))
        # The stage is the plots' canvas colour all over: no grey frame around a white figure.
        theme = presentation.STYLE.theme
        palette = self.palette()
        palette.setColor(QtGui.QPalette.Window, QtGui.QColor(theme.canvas))
        palette.setColor(QtGui.QPalette.WindowText, QtGui.QColor(theme.ink))
        self.setPalette(palette)
        for label in (self.hints, self.number):
            muted = label.palette()
            muted.setColor(QtGui.QPalette.WindowText, _muted(theme))
            label.setPalette(muted)
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
                _discard(old, empty=False)  # the room may still read the figure it showed
        self.content = widget
        if widget is not None:
            self.body_layout.addWidget(widget, 1, QtCore.Qt.AlignCenter if getattr(widget, "fixed", False)
                                       else QtCore.Qt.Alignment())
            widget.show()
            for child in [widget] + widget.findChildren(QtWidgets.QWidget):
                child.setMouseTracking(True)  # the pointer follows a mouse moved without a button
            self._raise_overlays()

    def _raise_overlays(self) -> None:
        # Bottom to top: the view, the pointer, the banner, the list of keys, a black or white screen.
        self.pointer.raise_()
        self.overlays.raise_()

    def _scene_caption(self) -> str:
        """The caption of the scene on the stage ("" when none, or the stage shows another view)."""
        scene = self.present.current_scene()
        if scene is not None and scene.caption and scene.view == self.present.view:
            return scene.caption
        return ""

    def set_caption(self, text: str, hints: str = "") -> None:
        """The line under the view: the scene's caption and ``text`` (the view's notes, " · " between
        them) in the caption, in the caption's own direction; the keys' hints (``hints``, and the parts of
        ``text`` that tell a key) apart, in a label of their own. Parts that do not fit the stage's width
        are left out from the end, the hints first (a caption is never cut or made smaller)."""
        own = self._scene_caption()
        shown = own and text.strip()
        if own:
            text = text.replace(own, " · ")  # given back as it was shown: the scene's line is put first below
        parts = [p for p in text.split(" · ") if p.strip()]
        hint_parts = [p for p in parts if is_key_hint(p)] + [p for p in hints.split(" · ") if p.strip()]
        notes = [p for p in parts if not is_key_hint(p)]
        if shown:
            notes.insert(0, own)  # the scene's own line first: it is what the room reads
        if hint_parts:
            hint_parts.append("F1 keys")  # the whole list, for a lecturer who forgot one
        metrics = QtGui.QFontMetrics(self.caption.font())
        margin = self.sizes()["margin"]
        room = self.width() - 2 * margin - 8
        gap = 2 * margin  # between the caption and the hints: two runs, not one sentence
        self.caption_row.layout().setSpacing(gap)

        def width() -> int:
            used = metrics.horizontalAdvance(" · ".join(notes)) if notes else 0
            return used + (gap + metrics.horizontalAdvance(" · ".join(hint_parts)) if hint_parts else 0)

        while hint_parts and width() > room:
            hint_parts.pop()
        while len(notes) > 1 and width() > room:
            if not any(not is_range(n) for n in notes[1:]):
                break  # the windowed tokens' ranges are never left out: the caption takes a second line
            notes.pop(max(i for i, n in enumerate(notes) if i and not is_range(n)))
        line = " · ".join(notes)
        if self._hold.isActive():
            line, hint_parts = self._held, []  # a line said for now stays its time, whatever is drawn meanwhile
        direction = text_direction(line)
        self.caption.setLayoutDirection(direction)
        self.caption_row.setLayoutDirection(direction)  # the hints at the caption's end, whichever side that is
        self.caption.setText(line)
        self.hints.setText(" · ".join(hint_parts))
        self.hints.setVisible(bool(hint_parts))
        # As tall as the caption needs (a view lent to the stage is not measured by body_size first): the
        # height body_size gave a figure's room, unless the caption is not the scene's alone.
        self.caption_row.setFixedHeight(self._caption_height(line) + 4)
        self.show_number()

    # -- the title: whole where it fits, else with parts left out (never cut, never smaller) ----------
    def title_room(self) -> int:
        """The width a title has: the stage's less its margins and, while the scene's number shows, the
        number's corner."""
        room = self.width() - 2 * self.sizes()["margin"] - 8
        if not self.number.isHidden():
            room -= self.number.width() + max(self.title_row.spacing(), 0)
        return room

    def title_fits(self, text: str) -> bool:
        """True when ``text`` fits the stage's title line whole (:meth:`title_room`) at the title's size."""
        return QtGui.QFontMetrics(_font(self.sizes()["title"], True)).horizontalAdvance(text) <= self.title_room()

    def fitted_title(self, text: str) -> str:
        """``text`` as the title line shows it: whole where it fits; else without the view's name ("Attention: "),
        then without its " · " parts from the end, then (one part left) without what follows its ": ". Letters
        are never cut and the font never made smaller: a title that says less, but says it whole."""
        if self.title_fits(text):
            return text
        head, colon, rest = text.partition(": ")
        if colon and head in VIEW_NAMES and rest:
            text = rest
        parts = text.split(" · ")
        while len(parts) > 1 and not self.title_fits(" · ".join(parts)):
            parts.pop()
        text = " · ".join(parts)
        if not self.title_fits(text) and ": " in text:
            text = text.split(": ", 1)[0]  # "Step 3 of 9", without the step's long name
        return text

    def set_title(self, text: str) -> None:
        """Make ``text`` the stage's title: shown whole where it fits the stage's width less the number's
        corner, else with parts left out (:meth:`fitted_title`); :attr:`whole_title` keeps it whole."""
        self.whole_title = str(text)
        self._show_title()

    def _show_title(self) -> None:
        shown = self.fitted_title(self.whole_title)
        self.title.setText(shown)
        self.title.setToolTip(self.whole_title if shown != self.whole_title else "")
        if not self.number.isHidden():
            # Centred between two blanks as wide as the number where that leaves it room; else the blank on
            # the left gives its room (the title a little right of the middle, but whole).
            width = QtGui.QFontMetrics(self.title.font()).horizontalAdvance(shown)
            centred = self.title_room() - self.number.width() - max(self.title_row.spacing(), 0)
            self.number_room.setVisible(width <= centred)

    def _caption_height(self, text: str) -> int:
        """The caption line's height for ``text``: one line, or as many as it needs at the stage's width
        (a caption is wrapped rather than cut)."""
        s = self.sizes()
        metrics = QtGui.QFontMetrics(_font(s["caption"]))
        room = self.width() - 2 * s["margin"] - 8
        if not text or metrics.horizontalAdvance(text) <= room:
            return metrics.height()
        flags = int(QtCore.Qt.TextWordWrap)
        return metrics.boundingRect(QtCore.QRect(0, 0, room, 10 * metrics.height()), flags, text).height()

    def say_for_now(self, text: str, seconds: float = 2) -> None:
        """``text`` alone on the caption line (the hints make room) for ``seconds``; then the view's own
        line again."""
        self._held = text
        self._hold.start(max(1, round(seconds * 1000)))
        self.caption.setLayoutDirection(text_direction(text))
        self.caption.setText(text)
        self.hints.setText("")
        self.hints.hide()

    def body_size(self, note: str = "") -> QtCore.QSize:
        """The room the body has for the view: the stage less its title, caption, strip and margins,
        as its layout gives them now; ``note`` (the windowed tokens' ranges) is said after the scene's
        caption, on a second line when both do not fit one."""
        s = self.sizes()
        # One line, or as many as the scene's caption (and the note) need at the stage's width: never cut.
        line = " · ".join(t for t in (self._scene_caption(), note) if t)
        self.caption_row.setFixedHeight(self._caption_height(line) + 4)
        self.title.setFixedHeight(QtGui.QFontMetrics(_font(s["title"], True)).height() + 4)
        self.main_layout.activate()
        return self.body.size()

    # -- what the presenter's keys lay over the stage ------------------------------------------------
    def show_number(self) -> None:
        """The scene's number "n / N" in the top right corner while a lecture is played (unless turned
        off with N)."""
        present = self.present
        panel = present.lecture_panel
        scene = present.current_scene()
        on = scene is not None and getattr(present, "number_on", True)
        self.scene_number.show(f"{panel.current + 1} / {len(panel.lecture.scenes)}" if on else None)
        self._show_title()

    def say(self, text: str, seconds: float = BANNER_SECONDS) -> None:
        """Say ``text`` on the stage for ``seconds``: a banner over the top of the view, at the caption's
        size (what was refused, said where the room and the lecturer are looking)."""
        if self.overlays.say(text, seconds):
            self._raise_overlays()

    def cover(self, colour: str) -> None:
        """A black or white screen over the whole stage ("black" or "white")."""
        self.overlays.cover(colour)
        self.setFocus()  # the next key comes here, even from a control of the strip

    def show_keys(self, rows) -> None:
        """List the stage's keys (``rows`` of (keys, what they do)) over it, at the caption's size."""
        self.overlays.show_keys(rows, self.sizes()["caption"])
        self.setFocus()

    def covered(self) -> bool:
        """True while a black or white screen or the list of keys covers the stage."""
        return self.overlays.covered()

    def uncover(self) -> None:
        """The stage again, as it was."""
        self.overlays.uncover()

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        # What a key brings is drawn with the machine to itself: the runs trained ahead wait meanwhile.
        keep_quiet(STAGE_QUIET_S)
        if not self.present.key(event):
            super().keyPressEvent(event)

    def closeEvent(self, event):  # noqa: N802 (Qt's name)
        # Closed by the window system (Alt+F4): the same as Esc.
        event.ignore()
        QtCore.QTimer.singleShot(0, self.present.leave)
