"""Benchmark: does the window keep up while the training lab plays?

For each panel of the Training tab (as fast as it goes), a 5 ms QTimer on the GUI thread
measures how late each tick comes (the GUI thread's stalls: drawing, the interpreter lock
held by the worker), while the worker trains for ``--seconds``. Prints, per panel: steps
taken, steps per second, redraws per second, and the median, p95 and largest gap between
ticks in ms. Target: no gap over 50 ms; at most ~20 redraws a second.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_training_gui.py [--seconds 10]

State the machine's load (``uptime``) with the figures: on a shared 2-core machine the
worker and the GUI thread compete with everything else.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from PySide6 import QtCore, QtWidgets  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    from attn_studio.gui.training.tab import TrainingTab

    tab = TrainingTab()
    tab.resize(1280, 680)
    tab.show()
    print(f"load: {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} cores; {args.seconds:g} s per panel")
    for name in ("idle", "scaling", "seq2seq", "induction"):
        panel = tab.show_panel(name if name != "idle" else "scaling")
        panel.runner.wait_idle()
        app.processEvents()
        stamps: list[float] = []
        timer = QtCore.QTimer()
        timer.setTimerType(QtCore.Qt.PreciseTimer)
        timer.timeout.connect(lambda: stamps.append(time.perf_counter()))
        timer.start(5)
        draws, steps = panel.draw_count, panel.runner.snapshot().steps
        panel.runner.set_speed(0)
        if name != "idle":  # "idle": the same timer with nothing training (the machine's own gaps)
            panel.play()
        end = time.perf_counter() + args.seconds
        while time.perf_counter() < end:
            app.processEvents(QtCore.QEventLoop.AllEvents, 5)
        panel.pause()
        timer.stop()
        panel.runner.wait_idle()
        gaps = np.diff(stamps) * 1000.0
        taken = panel.runner.snapshot().steps - steps
        print(f"{name:10s} steps {taken:5d} ({taken / args.seconds:6.1f}/s)  redraws {(panel.draw_count - draws) / args.seconds:5.1f}/s  "
              f"tick gap ms: median {np.median(gaps):5.1f}  p95 {np.percentile(gaps, 95):5.1f}  max {gaps.max():6.1f}")
    tab.close_runs()


if __name__ == "__main__":
    main()
