"""The Qt-free layers never import Qt (checked in a fresh interpreter)."""

import importlib.util
import pkgutil
import subprocess
import sys

import pytest

import attn_studio.engine

# Every module below must exist: a renamed or missing module fails here instead
# of passing unchecked. Every engine module is found by listing the package.
QT_FREE = [
    "attn_studio.engine", "attn_studio.state", "attn_studio.schema", "attn_studio.studio",
    "attn_studio.session", "attn_studio.pretrained", "attn_studio.explain", "attn_studio.formatting",
    "attn_studio.matrices", "attn_studio.limits",
    *sorted(f"attn_studio.engine.{m.name}" for m in pkgutil.iter_modules(attn_studio.engine.__path__)),
]

PROBE = (
    "import {module}, sys; "
    "print(any(m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6') for m in sys.modules))"
)


def _exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize("module", QT_FREE)
def test_module_imports_without_qt(module):
    assert _exists(module), f"{module} cannot be found, so it cannot be checked: update QT_FREE"
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False", f"{module} pulled in Qt:\n{proc.stdout}{proc.stderr}"


def test_probe_detects_qt():
    # The probe itself must be able to see Qt, or the checks above prove nothing.
    if not _exists("PySide6"):
        pytest.skip("PySide6 is not installed")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(module="PySide6.QtCore")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == "True", proc.stderr
