"""A figure's layouts held while it is drawn in steps (band by band, or an SVG piece by piece).

Painting an axis works its labels out, and an axis that needs more room than it has asks its plot to be
laid out again (a token axis fits its height to its labels, pyqtgraph's ``autoExpandTextSpace`` widens an
axis). Drawn in one piece, the whole figure is drawn before that layout; drawn in steps with the window's
event loop running between them, the layout was carried out between two steps, and what was drawn after
it showed the plots moved (a raster figure cut into misaligned strips, a row axis' line reaching below its
heatmap). :class:`LayoutsHeld` keeps the layout requests of the figure's graphics widgets (and of its
widgets) until it is drawn, then posts them again."""

from __future__ import annotations

import shiboken6
from PySide6 import QtCore, QtWidgets


class LayoutsHeld(QtCore.QObject):
    """A context: the layout requests posted to the graphics widgets of ``scenes`` (and to ``widget`` and the
    widgets in it, when given) wait until it is left, and are posted again then."""

    def __init__(self, scenes, widget: QtWidgets.QWidget | None = None):
        super().__init__()
        self.watched = [item for scene in scenes for item in scene.items() if isinstance(item, QtWidgets.QGraphicsWidget)]
        if widget is not None:
            self.watched += [widget, *widget.findChildren(QtWidgets.QWidget)]
        self.asked: list = []

    def __enter__(self):
        for obj in self.watched:
            obj.installEventFilter(self)
        return self

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QtCore.QEvent.LayoutRequest:
            if obj not in self.asked:
                self.asked.append(obj)
            return True
        return False

    def __exit__(self, *exc):
        for obj in self.watched:
            if shiboken6.isValid(obj):
                obj.removeEventFilter(self)
        for obj in self.asked:  # asked for while held: carried out now
            if shiboken6.isValid(obj):
                QtCore.QCoreApplication.postEvent(obj, QtCore.QEvent(QtCore.QEvent.LayoutRequest))
        return False
