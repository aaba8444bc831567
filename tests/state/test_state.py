"""StudioState: validation, immutability, replace(), resizing through the weight stores."""

import dataclasses

import numpy as np
import pytest

from attn_studio.state import StateError, StudioState, parse_number

WEIGHTS = ("w_q", "w_k", "w_v", "w_o")
STORES = tuple(f"{n}_store" for n in WEIGHTS)


def test_a_bad_value_raises_a_state_error_that_callers_catch_as_value_error():
    with pytest.raises(ValueError, match="d_model must be between 1 and") as info:
        StudioState(d_model=0)
    assert type(info.value) is StateError


# -- validation ---------------------------------------------------------------

BAD_VALUES = [
    ("d_model", 0), ("d_model", 513), ("d_model", 2.5), ("d_model", "3"), ("d_model", True),
    ("d_model", None), ("d_model", -1),
    ("heads", 0), ("heads", 17), ("heads", 1.5), ("heads", "2"), ("heads", False),
    ("d_head", 0), ("d_head", 257), ("d_head", 0.5), ("d_head", "3"), ("d_head", True),
    ("seed", -1), ("seed", 2**31), ("seed", "0"), ("seed", 1.5),
    ("temperature", 0), ("temperature", -1), ("temperature", float("nan")),
    ("temperature", float("inf")), ("temperature", float("-inf")), ("temperature", 1e-4),
    ("temperature", 1e4), ("temperature", True), ("temperature", None), ("temperature", "warm"),
    ("softmax", "fancy"), ("softmax", None), ("softmax", "STABLE"), ("softmax", 1),
    ("score", "mlp"), ("score", None), ("score", ""),
    ("scale", 1), ("scale", "yes"), ("scale", None),
    ("causal", 0), ("causal", "false"),
    ("positional", 1.0), ("positional", []),
    ("projections", "True"), ("projections", None),
    ("sentence", 5), ("sentence", None), ("target_sentence", ["a"]), ("name", 3),
    ("query_index", 6), ("query_index", -1), ("query_index", "0"), ("query_index", True),
    ("query_index", 1.5),
    ("head_index", 1), ("head_index", -1), ("head_index", "0"), ("head_index", 0.5),
]


@pytest.mark.parametrize("field,value", BAD_VALUES, ids=[f"{f}={v!r}" for f, v in BAD_VALUES])
def test_invalid_field_raises_state_error_naming_the_field(field, value):
    with pytest.raises(StateError) as info:
        StudioState(**{field: value})
    assert field in str(info.value)


@pytest.mark.parametrize("field,value", BAD_VALUES[:12], ids=[f"{f}={v!r}" for f, v in BAD_VALUES[:12]])
def test_replace_validates_too(field, value):
    state = StudioState()
    with pytest.raises(StateError) as info:
        state.replace(**{field: value})
    assert field in str(info.value)
    assert state == StudioState()


def test_valid_boundaries_are_accepted():
    s = StudioState(d_model=512, heads=16, d_head=1, seed=2**31 - 1, temperature=1e-3)
    assert (s.d_model, s.heads, s.d_head) == (512, 16, 1)
    assert StudioState(d_model=1, temperature=1e3).temperature == 1000.0
    # a float that is a whole number is a whole number
    assert StudioState(d_model=4.0).d_model == 4
    assert type(StudioState(d_model=4.0).d_model) is int
    assert StudioState(scale=np.bool_(False)).scale is False


@pytest.mark.parametrize("field", ["sentence", "target_sentence"])
def test_too_many_tokens(field):
    ok = StudioState(**{field: "a " * 2048})
    assert len(getattr(ok, "tokens" if field == "sentence" else "target_tokens")) == 2048
    with pytest.raises(StateError) as info:
        StudioState(**{field: "a " * 2049})
    assert field in str(info.value) and "token" in str(info.value)


def test_too_long_sentence():
    with pytest.raises(StateError, match="sentence"):
        StudioState(sentence="x" * 20_001)


