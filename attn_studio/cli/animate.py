"""``attn-studio export --animate NAME=FROM:TO[:FRAMES] ... --out FILE.gif|.mp4|.webm|.png``: a panel's
figure as an animation (or its frames as numbered PNG or SVG files in a folder), drawn without a display.

Everything that can be refused is refused before a frame is drawn, in one line with exit code 2:
the sweep's syntax and the control's limits, the frame rate and hold, the frame count, the target.
Then the window is opened offscreen, the sweep is checked against the model shown, the frames are
drawn in two passes (levels and sizes first, see ``gui/files/sweep_frames.py``) and written
atomically: an error or Ctrl+C leaves nothing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from .basics import PROG, UsageError, fail

DEFAULT_FPS = 5.0
DEFAULT_HOLD = 1.0
SIZE_LIMITS = (16, 3840)
_SIZE = re.compile(r"^\s*(\d+)\s*[x×X]\s*(\d+)\s*$")


def _frames_folder_format(args) -> str | None:
    """"png" / "svg" when ``--out`` is a folder of numbered frames, None for an animation file."""
    from ..animation import ANIMATION_SUFFIXES

    out = Path(args.out)
    fmt = args.fmt
    if out.suffix.lower() in ANIMATION_SUFFIXES and not out.is_dir():
        if fmt is not None and not (fmt == "png" and out.suffix.lower() == ".png"):
            raise UsageError(f"--format {fmt} writes numbered frames into a folder; {out.name} is an animation "
                             f"file: leave out --format, or give a folder to --out")
        return None
    if fmt is None:
        raise UsageError(f"--animate writes .gif, .mp4, .webm or .png (APNG), or numbered frames into a folder "
                         f"with --format png or svg; {out.name or out} is neither")
    if fmt not in ("png", "svg"):
        raise UsageError(f"--animate writes frames as png or svg, not {fmt}")
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is a file; numbered frames go into a folder")
    return fmt


def _size(text):
    if text is None:
        return None
    m = _SIZE.match(str(text))
    if not m:
        raise UsageError(f"--size is WIDTHxHEIGHT in pixels, e.g. 1280x720, not {text!r}")
    w, h = int(m.group(1)), int(m.group(2))
    lo, hi = SIZE_LIMITS
    if not (lo <= w <= hi and lo <= h <= hi):
        raise UsageError(f"--size: each side is {lo} to {hi} pixels, not {w}x{h}")
    return w, h


def _check_before_qt(args):
    """Everything that can be refused without the model; returns (sweeps, frames, folder format, size)."""
    from ..animation import AnimationError, check_fps, check_frame_count, check_hold, check_target
    from ..gui.files.figures import ExportError, check_panel_name
    from ..sweeps import SweepError, frames_of, parse

    try:
        sweeps = [parse(text) for text in args.animate]
        frames = frames_of(sweeps)
        check_frame_count(len(frames))
        args.fps = check_fps(DEFAULT_FPS if args.fps is None else args.fps)
        args.hold = check_hold(DEFAULT_HOLD if args.hold is None else args.hold)
        folder_fmt = _frames_folder_format(args)
        if folder_fmt is None:
            check_target(args.out)
            suffix = Path(args.out).suffix.lower()
            if args.loop is not None and suffix in (".mp4", ".webm"):
                raise UsageError(f"--{'' if args.loop else 'no-'}loop is for a GIF or APNG; an {suffix[1:].upper()} "
                                 "loops (or not) in its player")
        elif args.loop is not None:
            raise UsageError("--loop is for a GIF or APNG, not numbered frames")
        else:
            _check_folder_target(args.out)
        size = _size(args.size)
        if args.dpi is not None:
            raise UsageError("--dpi sizes a still PNG; an animation's frames are sized by --scale or --size")
        if args.scale is not None and size is not None:
            raise UsageError("--scale and --size both size the frames; give one")
        if args.scale is None:
            args.scale = 1.0
        if not 0.25 <= args.scale <= 4:
            raise UsageError(f"--scale of an animation is 0.25 to 4, not {args.scale:g}")
        panel = check_panel_name(args.panel)
    except (SweepError, AnimationError, ExportError) as exc:
        raise UsageError(str(exc)) from None
    if panel == "stage":
        raise UsageError("--animate draws a page figure; the stage is a screen (draw it with --panel stage, one "
                         "page at a time)")
    if args.page != 1:
        raise UsageError("--page chooses a page of --panel stage; an animation draws a page figure")
    if args.title is not None:
        raise UsageError("an animation's title states each frame's value; --title cannot replace it")
    names = [s.name for s in sweeps]
    if "steps" in names and not panel.startswith("training:") and not (args.view or "").lower().startswith("training"):
        raise UsageError("--animate steps=FROM:TO plays a training run: give --panel training:NAME (or "
                         "--view \"Training: …\")")
    if panel.startswith("training:") and "steps" not in names:
        raise UsageError(f"the {panel} panel shows a training run: animate it with --animate steps=0:N")
    if args.steps:
        raise UsageError("--steps trains before a still figure; an animation of a run is --animate steps=0:N")
    return sweeps, frames, folder_fmt, size


def _check_folder_target(out) -> None:
    import os

    out = Path(out)
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"cannot write {out}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (out.is_dir() and not os.access(out, os.W_OK | os.X_OK)):
        raise UsageError(f"cannot write into {out}: it is not writable")


def _write(drawer, drawn, args, folder_fmt: str | None, total: int) -> int:
    """Write ``drawer``'s frames to ``args.out``: a video (``folder_fmt`` None) at ``args.fps``, held and
    looped as asked, or a folder of PNG or SVG frames; ``drawn(i)`` follows each frame. Returns the count."""
    from ..animation import write_animation, write_frames

    if folder_fmt is None:
        return write_animation(drawer.images(progress=drawn), args.out, fps=args.fps, hold=args.hold,
                               loop=True if args.loop is None else args.loop, total=total)
    source = drawer.svgs(progress=drawn) if folder_fmt == "svg" else drawer.images(progress=drawn)
    return len(write_frames(source, args.out, folder_fmt, total=total))


def _progress_bar(total: int, what: str):
    """A tqdm bar on the terminal (as ``train`` has); a function ``(i, total)`` that moves it, and the bar."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc=what, unit="frame", file=sys.stderr, leave=False,
               disable=None)  # no bar when stderr is not a terminal (a script, a test)
    state = {"done": 0}

    def advance(i, _total=None):
        bar.update(i - state["done"])
        state["done"] = i

    return advance, bar


