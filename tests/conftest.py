"""Test setup shared by every layer: Qt runs on the offscreen platform, no display needed."""

import os

import pytest

# Set before anything imports Qt: the GUI tests drive the real window offscreen.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path, monkeypatch):
    """Settings, recent files and recovery files of each test live in its own folder."""
    monkeypatch.setenv("ATTN_STUDIO_DATA_DIR", str(tmp_path / "attn-studio-data"))
