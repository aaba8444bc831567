"""What an animation sweeps, read and checked without Qt (attn_studio.sweeps)."""

from __future__ import annotations

import pytest

from attn_studio.session import load_preset
from attn_studio.studio import Studio
from attn_studio.sweeps import SweepError, apply, check, frames_of, parse


def test_whole_values_are_distinct_and_d_k_spreads_geometrically():
    d_k = parse("d_k=1:256:16")
    assert len(d_k.values) == 16 and len(set(d_k.values)) == 16
    assert d_k.values[0] == 1 and d_k.values[-1] == 256 and list(d_k.values) == sorted(d_k.values)
    assert d_k.values[:4] == (1, 2, 3, 4)  # pushed apart where rounding met
    assert parse("heads=4:1").values == (4, 3, 2, 1)  # a range may run down
    assert parse("d_head=1:8").values == tuple(range(1, 9))  # every value by default
    assert parse("T=0.5:2:3").values == pytest.approx((0.5, 1.0, 2.0))  # a temperature by its ratio
    assert parse("scale=off:on").values == (False, True)
    assert parse("causal=on:off:4").values == (True, True, False, False)


def test_nested_sweeps_the_first_slowest_and_at_most_1000_frames():
    frames = frames_of([parse("scale=off:on"), parse("d_k=1:4")])
    assert frames == [(False, 1), (False, 2), (False, 3), (False, 4), (True, 1), (True, 2), (True, 3), (True, 4)]
    with pytest.raises(SweepError, match="at most 1000"):
        frames_of([parse("temperature=0.2:5:100"), parse("d_k=1:11")])
    with pytest.raises(SweepError, match="swept twice"):
        frames_of([parse("d_k=1:2"), parse("d_head=3:4")])


@pytest.mark.parametrize("text, words", [
    ("d_k=0:4", "1 to 256"), ("heads=1:99", "1 to 16"), ("temperature=0:1", "from 0.001"),
    ("temperature=1:inf", "finite"), ("cell=X[0,1]:0:1", "each from 1"), ("cell=Z[1,1]:0:1", "not a matrix"),
    ("cell=X[1,1]:0:1e9", "at most"), ("query=1:x", "whole numbers"), ("nope=1:2", "cannot be swept"),
    ("d_k", "NAME=FROM:TO"), ("d_k=1:4:0", "FRAMES must be"), ("scale=on:sideways", "off:on"),
])
def test_refusals_name_the_problem(text, words):
    with pytest.raises(SweepError, match=words):
        parse(text)


def test_checked_against_the_model_and_applied():
    studio = Studio(load_preset("animal"))
    check([parse("query=1:11"), parse("cell=W_Q[2,1,4]:-1:1")], studio, trained=False)
    for text, words in [("query=1:12", "11 queries"), ("layer=1:2", "one layer"), ("cell=X[12,1]:0:1", "outside"),
                        ("cell=W_K[3,1,1]:0:1", "outside")]:
        with pytest.raises(SweepError, match=words):
            check([parse(text)], studio, trained=False)
    apply(studio, parse("cell=X[2,1]:-1:1"), 0.25, trained=False)
    assert not studio.state.positional and studio.x[1, 0] == 0.25  # X's row of token 2 ("animal"), column 1
    apply(studio, parse("d_k=1:8"), 8, trained=False)
    apply(studio, parse("query=1:11"), 3, trained=False)
    assert studio.state.d_head == 8 and studio.state.query_index == 2
    apply(studio, parse("cell=W_V[1,2]:-1:1"), -0.5, trained=False)
    assert studio.state.w_v[studio.state.shown_head, 0, 1] == -0.5