def animate_main(args) -> int:
    """``export --animate``: check, draw the frames offscreen, write them; returns the exit code."""
    from .export import _check_export_args, _trained_source

    try:
        sweeps, frames, folder_fmt, size = _check_before_qt(args)
        trained = _trained_source(args)
        # The still export's checks of the source and panel (the output is checked above instead).
        out, fmt, scale = args.out, args.fmt, args.scale
        args.out, args.fmt, args.scale = "frame.png", None, None  # a still's scale is 1 to 8; a frame's 0.25 to 4
        # A training panel's still needs --steps; its animation plays the run by --animate steps=FROM:TO.
        args.steps = 1 if any(text.strip().lower().startswith("steps") for text in args.animate) else 0
        try:
            state, preset, panel_name, _ = _check_export_args(args, trained)
        finally:
            args.out, args.fmt, args.scale, args.steps = out, fmt, scale, 0
    except UsageError as exc:
        return fail(exc)
    except ValueError as exc:  # the text refused by the model (too long for its positions...)
        return fail(exc)
    from .export import headless_window

    try:
        with headless_window(args, state, preset, trained) as window:
            return _draw_and_write(window, args, sweeps, frames, folder_fmt, size, panel_name, trained is not None)
    except KeyboardInterrupt:  # Ctrl+C: the writer has removed its temporary file
        return fail("stopped: nothing was written", code=130)


