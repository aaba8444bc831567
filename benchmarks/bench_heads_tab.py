"""Benchmark: the Heads tab on all-MiniLM-L6-v2 (the "animal" sentence), offscreen.

- the GUI thread's work when the model changes (report card, norm attention, the tab's
  pictures redrawn: ``HeadsTab.refresh(force=True)``), median and p95 in ms;
- the gaps between ticks of a 5 ms QTimer while the importance sweep (72 ablations) runs
  in its thread: median, p95 and largest gap in ms (the window must never stall > 50 ms).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_heads_tab.py [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6 import QtCore, QtWidgets  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    from attn_studio.gui.heads import HeadsTab
    from attn_studio.pretrained import load_pretrained
    from attn_studio.trained import TrainedStudio

    studio = TrainedStudio(load_pretrained())
    tab = HeadsTab(lambda layer, head: studio.select(layer=layer, head=head))
    tab.resize(1200, 800)
    tab.show()
    tab.set_studio(studio)
    app.processEvents()
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        tab.refresh(force=True)
        tab.repaint()
        times.append((time.perf_counter() - start) * 1000)
    print(f"{platform.node()} load {os.getloadavg()[0]:.1f}")
    print(f"refresh after a change: median {np.median(times):.1f} ms, p95 {np.percentile(times, 95):.1f} ms")

    stamps = []
    timer = QtCore.QTimer()
    timer.timeout.connect(lambda: stamps.append(time.perf_counter()))
    timer.start(5)
    done = []
    tab.job.finished.connect(lambda *a: done.append(1))
    start = time.perf_counter()
    tab.run_importance()
    while not done:
        app.processEvents(QtCore.QEventLoop.WaitForMoreEvents, 50)
    timer.stop()
    gaps = np.diff(stamps) * 1000
    print(f"importance sweep: {time.perf_counter() - start:.1f} s, {len(stamps)} ticks; gaps between ticks: "
          f"median {np.median(gaps):.1f} ms, p95 {np.percentile(gaps, 95):.1f} ms, largest {gaps.max():.1f} ms")
    tab.shutdown()


if __name__ == "__main__":
    main()
