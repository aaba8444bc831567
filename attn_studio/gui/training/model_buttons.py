"""A lab panel's models taken out of the lab: "Open in the studio" and "Save model" (a menu of the
panel's arms each), after or during a run.

The model is written by the panel's worker between two steps (`Runner.call`), so a run that plays
goes on and the arrays saved are whole: "Open in the studio" writes it into the lab's cache (the
folder a recipe names, `training.lab_models.recipe_folder`, so a session that names it finds it)
and hands the folder to the window, which opens it like any trained model; "Save model" writes it
into a folder the lecturer chooses.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from PySide6 import QtWidgets

from ...training.lab_models import lab_cache_root, model_name, recipe, recipe_folder, save_model

__all__ = ["ModelButtons", "cache_folder", "chosen_folder"]


def cache_folder(exp, arm: str) -> Path:
    """Where "Open in the studio" keeps the arm's model: its recipe's folder, or (a run whose
    learning rate changed on the way, which no recipe plays again) a folder of its own."""
    made = recipe(exp, arm)
    if made is not None:
        return recipe_folder(made)
    return lab_cache_root() / f"{arm.replace(' ', '-')}-seed{exp.seed}-step{exp.step_count}-{uuid.uuid4().hex[:8]}"


def chosen_folder(folder: Path, exp, arm: str) -> Path:
    """The folder a save goes to: the one chosen when it is new, empty or a lab model's (which is
    replaced), else a new folder in it named after the model (a person choosing Documents means
    "put it in there")."""
    folder = Path(folder)
    try:
        holds = folder.is_dir() and any(folder.iterdir())
    except OSError:
        holds = False
    from ...pretrained.lab_files import is_lab_folder

    if not holds or is_lab_folder(folder):
        return folder
    name = model_name(exp, arm).replace("(", "").replace(")", "").replace(",", "")
    return folder / "-".join(name.split())


class ModelButtons:
    """The two menu buttons of a panel whose arms are models (``panel.model_arms``, arm -> label).

    ``panel.open_in_studio(folder)`` is the window's (None while the panel is not in a window:
    the button then says so); ``choose_folder()`` asks where to save (tests replace it)."""

    def __init__(self, panel):
        self.panel = panel
        self.choose_folder = self._choose_folder_dialog
        self.open_button = QtWidgets.QToolButton()
        self.open_button.setText("Open in the studio")
        self.open_button.setObjectName("trainingOpenModel")
        self.open_button.setToolTip("Open a model of this run in the studio, at the step it has reached: every "
                                    "layer and head, step by step, silence a head (the run goes on)")
        self.open_button.setPopupMode(QtWidgets.QToolButton.InstantPopup)
        self.save_button = QtWidgets.QToolButton()
        self.save_button.setText("Save model")
        self.save_button.setObjectName("trainingSaveModel")
        self.save_button.setToolTip("Save a model of this run as a model folder (config.json, model.safetensors, "
                                    "vocab.json): Open model folder… and attn-studio export --model open it")
        self.save_button.setPopupMode(QtWidgets.QToolButton.InstantPopup)
        open_menu = QtWidgets.QMenu(self.open_button)
        save_menu = QtWidgets.QMenu(self.save_button)
        for arm, label in panel.model_arms.items():
            action = open_menu.addAction(label, lambda arm=arm: self.open_arm(arm))
            action.setObjectName(f"openModel_{arm.replace(' ', '_')}")
            action = save_menu.addAction(label + "…", lambda arm=arm: self.save_arm_dialog(arm))
            action.setObjectName(f"saveModel_{arm.replace(' ', '_')}")
        self.open_button.setMenu(open_menu)
        self.save_button.setMenu(save_menu)

    def _choose_folder_dialog(self) -> str:
        return QtWidgets.QFileDialog.getExistingDirectory(
            self.panel, "Save the model in a folder (a new or empty one, or a folder to hold it)")

    def open_arm(self, arm: str) -> None:
        """Write ``arm``'s model at the run's current step into the cache, then open it in the studio."""
        opener = getattr(self.panel, "open_in_studio", None)
        if opener is None:
            self.panel.show_message("This panel is not in a window that can open models")
            return

        def work(exp):
            return save_model(exp, arm, cache_folder(exp, arm))

        def done(folder, error):
            if error is not None:
                self.panel.show_message(f"The model could not be opened: {error}")
                return
            self.panel.clear_message()
            opener(folder)

        self.panel.runner.call(work, done)

    def save_arm_dialog(self, arm: str) -> None:
        """Ask for a folder, then save ``arm``'s model there."""
        folder = self.choose_folder()
        if folder:
            self.save_arm(arm, folder)

    def save_arm(self, arm: str, folder, on_saved=None) -> None:
        """Save ``arm``'s model at the run's current step into ``folder`` (see :func:`chosen_folder`);
        the message line says where, or why not. ``on_saved(path or None)`` once done."""

        def work(exp):
            return save_model(exp, arm, chosen_folder(Path(folder), exp, arm))

        def done(path, error):
            if error is not None:
                self.panel.show_message(f"The model was not saved: {error}")
            else:
                self.panel.show_message(f"Saved the model in {path}", error=False)
            if on_saved is not None:
                on_saved(None if error is not None else path)

        self.panel.runner.call(work, done)
