"""Benchmark: View -> Theme -> Dark (and back to Light) once many heatmaps exist.

The window shows a 16-head toy model on every tab of views, then every panel of the Training tab
(the heatmaps of "Why two layers" and "Why attention" come with them), then the Attention tab
again; each theme switch is then timed from the menu action to the window repainted. Prints
the number of heatmaps and the median and largest time per switch.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_theme.py [--repeats N]

Target: a switch well under 100 ms more than the window's restyle itself (the colour maps of the
dark theme are built once per map and theme, not once per heatmap and switch).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("ATTN_STUDIO_DATA_DIR", tempfile.mkdtemp(prefix="attn-bench-"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="where the first switch to dark goes (cProfile)")
    args = parser.parse_args()
    from PySide6 import QtWidgets

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    from attn_studio.gui import MainWindow
    from attn_studio.gui.views import token_axis

    w = MainWindow()
    w.resize(1280, 720)
    w.show()
    app.processEvents()
    w.studio.update(projections=True, d_model=64, heads=16)
    w.bridge.flush()
    w.finish_drawing()
    app.processEvents()
    for index in range(w.view_tabs.count()):  # every toy view drawn once (Compare, Heads → output...)
        if w.view_tabs.isTabVisible(index):
            w.view_tabs.setCurrentIndex(index)
            w.finish_drawing()
            app.processEvents()
    for name in ("scaling", "seq2seq", "induction"):
        w.training.open(name)
        for _ in range(20):
            app.processEvents()
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    app.processEvents()
    count = len(token_axis._heatmaps)
    actions = {a.data(): a for a in w.lecture.theme_actions.actions()}
    times = {"dark": [], "light": []}
    if args.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.runcall(lambda: (actions["dark"].trigger(), w.finish_drawing(), app.processEvents(), w.repaint()))
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        actions["light"].trigger()
        app.processEvents()
        return
    for _ in range(args.repeats):
        for theme in ("dark", "light"):
            start = time.perf_counter()
            actions[theme].trigger()
            w.finish_drawing()
            app.processEvents()
            w.repaint()
            times[theme].append((time.perf_counter() - start) * 1000.0)
    print(f"load: {os.getloadavg()[0]:.1f} (1 min); heatmaps: {count}; {args.repeats} switches each way")
    for theme, values in times.items():
        print(f"to {theme:5s}: median {statistics.median(values):6.1f} ms   max {max(values):6.1f} ms   "
              f"first {values[0]:6.1f} ms")
    w.studio.mark_saved()  # a measurement, not work to keep: closing asks nothing
    w.close()


if __name__ == "__main__":
    main()
