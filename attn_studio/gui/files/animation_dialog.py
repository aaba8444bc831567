"""File → Export animation's question: which control, over which range, how fast, to which file.

:func:`ask` shows :class:`AnimationDialog` and returns an :class:`AnimationRequest`, or None when the
person cancels (tests answer it by replacing ``ask``). :func:`check_request` is the one check of a
request, from the dialog or from a script: a range outside the control's limits, a frame count
outside 2..1,000, a frame rate or hold out of bounds, or a file that cannot be written is refused with
a message that says what to change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from PySide6 import QtWidgets

from ...animation import MAX_GIF_FPS
from ...formatting import format_setting
from ...matrices import ExportError
from .animation_export import ANIMATION_FORMATS, MAX_FPS, MAX_HOLD, Timing, check_animation_path, check_timing
from .animation_frames import MAX_FRAMES, MIN_FRAMES, Control, SweepError

SCALES = (1.0, 2.0)


@dataclass(frozen=True)
class AnimationRequest:
    """What the person asked for: ``control`` from ``start`` to ``stop`` in ``frames`` frames, played
    with ``timing``, drawn at ``scale`` (1 = the figure's on-screen size), written to ``path``."""

    control: Control
    start: float
    stop: float
    frames: int
    timing: Timing
    path: Path
    scale: float = 1.0


def check_request(request: AnimationRequest) -> AnimationRequest:
    """``request`` if it can be made; else ``ExportError`` (one line: what to change). Nothing is written."""
    try:
        request.control.check(float(request.start), float(request.stop), int(request.frames))
    except SweepError as exc:
        raise ExportError(str(exc)) from None
    check_timing(request.timing.fps, request.timing.hold)
    path = check_animation_path(request.path)
    if path.suffix.lower() == ".gif" and request.timing.fps > MAX_GIF_FPS:
        raise ExportError(f"a GIF plays at most {MAX_GIF_FPS:g} frames a second (browsers slow faster ones "
                          f"down); choose {MAX_GIF_FPS:g} or fewer, or MP4")
    if request.scale not in SCALES:
        raise ExportError(f"the frames are drawn at 1× or 2×, not {request.scale:g}×")
    return request


def _number(text: str, control: Control, name: str) -> float:
    words = {"off": 0.0, "on": 1.0}
    value = text.strip().lower().replace("−", "-")
    if control.kind == "switch" and value in words:
        return words[value]
    try:
        number = float(value)
    except ValueError:
        raise ExportError(f"{control.label}: “{name}” must be a number, got “{text.strip()}”") from None
    if not math.isfinite(number):
        raise ExportError(f"{control.label}: “{name}” must be a finite number, got “{text.strip()}”")
    return number


class AnimationDialog(QtWidgets.QDialog):
    """The question: ``controls`` (the one under the pointer first), the range each proposes, the
    timing and the file. ``request`` is set when the person presses Export and every value is good."""

    def __init__(self, view_title: str, controls: list[Control], path: Path, parent=None,
                 timing: Timing = Timing()):
        super().__init__(parent)
        self.setObjectName("animationDialog")
        self.setWindowTitle("Export animation")
        self.controls = list(controls)
        self.request: AnimationRequest | None = None
        form = QtWidgets.QFormLayout(self)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.AllNonFixedFieldsGrow)
        intro = QtWidgets.QLabel(f"Animate <b>{view_title}</b>: one frame of the page figure per value, "
                                 "colour scales fixed over the whole animation.")
        intro.setWordWrap(True)
        form.addRow(intro)
        self.control_combo = QtWidgets.QComboBox()
        self.control_combo.setObjectName("animationControl")
        for control in self.controls:
            self.control_combo.addItem(f"{control.label}  (now {control.text(control.current)})", control.key)
        self.control_combo.currentIndexChanged.connect(self._propose)
        form.addRow("Control", self.control_combo)
        self.from_edit, self.to_edit = QtWidgets.QLineEdit(), QtWidgets.QLineEdit()
        self.from_edit.setObjectName("animationFrom")
        self.to_edit.setObjectName("animationTo")
        span = QtWidgets.QHBoxLayout()
        span.addWidget(self.from_edit, 1)
        span.addWidget(QtWidgets.QLabel("to"))
        span.addWidget(self.to_edit, 1)
        form.addRow("From", span)
        self.limits_label = QtWidgets.QLabel()
        self.limits_label.setObjectName("animationLimits")
        form.addRow("", self.limits_label)
        self.frames_spin = QtWidgets.QSpinBox()
        self.frames_spin.setObjectName("animationFrames")
        self.frames_spin.setRange(MIN_FRAMES, MAX_FRAMES)
        form.addRow("Frames", self.frames_spin)
        self.fps_spin = QtWidgets.QDoubleSpinBox()
        self.fps_spin.setObjectName("animationFps")
        self.fps_spin.setRange(0.5, MAX_FPS)
        self.fps_spin.setDecimals(1)
        self.fps_spin.setSuffix(" frames a second")
        self.fps_spin.setValue(timing.fps)
        form.addRow("Frame rate", self.fps_spin)
        self.hold_spin = QtWidgets.QDoubleSpinBox()
        self.hold_spin.setObjectName("animationHold")
        self.hold_spin.setRange(0.0, MAX_HOLD)
        self.hold_spin.setDecimals(1)
        self.hold_spin.setSuffix(" s")
        self.hold_spin.setValue(timing.hold)
        form.addRow("Hold the last frame", self.hold_spin)
        self.loop_check = QtWidgets.QCheckBox("Play again from the start (GIF and animated PNG)")
        self.loop_check.setObjectName("animationLoop")
        self.loop_check.setChecked(timing.loop)
        form.addRow("Loop", self.loop_check)
        self.scale_combo = QtWidgets.QComboBox()
        self.scale_combo.setObjectName("animationScale")
        for scale in SCALES:
            self.scale_combo.addItem(f"{scale:g}× (the figure's on-screen size{'' if scale == 1 else ' × 2'})", scale)
        form.addRow("Size", self.scale_combo)
        self.format_combo = QtWidgets.QComboBox()
        self.format_combo.setObjectName("animationFormat")
        for suffix, text in ANIMATION_FORMATS.items():
            self.format_combo.addItem(text, suffix)
        self.format_combo.currentIndexChanged.connect(self._format_chosen)
        form.addRow("Format", self.format_combo)
        self.path_edit = QtWidgets.QLineEdit(str(path))
        self.path_edit.setObjectName("animationPath")
        browse = QtWidgets.QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.path_edit, 1)
        row.addWidget(browse)
        form.addRow("File", row)
        index = self.format_combo.findData(Path(path).suffix.lower())
        self.format_combo.setCurrentIndex(max(index, 0))
        self.message = QtWidgets.QLabel()
        self.message.setObjectName("animationMessage")
        self.message.setStyleSheet("color: #b00020; font-weight: bold;")
        self.message.setWordWrap(True)
        self.message.hide()
        form.addRow(self.message)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.Cancel)
        self.export_button = buttons.addButton("Export", QtWidgets.QDialogButtonBox.AcceptRole)
        self.export_button.setObjectName("animationExport")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self._propose(0)

    def control(self) -> Control:
        return self.controls[self.control_combo.currentIndex()]

    def _propose(self, index: int) -> None:
        """The range the chosen control proposes, within its limits."""
        control = self.controls[index]
        self.from_edit.setText(control.text(control.start) if control.kind != "float" else format_setting(control.start))
        self.to_edit.setText(control.text(control.stop) if control.kind != "float" else format_setting(control.stop))
        self.frames_spin.setValue(control.frames)
        low, high = control.text(control.low), control.text(control.high)
        self.limits_label.setText(f"{control.label} goes from {low} to {high}"
                                  + ("; frames of whole values" if control.kind == "int" else ""))

    def _format_chosen(self, index: int) -> None:
        suffix = self.format_combo.itemData(index)
        text = self.path_edit.text().strip()
        if text:
            self.path_edit.setText(str(Path(text).with_suffix(suffix)))

    def _browse(self) -> None:
        suffix = self.format_combo.currentData()
        filters = ";;".join(f"{text} (*{s})" for s, text in ANIMATION_FORMATS.items())
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export animation", self.path_edit.text(), filters,
                                                        f"{ANIMATION_FORMATS[suffix]} (*{suffix})")
        if path:
            self.path_edit.setText(path)

    def read(self) -> AnimationRequest:
        """The request as the fields say, checked (``ExportError`` with what to change)."""
        control = self.control()
        request = AnimationRequest(
            control, _number(self.from_edit.text(), control, "from"), _number(self.to_edit.text(), control, "to"),
            self.frames_spin.value(), Timing(self.fps_spin.value(), self.hold_spin.value(), self.loop_check.isChecked()),
            Path(self.path_edit.text().strip()), float(self.scale_combo.currentData()))
        return check_request(request)

    def accept(self) -> None:
        try:
            self.request = self.read()
        except ExportError as exc:
            self.message.setText(str(exc))
            self.message.show()
            return
        super().accept()


def ask(parent, view_title: str, controls: list[Control], path: Path) -> AnimationRequest | None:
    """Ask for an animation of ``view_title`` over one of ``controls`` (the first is proposed); None if
    the person cancels. Tests replace this function to answer the question."""
    dialog = AnimationDialog(view_title, controls, path, parent)
    try:
        return dialog.request if dialog.exec() == QtWidgets.QDialog.Accepted else None
    finally:
        dialog.deleteLater()


__all__ = ["AnimationDialog", "AnimationRequest", "ask", "check_request", "SCALES"]
