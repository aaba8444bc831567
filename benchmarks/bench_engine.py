"""Benchmark: wall time of the NumPy attention engine.

Times ``multi_head_attention`` (with a W_O of shape (d_model, d_model) and
d_k = d_v = d_model // heads) at several (T, d_model, heads), and
``dot_product_variance(np.arange(1, 1025), n_samples=2000, seed=0)``.
Inputs come from a fixed-seed generator; each case is warmed up first, then
timed with ``time.perf_counter``. Prints median and p95 per case, in ms.

    python benchmarks/bench_engine.py [--repeats N]

Targets (2-core machine): (64, 64, 8) under 1 ms median and p95,
(512, 256, 8) under 30 ms.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from attn_studio.engine import dot_product_variance, multi_head_attention

# (T, d_model, heads), and the share of --repeats each size gets: the largest
# sizes run fewer times so the whole script stays well under a minute.
SIZES = [
    ((8, 8, 2), 1.0),
    ((64, 64, 8), 1.0),
    ((512, 256, 8), 0.25),
    ((2048, 512, 8), 0.03),
]
TARGETS_MS = {(64, 64, 8): 1.0, (512, 256, 8): 30.0}


def time_call(func, repeats: int, warmup: int = 3) -> np.ndarray:
    """Return ``repeats`` wall times of ``func()`` in milliseconds, after a warm-up."""
    for _ in range(warmup):
        func()
    times = np.empty(repeats)
    for i in range(repeats):
        t0 = time.perf_counter()
        func()
        times[i] = time.perf_counter() - t0
    return times * 1e3


def mha_case(t: int, d_model: int, heads: int, rng: np.random.Generator):
    d_head = d_model // heads
    scale = 1 / np.sqrt(d_model)
    x = rng.standard_normal((t, d_model))
    w_q = rng.standard_normal((heads, d_model, d_head)) * scale
    w_k = rng.standard_normal((heads, d_model, d_head)) * scale
    w_v = rng.standard_normal((heads, d_model, d_head)) * scale
    w_o = rng.standard_normal((heads * d_head, d_model)) * scale
    return lambda: multi_head_attention(x, w_q, w_k, w_v, w_o)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200, help="timed runs for the small sizes (default 200)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")

    print(f"NumPy {np.__version__}, Python {platform.python_version()}, {platform.machine()}")
    header = f"{'case':<44} {'runs':>5} {'median ms':>10} {'p95 ms':>10}  target"
    print(header)
    print("-" * len(header))

    def report(name, times, target=None):
        med, p95 = np.median(times), np.percentile(times, 95)
        verdict = ""
        if target is not None:
            ok = med < target and p95 < target
            verdict = f"< {target:g} ms: {'met' if ok else 'MISSED'}"
        print(f"{name:<44} {len(times):>5} {med:>10.3f} {p95:>10.3f}  {verdict}")

    rng = np.random.default_rng(0)
    for (t, d_model, heads), share in SIZES:
        func = mha_case(t, d_model, heads, rng)
        repeats = max(3, int(round(args.repeats * share)))
        times = time_call(func, repeats, warmup=1 if t >= 2048 else 3)
        name = f"multi_head_attention T={t} d={d_model} h={heads}"
        report(name, times, TARGETS_MS.get((t, d_model, heads)))

    dims = np.arange(1, 1025)
    times = time_call(lambda: dot_product_variance(dims, n_samples=2000, seed=0),
                      max(3, args.repeats // 10), warmup=1)
    report("dot_product_variance d=1..1024 n=2000", times)


if __name__ == "__main__":
    main()
