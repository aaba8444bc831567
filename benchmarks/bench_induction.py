"""Benchmark: the induction lab's speed, and the phase change over several seeds.

Speed (one BLAS thread, as the window's worker runs it): the time of each ``step()`` of
InductionExperiment (both arms once) over the first 1,000 steps of every seed's run: median
and p95 per step, the total of 1,000 steps (budget: <= 25 s), and the slowest single step
(budget: < 0.5 s).

Effects, over ``--seeds`` seeds (0, 1, ...) of ``--steps`` steps each, the numbers the lecture
quotes, per arm:

- "drop": the step at which the repeat's loss falls below ln 32 / 2 = 1.73 nats (the first step
  at which the mean of the last 20 steps' "loss_repeat" is below it; ">N" = not within
  ``--steps``), and "fall": the steps it took from 3/4 ln 32 = 2.60 down to ln 32 / 2, how
  sudden the phase change is;
- the final "loss_repeat" and "loss_first" (means over the last 100 steps, nats);
- the final best-head scores "previous_token" (first layer) and "induction" (last layer), means
  over the last 100 steps.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_induction.py [--seeds 5] [--steps 2500]
        [--json results.json]

Expected (DESIGN.md): the two-layer repeat loss sits near ln 32 = 3.47, then drops within a few
hundred steps (around step 1,000-1,500) to below 1 nat as a previous-token head (~0.4) and an
induction head (~0.85) form; the first copy stays near 3.7; the one-layer arm stays above 2 nats
on the repeat with no induction head: below guessing, ln 32, as the panel's sentence then says.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads OpenBLAS

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from attn_studio.training import InductionExperiment  # noqa: E402
from attn_studio.training.claims import GUESSING, against_guessing  # noqa: E402

TIMED = 1000                 # steps timed per seed (budget: 25 s for these)
HALF = float(np.log(32) / 2)  # ln 32 / 2: the repeat's loss below it means copying has begun
WINDOW = 20                  # steps averaged for "below ln 32 / 2"
FINAL = 100                  # steps averaged for the final numbers


def drop_step(values: list[float], threshold: float = HALF, window: int = WINDOW) -> int | None:
    """The first step at which the mean of the last ``window`` values is below ``threshold``."""
    v = np.asarray(values)
    if len(v) < window:
        return None
    means = np.convolve(v, np.ones(window) / window, mode="valid")
    hit = np.flatnonzero(means < threshold)
    return int(hit[0]) + window - 1 if hit.size else None


def run_seed(seed: int, steps: int) -> tuple[dict, np.ndarray]:
    exp = InductionExperiment(seed=seed)
    times = np.empty(steps)
    cpu0 = time.process_time()
    for i in range(steps):
        t0 = time.perf_counter()
        exp.step()
        times[i] = time.perf_counter() - t0
        if i == TIMED - 1:
            cpu = time.process_time() - cpu0
    result = {}
    for arm in exp.arms:
        h = exp.history[arm]
        drop, start = drop_step(h["loss_repeat"]), drop_step(h["loss_repeat"], 1.5 * HALF)
        result[arm] = {
            "drop": drop,
            "fall": None if drop is None or start is None else drop - start,
            **{m: float(np.mean(h[m][-FINAL:]))
               for m in ("loss_repeat", "loss_first", "previous_token", "induction")},
        }
    result["cpu_s"] = cpu
    return result, times


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=2500)
    parser.add_argument("--json", help="also write the numbers to this JSON file")
    args = parser.parse_args(argv)
    if args.steps < TIMED:
        parser.error(f"--steps must be at least {TIMED}")

    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"NumPy {np.__version__}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results, all_times = {}, []
    for seed in range(args.seeds):
        results[seed], times = run_seed(seed, args.steps)
        all_times.append(times[:TIMED])
        print(f"seed {seed}: {args.steps} steps in {times.sum():.1f} s (first {TIMED}: "
              f"{times[:TIMED].sum():.1f} s wall, {results[seed].pop('cpu_s'):.1f} s CPU: a shared "
              f"machine inflates the wall clock)", flush=True)

    timed = np.concatenate(all_times) * 1e3
    totals = [t.sum() for t in all_times]
    print(f"\nstep() of both arms over the first {TIMED} steps of each seed: median "
          f"{np.median(timed):.1f} ms, p95 {np.percentile(timed, 95):.1f} ms (p5 "
          f"{np.percentile(timed, 5):.1f} ms: near what an idle machine gives), slowest "
          f"{timed.max():.1f} ms (budget 500 ms); {TIMED} steps: median {np.median(totals):.1f} s, "
          f"slowest seed {max(totals):.1f} s (budget 25 s)")

    def fmt(v, missing):
        return missing if v is None else str(v)

    print(f"\nafter {args.steps} steps (final = mean of the last {FINAL}); drop = step where the "
          f"repeat's loss (mean of {WINDOW}) falls below ln 32 / 2 = {HALF:.2f}")
    print(f"{'seed':>4} {'arm':>10} {'drop':>6} {'fall':>6} {'repeat':>7} {'first':>6} "
          f"{'prev':>5} {'induct':>6}")
    for seed, result in results.items():
        for arm, r in result.items():
            print(f"{seed:>4} {arm:>10} {fmt(r['drop'], f'>{args.steps}'):>6} {fmt(r['fall'], '-'):>6} "
                  f"{r['loss_repeat']:>7.2f} {r['loss_first']:>6.2f} {r['previous_token']:>5.2f} "
                  f"{r['induction']:>6.2f}")
    for arm in ("one layer", "two layers"):
        rows = [results[s][arm] for s in results]
        print(f"{arm}: repeat loss {min(r['loss_repeat'] for r in rows):.2f}-"
              f"{max(r['loss_repeat'] for r in rows):.2f}, first {min(r['loss_first'] for r in rows):.2f}-"
              f"{max(r['loss_first'] for r in rows):.2f}, previous-token "
              f"{min(r['previous_token'] for r in rows):.2f}-{max(r['previous_token'] for r in rows):.2f}, "
              f"induction {min(r['induction'] for r in rows):.2f}-{max(r['induction'] for r in rows):.2f}")

    # What the panel's sentence says of each arm's repeat loss against guessing (`training.claims`).
    for arm in ("one layer", "two layers"):
        said = [against_guessing(results[s][arm]["loss_repeat"]) for s in results]
        print(f"{arm}: repeat loss after {args.steps} steps "
              + ", ".join(f"{word} guessing (ln 32 = {GUESSING:.2f}) on {said.count(word)} of {len(said)} seeds"
                          for word in ("below", "at", "above") if said.count(word)))

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"steps": args.steps, "median_ms": float(np.median(timed)),
                       "p95_ms": float(np.percentile(timed, 95)), "slowest_ms": float(timed.max()),
                       "totals_s": [float(t) for t in totals],
                       "seeds": {str(s): r for s, r in results.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
