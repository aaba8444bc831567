"""What the training lab says about a run, read off its history: the panels' sentences, their figures
and the benchmarks measure it the same way.

- "Why √d_k": the step at which an arm first reaches 90 % accuracy, counted on the mean of the last
  20 steps' batch accuracy (one batch of 32 queries is noisy: a single lucky batch does not count),
  or None when it has not yet.
- "Why two layers": where a loss on the repeat stands against guessing, ln 32 = 3.47 nats (a uniform
  prediction over the 32 tokens).
"""

from __future__ import annotations

import math

import numpy as np

from .induction import VOCAB

__all__ = ["TARGET", "WINDOW", "GUESSING", "GUESSING_MARGIN", "steps_to", "against_guessing", "reached_text"]

TARGET = 0.9   # "learnt": 90 % of the queries answered right
WINDOW = 20    # steps averaged before comparing with TARGET
GUESSING = math.log(VOCAB)  # ln 32: the loss of a uniform guess over the vocabulary
# A mean of 20 steps' repeat loss varies by a few hundredths from batch to batch: closer to ln 32
# than this it is "at guessing", not above or below it.
GUESSING_MARGIN = 0.05


def steps_to(accuracy, target: float = TARGET, window: int = WINDOW) -> int | None:
    """The number of steps after which the mean batch accuracy of the last ``window`` steps first
    reaches ``target`` (the step count shown when it did), or None if it never does."""
    acc = np.asarray(accuracy, dtype=float)
    if acc.size < window:
        return None
    means = np.convolve(acc, np.ones(window) / window, mode="valid")
    hit = np.flatnonzero(means >= target - 1e-12)
    return int(hit[0]) + window if hit.size else None


def reached_text(step: int | None, steps: int) -> str:
    """``steps_to``'s answer for a sentence: "at step 240", or "not yet in 1,000 steps"."""
    return f"at step {step:,}" if step is not None else f"not yet in {steps:,} step{'s' if steps != 1 else ''}"


def against_guessing(loss: float, margin: float = GUESSING_MARGIN) -> str:
    """"below", "at" or "above" guessing (ln 32) for a mean loss on the repeat."""
    if loss < GUESSING - margin:
        return "below"
    if loss > GUESSING + margin:
        return "above"
    return "at"
