"""Hand-outs of a lecture: each scene's figure, laid out for the page, in one PDF or one file each.

Each scene is shown in a window (its model, its view, what it selects) and its view's page figure
is drawn (:mod:`..files.figures`): the numbers on the page are the engine's for that scene. A scene
whose trained model is missing on this machine becomes a page naming the model.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from PySide6 import QtWidgets

from ...matrices import ExportError
from ...safe_files import write_atomic
from ...scenes import Lecture, Scene
from ..files.figures import done_with, export_figure, find_panel, show_panel
from ..files.pages import pdf_pages_bytes
from ..widgets import settle
from .scene_show import show_scene

# The page figure of each view a scene can show (the export's panel names).
VIEW_PANELS = {
    "Attention": "heatmaps", "Heads": "heatmaps", "Step by step": "steps", "Heads → output": "outputs",
    "Compare": "compare", "Geometry": "geometry", "Positions": "positions", "Model view": "model",
    "Drift": "drift", "Meaning in context": "meaning", "Why divide by √d_k": "variance",
    "Training: Why √dₖ": "training:scaling",
    "Training: Why attention": "training:seq2seq", "Training: Why two layers": "training:induction",
}
WAIT_FOR_MODEL_S = 120.0


def scene_panel(window, scene: Scene):
    """Show ``scene`` in ``window`` and return its view's page figure, or None when its model is missing
    (the window then says which)."""
    shown: list = []
    show_scene(window, scene, on_shown=shown.append)
    deadline = time.monotonic() + WAIT_FOR_MODEL_S
    while not shown and time.monotonic() < deadline:  # a trained model opens off the GUI thread
        QtWidgets.QApplication.processEvents()
        time.sleep(0.005)
    if not shown or not shown[0]:
        return None
    settle(window)
    name = VIEW_PANELS[scene.view]
    if name == "variance" and scene.selection.get("page", 0) == 1:
        name = "saturation"  # the stage's second page of the √d_k panel
    panel = find_panel(window, name)
    show_panel(panel)
    settle(window)
    return find_panel(window, name)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "scene"


def write_handout(window, lecture: Lecture, out, fmt: str = "png", progress=None) -> list[Path]:
    """Write the hand-out of ``lecture``: ``out`` ending in .pdf is one PDF, a page a scene; else ``out``
    is a folder and gets one numbered ``fmt`` (png or svg) file a scene. ``progress(done, total)``
    after each scene; returning False from it cancels (nothing more is written). The files written."""
    out = Path(out)
    total = len(lecture.scenes)
    if not total:
        raise ExportError("the lecture has no scenes")
    written: list[Path] = []
    as_pdf = out.suffix.lower() == ".pdf"
    if not as_pdf:
        out.mkdir(parents=True, exist_ok=True)
    cancelled = []

    def pages():
        for n, scene in enumerate(lecture.scenes, start=1):
            panel = scene_panel(window, scene)
            title = f"{n}. {scene.title}"
            if panel is None:
                caption = f"{scene.caption} (needs {scene.model_name}, which is not on this machine)".strip()
            else:
                caption = scene.caption
            if as_pdf:
                yield panel, title, caption  # drawn before the next scene is shown
            elif panel is not None:
                path = out / f"{n:02d}-{_slug(scene.title)}.{fmt}"
                export_figure(panel, path, fmt=fmt, title=title)
                written.append(path)
            if panel is not None:
                done_with(panel)
            if progress is not None and progress(n, total) is False:
                cancelled.append(True)
                return

    if as_pdf:
        data = pdf_pages_bytes(pages(), lecture.title)
        if not cancelled:
            write_atomic(out, data)
            written.append(out)
    else:
        for _ in pages():
            pass
    return written


def handout_command(argv: list[str], prog: str, make_window) -> int:
    """``attn-studio export --lecture FILE --out handout.pdf`` (one page a scene) or ``--out DIR``
    (one numbered PNG, or SVG with ``--format svg``, a scene), drawn in ``make_window(...)`` (the
    main window class: the lecture wing does not import the window). Returns the exit code."""
    import argparse
    import sys

    from PySide6 import QtCore

    from ...scenes import LectureError, read_lecture
    from ..qt.worker import collect_on_gui_thread

    def fail(message: str, code: int = 2) -> int:
        print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
        return code

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise ValueError(message)

    parser = Parser(prog=f"{prog} export --lecture", description="A lecture's hand-out: each scene's figure.")
    parser.add_argument("--lecture", required=True, metavar="FILE", help="a lecture file (.attn-lecture.json)")
    parser.add_argument("--out", required=True, metavar="FILE|DIR", help="handout.pdf, or a folder")
    parser.add_argument("--format", choices=("png", "svg"), default="png", help="the files in a folder (png)")
    try:
        args = parser.parse_args(argv)
    except ValueError as exc:
        return fail(exc)
    try:
        lecture = read_lecture(args.lecture)
    except LectureError as exc:
        return fail(exc)
    out = Path(args.out)
    if out.suffix.lower() not in ("", ".pdf") and not out.is_dir():
        return fail(f"--out must be a .pdf file or a folder, got {out.name}")
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([prog])
    collector = collect_on_gui_thread(app)  # cycles freed on the GUI thread only, as in the window
    window = make_window(restore_settings=False, recovery=False)
    try:
        window.fit_to_screen(QtCore.QRect(0, 0, 1600, 900))
        window.resize(1600, 900)
        window.show()
        written = write_handout(window, lecture, out, fmt=args.format,
                                progress=lambda done, total: print(f"{prog}: scene {done} of {total}",
                                                                   file=sys.stderr))
        print(f"{prog}: wrote {', '.join(str(p) for p in written) if len(written) < 4 else f'{len(written)} files in {out}'}")
        return 0 if written else 1
    except (ExportError, OSError) as exc:
        return fail(exc, code=1)
    finally:
        # Closed as a person closes it: a training scene started the lab's runners, whose threads
        # the application would otherwise wait for at exit, forever (the command never returned).
        window.studio.mark_saved()
        window.close()
        window.deleteLater()
        app.processEvents()
        QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
        if collector is not None:
            collector.stop()
