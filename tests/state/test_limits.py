"""Limits: typed numbers, text on the way in, the cost budget, and one size budget for saving and opening."""

import json

import numpy as np
import pytest

from attn_studio import limits, schema, session
from attn_studio.limits import (
    MAX_D_HEAD,
    MAX_D_MODEL,
    MAX_HEADS,
    MAX_TOKENS,
    estimate_cost,
    max_tokens_within_budget,
)
from attn_studio.session import SessionError, read_session, state_from_json, state_to_json, write_session
from attn_studio.state import StateError, StudioState, parse_number
from attn_studio.studio import Studio


def _sentence(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


# -- parse_number ------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("0.5", 0.5), ("-1e-3", -1e-3), ("\u22120.25", -0.25), ("  2  ", 2.0), ("+3", 3.0), (".5", 0.5),
    ("5.", 5.0), ("1E2", 100.0), ("0", 0.0), ("-0.0", 0.0), ("0e-400", 0.0), ("1e-300", 1e-300),
])
def test_parse_number_accepts_decimal_and_scientific(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text, word", [
    ("1_000", "not a number"),
    ("\u0661\u0662", "not a number"),          # Arabic-Indic digits
    ("\uff11\uff12", "not a number"),          # full-width digits
    ("1,5", "not a number"),                   # the window shows "." decimals
    ("0x10", "not a number"), ("inf", "not a number"), ("nan", "not a number"), ("1e", "not a number"),
    ("--1", "not a number"), ("", "empty"), ("   ", "empty"),
    ("1e-400", "too small"), ("-5e-324000", "too small"), ("0.000" + "0" * 50 + "1e-300", "too small"),
    ("1e400", "too large"), ("2e6", "too large"),
    ("9" * 5000, "characters long"), ("1" * 65, "characters long"),
])
def test_parse_number_refuses_with_a_message(text, word):
    with pytest.raises(StateError, match=word):
        parse_number(text)


def test_huge_integer_value_is_a_message_not_a_traceback():
    with pytest.raises(StateError, match="at most"):
        parse_number(10**5000)
    studio = Studio()
    before = studio.state
    with pytest.raises(StateError):
        studio.set_weight("w_q", 0, 0, 0, "9" * 5000)
    assert studio.state is before


# -- text on the way in --------------------------------------------------------------------

@pytest.mark.parametrize("field", ["sentence", "target_sentence", "name"])
def test_unpaired_surrogate_is_refused_and_the_state_kept(field):
    studio = Studio()
    before = studio.state
    with pytest.raises(StateError, match="surrogate"):
        studio.update(**{field: "bad \ud800 text"})
    assert studio.state is before and not studio.can_undo
    state_to_json(studio.state).encode("utf-8")  # saving still works


def test_surrogate_in_an_edited_word_is_refused():
    with pytest.raises(StateError, match="surrogate"):
        StudioState(embedding_edits={"x\udc00": {0: 1.0}})


def test_a_session_file_with_a_lone_surrogate_is_refused():
    text = json.dumps({"schema_version": 2, "sentence": "a \ud800 b"})  # written as the escape \\ud800
    assert "\\ud800" in text
    with pytest.raises(SessionError, match="surrogate"):
        state_from_json(text)


def test_paired_surrogates_from_json_escapes_are_fine():
    state = state_from_json('{"schema_version": 2, "sentence": "ok \\ud83d\\ude00"}')
    assert state.tokens == ["ok", "\U0001F600"]


# -- the cost budget ---------------------------------------------------------------------------

def test_the_largest_dimensions_at_2048_tokens_are_refused_before_computing():
    with pytest.raises(StateError, match="fewer tokens") as info:
        StudioState(sentence=_sentence(MAX_TOKENS), d_model=MAX_D_MODEL, heads=MAX_HEADS, d_head=MAX_D_HEAD)
    assert "GB" in str(info.value) and "heads (16)" in str(info.value)


