"""The document without a display: file, title, recent files, autosave and recovery decisions."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from attn_studio.document import MAX_RECENT, Document, open_preset
from attn_studio.session import SessionError, read_session, write_session
from attn_studio.recovery import RecoveryStore
from attn_studio.state import StudioState
from attn_studio.studio import Studio


@pytest.fixture
def doc(tmp_path):
    recent = []
    d = Document(Studio(), RecoveryStore(tmp_path / "data"), on_recent_changed=recent.append)
    d.recent_calls = recent
    return d


def test_the_document_module_needs_no_qt():
    code = "import sys, attn_studio.document; print(any(m.startswith('PySide6') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_title_names_the_file_and_marks_unsaved_work(doc, tmp_path):
    assert doc.title() == "untitled[*] — Attention Studio"
    doc.studio.update(causal=True)
    assert doc.title() == "untitled •[*] — Attention Studio"
    saved = doc.save(tmp_path / "lecture")
    assert saved.name == "lecture.attn.json" and saved.exists()
    assert doc.title() == "lecture.attn.json[*] — Attention Studio"
    assert read_session(saved).causal is True


def test_save_without_a_file_is_refused(doc):
    with pytest.raises(SessionError):
        doc.save()


def test_open_takes_the_file_and_a_bad_file_changes_nothing(doc, tmp_path):
    good = tmp_path / "good.attn.json"
    write_session(good, StudioState(sentence="hello there", causal=True))
    doc.open(good)
    assert doc.path == good and doc.studio.state.sentence == "hello there" and not doc.is_modified
    bad = tmp_path / "bad.attn.json"
    bad.write_text("{ not json", encoding="utf-8")
    with pytest.raises(SessionError):
        doc.open(bad)
    assert doc.path == good and doc.studio.state.sentence == "hello there"


def test_recent_files_newest_first_once_and_bounded(doc, tmp_path):
    for i in range(MAX_RECENT + 3):
        doc.studio.update(seed=i + 1)
        doc.save(tmp_path / f"s{i}.attn.json")
    doc.save(tmp_path / "s4.attn.json")
    names = [os.path.basename(f) for f in doc.recent_files]
    assert names[0] == "s4.attn.json" and names.count("s4.attn.json") == 1
    assert len(names) == MAX_RECENT
    assert doc.recent_calls[-1] == doc.recent_files  # the caller is told, to keep the list


def test_preset_edited_only_beyond_the_selection(tmp_path):
    studio, name = open_preset("journey")
    doc = Document(studio, RecoveryStore(tmp_path), preset=name)
    assert name == "journey" and not doc.preset_edited()
    studio.select(query=1)
    assert not doc.preset_edited()
    studio.update(causal=not studio.state.causal)
    assert doc.preset_edited()
    assert open_preset("no such example")[1] is None


def test_autosave_writes_unsaved_work_and_clears_when_saved(doc, tmp_path):
    assert not doc.needs_autosave({"query_index"}) and doc.needs_autosave({"causal", "query_index"})
    doc.studio.update(causal=True)
    assert doc.autosave() is None
    assert read_session(doc.recovery.path).causal is True
    doc.save(tmp_path / "x.attn.json")
    assert not doc.recovery.path.exists()
    doc.studio.update(positional=True)
    doc.autosave()
    doc.close()
    assert not doc.recovery.path.exists()


def test_autosave_failure_is_a_message_not_a_crash(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    doc = Document(Studio(), RecoveryStore(blocker / "data"))  # a folder below a file cannot exist
    doc.studio.update(causal=True)
    message = doc.autosave()
    assert message and message.startswith("Autosave failed")


def test_recovery_is_offered_restored_and_discarded(tmp_path):
    crashed = RecoveryStore(tmp_path, pid=2**22 + 777)
    crashed.save(StudioState(sentence="lost work here"))
    doc = Document(Studio(), RecoveryStore(tmp_path))
    offer = doc.recovery_offer()
    assert offer.path == crashed.path and offer.when
    assert doc.restore(offer.path) is None
    assert doc.studio.state.sentence == "lost work here" and doc.path is None
    assert not crashed.path.exists()
    assert doc.recovery_offer().path is None


def test_unreadable_recovery_is_moved_aside_with_a_message(tmp_path):
    crashed = RecoveryStore(tmp_path, pid=2**22 + 778)
    crashed.save(StudioState())
    crashed.path.write_text("garbage", encoding="utf-8")
    doc = Document(Studio(), RecoveryStore(tmp_path))
    before = doc.studio.state
    message = doc.restore(doc.recovery_offer().path)
    assert message and "cannot be read" in message
    assert doc.studio.state is before
    assert not crashed.path.exists()  # moved aside, not left to be offered again