def _draw_and_write(window, args, sweeps, frames, folder_fmt, size, panel_name, is_trained) -> int:
    from ..animation import AnimationError
    from ..gui.files.figures import ExportError, find_panel, setting_title, show_panel
    from ..gui.files.sweep_frames import SweepFrames, level_views
    from ..gui.widgets import settle
    from ..limits import StateError
    from ..sweeps import SweepError, apply, check

    studio = window.studio if not is_trained else window.trained.room.studio
    names = [s.name for s in sweeps]
    pipeline = getattr(window, "pipeline_view", None)
    training_view = None
    try:
        if "step" in names:
            if pipeline is None:
                raise SweepError("--animate step: this window has no Step by step view")
            window.render_view(pipeline)
        check(sweeps, studio, trained=is_trained, steps=len(pipeline.steps) if "step" in names else None)
        if "steps" in names:
            training_view = _training_view(window, args, panel_name)
            return _animate_training(window, args, sweeps[0], frames, folder_fmt, size, panel_name, training_view)
    except (SweepError, ExportError) as exc:
        return fail(exc)

    applied: dict = {}

    def set_frame(i: int) -> None:
        for sweep, value in zip(sweeps, frames[i]):
            key = (sweep.name, sweep.matrix, sweep.index)
            if applied.get(key) == value:
                continue  # nested sweeps: only what changes is set again
            if sweep.name != "step":
                apply(studio, sweep, value, trained=is_trained)
            applied[key] = value
        if "step" in names:
            settle(window)
            window.render_view(pipeline)
            pipeline.set_current_step(frames[i][names.index("step")] - 1)

    def title_of(i: int) -> str:
        labels = [_label(sweep, value, studio, pipeline) for sweep, value in zip(sweeps, frames[i])]
        try:
            setting = setting_title(studio.state, panel_name)
        except AttributeError:  # a panel of a trained model that states no setting of the toy's kind
            setting = studio.state.sentence
        return " · ".join(labels) + "\n" + setting

    def make_panel():
        panel = find_panel(window, panel_name)
        if panel_name == "window" or panel_name in ("model", "drift", "meaning"):
            show_panel(panel)
        return panel

    drawer = SweepFrames(window, len(frames), set_frame, make_panel, title_of,
                         views=level_views(window, panel_name), scale=args.scale, size=size,
                         reshapes="heads" in names or panel_name == "window", quiet=panel_name != "window",
                         refill=_model_refill(window, studio) if is_trained and panel_name == "model" else None)
    advance, bar = _progress_bar(2 * len(frames), "frames")
    try:
        try:
            drawer.prepare(progress=advance)
        except (StateError, ValueError) as exc:  # a value the model refuses (the cost budget...)
            return fail(exc)
        offset = len(frames)

        def drawn(i, _total=None):
            advance(offset + i)

        out = args.out
        try:
            count = _write(drawer, drawn, args, folder_fmt, len(frames))
        except (AnimationError, ExportError, StateError) as exc:
            return fail(exc)
        except OSError as exc:
            return fail(f"cannot write {out}: {exc.strerror or exc}", code=1)
    finally:
        bar.close()
    width, height = drawer.pixel_size()
    print(f"{PROG}: wrote {out} ({count} frames, {width}×{height}"
          + (f", {args.fps:g} fps" if folder_fmt is None else "") + ")")
    return 0


