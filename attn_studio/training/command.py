"""``attn-studio train NAME``: train an experiment of the training lab without a window.

    attn-studio train scaling --d-k 64 --seed 0 --steps 1000 --out runs/scaling
    attn-studio train seq2seq --out runs/seq2seq
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
    parser.add_argument("--out", required=True, metavar="DIR", help="the folder for the tables (made if missing)")
    parser.add_argument("--ablate", action="store_true",
                        help="induction only: after training, silence each head of both models in turn on a "
                             "held-out batch and write ablation.csv (one row per head: repeat and first-copy "
                             "loss with the head out, and the head detector's scores)")
    parser.add_argument("--png", action="store_true",
                        help="also draw the panel's figure as NAME.png, as the window exports it (needs Qt, no display)")
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


def main(argv: list[str], draw_figures=None) -> int:
    """Entry point of ``attn-studio train``; returns the exit code (2 for a bad command line).

    ``draw_figures(name, exp, folder) -> paths`` draws the PNG of ``--png`` (the panel's figure of
    the run); the window's side provides it (this package never imports Qt).
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
        if args.png and draw_figures is None:
            raise TrainingError("--png needs the figures of the window's side: run it as attn-studio train")
        prepare_folder(args.out)
    except TrainingError as exc:
        return _fail(exc)

    from tqdm import tqdm  # the terminal's progress bar; only this command needs it

    stopped = False
    shown = "accuracy" if "accuracy" in exp.metrics else exp.metrics[0]  # beside the bar, per arm
    with tqdm(total=steps, unit="step", desc=f"{args.experiment} ({shown})", file=sys.stderr, disable=None) as bar:
        def progress(step, metrics):
            bar.update(1)
            if step % 25 == 0 or step == steps:
                bar.set_postfix({arm: f"{m[shown]:.2f}" for arm, m in metrics.items()}, refresh=False)
        try:
            exp.run(steps, callback=progress)
        except KeyboardInterrupt:
            stopped = True
    figures = figure_data(exp)
    study = None
    try:
        written = write_report(exp, args.out, figures=figures)
        if args.ablate:
            from .ablation import ablation_rows, ablation_study

            study = ablation_study(exp)
            written["ablation"] = Path(args.out) / "ablation.csv"
            write_csv(written["ablation"], *ablation_rows(study))
        if args.png:
            for path in draw_figures(args.experiment, exp, args.out):
                written[path.stem] = path
    except TrainingError as exc:
        return _fail(exc, 1)
    except OSError as exc:
        return _fail(f"cannot write a figure: {exc}", 1)

    last = min(100, exp.step_count)
    print(f"{args.experiment}, seed {exp.seed}" + (f", d_k {exp.d_k}" if hasattr(exp, "d_k") else "")
          + f": {exp.step_count} steps" + (" (stopped)" if stopped else ""))
    for arm in exp.arms:
        if last:
            means = ", ".join(f"{metric} {np.mean(values[-last:]):.3f}" for metric, values in exp.history[arm].items())
            print(f"  {arm}: mean of the last {last} steps: {means}")
    if study is not None:
        print(ablation_summary(study))
    for path in written.values():
        print(f"  wrote {path}")
    return 130 if stopped else 0
