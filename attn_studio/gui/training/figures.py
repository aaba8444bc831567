"""The training lab's figures for the page: one per panel, the same from every door.

:func:`page_figure` draws a panel's figure (`figure.LabFigure`) at a size of its own from a run's
numbers: the history, and what the panel measures beyond it (a histogram, an alignment, the heads).
The panel's Export button, File → Export → Training lab and ``attn-studio train NAME --png``
(which ``attn-studio export --panel training:NAME`` points to) all come here, so a run gives one figure
whichever way it leaves the app, and never one grabbed from the window (no controls, no hints,
whatever the window's size).
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtWidgets

from ..files import figures as files
from ..files.sheet import breathe, lay_out_offscreen
from .figure import LabFigure
from .induction_figure import InductionFigure
from .runner import Snapshot
from .scaling_figure import ScalingFigure
from .seq2seq_figure import Seq2SeqFigure

__all__ = ["FIGURES", "page_figure", "run_title", "describe", "measured_snapshot", "write_lab_figure",
           "write_figures_offscreen"]

FIGURES: dict[str, type[LabFigure]] = {cls.experiment_name: cls for cls in (ScalingFigure, Seq2SeqFigure,
                                                                             InductionFigure)}


def describe(exp) -> str:
    """The run's settings as a title states them: "d_k 64, seed 0, lr 0.0003"."""
    d_k = f"d_k {exp.d_k}, " if hasattr(exp, "d_k") else ""
    return f"{d_k}seed {exp.seed}, lr {exp.lr:g}"


def run_title(name: str, snap: Snapshot) -> str:
    """The figure's title: the panel's, the run's settings and its step."""
    return f"{FIGURES[name].title}: {describe(snap.exp)}, step {snap.steps:,}"


def page_figure(name: str, snap: Snapshot) -> files.Panel:
    """The figure of panel ``name`` ("scaling", "seq2seq", "induction") for ``snap``, laid out for
    the page at the figure's own ``page_size``, titled with the run (:func:`run_title`)."""
    cls = FIGURES[name]
    # While the window exports it, its event loop runs a turn between the parts (sheet.breathe).
    figure = cls(page=True)
    breathe()
    lay_out_offscreen(figure, cls.page_size)  # the plots get their sizes before they are drawn
    breathe()
    figure.draw(snap)
    breathe()
    lay_out_offscreen(figure, cls.page_size)
    return files.Panel(figure, None, f"training:{name}", run_title(name, snap), keep=figure)


def measured_snapshot(name: str, exp) -> Snapshot:
    """``exp`` as the panel shows it when paused: every step, and what the panel measures beyond the
    history on its default inputs."""
    return Snapshot(exp=exp, steps=exp.step_count, extras=FIGURES[name].measure(exp, {}, True))


def write_lab_figure(name: str, exp, folder, scale: float = 2.0) -> list[Path]:
    """``attn-studio train NAME --png``: the panel's figure of ``exp`` as ``folder/NAME.png``."""
    path = Path(folder) / f"{name}.png"
    figure = page_figure(name, measured_snapshot(name, exp))
    files.export_figure(figure, path, fmt="png", scale=scale)
    files.done_with(figure)
    return [path]


def write_figures_offscreen(name: str, exp, folder) -> list[Path]:
    """:func:`write_lab_figure` with no display (fonts and widgets need an application)."""
    # A QApplication, as the other commands make, not only a QGuiApplication: called from a console
    # or a test, it is the process's one application, and a window made afterwards needs widgets.
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["attn-studio"])  # noqa: F841 (kept alive)
    return write_lab_figure(name, exp, folder)
