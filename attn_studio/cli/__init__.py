"""``attn-studio``: open the window (optionally on a preset or a session file),
or ``attn-studio export ...``: write a figure without a display, or ``attn-studio train ...``:
train an experiment of the training lab and write its curves.

Examples::

    attn-studio                              # the window, on the first example
    attn-studio --preset bank                # the window, on an example
    attn-studio lecture3.attn.json           # the window, on a saved session
    attn-studio export --preset animal --panel heatmaps --out fig.png --dpi 300
    attn-studio export --session s.attn.json --panel variance --out var.svg
    attn-studio export --model all-MiniLM-L6-v2 --text "The animal didn't cross the street because it was too tired." \
        --layer 3 --head 2 --panel model --out model.png
    attn-studio export --model all-MiniLM-L6-v2 --text "..." --layer 3 --head 2 --format csv --out weights.csv
    attn-studio export --model all-MiniLM-L6-v2 --text "I sat on the bank of the river." \
        --second "I deposited money at the bank." --word bank --panel meaning --out bank.png
    attn-studio export --model all-MiniLM-L6-v2 --text "The animal didn't cross the street because it was too tired." \
        --silence 4.2 --scale-head 6.12=0.5 --query it --panel steps --out steps.png
    attn-studio export --session trained.attn.json --panel drift --out drift.png   # a saved trained model's edits
    attn-studio train scaling --d-k 64 --seed 0 --steps 1000 --out runs/scaling   # the training lab
    attn-studio heads --model all-MiniLM-L6-v2 --text "The animal didn't cross the street because it was too tired." \
        --find it animal --importance --out heads.csv
"""


from __future__ import annotations

import os

# One BLAS thread: on a 2-core laptop a second OpenBLAS thread fights the GUI thread and the
# model worker for the cores (a MiniLM pass measured 20x slower). Set before NumPy is first
# imported, which is when OpenBLAS reads it; a value the person set wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402


from .. import __version__  # noqa: E402
from .basics import PROG, Parser, UsageError, fail, quiet_qt  # noqa: E402
from .export import export_main  # noqa: E402
from .heads import heads_main  # noqa: E402

__all__ = ["main", "export_main", "heads_main"]


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Attention Studio: a live playground for the attention mechanism.",
        epilog=f"Figures without a window: {PROG} export --help; the training lab: {PROG} train --help; every head of a trained model: {PROG} heads --help",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--preset", default=None, help="open on this example (journey, bank, animal, money-bank-2d)")
    parser.add_argument("file", nargs="?", help="a session file (.attn.json) to open")
    return parser



