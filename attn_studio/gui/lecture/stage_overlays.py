"""What the presenter's keys lay over the stage: a banner that says what was refused, the list of the
stage's keys (F1 or ?) and a black or white screen (B, W). :class:`StageOverlays` owns the three and the
banner's timer; the stage holds one and lays it above the soft pointer. :class:`SceneNumber` is the
scene's number in the stage's top right corner (N turns it off) and the blank that balances it."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from .. import presentation
from .basics import _font
from .stage_caption import _muted, text_direction

BANNER_SECONDS = 4  # a refusal said on the stage stays this long (long enough to read twice)
BLANK_COLOURS = {"black": "#000000", "white": "#ffffff"}


class BlankScreen(QtWidgets.QWidget):
    """A black or white screen over the whole stage (B or ".", W or ","), as PowerPoint and a clicker's
    blank button give: the room looks at the lecturer. A click, or any key, brings the stage back."""

    def __init__(self, stage):
        super().__init__(stage)
        self.setObjectName("presentBlank")
        self.stage = stage
        self.colour = "black"
        self.setAutoFillBackground(True)
        self.hide()

    def show_colour(self, colour: str) -> None:
        """Cover the stage in ``colour`` ("black" or "white")."""
        self.colour = colour
        palette = self.palette()
        palette.setColor(QtGui.QPalette.Window, QtGui.QColor(BLANK_COLOURS[colour]))
        self.setPalette(palette)
        self.setGeometry(self.stage.rect())
        self.show()
        self.raise_()

    def mousePressEvent(self, event):  # noqa: N802 (Qt's name)
        self.stage.uncover()


class KeysOverlay(QtWidgets.QFrame):
    """F1 or ?: the stage's keys, listed over it at the caption's size until a key is pressed."""

    def __init__(self, stage):
        super().__init__(stage)
        self.setObjectName("presentKeys")
        self.stage = stage
        self.setAutoFillBackground(True)
        layout = QtWidgets.QVBoxLayout(self)
        self.label = QtWidgets.QLabel()
        self.label.setObjectName("presentKeysText")
        self.label.setTextFormat(QtCore.Qt.RichText)
        self.label.setAlignment(QtCore.Qt.AlignCenter)
        layout.addWidget(self.label, 0, QtCore.Qt.AlignCenter)
        self.rows: list[tuple[str, str]] = []
        self.hide()

    def show_keys(self, rows, px: int) -> None:
        """List ``rows`` of (keys, what they do) at a ``px`` pixel font over the whole stage."""
        self.rows = list(rows)
        theme = presentation.STYLE.theme
        palette = self.palette()
        # Opaque: the figure's words showing through would be text over text.
        palette.setColor(QtGui.QPalette.Window, QtGui.QColor(theme.canvas))
        palette.setColor(QtGui.QPalette.WindowText, QtGui.QColor(theme.ink))
        self.setPalette(palette)
        self.label.setFont(_font(px))
        pad = max(2, px // 10)
        body = "".join(f"<tr><td align='right' style='padding-right:{px}px'><b>{_html(k)}</b></td>"
                       f"<td>{_html(what)}</td></tr>" for k, what in self.rows)
        self.label.setText(f"<p style='font-size:{round(px * 1.2)}px'><b>Keys on the stage</b> "
                           f"<span style='color:{_muted(theme).name()}'>(any key closes this)</span></p>"
                           f"<table cellspacing='0' cellpadding='{pad}'>{body}</table>")
        self.setGeometry(self.stage.rect())
        self.show()
        self.raise_()

    def text(self) -> str:
        """The keys listed, one "keys: what" a line (as a test or a screen reader reads them)."""
        return "\n".join(f"{k}: {what}" for k, what in self.rows)

    def mousePressEvent(self, event):  # noqa: N802 (Qt's name)
        self.stage.uncover()


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class StageOverlays:
    """The banner, the list of keys and the black or white screen over ``stage``, bottom to top, and the
    banner's timer. A click on a cover, or any key, brings the stage back (``stage.uncover``)."""

    def __init__(self, stage: QtWidgets.QWidget):
        self.stage = stage
        self.banner = QtWidgets.QLabel(stage)
        self.banner.setObjectName("presentBanner")
        self.banner.setTextFormat(QtCore.Qt.PlainText)
        self.banner.setWordWrap(True)
        self.banner.setAlignment(QtCore.Qt.AlignCenter)
        self.banner.setAttribute(QtCore.Qt.WA_TransparentForMouseEvents)
        self.banner.setStyleSheet("QLabel { background: #b00020; color: #ffffff; border-radius: 6px; }")
        self.banner.hide()
        self.banner_timer = QtCore.QTimer(stage, singleShot=True)
        self.banner_timer.timeout.connect(self.banner.hide)
        self.keys = KeysOverlay(stage)
        self.blank = BlankScreen(stage)

    def apply_sizes(self, s: dict) -> None:
        """The banner's font and margins from the stage's sizes ``s`` (:func:`stage.stage_sizes`)."""
        m = s["margin"]
        self.banner.setFont(_font(s["caption"]))
        self.banner.setContentsMargins(m, m // 2, m, m // 2)

    def raise_(self) -> None:
        """Bottom to top: the banner, the list of keys, a black or white screen."""
        for overlay in (self.banner, self.keys, self.blank):
            overlay.raise_()

    def fit(self) -> None:
        """After the stage is resized: the covers over the whole of it, the banner across its top."""
        for cover in (self.keys, self.blank):
            cover.setGeometry(self.stage.rect())
        self.place_banner()

    def say(self, text: str, seconds: float) -> bool:
        """Show ``text`` (its spaces run together) in the banner for ``seconds``; False when nothing is left to say."""
        text = " ".join(str(text).split())
        if not text:
            return False
        self.banner.setText(text)
        self.banner.setLayoutDirection(text_direction(text))
        self.place_banner()
        self.banner.show()
        self.banner_timer.start(max(1, round(seconds * 1000)))
        return True

    def place_banner(self) -> None:
        """The banner across the stage under its title (at the top when the title is hidden)."""
        stage = self.stage
        m = stage.sizes()["margin"]
        width = stage.width() - 2 * m
        height = self.banner.heightForWidth(width)
        top = stage.title.geometry().bottom() + m // 2 if stage.title.isVisible() else m
        self.banner.setGeometry(m, top, width, max(height, self.banner.sizeHint().height()))

    def cover(self, colour: str) -> None:
        """A black or white screen over the whole stage ("black" or "white")."""
        self.keys.hide()
        self.blank.show_colour(colour)

    def show_keys(self, rows, px: int) -> None:
        """List ``rows`` of (keys, what they do) over the stage at a ``px`` pixel font."""
        self.keys.show_keys(rows, px)

    def covered(self) -> bool:
        """True while a black or white screen or the list of keys covers the stage."""
        return self.blank.isVisible() or self.keys.isVisible()

    def uncover(self) -> None:
        """Both covers away."""
        self.blank.hide()
        self.keys.hide()


class SceneNumber:
    """The scene's number "n / N" for the top right corner of the stage's title row, and a blank as wide
    (``room``) for the row's left end that keeps the title in the middle. Both hidden until :meth:`show`."""

    def __init__(self):
        self.room = QtWidgets.QWidget()
        self.room.hide()
        self.label = QtWidgets.QLabel()
        self.label.setObjectName("presentNumber")
        self.label.setTextFormat(QtCore.Qt.PlainText)
        self.label.setAlignment(QtCore.Qt.AlignRight | QtCore.Qt.AlignTop | QtCore.Qt.AlignAbsolute)
        self.label.hide()

    def show(self, text: str | None) -> None:
        """Show ``text`` in the corner, the blank as wide as it; None hides both."""
        on = text is not None
        if on:
            self.label.setText(text)
            width = self.label.sizeHint().width()
            self.label.setFixedWidth(width)
            self.room.setFixedWidth(width)
        self.label.setVisible(on)
        self.room.setVisible(on)