def test_query_index_bounded_by_query_tokens_in_cross_attention():
    # 6 source tokens, 2 target tokens: the queries are the target's
    StudioState(target_sentence="la banque", query_index=1)
    with pytest.raises(StateError, match="query_index"):
        StudioState(target_sentence="la banque", query_index=2)


def test_head_index_bounded_by_heads():
    assert StudioState(heads=3, head_index=2).head_index == 2
    with pytest.raises(StateError, match="head_index"):
        StudioState(heads=3, head_index=3)


def test_unknown_setting_is_refused():
    with pytest.raises(StateError, match="colour"):
        StudioState().replace(colour="red")


@pytest.mark.parametrize("name,shape", [("w_q", (1, 3, 2)), ("w_k", (3, 3)), ("w_v", (2, 3, 3)), ("w_o", (1, 3, 3))])
def test_replace_with_wrong_weight_shape(name, shape):
    with pytest.raises(StateError, match=name):
        StudioState().replace(**{name: np.zeros(shape)})


def test_weights_must_be_finite_and_bounded():
    for bad in (np.nan, np.inf, 1e7):
        w = np.zeros((1, 3, 3))
        w[0, 1, 1] = bad
        with pytest.raises(StateError, match="w_q"):
            StudioState().replace(w_q=w)


def test_embedding_edits_validated():
    with pytest.raises(StateError):
        StudioState(embedding_edits={"cat": {0: float("nan")}})
    with pytest.raises(StateError):
        StudioState(embedding_edits={"": {0: 1.0}})
    with pytest.raises(StateError):
        StudioState(embedding_edits={"cat": {512: 1.0}})
    with pytest.raises(StateError):
        StudioState(embedding_edits=[("cat", {0: 1.0})])


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "-inf", "1e400", "", "   ", "1,5", None, True])
def test_parse_number_refuses(text):
    with pytest.raises(StateError):
        parse_number(text)


@pytest.mark.parametrize("text,value", [("0.5", 0.5), (" 2 ", 2.0), ("-1e-3", -0.001), ("\u22120.25", -0.25), (3, 3.0)])
def test_parse_number_accepts(text, value):
    assert parse_number(text) == value


# -- immutability ---------------------------------------------------------------

def _all_arrays(state):
    return {name: getattr(state, name) for name in WEIGHTS + STORES}


@pytest.mark.parametrize("kwargs", [{}, {"heads": 2, "d_model": 4, "d_head": 2}])
def test_arrays_are_read_only(kwargs):
    state = StudioState(**kwargs)
    for name, arr in _all_arrays(state).items():
        with pytest.raises(ValueError):
            arr[(0,) * arr.ndim] = 42.0
    for name, arr in _all_arrays(state).items():
        assert arr[(0,) * arr.ndim] != 42.0, name


def test_visible_weights_read_only_after_shrinking_d_model_and_heads():
    state = StudioState(heads=2, d_model=4, d_head=3).replace(d_model=2).replace(heads=1)
    for name in WEIGHTS:
        arr = getattr(state, name)
        with pytest.raises(ValueError):
            arr[0, 0] = 42.0


def test_w_o_read_only_after_shrinking_d_head():
    state = StudioState(heads=2).replace(d_head=2)
    with pytest.raises(ValueError):
        state.w_o[0, 0] = 42.0


