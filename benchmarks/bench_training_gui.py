"""Benchmark: does the window keep up while the training lab plays?

For each panel of the Training tab, at the speed its Speed box shows when the window opens
(or ``--speed``, 0 = as fast as it goes), a 5 ms QTimer on the GUI thread measures how late
each tick comes (the GUI thread's stalls: drawing, painting, the interpreter lock held by the
worker, other processes) while the worker trains for ``--seconds``, ``--repeat`` times. Prints,
per panel and run: steps taken, steps per second, whole figures drawn per second, the median,
p95 and largest gap between ticks in ms, and the largest CPU time the GUI thread spent between
two ticks (what the window's own drawing costs in one turn of the event loop, whatever the
load). Target: no gap over 50 ms; at most ~12 whole figures a second.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_training_gui.py [--seconds 10] [--repeat 1]
        [--speed S] [--drop]

``--drop``: then press Play on "Why two layers" (seed 0, its own speed) and wait for the mark of the
repeat's loss dropping: prints the seconds from Play to the mark being drawn (target: about half a
minute), the step it marks, and the gaps meanwhile.

State the machine's load (``uptime``) with the figures: on a shared 2-core machine the
worker and the GUI thread compete with everything else; the quietest run is the one to quote.
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
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--speed", type=int, default=None, help="steps per second (0: as fast as it goes); "
                                                                "default: each panel's own")
    parser.add_argument("--drop", action="store_true", help="time Play to the induction head's drop mark")
    args = parser.parse_args()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    from attn_studio.gui.training.runner import SPEEDS
    from attn_studio.gui.training.tab import TrainingTab

    tab = TrainingTab()
    tab.resize(1280, 680)
    tab.show()
    print(f"load: {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} cores; {args.seconds:g} s per panel")
    for name in ("idle", "scaling", "seq2seq", "induction") * args.repeat:
        panel = tab.show_panel(name if name != "idle" else "scaling")
        panel.reset()
        panel.runner.wait_idle()
        if args.speed is not None:
            panel.speed_combo.setCurrentIndex(SPEEDS.index(args.speed))
        settle = time.perf_counter() + 0.5  # the panel's first paint after it is shown: not a stall of playing
        while time.perf_counter() < settle:
            app.processEvents(QtCore.QEventLoop.AllEvents, 5)
        stamps: list[tuple[float, float]] = []
        timer = QtCore.QTimer()
        timer.setTimerType(QtCore.Qt.PreciseTimer)
        timer.timeout.connect(lambda: stamps.append((time.perf_counter(), time.thread_time())))
        timer.start(5)
        draws, steps = panel.draw_count, panel.runner.snapshot().steps
        if name != "idle":  # "idle": the same timer with nothing training (the machine's own gaps)
            panel.play()
        end = time.perf_counter() + args.seconds
        while time.perf_counter() < end:
            app.processEvents(QtCore.QEventLoop.AllEvents, 5)
        panel.pause()
        timer.stop()
        panel.runner.wait_idle()
        wall, cpu = (np.diff(np.array(stamps), axis=0) * 1000.0).T
        taken = panel.runner.snapshot().steps - steps
        speed = f"{panel.speed:g}/s" if panel.speed else "fast"
        print(f"{name:10s} at {speed:5s} steps {taken:5d} ({taken / args.seconds:6.1f}/s)  "
              f"figures {(panel.draw_count - draws) / args.seconds:5.1f}/s  "
              f"tick gap ms: median {np.median(wall):5.1f}  p95 {np.percentile(wall, 95):5.1f}  max {wall.max():6.1f}  "
              f"GUI cpu in a gap: max {cpu.max():5.1f}  (load {os.getloadavg()[0]:.1f})")
    if args.drop:
        time_the_drop(app, tab, args.speed)
    tab.close_runs()


def time_the_drop(app, tab, speed: int | None) -> None:
    """Play "Why two layers" from a fresh run of seed 0 until the drop is marked on the curves."""
    from attn_studio.gui.training.runner import SPEEDS

    panel = tab.show_panel("induction")
    panel.apply_settings({"seed": 0, "speed": panel.default_speed if speed is None else speed})
    if speed is not None:
        panel.speed_combo.setCurrentIndex(SPEEDS.index(speed))
    panel.runner.wait_idle()
    stamps: list[float] = []
    timer = QtCore.QTimer()
    timer.setTimerType(QtCore.Qt.PreciseTimer)
    timer.timeout.connect(lambda: stamps.append(time.perf_counter()))
    timer.start(5)
    start = time.perf_counter()
    panel.play()
    while panel.drop is None and time.perf_counter() - start < 180.0:
        app.processEvents(QtCore.QEventLoop.AllEvents, 5)
    seen = time.perf_counter() - start
    steps = panel.runner.snapshot().steps
    panel.pause()
    timer.stop()
    panel.runner.wait_idle()
    gaps = np.diff(stamps) * 1000.0
    speed = f"{panel.speed:g} steps/s" if panel.speed else "as fast as it goes"
    mark = f"at step {panel.drop:,}" if panel.drop is not None else "not within 180 s"
    print(f"why two layers at {speed}: the drop marked {mark}, {seen:.1f} s after Play ({steps:,} steps taken, "
          f"{steps / seen:.1f}/s); tick gap ms: median {np.median(gaps):.1f}  p95 {np.percentile(gaps, 95):.1f}  "
          f"max {gaps.max():.1f}  (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
