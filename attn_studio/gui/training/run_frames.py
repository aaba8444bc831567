"""A training run as an animation: the panel's page figure (:func:`.figures.page_figure`) every k steps.

The run is played once, headless, and a copy of the experiment is kept at each frame's step
(the lab's models are small: a copy is a few hundred kilobytes). The frames are then drawn from
those copies in two passes (:class:`~..files.sweep_frames.SweepFrames`): first every figure is
drawn to find each plot's range over the whole run (the loss curves' axes end where the run
ends, from the first frame on), then each is drawn again with those ranges fixed, so the curves
draw themselves on axes that do not move and the induction head's attention forms in place.
"""

from __future__ import annotations

import copy
from typing import Callable

from PySide6 import QtWidgets

from ..files.figures import Panel
from ..files.sweep_frames import SweepFrames
from ..qt.pg import pg
from .figures import measured_snapshot, page_figure, run_title


def frame_steps(total: int, frames: int, start: int = 0) -> list[int]:
    """``frames`` steps from ``start`` to ``total`` (both included), evenly apart and distinct."""
    frames = max(1, min(int(frames), total - start + 1))
    if frames == 1:
        return [total]
    return sorted({round(start + (total - start) * i / (frames - 1)) for i in range(frames)})


def play_run(exp, steps: list[int], progress: Callable[[int], None] | None = None) -> list:
    """Train ``exp`` forward to each of ``steps`` in turn; a copy of it at each (the frames' runs).

    ``progress(step)`` is called after every optimiser step (the terminal's bar)."""
    copies = []
    for target in steps:
        delta = target - exp.step_count
        if delta > 0:
            exp.run(delta, callback=(lambda step, metrics: progress(step)) if progress else None)
        copies.append(copy.deepcopy(exp))
    return copies


def _view_boxes(widget) -> list:
    """Every pyqtgraph ViewBox of ``widget``'s graphics views, in a stable order (view, then position)."""
    views = [widget] if isinstance(widget, QtWidgets.QGraphicsView) else []
    views += widget.findChildren(QtWidgets.QGraphicsView)
    boxes = []
    for n, view in enumerate(views):
        scene = view.scene()
        if scene is None:
            continue
        found = [item for item in scene.items() if isinstance(item, pg.ViewBox)]
        found.sort(key=lambda b: (b.sceneBoundingRect().top(), b.sceneBoundingRect().left()))
        boxes += [(n, box) for box in found]
    return [box for _, box in boxes]


class RunFrames(SweepFrames):
    """The frames of a training run's panel ``name`` from ``runs`` (copies of the experiment)."""

    def __init__(self, name: str, runs: list, *, scale: float = 1.0, size=None):
        self.name = name
        self.runs = runs
        self.current = 0
        self.ranges: list | None = None  # per view box: ((x0, x1), (y0, y1)) over the whole run
        super().__init__(None, len(runs), self._set, self._panel, self._title, scale=scale, size=size,
                         reshapes=True, quiet=False)

    def _set(self, i: int) -> None:
        self.current = i

    def _title(self, i: int) -> str:
        return run_title(self.name, measured_snapshot(self.name, self.runs[i]))

    def _panel(self) -> Panel:
        panel = page_figure(self.name, measured_snapshot(self.name, self.runs[self.current]))
        boxes = _view_boxes(panel.widget)
        if not self.prepared:  # pass 1: how far each plot reaches over the run
            seen = [tuple(tuple(r) for r in box.viewRange()) for box in boxes]
            if self.ranges is None:
                self.ranges = seen
            elif len(seen) == len(self.ranges):
                self.ranges = [((min(a[0][0], b[0][0]), max(a[0][1], b[0][1])),
                                (min(a[1][0], b[1][0]), max(a[1][1], b[1][1]))) for a, b in zip(self.ranges, seen)]
        elif self.ranges is not None and len(boxes) == len(self.ranges):
            for box, (xr, yr) in zip(boxes, self.ranges):
                box.disableAutoRange()
                box.setRange(xRange=xr, yRange=yr, padding=0)
        return panel

    def _fixed_panel(self) -> Panel:
        return self._panel()


__all__ = ["RunFrames", "frame_steps", "play_run"]
