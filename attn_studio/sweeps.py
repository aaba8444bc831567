"""What an animation sweeps: ``NAME=FROM:TO[:FRAMES]`` read, checked against the control's own
limits, turned into one value a frame, and applied to a studio. No Qt.

Sweepable on the toy model: ``d_k`` (``d_head``), ``temperature`` (``T``), ``heads``, one cell of
X or of W_Q / W_K / W_V (``cell=X[2,1]:-1:1``), and the switches ``scale`` (1/√d_k) and
``causal`` (``off:on``). Sweepable everywhere: ``query`` (the query walks the sentence, from 1),
``step`` (the Step by step view's steps, from 1) and ``layer`` (a trained model's layers, from
1). A training run is swept by ``steps=0:N`` (the run played to each step in turn).

Several sweeps nest: the first changes slowest (``scale=off:on`` then ``d_k=1:256`` gives the
d_k sweep unscaled, then the same sweep scaled). :class:`SweepError` (a ``ValueError``) is every
refusal, in one line.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

from .formatting import format_setting
from .limits import MAX_ABS_VALUE, MAX_D_HEAD, MAX_HEADS, TEMPERATURE_RANGE

MAX_FRAMES = 1000  # as animation.MAX_FRAMES: every sweep's frames together
DEFAULT_INT_FRAMES = 60  # an integer range longer than this is sampled (geometrically for d_k)
DEFAULT_FLOAT_FRAMES = 30
MAX_TRAINING_STEPS = 100_000

# Names as a person types them -> the sweep's own name.
ALIASES = {
    "d_k": "d_k", "dk": "d_k", "d_head": "d_k", "d-k": "d_k", "d-head": "d_k",
    "temperature": "temperature", "t": "temperature", "temp": "temperature",
    "heads": "heads", "scale": "scale", "scaling": "scale", "causal": "causal",
    "query": "query", "step": "step", "layer": "layer", "steps": "steps", "cell": "cell",
}
TOY_ONLY = ("d_k", "temperature", "heads", "scale", "causal", "cell")
SWITCHES = ("scale", "causal")
SWITCH_WORDS = {"off": False, "on": True, "false": False, "true": True, "0": False, "1": True, "no": False, "yes": True}
MATRICES = {"x": "X", "w_q": "W_Q", "w_k": "W_K", "w_v": "W_V", "wq": "W_Q", "wk": "W_K", "wv": "W_V"}

_SPEC = re.compile(r"^\s*(?P<name>[A-Za-z_\-]+)\s*=\s*(?P<rest>.+?)\s*$")
_CELL = re.compile(r"^(?P<matrix>[A-Za-z_]+)\[(?P<index>[^\]]*)\]:(?P<range>.+)$")


class SweepError(ValueError):
    """A sweep that cannot be made, with the reason in one line."""


@dataclass(frozen=True)
class Sweep:
    """One ``--animate`` request: its name, its values (one a frame), and for ``cell`` which cell.

    ``matrix`` is "X", "W_Q", "W_K" or "W_V" and ``index`` the cell's (row, column) from 1 (a
    W cell may name its head first: (head, row, column)).
    """

    name: str
    values: tuple
    text: str
    matrix: str = ""
    index: tuple = ()

    def label(self, value) -> str:
        """The value as the frame's title says it ("d_k = 64", "T = 0.50", "scaling on", "X[2,1] = −0.40")."""
        if self.name == "d_k":
            return f"d_k = {value}"
        if self.name == "temperature":
            return f"T = {_number(value)}"
        if self.name == "heads":
            return f"{value} head{'s' if value != 1 else ''}"
        if self.name == "scale":
            return "scaling ÷√d_k " + ("on" if value else "off")
        if self.name == "causal":
            return "causal mask " + ("on" if value else "off")
        if self.name == "cell":
            return f"{self.matrix}[{','.join(str(i) for i in self.index)}] = {_number(value)}"
        if self.name == "steps":
            return f"step {value}"
        return f"{self.name} {value}"


