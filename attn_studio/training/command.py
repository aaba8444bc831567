"""``attn-studio train NAME``: train an experiment of the training lab without a window.

    attn-studio train scaling --d-k 64 --seed 0 --steps 1000 --out runs/scaling
    attn-studio train seq2seq --out runs/seq2seq
    attn-studio train induction --steps 1800 --save models/two-layers

    attn-studio train induction --steps 1800 --ablate --out runs/induction


A progress bar on the terminal; the run's tables (``history.csv``: one row per step, a column per
arm and metric; ``accuracy_by_length.csv`` for seq2seq) go into the ``--out`` folder, and with
``--png`` the panel's figure (``NAME.png``: the figure the window's Export writes for the same run); with
``--ablate`` (induction) ``ablation.csv``, every head of both models silenced in turn on a held-out batch.
Ctrl-C stops the run and still writes the steps taken.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from . import EXPERIMENTS
from .experiment import TrainingError
from .lab_models import DEFAULT_ARMS, check_save, train_arm
from .report import (MAX_STEPS, check_steps, default_steps, figure_data, make_experiment, prepare_folder,
                     write_csv, write_report)

PROG = "attn-studio train"


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    names = ", ".join(EXPERIMENTS)
    parser = _Parser(
        prog=PROG,
        description="Train an experiment of the training lab and write its curves as CSV tables.",
        epilog=f"Experiments: {names}. Example: {PROG} scaling --d-k 64 --steps 1000 --out runs/scaling",
    )
    parser.add_argument("experiment", metavar="EXPERIMENT", help=f"which experiment ({names})")
    parser.add_argument("--d-k", type=int, dest="d_k", default=None,
                        help="scaling only: the query/key size d_k (default 64)")
    parser.add_argument("--seed", type=int, default=0, help="the seed of weights and batches (default 0)")
    parser.add_argument("--steps", type=int, default=None,
                        help=f"optimiser steps, 1 to {MAX_STEPS:,} (default: enough to see the effect; "
                             + ", ".join(f"{name} {default_steps(name)}" for name in EXPERIMENTS) + ")")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="the folder for the tables (made if missing); needed unless --animate or --save is given")
    parser.add_argument("--save", metavar="DIR",
                        help="induction and scaling: also save a model of the run as a model folder (config.json, "
                             "model.safetensors, vocab.json) that the window's Open model folder… and "
                             "attn-studio export --model open")
    parser.add_argument("--arm", default=None,
                        help="with --save: which model (induction: \"two layers\" (default) or \"one layer\"; "
                             "scaling: \"scaled\" (default) or \"unscaled\")")
    parser.add_argument("--ablate", action="store_true",
                        help="induction only: after training, silence each head of both models in turn on a "
                             "held-out batch and write ablation.csv (one row per head: repeat and first-copy "
                             "loss with the head out, and the head detector's scores)")
    parser.add_argument("--png", action="store_true",
                        help="also draw the panel's figure as NAME.png, as the window exports it (needs Qt, no display)")
    parser.add_argument("--animate", metavar="FILE", default=None,
                        help="write the panel's figure as the run goes, as an animation (.gif, .mp4, .webm or "
                             ".png): the curves drawing themselves (needs Qt, no display)")
    parser.add_argument("--frames", type=int, default=60,
                        help="with --animate: frames over the run, from step 0 to the last (default 60)")
    parser.add_argument("--fps", type=float, default=10.0, help="with --animate: frames a second (default 10)")
    parser.add_argument("--hold", type=float, default=2.0,
                        help="with --animate: seconds the last frame stays (default 2)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="with --animate: the frames' size, times the figure's own (0.25 to 4, default 1)")
    return parser


def ablation_summary(study) -> str:
    """The ablation in a few lines for the terminal: each head's cost to the repeat and the first copy,
    then the sentence the panel writes under its bars."""
    from ..formatting import format_number
    from .ablation import head_label, needed_text

    def signed(x: float) -> str:
        text = format_number(x)
        return text if text.startswith("−") or float(x) == 0 or text == "0.00" else "+" + text

    lines = [f"  heads silenced one at a time on {study.rows} held-out rows (nats added to the loss):"]
    for arm in study.intact:
        intact = study.intact[arm]
        cells = ", ".join(f"{head_label(h.layer, h.head)} repeat {signed(h.added_repeat)} first copy {signed(h.added_first)}"
                          for h in study.arm_heads(arm))
        lines.append(f"    {arm} (repeat {intact['loss_repeat']:.2f}, first copy {intact['loss_first']:.2f}): {cells}")
    lines.append("  " + needed_text(study))
    return "\n".join(lines)


def _fail(message, code: int = 2) -> int:
    print(f"{PROG}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return code


def main(argv: list[str], draw_figures=None, animate_figures=None) -> int:
    """Entry point of ``attn-studio train``; returns the exit code (2 for a bad command line).

    ``draw_figures(name, exp, folder) -> paths`` draws the PNG of ``--png`` (the panel's figure of
    the run); ``animate_figures(name, exp, steps, path, fps, hold, frames, progress, scale=) -> frames written`` plays the run
    to each of ``steps`` and writes the figure at each as an animation (``--animate``). The window's
    side provides both (this package never imports Qt).
    """
    try:
        args = _parser().parse_args(argv)
    except _UsageError as exc:
        return _fail(exc)
    try:
        exp = make_experiment(args.experiment, seed=args.seed, d_k=args.d_k)
        steps = check_steps(args.steps if args.steps is not None else default_steps(args.experiment))
        if args.ablate and args.experiment != "induction":
            raise TrainingError(f"--ablate knocks out the heads of the induction experiment's models, not "
                                f"{args.experiment}'s")
        if args.ablate and (args.out is None or args.animate is not None):
            raise TrainingError("--ablate writes ablation.csv into the --out folder: give --out DIR (without --animate)")
        if args.png and draw_figures is None:
            raise TrainingError("--png needs the figures of the window's side: run it as attn-studio train")
        if args.out is None and args.animate is None and args.save is None:
            raise TrainingError("give --out DIR for the tables, --save DIR for the model, or --animate FILE "
                                "for the run's animation (or several)")
        if args.png and args.out is None:
            raise TrainingError("--png draws the figure into the --out folder: give --out DIR")
        if args.animate is not None:
            if animate_figures is None:
                raise TrainingError("--animate needs the figures of the window's side: run it as attn-studio train")
            _check_animation(args, steps)
        if args.animate is not None and args.save is not None:
            raise TrainingError("--animate and --save are two runs: give one, then the other")
        arm = None
        if args.save is not None:
            arm = args.arm if args.arm is not None else DEFAULT_ARMS.get(args.experiment, exp.arms[0])
            if arm not in exp.arms:
                raise TrainingError(f"--arm must be one of {', '.join(map(repr, exp.arms))} for {args.experiment}, "
                                    f"got {arm!r}")
            check_save(exp, arm, args.save)  # before the run: a long run never ends in a refusal
        elif args.arm is not None:
            raise TrainingError("--arm goes with --save (which model to save)")
        if args.out is not None:
            prepare_folder(args.out)
    except TrainingError as exc:
        return _fail(exc)
    if args.animate is not None:
        return _animate(args, exp, steps, animate_figures)

    from tqdm import tqdm  # the terminal's progress bar; only this command needs it

    stopped = False
    # Only a model to save (no --out): its arm alone trains, as it trains beside the others, in a
    # fraction of the time; nothing is recorded.
    alone = args.out is None
    shown = "accuracy" if "accuracy" in exp.metrics else exp.metrics[0]  # beside the bar, per arm
    desc = f"{args.experiment} ({arm})" if alone else f"{args.experiment} ({shown})"
    with tqdm(total=steps, unit="step", desc=desc, file=sys.stderr, disable=None) as bar:
        def progress(step, metrics):
            bar.update(1)
            if step % 25 == 0 or step == steps:
                bar.set_postfix({name: f"{m[shown]:.2f}" for name, m in metrics.items()}, refresh=False)
        try:
            if alone:
                train_arm(exp, arm, steps, lambda done, total: bar.update(done - bar.n))
            else:
                exp.run(steps, callback=progress)
        except KeyboardInterrupt:
            stopped = True
    written = {}
    study = None
    try:
        if args.out is not None:
            written = write_report(exp, args.out, figures=figure_data(exp))
            if args.ablate:
                from .ablation import ablation_rows, ablation_study

                study = ablation_study(exp)
                written["ablation"] = Path(args.out) / "ablation.csv"
                write_csv(written["ablation"], *ablation_rows(study))
        if args.png:
            for path in draw_figures(args.experiment, exp, args.out):
                written[path.stem] = path
        if args.save is not None:
            written["model"] = exp.save_model(arm, args.save)
    except TrainingError as exc:
        return _fail(exc, 1)
    except OSError as exc:
        return _fail(f"cannot write a figure: {exc}", 1)

    last = min(100, exp.step_count)
    print(f"{args.experiment}, seed {exp.seed}" + (f", d_k {exp.d_k}" if hasattr(exp, "d_k") else "")
          + f": {exp.step_count} steps" + (f" of {arm!r} alone (give --out to train and record every arm)"
                                           if alone else "") + (" (stopped)" if stopped else ""))
    for name in exp.arms if not alone else ():
        values_of = exp.history[name]
        if last:
            means = ", ".join(f"{metric} {np.mean(values[-last:]):.3f}" for metric, values in values_of.items())
            print(f"  {name}: mean of the last {last} steps: {means}")
    if study is not None:
        print(ablation_summary(study))
    for path in written.values():
        print(f"  wrote {path}")
    return 130 if stopped else 0


def _check_animation(args, steps: int) -> None:
    """Refuse, before training, an animation that cannot be written (target, rate, hold, frames)."""
    from ..animation import AnimationError, check_fps, check_frame_count, check_hold, check_target

    try:
        check_target(args.animate)
        args.fps, args.hold = check_fps(args.fps), check_hold(args.hold)
        check_frame_count(args.frames)
    except AnimationError as exc:
        raise TrainingError(str(exc)) from None
    if not 0.25 <= args.scale <= 4:
        raise TrainingError(f"--scale of an animation is 0.25 to 4, not {args.scale:g}")
    if args.frames < 2 or args.frames > steps + 1:
        raise TrainingError(f"--frames must be 2 to {steps + 1} (steps 0 to {steps}), got {args.frames}")


def _animate(args, exp, steps: int, animate_figures) -> int:
    """``train NAME --animate FILE``: the run played with a bar, its figure every k steps, then written."""
    from tqdm import tqdm

    with tqdm(total=steps, unit="step", desc=f"{args.experiment}", file=sys.stderr, disable=None) as bar:
        def progress(step):
            bar.update(step - bar.n)
        try:
            count = animate_figures(args.experiment, exp, steps, args.animate, args.fps, args.hold, args.frames,
                                    progress, scale=args.scale)
        except KeyboardInterrupt:
            return _fail("stopped: nothing was written", 130)
        except (TrainingError, ValueError) as exc:
            return _fail(exc)
        except OSError as exc:
            return _fail(f"cannot write {args.animate}: {exc.strerror or exc}", 1)
    if args.out is not None:
        try:
            for path in write_report(exp, args.out, figures=figure_data(exp)).values():
                print(f"  wrote {path}")
        except (TrainingError, OSError) as exc:
            return _fail(exc, 1)
    print(f"{PROG}: wrote {args.animate} ({count} frames, steps 0 to {exp.step_count})")
    return 0
