"""The Qt-free layers never import Qt (checked in a fresh interpreter).

One interpreter, started for the check, loads NumPy (which every module checked imports and
which never imports Qt) and then forks a child per module: the child imports the module alone
and reports whether Qt came with it. A child is a fresh interpreter as far as Qt is concerned
(the parent is checked to have none) and costs no start-up of its own. Where there is no
fork, each module gets a new interpreter.
"""

import importlib.util
import json
import os
import pkgutil
import subprocess
import sys

import pytest

import attn_studio.engine

# Every module below must exist: a renamed or missing module fails here instead
# of passing unchecked. Every engine module is found by listing the package.
QT_FREE = [
    "attn_studio.engine", "attn_studio.state", "attn_studio.schema", "attn_studio.studio", "attn_studio.changes",
    "attn_studio.pretrained.edits", "attn_studio.schema.cells", "attn_studio.trained.changes", "attn_studio.scenes",
    "attn_studio.session", "attn_studio.recovery", "attn_studio.session_json", "attn_studio.pretrained", "attn_studio.explain", "attn_studio.formatting",
    "attn_studio.matrices", "attn_studio.limits", "attn_studio.animation", "attn_studio.sweeps",
    *sorted(f"attn_studio.engine.{m.name}" for m in pkgutil.iter_modules(attn_studio.engine.__path__)),
]

PROBE = (
    "import {module}, sys; "
    "print(any(m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6') for m in sys.modules))"
)


FORKING_PROBE = """
import importlib, json, os, sys
def has_qt():
    return any(m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6') for m in sys.modules)
import numpy
if has_qt():
    raise SystemExit('the probe itself loaded Qt')
results = {}
for name in sys.argv[1:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(name)
            found = str(has_qt())
        except BaseException as exc:
            found = 'error: ' + repr(exc)
        os.write(write, found.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        results[name] = pipe.read()
    os.waitpid(pid, 0)
print(json.dumps(results))
"""
POSITIVE_CONTROL = "PySide6.QtCore"


@pytest.fixture(scope="module")
def probed() -> dict[str, str]:
    """Module name -> "True" if importing it alone loaded Qt, "False" if not (or the error)."""
    names = [*QT_FREE, POSITIVE_CONTROL]
    if hasattr(os, "fork"):
        proc = subprocess.run([sys.executable, "-c", FORKING_PROBE, *names], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])
    found = {}
    for name in names:
        proc = subprocess.run([sys.executable, "-c", PROBE.format(module=name)], capture_output=True, text=True,
                              timeout=60)
        found[name] = proc.stdout.strip() if proc.returncode == 0 else f"error: {proc.stderr[-500:]}"
    return found


def _exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize("module", QT_FREE)
def test_module_imports_without_qt(module, probed):
    assert _exists(module), f"{module} cannot be found, so it cannot be checked: update QT_FREE"
    assert probed[module] == "False", f"{module} pulled in Qt (or failed to import): {probed[module]}"


def test_probe_detects_qt(probed):
    # The probe itself must be able to see Qt, or the checks above prove nothing: the same
    # probe that checked the modules sees Qt when a module brings it.
    if not _exists("PySide6"):
        pytest.skip("PySide6 is not installed")
    assert probed[POSITIVE_CONTROL] == "True", probed[POSITIVE_CONTROL]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(module="PySide6.QtCore")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == "True", proc.stderr
