"""Lectures without a window (attn_studio.scenes): scenes checked field by field, files written
atomically and read back the same, hostile files refused naming the scene and field, and the example
lecture's captions stating the engine's numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attn_studio.engine import dot_product_variance
from attn_studio.pretrained import ModelError, default_model_zip
from attn_studio.scenes import (
    MAX_SCENES, MINILM_SHA256, VIEWS, Lecture, LectureError, Scene, example_lecture, lecture_from_json,
    read_lecture, scene_studio, write_lecture,
)
from attn_studio.session import load_preset
import attn_studio.training  # noqa: F401,E402 (as a notebook does: a lab scene's model is trained from its recipe)

HAS_MINILM = default_model_zip() is not None


def _toy_scene(**kw) -> Scene:
    base = dict(title="journey", view="Attention")
    base.update(kw)
    return Scene.of_state(base.pop("title"), load_preset("journey"), **base)


def test_a_lecture_is_written_atomically_and_read_back_the_same(tmp_path):
    lecture = example_lecture()
    path = tmp_path / "five-minutes.attn-lecture.json"
    write_lecture(lecture, path)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left beside it
    again = read_lecture(path)
    assert again == lecture
    assert again.to_dict() == json.loads(path.read_text(encoding="utf-8"))
    assert [s.view for s in again.scenes] == [s.view for s in lecture.scenes]


def test_every_scene_of_the_example_lecture_plays_without_a_window():
    lecture = example_lecture()
    assert len(lecture.scenes) >= 10 and all(s.view in VIEWS for s in lecture.scenes)
    for n, scene in enumerate(lecture.scenes, start=1):
        if scene.model_name == "all-MiniLM-L6-v2" and not HAS_MINILM:
            with pytest.raises(ModelError, match="all-MiniLM-L6-v2"):
                scene_studio(scene)
            continue
        studio = scene_studio(scene)
        assert np.isfinite(studio.result.weights).all(), n


def test_the_example_lecture_states_the_engines_numbers():
    scenes = {s.title: s for s in example_lecture().scenes}
    journey = scene_studio(scenes["One query, by hand"])
    row = journey.result.weights[0, 1]
    stated = scenes["One query, by hand"].caption.split("sentence ")[1]
    assert [float(x) for x in stated.split(", ")] == pytest.approx(row, abs=5e-5)
    causal = scene_studio(scenes["Causal mask"])
    assert causal.state.causal and causal.result.weights[:, 0, 0] == pytest.approx(1.0)
    assert "1.00" in scenes["Causal mask"].caption
    # √d_k: the variance argument at d_k = 64 (theory d_k unscaled, 1 scaled), and the two scenes' settings.
    curve = dot_product_variance([64], 20000, 0)
    assert curve.raw[0] == pytest.approx(64, rel=0.1) and curve.scaled[0] == pytest.approx(1, rel=0.1)
    unscaled, scaled = scene_studio(scenes["√d_k: without scaling"]), scene_studio(scenes["√d_k: scaled"])
    assert unscaled.state.d_k == scaled.state.d_k == 64 and not unscaled.state.scale and scaled.state.scale
    assert "√64 = 8" in scenes["√d_k: scaled"].caption
    for n in (2, 4, 8):
        studio = scene_studio(scenes[f"{n} heads"])
        assert studio.result.weights.shape[0] == n and f"d_k = {studio.state.d_k}" in scenes[f"{n} heads"].caption


@pytest.mark.skipif(not HAS_MINILM, reason="all-MiniLM-L6-v2 is not installed")
def test_the_minilm_scenes_state_what_the_model_computes():
    scenes = {s.title: s for s in example_lecture().scenes}
    scene = scenes["“it” → “animal” in MiniLM"]
    studio = scene_studio(scene)
    run = studio.computed.run
    it, animal = run.tokens.index("it"), run.tokens.index("animal")
    assert studio.model.weights_sha256() == MINILM_SHA256
    weight = float(run.attentions[3, 1, it, animal])
    assert f"{weight:.2f}" in scene.caption
    silenced = scene_studio(scenes["Head 4.2 silenced"])
    drift = silenced.computed.drift
    assert np.allclose(drift[:4], 0, atol=1e-12) and (drift[4:] > 0).all()  # the layers below stay, above move


def test_a_missing_model_is_named():
    scene = next(s for s in example_lecture().scenes if s.trained)
    data = scene.to_dict()
    data["session"]["model"]["sha256"] = "0" * 64
    with pytest.raises(ModelError, match="all-MiniLM-L6-v2"):
        scene_studio(Scene.from_dict(data))


@pytest.mark.parametrize("change, message", [
    (lambda d: d["scenes"][1].update(view="Sideways"), r"scene 2: view 'Sideways'"),
    (lambda d: d["scenes"][0].update(title=""), r"scene 1: title is empty"),
    (lambda d: d["scenes"][2].update(selection={"head": -1}), r"scene 3: selection head"),
    (lambda d: d["scenes"][2].update(selection={"zoom": 1}), r"scene 3: selection has an unknown entry"),
    (lambda d: d["scenes"][0].update(caption="two\nlines"), r"scene 1: caption must be one line"),
    (lambda d: d["scenes"][3]["session"].update(d_model="big"), r"scene 4: session"),
    (lambda d: d["scenes"][0].update(session=[]), r"scene 1: session must be an object"),
    (lambda d: d["scenes"][0].update(exec="import os"), r"scene 1: unknown field 'exec'"),
    (lambda d: d.update(kind="session"), r"not a lecture"),
    (lambda d: d.update(schema_version=99), r"newer Attention Studio"),
    (lambda d: d.update(scenes=[d["scenes"][0]] * (MAX_SCENES + 1)), r"at most"),
])
def test_a_broken_lecture_is_refused_naming_the_scene_and_the_field(tmp_path, change, message):
    data = example_lecture().to_dict()
    change(data)
    path = tmp_path / "broken.attn-lecture.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LectureError, match=message):
        read_lecture(path)


def test_hostile_text_is_refused_before_anything_is_built():
    for text in ("", "[" * 10_000, '{"kind": "lecture", "schema_version": 1e400}', "not json", "\x00"):
        with pytest.raises(LectureError):
            lecture_from_json(text)


def test_a_trained_view_needs_a_trained_session_and_scenes_are_frozen():
    with pytest.raises(LectureError, match="shows a trained model"):
        _toy_scene(view="Drift")
    scene = _toy_scene(selection={"query": 2})
    with pytest.raises(Exception):
        scene.title = "other"  # frozen
    lecture = Lecture("one", (scene,))
    assert Lecture.from_dict(lecture.to_dict()) == lecture
    assert scene_studio(scene).state.query_index == 2


def test_the_sqrt_dk_plots_are_a_scene_of_the_toy_model_only():
    scene = _toy_scene(view="Why divide by √d_k", selection={"page": 1})
    assert Lecture.from_dict(Lecture("plots", (scene,)).to_dict()).scenes[0] == scene
    trained = example_lecture().scenes[8].session
    with pytest.raises(LectureError, match="shows the toy model"):
        Scene(title="plots", view="Why divide by √d_k", session=trained)


def test_a_scene_keeps_its_pin_precision_last_page_and_training_steps():
    from attn_studio.scenes import Scene, LectureError, example_lecture
    import pytest as _pytest

    base = example_lecture().scenes[3]  # the causal mask: its first row's own cell pinned
    assert base.pin == (0, 0)
    scene = Scene.from_dict({**base.to_dict(), "selection": {"page": 1, "last": 2, "pin_query": 3, "pin_key": 1,
                                                            "digits": 4, "steps": 300}})
    assert scene.pin == (3, 1) and scene.selection["digits"] == 4 and scene.selection["last"] == 2
    assert Scene.from_dict(scene.to_dict()) == scene
    for bad, words in (({"pin_query": 1}, "go together"), ({"digits": 3}, "digits must be one of 2, 4"),
                       ({"steps": 10**5}, "at most 20,000")):
        with _pytest.raises(LectureError, match=words):
            Scene.from_dict({**base.to_dict(), "selection": bad})


def test_a_training_scene_keeps_its_runs_seed_within_the_labs_bounds():
    base = example_lecture().scenes[-1]
    assert base.view == "Training: Why two layers" and base.selection["seed"] == 0
    scene = Scene.from_dict({**base.to_dict(), "selection": {"page": 2, "steps": 2000, "seed": 999_999}})
    assert scene.selection["seed"] == 999_999 and Scene.from_dict(scene.to_dict()) == scene
    for bad in (1_000_000, -1, True, 2.5, "0"):
        with pytest.raises(LectureError, match="seed must be a whole number from 0 to 999,999"):
            Scene.from_dict({**base.to_dict(), "selection": {"seed": bad}})
