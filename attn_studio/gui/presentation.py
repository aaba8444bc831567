"""Lecture-room presentation: themes, text zoom and colour maps for every view at once.

Qt widgets follow the application palette and font; pyqtgraph items do not,
so :func:`restyle` walks every plot scene and applies the same colours and
text size there (axes, titles, captions, cell values).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from ..formatting import DEFAULT_DIGITS
from .qt.pg import pg


@dataclass(frozen=True)
class Theme:
    """Colours of one theme: Qt palette roles and the plots' background and ink."""

    name: str
    window: str
    base: str
    text: str
    button: str
    highlight: str
    canvas: str
    ink: str
    outline: str  # the selected-row outline in heatmaps


THEMES = {
    "light": Theme("light", "#efefef", "#ffffff", "#111111", "#e4e4e4", "#2a6fdb", "#ffffff", "#111111", "#ff4040"),
    # Dark for a projector: dark grey rather than black behind the heatmaps and light grey
    # rather than white text, so that large areas and letters do not glare (text contrast
    # about 9.5:1 instead of 14:1, still far above the 4.5:1 that reading needs).
    "dark": Theme("dark", "#2f2f2f", "#282828", "#d2d2d2", "#3c3c3c", "#3f7fe0", "#2a2a2a", "#cccccc", "#ff6a6a"),
    "high contrast": Theme("high contrast", "#000000", "#000000", "#ffffff", "#000000", "#ffff00",
                           "#000000", "#ffffff", "#ffff00"),
}

# Colour-blind-safe, perceptually uniform maps for the weights (0..1).
WEIGHT_COLORMAPS = ("viridis", "cividis", "magma", "inferno", "plasma")

ZOOM_STEPS = (0.6, 0.7, 0.8, 0.9, 1.0, 1.15, 1.3, 1.5, 1.75, 2.0, 2.5, 3.0)
BASE_TITLE_PT = 10.0
BASE_TICK_PT = 9.0
BASE_LABEL_PT = 9.0
# Token labels (the heatmaps' axes) are what a room reads first: 10.5 pt is 14 px at 96 dpi, the
# least a mirrored 1280×720 projector shows legibly (numeric ticks of the plots stay at BASE_TICK_PT).
BASE_TOKEN_PT = 10.5


class _Style:
    """The presentation in force; new plot items read it when they are created."""

    theme: Theme = THEMES["light"]
    zoom: float = 1.0
    weights_cmap: str = "viridis"
    base_font: QtGui.QFont | None = None
    digits: int | None = None  # the precision setting (None: each view's own default)


STYLE = _Style()
# Heatmaps register here so that a colour-map change reaches all of them.
_WEIGHT_HEATMAPS: "weakref.WeakSet" = weakref.WeakSet()


def register_weights_heatmap(heatmap) -> None:
    """Let :func:`set_weights_colormap` recolour ``heatmap`` (one showing weights in 0..1)."""
    _WEIGHT_HEATMAPS.add(heatmap)


def title_size() -> str:
    return f"{BASE_TITLE_PT * STYLE.zoom:.1f}pt"


def tick_font() -> QtGui.QFont:
    font = QtGui.QFont(STYLE.base_font or QtGui.QGuiApplication.font())
    font.setPointSizeF(BASE_TICK_PT * STYLE.zoom)
    return font


def token_font() -> QtGui.QFont:
    """The font of token labels on the heatmaps' axes (at the current zoom)."""
    font = QtGui.QFont(STYLE.base_font or QtGui.QGuiApplication.font())
    font.setPointSizeF(BASE_TOKEN_PT * STYLE.zoom)
    return font


def label_style() -> dict:
    return {"font-size": f"{BASE_LABEL_PT * STYLE.zoom:.1f}pt", "color": STYLE.theme.ink}


def palette(theme: Theme) -> QtGui.QPalette:
    p = QtGui.QPalette()
    c = QtGui.QColor
    roles = QtGui.QPalette.ColorRole
    p.setColor(roles.Window, c(theme.window))
    p.setColor(roles.WindowText, c(theme.text))
    p.setColor(roles.Base, c(theme.base))
    p.setColor(roles.AlternateBase, c(theme.button))
    p.setColor(roles.Text, c(theme.text))
    p.setColor(roles.Button, c(theme.button))
    p.setColor(roles.ButtonText, c(theme.text))
    p.setColor(roles.ToolTipBase, c(theme.base))
    p.setColor(roles.ToolTipText, c(theme.text))
    p.setColor(roles.Highlight, c(theme.highlight))
    p.setColor(roles.HighlightedText, c(theme.base if theme.name != "high contrast" else "#000000"))
    p.setColor(roles.PlaceholderText, c("#888888"))
    disabled = QtGui.QPalette.ColorGroup.Disabled
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        p.setColor(disabled, role, c("#808080"))
    return p