def test_a_change_above_the_budget_keeps_the_state_before_it():
    studio = Studio(StudioState(sentence=_sentence(1500), d_model=64, heads=4, d_head=32))
    before = studio.state
    with pytest.raises(StateError, match="memory"):
        studio.update(heads=MAX_HEADS)
    assert studio.state is before


def test_cost_estimate_grows_with_heads_and_tokens_squared():
    one = estimate_cost(100, 100, 64, 1, 32)
    assert estimate_cost(100, 100, 64, 4, 32).attention_bytes == 4 * one.attention_bytes
    assert estimate_cost(200, 200, 64, 1, 32).attention_bytes == 4 * one.attention_bytes
    assert estimate_cost(100, 50, 64, 1, 32).attention_bytes == one.attention_bytes // 2  # cross-attention
    # without projections there is one head of size d_model
    assert estimate_cost(100, 100, 64, 16, 32, projections=False).attention_bytes == one.attention_bytes


def test_additive_scores_cost_more_and_the_message_offers_dot_products():
    n = max_tokens_within_budget(64, 4, 64)
    assert max_tokens_within_budget(64, 4, 64, additive=True) < n
    state = StudioState(sentence=_sentence(n), d_model=64, heads=4, d_head=64)
    with pytest.raises(StateError, match="dot-product scores"):
        state.replace(score="additive")


def test_live_update_predicate():
    assert StudioState().live_update
    assert not StudioState(sentence=_sentence(1024), d_model=64, heads=4, d_head=32).live_update


def test_every_dimension_alone_is_allowed_at_its_maximum():
    assert max_tokens_within_budget(3, 1, 3) == MAX_TOKENS
    StudioState(sentence=_sentence(MAX_TOKENS))
    StudioState(d_model=MAX_D_MODEL, heads=MAX_HEADS, d_head=MAX_D_HEAD)
    assert 0 < max_tokens_within_budget(MAX_D_MODEL, MAX_HEADS, MAX_D_HEAD) < MAX_TOKENS


# -- one size budget: what is saved opens again -------------------------------------------------

@pytest.fixture(scope="module")
def largest():
    n = max_tokens_within_budget(MAX_D_MODEL, MAX_HEADS, MAX_D_HEAD)
    return StudioState(sentence=_sentence(n), d_model=MAX_D_MODEL, heads=MAX_HEADS, d_head=MAX_D_HEAD)


def test_the_largest_model_the_controls_allow_saves_and_opens(largest, tmp_path):
    w = np.array(largest.w_q)
    w[15, 511, 255] = 7.25
    edited = largest.replace(w_q=w)
    path = tmp_path / "big.attn.json"
    write_session(path, edited)
    assert path.stat().st_size < 1_000_000  # only the edits are written
    back = read_session(path)
    assert back == edited
    assert back.w_q[15, 511, 255] == 7.25


def test_shrinking_a_large_model_writes_a_small_file_that_grows_back(largest, tmp_path):
    w = np.array(largest.w_v)
    w[9, 400, 200] = -3.5
    small = largest.replace(w_v=w).replace(sentence="a b c", d_model=3, heads=1, d_head=3)
    text = state_to_json(small)
    assert len(text) < 100_000
    back = state_from_json(text)
    assert back == small
    regrown = back.replace(d_model=MAX_D_MODEL, heads=MAX_HEADS, d_head=MAX_D_HEAD)
    assert regrown == small.replace(d_model=MAX_D_MODEL, heads=MAX_HEADS, d_head=MAX_D_HEAD)
    assert regrown.w_v[9, 400, 200] == -3.5


def test_a_store_grown_in_steps_saves_as_layers_and_reads_back_exactly():
    state = StudioState()
    for d_model, d_head in ((40, 20), (300, 100), (200, 256), (3, 3)):
        state = state.replace(d_model=d_model, d_head=d_head, heads=4)
    text = state_to_json(state)
    data = json.loads(text)
    assert len(text) < 50_000
    assert data["weight_edits"]["w_q"]["cells"] == []  # nothing edited: seeded values only
    assert len(data["weight_edits"]["w_q"]["layers"]) > 1
    back = state_from_json(text)
    assert back == state
    assert back.replace(d_model=300, d_head=256) == state.replace(d_model=300, d_head=256)


