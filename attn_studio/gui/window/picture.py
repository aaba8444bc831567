"""The window set up for a picture from the command line: a view, a find, a run trained, the stage.

``attn-studio export`` draws panels laid out for the page; the README's pictures of the window
and of the Present stage need the window itself in a given state: a tab shown
(:func:`show_view`), the Heads tab's find done (:func:`find_heads`), a training panel played
to a step (:func:`train`) and the stage as a projector of a given size shows it
(:func:`stage_panel`). Each raises ``ExportError`` with a one-line message for what cannot be
done, so the command ends with exit 2 and never a traceback.
"""

from __future__ import annotations

import time

from PySide6 import QtCore

from ...matrices import check_output_path, write_output
from ..files.figures import BASE_DPI, ExportError, encode_png
from ..files.panels import Panel
from ..lecture.basics import STEPS, TRAINING_PREFIX
from ..widgets import settle

TRAIN_TIMEOUT_S = 600  # the longest a --steps run may take before the command gives up


def view_names(window) -> list[str]:
    """The views the window can show now, by the names of its tabs (the training lab's panels apart)."""
    return window.present.views()


def _resolve(window, name: str) -> str:
    wanted = " ".join(str(name).split()).casefold()
    names = view_names(window)
    for view in names:
        if view.casefold() == wanted or view.casefold() == (TRAINING_PREFIX + wanted).casefold():
            return view
    raise ExportError(f"there is no view {name!r} here; choose one of " + ", ".join(repr(v) for v in names))


def show_view(window, name: str | None) -> str:
    """Make the view ``name`` (a tab's name, case and spacing aside) the window's current one; its name."""
    present = window.present
    view = present.current_view() if name is None else _resolve(window, name)
    present.show_view(view)
    settle(window)
    return view


def find_heads(window, query: str, key: str) -> None:
    """The Heads tab's "Which heads send QUERY to KEY", as typed there and Find pressed."""
    if not window.studio.is_trained:
        raise ExportError("--find looks among a trained model's heads: give --model or a trained --session")
    tab = window.heads_tab
    tab.query_edit.setText(query)
    tab.key_edit.setText(key)
    if not tab.find(query, key):
        raise ExportError(tab.find_message.text().replace("<span style='color:#c0392b'>", "")
                          .replace("</span>", ""))
    settle(window)


def training_view(window, panel_name: str) -> str:
    """The view's name of the training lab's panel ``panel_name`` ("training:seq2seq" -> "Training: Why attention")."""
    return TRAINING_PREFIX + window.training.tab.panels[panel_name.split(":", 1)[1]].title


def train(window, view: str, steps: int) -> None:
    """Train the training panel of ``view`` to exactly ``steps`` steps (its seed, on its worker, as a scene's
    saved run is trained) and draw it: a run played and paused would stop a step or more late on a busy
    machine, and the figure would say another step than asked."""
    panel = window.present.training_panel(view)
    if panel is None:
        raise ExportError(f"--steps trains a panel of the training lab; {view!r} is not one "
                          f"(choose a view named {TRAINING_PREFIX!r}…)")
    panel.wait_built()
    ready = []
    panel.when_ready(lambda: ready.append(True), seed=panel.settings()["seed"], steps=steps)
    deadline = time.monotonic() + TRAIN_TIMEOUT_S
    while not ready:
        if time.monotonic() > deadline:
            raise ExportError(f"{view} took more than {TRAIN_TIMEOUT_S} s to reach step {steps}")
        QtCore.QCoreApplication.processEvents(QtCore.QEventLoop.AllEvents, 50)
        time.sleep(0.01)
    panel.redraw()
    settle(window)


def stage_panel(window, view: str, page: int, width: int, height: int) -> Panel:
    """The Present stage of ``view`` on page ``page`` (from 1), ``width`` × ``height`` as a projector shows it.

    The stage is a window of its own, sized and laid out as on a screen of that size (its text
    sizes follow its height); it stays open until the window closes.
    """
    present = window.present
    stage = present.enter(view, geometry=QtCore.QRect(0, 0, int(width), int(height)))
    settle(window)
    if page < 1:
        raise ExportError(f"--page counts from 1, got {page}")
    present.move_page(page - 1)  # Step by step: its steps; other views: their pages (tiles, plots)
    settle(window)
    if view != STEPS and present.page != page - 1:
        raise ExportError(f"--page {page}: the stage of {view} has {max(present.pages, 1)} page(s)")
    return Panel(stage, None, "stage", None)


def write_screen(panel: Panel, path) -> None:
    """Write ``panel``'s widget as the screen shows it (the stage: its own pixels, its query outlined), as PNG."""
    path = check_output_path(path)
    image = panel.widget.grab().toImage()
    write_output(path, encode_png(image, BASE_DPI * image.devicePixelRatio()))
