"""A corpus of hostile inputs: each is refused with a message or loaded exactly, the open
state untouched, within a time and memory bound measured in a child process."""

import json
import os
from pathlib import Path

import pytest

from attn_studio.limits import MAX_D_HEAD, MAX_D_MODEL, MAX_HEADS, MAX_TOKENS, max_tokens_within_budget
from attn_studio.session import state_to_json, write_session
from attn_studio.state import StudioState

from .conftest import run_bounded

_OPEN = """
from attn_studio.session import SessionError, read_session, state_to_json
from attn_studio.studio import Studio
studio = Studio()
before = studio.state
try:
    state = read_session({path!r})
except SessionError as exc:
    outcome["refused"] = str(exc)
else:
    studio.set_state(state)
    raw = open({path!r}, "rb").read().decode("utf-8-sig")
    outcome["loaded"] = True
    import json
    outcome["same_text"] = json.loads(state_to_json(state)) == json.loads(raw)  # every field, every number
outcome["untouched"] = studio.state is before
"""


def _write(tmp: Path, name: str, data) -> Path:
    path = tmp / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def _sparse(tmp: Path, size: int) -> Path:
    path = tmp / "huge.attn.json"
    with open(path, "wb") as fh:
        fh.truncate(size)  # no disk used: a hole
    return path


def _symlink(target: str):
    def make(tmp: Path) -> Path:
        path = tmp / "link.attn.json"
        path.symlink_to(target)
        return path
    return make


def _fifo(tmp: Path) -> Path:
    path = tmp / "pipe.attn.json"
    os.mkfifo(path)
    return path


def _folder(tmp: Path) -> Path:
    path = tmp / "folder.attn.json"
    path.mkdir()
    return path


def _session(**fields) -> str:
    return json.dumps({"schema_version": 2, **fields})


def _many_cells(n: int) -> str:
    """``json.dumps`` of a session with ``n`` edited cells [0, 0, 0, 1.5], written as that text directly."""
    cells = ", ".join(["[0, 0, 0, 1.5]"] * n)
    return '{"schema_version": 3, "weight_edits": {"w_q": {"shape": [1, 3, 3], "cells": [' + cells + ']}}}'


def _largest_edited(tmp: Path) -> Path:
    import numpy as np

    n = max_tokens_within_budget(MAX_D_MODEL, MAX_HEADS, MAX_D_HEAD)
    state = StudioState(sentence=" ".join(f"w{i}" for i in range(n)), d_model=MAX_D_MODEL, heads=MAX_HEADS,
                        d_head=MAX_D_HEAD)
    w = np.array(state.w_k)
    w[:, :64, :8] = 0.5  # 8,192 edited cells
    path = tmp / "largest.attn.json"
    write_session(path, state.replace(w_k=w))
    return path


CORPUS = {
    # special files
    "fifo": (_fifo, "refused", "pipe"),
    "symlink-to-dev-zero": (_symlink("/dev/zero"), "refused", "device"),
    "symlink-to-dev-urandom": (_symlink("/dev/urandom"), "refused", "device"),
    "symlink-to-dev-null": (_symlink("/dev/null"), "refused", "device"),
    "dangling-symlink": (_symlink("/nonexistent/nowhere.attn.json"), "refused", "does not exist"),
    "folder": (_folder, "refused", "folder"),
    # huge inputs
    "sparse-4GB": (lambda t: _sparse(t, 4 * 2**30), "refused", "MB"),
    "65MB-of-zero-bytes": (lambda t: _sparse(t, 65 * 2**20), "refused", "MB"),
    "2M-empty-arrays": (lambda t: _write(t, "a.attn.json", "[" + "[]," * 2_000_000 + "[]]"), "refused", "arrays"),
    "deep-100k": (lambda t: _write(t, "d.attn.json", "[" * 100_000 + "]" * 100_000), "refused", "deep"),
    "10MB-name": (lambda t: _write(t, "n.attn.json", _session(name="x" * 10_000_000)), "refused", "characters"),
    "40MB-whitespace-around-a-session": (
        lambda t: _write(t, "w.attn.json", " " * 20_000_000 + state_to_json(StudioState(causal=True)) + " " * 20_000_000),
        "loaded", None),
    "1.1M-edited-cells": (lambda t: _write(t, "c.attn.json", _many_cells(1_100_000)), "refused", "weights"),
    "max-tokens-at-max-dims": (lambda t: _write(t, "m.attn.json", _session(
        sentence=" ".join(["tok"] * MAX_TOKENS), d_model=MAX_D_MODEL, heads=MAX_HEADS, d_head=MAX_D_HEAD)),
        "refused", "fewer tokens"),
    "largest-allowed-model-edited": (_largest_edited, "loaded", None),
    "20000-char-word": (lambda t: _write(t, "l.attn.json", state_to_json(StudioState(sentence="w" * 20_000))),
                        "loaded", None),
    "2048-emoji-sequences": (lambda t: _write(t, "e.attn.json", state_to_json(StudioState(
        sentence=" ".join(["\U0001F469\u200d\U0001F4BB"] * 1024 + ["\U0001F1EB\U0001F1F7\u200b"] * 1024)))),
        "loaded", None),
    # bad content
    "duplicate-keys": (lambda t: _write(t, "k.attn.json", '{"schema_version": 2, "d_model": 4, "d_model": 5}'),
                       "refused", "twice"),
    "lone-surrogate": (lambda t: _write(t, "s.attn.json", '{"schema_version": 2, "sentence": "a \\ud800"}'),
                       "refused", "surrogate"),
    "5000-digit-integer": (lambda t: _write(t, "i.attn.json", '{"schema_version": 2, "d_model": ' + "9" * 5000 + "}"),
                           "refused", "5,000 digits"),
    "1e400": (lambda t: _write(t, "f.attn.json", '{"schema_version": 2, "temperature": 1e400}'), "refused", "finite"),
    "nan": (lambda t: _write(t, "nan.attn.json", '{"schema_version": 2, "temperature": NaN}'), "refused", "NaN"),
    "future-version": (lambda t: _write(t, "v.attn.json", '{"schema_version": 4}'), "refused", "newer"),
    "utf16": (lambda t: _write(t, "u.attn.json", _session().encode("utf-16")), "refused", "UTF-8"),
    "binary-garbage": (lambda t: _write(t, "g.attn.json", bytes(range(256)) * 1000), "refused", "UTF-8"),
    "byte-order-mark": (lambda t: _write(t, "b.attn.json", b"\xef\xbb\xbf" + state_to_json(StudioState(causal=True)).encode()),
                        "loaded", None),
}


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_hostile_session_file(tmp_path, case):
    make, expect, word = CORPUS[case]
    path = make(tmp_path)
    outcome = run_bounded(_OPEN.format(path=str(path)))
    if expect == "refused":
        assert "refused" in outcome, outcome
        assert word in outcome["refused"], outcome["refused"]
        assert len(outcome["refused"]) < 400  # one clear sentence, not a dump
        assert outcome["untouched"]
    else:
        assert outcome.get("loaded") and outcome["same_text"], outcome
        assert not outcome["untouched"]


