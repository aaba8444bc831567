"""What a finished run leaves behind: tables a spreadsheet or a plot reads, and the data of its figures.

Experiments are made by name from the registry ``attn_studio.training.EXPERIMENTS``. Files are written
atomically (a temporary file beside the target, then a rename), so a run stopped halfway never
leaves half a table.
"""

from __future__ import annotations

import csv
import inspect
import io
import math
from pathlib import Path

from ..session import SessionError, write_atomic
from . import EXPERIMENTS
from .experiment import Experiment, TrainingError, check_int
from .scaling import MAX_D_K
from .seq2seq import MAX_LENGTH, Seq2SeqExperiment

__all__ = ["make_experiment", "default_steps", "history_table", "figure_data",
           "write_csv", "write_report", "prepare_folder", "check_steps", "MAX_STEPS"]

MAX_STEPS = 1_000_000


def make_experiment(name: str, seed: int = 0, d_k: int | None = None) -> Experiment:
    """A new experiment of that name (a key of `EXPERIMENTS`) from ``seed``; ``d_k`` only for an
    experiment that takes one. Bad names or values raise a TrainingError that names them."""
    try:
        cls = EXPERIMENTS[name]
    except (KeyError, TypeError):
        raise TrainingError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}") from None
    kwargs = {"seed": seed}
    if d_k is not None:
        if "d_k" not in inspect.signature(cls).parameters:
            takes = [n for n, c in EXPERIMENTS.items() if "d_k" in inspect.signature(c).parameters]
            raise TrainingError(f"d_k applies to {', '.join(takes)} only, not to {name}")
        kwargs["d_k"] = check_int("d_k", d_k, 1, MAX_D_K)
    return cls(**kwargs)


def default_steps(name: str) -> int:
    """The steps a run of that experiment takes unless told otherwise: enough to see its effect."""
    make = EXPERIMENTS.get(name)
    return int(getattr(make, "default_steps", Experiment.default_steps))


def history_table(exp: Experiment) -> tuple[list[str], list[list]]:
    """(header, rows): one row per step taken, "step" then one column per "arm/metric"."""
    columns = [(arm, metric) for arm in exp.arms for metric in exp.history[arm]]
    header = ["step"] + [f"{arm}/{metric}" for arm, metric in columns]
    rows = [[step] + [exp.history[arm][metric][step] for arm, metric in columns]
            for step in range(exp.step_count)]
    return header, rows


def figure_data(exp: Experiment, count: int = 256) -> dict[str, dict]:
    """What the figures of a run plot: {figure: {"x": list, "xlabel": str, "series": {label: list}}}.

    One figure per metric (every arm's curve against the step) and, for the seq2seq experiment,
    "accuracy by length" (greedy decoding on ``count`` held-out inputs of each length).
    """
    steps = list(range(exp.step_count))
    figures = {}
    for metric in exp.metrics:
        figures[metric] = {"x": steps, "xlabel": "step",
                           "series": {arm: list(exp.history[arm][metric]) for arm in exp.arms}}
    if isinstance(exp, Seq2SeqExperiment):
        lengths = list(range(1, MAX_LENGTH + 1))
        table = exp.accuracy_by_length(lengths, count=count)
        figures["accuracy by length"] = {"x": lengths, "xlabel": "input length",
                                         "series": {arm: [table[arm][n] for n in lengths] for arm in exp.arms}}
    return figures


def _cell(value) -> str:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)  # repr: every digit, read back exactly
    return str(value)


def write_csv(path, header: list[str], rows: list[list]) -> None:
    """A CSV table written atomically; floats with every digit (repr)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([_cell(v) for v in row] for row in rows)
    try:
        write_atomic(path, buffer.getvalue().encode("utf-8"))
    except SessionError as exc:
        raise TrainingError(str(exc)) from None


def prepare_folder(folder) -> Path:
    """``folder`` as a Path, made if missing (a run checks this before it trains, not after)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise TrainingError(f"{folder} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TrainingError(f"cannot make the folder {folder}: {exc.strerror or exc}") from None
    return folder


def write_report(exp: Experiment, folder, count: int = 256, figures: dict | None = None) -> dict[str, Path]:
    """Write a run's tables into ``folder`` (made if missing): "history.csv" and one CSV per
    figure that is not a training curve (``count`` held-out inputs per point, or ``figures`` as
    `figure_data` gave them). Returns {table: path}."""
    folder = prepare_folder(folder)
    written = {}
    header, rows = history_table(exp)
    written["history"] = folder / "history.csv"
    write_csv(written["history"], header, rows)
    for name, fig in (figures if figures is not None else figure_data(exp, count=count)).items():
        if name in exp.metrics:
            continue  # the curves are history.csv's columns
        path = folder / (name.replace(" ", "_") + ".csv")
        arms = list(fig["series"])
        write_csv(path, [fig["xlabel"].replace(" ", "_")] + arms,
                  [[x] + [fig["series"][arm][i] for arm in arms] for i, x in enumerate(fig["x"])])
        written[name] = path
    return written


def check_steps(steps) -> int:
    """A step count for a run, 1..MAX_STEPS, or a TrainingError naming it."""
    return check_int("steps", steps, 1, MAX_STEPS)
