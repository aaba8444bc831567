"""The training lab's settings without Qt: one check for the panels, the window's memory and the
"training" section of a session file."""

from __future__ import annotations

import pytest

from attn_studio.training import EXPERIMENTS, ScalingExperiment, TrainingError
from attn_studio.training.scaling import MAX_D_K
from attn_studio.training.settings import (D_K_CHOICES, LAB_PANELS, SPEEDS, check_panel_settings,
                                           check_training_settings, default_training_settings,
                                           merge_training_settings)


def test_the_defaults_pass_the_check_and_name_every_panel_and_field():
    defaults = default_training_settings()
    assert check_training_settings(defaults) == defaults
    assert set(defaults) == {"panel", *LAB_PANELS} and set(LAB_PANELS) == set(EXPERIMENTS)
    assert defaults["panel"] == "scaling"
    assert set(defaults["scaling"]) == {"seed", "lr", "speed", "d_k"}
    assert set(defaults["seq2seq"]) == set(defaults["induction"]) == {"seed", "lr", "speed"}
    for name in LAB_PANELS:  # each panel starts at its experiment's own learning rate
        assert defaults[name]["lr"] == EXPERIMENTS[name].lr
    assert defaults["scaling"]["speed"] in SPEEDS and defaults["scaling"]["d_k"] in D_K_CHOICES


def test_every_d_k_the_panel_offers_builds_an_experiment():
    assert max(D_K_CHOICES) <= MAX_D_K
    assert ScalingExperiment(d_k=min(D_K_CHOICES), seed=0).d_k == min(D_K_CHOICES)


@pytest.mark.parametrize("values, says", [
    ([], "must be a table"),
    ({"other": {}}, "other"),
    ({"panel": "nope"}, "nope"),
    ({"panel": 1}, "panel"),
    ({"scaling": 3}, "“scaling”"),
    ({"scaling": {"d_k": 5}}, "d_k must be one of 4, 8"),
    ({"scaling": {"d_k": 64.0}}, "d_k"),
    ({"scaling": {"d_k": True}}, "d_k"),
    ({"seq2seq": {"lr": -1}}, "lr must be above 0"),
    ({"seq2seq": {"lr": 2.0}}, "lr must be above 0"),
    ({"seq2seq": {"lr": "0.1"}}, "lr must be a number"),
    ({"induction": {"speed": 7}}, "speed must be one of"),
    ({"induction": {"seed": "1"}}, "seed must be a whole number"),
    ({"induction": {"seed": -1}}, "seed must be between 0 and 999999"),
    ({"induction": {"seed": 1_000_000}}, "seed"),
    ({"induction": {"seed": False}}, "seed"),
    ({"seq2seq": {"d_k": 64}}, "unknown field in the training settings of the “seq2seq” panel: d_k"),
])
def test_a_bad_field_is_refused_with_a_message_that_names_it(values, says):
    with pytest.raises(TrainingError, match=says):
        check_training_settings(values)


def test_a_partial_table_is_checked_as_given_and_laid_over_the_rest():
    checked = check_training_settings({"scaling": {"seed": 7}, "panel": "induction"})
    assert checked == {"panel": "induction", "scaling": {"seed": 7}}
    merged = merge_training_settings(default_training_settings(), {"scaling": {"seed": 7, "d_k": 16}})
    assert merged["scaling"] == {**default_training_settings()["scaling"], "seed": 7, "d_k": 16}
    assert merged["seq2seq"] == default_training_settings()["seq2seq"]
    with pytest.raises(TrainingError, match="d_k"):
        merge_training_settings(default_training_settings(), {"scaling": {"d_k": 3}})


def test_one_panels_check_refuses_an_unknown_panel():
    assert check_panel_settings("scaling", {"speed": 0.0}) == {"speed": 0}
    with pytest.raises(TrainingError, match="unknown training panel"):
        check_panel_settings("bigrams", {})
