"""The shipped presets load and reproduce the numbers of the lecture notes."""

import json

import numpy as np
import pytest

from attn_studio.resources import presets_dir
from attn_studio.schema import SCHEMA_VERSION
from attn_studio.session import SessionError, load_preset, preset_names, read_session, state_to_json
from attn_studio.studio import Studio

EXPECTED = {"journey", "bank", "money-bank-2d", "animal"}


def test_preset_names():
    names = preset_names()
    assert EXPECTED <= set(names)
    assert len(names) == len(set(names))
    assert names[:2] == ["journey", "bank"]
    on_disk = {p.name[: -len(".attn.json")] for p in presets_dir().glob("*.attn.json")}
    assert set(names) == on_disk


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_loads_and_computes(name):
    state = load_preset(name)
    assert state.tokens, name
    raw = json.loads((presets_dir() / f"{name}.attn.json").read_text("utf-8"))
    assert state.sentence == raw["sentence"]
    assert state.d_model == raw["d_model"] and state.heads == raw["heads"]
    studio = Studio(state)
    r = studio.result
    assert np.all(np.isfinite(r.output)) and np.all(np.isfinite(r.weights))
    np.testing.assert_allclose(r.weights.sum(axis=-1), 1.0)
    # it reads the same from disk again and writes back the numbers it was read from
    written = json.loads(state_to_json(state))
    assert written["schema_version"] == SCHEMA_VERSION >= raw["schema_version"]
    for key in set(raw) - {"description", "weights", "schema_version"}:
        assert written[key] == raw[key], key
    if "weights" in raw:
        assert written["weights"] == raw["weights"]
    assert read_session(presets_dir() / f"{name}.attn.json") == state


def test_journey_matches_the_seed():
    studio = Studio(load_preset("journey"))
    assert studio.state.tokens == ["Your", "journey", "starts", "with", "one", "step"]
    assert studio.state.query_index == 1
    np.testing.assert_allclose(studio.result.weights[0, 1],
                               [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581], atol=5e-5)
    np.testing.assert_allclose(studio.result.output[1], [0.4419, 0.6515, 0.5683], atol=5e-5)


def test_bank_matches_the_spreadsheet_seed():
    studio = Studio(load_preset("bank"))
    tokens = studio.state.tokens
    assert tokens == ["A", "man", "has", "kept", "money", "in", "the", "bank"]
    row = tokens.index("bank")
    assert studio.state.query_index == row
    np.testing.assert_allclose(
        studio.result.weights[0, row],
        [0.15614, 0.13398, 0.11098, 0.10419, 0.11014, 0.11062, 0.09593, 0.17802], atol=5e-5)
    np.testing.assert_allclose(studio.result.output[row], [-0.1061, -0.13715, -0.02285], atol=5e-5)


def test_animal_tokens():
    state = load_preset("animal")
    assert state.tokens == ["The", "animal", "didn't", "cross", "the", "street", "because", "it",
                            "was", "too", "tired"]
    assert state.tokens[state.query_index] == "it"
    studio = Studio(state)
    assert studio.result.weights.shape == (state.heads, 11, 11)


def test_money_bank_2d_tokens():
    state = load_preset("money-bank-2d")
    assert state.tokens == ["money", "bank", "river"]
    assert state.d_model == 2
    studio = Studio(state)
    assert studio.x.tolist() == [[0.9, 0.1], [0.6, 0.6], [0.1, 0.9]]
    # "bank" lies between "money" and "river": its attention splits evenly between them
    w = studio.result.weights[0, 1]
    assert w[0] == pytest.approx(w[2])


def test_unknown_preset_names_the_available_ones():
    with pytest.raises(SessionError) as info:
        load_preset("nope")
    message = str(info.value)
    assert "nope" in message
    for name in preset_names():
        assert name in message


@pytest.mark.parametrize("name", ["../journey", "journey.attn.json", "", "JOURNEY"])
def test_preset_lookup_is_by_exact_name(name):
    with pytest.raises(SessionError):
        load_preset(name)
