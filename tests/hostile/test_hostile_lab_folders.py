"""Hostile and broken lab model folders: each is refused with a message naming what is wrong, within a
time and memory bound measured in a child process, as a broken BERT folder is."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest

from .conftest import run_bounded

_OPEN = """
from attn_studio.pretrained import ModelError, load_pretrained
try:
    model = load_pretrained({path!r})
except ModelError as exc:
    outcome["refused"] = str(exc)
else:
    outcome["loaded"] = model.name
"""


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A lab model folder as exp.save_model writes it (a fresh two-layer model)."""
    from attn_studio.training import InductionExperiment

    folder = tmp_path_factory.mktemp("good") / "model"
    InductionExperiment(seed=0).save_model("two layers", folder)
    return folder


def _copy(good: Path, tmp: Path) -> Path:
    folder = tmp / "model"
    folder.mkdir()
    for name in ("config.json", "model.safetensors", "vocab.json"):
        (folder / name).write_bytes((good / name).read_bytes())
    return folder


def _config(**changes):
    def change(folder: Path) -> None:
        cfg = json.loads((folder / "config.json").read_text())
        cfg.update(changes)
        (folder / "config.json").write_text(json.dumps(cfg))
    return change


def _write(name: str, data):
    def change(folder: Path) -> None:
        (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return change


def _vocab(tokens):
    return _write("vocab.json", json.dumps({"tokens": tokens}))


def _tensors(change_them):
    def change(folder: Path) -> None:
        from safetensors.numpy import load_file, save_file

        tensors = load_file(folder / "model.safetensors")
        change_them(tensors)
        (folder / "model.safetensors").unlink()
        save_file(tensors, folder / "model.safetensors")
    return change


def _nan(tensors):
    tensors["layer1.W_K"][3, 4] = np.nan


def _header(n: int, body: bytes = b"{}"):
    return _write("model.safetensors", struct.pack("<Q", n) + body)


def _remove(name):
    return lambda folder: (folder / name).unlink()


def _fifo(name):
    def change(folder: Path) -> None:
        (folder / name).unlink()
        os.mkfifo(folder / name)
    return change


def _sparse(name, size):
    def change(folder: Path) -> None:
        with open(folder / name, "wb") as fh:
            fh.truncate(size)
    return change


LETTERS = list("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345")
CORPUS = {
    "config-not-json": (_write("config.json", "{ not json"), "config.json"),
    "config-a-list": (_write("config.json", '[1, 2]'), "config.json"),  # then not a lab folder at all
    "unknown-kind": (_config(model_type="attention-and-mlp"), "attention-and-mlp"),
    "newer-format": (_config(format_version=7), "newer"),
    "huge-d-model": (_config(d_model=10**9), "absurd"),
    "huge-vocab": (_config(vocab_size=2**40), "absurd"),
    "too-many-weights": (_config(layers=12, heads=64, d_head=4096, d_model=4096), "absurd"),
    "negative-heads": (_config(heads=-2), "positive whole number"),
    "float-layers": (_config(layers=2.0), "positive whole number"),
    "bool-causal": (_config(causal="yes"), "causal"),
    "bad-recipe": (_config(training={"experiment": "induction", "arm": "two layers", "seed": 0, "steps": -5}),
                   "steps"),
    "wrong-vocab-size": (_vocab(LETTERS[:31]), "31 tokens"),
    "vocab-not-listed": (_write("vocab.json", '{"tokens": "ABC"}'), "list of names"),
    "token-with-space": (_vocab(LETTERS[:30] + ["a b", "Z9"]), "space"),
    "token-twice": (_vocab(LETTERS[:31] + ["A"]), "'A' is given to two tokens"),
    "token-not-text": (_vocab(LETTERS[:31] + [7]), "token 31"),
    "vocab-missing": (_remove("vocab.json"), "vocab.json"),
    "vocab-a-pipe": (_fifo("vocab.json"), "not a regular file"),
    "vocab-huge": (_sparse("vocab.json", 2**31), "larger than"),
    "weights-missing": (_remove("model.safetensors"), "model.safetensors"),
    "tensor-missing": (_tensors(lambda t: t.pop("W_U")), "lacks W_U"),
    "wrong-shape": (_tensors(lambda t: t.update(W_E=np.zeros((31, 32)))), "shape"),
    "extra-tensor": (_tensors(lambda t: t.update({"layer2.W_Q": np.zeros((32, 32))})), "layer2.W_Q"),
    "nan-weight": (_tensors(_nan), "NaN"),
    "integer-weight": (_tensors(lambda t: t.update(W_U=np.zeros((32, 32), dtype=np.int64))), "floating point"),
    "header-too-long": (_header(2**62), "header"),
    "truncated": (_header(10_000), "truncated"),
    "config-says-one-layer": (_config(layers=1), "which config.json does not describe"),
}


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_a_broken_lab_folder_is_refused_naming_what_is_wrong(good, tmp_path, case):
    change, words = CORPUS[case]
    folder = _copy(good, tmp_path)
    change(folder)
    outcome = run_bounded(_OPEN.format(path=str(folder)))
    assert "refused" in outcome, outcome
    assert words.lower() in outcome["refused"].lower(), outcome["refused"]
    assert len(outcome["refused"]) < 400  # one clear sentence, not a dump


def test_the_good_folder_opens(good):
    outcome = run_bounded(_OPEN.format(path=str(good)))
    assert outcome.get("loaded") == "lab two layers (seed 0, step 0)", outcome
