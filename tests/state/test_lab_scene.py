"""The example lecture's lab scene and sessions of lab models: the model named by its name, its
weights' hash and its recipe (seed, steps), trained again from the recipe where its folder is
missing (float rounding may differ between machines, so there the recipe names it). No Qt."""

from __future__ import annotations

import json

import numpy as np
import pytest

import attn_studio.training  # noqa: F401 (registers how a recipe is trained, as the window and the command line do)
from attn_studio.pretrained import ModelError, load_pretrained
from attn_studio.scenes import LAB_RECIPE, LAB_SHA256, Lecture, example_lecture, read_lecture, scene_studio, write_lecture
from attn_studio.limits import StateError
from attn_studio.schema.trained import model_ref_from_dict
from attn_studio.session import read_any_session, write_session
from attn_studio.trained import TrainedStudio, resolve_model
from attn_studio.training import InductionExperiment
from attn_studio.training.lab_models import train_recipe


def _lab_scene():
    scenes = example_lecture().scenes
    titles = [s.title for s in scenes]
    index = titles.index("The induction head, opened")
    assert titles[index - 1] == "Why two layers"  # right after the lab's own scene
    return scenes[index]


def test_the_lab_scene_shows_the_induction_head_it_states():
    scene = _lab_scene()
    assert scene.view == "Model view" and scene.trained
    model = scene.session["model"]
    assert model["lab"] == LAB_RECIPE and model["sha256"] == LAB_SHA256 and model["folder"] is None
    studio = scene_studio(scene)  # trained from its recipe on a machine that lacks it, else from the cache
    s = studio.state
    assert studio.model.name == scene.model_name == "lab two layers (seed 0, step 1800)"
    assert (s.layer_index, s.head_index, s.query_index) == (1, 1, 15)
    tokens = s.tokens
    assert tokens[:10] == tokens[10:] and tokens[15] == "B" and tokens[6] == "C" and tokens[5] == "B"
    weights = studio.result.weights[1]  # layer 2, head 2
    assert f"{weights[15, 6]:.2f}" == "0.83" and "0.83" in scene.caption  # “B” → “C”, the token after its copy
    first = studio.run.attentions[0, 0]  # layer 1, head 1: one token back
    assert np.diagonal(first, offset=-1).mean() > 0.5 and "previous-token head" in scene.notes
    assert scene.pin == (15, 6) and scene.selection["page"] == 1  # the stage starts on head 2, the cell kept in view


def test_a_lab_scene_plays_the_same_from_a_lecture_file(tmp_path):
    path = tmp_path / "lab.attn-lecture.json"
    write_lecture(Lecture("lab", (_lab_scene(),)), path)
    again = read_lecture(path).scenes[0]
    assert again == _lab_scene()
    np.testing.assert_allclose(scene_studio(again).result.weights, scene_studio(_lab_scene()).result.weights,
                               rtol=0, atol=1e-12)


def test_a_lab_session_names_its_recipe_and_opens_where_its_folder_is_gone(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    exp = InductionExperiment(seed=6)
    exp.run(20)
    folder = exp.save_model("two layers", tmp_path / "mine")
    studio = TrainedStudio(load_pretrained(folder))
    studio.set_head_scale(0, 1, 0.0)
    session_path = tmp_path / "lab.attn.json"
    write_session(session_path, studio.state)
    ref = json.loads(session_path.read_text())["model"]
    assert ref["lab"] == {"experiment": "induction", "arm": "two layers", "seed": 6, "steps": 20, "lr": 0.003}
    assert ref["folder"] == str(folder.resolve()) and ref["sha256"] == studio.model.weights_sha256()
    session = read_any_session(session_path)
    same = TrainedStudio.from_session(session, resolve_model(session.model))  # its folder
    assert same.model.path == folder and same.state.edits == studio.state.edits
    for item in folder.iterdir():
        item.unlink()
    folder.rmdir()  # gone: the recipe trains it again here, with progress
    seen = []
    again = TrainedStudio.from_session(session, resolve_model(session.model, progress=lambda d, t: seen.append(d)))
    assert seen[-1] == 20 and again.model.path.parent.name == "lab-models"
    np.testing.assert_allclose(again.run.attentions, studio.run.attentions, rtol=0, atol=1e-12)
    assert again.state.model.lab == session.model.lab


def test_a_recipe_that_names_another_run_is_not_taken_for_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    made = {"experiment": "induction", "arm": "one layer", "seed": 2, "steps": 10}
    other = load_pretrained(train_recipe({**made, "seed": 3}))
    ref = model_ref_from_dict({"name": "x", "folder": None, "sha256": "0" * 64, "lab": made})
    found = resolve_model(ref, loaded=[other])  # a loaded lab model of another seed is not it
    assert found.training == {**made, "lr": 0.003} and found is not other


@pytest.mark.parametrize("lab, words", [
    ({"experiment": "induction", "arm": "two layers", "seed": 0}, "steps"),
    ({"experiment": "induction", "arm": "two layers", "seed": 0, "steps": 10, "colour": "red"}, "unknown field"),
    ({"experiment": "induction", "arm": "two layers", "seed": -1, "steps": 10}, "seed"),
    ({"experiment": "induction", "arm": "two layers", "seed": 0, "steps": 10, "lr": float("nan")}, "lr"),
    ("induction", "object"),
])
def test_a_broken_recipe_in_a_session_is_refused(lab, words):
    with pytest.raises(StateError, match=words):
        model_ref_from_dict({"name": "x", "folder": None, "sha256": "0" * 64, "lab": lab})


def test_a_recipe_the_lab_refuses_is_a_model_error(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ref = model_ref_from_dict({"name": "x", "folder": None, "sha256": "0" * 64,
                               "lab": {"experiment": "induction", "arm": "three layers", "seed": 0, "steps": 1}})
    with pytest.raises(ModelError, match="cannot be trained from its recipe: arm must be one of"):
        resolve_model(ref)