def test_hostile_recovery_folder_starts_without_hanging(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "recovery-1.attn.json").write_bytes(b"\x00garbage")
    (folder / "recovery-2.attn.json").write_text('{"schema_version": 999}')
    (folder / "recovery-3.attn.json").mkdir()
    (folder / "recovery-4.attn.json").symlink_to(folder / "gone")
    os.mkfifo(folder / "recovery-5.attn.json")
    (folder / "recovery-6.attn.json").symlink_to("/dev/zero")
    (folder / "recovery-7.lock").write_text("")
    outcome = run_bounded(f"""
from attn_studio.recovery import RecoveryStore
store = RecoveryStore({str(folder)!r})
outcome["notes"] = store.sweep()
orphans = store.orphans()
outcome["orphans"] = [p.name for p in orphans]
outcome["discarded"] = [store.discard(p) for p in orphans]
""")
    assert len(outcome["notes"]) == 4
    assert sorted(outcome["orphans"]) == ["recovery-1.attn.json", "recovery-2.attn.json"]
    assert all("quarantine" in note for note in outcome["discarded"])
    # nothing was deleted: all six entries are in the quarantine folder
    assert len(list((folder / "quarantine").iterdir())) == 6
    assert not (folder / "recovery-7.lock").exists()  # a lock nobody holds, with no work, is tidied


@pytest.mark.parametrize("text", ["9" * 5000, "1" * 10_000_000, "\u0661" * 64, "1_000", "1e-400", "\uff11"])
def test_hostile_typed_numbers(text):
    outcome = run_bounded(f"""
from attn_studio.state import StateError
from attn_studio.studio import Studio
studio = Studio()
before = studio.state
try:
    studio.set_weight("w_q", 0, 0, 0, {text!r})
except StateError as exc:
    outcome["refused"] = str(exc)
outcome["untouched"] = studio.state is before
""")
    assert outcome["refused"] and len(outcome["refused"]) < 300 and outcome["untouched"]


def test_hostile_sentences_are_refused_or_tokenized_quickly():
    outcome = run_bounded("""
from attn_studio.state import StateError
from attn_studio.studio import Studio
studio = Studio()
results = []
for text in ["\\u0301" * 19_999, "\\u200d" * 19_999, "\\U0001F1EB" * 4_001, "a\\u200b" * 2_000,
             "x " * 2_049, "\\ud800", "w" * 20_001]:
    before = studio.state
    try:
        studio.update(sentence=text)
        results.append(len(studio.state.tokens))
    except StateError as exc:
        results.append(str(exc)[:80])
        assert studio.state is before
outcome["results"] = results
""")
    r = outcome["results"]
    assert r[0] == 1 and r[1] == 0  # marks stack on one cluster; joiners alone are no tokens
    assert r[2] == 2_000 + 1 and r[3] == 2_000  # flag pairs (+ one lone indicator); words split by ZWSP
    assert "tokens" in r[4] and "surrogate" in r[5] and "characters" in r[6]
