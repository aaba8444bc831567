"""Studio: results, validation without side effects, notification, undo/redo, resizing."""

import dataclasses

import numpy as np
import pytest

from attn_studio import studio as studio_module
from attn_studio.engine import Vocabulary, attention, multi_head_attention, sinusoidal_positions
from attn_studio.session import load_preset
from attn_studio.state import StateError, StudioState
from attn_studio.studio import Studio


def _softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _manual_mha(x, x_kv, w_q, w_k, w_v, w_o, *, scale, causal, temperature):
    """Multi-head attention written out with plain NumPy, independent of the engine."""
    heads = []
    weights = []
    for i in range(w_q.shape[0]):
        q, k, v = x @ w_q[i], x_kv @ w_k[i], x_kv @ w_v[i]
        logits = q @ k.T / (np.sqrt(q.shape[1]) if scale else 1.0) / temperature
        if causal:
            logits = np.where(np.triu(np.ones(logits.shape, bool), 1), -np.inf, logits)
        a = _softmax(logits)
        weights.append(a)
        heads.append(a @ v)
    concat = np.concatenate(heads, axis=1)
    return np.array(weights), (concat @ w_o if w_o is not None else concat)


class Recorder:
    def __init__(self, studio):
        self.changes = []
        self.unsubscribe = studio.subscribe(self.changes.append)

    def __len__(self):
        return len(self.changes)


def _result_arrays(result):
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)
            if isinstance(getattr(result, f.name), np.ndarray)}


def assert_results_equal(a, b):
    ra, rb = _result_arrays(a), _result_arrays(b)
    assert ra.keys() == rb.keys()
    for name in ra:
        assert ra[name].shape == rb[name].shape, name
        assert np.array_equal(ra[name], rb[name], equal_nan=True), name


# -- the result ------------------------------------------------------------------

