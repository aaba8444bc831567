"""Benchmark: the largest models the limits allow, computed, saved and opened.

For each model, a fresh child process builds the state once, then times the
operation ``--repeats`` times (after one warm-up) and reports its own peak
resident memory (``resource.getrusage(...).ru_maxrss``), so one measurement
does not inherit another's memory. Operations:

- ``compute``: ``Studio(state)``, everything the studio computes for a state;
- ``save``: ``write_session`` of the state with some weights edited;
- ``open``: ``read_session`` of that file;
- ``bg save``: the window's save, off the GUI thread (``SaveQueue``), while a
  5 ms timer ticks on the event loop: the time until the save is recorded, and
  the longest stall of the event loop meanwhile (the gap between two ticks).

The last rows save, open and save in the background the largest session file the
studio writes (every dimension at its maximum and nearly a million edited weight
cells); ``--largest`` runs these rows alone.

Saving and opening start from a cold cache of the seed's weight values.

    python benchmarks/bench_limits.py [--repeats N] [--largest]

Budget (limits.py): nothing the state allows should take more than a few
seconds or 2 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import textwrap

from attn_studio.limits import MAX_D_HEAD, MAX_D_MODEL, MAX_HEADS, estimate_cost, max_tokens_within_budget

_CHILD = textwrap.dedent("""
    import json, os, resource, sys, tempfile, time
    import numpy as np
    from attn_studio.schema import seeded_store
    from attn_studio.session import read_session, write_session
    from attn_studio.state import StudioState
    from attn_studio.studio import Studio

    op, tokens, d_model, heads, d_head, repeats = sys.argv[1], *map(int, sys.argv[2:7])
    state = StudioState(sentence=" ".join(f"w{i}" for i in range(tokens)), d_model=d_model, heads=heads,
                        d_head=d_head, score=sys.argv[7])
    w = np.array(state.w_q)
    if sys.argv[8] == "max-edits":  # the largest file: as many edited cells as a session may hold
        from attn_studio.limits import MAX_WEIGHT_EDITS
        w[:, :, : MAX_WEIGHT_EDITS // (heads * d_model)] = 0.25
    else:
        w[:, : min(d_model, 64), : min(d_head, 8)] = 0.5  # a lecturer's edits
    state = state.replace(w_q=w)
    stalls = []
    path = os.path.join(tempfile.mkdtemp(), "bench.attn.json")
    write_session(path, state)
    # Saving and opening compare with the seed's values, which are cached: start
    # each from a cold cache, as the first save or open of a run does.

    def background_save():
        # The window's way: the job runs on a worker thread while the event loop keeps ticking.
        from PySide6 import QtCore
        from attn_studio.document import SaveJob
        from attn_studio.gui.files.save_worker import SaveQueue
        app = QtCore.QCoreApplication.instance() or QtCore.QCoreApplication([])
        seeded_store.cache_clear()
        job = SaveJob(state, path)
        queue, ticks, done = SaveQueue(), [time.perf_counter()], []
        timer = QtCore.QTimer()
        timer.setInterval(5)
        timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
        def finished(job, error):
            done.append(error)
            app.quit()
        timer.start()
        queue.submit(lambda: job, finished)
        app.exec()
        timer.stop()
        assert done == [None], done
        stalls.append(max(b - a for a, b in zip(ticks, ticks[1:] + [time.perf_counter()])))

    run = {"compute": lambda: Studio(state),
           "save": lambda: (seeded_store.cache_clear(), write_session(path, state)),
           "open": lambda: (seeded_store.cache_clear(), read_session(path)),
           "bg save": background_save}[op]
    run()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"times": times, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "file_kb": os.path.getsize(path) / 1024, "stall": max(stalls[1:] or stalls or [0])}))
""")


def measure(op: str, tokens: int, d_model: int, heads: int, d_head: int, score: str, repeats: int,
            edits: str = "some") -> dict:
    """Run one operation in a fresh process; returns its times (s), peak memory (MB), file size (kB)
    and, for ``bg save``, the event loop's longest stall (s)."""
    done = subprocess.run([sys.executable, "-c", _CHILD, op, str(tokens), str(d_model), str(heads), str(d_head),
                           str(repeats), score, edits], capture_output=True, text=True, check=True,
                          env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--largest", action="store_true", help="only the largest session file: save, open, bg save")
    args = parser.parse_args(argv)
    import numpy as np

    dims = (MAX_D_MODEL, MAX_HEADS, MAX_D_HEAD)
    mid = (64, 4, 64)
    models = [  # the most tokens the budget allows at these dimensions
        (max_tokens_within_budget(*dims), *dims, "dot"),                        # every dimension at its maximum
        (max_tokens_within_budget(*dims, additive=True), *dims, "additive"),
        (max_tokens_within_budget(*mid), *mid, "dot"),                          # a mid-sized model
        (max_tokens_within_budget(*mid, additive=True), *mid, "additive"),
        (max_tokens_within_budget(3, 1, 3), 3, 1, 3, "dot"),                    # the seeds' model: every token
    ]
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, {platform.machine()}; "
          f"repeats {args.repeats}; times in s, peak resident memory of the process in MB")
    print(f"{'T, d_model, heads, d_head, score':>38}  {'op':>8}  {'median':>7}  {'p95':>7}  {'peak MB':>8}  "
          f"{'est. MB':>8}  {'file kB':>8}  {'stall s':>7}")
    rows = [] if args.largest else [(model, op, "some") for model in models
                                    for op in ("compute", "save", "open", "bg save")]
    rows += [((3, *dims, "dot"), op, "max-edits") for op in ("save", "open", "bg save")]  # the largest file
    for (tokens, d_model, heads, d_head, score), op, edits in rows:
        cost = estimate_cost(tokens, tokens, d_model, heads, d_head, additive=score == "additive")
        r = measure(op, tokens, d_model, heads, d_head, score, args.repeats, edits)
        t = np.array(r["times"])
        stall = f"{r['stall']:7.3f}" if op == "bg save" else f"{'':7}"
        label = f"{tokens}, {d_model}, {heads}, {d_head}, {score}" + (", 1M edits" if edits == "max-edits" else "")
        print(f"{label:>38}  {op:>8}  {np.median(t):7.3f}  "
              f"{np.percentile(t, 95):7.3f}  {r['peak_mb']:8.0f}  {cost.bytes / 2**20:8.0f}  {r['file_kb']:8.1f}"
              f"  {stall}")


if __name__ == "__main__":
    main()
