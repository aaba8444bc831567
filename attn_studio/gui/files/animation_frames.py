"""An animation's frames in the window: the page figure of the current view at each value of one control.

The window's own studio, views and undo history are never touched. A :class:`FrameMaker` copies the
current state into a studio of its own and draws the view's figure from a view of its own (the same
class as the tab's, its settings copied), so that a sweep of the temperature from 0.2 to 5 leaves the
temperature, the document and Undo exactly as they were, and the window stays live while it runs.

Every frame is the figure ``find_panel`` draws for the page, titled with the value, all of one size,
each heatmap's colour levels fixed over the whole animation. The extremes, the titles and the figure's
size are found first, a value per piece of work on the GUI thread; the frames are then drawn by
:class:`~.sweep_frames.SweepFrames`, as ``attn-studio export --animate`` draws them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...formatting import format_setting
from ...limits import MAX_ABS_VALUE, MAX_D_HEAD, MAX_D_MODEL, MAX_HEADS, TEMPERATURE_RANGE
from ...matrices import ExportError
from ...state import StateError
from ...studio import Studio
from ..bridge import StudioProxy
from .figures import _source_rect, done_with, render_panel
from .panels import find_panel, setting_title
from .sweep_frames import SweepFrames

MAX_FRAMES = 1000  # the writer's limit: an animation a slide can hold
MIN_FRAMES = 2

# The tables whose cells can be swept, as the Numbers panel names them, and how a cell is called.
CELL_TABLES = {"embeddings": "X", "w_q": "W_Q", "w_k": "W_K", "w_v": "W_V"}
# Controls that change the figure's shape (more heads, wider vectors): every frame's size is measured.
RESHAPING = ("heads", "d_head", "d_model")
# The view on screen (its export panel name) -> the attribute of the window that holds the view.
VIEW_ATTRS = {"heatmaps": "heatmap_view", "steps": "pipeline_view", "outputs": "heads_summary_view",
              "compare": "compare_view", "geometry": "geometry_view", "positions": "positional_view"}


class SweepError(ValueError):
    """A sweep that cannot be made (a range outside the control's limits, too many frames...):
    the message says what to change."""


@dataclass(frozen=True)
class Control:
    """A control an animation can sweep, with its limits and the range the dialog proposes.

    ``key`` names it ("temperature", "d_head", "causal", "query", "cell:w_q:1:2"...); ``kind`` is
    "float", "int" or "switch" (0 = off, 1 = on). Values are as the person reads them: a query, a
    head and a step count from 1.
    """

    key: str
    label: str
    kind: str
    low: float
    high: float
    current: float
    start: float
    stop: float
    frames: int

    def values(self, start: float, stop: float, frames: int) -> list:
        """The value of each frame: evenly spaced from ``start`` to ``stop``, whole for whole-number
        controls (a switch is off for the first half and on for the second)."""
        raw = np.linspace(float(start), float(stop), int(frames))
        if self.kind == "float":
            return [float(v) for v in raw]
        return [int(round(v)) for v in raw]

    def text(self, value) -> str:
        """``value`` as a frame's title writes it."""
        if self.kind == "switch":
            return "on" if value else "off"
        if self.kind == "int":
            return str(int(value))
        return format_setting(round(float(value), 3))

    def check(self, start: float, stop: float, frames: int) -> None:
        """Refuse a range outside the control's limits or a frame count outside 2..1,000 (``SweepError``)."""
        for name, value in (("from", start), ("to", stop)):
            if not math.isfinite(value) or not self.low <= value <= self.high:
                raise SweepError(f"{self.label}: “{name}” must be between {format_setting(self.low)} and "
                                 f"{format_setting(self.high)}, got {format_setting(value)}")
        if start == stop:
            raise SweepError(f"{self.label}: “from” and “to” are the same value; nothing would move")
        if not MIN_FRAMES <= int(frames) <= MAX_FRAMES:
            raise SweepError(f"an animation has {MIN_FRAMES} to {MAX_FRAMES:,} frames, got {frames}")


def _whole_range(low: int, high: int, cap: int = 60) -> tuple[int, int, int]:
    return low, high, min(high - low + 1, cap)


def toy_controls(state, steps: int = 0) -> list[Control]:
    """Every control of the toy model that an animation can sweep, with its limits and a proposed range."""
    out = []
    t_lo, t_hi = TEMPERATURE_RANGE
    out.append(Control("temperature", "temperature", "float", t_lo, t_hi, state.temperature, 0.2, 5.0, 60))
    if state.projections:
        out.append(Control("d_head", "d_k (d_head)", "int", 1, MAX_D_HEAD, state.d_head,
                           *_whole_range(1, min(64, MAX_D_HEAD))))
        out.append(Control("heads", "heads", "int", 1, MAX_HEADS, state.heads, *_whole_range(1, min(8, MAX_HEADS))))
    out.append(Control("d_model", "d_model", "int", 1, MAX_D_MODEL, state.d_model, *_whole_range(1, 16)))
    for key, label in (("scale", "scaling by 1/√d_k"), ("causal", "causal mask"), ("positional", "positional encoding"),
                       ("projections", "Q, K, V projections")):
        now = float(getattr(state, key))
        out.append(Control(key, label, "switch", 0, 1, now, 0, 1, 2))
    n = len(state.query_tokens)
    if n > 1:
        out.append(Control("query", "query token", "int", 1, n, state.query_index + 1, *_whole_range(1, n)))
    if state.projections and state.heads > 1:
        out.append(Control("head", "head shown", "int", 1, state.heads, state.head_index + 1,
                           *_whole_range(1, state.heads)))
    if steps > 1:
        out.append(Control("step", "step", "int", 1, steps, 1, *_whole_range(1, steps)))
    return out


# A trained model's views an animation draws in the window, and what it sweeps there.
TRAINED_VIEWS = ("heatmaps", "steps", "outputs")


def trained_controls(state) -> list[Control]:
    """What an animation of a trained model's view sweeps: the layer, the head, the query token."""
    out = [Control("layer", "layer", "int", 1, state.layers, state.layer_index + 1, *_whole_range(1, state.layers))]
    if state.heads > 1:
        out.append(Control("head", "head shown", "int", 1, state.heads, state.head_index + 1,
                           *_whole_range(1, state.heads)))
    n = len(state.query_tokens)
    if n > 1:
        out.append(Control("query", "query token", "int", 1, n, state.query_index + 1, *_whole_range(1, n)))
    return out


def cell_control(state, table: str, row: int, col: int) -> Control | None:
    """The control of one cell of X or of the shown head's W_Q / W_K / W_V, or None when there is no such cell."""
    if table not in CELL_TABLES:
        return None
    if table == "embeddings":
        words = state.key_tokens + (state.target_tokens if state.cross else [])
        if not (0 <= row < len(words) and 0 <= col < state.d_model):
            return None
        current = float(Studio(state).embeddings([words[row]])[0, col])
    else:
        if not state.projections:
            return None
        array = getattr(state, table)[state.head_index]
        if not (0 <= row < array.shape[0] and 0 <= col < array.shape[1]):
            return None
        current = float(array[row, col])
    span = max(1.0, math.ceil(abs(current)))
    label = f"{CELL_TABLES[table]}[{row + 1}, {col + 1}]"
    return Control(f"cell:{table}:{row}:{col}", label, "float", -MAX_ABS_VALUE, MAX_ABS_VALUE, current,
                   -span, span, 41)


def apply_value(studio, control: Control, value) -> None:
    """Set ``control`` to ``value`` on ``studio`` (a studio of the export's own, never the window's)."""
    key = control.key
    if key.startswith("cell:"):
        _, table, row, col = key.split(":")
        row, col = int(row), int(col)
        state = studio.state
        if table == "embeddings":
            words = state.key_tokens + (state.target_tokens if state.cross else [])
            studio.set_embedding(words[row], col, float(value))
        else:
            studio.set_weight(table, state.head_index, row, col, float(value))
    elif key == "layer":
        studio.select(layer=int(value) - 1)
    elif key == "query":
        studio.select(query=int(value) - 1)
    elif key == "head":
        studio.select(head=int(value) - 1)
    elif key == "step":
        pass  # the view's highlighted step, set on the view (FrameMaker)
    elif control.kind == "switch":
        studio.update(**{key: bool(value)})
    elif control.kind == "int":
        studio.update(**{key: int(value)})
    else:
        studio.update(**{key: float(value)})


# -- the frames ------------------------------------------------------------------------------

def _heatmaps(view) -> dict:
    """The heatmaps of a view by a name that stays the same from frame to frame."""
    found = {}
    for attr in ("stages", "maps"):
        for name, hm in (getattr(view, attr, None) or {}).items():
            found[f"{attr}:{name}"] = hm
    for i, hm in enumerate(getattr(view, "head_maps", None) or []):
        found[f"head:{i}"] = hm
    if getattr(view, "heatmap", None) is not None:
        found["heatmap"] = view.heatmap
    return found


def _copy_settings(source, view) -> None:
    """The tab's own settings (compare mode, its temperatures, the geometry's choices...) onto the
    export's view: every combo box, spin box and check box found by the same name in both."""
    for cls, read, write in ((QtWidgets.QComboBox, lambda w: w.currentIndex(), lambda w, v: w.setCurrentIndex(v)),
                             (QtWidgets.QSpinBox, lambda w: w.value(), lambda w, v: w.setValue(v)),
                             (QtWidgets.QDoubleSpinBox, lambda w: w.value(), lambda w, v: w.setValue(v)),
                             (QtWidgets.QAbstractButton, lambda w: w.isChecked(), lambda w, v: w.setChecked(v))):
        for widget in source.findChildren(cls):
            name = widget.objectName()
            if not name:
                continue
            twin = view.findChild(cls, name)
            if twin is None:
                continue
            if cls is QtWidgets.QAbstractButton and not widget.isCheckable():
                continue
            if cls is QtWidgets.QComboBox and twin.count() != widget.count():
                continue
            write(twin, read(widget))


def image_array(image: QtGui.QImage) -> np.ndarray:
    """A QImage as an (H, W, 3) uint8 array (a copy: the image may go)."""
    rgb = image.convertToFormat(QtGui.QImage.Format_RGB888)
    h, w = rgb.height(), rgb.width()
    data = np.frombuffer(rgb.constBits(), dtype=np.uint8, count=rgb.sizeInBytes())
    return data.reshape(h, rgb.bytesPerLine())[:, : 3 * w].reshape(h, w, 3).copy()


def fit_into(image: QtGui.QImage, size: QtCore.QSize) -> QtGui.QImage:
    """``image`` on a white canvas of ``size``, centred; shrunk to fit first when it is larger."""
    if image.width() > size.width() or image.height() > size.height():
        image = image.scaled(size, QtCore.Qt.KeepAspectRatio, QtCore.Qt.SmoothTransformation)
    canvas = QtGui.QImage(size, QtGui.QImage.Format_RGB32)
    canvas.fill(QtCore.Qt.white)
    painter = QtGui.QPainter(canvas)
    painter.drawImage((size.width() - image.width()) // 2, (size.height() - image.height()) // 2, image)
    painter.end()
    return canvas


class FrameMaker:
    """The frames of one animation of ``window``'s view ``panel`` over ``control``'s ``values``.

    A frame source of ``animation_export``, worked in small pieces on the GUI thread (widgets live
    there): ``prepare(i)`` for i below ``preparing`` (every value's colour levels and title, then the
    sample figures' sizes), then :meth:`frame` ``(i)`` in order, each an (H, W, 3) array of
    :meth:`size`. ``SweepError`` for a value the studio refuses (d_k 256 with 16 heads over the
    budget...), naming the value.
    """

    def __init__(self, window, panel: str, control: Control, values: list, scale: float = 1.0):
        if panel not in VIEW_ATTRS:
            raise SweepError(f"the {panel} view cannot be animated in the window; choose Attention, Step by step, "
                             "Heads → output, Compare, Geometry or Positions")
        trained = bool(getattr(window.studio, "is_trained", False))
        if trained and panel not in TRAINED_VIEWS:
            raise SweepError("a trained model's Attention, Step by step and Heads → output views are animated in "
                             "the window; its other views with attn-studio export --animate")
        self.panel, self.control, self.values, self.scale = panel, control, list(values), float(scale)
        if trained:
            from ...trained import TrainedStudio

            target = window.studio.target  # its model, shared; its run computed once more, here, for the export
            self.studio = StudioProxy(TrainedStudio(target.model, target.state))
        else:
            self.studio = StudioProxy(Studio(window.studio.state))
        source = getattr(window, VIEW_ATTRS[panel])
        self.view = type(source)(self.studio)
        self.view.setAttribute(QtCore.Qt.WA_DontShowOnScreen, True)
        _copy_settings(source, self.view)
        digits = getattr(getattr(window, "lecture", None), "digits", None)
        if digits is not None and hasattr(self.view, "set_digits"):
            self.view.set_digits(digits)
        if hasattr(source, "_current"):
            self.view._current = source._current  # the step by step's highlighted step stays the tab's
        # find_panel reads a window: this one has the export's studio and view, and nothing else. Its
        # view is drawn by the frame (with the animation's levels), not again by find_panel.
        self.window = SimpleNamespace(studio=self.studio, render_view=lambda v: None,
                                      variance_plot=window.variance_plot, training=None,
                                      trained=SimpleNamespace(is_trained=True, room=self) if trained else None,
                                      **{VIEW_ATTRS[panel]: self.view})
        self.levels: dict[str, tuple[float, float]] = {}
        self.tips: list = []  # the geometry's arrow tips at every value
        # The frames themselves are the command line's: levels, titles and size filled in by the
        # preparation here (a piece per turn of the event loop), each frame then one piece.
        self.reshapes = control.key in RESHAPING
        self.sweep = SweepFrames(None, len(self.values), self._set_fixed, self._panel, self.title,
                                 views=[self.view], scale=self.scale, reshapes=self.reshapes, quiet=False)
        self._frames = None
        self._next = 0
        # A frame source (animation_export): every value measured, then the sample figures' sizes.
        self.count = len(self.values)
        self.preparing = len(self.values) + len(self.samples())
        self.prepare = self._prepare

    def _set(self, i: int) -> None:
        value = self.values[i]
        try:
            apply_value(self.studio, self.control, value)
        except (StateError, ValueError) as exc:
            raise SweepError(f"{self.control.label} = {self.control.text(value)}: {exc}") from None
        if self.control.key == "step":
            self.view._current = int(value) - 1
        self.view.render()

    def measure(self, i: int) -> None:
        """Value ``i``'s colour levels (and the geometry's arrows), joined into the animation's."""
        self._set(i)
        drawing = getattr(self.view, "drawing", None) if self.panel == "geometry" else None
        if drawing is not None and np.size(drawing.tips):
            self.tips.append(np.asarray(drawing.tips, dtype=np.float64).reshape(-1, 2))
        for name, hm in _heatmaps(self.view).items():
            if hm.data is None:
                continue
            lo, hi = (float(v) for v in hm.levels)
            old = self.levels.get(name)
            self.levels[name] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
            self.sweep.levels[id(hm)] = self.levels[name]
        if len(self.sweep.titles) == i:
            self.sweep.titles.append(self.title(i))

    def _fix_levels(self) -> None:
        for name, hm in _heatmaps(self.view).items():
            data, levels = hm.data, self.levels.get(name)
            if data is None or levels is None or tuple(hm.levels) == levels:
                continue
            hm.set_data(data.values, masked=data.masked, row_labels=list(data.row_labels),
                        col_labels=list(data.col_labels), levels=levels, selected_row=data.selected_row)

    def title(self, i: int) -> str:
        """Frame ``i``'s title: the figure's, and the swept control's value."""
        base = setting_title(self.studio.state, self.panel)
        if self.control.key == "temperature":  # said once, at the end, as every swept value is
            base = base.replace(f" · T={format_setting(self.studio.state.temperature)}", "")
        return f"{base} · {self.control.label} = {self.control.text(self.values[i])}"

    def image(self, i: int) -> QtGui.QImage:
        """Frame ``i``'s figure alone, at its own size (one value's figure, as a check)."""
        self._set(i)
        self._fix_levels()
        panel = self._panel()
        try:
            return render_panel(panel, self.scale, self.title(i))
        finally:
            done_with(panel)

    def samples(self) -> list[int]:
        """The frames whose figures' sizes decide the animation's: the first, middle and last (every one
        when the figure changes its shape with the value: heads, d_k, d_model)."""
        if self.reshapes:
            return list(range(len(self.values)))
        return sorted({0, len(self.values) // 2, len(self.values) - 1})

    def _set_fixed(self, i: int) -> None:
        self._set(i)
        self._fix_levels()

    def _prepare(self, i: int) -> None:
        # Every value's levels and title first, then the sizes of the sample frames' figures (one per
        # piece of preparation); then the frames are the command line's (files.sweep_frames).
        n = len(self.values)
        if i < n:
            self.measure(i)
            return
        self._set(self.samples()[i - n])
        self._fix_levels()
        panel = self._panel()
        try:
            self.sweep.panel_size = self.sweep.panel_size.expandedTo(_source_rect(panel).size())
        finally:
            done_with(panel)
        if i == self.preparing - 1:
            self.sweep.prepared = True

    def _panel(self):
        """The figure of the export's view as it is now (the geometry's plane framed for the whole animation)."""
        panel = find_panel(self.window, self.panel)
        if self.tips:
            from ..views.geometry import frame

            x_range, y_range = frame(np.vstack(self.tips))
            panel.widget.plot.setRange(xRange=x_range, yRange=y_range, padding=0)
        return panel

    def size(self) -> QtCore.QSize:
        """The frames' one size in pixels (after the preparation)."""
        if not self.sweep.prepared:
            for i in range(self.preparing):
                self._prepare(i)
        return QtCore.QSize(*self.sweep.pixel_size())

    def frame(self, i: int) -> np.ndarray:
        """Frame ``i`` (frames come in order, after the preparation) as an (H, W, 3) uint8 array: the
        sweep's frame, drawn as the command line draws it (a sheet refilled frame after frame, the
        title in a band as tall as the tallest, every heatmap at the animation's levels)."""
        self.size()
        if self._frames is None:
            self._frames = self.sweep.images()
        if i != self._next:
            raise ExportError("an animation's frames are drawn in order")
        self._next += 1
        return next(self._frames)

    def close(self) -> None:
        """Let go of the export's figures and view (now, on the GUI thread)."""
        from ..widgets import discard

        if self._frames is not None:
            self._frames.close()  # its kept sheet is freed
        self.sweep.release()
        discard(self.view)


__all__ = ["Control", "FrameMaker", "SweepError", "MAX_FRAMES", "toy_controls", "trained_controls", "cell_control", "apply_value",
           "image_array", "fit_into", "ExportError"]
