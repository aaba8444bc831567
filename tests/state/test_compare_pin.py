"""The compare view's pinned "before" state lives in StudioState: saved with the session, undoable."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attn_studio.engine import multi_head_attention
from attn_studio.session import load_preset, read_session, state_from_json, state_to_json, write_session
from attn_studio.state import StateError, StudioState
from attn_studio.studio import Studio


def independent_weights(state: StudioState, x: np.ndarray) -> np.ndarray:
    """The weights of ``state`` on inputs ``x``, computed here with the engine's public function."""
    return multi_head_attention(x, state.w_q, state.w_k, state.w_v, state.w_o, scale=state.scale,
                                causal=state.causal, temperature=state.temperature, kind=state.softmax).weights


def pinned_then_edited() -> tuple[Studio, StudioState]:
    studio = Studio(load_preset("animal"))
    before = studio.state
    studio.pin()
    studio.update(causal=True)
    return studio, before


def test_pin_is_an_undoable_edit_that_keeps_the_state_it_pinned():
    studio, before = pinned_then_edited()
    assert studio.state.pinned == before and studio.state.causal
    assert studio.state.pinned.pinned is None
    studio.undo()  # the causal edit
    assert studio.state.pinned == before and not studio.state.causal
    studio.undo()  # the pin
    assert studio.state.pinned is None
    assert studio.comparison("pinned") is None
    studio.redo()
    assert studio.state.pinned == before
    studio.redo()
    assert studio.state.causal and studio.state.pinned == before


def test_pinning_changes_no_result_and_marks_the_session_modified():
    studio = Studio(load_preset("animal"))
    studio.mark_saved()
    result = studio.result
    studio.pin()
    assert studio.result is result  # nothing recomputed for the current state
    assert studio.is_modified


def test_comparison_of_pinned_and_now_comes_from_the_engine():
    studio, before = pinned_then_edited()
    c = studio.comparison("pinned")
    head = studio.state.shown_head
    expected_a = independent_weights(before, studio.x)[head]
    expected_b = independent_weights(studio.state, studio.x)[head]
    np.testing.assert_allclose(c.weights_a, expected_a)
    np.testing.assert_allclose(c.weights_b, expected_b)
    np.testing.assert_allclose(c.diff, expected_b - expected_a)
    assert c.largest == pytest.approx(np.abs(expected_b - expected_a).max())
    assert studio.comparison("pinned") is c  # computed once per state
    studio.update(temperature=2.0)
    assert studio.comparison("pinned") is not c


def test_a_pinned_state_with_other_tokens_is_not_compared():
    studio, _ = pinned_then_edited()
    studio.update(sentence="A different sentence entirely")
    assert studio.state.pinned is not None
    assert studio.comparison("pinned") is None


def test_pin_survives_save_and_load(tmp_path):
    studio, before = pinned_then_edited()
    path = tmp_path / "pinned.attn.json"
    write_session(path, studio.state)
    loaded = read_session(path)
    assert loaded == studio.state
    assert loaded.pinned == before and not loaded.pinned.causal and loaded.causal
    reopened = Studio(loaded)
    np.testing.assert_allclose(reopened.comparison("pinned").weights_a,
                               studio.comparison("pinned").weights_a)


def test_sessions_without_a_pin_load_and_save_without_one():
    state = load_preset("journey")
    data = state.to_dict()
    assert "pinned" not in data
    assert StudioState.from_dict(data).pinned is None


@pytest.mark.parametrize("pinned, message", [
    ("yesterday", "“pinned” must be one session state"),
    ({"schema_version": 2, "d_model": 0}, "the pinned comparison state"),
    ({"schema_version": 2, "pinned": {"schema_version": 2}}, "without a pinned state of its own"),
])
def test_a_bad_pinned_state_is_refused_with_a_reason(pinned, message):
    studio, _ = pinned_then_edited()
    data = studio.state.to_dict()
    data["pinned"] = pinned
    with pytest.raises(StateError, match=message):
        StudioState.from_dict(data)
    with pytest.raises(Exception, match=message):
        state_from_json(json.dumps(data))


def test_the_json_of_a_pinned_session_round_trips():
    studio, before = pinned_then_edited()
    assert state_from_json(state_to_json(studio.state)).pinned == before
