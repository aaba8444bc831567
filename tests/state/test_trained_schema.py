"""Version-4 session files (a trained model): every field checked before anything is built,
without the model; toy files of versions 1-3 keep loading."""

import json

import pytest

from attn_studio.schema import TRAINED_SCHEMA_VERSION, ModelRef, TrainedSession
from attn_studio.session import SessionError, session_from_json, state_from_json
from attn_studio.state import StudioState

SHA = "0123456789abcdef" * 4
GOOD = {
    "schema_version": 4, "kind": "trained", "name": "", "sentence": "The bank.", "second_sentence": "A bank.",
    "word": "bank", "model": {"name": "tiny-bert", "folder": None, "sha256": SHA},
    "selection": {"layer": 1, "head": 2, "query": 3}, "view": {"rollout": True, "mean_heads": False},
    "edits": {"head_scale": [[1, 2, 0.0]], "weights": [[0, 1, "q", [[0.5, 1.0], [2.0, -1.0]]]]},
}


def _with(path, value):
    data = json.loads(json.dumps(GOOD))
    node = data
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return json.dumps(data)


_DELETE = object()


def test_a_good_file_parses_without_the_model():
    session = session_from_json(json.dumps(GOOD))
    assert isinstance(session, TrainedSession)
    assert session.model == ModelRef("tiny-bert", None, SHA)
    assert (session.layer, session.head, session.query) == (1, 2, 3)
    assert session.rollout and not session.mean_heads and session.word == "bank"
    assert session.edits.head_scale == {(1, 2): 0.0}
    assert session.edits.weights[(0, 1, "q")].tolist() == [[0.5, 1.0], [2.0, -1.0]]
    assert TRAINED_SCHEMA_VERSION == 4


@pytest.mark.parametrize("path, value, match", [
    (("model", "sha256"), "abc", "sha256 must be 64"),
    (("model", "sha256"), SHA.upper(), "sha256 must be 64"),
    (("model", "name"), "", "name is empty"),
    (("model", "name"), 7, "must be text"),
    (("model", "folder"), "", "folder must be"),
    (("model", "extra"), 1, "unknown field in “model”"),
    (("model",), _DELETE, "“model” must be an object"),
    (("sentence",), _DELETE, "“sentence” is missing"),
    (("sentence",), 12, "must be text"),
    (("sentence",), "x" * 20_001, "limit is 20,000"),
    (("selection", "layer"), True, "whole number"),
    (("selection", "head"), -1, "between 0 and"),
    (("selection", "other"), 1, "“selection” must be"),
    (("view", "rollout"), "yes", "true or false"),
    (("edits", "head_scale"), [[0, 0, 3.0]], "between 0 and 2"),
    (("edits", "head_scale"), [[0, 0]], "malformed"),
    (("edits", "head_scale"), {"a": 1}, "must be a list"),
    (("edits", "weights"), [[0, 0, "x", [[1.0]]]], "one of q, k, v"),
    (("edits", "weights"), [[0, 0, "q", [[1.0, "a"]]]], "array of numbers"),
    (("edits", "weights"), [[0, 0, "q", [[1.0, 2e7]]]], "beyond"),
    (("edits", "weights"), [[-1, 0, "q", [[1.0]]]], "whole number >= 0"),
    (("edits", "extra"), [], "“edits” must be"),
    (("surprise",), 1, "unknown field"),
    (("kind",), _DELETE, "format version 4"),
])
def test_every_field_is_checked(path, value, match):
    with pytest.raises(SessionError, match=match):
        session_from_json(_with(path, value))


def test_the_toy_reader_names_the_trained_model():
    with pytest.raises(SessionError, match="trained model tiny-bert"):
        state_from_json(json.dumps(GOOD))


def test_toy_files_still_load_through_either_reader():
    toy = StudioState(sentence="a b c").to_dict()
    assert isinstance(session_from_json(json.dumps(toy)), StudioState)
    for version in (1, 2):
        assert isinstance(session_from_json(json.dumps({"schema_version": version, "sentence": "x y"})), StudioState)
    with pytest.raises(SessionError, match="newer"):
        session_from_json(json.dumps({"schema_version": 5}))
