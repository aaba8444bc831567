"""The JSON text of session files: the checks before a file's text is parsed, and the writer of
indented text fast enough for a million edited cells. No Qt.

:func:`parse_json` refuses what would hurt the parser or the studio (a file past the size budget,
nesting thousands deep, millions of containers, whole numbers of thousands of digits, a key twice
in one object, NaN and Infinity) with a :class:`SessionError` saying why. :func:`dumps` writes
what ``json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False)`` writes, byte for byte.
``session`` builds and checks the states on top of these.
"""

from __future__ import annotations

import json
import math
import re
import secrets

import numpy as np

from .limits import MAX_JSON_DEPTH, MAX_SESSION_BYTES, MAX_WEIGHT_EDITS
from .safe_files import SessionError
from .state import EditedCells

__all__ = ["parse_json", "dumps", "MAX_JSON_CONTAINERS"]

# Arrays and objects a session may hold: one per edited weight cell, plus the
# rows of the matrices written in full (a few thousand) and the rest.
MAX_JSON_CONTAINERS = MAX_WEIGHT_EDITS + 200_000


# A JSON string, written as a run of plain characters between escapes ("unrolled"): the regular
# expression engine takes a run in one step. As "(?:[^"\\]|\\.)*" (one step per character,
# the same strings), a 10 MB name took a second and a gigabyte of the engine's stack.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


def _depth_ok(text: str, bare: str) -> bool:
    # Cheap pre-checks of the text outside its strings (``bare``), before the JSON parser sees it:
    # bracket nesting, so that a hostile file cannot make the parser recurse thousands of levels
    # deep, and whole numbers of absurd length. Strings are removed first (brackets and digits
    # inside them mean nothing); the rest runs in C and NumPy, so a 60 MB file is checked in a
    # fraction of a second. The brackets are picked out of the bytes by NumPy (a regular expression
    # deleting everything else took twice as long); a character beyond ASCII is never one of them.
    codes = np.frombuffer(bare.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    _refuse_long_integers(codes, text)
    codes = codes[(codes == ord("[")) | (codes == ord("]")) | (codes == ord("{")) | (codes == ord("}"))]
    if not len(codes):
        return True
    opening = (codes == ord("[")) | (codes == ord("{"))
    if int(np.count_nonzero(opening)) > MAX_JSON_CONTAINERS:
        # Millions of tiny arrays ("[],[],...") would take gigabytes once parsed.
        raise SessionError(f"the file holds more than {MAX_JSON_CONTAINERS:,} arrays and objects; "
                           "it is not an Attention Studio session")
    steps = np.where(opening, 1, -1).astype(np.int32)
    return int(np.cumsum(steps, dtype=np.int32).max()) <= MAX_JSON_DEPTH


_MAX_INTEGER_DIGITS = 20  # no limit of the studio needs more than a few digits
_NOT_AN_INTEGER = frozenset(b".eE+-")  # beside a run of digits: part of a float's fraction or exponent


def _refuse_long_integers(codes: np.ndarray, text: str) -> None:
    # A whole number of thousands of digits would end in Python's own conversion error (or a
    # slow conversion); it is refused with a message instead. Checked once over the file's bytes
    # (outside strings) rather than by a hook the parser calls for each of a million numbers.
    # A long run of digits in a float (its fraction or exponent) is left to the parser.
    digit = (codes >= ord("0")) & (codes <= ord("9"))
    # Nearly every file has no run of more than 20 digits at all. Whether it has one is found by
    # ANDing the mask with itself shifted (runs of 2, 4, 8, 16, then 21 digits: a few passes in
    # C); the runs are located, and each is looked at, only when there is one.
    run, length = digit, 1
    while length <= _MAX_INTEGER_DIGITS:
        step = min(length, _MAX_INTEGER_DIGITS + 1 - length)
        run = run[:-step] & run[step:]
        length += step
    if not run.any():
        return
    digit = digit.view(np.int8)
    edges = np.diff(digit, prepend=np.int8(0), append=np.int8(0))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    for i in np.flatnonzero(ends - starts > _MAX_INTEGER_DIGITS):
        start, end = int(starts[i]), int(ends[i])
        before = start - 1
        if before >= 0 and int(codes[before]) == ord("-"):  # a negative number's sign, unless an exponent's
            before -= 1
            if before >= 0 and int(codes[before]) in b"eE":
                continue
        elif before >= 0 and int(codes[before]) in _NOT_AN_INTEGER:
            continue
        if end < len(codes) and int(codes[end]) in _NOT_AN_INTEGER:
            continue
        digits = bytes(codes[start:end]).decode("ascii")
        raise SessionError(f"{_where(text, digits)}holds a whole number with {end - start:,} digits "
                           f"({digits[:12]}…), a number too large for any field of a session")


def parse_json(text: str):
    """The checked JSON value of a session's text (size, depth, duplicates, constants); ``SessionError``."""
    if len(text) > MAX_SESSION_BYTES:
        raise SessionError(f"the file is larger than {MAX_SESSION_BYTES // 2**20} MB; it is not an Attention Studio session")
    bare = _JSON_STRING.sub("", text)
    if not _depth_ok(text, bare):
        raise SessionError(f"the file nests deeper than {MAX_JSON_DEPTH} levels; it is not an Attention Studio session")
    # Only a file that may hold a number past the float range (an exponent of three digits, or
    # hundreds of digits before a point) pays for a check of each number it holds.
    parse_float = _finite_float if _MAY_OVERFLOW.search(bare) else None
    try:
        return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_refuse_duplicates,
                          parse_float=parse_float)
    except _DuplicateKey as exc:
        raise SessionError(str(exc)) from None
    except _TooLarge as exc:
        shown = exc.literal if len(exc.literal) <= 24 else exc.literal[:24] + "…"
        raise SessionError(f"{_where(text, exc.literal)}holds {shown}, a number too large to be held "
                           "at all (beyond the largest finite number, about 1.8e308) and far beyond any "
                           "limit of a session") from None
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise SessionError(f"the file is not valid JSON ({str(exc)[:200]})") from None