def test_a_session_over_the_file_budget_is_refused_before_writing(tmp_path, monkeypatch):
    path = tmp_path / "s.attn.json"
    write_session(path, StudioState(causal=True))
    before = path.read_bytes()
    state = StudioState(d_model=64, heads=4, d_head=32)
    monkeypatch.setattr(session, "MAX_FILE_BYTES", 20_000)
    with pytest.raises(SessionError, match="MB"):
        write_session(path, state.replace(w_q=np.full((4, 64, 32), 0.123)))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.attn.json"]


def test_too_many_edited_weights_is_a_message(monkeypatch):
    monkeypatch.setattr("attn_studio.state.MAX_WEIGHT_EDITS", 100)
    state = StudioState(d_model=16, heads=1, d_head=16).replace(w_q=np.full((1, 16, 16), 0.5))
    with pytest.raises(SessionError, match="edited weights"):
        state_to_json(state)


@pytest.mark.parametrize("edits, word", [
    ({"w_q": {"shape": [1, 3, 3], "cells": [[0, 0, 3, 1.0]]}}, "outside"),
    ({"w_q": {"shape": [1, 3, 3], "cells": [[0, 0, -1, 1.0]]}}, "outside"),
    ({"w_q": {"shape": [1, 3, 3], "cells": [[0, 0, 0, "1"]]}}, "not a number"),
    ({"w_q": {"shape": [1, 3, 3], "cells": [[0, 0, True, 1.0]]}}, "not a number"),
    ({"w_q": {"shape": [1, 3, 3], "cells": [[0, 0, 1.0]]}}, "i, j, k, value"),
    ({"w_q": {"shape": [1, 3, 3], "cells": [[0, 0, 10**40, 1.0]]}}, "41 digits"),
    ({"w_q": {"shape": [1, 3, 3], "cells": [[0, 0, 10**18, 1.0]]}}, "outside"),
    ({"w_q": {"shape": [1, 2, 3], "cells": []}}, "must cover"),
    ({"w_q": {"shape": [99, 3, 3], "cells": []}}, "limits"),
    ({"w_q": {"shape": [1, 3, 3], "cells": [], "layers": []}}, "layers"),
    ({"w_q": {"shape": [1, 3, 3], "cells": [], "layers": [[1, 3, 3, 0]]}}, "layers"),
    ({"w_q": {"shape": [1, 3, 3], "cells": [], "extra": 1}}, "must be"),
    ({"w_x": {"shape": [1, 3, 3], "cells": []}}, "weight names"),
])
def test_hostile_weight_edits_are_refused(edits, word):
    with pytest.raises(SessionError, match=word):
        state_from_json(json.dumps({"schema_version": 3, "weight_edits": edits}))


def test_weight_edits_in_an_older_version_are_refused():
    with pytest.raises(SessionError, match="version 3"):
        state_from_json(json.dumps({"schema_version": 2, "weight_edits": {}}))


def test_duplicate_keys_are_refused():
    with pytest.raises(SessionError, match="twice"):
        state_from_json('{"schema_version": 2, "causal": true, "causal": false}')
    with pytest.raises(SessionError, match="twice"):
        state_from_json('{"schema_version": 2, "selection": {"query": 1, "query": 0}}')


def test_limits_is_a_leaf_and_schema_does_not_import_state():
    import ast
    import inspect

    for module, forbidden in ((limits, {"state", "schema", "session", "studio", "engine"}),
                              (schema, {"state", "session", "studio"})):
        tree = ast.parse(inspect.getsource(module))
        imported = {node.module.split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}
        assert not imported & forbidden, module.__name__