def apply(app: QtWidgets.QApplication, root: QtWidgets.QWidget, *, theme: str | None = None,
          zoom: float | None = None) -> None:
    """Apply a theme and/or a zoom to the whole application and restyle every plot under ``root``."""
    if STYLE.base_font is None:
        STYLE.base_font = QtGui.QFont(app.font())
    if theme is not None:
        if theme not in THEMES:
            raise ValueError(f"unknown theme {theme!r}; choose one of {', '.join(THEMES)}")
        STYLE.theme = THEMES[theme]
        # Setting the style or palette again re-polishes every widget of the
        # application (slow with a window open): only when the theme changes.
        if app.property("attnStudioTheme") != theme:
            # The one style whose palette is fully ours on every platform; set once: setting a style
            # again re-polishes every widget of the application (a theme switch paid it each time).
            if app.style().name().lower() != "fusion":
                app.setStyle("Fusion")
            app.setPalette(palette(STYLE.theme))
            app.setProperty("attnStudioTheme", theme)
    if zoom is not None:
        STYLE.zoom = float(min(max(zoom, ZOOM_STEPS[0]), ZOOM_STEPS[-1]))
        font = QtGui.QFont(STYLE.base_font)
        font.setPointSizeF(STYLE.base_font.pointSizeF() * STYLE.zoom)
        if app.font() != font:
            app.setFont(font)
        # The application font reaches widgets one event-loop turn later; the
        # window's own font reaches its children at once.
        root.setFont(font)
    restyle(root)


def restyle(root: QtWidgets.QWidget) -> None:
    """Give every plot under ``root`` the current theme's colours and the current text size."""
    theme = STYLE.theme
    ink = QtGui.QColor(theme.ink)
    for view in root.findChildren(pg.GraphicsView):
        view.setBackground(theme.canvas)
        for item in view.scene().items():
            if isinstance(item, pg.AxisItem):
                item.setPen(ink)
                item.setTextPen(ink)
                # An axis of token labels (a TokenAxis: it has relabel()) takes the token font.
                item.setStyle(tickFont=token_font() if hasattr(item, "relabel") else tick_font())
                item.labelStyle = label_style()
                item._updateLabel()
                if hasattr(item, "relabel"):
                    item.relabel()
            elif isinstance(item, pg.LabelItem):
                if item.text:
                    item.setText(item.text, size=title_size(), color=theme.ink)
            elif isinstance(item, pg.TextItem):
                item.setColor(ink)
                font = QtGui.QFont(item.textItem.font())
                font.setPointSizeF(BASE_LABEL_PT * STYLE.zoom)
                item.setFont(font)
            elif hasattr(item, "set_presentation"):
                item.set_presentation(STYLE.zoom, QtGui.QColor(theme.outline))
        # A colour bar labelled at its ends (views.heatmap.set_bar_levels) is as wide as its labels
        # in its font: measured again at the new text size, or the heatmap beside it keeps the old room.
        for item in view.scene().items():
            relabel = getattr(item, "_relabel_with", None)  # set by views.heatmap.set_bar_levels
            if isinstance(item, pg.ColorBarItem) and relabel is not None:
                relabel(item, item._labelled[1])
    for table in root.findChildren(QtWidgets.QTableView):
        # A table that sizes its own columns to its numbers (``restyled()``) is asked to do it
        # again at the new text size: setting a header's default size resets every section to
        # it, and a fitted column put back to 64 × zoom pixels elided "−0.59" to "−0…".
        restyled = getattr(table, "restyled", None)
        if callable(restyled):
            restyled()
            continue
        metrics = table.fontMetrics()
        table.verticalHeader().setDefaultSectionSize(int(metrics.height() * 1.5) + 2)
        table.horizontalHeader().setDefaultSectionSize(int(64 * STYLE.zoom))


def set_weights_colormap(name: str) -> None:
    """Use colour map ``name`` for every heatmap of weights (and its colour bar)."""
    if name not in WEIGHT_COLORMAPS:
        raise ValueError(f"unknown colour map {name!r}; choose one of {', '.join(WEIGHT_COLORMAPS)}")
    STYLE.weights_cmap = name
    for heatmap in list(_WEIGHT_HEATMAPS):
        if shiboken6.isValid(heatmap.image):  # skip heatmaps of closed windows
            heatmap.set_colormap(name)


DIGIT_CHOICES = (2, 4)


def digits(default: int = DEFAULT_DIGITS) -> int:
    """The precision setting in force, for texts written with ``formatting.format_number`` outside the
    views that keep their own ``digits`` (``default`` until a precision is chosen)."""
    return STYLE.digits if STYLE.digits is not None else default


def set_digits(digits: int, root: QtWidgets.QWidget | None = None) -> None:
    """The precision setting: every view and table under ``root`` (default: every open
    window) writes its numbers with ``digits`` decimals, 2 or 4."""
    digits = int(digits)
    if digits not in DIGIT_CHOICES:
        raise ValueError(f"precision must be one of {', '.join(map(str, DIGIT_CHOICES))} decimals, got {digits}")
    STYLE.digits = digits
    roots = [root] if root is not None else QtWidgets.QApplication.topLevelWidgets()
    for top in roots:
        # Views and table models each know how to write their numbers (``set_digits``).
        for obj in [top] + top.findChildren(QtCore.QObject):
            setter = getattr(obj, "set_digits", None)
            if callable(setter):
                setter(digits)
