"""Temporary files of saves, kill -9 during saves, and recovery files: locks, quarantine, read-only folders."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from attn_studio import session
from attn_studio.session import SessionError, is_temporary, read_session, remove_stale_temporaries, state_to_json, write_session
from attn_studio.recovery import RecoveryStore
from attn_studio.state import StudioState


# -- temporary files of atomic saves ---------------------------------------------------------

def test_temporary_files_are_named_so_they_are_recognised(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append(Path(src))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    write_session(tmp_path / "talk.attn.json", StudioState())
    assert len(seen) == 1 and seen[0].parent == tmp_path
    assert seen[0].name.startswith(".talk.attn.json.") and seen[0].name.endswith(".tmp")
    assert is_temporary(seen[0])
    assert not is_temporary(tmp_path / "talk.attn.json")
    assert not is_temporary(tmp_path / "notes.tmp")


def test_stale_temporaries_are_removed_and_nothing_else(tmp_path):
    old = tmp_path / ".talk.attn.json.ab12cd34.tmp"
    fresh = tmp_path / ".talk.attn.json.zz99yy88.tmp"
    other = tmp_path / "keep.tmp"
    session_file = tmp_path / "talk.attn.json"
    for p in (old, fresh, other, session_file):
        p.write_text("x")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    folder_like = tmp_path / ".dir.attn.json.ab12cd34.tmp"
    folder_like.mkdir()
    os.utime(folder_like, (time.time() - 3600, time.time() - 3600))
    removed = remove_stale_temporaries(tmp_path, older_than=time.time() - 60)
    assert removed == [old]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [fresh.name, other.name, session_file.name, folder_like.name])


_WRITERS = textwrap.dedent("""
    # For each line read, a writer process forked from this one (imported once, not per writer)
    # saves in a loop until it is killed; once it is dead, "killed" is printed.
    import os, signal, sys
    from attn_studio.session import write_session
    from attn_studio.state import StudioState
    import numpy as np
    path = sys.argv[1]
    base = StudioState(d_model=64, heads=4, d_head=32)
    for _ in sys.stdin:
        pid = os.fork()
        if pid == 0:
            print("ready", os.getpid(), flush=True)
            i = 0
            while True:
                i += 1
                w = np.full((4, 64, 32), float(i % 97) / 8)
                write_session(path, base.replace(w_q=w, name=str(i)))
        _, status = os.waitpid(pid, 0)
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        print("killed" if killed else f"ended with status {status}", flush=True)
""")


def test_kill_9_during_saves_never_leaves_a_broken_session(tmp_path):
    path = tmp_path / "lecture.attn.json"
    write_session(path, StudioState(name="first"))
    writers = subprocess.Popen([sys.executable, "-c", _WRITERS, str(path)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        for round_ in range(8):
            writers.stdin.write("start\n")
            writers.stdin.flush()
            ready, pid = writers.stdout.readline().split()
            assert ready == "ready"
            time.sleep(0.05 + 0.04 * round_)
            os.kill(int(pid), signal.SIGKILL)
            assert writers.stdout.readline().strip() == "killed"  # dead: nothing writes any more
            state = read_session(path)  # always a whole session, the old or a new one
            assert state.name == "first" or state.d_model == 64
    finally:
        writers.stdin.close()
        writers.wait(timeout=10)
        writers.stdout.close()
    leftovers = [p for p in tmp_path.iterdir() if p.name != path.name]
    assert all(is_temporary(p) for p in leftovers)
    remove_stale_temporaries(tmp_path, older_than=time.time() + 1)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


# -- recovery: offered by lock, never by process id -------------------------------------------

def test_a_running_studios_recovery_file_is_not_offered(tmp_path):
    running = RecoveryStore(tmp_path)
    running.save(StudioState(causal=True))
    other = RecoveryStore(tmp_path)  # a second studio starting while the first runs
    assert other.orphans() == []
    running.clear()
    assert not running.path.exists() and not running.lock_path.exists()


def test_work_of_a_killed_process_is_offered_even_with_a_live_pid(tmp_path):
    # Process 1 is always alive in a container; what counts is that nobody holds the lock.
    crashed = RecoveryStore(tmp_path, pid=1)
    crashed.save(StudioState(sentence="kept work"))
    assert RecoveryStore(tmp_path).orphans() == [crashed.path]
    script = textwrap.dedent(f"""
        import os, signal
        from attn_studio.recovery import RecoveryStore
        from attn_studio.state import StudioState
        store = RecoveryStore({str(tmp_path)!r})
        store.save(StudioState(sentence="killed work"))
        print(store.path, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    killed = Path(out.stdout.strip())
    assert killed.exists()
    orphans = RecoveryStore(tmp_path).orphans()
    assert set(orphans) == {crashed.path, killed}
    assert read_session(killed).sentence == "killed work"


def test_work_of_a_studio_still_running_is_not_offered_even_without_its_lock(tmp_path):
    # Where a lock is not kept (a file system without flock, a lock file removed by hand), a studio
    # that still runs is told apart by its process: alive, a studio, started before it wrote.
    script = textwrap.dedent(f"""
        import os, sys
        from attn_studio.recovery import RecoveryStore
        from attn_studio.state import StudioState
        store = RecoveryStore({str(tmp_path)!r})
        store.save(StudioState(sentence="work still open"))
        os.unlink(store.lock_path)
        print(store.path, flush=True)
        sys.stdin.read()
    """)
    running = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    try:
        path = Path(running.stdout.readline().strip())
        assert path.exists() and not path.with_suffix("").with_suffix(".lock").exists()
        assert RecoveryStore(tmp_path).orphans() == []
    finally:
        running.kill()
        running.wait(timeout=30)
        running.stdout.close()
        running.stdin.close()
    assert RecoveryStore(tmp_path).orphans() == [path]  # gone: now its work is offered


def test_a_live_process_of_another_program_does_not_hide_a_crashed_studios_work(tmp_path):
    # The id of a crashed studio taken by another program (or process 1 in a container) is no studio.
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        crashed = RecoveryStore(tmp_path, pid=other.pid)
        crashed.save(StudioState(sentence="kept work"))
        assert RecoveryStore(tmp_path).orphans() == [crashed.path]
    finally:
        other.kill()
        other.wait(timeout=30)
        other.stdin.close()


def test_same_pid_twice_does_not_overwrite_the_earlier_work(tmp_path):
    first = RecoveryStore(tmp_path, pid=1)
    first.save(StudioState(sentence="one"))
    second = RecoveryStore(tmp_path, pid=1)
    second.save(StudioState(sentence="two"))
    assert first.path != second.path
    assert read_session(first.path).sentence == "one"


# -- recovery: what cannot be read is moved aside, never deleted ------------------------------

def _unreadable_entries(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    garbage = folder / "recovery-11.attn.json"
    garbage.write_bytes(b"\x00\xffnot json")
    future = folder / "recovery-12.attn.json"
    future.write_text('{"schema_version": 999}')
    a_folder = folder / "recovery-13.attn.json"
    a_folder.mkdir()
    (a_folder / "inside.txt").write_text("keep me")
    dangling = folder / "recovery-14.attn.json"
    dangling.symlink_to(folder / "nowhere")
    fifo = folder / "recovery-15.attn.json"
    os.mkfifo(fifo)
    return {"garbage": garbage, "future": future, "folder": a_folder, "dangling": dangling, "fifo": fifo}


def test_start_survives_a_hostile_recovery_folder_and_moves_entries_aside(tmp_path):
    entries = _unreadable_entries(tmp_path)
    store = RecoveryStore(tmp_path)
    notes = store.sweep()
    # folders, links and pipes are moved aside at start, each with a note saying where
    assert len(notes) == 3 and all("quarantine" in n for n in notes)
    for key in ("folder", "dangling", "fifo"):
        assert not os.path.lexists(entries[key])
    orphans = store.orphans()
    assert set(orphans) == {entries["garbage"], entries["future"]}
    quarantined = {p.name.split("-", 3)[3] for p in (tmp_path / "quarantine").iterdir()}
    assert quarantined == {"recovery-13.attn.json", "recovery-14.attn.json", "recovery-15.attn.json"}
    kept = next((tmp_path / "quarantine").glob("*recovery-13.attn.json"))
    assert (kept / "inside.txt").read_text() == "keep me"


@pytest.mark.parametrize("key", ["garbage", "future"])
def test_restoring_or_discarding_an_unreadable_file_moves_it_to_quarantine(tmp_path, key):
    entries = _unreadable_entries(tmp_path)
    path = entries[key]
    content = path.read_bytes()
    with pytest.raises(SessionError):
        read_session(path)
    message = RecoveryStore(tmp_path).discard(path)
    assert "quarantine" in message and str(tmp_path / "quarantine") in message
    assert not path.exists()
    moved = next((tmp_path / "quarantine").glob(f"*{path.name}"))
    assert moved.read_bytes() == content


def test_discarding_readable_work_removes_it(tmp_path):
    crashed = RecoveryStore(tmp_path, pid=4242)
    crashed.save(StudioState())
    assert RecoveryStore(tmp_path).discard(crashed.path) is None
    assert not crashed.path.exists() and not (tmp_path / "quarantine").exists()


def test_clearing_in_a_read_only_folder_warns_and_goes_on(tmp_path, monkeypatch, caplog):
    store = RecoveryStore(tmp_path)
    store.save(StudioState(causal=True))
    real_unlink = Path.unlink

    def refuse(self, *args, **kwargs):
        if self == store.path:
            raise PermissionError(13, "Permission denied")
        return real_unlink(self, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", refuse)  # the tests run as root: chmod would not stop them
    message = store.clear()
    assert "could not be removed" in message and "Permission denied" in message
    assert any("could not be removed" in r.message for r in caplog.records)


def test_recovery_file_is_valid_json_in_the_current_format(tmp_path):
    store = RecoveryStore(tmp_path)
    store.save(StudioState(causal=True))
    assert store.path.read_text("utf-8") == state_to_json(StudioState(causal=True))
    store.clear()
