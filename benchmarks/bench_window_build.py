"""Benchmark: the CPU time of a new window as the GUI tests make one (built, shown, exposed, drawn).

The GUI tests build about a hundred windows, so this is most of what the suite spends outside its
own assertions. Prints median and p95 of the process's CPU time per window (the machine may be
shared: CPU time is what the suite pays whatever else runs). Runs on Qt's offscreen platform:

    python benchmarks/bench_window_build.py [--repeats N]
    python benchmarks/bench_window_build.py --profile      # where one window's time goes (cProfile)
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time

# This checkout's package, whatever else is installed.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# A fresh settings folder: the figures must not depend on a theme or zoom someone once saved.
os.environ.setdefault("ATTN_STUDIO_DATA_DIR", tempfile.mkdtemp(prefix="attn-bench-"))


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--profile", action="store_true", help="profile one window instead")
    args = parser.parse_args()

    from PySide6 import QtCore, QtTest, QtWidgets

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    from attn_studio.gui.window import MainWindow

    print(f"attn_studio from {os.path.dirname(sys.modules['attn_studio'].__file__)}")

    def build():
        # As tests/gui/conftest.py's ``window`` fixture: built, shown, exposed, settled.
        window = MainWindow()
        window.show()
        QtTest.QTest.qWaitForWindowExposed(window)
        window.bridge.flush()
        window.finish_drawing()
        app.processEvents()
        return window

    def close(window):
        window.studio.mark_saved()
        window.close()
        window.deleteLater()
        app.processEvents()
        QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)

    close(build())  # the first window of a process also loads fonts, icons and code
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        window = build()
        profile.disable()
        close(window)
        stats = pstats.Stats(profile)
        stats.sort_stats("cumulative").print_stats(40)
        stats.sort_stats("tottime").print_stats(25)
        return
    cpu = []
    for _ in range(args.repeats):
        start = time.process_time()
        window = build()
        cpu.append(time.process_time() - start)
        close(window)
    print(f"window built, shown and drawn: CPU median {statistics.median(cpu) * 1000:.0f} ms, "
          f"p95 {percentile(cpu, 95) * 1000:.0f} ms ({len(cpu)} windows, after the first of this process)")


if __name__ == "__main__":
    main()