def _number(value: float) -> str:
    return format_setting(float(value)).replace("-", "−")


def parse(text: str) -> Sweep:
    """Read one ``NAME=FROM:TO[:FRAMES]`` (syntax and plain limits only; :func:`check` asks the model)."""
    m = _SPEC.match(str(text))
    if not m:
        raise SweepError(f"--animate {text!r}: write NAME=FROM:TO[:FRAMES], e.g. temperature=0.2:5:30")
    given = m.group("name").lower()
    name = ALIASES.get(given)
    if name is None:
        raise SweepError(f"--animate: {m.group('name')!r} cannot be swept; sweep one of d_k, temperature, heads, "
                         "cell=X[r,c], scale, causal, query, step, layer (or steps with a training view)")
    rest = m.group("rest")
    matrix, index = "", ()
    if name == "cell":
        c = _CELL.match(rest.replace(" ", ""))
        if not c:
            raise SweepError(f"--animate {text!r}: a cell is swept as cell=X[ROW,COLUMN]:FROM:TO[:FRAMES] "
                             "(or W_Q/W_K/W_V[ROW,COLUMN], rows and columns from 1)")
        matrix = MATRICES.get(c.group("matrix").lower())
        if matrix is None:
            raise SweepError(f"--animate: {c.group('matrix')!r} is not a matrix to sweep; use X, W_Q, W_K or W_V")
        try:
            index = tuple(int(i) for i in c.group("index").split(","))
        except ValueError:
            raise SweepError(f"--animate: {matrix}[{c.group('index')}]: rows and columns are whole numbers "
                             "from 1") from None
        if len(index) not in ((2,) if matrix == "X" else (2, 3)) or min(index) < 1:
            raise SweepError(f"--animate: {matrix}[{c.group('index')}]: give [ROW,COLUMN]"
                             + ("" if matrix == "X" else " or [HEAD,ROW,COLUMN]") + ", each from 1")
        rest = c.group("range")
    parts = rest.split(":")
    if len(parts) not in (2, 3) or not all(p.strip() for p in parts):
        raise SweepError(f"--animate {text!r}: write {given}=FROM:TO or {given}=FROM:TO:FRAMES")
    frames = None
    if len(parts) == 3:
        try:
            frames = int(parts[2])
        except ValueError:
            raise SweepError(f"--animate {text!r}: FRAMES is a whole number, not {parts[2]!r}") from None
        if not 1 <= frames <= MAX_FRAMES:
            raise SweepError(f"--animate {text!r}: FRAMES must be 1 to {MAX_FRAMES}, got {frames}")
    low, high = parts[0].strip(), parts[1].strip()
    if name in SWITCHES:
        values = _switch_values(name, low, high, frames)
    elif name in ("temperature", "cell"):
        values = _float_values(name, low, high, frames, text)
    else:
        values = _int_values(name, low, high, frames, text)
    return Sweep(name, tuple(values), str(text).strip(), matrix, index)