def test_state_is_frozen_and_edits_are_read_only():
    state = StudioState(embedding_edits={"cat": {0: 1.0}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.d_model = 5
    with pytest.raises(TypeError):
        state.embedding_edits["dog"] = {0: 1.0}
    with pytest.raises(TypeError):
        state.embedding_edits["cat"][0] = 2.0


def test_state_copies_arrays_given_to_it():
    w = np.full((1, 3, 3), 0.5)
    state = StudioState(w_q_store=w)
    w[0, 0, 0] = 9.0
    assert state.w_q[0, 0, 0] == 0.5
    edits = {"cat": {0: 1.0}}
    state = StudioState(embedding_edits=edits)
    edits["cat"][0] = 7.0
    assert state.embedding_edits["cat"][0] == 1.0


def test_replace_returns_new_state_and_leaves_old_unchanged():
    old = StudioState()
    snapshot = {name: np.array(a) for name, a in _all_arrays(old).items()}
    old_dict = old.to_dict()
    w = np.arange(9, dtype=float).reshape(1, 3, 3) / 10
    new = old.replace(causal=True, w_q=w, sentence="a b c", temperature=2.0)
    assert new is not old
    assert new.causal and new.sentence == "a b c" and new.temperature == 2.0
    assert np.array_equal(new.w_q, w)
    assert old.to_dict() == old_dict
    assert not old.causal and old.sentence == "Your journey starts with one step"
    for name, a in _all_arrays(old).items():
        assert np.array_equal(a, snapshot[name]), name
    assert old != new
    assert old.changed_fields(new) == {"causal", "w_q_store", "sentence", "temperature"}


def test_equality_compares_values():
    assert StudioState() == StudioState()
    assert StudioState(seed=1) != StudioState(seed=2)
    assert StudioState(embedding_edits={"a": {0: 1.0}}) == StudioState(embedding_edits={"a": {0: 1.0}})
    assert StudioState(embedding_edits={"a": {0: 1.0}}) != StudioState(embedding_edits={"a": {0: 2.0}})
    w = np.array(StudioState().w_q)
    w[0, 0, 0] += 1e-12
    assert StudioState().replace(w_q=w) != StudioState()


# -- seeds ------------------------------------------------------------------------

def test_seed_regenerates_weights_reproducibly():
    a, b, c = StudioState(seed=5), StudioState().replace(seed=5), StudioState(seed=6)
    for name in WEIGHTS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert not np.array_equal(getattr(a, name), getattr(c, name)), name
        assert np.all(np.isfinite(getattr(a, name)))


def test_new_seed_drops_weight_edits_but_same_seed_keeps_them():
    w = np.full((1, 3, 3), 0.25)
    edited = StudioState().replace(w_q=w)
    assert np.array_equal(edited.replace(seed=0).w_q, w)  # not a new seed
    assert np.array_equal(edited.replace(seed=9).w_q, StudioState(seed=9).w_q)
    # a new seed with explicit weights keeps the explicit ones
    assert np.array_equal(edited.replace(seed=9, w_q=w).w_q, w)


def test_weight_shapes_follow_settings():
    s = StudioState(d_model=5, heads=3, d_head=2)
    assert s.w_q.shape == s.w_k.shape == s.w_v.shape == (3, 5, 2)
    assert s.w_o.shape == (6, 5)
    assert s.d_k == 2 and s.replace(projections=False).d_k == 5
    assert s.effective_heads == 3 and s.replace(projections=False).effective_heads == 1


# -- resizing at the state level -----------------------------------------------------

def test_state_resizing_hides_and_restores_weights():
    base = StudioState(d_model=4, heads=2, d_head=3)
    w = np.array(base.w_q)
    w[1, 3, 2] = 5.5
    w[0, 0, 0] = -4.0
    edited = base.replace(w_q=w)
    small = edited.replace(d_model=2, heads=1, d_head=1)
    assert small.w_q.shape == (1, 2, 1)
    assert small.w_q[0, 0, 0] == -4.0
    assert np.array_equal(small.w_q, w[:1, :2, :1])
    back = small.replace(d_model=4, heads=2, d_head=3)
    assert np.array_equal(back.w_q, w)
    assert back == edited


def test_growing_beyond_adds_seeded_values_and_keeps_old_ones():
    base = StudioState(d_model=3)
    bigger = base.replace(d_model=6, d_head=5, heads=2)
    assert np.array_equal(bigger.w_q[:1, :3, :3], base.w_q)
    assert np.all(np.isfinite(bigger.w_q))
    assert np.count_nonzero(bigger.w_q[1]) > 10  # the new head is drawn, not zero-filled
