"""A lecture as a video: ``attn-studio export --lecture FILE --out lecture.mp4``.

The scenes play in order; each scene's page is the hand-out's (its title, its figure drawn for the
page from the scene's own numbers, the caption under the figure: :mod:`.handout_figures`,
:mod:`.handout_training`), drawn on a 16:9 frame and held ``--hold`` seconds. It is a recording of
the lecture without the lecturer and without the window's chrome. Written by
:func:`attn_studio.animation.write_animation` (MP4, WebM or GIF), atomically.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ...animation import MAX_FRAMES, AnimationError, check_fps, check_hold, check_target, write_animation
from ...formatting import DEFAULT_DIGITS as FULL_DIGITS
from ...matrices import ExportError
from .handout_cli import CommandParser, close_headless, command_fail
from ...scenes import DIGITS, Lecture, LectureError, example_lecture, read_lecture
from ..files.figures import done_with
from ..files.pages import Page, PageLayout, paint_page, page_size
from ..files.sweep_frames import rgb_array
from .handout_figures import _show, figure_title, scene_figure
from .handout_training import TRAINING_VIEWS, training_figure, training_steps

DEFAULT_HOLD = 6.0  # seconds a scene's page stays: time to read its caption
DEFAULT_FPS = 2.0  # a page does not move: two frames a second keep the file small and every player happy
DEFAULT_SIZE = (1280, 720)
PAPER = "a4"  # the page's proportions (landscape); drawn centred on the 16:9 frame
VIDEO_SUFFIXES = (".mp4", ".webm", ".gif")


CAPTION_SHARE = 0.16  # of the frame's height: the caption's band under the page, as subtitles sit


def page_frame(page: Page, size: tuple[int, int]) -> np.ndarray:
    """``page`` (title and figure) drawn as large as fits above a caption band, its caption in the band
    under the figure, on a ``size`` frame (white around it), as an RGB array."""
    import dataclasses

    width, height = size
    caption = " ".join(page.caption.split())
    band = round(height * CAPTION_SHARE) if caption else 0
    paper = page_size(PAPER)
    scale = min(width / paper.width(), (height - band) / paper.height())
    image = QtGui.QImage(width, height, QtGui.QImage.Format_RGB32)
    image.fill(QtCore.Qt.white)
    painter = QtGui.QPainter(image)
    try:
        painter.setRenderHint(QtGui.QPainter.Antialiasing, True)
        painter.setRenderHint(QtGui.QPainter.TextAntialiasing, True)
        painter.save()
        painter.translate((width - paper.width() * scale) / 2, (height - band - paper.height() * scale) / 2)
        painter.scale(scale, scale)
        paint_page(painter, dataclasses.replace(page, caption=""), PAPER)
        painter.restore()
        if caption:
            font = QtGui.QFont(QtWidgets.QApplication.font())
            font.setPixelSize(max(12, round(height * 0.034)))  # ≈ 24 px at 720: read from the back row
            painter.setFont(font)
            painter.setPen(QtGui.QColor(20, 20, 20))
            rect = QtCore.QRectF(width * 0.08, height - band, width * 0.84, band - height * 0.02)
            painter.drawText(rect, int(QtCore.Qt.AlignHCenter | QtCore.Qt.AlignVCenter | QtCore.Qt.TextWordWrap),
                             caption)
    finally:
        painter.end()
    return rgb_array(image)


def scene_pages(window, lecture: Lecture, progress=None):
    """Each scene of ``lecture`` shown in ``window`` and drawn as its page (a :class:`Page`), in order.

    The page is yielded before the next scene is shown (a live figure changes with it). ``progress(n,
    message)`` as scenes are shown and training scenes trained."""
    from .handout import DEFAULT_DIGITS, missing_card

    total = len(lecture.scenes)
    mode = getattr(window, "lecture", None)
    old_digits = getattr(mode, "digits", None)
    try:
        for n, scene in enumerate(lecture.scenes, start=1):
            page = Page(title=f"{n}. {scene.title}", caption=scene.caption, number=n, total=total,
                        lecture=lecture.title)
            room = PageLayout(page, PAPER).room.size()
            if mode is not None:
                mode.set_precision(scene.selection.get("digits", DEFAULT_DIGITS))
            figure = None
            if progress is not None:
                progress(n - 1, f"scene {n} of {total}: {scene.title}"
                         + (f" (training to step {training_steps(scene):,})" if scene.view in TRAINING_VIEWS else ""))
            if not _show(window, scene):
                page.card = missing_card(scene)
            elif scene.view in TRAINING_VIEWS:
                figure = training_figure(window, scene, room, None)
            else:
                try:
                    figure = scene_figure(window, scene, room)
                except ExportError as exc:
                    page.card = f"This scene's figure cannot be drawn: {exc}"
            page.figure = figure
            if figure is not None:
                page.figure_title = figure.title or "" if scene.view in TRAINING_VIEWS else figure_title(figure)
            yield page
            if figure is not None:
                done_with(figure)
    finally:
        if mode is not None and old_digits in DIGITS:
            mode.set_precision(old_digits)
        elif mode is not None:
            mode.set_precision(FULL_DIGITS)
            mode.digits = None
            mode.set_precision(None)


def lecture_video_command(argv: list[str], prog: str, make_window) -> int:
    """``attn-studio export --lecture FILE|example --out lecture.mp4|.webm|.gif [--hold S] [--fps F]
    [--size WxH]``: the lecture as a video; refusals in one line with exit 2, nothing written."""

    fail = command_fail(prog)
    parser = CommandParser(prog=f"{prog} export --lecture", description="A lecture as a video: a page a scene.")
    parser.add_argument("--lecture", required=True, metavar="FILE",
                        help="a lecture file (.attn-lecture.json), or 'example' for the lecture that ships")
    parser.add_argument("--out", required=True, metavar="FILE", help="lecture.mp4, .webm or .gif")
    parser.add_argument("--hold", type=float, default=DEFAULT_HOLD, help=f"seconds a scene stays (default {DEFAULT_HOLD:g})")
    parser.add_argument("--fps", type=float, default=DEFAULT_FPS, help=f"frames a second (default {DEFAULT_FPS:g})")
    parser.add_argument("--size", default=f"{DEFAULT_SIZE[0]}x{DEFAULT_SIZE[1]}", metavar="WxH",
                        help="the frame in pixels (default 1280x720)")
    try:
        args = parser.parse_args(argv)
        out = check_target(args.out)
        if out.suffix.lower() not in VIDEO_SUFFIXES:
            raise AnimationError(f"a lecture video is {', '.join(VIDEO_SUFFIXES)}, not {out.suffix}")
        fps, hold = check_fps(args.fps), check_hold(args.hold)
        if hold <= 0:
            raise AnimationError("--hold: each scene stays for some seconds (above 0)")
        size = _size(args.size)
        if str(args.lecture).strip().lower() == "example":
            lecture = example_lecture()
        else:
            lecture = read_lecture(args.lecture)
        if not lecture.scenes:
            raise AnimationError("the lecture has no scenes")
        repeat = max(1, round(hold * fps))
        if repeat * len(lecture.scenes) > MAX_FRAMES:
            raise AnimationError(f"{len(lecture.scenes)} scenes × {hold:g} s × {fps:g} fps = "
                                 f"{repeat * len(lecture.scenes)} frames; an animation has at most {MAX_FRAMES} "
                                 "(lower --fps or --hold)")
    except (ValueError, LectureError) as exc:
        return fail(exc)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([prog])
    from ..qt.worker import collect_on_gui_thread

    collector = collect_on_gui_thread(app)
    window = make_window(restore_settings=False, recovery=False)

    def told(n, message):
        print(f"{prog}: {message}", file=sys.stderr, flush=True)

    def frames():
        for page in scene_pages(window, lecture, told):
            frame = page_frame(page, size)
            for _ in range(repeat):  # the scene held: the same frame, which a video stores almost free
                yield frame

    try:
        window.fit_to_screen(QtCore.QRect(0, 0, 1600, 900))
        window.resize(1600, 900)
        window.show()
        count = write_animation(frames(), out, fps=fps, total=repeat * len(lecture.scenes))
    except (ExportError, AnimationError) as exc:
        return fail(exc)
    except OSError as exc:
        return fail(f"cannot write {out}: {exc.strerror or exc}", code=1)
    finally:
        close_headless(app, window, collector)
    print(f"{prog}: wrote {out} ({len(lecture.scenes)} scenes, {count} frames, {size[0]}×{size[1]}, "
          f"{math.ceil(count / fps)} s)")
    return 0


def _size(text) -> tuple[int, int]:
    parts = str(text).lower().replace("×", "x").split("x")
    try:
        w, h = (int(p) for p in parts)
    except ValueError:
        raise AnimationError(f"--size is WIDTHxHEIGHT in pixels, e.g. 1280x720, not {text!r}") from None
    if not (16 <= w <= 3840 and 16 <= h <= 3840):
        raise AnimationError(f"--size: each side is 16 to 3840 pixels, not {w}x{h}")
    return w, h


def is_video(argv: list[str]) -> bool:
    """True when an ``export --lecture`` command line asks for a video (its --out ends .mp4/.webm/.gif)."""
    for i, word in enumerate(argv):
        value = argv[i + 1] if word == "--out" and i + 1 < len(argv) else word[6:] if word.startswith("--out=") else None
        if value is not None:
            return Path(value).suffix.lower() in VIDEO_SUFFIXES
    return False
