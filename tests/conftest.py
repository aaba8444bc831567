"""Test setup shared by every layer: Qt runs on the offscreen platform, no display needed.

Floats, the rule: a number computed on another machine or in another process (a shipped
file, golden data, a saved session, an exported CSV) is compared with a tolerance that
follows from its computation (float64 sums of up to ~1e4 terms and exp/log agree to about
1e-9 relative across BLAS builds and SIMD paths, more where the formula cancels), never
1e-12 or exact; exact equality is for the same code path in the same process, integers
and strings. Check a new comparison on another CPU's paths with, for example,
``OPENBLAS_CORETYPE=Sandybridge NPY_DISABLE_CPU_FEATURES=X86_V3 python -m pytest``.
"""

import compileall
import os
from pathlib import Path

import pytest

from shared_runs import RUNS_ENV
from suite_order import SLOW_FIRST

# Set before anything imports Qt: the GUI tests drive the real window offscreen.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Set before NumPy loads, as the app's entry points do: the suite runs on two worker
# processes, and two BLAS threads in each fought over two cores (a training step 6x slower).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def pytest_collection_modifyitems(config, items):
    """The ``SLOW_FIRST`` modules' tests first, in its order, marked ``slow``; every other test after them,
    in the order collected. (With ``--no-loadscope-reorder`` xdist hands the modules out in this order.)"""
    rank = {name: n for n, name in enumerate(SLOW_FIRST)}

    def place(item) -> int:
        return rank.get(item.path.relative_to(config.rootpath).as_posix(), len(SLOW_FIRST))

    for item in items:
        if place(item) < len(SLOW_FIRST):
            item.add_marker("slow")
    items.sort(key=place)  # stable: the order within a module, and of the other modules, is kept


def pytest_configure(config):
    # Once per run, before the workers start (xdist's controller, or the only process): the
    # package's bytecode is written, so that the workers and the ninety-odd processes the tests
    # start (command lines, hostile files, imports without Qt) read it instead of each compiling
    # the package again, also where PYTHONDONTWRITEBYTECODE is set (about 0.1 s a process).
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(Path(__file__).resolve().parents[1] / "attn_studio", quiet=1)


@pytest.fixture(scope="session", autouse=True)
def _shared_runs_folder(tmp_path_factory):
    """The session's folder of shared training runs (tests/shared_runs.py): one for both workers (the
    parent of a worker's base temporary folder is the session's), passed on to the processes tests start."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared-runs"
    folder.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(RUNS_ENV, str(folder))
        yield folder


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path, monkeypatch):
    """Settings, recent files and recovery files of each test live in its own folder."""
    monkeypatch.setenv("ATTN_STUDIO_DATA_DIR", str(tmp_path / "attn-studio-data"))


@pytest.fixture(scope="module")
def minilm():
    """all-MiniLM-L6-v2 loaded once for a module (tests that use it skip where it is not installed)."""
    from attn_studio.pretrained import load_pretrained

    return load_pretrained()