def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``attn-studio`` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "export" and "--lecture" in argv:  # a lecture's hand-out: one page a scene
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        quiet_qt()
        from ..gui import MainWindow
        from ..gui.lecture.lecture_video import is_video, lecture_video_command
        if is_video(argv[1:]):  # the lecture as a video: a page a scene, each held --hold seconds
            return lecture_video_command(argv[1:], PROG, MainWindow)
        from ..gui.lecture.handout import handout_command
        return handout_command(argv[1:], PROG, MainWindow)
    if argv and argv[0] == "export":
        return export_main(argv[1:])
    if argv and argv[0] == "train":  # the training lab, headless (Qt only for --png)
        from ..training.command import main as train_main
        return train_main(argv[1:], draw_figures=_draw_training_figures, animate_figures=_animate_training)
    if argv and argv[0] == "heads":
        return heads_main(argv[1:])
    try:
        _check_not_a_mistyped_command(argv)
        args = _parser().parse_args(argv)
    except UsageError as exc:
        return fail(exc)
    from ..schema import TrainedSession
    from ..session import SessionError, load_preset, read_session_file

    state = trained = training = lecture = None
    try:
        if args.file and str(args.file).endswith(".attn-lecture.json"):
            from ..scenes import LectureError, read_lecture

            try:
                lecture = read_lecture(args.file)  # every field checked before the window opens
            except LectureError as exc:
                return fail(exc)
        elif args.file:
            opened = read_session_file(args.file)
            state, training = opened.state, opened.training
            if isinstance(state, TrainedSession):  # opened once the window is up: its model loads off the GUI thread
                state, trained = None, state
        elif args.preset:
            state = load_preset(args.preset)
    except SessionError as exc:
        return fail(exc)

    from PySide6 import QtWidgets

    from ..gui import MainWindow
    from ..studio import Studio

    quiet_qt()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setApplicationName("Attention Studio")
    app.setOrganizationName("Attention Studio")
    from ..gui.qt.worker import collect_on_gui_thread

    collector = collect_on_gui_thread(app)  # cycles (closed dialogs, plots) freed on the GUI thread, never a job's
    window = (MainWindow(Studio(state), preset=None if args.file and lecture is None else args.preset)
              if state is not None else MainWindow())
    window.show()
    if lecture is not None:
        window.lecture_files.opened(lecture, args.file)  # its file kept for Save, listed in Open Recent
    elif trained is not None:
        window.trained.open_session(trained, args.file, training=training)
    else:
        window.document.apply_lab(training)  # the training lab's settings the file keeps, if any
    if state is None and lecture is None and trained is None:  # a plain start: the first one offers the tour
        from ..gui.window.help import getting_started_first_time

        getting_started_first_time(window)
    code = app.exec()
    from ..gui.qt.worker import wait_all

    wait_all()  # every job's thread ends before the application's objects go
    # Delete the window while the application still exists: left to interpreter
    # shutdown, Qt may tear the scene down after QApplication and crash.
    window.deleteLater()
    app.processEvents()
    del window
    if collector is not None:
        # The window is gone: automatic collection back on, for whoever called main() (a console, a test).
        collector.stop()
    return code


def _draw_training_figures(name, exp, folder):
    """``attn-studio train --png``: the panel's figure of the run, drawn offscreen (Qt only now, for --png)."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    quiet_qt()
    from ..gui.training.figures import write_figures_offscreen
    return write_figures_offscreen(name, exp, folder)


def _animate_training(name, exp, steps, path, fps, hold, frames, progress, scale=1.0):
    """``attn-studio train NAME --animate FILE``: the run played to ``frames`` steps, its figure at each
    written as an animation (Qt only now, offscreen); returns the frames written."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6 import QtCore, QtWidgets

    from .basics import QUIET_QT_MESSAGES

    def on_message(kind, context, message):  # the offscreen platform's notices say nothing to the user
        if kind not in (QtCore.QtMsgType.QtDebugMsg, QtCore.QtMsgType.QtInfoMsg) and \
                not any(quiet in message for quiet in QUIET_QT_MESSAGES):
            print(f"{PROG}: Qt: {message}", file=sys.stderr)

    QtCore.qInstallMessageHandler(on_message)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([PROG])  # noqa: F841 (kept alive)
    from ..animation import write_animation
    from ..gui.training.run_frames import RunFrames, frame_steps, play_run

    runs = play_run(exp, frame_steps(steps, frames), progress=progress)
    drawer = RunFrames(name, runs, scale=scale)
    drawer.prepare()
    return write_animation(drawer.images(), path, fps=fps, hold=hold, total=len(runs))


COMMANDS = ("export", "train", "heads")


def _check_not_a_mistyped_command(argv: list[str]) -> None:
    """Refuse a first word that is no file but close to a command ("exprot" → "did you mean export?").

    The window takes a session file as its one positional argument, so a misspelt command
    would otherwise be reported as a file that does not exist. A word that names an existing
    file, or looks like a path or a session file, is left to be opened.
    """
    import difflib
    from pathlib import Path

    if not argv or argv[0].startswith("-"):
        return
    word = argv[0]
    if Path(word).exists() or os.sep in word or "/" in word or "." in word:
        return
    close = difflib.get_close_matches(word.lower(), COMMANDS, n=1, cutoff=0.6)
    if close:
        raise UsageError(f"{word!r} is not a command of {PROG}; did you mean {close[0]}? "
                         f"(commands: {', '.join(COMMANDS)}; a session file to open ends in .attn.json)")


