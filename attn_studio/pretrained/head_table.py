"""The Head Lab as a table: one row per head, for ``attn-studio heads`` and anyone with a spreadsheet.

``head_table(run, find=("it", "animal"), importance=True)`` gathers every head's
report card (:func:`~attn_studio.pretrained.heads.head_report`), optionally the
heads that link two words (:func:`~attn_studio.pretrained.heads.find_heads`) and
each head's importance (:func:`~attn_studio.pretrained.heads.head_importance`);
:func:`table_csv` writes it as CSV text and :func:`summary` names the top heads
in a few lines. Layers and heads count from 1 here, as the window and the
command line show them (the functions of ``heads.py`` count from 0).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

import numpy as np

from .detect import DETECTOR_NAMES, DETECTORS, Detection, detect, repeated_tokens, top_heads
from .errors import ModelError
from .heads import ROLE_MEASURES, ROLE_NAMES, HeadReport, find_heads, head_importance, head_report

# CSV column names of the report measures ("self", not the Python field's "self_").
MEASURE_COLUMNS = {name: name.rstrip("_") for name in HeadReport.MEASURES}
TOKEN_INDEX = re.compile(r"#(\d+)")


@dataclass(frozen=True)
class HeadTable:
    """Everything the table holds: the run's model name and tokens, the report,
    ``importance (L, H)`` or None, ``found`` (``find_heads``'s list) with
    the ``query`` and ``key`` it was asked for, or None, and ``detection`` (the
    head detector's answer, ``detect.detect``), or None."""

    model: str
    tokens: tuple
    report: HeadReport
    importance: np.ndarray | None = None
    found: tuple | None = None
    query: str | None = None
    key: str | None = None
    detection: Detection | None = None

    @property
    def find_column(self) -> str | None:
        return None if self.found is None else f"{self.query} -> {self.key}"


def parse_item(text: str):
    """A word of the sentence, or ``#N`` for token N counted from 0 (the [CLS] of BERT is #0)."""
    match = TOKEN_INDEX.fullmatch(text.strip())
    return int(match.group(1)) if match else text


def repeated_source(length: int, seed: int) -> str:
    """How the table names the detector's sequence: "20 random tokens twice, seed 0"."""
    return f"{length} random tokens twice, seed {seed}"


def detect_run(model, length: int = 20, seed: int = 0, edits=None):
    """The model's run on ``length`` random tokens twice from ``seed`` (``detect.repeated_tokens``),
    with ``edits`` (a trained model's silenced or scaled heads) when given."""
    ids = repeated_tokens(model, length, seed)
    return model.run_ids(ids) if edits is None else model.run_ids(ids, edits=edits)


def head_table(run, find: tuple[str, str] | None = None, importance: bool = False,
               progress=None, detect_on=None, detect_source: str | None = None) -> HeadTable:
    """Measure every head of ``run``: the report, and on request a find, the importance and the detector.

    ``find`` is ``(query, key)``: words of the sentence or ``#N`` token indices.
    ``progress(done, total)`` is passed to :func:`head_importance`. ``detect_on``
    is the run the head detector scores (:func:`detect_run`: repeated random
    tokens), named in the table by ``detect_source``. Raises :class:`ModelError`
    for a word not in the sentence or a bad index, before any importance is computed.
    """
    report = head_report(run)
    found = query = key = None
    if find is not None:
        query, key = find
        found = tuple(find_heads(run, parse_item(query), parse_item(key)))
    detection = None if detect_on is None else detect(detect_on, detect_source or "")
    scores = head_importance(run, progress) if importance else None
    return HeadTable(run.model.name, tuple(run.tokens), report, scores, found, query, key, detection)


def table_rows(table: HeadTable) -> tuple[list[str], list[list]]:
    """``(header, rows)``: one row per head in (layer, head) order, layer and head from 1."""
    header = ["layer", "head", "role", *MEASURE_COLUMNS.values()]
    if table.importance is not None:
        header.append("importance")
    detection = table.detection
    if detection is not None:
        header += [f"{name}_score" for name in DETECTORS] + ["detected"]
    weights = None
    if table.found is not None:
        header.append(table.find_column)
        weights = {(layer, head): weight for layer, head, weight in table.found}
    report = table.report
    rows = []
    for layer, head in np.ndindex(*report.role.shape):
        row = [layer + 1, head + 1, str(report.role[layer, head])]
        row += [float(getattr(report, name)[layer, head]) for name in MEASURE_COLUMNS]
        if table.importance is not None:
            row.append(float(table.importance[layer, head]))
        if detection is not None:
            row += [float(detection.scores[name][layer, head]) for name in DETECTORS]
            row.append(str(detection.roles[layer, head]))
        if weights is not None:
            row.append(weights[(layer, head)])
        rows.append(row)
    return header, rows


def table_csv(table: HeadTable) -> str:
    """The table as CSV text (numbers written in full, ``repr`` precision)."""
    header, rows = table_rows(table)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([[repr(v) if isinstance(v, float) else v for v in row] for row in rows])
    return out.getvalue()


def _name(layer: int, head: int) -> str:
    return f"layer {layer + 1} head {head + 1}"


def summary(table: HeadTable, top: int = 5) -> str:
    """A few lines for the terminal: heads with a clear role, the strongest links, the most important heads."""
    report = table.report
    on = " (the detector's)" if table.detection is not None and table.tokens == table.detection.tokens else ""
    lines = [f"{table.model}: {report.role.shape[0]} layers x {report.role.shape[1]} heads, "
             f"{len(table.tokens)} tokens{on}"]
    lines.append("Heads with a clear role (the share of attention that names it):")
    any_role = False
    for measure in ROLE_MEASURES:
        role = ROLE_NAMES[measure]
        where = np.argwhere(report.role == role)
        if not len(where):
            continue
        any_role = True
        values = getattr(report, measure)
        ranked = sorted(where.tolist(), key=lambda lh: (-values[lh[0], lh[1]], lh[0], lh[1]))
        shown = ", ".join(f"{_name(l, h)} ({values[l, h]:.2f})" for l, h in ranked[:top])
        more = f" and {len(ranked) - top} more" if len(ranked) > top else ""
        lines.append(f"  {role}: {shown}{more}")
    if not any_role:
        lines.append("  none")
    counts = {name: int((report.role == name).sum()) for name in ("broad", "mixed")}
    lines.append(f"  broad: {counts['broad']} heads, mixed: {counts['mixed']} heads")
    if table.found is not None:
        lines.append(f"Heads that send {table.query!r} to {table.key!r} (share of its attention):")
        lines += [f"  {_name(l, h)}: {w:.3f} ({report.role[l, h]})" for l, h, w in table.found[:top]]
    detection = table.detection
    if detection is not None:
        lines.append(f"Head detector on {detection.source or 'the sequence'} (score: the share of a head's "
                     "attention on its kind's pattern):")
        lines.append(f"  tokens: {' '.join(detection.tokens)}")
        for name in DETECTORS:
            kind = DETECTOR_NAMES[name]
            shown = ", ".join(f"{_name(l, h)} ({s:.2f})" for l, h, s in top_heads(detection.scores[name], top))
            named = [_name(int(l), int(h)) for l, h in np.argwhere(detection.roles == kind)]
            lines.append(f"  {kind}: {shown}; detected: {', '.join(named) if named else 'none'}")
    if table.importance is not None:
        lines.append("Most important heads (1 - cosine of the sentence embedding without the head):")
        order = np.argsort(-table.importance.ravel(), kind="stable")[:top]
        heads = report.role.shape[1]
        lines += [f"  {_name(i // heads, i % heads)}: {table.importance.flat[i]:.4f}" for i in order]
    return "\n".join(lines)

