"""Session files: round trips, atomic writes, refusing broken files, a stored version-1 file."""

import dataclasses
import json

from attn_studio.state import SCHEMA_VERSION
import os
from pathlib import Path

import numpy as np
import pytest

from attn_studio import session, session_json
from attn_studio.session import SessionError, read_session, state_from_json, state_to_json, write_session
from attn_studio.state import StateError, StudioState
from attn_studio.studio import Studio

DATA = Path(__file__).parent / "data"
V1_FILE = DATA / "session_v1.attn.json"


@pytest.fixture
def folder(tmp_path):
    """An empty folder of its own (tmp_path may hold other test data), to list after writes."""
    path = tmp_path / "sessions"
    path.mkdir()
    return path


def rich_state() -> StudioState:
    studio = Studio(StudioState(sentence="The cat didn't see the dog.", d_model=5, heads=2, d_head=3,
                                seed=17, causal=True, positional=True, temperature=0.7, softmax="naive",
                                name="rich ✓"))
    studio.set_embedding("cat", 4, "0.1")          # a value with no exact binary form
    studio.set_embedding("the", 0, "-1e-7")
    studio.set_weight("w_k", 1, 4, 2, 1 / 3)       # full double precision must survive
    studio.set_weight("w_o", 0, 5, 4, -2.0 / 7)
    studio.update(target_sentence="Le chat")
    studio.select(query=1, head=1)
    return studio.state


def _result_arrays(result):
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)
            if isinstance(getattr(result, f.name), np.ndarray)}


def _assert_same_results(a: StudioState, b: StudioState):
    ra, rb = _result_arrays(Studio(a).result), _result_arrays(Studio(b).result)
    assert ra.keys() == rb.keys()
    for name in ra:
        assert np.array_equal(ra[name], rb[name]), name


# -- round trips --------------------------------------------------------------------

@pytest.mark.parametrize("make", [StudioState, rich_state, lambda: StudioState(projections=False, scale=False)])
def test_dict_json_round_trip_reproduces_every_number(make):
    state = make()
    text = json.dumps(state.to_dict())
    back = StudioState.from_dict(json.loads(text))
    assert back == state
    assert back.to_dict() == state.to_dict()
    _assert_same_results(back, state)


def test_to_dict_is_plain_json_data():
    d = rich_state().to_dict()
    assert d["schema_version"] == SCHEMA_VERSION
    assert json.loads(json.dumps(d, allow_nan=False)) == d
    assert d["weights"]["w_k"][1][4][2] == 1 / 3
    assert d["embeddings"]["cat"] == {"4": 0.1}
    assert d["selection"] == {"query": 1, "head": 1}
    assert d["target_sentence"] == "Le chat" and d["causal"] is True


def test_write_then_read_session(folder):
    state = rich_state()
    path = folder / "lecture.attn.json"
    write_session(path, state)
    back = read_session(path)
    assert back == state
    _assert_same_results(back, state)
    assert json.loads(path.read_text("utf-8"))["name"] == "rich ✓"
    assert sorted(os.listdir(folder)) == ["lecture.attn.json"]
    # overwriting works and leaves no temporary file either
    write_session(path, StudioState())
    assert read_session(path) == StudioState()
    assert sorted(os.listdir(folder)) == ["lecture.attn.json"]


def test_read_session_accepts_str_paths(tmp_path):
    path = tmp_path / "a.attn.json"
    write_session(str(path), StudioState(seed=3))
    assert read_session(str(path)) == StudioState(seed=3)


def test_round_trip_keeps_hidden_weights():
    studio = Studio(StudioState(d_model=4))
    studio.set_weight("w_q", 0, 3, 1, 5.5)
    studio.update(d_model=2)
    back = StudioState.from_dict(json.loads(json.dumps(studio.state.to_dict())))
    assert back == studio.state
    assert back.replace(d_model=4).w_q[0, 3, 1] == 5.5



