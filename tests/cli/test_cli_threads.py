"""The app's entry points give NumPy's BLAS one thread (set before NumPy loads; a value set by the
person wins). Two BLAS threads made a MiniLM pass many times slower on a 2-core machine."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import sys
import {entry}
assert "numpy" not in sys.modules, "numpy was imported before the entry point set the thread count"
import ctypes, numpy
names = ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
         "openblas_get_num_threads64_")
libs = sorted({{line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line.lower() and "/" in line}})
getter = next((getattr(ctypes.CDLL(p), n) for p in libs for n in names if hasattr(ctypes.CDLL(p), n)), None)
print(getter() if getter else "no-openblas")
"""


def probe(entry: str, **env) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    environ.update(env)
    done = subprocess.run([sys.executable, "-c", PROBE.format(entry=entry)], env=environ, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout.strip()
    if out == "no-openblas":
        pytest.skip("NumPy here does not use OpenBLAS")
    return out


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc to find OpenBLAS")
@pytest.mark.parametrize("entry", ["attn_studio.cli", "attn_studio.__main__"])
def test_entry_points_give_blas_one_thread(entry):
    assert probe(entry) == "1"


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc to find OpenBLAS")
def test_a_thread_count_the_person_set_wins():
    assert probe("attn_studio.cli", OPENBLAS_NUM_THREADS="2") == "2"