class _DuplicateKey(Exception):
    pass


class _TooLarge(ValueError):
    def __init__(self, literal: str):
        super().__init__(literal)
        self.literal = literal


# A number JSON allows but a float cannot hold: Python reads it as infinity, silently.
_MAY_OVERFLOW = re.compile(r"[eE]\+?0*[1-9]\d{2}|\d{200}")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _TooLarge(literal)
    return value


def _where(text: str, literal: str) -> str:
    """"“key” (line N) " for the first place ``literal`` stands as a number in ``text``, or "the file "."""
    found = re.search(r"(?<![\w.+])-?" + re.escape(literal) + r"(?![\w.])", text)
    if found is None:
        return "the file "
    before = text[: found.start()]
    line = before.count("\n") + 1
    keys = re.findall(r'"([^"\\]{1,60})"\s*:', before[-2000:])
    return f"“{keys[-1]}” (line {line}) " if keys else f"line {line} "


def _refuse_duplicates(pairs: list) -> dict:
    # JSON itself allows a key twice (the last one silently wins); a session
    # file that says two things about one field is refused instead.
    data = dict(pairs)
    if len(data) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(f"the file names “{key[:60]}” twice in one object; keep one of them")
            seen.add(key)
    return data


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not allowed in a session file")


# Edited cells encoded per slice: each slice holds the interpreter a few milliseconds,
# and saves run beside the window's thread.
_CELL_SLICE = 1 << 14


def dumps(data: dict) -> str:
    """``json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False)``, byte for byte, fast for edited cells.

    json writes indented text in pure Python (its C encoder writes compact text only):
    a million edited cells took about six seconds. Their ``[i, j, k, value]`` rows, given
    as :class:`~attn_studio.state.EditedCells` arrays, are written by :func:`_indented_cells`
    instead, as json writes their lists.
    """
    edits = data.get("weight_edits")
    if not isinstance(edits, dict) or not edits \
            or not all(isinstance(entry["cells"], EditedCells) for entry in edits.values()):
        return json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False)
    # The cells stand aside as unique placeholder strings while the rest is written as usual.
    token = secrets.token_hex(16)
    cells = {}
    swapped = {}
    for n, (name, entry) in enumerate(edits.items()):
        marker = f"cells-{token}-{n}"
        cells[marker] = entry["cells"]
        swapped[name] = {**entry, "cells": marker}
    text = json.dumps({**data, "weight_edits": swapped}, indent=1, ensure_ascii=False, allow_nan=False)
    parts = []
    for marker, rows in cells.items():
        before, text = text.split(f'"{marker}"', 1)
        level = len(before) - before.rfind("\n") - 1 - len('"cells": ')  # the key's indentation
        parts += [before, _indented_cells(rows, level)]
    return "".join(parts) + text


def _indented_cells(cells: EditedCells, level: int) -> str:
    """Edited cells as ``json.dumps(cells.tolist(), indent=1)`` writes them at indentation ``level``."""
    if not len(cells.values):
        return "[]"
    return "[\n" + ",\n".join(_cell_rows(cells, level)) + "\n" + " " * level + "]"


def _cell_rows(cells: EditedCells, level: int) -> list[str]:
    # Each distinct index and value is turned into text once, as json writes it (int and float
    # repr: a float's shortest round-trip form), and the rows are filled in from those texts:
    # no list and no number object per cell. Values are told apart by their bits, so that 0.0
    # and -0.0 keep their own texts; json refuses what is not finite, and so does this.
    values = np.ascontiguousarray(cells.values, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise ValueError("Out of range float values are not JSON compliant")
    index = np.asarray(cells.index, dtype=np.int64)
    whole = np.array([str(n) for n in range(int(index.min()), int(index.max()) + 1)], dtype=object)
    index = index - int(index.min())
    distinct, which = np.unique(values.view(np.int64), return_inverse=True)
    texts = np.array([float.__repr__(v) for v in distinct.view(np.float64).tolist()], dtype=object)
    item, number = "\n" + " " * (level + 1), "\n" + " " * (level + 2)
    row = item[1:] + "[" + number + "%s," + number + "%s," + number + "%s," + number + "%s" + item + "]"
    slices = []
    for start in range(0, len(values), _CELL_SLICE):  # slices: saves run beside the window's thread
        rows = index[start:start + _CELL_SLICE]
        columns = (whole[rows[:, 0]].tolist(), whole[rows[:, 1]].tolist(), whole[rows[:, 2]].tolist(),
                   texts[which[start:start + _CELL_SLICE]].tolist())
        slices.append(",\n".join(map(row.__mod__, zip(*columns))))
    return slices