def test_the_edited_cells_are_written_as_json_indents_them(monkeypatch):
    # The cells are written in slices from their arrays, each distinct number turned into text
    # once: the text must be json's own indented text, across slice boundaries, for every store
    # (visible and hidden) and for numbers of every size and sign (-0.0 is not 0.0).
    monkeypatch.setattr(session_json, "_CELL_SLICE", 7)
    state = StudioState(sentence="a b c d", d_model=6, heads=2, d_head=4)
    rng = np.random.default_rng(3)
    for name in ("w_q", "w_k", "w_o"):
        w = np.array(getattr(state, name))
        w.flat[::3] = rng.normal(size=w.size)[::3] * 10.0 ** rng.integers(-300, 6, size=w.size)[::3]
        w.flat[1::5], w.flat[2::5] = -0.0, 0.0
        state = state.replace(**{name: w})
    state = state.replace(d_model=4, heads=1)  # hidden edited cells, and stores of several layers
    data = state.to_dict()
    assert sum(len(e["cells"]) for e in data["weight_edits"].values()) > 20
    assert state_to_json(state) == json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    assert state_to_json(StudioState(causal=True)) == \
        json.dumps(StudioState(causal=True).to_dict(), indent=1, ensure_ascii=False) + "\n"

# -- atomic writes ---------------------------------------------------------------------

@pytest.fixture
def saved(folder):
    path = folder / "talk.attn.json"
    write_session(path, StudioState(causal=True))
    return path, path.read_bytes()


def _boom(*args, **kwargs):
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize("target", ["replace", "fsync"])
def test_failed_write_keeps_old_file_and_leaves_no_temp(saved, monkeypatch, target):
    path, before = saved
    monkeypatch.setattr(os, target, _boom)
    with pytest.raises(SessionError) as info:
        write_session(path, rich_state())
    assert "No space left" in str(info.value)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(path.parent) == [path.name]
    assert read_session(path) == StudioState(causal=True)


