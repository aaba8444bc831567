"""File → Export animation…: the current view animated over the control the lecturer picks.

The control under the pointer comes first: :class:`PointedControl` remembers the last editable control
hovered or focused (the Model panel's temperature, d_k, heads, switches, query and head; a cell of X or
of W_Q / W_K / W_V in the Numbers panel; the step-by-step view's step). The dialog
(:mod:`.animation_dialog`) proposes a range from that control's limits; the frames are drawn by
:class:`~.animation_frames.FrameMaker` from a studio of the export's own, so the window's values,
document and Undo are the same afterwards, and written by :class:`~.animation_export.AnimationExport`
with progress and Cancel while the window stays in use. A training panel is animated from its run
(``gui/training/animation.py`` gives its frames; its Export menu comes here through :func:`run_export`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6 import QtCore, QtGui, QtWidgets

from ...matrices import ExportError
from . import animation_dialog
from .animation_export import AnimationExport, ProgressDialog
from .animation_frames import (TRAINED_VIEWS, VIEW_ATTRS, Control, FrameMaker, SweepError, cell_control, toy_controls,
                               trained_controls)

# The Model panel's fields -> the control an animation sweeps.
FIELD_CONTROLS = {"temperature": "temperature", "d_head": "d_head", "heads": "heads", "d_model": "d_model",
                  "scale": "scale", "causal": "causal", "positional": "positional", "projections": "projections",
                  "query_index": "query", "head_index": "head"}
VIEW_TITLES = {"heatmaps": "Attention", "steps": "Step by step", "outputs": "Heads → output", "compare": "Compare",
               "geometry": "Geometry", "positions": "Positions"}


class PointedControl(QtCore.QObject):
    """The last editable control of ``window`` the pointer was over or the keyboard was in: a control
    key ("temperature"...) or a cell ("embeddings", row, column), or None."""

    def __init__(self, window):
        super().__init__(window)
        self.last: str | tuple | None = None
        self._widgets: dict = {}
        for binding in window.controls.bindings:
            key = FIELD_CONTROLS.get(binding.field)
            if key is not None:
                self._watch(binding.widget, key)
        for table_key, table in window.numbers.tables.items():
            if table_key in ("embeddings", "w_q", "w_k", "w_v"):
                table.viewport().setMouseTracking(True)  # a cell is known by hovering it, no click needed
                self._watch(table.viewport(), ("table", table_key, table))
                self._watch(table, ("table", table_key, table))
        layer = window.findChild(QtWidgets.QSpinBox, "layerSpin")  # a trained model's layer (the Model panel)
        if layer is not None:
            self._watch(layer, "layer")
        pipeline = getattr(window, "pipeline_view", None)
        if pipeline is not None:
            self._watch(pipeline, "step")

    def _watch(self, widget, what) -> None:
        self._widgets[widget] = what
        widget.installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
        kind = event.type()
        if kind in (QtCore.QEvent.Enter, QtCore.QEvent.FocusIn, QtCore.QEvent.MouseMove):
            what = self._widgets.get(obj)
            if isinstance(what, tuple):
                _, key, table = what
                if kind == QtCore.QEvent.MouseMove:
                    index = table.indexAt(event.position().toPoint())
                elif kind == QtCore.QEvent.FocusIn:
                    index = table.currentIndex()
                else:
                    index = QtCore.QModelIndex()
                if index.isValid():
                    self.last = (key, index.row(), index.column())
            elif what is not None:
                self.last = what
        return False


def view_controls(window, panel: str, pointed) -> list[Control]:
    """The controls an animation of ``panel`` can sweep, the pointed one first."""
    state = window.studio.state
    if getattr(window.studio, "is_trained", False):
        controls = trained_controls(state)
        first = next((c for c in controls if c.key == pointed), None)
        return ([first] if first else []) + [c for c in controls if c is not first]
    steps = 0
    if panel == "steps":
        steps = len(getattr(window.pipeline_view.model, "steps", ()) or ())
    controls = toy_controls(state, steps)
    first = None
    if isinstance(pointed, tuple):
        first = cell_control(state, *pointed)
    elif pointed is not None:
        first = next((c for c in controls if c.key == pointed), None)
    if first is not None:
        controls = [first] + [c for c in controls if c.key != first.key]
    return controls


def run_export(parent, source, request, show_message: Callable[[str], None],
               status: Callable[[str, int], None], title: str) -> AnimationExport:
    """Start writing ``source``'s frames as ``request`` says, with a progress dialog; returns the export."""
    export = AnimationExport(source, request.path, request.timing, parent)
    export.dialog = ProgressDialog(export, title, parent if isinstance(parent, QtWidgets.QWidget) else None)

    def ended(ok: bool, message: str) -> None:
        if ok:
            status(message, 8000)
        elif message.startswith("Cancelled"):
            status(message, 5000)
        else:
            show_message(f"The animation was not written: {message}")

    export.ended.connect(ended)
    export.start()
    export.dialog.show()
    return export


class AnimationActions(QtCore.QObject):
    """File → Export animation… of ``window`` (a MainWindow): ``action``; ``export`` the one running."""

    def __init__(self, window, show_message: Callable[[str], None], status: Callable[[str, int], None]):
        super().__init__(window)
        self.window, self.show_message, self.status = window, show_message, status
        self.pointed = PointedControl(window)
        self.export: AnimationExport | None = None
        self.folder = Path.home()
        self.action = QtGui.QAction("Export &animation…", window)
        self.action.setObjectName("exportAnimationAction")
        self.action.setToolTip("The current view as a GIF, MP4, WebM or animated PNG over one control: "
                               "the one under the pointer first")
        self.action.triggered.connect(self.export_dialog)

    def running(self) -> bool:
        return self.export is not None and self.export.running

    def export_dialog(self) -> AnimationExport | None:
        """Ask which control to sweep and start the animation of the current view; None if nothing starts."""
        if self.running():
            self.show_message("An animation is being written; wait for it or cancel it first")
            return None
        panel = self.window.export_actions.current_panel_name()
        if panel.startswith("training:"):
            return self.window.training.tab.panels[panel.split(":", 1)[1]].export_animation_dialog()
        if panel not in VIEW_ATTRS:
            self.show_message("Export animation: choose the Attention, Step by step, Heads → output, Compare, "
                              "Geometry or Positions tab, or a training panel, first")
            return None
        if getattr(self.window.studio, "is_trained", False) and panel not in TRAINED_VIEWS:
            self.show_message("A trained model's Attention, Step by step and Heads → output views are animated "
                              "in the window; its other views with attn-studio export --animate")
            return None
        controls = view_controls(self.window, panel, self.pointed.last)
        path = self.folder / f"{panel}-{controls[0].key.replace(':', '-')}.gif"
        request = animation_dialog.ask(self.window, VIEW_TITLES[panel], controls, path)
        if request is None:
            return None
        return self.start(panel, request)

    def start(self, panel: str, request) -> AnimationExport | None:
        """Check ``request`` and start the animation of ``panel``; a bad one is said and nothing is written."""
        try:
            animation_dialog.check_request(request)
            values = request.control.values(request.start, request.stop, request.frames)
            source = FrameMaker(self.window, panel, request.control, values, request.scale)
        except (ExportError, SweepError) as exc:
            self.show_message(str(exc))
            return None
        self.folder = Path(request.path).parent
        self.export = run_export(self.window, source, request, self.show_message, self.status,
                                 f"Animating {VIEW_TITLES[panel]} over {request.control.label}…")
        return self.export


__all__ = ["AnimationActions", "PointedControl", "view_controls", "run_export"]
