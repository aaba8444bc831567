"""One way to work in the background: every thread of the window is started by ``gui/qt/worker.py``.

The window once ran background work five ways (plain threads, a QThread per job, runnables on
two thread pools), each with its own hand-over, cancel and rules; this keeps it at one.
"""

import re
from pathlib import Path

import attn_studio

PACKAGE = Path(attn_studio.__file__).resolve().parent
WORKER = PACKAGE / "gui" / "qt" / "worker.py"
FORBIDDEN = re.compile(r"threading\.Thread|\bThread\(|QThread|QRunnable|QThreadPool|concurrent\.futures|(?<![\w.])_thread\b")


def test_no_thread_is_started_outside_the_worker_module():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == WORKER:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if FORBIDDEN.search(line):
                offenders.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert not offenders, "background work outside gui/qt/worker.py:\n" + "\n".join(offenders)


def test_the_worker_module_is_where_the_threads_are():
    text = WORKER.read_text(encoding="utf-8")
    assert "superqt" in text and "QThreadPool" in text
