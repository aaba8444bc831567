"""A training scene's hand-out figure: its experiment trained headless to its step count first (the run it
saved), so its page shows curves, never an empty run."""

from __future__ import annotations

import dataclasses

from PySide6 import QtCore

from ...matrices import ExportError
from ...scenes import TRAINING_TITLES, Scene
from ..files import sheet as sheets
from ..files.figures import Panel
from ..qt.worker import one_blas_thread
from .handout_figures import SHRINK

TRAINING_VIEWS = {"Training: " + title: name for title, name in zip(TRAINING_TITLES, ("scaling", "seq2seq",
                                                                                       "induction"))}
# A training scene that saved no step count is trained this far: where its point shows. At d_k 64 the
# scaled arm is past 90 % by step 600 while the unscaled one still guesses; the induction head forms
# around steps 1,000-1,500; the seq2seq arms part within the first thousand steps.
DEFAULT_STEPS = {"scaling": 600, "seq2seq": 1000, "induction": 2000}
PROGRESS_EVERY = 25  # training steps between two progress reports (and a look at Cancel)
FIGURE_TITLE_PX = 46  # the room a figure's own title takes (a training run's line)
_LAST: dict = {}  # the last run trained for a page and what it was trained for (view, seed, panel settings)


def lab_recipe(scene: Scene) -> dict | None:
    """The recipe of the lab model a trained scene names (seed, steps...), or None."""
    model = scene.session.get("model") if scene.trained else None
    recipe = model.get("lab") if isinstance(model, dict) else None
    return recipe if isinstance(recipe, dict) else None


def lab_command(recipe: dict) -> str:
    """The command line that trains a recipe's model into a folder (for a card that names it)."""
    d_k = f" --d-k {recipe['d_k']}" if "d_k" in recipe else ""
    arm = recipe.get("arm", "")
    return (f"attn-studio train {recipe.get('experiment')}{d_k} --seed {recipe.get('seed')} --steps "
            f"{recipe.get('steps')} --save FOLDER --arm \"{arm}\"")


def train_scene_model(scene: Scene, report=None) -> None:
    """Train the lab model ``scene`` names from its recipe, headless, unless this machine has it
    (it is kept: the scene then opens at once). ``report(done, total)`` every 25 steps; it raises
    :class:`.handout.Cancelled` to stop. A recipe that cannot be trained is left to the scene's
    showing, which says why."""
    from ...training.experiment import TrainingError
    from ...training.lab_models import train_recipe

    recipe = lab_recipe(scene)
    if recipe is None:
        return
    with one_blas_thread():
        try:
            train_recipe(recipe, report)
        except TrainingError:
            pass


def training_steps(scene: Scene) -> int:
    """The step count a training scene's run is drawn at: the one it saved, else its default."""
    name = TRAINING_VIEWS[scene.view]
    return int(scene.selection.get("steps") or DEFAULT_STEPS[name])


def training_figure(window, scene: Scene, room: QtCore.QSizeF, report=None):
    """Train the scene's experiment headless (the lab panel's settings: d_k, seed, learning rate) to its
    step count and draw the panel's figure of that run, laid out for ``room``. ``report(done, total)``
    every few steps; it raises :class:`.handout.Cancelled` to stop."""
    name = TRAINING_VIEWS[scene.view]
    panel = window.present.training_panel(scene.view)
    if panel is None:
        raise ExportError(f"this window has no training lab for “{scene.view}”")
    steps = training_steps(scene)
    settings = panel.settings()
    seed = scene.selection.get("seed", settings["seed"])  # the scene's run; else the panel's seed
    # A fresh run as the panel's Reset builds one; the run of the scene before when it is the same one
    # trained to no more steps (two scenes of one run train it once).
    key = (scene.view, seed, tuple(sorted((k, v) for k, v in settings.items() if k not in ("seed", "speed"))))
    exp = _LAST.get("run") if _LAST.get("key") == key else None
    if exp is None or exp.step_count > steps:
        exp = panel._make(seed)
    with one_blas_thread():  # small matrices: BLAS's threads only wait for each other (5× slower on 2 busy cores)
        if exp.step_count == steps and report is not None:
            report(steps, steps)  # trained already, for the scene before
        while exp.step_count < steps:
            exp.run(min(PROGRESS_EVERY, steps - exp.step_count))
            if report is not None:
                report(exp.step_count, steps)
    _LAST.update(key=key, run=exp)
    snap = dataclasses.replace(panel.runner.snapshot(), exp=exp, steps=exp.step_count, playing=False, error="",
                               extras=panel.extras(exp, {}, True))
    cls = panel.figure_class
    size = QtCore.QSize(int(room.width() / SHRINK) - 20, int(room.height() / SHRINK) - 20 - FIGURE_TITLE_PX)
    figure = cls(page=True)
    sheets.lay_out_offscreen(figure, size)  # the plots get their sizes before they are drawn
    figure.draw(snap)
    sheets.lay_out_offscreen(figure, size)
    d_k = f"d_k {exp.d_k}, " if hasattr(exp, "d_k") else ""
    run = f"{cls.title}: {d_k}seed {exp.seed}, lr {exp.lr:g}, trained to step {exp.step_count:,}"
    return Panel(figure, None, f"training:{name}", run, keep=figure)
