"""Every panel File → Export offers is the same figure at 1024×600, 1280×720 and 1600×900.

The issue's rule for figures laid out for the page, over every panel the toy model's window
offers (the trained model's panels and the training lab's are tested beside their own code):
exported as SVG at each window size, its texts and its size are the same, and no text in it is
one of the window's controls or hints (read from the window's own widgets, not from a list).
"""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets

from attn_studio.gui.files import export, panels
from gui_helpers import settle
from stage_measure import svg_size, svg_texts

SIZES = [(1024, 600), (1280, 720), (1600, 900)]
HINTS = ("Click", "click", "hover", "Hover", "Press", "Drag", "drag")


@pytest.fixture
def window(shared_window):
    return shared_window


def _control_texts(window) -> set[str]:
    """What the window's buttons, check boxes and radio buttons say (a figure never shows them)."""
    texts = set()
    for kind in (QtWidgets.QAbstractButton,):
        for widget in window.findChildren(kind):
            text = widget.text().replace("&", "").strip()
            if len(text) > 3:
                texts.add(text)
    return texts


def _panels(window) -> list[str]:
    names = []
    for name in panels.available(window):
        if name == "window" or name.startswith("training:"):
            continue
        if "…" in name:  # head:1…head:N
            names += ["head:1", name.split("…")[1]]
        else:
            names.append(name)
    return names


def test_every_panel_is_the_same_figure_at_three_window_sizes_without_controls(window):
    controls = _control_texts(window)
    figures: dict = {}
    for width, height in SIZES:
        window.fit_to_screen(QtCore.QRect(0, 0, width, height))
        window.resize(width, height)
        settle(window)
        for name in _panels(window):
            svg = export.svg_bytes(export.find_panel(window, name))
            texts = [text for text, _ in svg_texts(svg)]
            shown = [t for t in texts if t in controls or any(h in t for h in HINTS)]
            assert not shown, f"{name} at {width}×{height} shows the window's controls or hints: {shown}"
            figures.setdefault(name, []).append((texts, svg_size(svg)))
    assert {"heatmaps", "compare", "outputs", "positions", "steps", "variance", "saturation",
            "geometry"} <= set(figures), sorted(figures)
    for name, seen in figures.items():
        first_texts, first_size = seen[0]
        for (texts, size), (width, height) in zip(seen[1:], SIZES[1:]):
            assert size == first_size, f"{name}: {first_size} at {SIZES[0]}, {size} at {width}×{height}"
            assert texts == first_texts, f"{name}: its texts changed at {width}×{height}"
