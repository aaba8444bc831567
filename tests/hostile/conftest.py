"""Running one hostile input in a child process, with its peak memory and time measured.

Each input runs in a process of its own, so that a hang, a crash or runaway memory is seen and
measured rather than taking the test process down. Where the system can fork, one server
process per test worker loads NumPy and the package's Qt-free modules once and forks a child
per input (a few milliseconds instead of a new interpreter's start-up and imports); elsewhere
each input gets a new interpreter.
"""

import atexit
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

# Generous bounds: they catch hangs and runaway memory, they do not time anything.
TIME_LIMIT_S = 30
MEMORY_LIMIT_MB = 1536

# What a child does with its input: run it, then report the outcome, the time and the peak memory.
_RUN = textwrap.dedent("""
    def run_one(code):
        import resource, time
        started = time.perf_counter()
        outcome = {}
        try:
            exec(code, {"outcome": outcome})
        except BaseException as exc:  # a traceback is a failure the parent reports
            outcome["crash"] = f"{type(exc).__name__}: {exc}"[:500]
        outcome["seconds"] = time.perf_counter() - started
        # The high-water mark of this program's own memory: on Linux ru_maxrss survives exec,
        # so it would report the peak of the (large) test process that started this child.
        try:
            with open("/proc/self/status") as status:
                hwm = [line for line in status if line.startswith("VmHWM:")]
            outcome["peak_mb"] = int(hwm[0].split()[1]) / 1024
        except (OSError, IndexError, ValueError):
            outcome["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return outcome
""")

_CHILD = _RUN + textwrap.dedent("""
    import json, sys
    print("\\n" + json.dumps(run_one(sys.stdin.read())))
""")

# The server: one request (the code, as a JSON string) per line on stdin, one JSON answer per line
# on stdout. The modules every input imports are loaded before any fork; each child is a copy of
# this small process, so its peak memory is its own work plus these modules, as a new one's is.
_SERVER = _RUN + textwrap.dedent("""
    import json, os, select, signal, sys
    import numpy, attn_studio.session, attn_studio.studio, attn_studio.state, attn_studio.limits
    answers = sys.stdout
    for line in sys.stdin:
        code = json.loads(line)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)  # what the input prints must not mix with the answers
            try:
                text = json.dumps(run_one(code))
            except BaseException as exc:
                text = json.dumps({"crash": f"{type(exc).__name__}: {exc}"[:500], "seconds": 0, "peak_mb": 0})
            os.write(write, text.encode())
            os._exit(0)
        os.close(write)
        chunks, limit = [], float(sys.argv[1])
        with os.fdopen(read, "rb") as pipe:
            while True:
                ready, _, _ = select.select([pipe], [], [], limit)
                if not ready:
                    os.kill(pid, signal.SIGKILL)
                    break
                chunk = os.read(pipe.fileno(), 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        _, status = os.waitpid(pid, 0)
        if not ready:
            answer = {"hang": True}
        elif chunks:
            answer = json.loads(b"".join(chunks))
        else:
            answer = {"died": status}
        answers.write(json.dumps(answer) + "\\n")
        answers.flush()
""")

_server = None


def _stop_server():
    global _server
    if _server is not None:
        proc, _ = _server
        proc.stdin.close()
        proc.wait(timeout=30)
        _server = None


def _served(code: str) -> dict:
    global _server
    if _server is None:
        errors = tempfile.TemporaryFile(mode="w+")
        proc = subprocess.Popen([sys.executable, "-c", _SERVER, str(TIME_LIMIT_S * 2)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=errors, text=True)
        _server = (proc, errors)
        atexit.register(_stop_server)
    proc, errors = _server
    proc.stdin.write(json.dumps(code) + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        errors.seek(0)
        _server = None
        pytest.fail(f"the hostile-input server ended: {errors.read()[-2000:]}")
    answer = json.loads(line)
    if answer.get("hang"):
        pytest.fail(f"the child ran longer than {TIME_LIMIT_S * 2} s: a hang")
    if "died" in answer:
        errors.seek(0)
        pytest.fail(f"the child died (status {answer['died']}): {errors.read()[-2000:]}")
    return answer


def _spawned(code: str) -> dict:
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD], input=code, capture_output=True,
                              text=True, timeout=TIME_LIMIT_S * 2)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child ran longer than {TIME_LIMIT_S * 2} s: a hang")
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, proc.stderr[-2000:]
    return json.loads(lines[-1])


def run_bounded(code: str) -> dict:
    """Run ``code`` in a child process; it fills the dict ``outcome``. Returns it with seconds and peak_mb."""
    code = textwrap.dedent(code)
    outcome = _served(code) if hasattr(os, "fork") else _spawned(code)
    assert "crash" not in outcome, outcome["crash"]
    assert outcome["seconds"] < TIME_LIMIT_S, outcome
    assert outcome["peak_mb"] < MEMORY_LIMIT_MB, outcome
    return outcome
