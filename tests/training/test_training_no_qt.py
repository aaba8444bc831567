"""The training lab never imports Qt: the window plays it from a worker, a notebook runs it bare."""

import pkgutil
import subprocess
import sys

import attn_studio.training

# Every module of the package, found by listing it: a new module is checked without being named here.
MODULES = ["attn_studio.training", *sorted(f"attn_studio.training.{m.name}"
                                           for m in pkgutil.iter_modules(attn_studio.training.__path__))]
QT = ("PySide6", "pyqtgraph", "shiboken6")


def _qt_after_importing(modules: list[str]) -> list[str]:
    code = ("import importlib, sys\n"
            f"for name in {modules!r}: importlib.import_module(name)\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(QT)!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip())  # a list literal printed by the probe above


def test_training_imports_no_qt():
    assert {"attn_studio.training.layers", "attn_studio.training.scaling", "attn_studio.training.seq2seq",
            "attn_studio.training.report", "attn_studio.training.command"} <= set(MODULES)
    assert _qt_after_importing(MODULES) == []


def test_the_probe_sees_qt():
    # Without this, a probe that could never see Qt would pass the test above.
    assert _qt_after_importing(["attn_studio.training", "PySide6.QtCore"]) == ["PySide6", "shiboken6"]