@pytest.mark.parametrize("settings", [
    {},
    {"heads": 3, "d_model": 5, "d_head": 2, "seed": 4},
    {"heads": 2, "causal": True, "scale": False, "temperature": 0.5},
    {"heads": 2, "positional": True, "temperature": 3.0},
])
def test_result_equals_engine_and_manual_computation(settings):
    studio = Studio(StudioState(**settings))
    st = studio.state
    direct = multi_head_attention(studio.x, st.w_q, st.w_k, st.w_v, st.w_o,
                                  scale=st.scale, causal=st.causal, temperature=st.temperature)
    assert_results_equal(studio.result, direct)
    weights, output = _manual_mha(studio.x, studio.x, st.w_q, st.w_k, st.w_v, st.w_o,
                                  scale=st.scale, causal=st.causal, temperature=st.temperature)
    np.testing.assert_allclose(studio.result.weights, weights, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(studio.result.output, output, rtol=1e-12, atol=1e-14)
    assert studio.result.output.shape == (len(st.tokens), st.d_model)


def test_x_is_the_vocabulary_vectors_of_the_tokens():
    studio = Studio(StudioState(sentence="the cat saw the dog", d_model=4, seed=2))
    vocab = Vocabulary(4, 2)
    for row, word in zip(studio.x, studio.state.tokens):
        assert np.array_equal(row, vocab.vector(word))
    assert np.array_equal(studio.x[0], studio.x[3])  # "the" twice


@pytest.mark.parametrize("scale", [True, False])
def test_projections_off_is_simplified_attention(scale):
    studio = Studio(StudioState(heads=3, d_head=2, d_model=4, projections=False, scale=scale))
    x = studio.x
    plain = attention(x, x, x, scale=scale)
    assert studio.result.weights.shape == (1, len(x), len(x))
    np.testing.assert_array_equal(studio.result.weights[0], plain.weights)
    np.testing.assert_array_equal(studio.result.output, plain.output)
    eye = np.eye(4)[None]
    weights, output = _manual_mha(x, x, eye, eye, eye, None, scale=scale, causal=False, temperature=1.0)
    np.testing.assert_allclose(studio.result.weights, weights, rtol=1e-12)
    np.testing.assert_allclose(studio.result.output, output, rtol=1e-12)


def test_cross_attention_shapes_and_values():
    studio = Studio(StudioState(heads=2, d_model=4, d_head=3))
    studio.update(target_sentence="la banque est fermée")
    st, r = studio.state, studio.result
    assert st.cross and st.query_tokens == ["la", "banque", "est", "fermée"]
    assert r.weights.shape == (2, 4, 6)
    assert r.scores.shape == (2, 4, 6)
    assert r.output.shape == (4, 4)
    assert studio.x.shape == (4, 4) and studio.x_kv.shape == (6, 4)
    vocab = Vocabulary(4, 0)
    assert np.array_equal(studio.x, vocab.vectors(st.target_tokens))
    assert np.array_equal(studio.x_kv, vocab.vectors(st.tokens))
    weights, output = _manual_mha(studio.x, studio.x_kv, st.w_q, st.w_k, st.w_v, st.w_o,
                                  scale=True, causal=False, temperature=1.0)
    np.testing.assert_allclose(r.weights, weights, rtol=1e-12)
    np.testing.assert_allclose(r.output, output, rtol=1e-12)
    studio.update(target_sentence="")
    assert studio.result.weights.shape == (2, 6, 6)


def test_causal_zeroes_strict_upper_triangle_of_every_head():
    studio = Studio(StudioState(heads=3, d_model=6, d_head=2))
    assert np.all(studio.result.weights[:, np.triu_indices(6, 1)[0], np.triu_indices(6, 1)[1]] > 0)
    studio.update(causal=True)
    w = studio.result.weights
    upper = np.triu(np.ones((6, 6), bool), 1)
    for head in w:
        assert np.all(head[upper] == 0.0)
        assert np.all(head[~upper] > 0.0)
        np.testing.assert_allclose(head.sum(axis=1), 1.0)
    assert w[:, 0, 0].tolist() == [1.0, 1.0, 1.0]


def test_positional_adds_exactly_sinusoidal_positions():
    studio = Studio(StudioState(d_model=5))
    x_off = np.array(studio.x)
    studio.update(positional=True)
    pe = sinusoidal_positions(6, 5)
    assert np.array_equal(studio.x, x_off + pe)
    # and those are the textbook sinusoids
    pos = np.arange(6)[:, None]
    i = np.arange(5)
    angle = pos / 10000.0 ** (2 * (i // 2) / 5)
    textbook = np.where(i % 2 == 0, np.sin(angle), np.cos(angle))
    np.testing.assert_allclose(studio.x - x_off, textbook, atol=1e-15)
    studio.update(positional=False)
    assert np.array_equal(studio.x, x_off)


# -- invalid updates -------------------------------------------------------------

@pytest.mark.parametrize("changes", [
    {"d_model": 0}, {"heads": 99}, {"temperature": float("nan")}, {"softmax": "nope"},
    {"causal": "yes"}, {"query_index": 50}, {"w_q": np.zeros((2, 2, 2))}, {"bogus": 1},
])
def test_invalid_update_changes_nothing(changes):
    studio = Studio()
    studio.update(causal=True)
    state, result, x = studio.state, studio.result, studio.x
    rec = Recorder(studio)
    with pytest.raises(StateError):
        studio.update(**changes)
    assert studio.state is state
    assert studio.result is result
    assert studio.x is x
    assert len(rec) == 0
    studio.undo()
    assert studio.state == StudioState()  # the undo stack was not touched either


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "1e400", "", "-inf", "NaN"])
def test_set_embedding_refuses_bad_text(text):
    studio = Studio()
    before_state, before_x = studio.state, np.array(studio.x)
    rec = Recorder(studio)
    with pytest.raises(StateError):
        studio.set_embedding("journey", 1, text)
    assert studio.state is before_state
    assert np.array_equal(studio.x, before_x)
    assert len(rec) == 0 and not studio.can_undo and not studio.is_modified


def test_set_embedding_and_weight_bad_targets():
    studio = Studio()
    with pytest.raises(StateError):
        studio.set_embedding("unicorn", 0, 1.0)
    with pytest.raises(StateError):
        studio.set_embedding("journey", 3, 1.0)  # d_model = 3
    with pytest.raises(StateError):
        studio.set_weight("w_z", 0, 0, 0, 1.0)
    with pytest.raises(StateError):
        studio.set_weight("w_q", 1, 0, 0, 1.0)  # one head
    with pytest.raises(StateError):
        studio.set_weight("w_k", 0, 0, 0, "abc")
    assert studio.state == StudioState() and not studio.can_undo


def test_set_embedding_changes_every_row_of_a_repeated_word():
    studio = Studio(StudioState(sentence="the cat saw the dog"))
    before = np.array(studio.x)
    studio.set_embedding("the", 0, "4.5")
    assert studio.x[0, 0] == 4.5 and studio.x[3, 0] == 4.5
    assert np.array_equal(studio.x[:, 1:], before[:, 1:])
    assert np.array_equal(studio.x[[1, 2, 4]], before[[1, 2, 4]])
    assert dict(studio.state.embedding_edits["the"]) == {0: 4.5}


def test_set_weight_sets_exactly_one_entry():
    studio = Studio(StudioState(heads=2))
    before = {n: np.array(getattr(studio.state, n)) for n in ("w_q", "w_k", "w_v", "w_o")}
    studio.set_weight("w_v", 1, 2, 0, "-0.75")
    studio.set_weight("w_o", 0, 4, 1, 0.125)
    after = {n: getattr(studio.state, n) for n in before}
    expected_v = before["w_v"].copy()
    expected_v[1, 2, 0] = -0.75
    expected_o = before["w_o"].copy()
    expected_o[4, 1] = 0.125
    assert np.array_equal(after["w_v"], expected_v)
    assert np.array_equal(after["w_o"], expected_o)
    assert np.array_equal(after["w_q"], before["w_q"]) and np.array_equal(after["w_k"], before["w_k"])


def test_sentence_edit_keeps_vectors_of_words_that_stay():
    studio = Studio()
    studio.set_embedding("journey", 0, 7.0)
    rows = {w: np.array(r) for w, r in zip(studio.state.tokens, studio.x)}
    studio.update(sentence="one step starts a new journey")
    for word, row in zip(studio.state.tokens, studio.x):
        if word in rows:
            assert np.array_equal(row, rows[word]), word
    assert studio.x[studio.state.tokens.index("journey"), 0] == 7.0
    studio.update(sentence="Your journey starts with one step")
    assert np.array_equal(studio.x, np.array([rows[w] for w in studio.state.tokens]))


# -- subscribers -----------------------------------------------------------------

def test_subscribers_called_once_per_change():
    studio = Studio()
    a, b = Recorder(studio), Recorder(studio)
    studio.update(causal=True, temperature=2.0)
    assert len(a) == len(b) == 1
    change = a.changes[0]
    assert change.changed == {"causal", "temperature"}
    assert change.state is studio.state and change.result is studio.result
    assert change.old == StudioState()
    studio.set_embedding("step", 0, 1.0)
    studio.set_weight("w_q", 0, 0, 0, 2.0)
    studio.undo()
    studio.redo()
    studio.select(query=3)
    assert len(a) == 6 and a.changes[-1].selection_only
    b.unsubscribe()
    studio.update(causal=False)
    assert len(a) == 7 and len(b) == 6


def test_no_op_updates_notify_nobody():
    studio = Studio()
    studio.update(causal=True)
    rec = Recorder(studio)
    state = studio.state
    studio.update()
    studio.update(causal=True)
    studio.update(sentence=studio.state.sentence, d_model=3)
    studio.select(query=0)
    studio.set_weight("w_q", 0, 1, 1, float(studio.state.w_q[0, 1, 1]))
    studio.set_state(StudioState(causal=True))
    studio.randomize(seed=0)
    assert len(rec) == 0
    assert studio.state is state
    studio.undo()
    assert not studio.can_undo  # no-ops added no undo entries


def test_failing_subscriber_does_not_stop_the_others():
    studio = Studio()
    rec = Recorder(studio)

    def broken(change):
        raise RuntimeError("view crashed")

    studio.subscribe(broken)
    rec2 = Recorder(studio)
    with pytest.raises(RuntimeError):
        studio.update(causal=True)
    assert len(rec) == len(rec2) == 1
    assert studio.state.causal


# -- undo / redo -------------------------------------------------------------------

def test_undo_redo_restore_exact_states():
    studio = Studio()
    states = [studio.state]
    results = [studio.result]
    edits = [
        lambda: studio.update(causal=True),
        lambda: studio.set_weight("w_q", 0, 1, 2, 3.5),
        lambda: studio.set_embedding("journey", 2, "-2"),
        lambda: studio.update(d_model=5),
        lambda: studio.update(heads=2),
        lambda: studio.update(sentence="a new sentence"),
        lambda: studio.update(temperature=0.25, softmax="naive"),
        lambda: studio.randomize(seed=11),
    ]
    for edit in edits:
        edit()
        states.append(studio.state)
        results.append(studio.result)
    assert all(states[i] != states[i + 1] for i in range(len(states) - 1))
    for i in range(len(edits) - 1, -1, -1):
        assert studio.undo()
        assert studio.state == states[i]
        assert_results_equal(studio.result, results[i])
        assert_results_equal(studio.result, Studio(states[i]).result)
    assert not studio.undo() and not studio.can_undo
    for i in range(1, len(edits) + 1):
        assert studio.redo()
        assert studio.state == states[i]
        assert_results_equal(studio.result, Studio(states[i]).result)
    assert not studio.redo()
    # undo twice, then a new edit clears the redo stack
    studio.undo()
    studio.undo()
    assert studio.can_redo
    studio.update(scale=False)
    assert not studio.can_redo and not studio.redo()
    assert studio.undo() and studio.state == states[-3]


def test_selection_is_not_an_edit():
    studio = Studio(StudioState(heads=2))
    rec = Recorder(studio)
    studio.select(query=4, head=1)
    assert (studio.state.query_index, studio.state.head_index) == (4, 1)
    assert len(rec) == 1
    assert not studio.can_undo
    assert not studio.is_modified
    studio.update(causal=True)
    studio.select(query=2)
    assert studio.is_modified
    studio.undo()
    assert not studio.state.causal and not studio.is_modified


def test_is_modified_and_mark_saved():
    studio = Studio()
    assert not studio.is_modified
    studio.update(causal=True)
    assert studio.is_modified
    studio.mark_saved()
    assert not studio.is_modified
    studio.undo()
    assert studio.is_modified
    studio.redo()
    assert not studio.is_modified


class ManualClock:
    """A clock that moves only when told: coalescing is decided by these seconds, not the wall clock's."""

    def __init__(self, now: float = 100.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_coalesced_burst_is_one_undo_entry():
    clock = ManualClock()
    studio = Studio(clock=clock)
    studio.update(causal=True)
    for t in (1.5, 2.0, 2.5, 3.0):
        clock.now += studio_module.COALESCE_SECONDS * 0.9  # each edit soon after the last one
        studio.update(temperature=t, coalesce="temperature")
    assert studio.state.temperature == 3.0
    assert studio.undo()
    assert studio.state == StudioState(causal=True)
    assert studio.undo()
    assert studio.state == StudioState()
    assert not studio.can_undo


def test_different_coalesce_keys_and_pauses_make_separate_entries():
    clock = ManualClock()
    studio = Studio(clock=clock)
    studio.update(temperature=2.0, coalesce="temperature")
    clock.now += 0.1
    studio.update(temperature=3.0, coalesce="temperature")  # merged
    clock.now += 0.1
    studio.update(d_model=4, coalesce="d_model")  # other key
    clock.now += studio_module.COALESCE_SECONDS + 0.5
    studio.update(d_model=5, coalesce="d_model")  # after a pause
    studio.undo()
    assert studio.state.d_model == 4
    studio.undo()
    assert studio.state.d_model == 3 and studio.state.temperature == 3.0
    studio.undo()
    assert studio.state == StudioState()
    assert not studio.can_undo


# -- resizing through the Studio ------------------------------------------------------

def _edited_studio():
    studio = Studio(StudioState(d_model=4, heads=2, d_head=3))
    studio.set_weight("w_q", 1, 3, 2, 6.25)    # last row/col of head 1: hidden by every shrink
    studio.set_weight("w_q", 0, 0, 0, -3.75)   # stays visible
    studio.set_weight("w_o", 0, 5, 3, 1.125)   # head 1, last d_head col row, last d_model col
    studio.set_embedding("journey", 3, "8.5")
    studio.set_embedding("journey", 0, "-8.5")
    return studio


@pytest.mark.parametrize("small", [{"d_model": 2}, {"heads": 1}, {"d_head": 1},
                                   {"d_model": 1, "heads": 1, "d_head": 2}])
def test_shrink_and_grow_back_restores_edits(small):
    studio = _edited_studio()
    big = studio.state
    w = {n: np.array(getattr(big, n)) for n in ("w_q", "w_k", "w_v")}
    x = np.array(studio.x)
    studio.update(**small)
    st = studio.state
    h, d, k = st.heads, st.d_model, st.d_head
    # what still fits is kept
    for name, arr in w.items():
        assert np.array_equal(getattr(st, name), arr[:h, :d, :k]), name
    assert st.w_q[0, 0, 0] == -3.75
    assert np.array_equal(studio.x, x[:, :d])
    assert studio.x[1, 0] == -8.5
    assert studio.result.output.shape == (6, d)
    # growing back shows the hidden values again
    studio.update(d_model=4, heads=2, d_head=3)
    assert studio.state == big
    assert studio.state.w_q[1, 3, 2] == 6.25
    assert studio.state.w_o[5, 3] == 1.125
    assert studio.x[1, 3] == 8.5
    assert np.array_equal(studio.x, x)
    assert_results_equal(studio.result, Studio(big).result)


def test_step_by_step_shrink_and_grow():
    studio = _edited_studio()
    big = studio.state
    for d in (3, 2, 1):
        studio.update(d_model=d, coalesce="d_model")
    for d in (2, 3, 4):
        studio.update(d_model=d, coalesce="d_model")
    assert studio.state == big


def test_new_seed_through_studio_is_reproducible():
    a, b, c = _edited_studio(), _edited_studio(), _edited_studio()
    a.randomize(seed=42)
    b.randomize(seed=42)
    c.randomize(seed=43)
    for name in ("w_q", "w_k", "w_v", "w_o"):
        assert np.array_equal(getattr(a.state, name), getattr(b.state, name))
        assert not np.array_equal(getattr(a.state, name), getattr(c.state, name))
    assert a.state.w_q[1, 3, 2] != 6.25  # the weight edit belonged to the old seed
    assert np.array_equal(a.x, b.x) and not np.array_equal(a.x, c.x)
    assert a.x[1, 3] == 8.5 == c.x[1, 3]  # embedding edits stick to the word
    assert_results_equal(a.result, b.result)
    a.undo()
    assert a.state.seed == 0 and a.state.w_q[1, 3, 2] == 6.25


def test_randomize_without_seed_changes_the_seed():
    studio = Studio()
    studio.randomize()
    assert studio.state.seed != 0
    assert not np.array_equal(studio.state.w_q, StudioState().w_q)


# -- selection clamping -----------------------------------------------------------

@pytest.mark.parametrize("select,edit", [
    ({"query": 5}, {"sentence": "Your journey"}),
    ({"head": 1}, {"heads": 1}),
    ({"query": 5}, {"target_sentence": "la banque"}),
])
def test_model_edit_clamps_the_selection(select, edit):
    studio = Studio(StudioState(heads=2))
    studio.select(**select)
    studio.update(**edit)
    st = studio.state
    assert 0 <= st.query_index < len(st.query_tokens)
    assert 0 <= st.head_index < st.heads


def test_variance_and_saturation_curves_are_shared_by_every_studio():
    a, b = Studio(), Studio(load_preset("bank"))
    assert a.variance_curve() is b.variance_curve()
    assert a.saturation_curve() is b.saturation_curve()
    curve = a.variance_curve()
    np.testing.assert_array_equal(curve.dims, studio_module.CURVE_DIMS)
    with pytest.raises(ValueError):  # shared, so nobody may change it in place
        curve.raw[0] = 0.0


def test_weights_with_another_softmax_is_computed_once_per_result():
    studio = Studio(load_preset("bank"))
    studio.update(softmax="naive")
    logits = studio.result.logits
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    stable = studio.weights_with("stable")
    np.testing.assert_allclose(stable, shifted / shifted.sum(axis=-1, keepdims=True))
    assert studio.weights_with("stable") is stable
    studio.update(temperature=2.0)
    assert studio.weights_with("stable") is not stable
    np.testing.assert_allclose(studio.weights_with("stable").sum(axis=-1), 1.0)
