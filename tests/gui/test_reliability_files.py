"""Temporary files of killed saves are removed at start and never offered; a folder that cannot be written
gives one warning and the app goes on."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attn_studio.gui import MainWindow, settings
from attn_studio.session import read_session, write_session
from attn_studio.recovery import DATA_DIR_ENV
from attn_studio.state import StudioState


def leftovers(folder: Path, name: str = "talk.attn.json") -> dict[str, Path]:
    """A session, a temporary its killed save left (an hour old), one being written now, and bystanders."""
    folder.mkdir(parents=True, exist_ok=True)
    session = folder / name
    write_session(session, StudioState(causal=True))
    stale = folder / f".{name}.k3x9_q.tmp"
    stale.write_bytes(b'{"schema_version": 3, "sent')  # half a file
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    fresh = folder / f".{name}.zz81ab.tmp"  # a save running right now (newer than this process)
    fresh.write_bytes(b"{")
    os.utime(fresh, (time.time() + 60, time.time() + 60))
    bystander = folder / "notes.tmp"
    bystander.write_text("mine")
    os.utime(bystander, (hour_ago, hour_ago))
    return {"session": session, "stale": stale, "fresh": fresh, "bystander": bystander}


def window(qtbot) -> MainWindow:
    """A new window: for what the app does when it starts, or a test that closes it."""
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    w.bridge.flush()
    return w


@pytest.fixture
def win(document_window):
    # One window serves the tests that open files in a running app: its state undone (the shared
    # reset), then its document (file, example, recent files, message, title) put back and checked.
    document_window.bridge.flush()
    return document_window


def test_start_removes_temporaries_beside_the_recent_files_and_never_offers_them(qtbot, tmp_path):
    files = leftovers(tmp_path / "lectures")
    settings.write_recent([str(files["session"]), str(files["stale"]), str(files["fresh"])])
    w = window(qtbot)
    assert not files["stale"].exists()
    assert files["fresh"].exists() and files["bystander"].read_text() == "mine" and files["session"].exists()
    assert w.recent_files() == [str(files["session"])]
    w.files.recent_menu.aboutToShow.emit()
    assert [a.text() for a in w.files.recent_menu.actions()] == ["talk.attn.json"]


def test_opening_a_session_removes_temporaries_beside_it(win, tmp_path):
    files = leftovers(tmp_path / "elsewhere")
    w = win
    assert files["stale"].exists()  # not a recent folder: left alone until a file there is opened
    assert w.open_file(files["session"])
    assert not files["stale"].exists() and files["fresh"].exists() and files["bystander"].exists()
    assert w.studio.state.causal is True


@pytest.mark.parametrize("how", ["open", "drop", "recent"])
def test_a_temporary_is_refused_with_a_message(win, tmp_path, how):
    files = leftovers(tmp_path)
    temp = files["fresh"]
    w = win
    before = w.studio.state
    if how == "open":
        assert not w.open_file(temp)
    elif how == "drop":
        assert not w.files.open_dropped([str(temp)])
    else:
        w.document.recent_files.insert(0, str(temp))  # however it got there, opening it is refused
        assert not w.files.open_file(w.recent_files()[0])
    assert w.studio.state is before and w.current_path is None
    text = w.message_label.text()
    assert "temporary file of a save that did not finish" in text and "open talk.attn.json instead" in text


def test_attn_studio_refuses_a_temporary_on_the_command_line(tmp_path):
    temp = leftovers(tmp_path)["fresh"]
    env = dict(os.environ, **{DATA_DIR_ENV: str(tmp_path / "data")})
    done = subprocess.run([sys.executable, "-m", "attn_studio", str(temp)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 2
    assert "temporary file of a save" in done.stderr and "Traceback" not in done.stderr


def test_a_data_folder_that_cannot_be_written_gives_one_warning_and_the_app_goes_on(qtbot, tmp_path, monkeypatch):
    # A regular file where the data folder should be: nothing can be created in it, even by root.
    blocked = tmp_path / "data-is-a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(DATA_DIR_ENV, str(blocked))
    w = window(qtbot)
    shown = []
    w.numbers.message_label.setText("")
    original = w.files.show_message
    w.files.show_message = lambda text: (shown.append(text), original(text))
    for value in (True, False, True):
        w.studio.update(causal=value)
        w.autosave()
    assert len(shown) == 1 and "Autosave failed" in shown[0] and "save it to a file" in shown[0]
    # Saving elsewhere works, and clearing the recovery file afterwards does not raise.
    target = tmp_path / "kept.attn.json"
    assert w.save_to(target)
    assert read_session(target).causal is True and not w.studio.is_modified
    assert w.close()
    assert blocked.read_text() == "not a folder"
