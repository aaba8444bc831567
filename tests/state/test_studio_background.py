"""Studio: an edit split in prepare / compute (on another thread) / install, as the window does for
large models; stale results refused; undo and redo the same way."""

import threading

import numpy as np
import pytest

from attn_studio.engine import EngineError
from attn_studio.state import StateError, StudioState
from attn_studio.studio import Studio


def assert_same_result(a, b):
    for name in ("scores", "logits", "weights", "output"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def on_thread(func, *args):
    """``func(*args)`` on another thread (as the window's worker runs it); its value or its error."""
    out = {}

    def run():
        try:
            out["value"] = func(*args)
        except Exception as exc:
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def recorded(studio):
    seen = []
    studio.subscribe(seen.append)
    return seen


def test_prepare_changes_nothing_and_install_equals_update():
    studio, direct = Studio(), Studio()
    seen = recorded(studio)
    before = studio.state
    pending = studio.prepare(coalesce="sentence", sentence="the cat sat on the mat")
    assert studio.state is before and seen == []  # prepared, not applied
    assert pending.changed == {"sentence"} and pending.state.sentence == "the cat sat on the mat"
    computed = on_thread(studio.compute, pending)
    assert studio.state is before and seen == []
    assert studio.install(computed) is True
    direct.update(coalesce="sentence", sentence="the cat sat on the mat")
    assert studio.state.sentence == direct.state.sentence and len(seen) == 1
    assert seen[0].changed == {"sentence"} and seen[0].result is studio.result
    assert_same_result(studio.result, direct.result)
    np.testing.assert_array_equal(studio.x, direct.x)
    assert studio.undo_label == direct.undo_label == "change sentence"


def test_a_stale_result_is_refused_and_the_newest_installs():
    studio = Studio()
    seen = recorded(studio)
    first = studio.prepare(sentence="one two three")
    second = studio.prepare(sentence="one two three four")
    assert not studio.is_current(first) and studio.is_current(second)
    late = studio.compute(first)
    assert studio.install(studio.compute(second)) is True
    assert studio.install(late) is False  # finished after the newer one: dropped
    assert studio.state.sentence == "one two three four" and len(seen) == 1
    assert studio.result.weights.shape[-1] == 4
    studio.undo()
    assert studio.state.sentence == StudioState().sentence  # one edit recorded, not two


def test_a_synchronous_edit_makes_a_prepared_one_stale():
    studio = Studio()
    pending = studio.prepare(d_model=6)
    studio.update(causal=True)
    assert studio.install(studio.compute(pending)) is False
    assert studio.state.d_model == StudioState().d_model and studio.state.causal


def test_a_selection_moved_while_computing_is_kept():
    studio = Studio(StudioState(sentence="a b c d e"))
    pending = studio.prepare(causal=True)
    computed = studio.compute(pending)
    studio.select(query=3)  # the person clicked a row meanwhile: not a model change
    assert studio.install(computed) is True
    assert studio.state.causal and studio.state.query_index == 3
    assert studio.result.weights[0, 0, 1] == 0  # the causal result went in


def test_prepare_call_prepares_any_edit_and_refuses_as_the_edit_does():
    studio = Studio()
    pending = studio.prepare_call("set_weight", "w_q", 0, 0, 0, "0.5")
    assert studio.state.w_q[0, 0, 0] != 0.5 and pending.state.w_q[0, 0, 0] == 0.5
    studio.install(studio.compute(pending))
    assert studio.state.w_q[0, 0, 0] == 0.5
    pending = studio.prepare_call("randomize", 77)
    assert pending.state.seed == 77 and studio.state.seed != 77
    assert studio.prepare_call("update", causal=studio.state.causal) is None  # nothing would change
    with pytest.raises(StateError, match="number"):
        studio.prepare_call("set_weight", "w_q", 0, 0, 0, "abc")
    with pytest.raises(StateError, match="not an edit"):
        studio.prepare_call("install", None)
    # Preparing applied nothing: after the refusals the studio edits as before.
    studio.update(seed=5)
    assert studio.state.seed == 5


def test_undo_and_redo_prepared_and_installed_later():
    studio = Studio()
    start = studio.state
    studio.update(sentence="a b")
    studio.update(causal=True)
    edited = studio.state
    pending = studio.prepare_undo()
    assert studio.state is edited  # nothing undone yet
    assert studio.install(on_thread(studio.compute, pending))
    assert not studio.state.causal and studio.state.sentence == "a b" and studio.can_redo
    redo = studio.prepare_redo()
    assert studio.install(studio.compute(redo)) and studio.state.causal
    assert studio.redo_label == "" and studio.undo_label == "change causal"
    studio.undo()
    studio.undo()
    assert studio.state.sentence == start.sentence and studio.prepare_undo() is None
    assert studio.prepare_redo() is not None


def test_an_engine_refusal_on_the_worker_changes_nothing(monkeypatch):
    from attn_studio import studio as studio_module

    studio = Studio()
    pending = studio.prepare(sentence="x y z")

    def refuse(*args, **kwargs):
        raise EngineError("refused for the test")

    monkeypatch.setattr(studio_module, "_attend", refuse)
    with pytest.raises(EngineError):
        on_thread(studio.compute, pending)
    assert studio.state.sentence == StudioState().sentence and not studio.can_undo


def test_an_undo_entry_equal_to_the_state_is_consumed_as_undo_always_did():
    studio = Studio(clock=lambda: 0.0)  # one instant: the two edits share an undo entry
    studio.update(coalesce="causal", causal=True)
    studio.update(coalesce="causal", causal=False)  # back where it started, one entry left
    seen = recorded(studio)
    pending = studio.prepare_undo()
    assert pending is not None and not pending.changed
    assert studio.install(studio.compute(pending)) is True
    assert not studio.can_undo and studio.can_redo and seen == []  # consumed, nothing to redraw