def test_write_interrupted_midway_through_the_data(saved, monkeypatch):
    path, before = saved
    real_fdopen = os.fdopen

    class HalfWriter:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()
            return False

        def write(self, data):
            self.fh.write(data[: len(data) // 2])
            self.fh.flush()
            raise OSError(5, "Input/output error")

        def __getattr__(self, name):
            return getattr(self.fh, name)

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: HalfWriter(real_fdopen(fd, mode)))
    with pytest.raises(SessionError):
        write_session(path, rich_state())
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(path.parent) == [path.name]


def test_keyboard_interrupt_during_write_leaves_no_temp(saved, monkeypatch):
    path, before = saved

    def interrupt(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_session(path, rich_state())
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(path.parent) == [path.name]


def test_write_into_missing_folder(folder):
    with pytest.raises(SessionError, match="does not exist"):
        write_session(folder / "nope" / "a.attn.json", StudioState())


def test_write_onto_a_folder(folder):
    (folder / "dir.attn.json").mkdir()
    with pytest.raises(SessionError):
        write_session(folder / "dir.attn.json", StudioState())
    assert os.listdir(folder) == ["dir.attn.json"]


# -- refusing broken files ------------------------------------------------------------------

def _valid() -> dict:
    return StudioState(heads=2, d_model=3, d_head=2).to_dict()


def _with(**changes) -> str:
    d = _valid()
    d.update(changes)
    return json.dumps(d)


def _without(key) -> str:
    d = _valid()
    del d[key]
    return json.dumps(d)


def _weights_with(name, fn) -> str:
    d = _valid()
    fn(d["weights"][name])
    return json.dumps(d)


def _set_string(w):
    w[0][1][0] = "0.5"


def _deep(n):
    return "[" * n + "]" * n


VALID_TEXT = json.dumps(_valid())

# (id, file text, a word the message must contain)
BROKEN = [
    ("not-json", "hello, this is not JSON", "JSON"),
    ("empty", "", "JSON"),
    ("truncated", VALID_TEXT[: len(VALID_TEXT) // 2], "JSON"),
    ("trailing-garbage", VALID_TEXT + "}", "JSON"),
    ("top-level-list", json.dumps([_valid()]), "object"),
    ("top-level-string", json.dumps("session"), "object"),
    ("top-level-null", "null", "object"),
    ("missing-schema-version", _without("schema_version"), "schema_version"),
    ("schema-version-string", _with(schema_version="1"), "schema_version"),
    ("schema-version-bool", _with(schema_version=True), "schema_version"),
    ("schema-version-0", _with(schema_version=0), "version"),
    ("schema-version-999", _with(schema_version=999), "newer"),
    ("sentence-number", _with(sentence=5), "sentence"),
    ("target-sentence-list", _with(target_sentence=["a"]), "target_sentence"),
    ("name-null", _with(name=None), "name"),
    ("description-number", _with(description=3), "description"),
    ("d_model-string", _with(d_model="3"), "d_model"),
    ("d_model-float", _with(d_model=3.5), "d_model"),
    ("d_model-bool", _with(d_model=True), "d_model"),
    ("d_model-zero", _with(d_model=0), "d_model"),
    ("d_model-huge", _with(d_model=10**9), "d_model"),
    ("heads-null", _with(heads=None), "heads"),
    ("heads-too-many", _with(heads=17), "heads"),
    ("d_head-list", _with(d_head=[2]), "d_head"),
    ("seed-negative", _with(seed=-1), "seed"),
    ("seed-string", _with(seed="0"), "seed"),
    ("scale-string", _with(scale="true"), "scale"),
    ("causal-int", _with(causal=1), "causal"),
    ("positional-null", _with(positional=None), "positional"),
    ("projections-int", _with(projections=0), "projections"),
    ("temperature-string", _with(temperature="1"), "temperature"),
    ("temperature-bool", _with(temperature=True), "temperature"),
    ("temperature-zero", _with(temperature=0), "temperature"),
    ("temperature-1e400", VALID_TEXT.replace('"temperature": 1.0', '"temperature": 1e400'), "temperature"),
    ("softmax-number", _with(softmax=1), "softmax"),
    ("softmax-unknown", _with(softmax="sparsemax"), "softmax"),
    ("score-unknown", _with(score="cosine"), "score"),
    ("embeddings-list", _with(embeddings=[1, 2]), "embeddings"),
    ("embedding-not-a-map", _with(embeddings={"cat": [1, 2, 3]}), "cat"),
    ("embedding-string-value", _with(embeddings={"cat": {"0": "abc"}}), "cat"),
    ("embedding-null-value", _with(embeddings={"cat": {"0": None}}), "cat"),
    ("embedding-bool-value", _with(embeddings={"cat": {"0": True}}), "cat"),
    ("embedding-bad-index", _with(embeddings={"cat": {"x": 1.0}}), "cat"),
    ("embedding-negative-index", _with(embeddings={"cat": {"-1": 1.0}}), "cat"),
    ("embedding-index-too-big", _with(embeddings={"cat": {"512": 1.0}}), "cat"),
    ("embedding-empty-word", _with(embeddings={"": {"0": 1.0}}), "word"),
    ("embedding-too-large", _with(embeddings={"cat": {"0": 1e9}}), "cat"),
    ("weights-list", _with(weights=[]), "weights"),
    ("weights-unknown-matrix", _with(weights={"w_x": []}), "w_x"),
    ("weights-wrong-rows", _weights_with("w_q", lambda w: w.pop()), "w_q"),
    ("weights-wrong-cols", _weights_with("w_k", lambda w: w[0][0].append(0.0)), "w_k"),
    ("weights-w_o-wrong-shape", _weights_with("w_o", lambda w: w.append([0.0, 0.0, 0.0])), "w_o"),
    ("weights-string-inside", _weights_with("w_v", _set_string), "w_v"),
    ("weights-null-inside", _weights_with("w_q", lambda w: w[1][2].__setitem__(1, None)), "w_q"),
    ("weights-bool-inside", _weights_with("w_q", lambda w: w[1][2].__setitem__(1, False)), "w_q"),
    ("weights-too-large", _weights_with("w_q", lambda w: w[0][0].__setitem__(0, 1e300)), "w_q"),
    ("weights-scalar", _weights_with("w_q", lambda w: w.clear()), "w_q"),
    ("nan-literal", VALID_TEXT.replace('"temperature": 1.0', '"temperature": NaN'), "NaN"),
    ("infinity-literal", VALID_TEXT.replace('"temperature": 1.0', '"temperature": Infinity'), "Infinity"),
    ("minus-infinity-in-weights", json.dumps(_valid()).replace("[[[", "[[[-Infinity, ", 1), "Infinity"),
    ("deep-10000", '{"schema_version": 1, "weights": {"w_q": ' + _deep(10_000) + "}}", "deep"),
    ("deep-top-level", _deep(10_000), "deep"),
    ("unknown-field", _with(colour="red"), "colour"),
    ("selection-list", _with(selection=[0, 0]), "selection"),
    ("selection-string", _with(selection={"query": "1"}), "query"),
    ("selection-unknown-key", _with(selection={"row": 1}), "selection"),
    ("selection-out-of-range", _with(selection={"query": 6, "head": 0}), "query_index"),
    ("selection-head-out-of-range", _with(selection={"query": 0, "head": 2}), "head_index"),
]


@pytest.mark.parametrize("text,word", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_broken_file_is_refused_with_readable_message(tmp_path, text, word):
    path = tmp_path / "broken.attn.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SessionError) as info:
        read_session(path)
    message = str(info.value)
    assert word.lower() in message.lower()
    assert 10 < len(message) < 500
    assert "Traceback" not in message


def test_the_valid_corpus_base_loads():
    assert state_from_json(VALID_TEXT) == StudioState(heads=2, d_model=3, d_head=2)


def test_future_version_message_says_update():
    with pytest.raises(SessionError) as info:
        state_from_json(_with(schema_version=999))
    assert "999" in str(info.value) and "newer" in str(info.value)


def test_huge_file_is_refused_without_reading(tmp_path, monkeypatch):
    path = tmp_path / "huge.attn.json"
    with open(path, "wb") as fh:
        fh.write(b'{"schema_version": 1, "name": "')
        fh.truncate(70 * 2**20)  # sparse: cheap to create
    assert path.stat().st_size == 70 * 2**20

    def no_read(self):
        raise AssertionError("a 70 MB file must be refused before it is read")

    monkeypatch.setattr(Path, "read_bytes", no_read)
    with pytest.raises(SessionError) as info:
        read_session(path)
    assert "MB" in str(info.value)


def test_not_utf8_file(tmp_path):
    path = tmp_path / "latin1.attn.json"
    path.write_bytes('{"schema_version": 1, "name": "café"}'.encode("latin-1"))
    with pytest.raises(SessionError, match="UTF-8"):
        read_session(path)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(SessionError, match="does not exist"):
        read_session(tmp_path / "nope.attn.json")
    with pytest.raises(SessionError, match="folder"):
        read_session(tmp_path)


@pytest.mark.parametrize("key", ["temperature", "embedding", "weight"])
def test_huge_integer_literal_is_a_session_error(key):
    big = "1" + "0" * 400
    d = _valid()
    if key == "temperature":
        text = json.dumps(d).replace('"temperature": 1.0', f'"temperature": {big}')
    elif key == "embedding":
        d["embeddings"] = {"cat": {"0": 12345}}
        text = json.dumps(d).replace("12345", big)
    else:
        d["weights"]["w_q"][0][0][0] = 12345
        text = json.dumps(d).replace("12345", big)
    with pytest.raises(SessionError):
        state_from_json(text)


@pytest.mark.parametrize("literal", ["-" + "7" * 25, "1" * 21, "0" * 30])
def test_a_whole_number_past_twenty_digits_is_refused_by_its_length(literal):
    d = _valid()
    d["weights"]["w_q"][0][0][0] = 12345
    with pytest.raises(SessionError, match=f"whole number with {len(literal.lstrip('-'))} digits"):
        state_from_json(json.dumps(d).replace("12345", literal))


@pytest.mark.parametrize("literal", ["0.25" + "0" * 40, "2.5" + "0" * 40 + "e-1", "25e-" + "0" * 30 + "2",
                                     "-0.25" + "0" * 40])
def test_long_floats_still_read(literal):
    # A long fraction or exponent is a float the parser reads; only whole numbers have the limit.
    d = _valid()
    d["weights"]["w_q"][0][0][0] = 12345
    state = state_from_json(json.dumps(d).replace("12345", literal))
    assert state.w_q[0][0][0] == float(literal)


def test_superscript_digit_component_is_a_session_error():
    with pytest.raises(SessionError):
        state_from_json(_with(embeddings={"cat": {"²": 1.0}}))


def test_from_dict_raises_state_error():
    with pytest.raises(StateError, match="schema_version"):
        StudioState.from_dict({"d_model": 3})
    with pytest.raises(StateError):
        StudioState.from_dict([])


def test_missing_optional_fields_take_defaults():
    state = state_from_json('{"schema_version": 1, "d_model": 4, "causal": true}')
    assert state == StudioState(d_model=4, causal=True)


# -- the stored version-1 file -------------------------------------------------------------

def test_version1_file_keeps_loading():
    raw = json.loads(V1_FILE.read_text("utf-8"))
    state = read_session(V1_FILE)
    # settings as written in the file
    assert raw["schema_version"] == 1
    assert (state.d_model, state.heads, state.d_head, state.seed) == (4, 2, 2, 3)
    assert state.causal is True and state.scale is True and state.temperature == 0.8
    assert state.sentence == raw["sentence"] == "The cat sat on the mat"
    assert (state.query_index, state.head_index) == (4, 1)
    # the lecturer's edits, as typed when the file was made
    assert raw["embeddings"] == {"cat": {"1": -1.25}, "mat": {"3": 2.5}}
    assert {w: dict(v) for w, v in state.embedding_edits.items()} == {"cat": {1: -1.25}, "mat": {3: 2.5}}
    assert raw["weights"]["w_q"][1][0][1] == 0.75 and state.w_q[1, 0, 1] == 0.75
    assert raw["weights"]["w_o"][3][2] == -0.5 and state.w_o[3, 2] == -0.5
    # every weight reads back as the file says
    for name in ("w_q", "w_k", "w_v", "w_o"):
        assert np.array_equal(getattr(state, name), np.array(raw["weights"][name], dtype=float)), name
    # the studio computes with those numbers
    studio = Studio(state)
    assert studio.x[1, 1] == -1.25 and studio.x[5, 3] == 2.5
    w = studio.result.weights
    assert w.shape == (2, 6, 6)
    assert np.all(w[:, np.triu_indices(6, 1)[0], np.triu_indices(6, 1)[1]] == 0)
    x = studio.x
    for h in range(2):
        q, k = x @ state.w_q[h], x @ state.w_k[h]
        logits = q @ k.T / np.sqrt(2) / 0.8
        logits[np.triu_indices(6, 1)] = -np.inf
        a = np.exp(logits - logits.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(w[h], a, rtol=1e-12, atol=1e-15)
    # and it writes back as the current version: the same fields, plus the
    # additive-score weights that version 2 added (drawn from the file's seed)
    rewritten = json.loads(state_to_json(state))
    assert rewritten["schema_version"] == SCHEMA_VERSION == 3
    added = {"w_1", "w_2", "v_a"}
    assert set(rewritten["weights"]) - set(raw["weights"]) == added
    assert {k: v for k, v in rewritten["weights"].items() if k not in added} == raw["weights"]
    # version 3 adds the edited cells (the file's weights that are not the seed's)
    assert {k: v for k, v in rewritten.items() if k not in ("weights", "weight_edits", "schema_version")} == \
        {k: v for k, v in raw.items() if k not in ("weights", "schema_version")}
    assert rewritten["weight_edits"]["w_q"]["cells"].count([1, 0, 1, 0.75]) == 1
    assert StudioState.from_dict(rewritten) == state


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_saving_over_a_file_keeps_its_permissions(tmp_path):
    path = tmp_path / "shared.attn.json"
    path.write_text(state_to_json(StudioState()), encoding="utf-8")
    os.chmod(path, 0o644)
    write_session(path, StudioState(causal=True))
    assert read_session(path).causal
    assert (path.stat().st_mode & 0o777) == 0o644


V2_FILE = Path(__file__).parent / "data" / "session_v2.attn.json"


def test_version2_file_keeps_loading_with_additive_weights_and_hidden_stores():
    raw = json.loads(V2_FILE.read_text("utf-8"))
    state = read_session(V2_FILE)
    assert raw["schema_version"] == 2 and state.score == "additive"
    assert (state.heads, state.d_model, state.d_head) == (2, 4, 2)
    for name in ("w_q", "w_k", "w_v", "w_o", "w_1", "w_2", "v_a"):
        assert np.array_equal(getattr(state, name), np.array(raw["weights"][name], dtype=float)), name
    # the column hidden by shrinking d_head comes back when it grows again
    grown = state.replace(d_head=3)
    assert np.array_equal(grown.w_q, np.array(raw["weight_stores"]["w_q"], dtype=float)[:2, :4, :3])
    assert grown.w_q[1, 3, 2] == 0.5
    # additive scores are what the studio computes
    studio = Studio(state)
    from attn_studio.engine import additive_scores
    h = 1
    q, k = studio.result.q[h], studio.result.k[h]
    np.testing.assert_allclose(studio.result.scores[h], additive_scores(q, k, state.w_1[h], state.w_2[h], state.v_a[h]))
