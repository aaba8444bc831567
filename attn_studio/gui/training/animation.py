"""A training panel's run as an animation: its page figure at every k-th step, replayed from the run.

The curves are the history up to each frame's step (the history keeps every step); what the panel
shows beyond the history (a histogram, an alignment, the heads' attention) is what the worker measured
nearest before that step, recorded by the panel while the run played (``LabPanel.recorded``). Every
frame has the last frame's axis ranges, so the curves draw themselves into a still frame.
"""

from __future__ import annotations

import bisect

from PySide6 import QtCore, QtWidgets

from ..files.animation_frames import Control, fit_into, image_array
from ..files.figures import Panel, done_with, render_panel
from ..files.sheet import lay_out_offscreen
from ..qt.pg import pg
from .figures import page_figure, run_title
from .runner import Snapshot

MAX_PROPOSED_FRAMES = 60


def steps_control(steps: int) -> Control:
    """The control of a run's animation: the step, from 0 to the last step taken, ``steps`` frames proposed
    at most 60 (one every k steps)."""
    frames = min(steps + 1, MAX_PROPOSED_FRAMES + 1)
    return Control("steps", "training step", "int", 0, steps, steps, 0, steps, max(frames, 2))


def _plots(figure) -> list:
    plots = []
    for view in figure.findChildren(QtWidgets.QGraphicsView):
        scene = view.scene()
        if scene is not None:
            plots += [item for item in scene.items() if isinstance(item, pg.PlotItem)]
    return plots


class RunReplay:
    """A frame source (``files.animation_export``) of ``panel``'s run at each of ``steps``."""

    preparing = 1

    def __init__(self, panel, steps: list[int], scale: float = 1.0):
        snap = panel.runner.snapshot()
        self.name, self.exp, self.scale = panel.experiment_name, snap.exp, float(scale)
        self.steps = [min(int(s), snap.steps) for s in steps]
        self.count = len(self.steps)
        recorded = panel.recorded if panel.recorded_exp is snap.exp else {}
        self.recorded = sorted(recorded.items()) or [(snap.steps, snap.extras)]
        self.keys = [k for k, _ in self.recorded]
        self.figure = None
        self.ranges: list = []
        self.frame_size: QtCore.QSize | None = None

    def _snap(self, step: int) -> Snapshot:
        i = bisect.bisect_right(self.keys, step) - 1
        extras = self.recorded[max(i, 0)][1]
        return Snapshot(exp=self.exp, steps=step, extras=extras)

    def prepare(self, _i: int) -> None:
        """Draw the last frame: its axis ranges and size are every frame's."""
        panel = page_figure(self.name, self._snap(self.steps[-1]))
        self.figure = panel.widget
        self.ranges = [(plot, plot.viewRange()) for plot in _plots(self.figure)]
        image = render_panel(panel, self.scale)
        self.frame_size = QtCore.QSize(image.width() + image.width() % 2, image.height() + image.height() % 2)

    def frame(self, i: int):
        """Frame ``i``: the figure at its step, with the last frame's axes, as an (H, W, 3) uint8 array."""
        snap = self._snap(self.steps[i])
        self.figure.draw(snap)
        lay_out_offscreen(self.figure, self.figure.page_size)  # as page_figure does after drawing
        for plot, (x_range, y_range) in self.ranges:
            plot.setRange(xRange=x_range, yRange=y_range, padding=0)
        panel = Panel(self.figure, None, f"training:{self.name}", run_title(self.name, snap), keep=self.figure)
        return image_array(fit_into(render_panel(panel, self.scale), self.frame_size))

    def close(self) -> None:
        if self.figure is not None:
            done_with(Panel(self.figure, keep=self.figure))
            self.figure = None


__all__ = ["RunReplay", "steps_control"]
