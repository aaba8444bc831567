"""Running one hostile input in a child process, with its peak memory and time measured."""

import json
import subprocess
import sys
import textwrap

import pytest

# Generous bounds: they catch hangs and runaway memory, they do not time anything.
TIME_LIMIT_S = 30
MEMORY_LIMIT_MB = 1536

_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    started = time.perf_counter()
    outcome = {}
    try:
        exec(sys.stdin.read(), {"outcome": outcome})
    except BaseException as exc:  # a traceback is a failure the parent reports
        outcome["crash"] = f"{type(exc).__name__}: {exc}"[:500]
    outcome["seconds"] = time.perf_counter() - started
    # The peak of this interpreter's own memory. On Linux ru_maxrss carries over the
    # peak of the process that spawned it (the exec keeps it), so a big test run
    # before would count here; VmHWM belongs to this program's memory alone.
    try:
        with open("/proc/self/status") as status:
            peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError):
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    outcome["peak_mb"] = peak_kb / 1024
    print("\\n" + json.dumps(outcome))
""")


def run_bounded(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it fills the dict ``outcome``. Returns it with seconds and peak_mb."""
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD], input=textwrap.dedent(code), capture_output=True,
                              text=True, timeout=TIME_LIMIT_S * 2)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child ran longer than {TIME_LIMIT_S * 2} s: a hang")
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, proc.stderr[-2000:]
    outcome = json.loads(lines[-1])
    assert "crash" not in outcome, outcome["crash"]
    assert outcome["seconds"] < TIME_LIMIT_S, outcome
    assert outcome["peak_mb"] < MEMORY_LIMIT_MB, outcome
    return outcome