def _model_refill(window, studio):
    """A trained model's page refilled in place for the next frame: each head's weights (and the mean or
    rollout) of the layer shown now, as ``files.trained_figures.model_figure`` draws them, put into the
    figure built for the first frame (building the page again cost about a second a frame)."""
    import numpy as np

    from ..formatting import format_number

    def refill(panel) -> bool:
        room = window.trained.room
        room.render_shown(force=True)
        view, layer = room.model_view, studio.state.layer_index
        data = view.data
        if data is None:
            return False
        norm = view.norm_check.isChecked() and data.run is not None
        attentions = view.norms() if norm else np.asarray(data.attentions)
        top = (float(attentions.max()) or 1.0) if norm else 1.0
        heads = attentions.shape[1]
        matrices, titles = [], []
        for h in range(heads):
            scale = float(data.head_scale[layer, h])
            mark = " · silenced" if scale == 0 else (f" · ×{format_number(scale, 2)}" if scale != 1 else "")
            matrices.append(attentions[layer, h])
            titles.append(f"head {h + 1}{mark}")
        matrices.append(np.asarray(data.summary[layer]) * top)
        titles.append(f"rollout to layer {layer + 1}" if data.rollout else "mean over heads")
        heatmaps = panel.widget.heatmaps
        if len(heatmaps) != len(matrices) or any(hm.data.values.shape != m.shape for hm, m in zip(heatmaps, matrices)):
            return False
        for hm, matrix, title in zip(heatmaps, matrices, titles):
            d = hm.data
            hm.set_title(title)
            hm.set_data(np.asarray(matrix, np.float64), masked=d.masked, row_labels=list(d.row_labels),
                        col_labels=list(d.col_labels), levels=(0.0, top), selected_row=d.selected_row)
        return True

    return refill


def _label(sweep, value, studio, pipeline) -> str:
    if sweep.name == "query":
        tokens = studio.state.query_tokens
        return f"query {value}: “{tokens[value - 1]}”" if value <= len(tokens) else f"query {value}"
    if sweep.name == "step" and pipeline is not None:
        steps = pipeline.steps
        if 1 <= value <= len(steps):
            return f"step {value} of {len(steps)}: {steps[value - 1].title}"
    if sweep.name == "layer":
        return f"layer {value} of {studio.model.layers}"
    return sweep.label(value)


def _training_view(window, args, panel_name):
    from ..gui.window import picture

    if panel_name.startswith("training:"):
        return picture.show_view(window, picture.training_view(window, panel_name))
    return picture.show_view(window, args.view)


def _animate_training(window, args, sweep, frames, folder_fmt, size, panel_name, view) -> int:
    """``--animate steps=FROM:TO`` on a training panel: a copy of the panel's run (its settings, step 0)
    played forward headless, its page figure at each step asked (``gui/training/run_frames.py``)."""
    import copy

    from ..animation import AnimationError
    from ..gui.files.figures import ExportError
    from ..gui.training.run_frames import RunFrames, play_run
    from ..training.experiment import TrainingError

    panel = window.present.training_panel(view)
    if panel is None:
        return fail(f"--animate steps plays a training panel's run; {view!r} is not one")
    panel.wait_built()
    key = next((k for k, p in window.training.tab.panels.items() if p is panel), None)
    exp = copy.deepcopy(panel.runner.snapshot().exp)
    if key is None or exp is None:
        return fail(f"the run of {view!r} is not ready")
    steps = [int(v[0]) for v in frames]
    advance, bar = _progress_bar(steps[-1] + 2 * len(steps), "steps, then frames")
    try:
        runs = play_run(exp, steps, progress=lambda step: advance(step))
        drawer = RunFrames(key, runs, scale=args.scale, size=size)
        drawer.prepare(progress=lambda i, n: advance(steps[-1] + i))

        def drawn(i, _total=None):
            advance(steps[-1] + len(steps) + i)

        count = _write(drawer, drawn, args, folder_fmt, len(runs))
    except (AnimationError, ExportError, TrainingError) as exc:
        return fail(exc)
    except OSError as exc:
        return fail(f"cannot write {args.out}: {exc.strerror or exc}", code=1)
    finally:
        bar.close()
    print(f"{PROG}: wrote {args.out} ({count} frames, steps {steps[0]} to {steps[-1]})")
    return 0
