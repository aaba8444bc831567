"""Benchmark: a cell edit to the window repainted, building the window, and cold start to a painted window.

Prints median and p95 per size. Runs on Qt's offscreen platform (no display needed):

    python benchmarks/bench_gui.py [--repeats N]
    python benchmarks/bench_gui.py --profile 64,64,8   # where a cell edit's time goes (cProfile)
    python benchmarks/bench_gui.py --previous REV      # also the same edits on revision REV (git), same run
    python benchmarks/bench_gui.py --compare-only      # only the edits against the previous release

The cell edits at (12, 16, 4) and (64, 64, 8) are also measured on the previous release (``--previous``,
by default the last revision before toy edits could move off the GUI thread), in a child process on
the same machine in the same run, and both are printed with their ratio: a figure against a number
remembered from another day on a shared machine says little.

Targets (2-core machine): cell edit -> repainted p95 <= 16 ms at (T, d_model, heads) = (12, 16, 4)
and <= 25 ms at (64, 64, 8); building the window <= 0.5 s; cold start to a painted window <= 1.0 s.
Also shown, without a target: (256, 128, 8), and a pasted paragraph of 600+ tokens.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# A fresh settings folder: the figures must not depend on a theme or zoom someone once saved.
os.environ.setdefault("ATTN_STUDIO_DATA_DIR", tempfile.mkdtemp(prefix="attn-bench-"))

import numpy as np  # noqa: E402

SIZES = [(6, 3, 1), (12, 16, 4), (64, 64, 8), (256, 128, 8)]
COMPARED = [(12, 16, 4), (64, 64, 8)]
# The previous release: the last revision before large toy edits were computed off the GUI thread.
PREVIOUS = "331f55b"

COLD_START = r"""
import time
t0 = time.perf_counter()
from PySide6 import QtWidgets
app = QtWidgets.QApplication([])
from attn_studio.gui import MainWindow
w = MainWindow()
w.resize(1366, 768)
w.show()
app.processEvents()
w.repaint()
print(time.perf_counter() - t0)
w.studio.mark_saved()  # a measurement, not work to keep: closing asks nothing
w.close()
w.deleteLater()
app.processEvents()
"""


def close(app, window):
    """Close and really delete ``window`` (deleteLater alone waits for an event loop that never runs here):
    windows left alive would make every later measurement slower."""
    from PySide6 import QtCore

    window.studio.mark_saved()  # a measurement, not work to keep: closing asks nothing
    window.close()
    window.deleteLater()
    app.processEvents()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)


def percentile(values, q):
    return float(np.percentile(np.asarray(values), q))


class PaintCounter:
    """Counts paint events anywhere in the application (installed as an event filter)."""

    def __init__(self):
        from PySide6 import QtCore

        class _Filter(QtCore.QObject):
            count = 0

            def eventFilter(self, obj, event):
                if event.type() == QtCore.QEvent.Paint:
                    _Filter.count += 1
                return False

        self.filter = _Filter()


def _busy(window) -> bool:
    """True while the window computes off the GUI thread or draws in steps (False on a release
    that did neither: it drew everything in the edit's turn)."""
    try:
        return window.studio.computing() or window.drawing()
    except AttributeError:
        return False


def bench_edit(app, window, model, size, repeats):
    """Time setData on an embedding cell -> the bridge's one emission -> every changed view painted.

    Paint events count how many views were repainted, to make sure the
    timing covers them.
    """
    times = []
    counter = PaintCounter()
    app.installEventFilter(counter.filter)
    rng = np.random.default_rng(0)
    for i in range(repeats + 3):
        index = model.index(i % model.rowCount(), 0)
        value = f"{rng.normal():.3f}"
        t0 = time.perf_counter()
        ok = model.setData(index, value)
        app.processEvents()  # the bridge emits once; views update and ask for a repaint
        # A large model computes off the GUI thread and is drawn a heatmap per turn: wait for both.
        while _busy(window):
            app.processEvents()
        app.processEvents()  # the repaint requests are painted
        elapsed = time.perf_counter() - t0
        assert ok, "edit was refused"
        if i >= 3:  # warm-up
            times.append(elapsed)
        if i == 2:
            type(counter.filter).count = 0
    app.removeEventFilter(counter.filter)
    return times, type(counter.filter).count / max(len(times), 1)


def open_window(app, t, d_model, heads):
    """A shown window on a sentence of ``t`` tokens with the given sizes, drawn once."""
    from attn_studio.gui import MainWindow
    from attn_studio.state import StudioState
    from attn_studio.studio import Studio

    sentence = " ".join(f"w{i}" for i in range(t))
    state = StudioState(sentence=sentence, d_model=d_model, heads=heads, d_head=max(1, d_model // heads))
    window = MainWindow(Studio(state))
    window.resize(1366, 768)
    window.show()
    app.processEvents()
    return window


def profile_edits(size, repeats):
    """Cell edits at ``size`` under cProfile: the calls that cost the most, by own and by total time."""
    import cProfile
    import pstats

    from PySide6 import QtWidgets

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    window = open_window(app, *size)
    profiler = cProfile.Profile()
    profiler.enable()
    times, _ = bench_edit(app, window, window.models["embeddings"], size, repeats)
    profiler.disable()
    print(f"{size}: median {statistics.median(times) * 1e3:.1f} ms, p95 {percentile(times, 95) * 1e3:.1f} ms "
          f"(under the profiler: slower than without)")
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(30)
    close(app, window)


def edit_medians(repeats):
    """Print ``T d_model heads median p95`` for the compared sizes (the child of ``compare_previous``)."""
    from PySide6 import QtWidgets

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    for size in COMPARED:
        window = open_window(app, *size)
        times, _ = bench_edit(app, window, window.models["embeddings"], size, repeats)
        print(*size, statistics.median(times), percentile(times, 95), flush=True)
        close(app, window)


def compare_previous(revision, repeats, rounds=3):
    """The compared cell edits on this code and on ``revision`` (extracted with git), alternated in
    child processes (``rounds`` each) so that both see the same load; both medians and p95s printed,
    and their ratios. Of each side's rounds the quietest figure is kept: load from others on a
    shared machine only ever adds time."""
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    folder = Path(tempfile.mkdtemp(prefix="attn-previous-"))
    try:
        archive = subprocess.run(["git", "-C", str(root), "archive", revision, "attn_studio", "resources"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"\nprevious release {revision}: not measured ({exc})")
        return
    figures = {"now": {}, "previous": {}}  # side -> size -> [(median, p95) per round]
    try:
        for _ in range(rounds):
            for name, path in (("previous", folder), ("now", root)):
                env = {**os.environ, "PYTHONPATH": str(path), "QT_QPA_PLATFORM": "offscreen"}
                out = subprocess.run([sys.executable, __file__, "--edits-only", "--repeats", str(repeats)],
                                     capture_output=True, text=True, env=env, check=True, cwd=str(path))
                for line in out.stdout.splitlines():
                    t, d_model, heads, *times = line.split()
                    # A release before p95 was printed gives the median only.
                    median, p95 = (float(times[0]), float(times[-1]))
                    figures[name].setdefault((int(t), int(d_model), int(heads)), []).append((median, p95))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\ncell edit -> repainted, ms, this code against the previous release ({revision}), same run "
          f"({rounds} alternated rounds of {repeats} edits, the quietest round's figure of each side):")
    print(f"{'T':>5} {'d_model':>8} {'heads':>6} {'':>6} {'now':>8} {'previous':>9} {'now/previous':>13}")
    for size in COMPARED:
        for i, name in enumerate(("median", "p95")):
            now = min(f[i] for f in figures["now"][size])
            previous = min(f[i] for f in figures["previous"][size])
            print(f"{size[0]:>5} {size[1]:>8} {size[2]:>6} {name:>6} {now * 1e3:>8.1f} {previous * 1e3:>9.1f} "
                  f"{now / previous:>13.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--cold-starts", type=int, default=5)
    parser.add_argument("--profile", metavar="T,D_MODEL,HEADS",
                        help="profile cell edits at this size instead of the benchmark, and print the costliest calls")
    parser.add_argument("--previous", default=PREVIOUS, metavar="REV",
                        help="git revision to compare the cell edits with (empty: none)")
    parser.add_argument("--compare-only", action="store_true",
                        help="only the cell edits against the previous release (--previous)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternated rounds of the comparison with the previous release")
    parser.add_argument("--edits-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.edits_only:
        edit_medians(args.repeats)
        return
    if args.compare_only:
        print("load average (1, 5, 15 min) at the start: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
        compare_previous(args.previous or PREVIOUS, args.repeats, args.rounds)
        return
    if args.profile:
        profile_edits(tuple(int(n) for n in args.profile.split(",")), args.repeats)
        return

    from PySide6 import QtWidgets

    from attn_studio.gui import MainWindow
    from attn_studio.studio import Studio
    from attn_studio.state import StudioState

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    # Figures on a shared machine move with its load: say what it was.
    print("load average (1, 5, 15 min) at the start: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{'T':>5} {'d_model':>8} {'heads':>6} {'median ms':>10} {'p95 ms':>8}   edit -> repainted")
    for t, d_model, heads in SIZES:
        window = open_window(app, t, d_model, heads)
        model = window.models["embeddings"]
        repeats = args.repeats if t <= 64 else max(10, args.repeats // 2)
        times, paints = bench_edit(app, window, model, (t, d_model, heads), repeats)
        print(f"{t:>5} {d_model:>8} {heads:>6} {statistics.median(times) * 1e3:>10.1f} "
              f"{percentile(times, 95) * 1e3:>8.1f}   {paints:.0f} widgets painted per edit")
        close(app, window)

    if args.previous:
        compare_previous(args.previous, args.repeats, args.rounds)

    # A pasted paragraph: paste -> repainted, then a cell edit at that size.
    words = ("the lecturer pasted a long paragraph about attention so that every token attends to every "
             "other one and the heatmaps must stay responsive while the room watches").split()
    print(f"\n{'tokens':>7} {'paste median s':>15} {'paste p95 s':>12} {'edit median ms':>15} {'edit p95 ms':>12}")
    for n in (600, 1000):
        text = " ".join(words[i % len(words)] for i in range(n))
        pastes, edits = [], []
        for _ in range(max(3, args.repeats // 8)):
            window = MainWindow(Studio(StudioState(sentence="A short one", d_model=8, heads=2, d_head=4)))
            window.resize(1366, 768)
            window.show()
            app.processEvents()
            edit = window.sentence_edit
            t0 = time.perf_counter()
            edit.setText(text)
            edit.textEdited.emit(text)
            app.processEvents()
            app.processEvents()
            pastes.append(time.perf_counter() - t0)
            model = window.models["embeddings"]
            for i in range(5):
                t0 = time.perf_counter()
                model.setData(model.index(i, 0), f"{0.1 * i:.1f}")
                app.processEvents()
                app.processEvents()
                edits.append(time.perf_counter() - t0)
            close(app, window)
        print(f"{n:>7} {statistics.median(pastes):>15.2f} {percentile(pastes, 95):>12.2f} "
              f"{statistics.median(edits) * 1e3:>15.0f} {percentile(edits, 95) * 1e3:>12.0f}")

    builds = []
    for _ in range(max(3, args.cold_starts)):
        t0 = time.perf_counter()
        window = MainWindow()
        builds.append(time.perf_counter() - t0)
        close(app, window)
    print(f"window build (MainWindow() on the default example): median {statistics.median(builds):.2f} s, "
          f"p95 {percentile(builds, 95):.2f} s ({len(builds)} builds, after the first window of this process)")

    starts = []
    for _ in range(args.cold_starts):
        out = subprocess.run([sys.executable, "-c", COLD_START], capture_output=True, text=True,
                             env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, check=True)
        starts.append(float(out.stdout.strip().splitlines()[-1]))
    print(f"cold start to a painted window: median {statistics.median(starts):.2f} s, "
          f"p95 {percentile(starts, 95):.2f} s ({len(starts)} runs)")
    print("load average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