def _switch_values(name, low, high, frames):
    try:
        a, b = SWITCH_WORDS[low.lower()], SWITCH_WORDS[high.lower()]
    except KeyError:
        raise SweepError(f"--animate {name}: a switch goes off:on or on:off, not {low}:{high}") from None
    n = frames or 2
    if a != b and n < 2:
        raise SweepError(f"--animate {name}={low}:{high} needs at least 2 frames (one off, one on)")
    return [a if i < (n + 1) // 2 else b for i in range(n)]


def _as_float(name, word, text) -> float:
    try:
        value = float(word)
    except ValueError:
        raise SweepError(f"--animate {text!r}: {word!r} is not a number") from None
    if not math.isfinite(value):
        raise SweepError(f"--animate {text!r}: {word!r} is not a finite number")
    return value


def _float_values(name, low, high, frames, text):
    a, b = _as_float(name, low, text), _as_float(name, high, text)
    if name == "temperature":
        lo, hi = TEMPERATURE_RANGE
        for v in (a, b):
            if not lo <= v <= hi:
                raise SweepError(f"--animate {text!r}: the temperature goes from {lo:g} to {hi:g}, not {v:g}")
    else:
        for v in (a, b):
            if abs(v) > MAX_ABS_VALUE:
                raise SweepError(f"--animate {text!r}: a cell's value is at most ±{MAX_ABS_VALUE:g}, not {v:g}")
    n = frames or (1 if a == b else DEFAULT_FLOAT_FRAMES)
    if n == 1:
        return [a]
    if name == "temperature" and max(a, b) / min(a, b) >= 4:
        # A temperature acts by its ratio: equal steps of log T look like equal steps.
        return [float(a * (b / a) ** (i / (n - 1))) for i in range(n)]
    return [float(a + (b - a) * i / (n - 1)) for i in range(n)]


def _int_values(name, low, high, frames, text):
    try:
        a, b = int(low), int(high)
    except ValueError:
        raise SweepError(f"--animate {text!r}: {name} goes in whole numbers, not {low}:{high}") from None
    least = 0 if name == "steps" else 1
    top = {"d_k": MAX_D_HEAD, "heads": MAX_HEADS, "steps": MAX_TRAINING_STEPS}.get(name)
    for v in (a, b):
        if v < least or (top is not None and v > top):
            bound = f"{least} to {top}" if top is not None else f"from {least}"
            raise SweepError(f"--animate {text!r}: {name} goes {bound}, not {v}")
    count = abs(b - a) + 1
    if name == "steps":  # a training run: frames spread over the steps (the run only goes forward)
        if b < a:
            raise SweepError(f"--animate {text!r}: a training run only goes forward; write steps=FROM:TO with FROM < TO")
        n = frames or min(count, DEFAULT_INT_FRAMES)
        if n > count:
            raise SweepError(f"--animate {text!r}: {count} step(s) make at most {count} frames, not {n}")
        return _spread(a, b, n, geometric=False)
    n = frames or min(count, DEFAULT_INT_FRAMES)
    if n > count:
        raise SweepError(f"--animate {text!r}: {name} {a}:{b} has {count} value(s); ask for at most {count} frames")
    return _spread(a, b, n, geometric=(name == "d_k" and max(a, b) >= 4 * min(a, b)))


def _spread(a: int, b: int, n: int, geometric: bool) -> list[int]:
    """``n`` distinct whole numbers from ``a`` to ``b`` (both included), evenly (or geometrically) apart."""
    if n == 1:
        return [a]
    lo, hi = min(a, b), max(a, b)
    if geometric:
        raw = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
    else:
        raw = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
    values = [int(round(v)) for v in raw]
    values[0], values[-1] = lo, hi
    for i in range(1, n):  # distinct: push up where rounding met the one before ...
        values[i] = max(values[i], values[i - 1] + 1)
    values[-1] = hi
    for i in range(n - 2, -1, -1):  # ... and down where that ran into the top
        values[i] = min(values[i], values[i + 1] - 1)
    return values if a <= b else values[::-1]


def frames_of(sweeps: list[Sweep]) -> list[tuple]:
    """One tuple of values a frame, the first sweep changing slowest; ``SweepError`` past 1,000 frames."""
    if not sweeps:
        raise SweepError("--animate needs at least one NAME=FROM:TO")
    names = [s.name for s in sweeps]
    for name in set(names):
        if name != "cell" and names.count(name) > 1:
            raise SweepError(f"--animate: {name} is swept twice; give each control one range")
    total = math.prod(len(s.values) for s in sweeps)
    if total > MAX_FRAMES:
        raise SweepError(f"--animate makes {' × '.join(str(len(s.values)) for s in sweeps)} = {total} frames; "
                         f"an animation has at most {MAX_FRAMES}")
    if "steps" in names and len(sweeps) > 1:
        raise SweepError("--animate steps=FROM:TO plays a training run; it cannot be combined with another sweep")
    return list(itertools.product(*(s.values for s in sweeps)))


def check(sweeps: list[Sweep], studio, *, trained: bool, steps: int | None = None) -> None:
    """Refuse a sweep the shown model cannot make (a toy control on a trained model, ``layer`` on the toy
    model, a query, step, layer or cell outside the model's own), before anything is drawn."""
    state = studio.state
    for s in sweeps:
        if s.name in TOY_ONLY and trained:
            raise SweepError(f"--animate {s.name}: a trained model's {s.name} is fixed by its training; sweep "
                             "query, step or layer (or draw the toy model: leave out --model)")
        if s.name == "layer" and not trained:
            raise SweepError("--animate layer: the toy model has one layer; sweep a trained model's layers "
                             "with --model NAME --text TEXT")
        if s.name == "d_k" and not state.projections:
            raise SweepError("--animate d_k: without projections d_k is d_model (Q = K = V = X); switch the "
                             "projections on in the session, or sweep another control")
        if s.name == "query":
            n = len(state.query_tokens)
            _within(s, 1, n, f"the sentence has {n} quer{'y' if n == 1 else 'ies'}")
        if s.name == "layer":
            n = studio.model.layers
            _within(s, 1, n, f"{studio.model.name} has {n} layer(s)")
        if s.name == "step" and steps is not None:
            _within(s, 1, steps, f"Step by step shows {steps} step(s) for this query")
        if s.name == "cell":
            _check_cell(s, state)


def _within(s: Sweep, lo: int, hi: int, why: str) -> None:
    for v in s.values:
        if not lo <= v <= hi:
            raise SweepError(f"--animate {s.text}: {why}; {s.name} goes {lo} to {hi}, not {v}")


def _check_cell(s: Sweep, state) -> None:
    if s.matrix == "X":
        n, d = len(state.tokens), state.d_model
        row, col = s.index
        if not (1 <= row <= n and 1 <= col <= d):
            raise SweepError(f"--animate {s.text}: X is {n} tokens × d_model = {d}; X[{row},{col}] is outside it")
        return
    if not state.projections:
        raise SweepError(f"--animate {s.text}: without projections there is no {s.matrix} (Q = K = V = X)")
    head, row, col = (state.shown_head + 1, *s.index) if len(s.index) == 2 else s.index
    if not (1 <= head <= state.heads and 1 <= row <= state.d_model and 1 <= col <= state.d_head):
        raise SweepError(f"--animate {s.text}: {s.matrix} is {state.heads} head(s) of d_model × d_head = "
                         f"{state.d_model} × {state.d_head}; [{head},{row},{col}] is outside it")


def apply(studio, sweep: Sweep, value, *, trained: bool) -> None:
    """Set ``sweep``'s control of ``studio`` to ``value`` (query, layer and step are 1-based).

    ``step`` is the view's business (the caller moves the Step by step view's highlight) and
    ``steps`` the training panel's: both are left to the caller here.
    """
    if sweep.name == "d_k":
        studio.update(d_head=int(value))
    elif sweep.name == "temperature":
        studio.update(temperature=float(value))
    elif sweep.name == "heads":
        state = studio.state
        studio.update(heads=int(value), head_index=min(state.head_index, int(value) - 1))
    elif sweep.name in SWITCHES:
        studio.update(**{sweep.name: bool(value)})
    elif sweep.name == "query":
        studio.select(query=int(value) - 1)
    elif sweep.name == "layer":
        studio.select(layer=int(value) - 1)
    elif sweep.name == "cell":
        state = studio.state
        if sweep.matrix == "X":
            row, col = sweep.index
            studio.set_embedding(state.tokens[row - 1], col - 1, float(value))
        else:
            head, row, col = (state.shown_head + 1, *sweep.index) if len(sweep.index) == 2 else sweep.index
            studio.set_weight(sweep.matrix.lower(), head - 1, row - 1, col - 1, float(value))
