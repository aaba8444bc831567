"""The training lab's settings in a session file: an optional top-level "training" section, written
beside the state, checked with the rest of the file, left out by the functions that return a state."""

import json

import pytest

from attn_studio.schema import TrainedSession
from attn_studio.session import SessionError, SessionFile, read_any_session, read_session, read_session_file, session_file_from_json, state_from_json, state_to_json, write_session
from attn_studio.recovery import RecoveryStore
from attn_studio.state import StudioState

SHA = "0123456789abcdef" * 4
TRAINED = {"schema_version": 4, "kind": "trained", "sentence": "The bank.",
           "model": {"name": "tiny-bert", "folder": None, "sha256": SHA}}
LAB = {"panel": "seq2seq", "scaling": {"seed": 7, "lr": 0.01, "speed": 0, "d_k": 16},
       "seq2seq": {"seed": 3, "lr": 0.003, "speed": 5}, "induction": {"seed": 0, "lr": 0.003, "speed": 20}}


def test_written_settings_come_back_beside_the_state(tmp_path):
    state = StudioState(sentence="the lab travels along", causal=True)
    path = tmp_path / "lab.attn.json"
    write_session(path, state, LAB)
    assert json.loads(path.read_text(encoding="utf-8"))["training"] == LAB
    opened = read_session_file(path)
    assert isinstance(opened, SessionFile)
    assert opened.training == LAB and opened.state.to_dict() == state.to_dict()
    # The names that return a state alone still open the file and leave the section out.
    assert read_session(path).to_dict() == state.to_dict()
    assert read_any_session(path).to_dict() == state.to_dict()


def test_a_file_without_the_section_opens_as_before(tmp_path):
    path = tmp_path / "old.attn.json"
    write_session(path, StudioState(d_model=4))
    assert "training" not in json.loads(path.read_text(encoding="utf-8"))
    opened = read_session_file(path)
    assert opened.training is None and opened.state.d_model == 4
    version_1 = session_file_from_json('{"schema_version": 1, "d_model": 2, "causal": true}')
    assert version_1.training is None and version_1.state.causal is True


def test_a_trained_session_carries_the_section_too():
    opened = session_file_from_json(json.dumps({**TRAINED, "training": {"panel": "induction"}}))
    assert isinstance(opened.state, TrainedSession) and opened.training == {"panel": "induction"}
    with pytest.raises(SessionError, match="trained model tiny-bert"):
        session_file_from_json(json.dumps({**TRAINED, "training": LAB}), trained=False)


@pytest.mark.parametrize("training, says", [
    ({"scaling": {"d_k": 5}}, "d_k must be one of"),
    ({"seq2seq": {"lr": 0}}, "lr must be above 0"),
    ({"induction": {"seed": "3"}}, "seed"),
    ({"panel": "bigrams"}, "bigrams"),
    ({"charts": {}}, "charts"),
    ("fast", "must be a table"),
])
def test_a_bad_section_refuses_the_whole_file_naming_the_field(training, says):
    toy = json.dumps({**StudioState().to_dict(), "training": training})
    trained = json.dumps({**TRAINED, "training": training})
    for read in (session_file_from_json, state_from_json):
        with pytest.raises(SessionError, match=says):
            read(toy)
    with pytest.raises(SessionError, match=says):
        session_file_from_json(trained)


def test_bad_settings_are_never_written(tmp_path):
    path = tmp_path / "kept.attn.json"
    write_session(path, StudioState(), LAB)
    before = path.read_bytes()
    with pytest.raises(SessionError, match="speed"):
        write_session(path, StudioState(causal=True), {"scaling": {"speed": 3}})
    assert path.read_bytes() == before
    with pytest.raises(SessionError, match="d_k"):
        state_to_json(StudioState(), {"scaling": {"d_k": 0}})


def test_the_recovery_file_keeps_the_section(tmp_path):
    store = RecoveryStore(tmp_path, pid=2**22 + 777)
    store.save(StudioState(causal=True), LAB)
    assert read_session_file(store.path).training == LAB
    store.save(StudioState(causal=True))
    assert read_session_file(store.path).training is None
