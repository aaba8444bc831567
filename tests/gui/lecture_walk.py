"""A lecture given with a clicker, as the room sees it: PageDown (or PageUp) pressed on the stage until
nothing moves, and at each press what the stage shows — the scene, where it is in its view, the title,
the caption and every text its figure draws (read from an SVG rendering of the figure alone: the caption
under it does not count). Used in this process and in a two-screen process of its own."""

from __future__ import annotations

import re
import time

from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from stage_measure import drawn_texts

# A number a caption states about a cell: a weight or a score, written with two decimals or more
# ("0.68", "0.1385", "1.00"); "head 4.2", "d_k = 64" or "√64 = 8" are not cells.
CELL_NUMBER = re.compile(r"(?<![\d.])[−-]?\d+\.(\d{2,})(?![\d.])")
DRAWN_NUMBER = re.compile(r"[−-]?\d+\.\d+")


def idle(window, timeout: float = 120.0) -> None:
    """Turn the event loop until the scene asked for is drawn whole (the Scenes panel's sceneDrawn has
    come) and the window has nothing left to compute or draw."""
    app = QtWidgets.QApplication.instance()
    deadline = time.monotonic() + timeout
    busy = lambda: (window.scenes.showing() or window.trained.room.worker.is_busy() or window.drawing()
                    or window.studio.computing())
    while busy() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.002)
    assert not busy(), "the stage was never drawn"
    for _ in range(3):
        app.processEvents()


def figure_texts(present) -> list[str]:
    """Every text the stage's figure draws: the steps table's cells and labels (Step by step), else the
    body's content (the heatmaps' cells and labels, a lent view's plots, a card)."""
    stage = present.stage
    widget = getattr(present, "steps_table", None) if present.view == "Step by step" and present.card is None \
        else stage.content
    if widget is None:
        return []
    return [text for text, _ in drawn_texts(widget)]


def shown(window) -> dict:
    """What the stage shows now."""
    p = window.present
    stage = p.stage
    return {**_where(window), "title": stage.whole_title, "caption": stage.caption.text(),
            "texts": figure_texts(p)}


def press_through(window, key=QtCore.Qt.Key_PageDown, most: int = 200, read: bool = True) -> list[dict]:
    """What the stage shows before the first press of ``key`` and after each, until a press moves
    nothing (the lecture's end, or its start for PageUp)."""
    stage = window.present.stage
    idle(window)
    seen = [shown(window) if read else _where(window)]
    for _ in range(most):
        QTest.keyClick(stage, key)
        idle(window)
        now = shown(window) if read else _where(window)
        if (now["scene"], now["view"], now["position"]) == (seen[-1]["scene"], seen[-1]["view"],
                                                            seen[-1]["position"]):
            return seen
        seen.append(now)
    raise AssertionError(f"{most} presses of {key} and the lecture never ended")


def _where(window) -> dict:
    p = window.present
    return {"scene": window.scenes.current, "view": p.view, "position": p.position(),
            "last_position": p.last_position(), "card": p.card is not None}


def caption_numbers(caption: str) -> list[tuple[str, int]]:
    """(number, decimals) of every cell number a caption states."""
    return [(m.group(0).replace("−", "-"), len(m.group(1))) for m in CELL_NUMBER.finditer(caption)]


def drawn_numbers(texts) -> list[str]:
    """Every number written in ``texts`` (a cell "0.6812", a vector "(0.44, 0.65, 0.57)")."""
    return [n.replace("−", "-") for t in texts for n in DRAWN_NUMBER.findall(t)]


def is_drawn(number: str, decimals: int, drawn) -> bool:
    """True when a drawn number, written with at least ``decimals`` decimals, is ``number`` to that many."""
    want = round(float(number), decimals)
    for d in drawn:
        places = len(d.split(".")[1])
        if places >= decimals and abs(round(float(d), decimals) - want) < 0.5 * 10 ** -decimals:
            return True
    return False


def unseen_caption_numbers(lecture, presses: list[dict]) -> dict:
    """{scene number (from 1): [caption numbers no press of that scene drew in its figure]}."""
    missing = {}
    for i, scene in enumerate(lecture.scenes):
        drawn = drawn_numbers(t for p in presses if p["scene"] == i for t in p["texts"])
        lost = [n for n, d in caption_numbers(scene.caption) if not is_drawn(n, d, drawn)]
        if lost:
            missing[i + 1] = lost
    return missing


def spans(presses: list[dict]) -> dict:
    """{scene index: [positions, in the order pressed]}."""
    out: dict = {}
    for p in presses:
        out.setdefault(p["scene"], []).append(p["position"])
    return out
