"""Colours of a heatmap: its colour maps and the colour bar that reads them.

A colour map is built once per map and theme (:func:`themed_palette`: the map, its lookup
table, its 32-bit pixels and the brightness of each colour) and shared by every heatmap that
draws with it; on the dark theme it is dimmed (``DARK_DIM``). A colour bar's scale ends at a
round number (:func:`nice_ceil`, :func:`symmetric_levels`) and is labelled at both ends and at 0
(:func:`bar_ticks`, :func:`label_colour_bar`, :func:`set_bar_levels`), on the window, the stage
and the page alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6 import QtGui, QtWidgets

from .. import presentation
from ..qt.pg import pg
from .heatmap_image import argb_table

DARK_DIM = 0.82  # on a dark theme colour maps are drawn this much darker: no glaring light cells


def themed_colormap(name: str):
    """Colour map ``name`` for the current theme: as it is on light themes; on the dark theme
    every colour scaled by DARK_DIM, so that the map's bright end (viridis' yellow, the
    near-white middle of the diverging scores map) does not glare on a projector. The
    colour bar shows the same dimmed map, so colours still read against it.

    Built once per map and theme and shared (treat it as read-only): a theme switch restyles
    every heatmap of the window, and building a map makes a colour object per stop."""
    return themed_palette(name).colormap


@dataclass(frozen=True)
class Palette:
    """A colour map ready to draw with: ``colormap`` (for colour bars), ``lut`` (256 RGBA bytes),
    ``table`` (the same as 32-bit pixels, :mod:`.heatmap_image`) and ``luminance`` (the
    brightness of each of the 256 colours, for the cell text's colour). Shared, read-only."""

    colormap: object
    lut: np.ndarray
    table: np.ndarray
    luminance: np.ndarray


_PALETTES: dict[tuple[str, bool], Palette] = {}


def themed_palette(name: str) -> Palette:
    """The :class:`Palette` of colour map ``name`` for the current theme (see :func:`themed_colormap`),
    built the first time it is asked for and the same object afterwards."""
    dark = presentation.STYLE.theme.name == "dark"
    palette = _PALETTES.get((name, dark))
    if palette is None:
        palette = _PALETTES[(name, dark)] = _build_palette(name, dark)
    return palette


def _build_palette(name: str, dark: bool) -> Palette:
    cmap = pg.colormap.get(name)
    if dark:
        colors = cmap.getColors(mode="byte").astype(np.float64)
        colors[:, :3] *= DARK_DIM
        cmap = pg.ColorMap(cmap.pos, np.round(colors).astype(np.uint8), name=cmap.name)
    lut = cmap.getLookupTable(nPts=256)
    lut.flags.writeable = False
    rgb = cmap.getLookupTable(nPts=256, alpha=False).astype(np.float64)
    luminance = rgb @ np.array([0.299, 0.587, 0.114])
    luminance.flags.writeable = False
    return Palette(cmap, lut, _shared_table(lut), luminance)


_TABLES: dict[bytes, np.ndarray] = {}


def _shared_table(lut: np.ndarray) -> np.ndarray:
    """The ARGB32 table of ``lut``, one object per colour map: a picture prepared with one heatmap's
    table is recognised by every heatmap drawing the same colours (``Picture.table is ...``)."""
    key = np.ascontiguousarray(lut).tobytes() + str(lut.shape).encode()
    table = _TABLES.get(key)
    if table is None:
        table = _TABLES[key] = argb_table(lut)
        table.flags.writeable = False
    return table


def nice_ceil(m: float) -> float:
    """``m`` rounded up to 1, 1.5, 2, 3, 4, 5, 6, 8 or 10 times a power of ten.

    Colour scales end at such a number, so that they hold still while a
    lecturer edits (instead of changing with every keystroke) and read cleanly.
    """
    if not np.isfinite(m) or m <= 0:
        return 1.0
    power = 10.0 ** np.floor(np.log10(m))
    for step in (1, 1.5, 2, 3, 4, 5, 6, 8, 10):
        if step * power >= m * (1 - 1e-12):
            return float(step * power)
    return float(10 * power)


def symmetric_levels(*arrays) -> tuple[float, float]:
    """Colour levels (-m, m) around 0 covering every finite value of ``arrays``, m a nice number."""
    finite = [np.asarray(a)[np.isfinite(a)] for a in arrays]
    finite = [f for f in finite if f.size]
    m = nice_ceil(max((float(np.abs(f).max()) for f in finite), default=1.0))
    return -m, m


def bar_text(value: float, digits: int | None = None) -> str:
    """A colour bar's label: a whole level as a whole number ("0", "1", "−8"), another at the cells'
    precision (``digits`` decimals, the precision setting by default), with a true minus."""
    value = float(value)
    digits = presentation.digits() if digits is None else int(digits)
    if abs(value) >= 1e6:
        # A scale's end is a round number (nice_ceil): "1.5e9", not ten digits or a "(x1e+09)" on the axis.
        mantissa, exponent = f"{value:.1e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}".replace("-", "−")
    text = f"{value:.0f}" if value == round(value) else f"{value:.{digits}f}"
    return "0" if text in ("0", "-0") or float(text) == 0 else text.replace("-", "−")


def bar_ticks(levels, digits: int | None = None) -> list[tuple[float, str]]:
    """The labels of a colour bar over ``levels`` (lo, hi): both ends, and 0 when it lies inside."""
    lo, hi = float(levels[0]), float(levels[1])
    ticks = [(lo, bar_text(lo, digits))]
    if lo < 0 < hi:
        ticks.append((0.0, "0"))
    return ticks + [(hi, bar_text(hi, digits))]


def label_colour_bar(bar, levels=None, digits: int | None = None, least_width: float = 0) -> None:
    """Label colour bar ``bar`` (a ``pg.ColorBarItem``) at both ends and at 0 when 0 lies inside, its axis
    wide enough for the labels in its present font and its end labels allowed past its ends (half a line:
    they are centred on the ends). Call again after the font changes (a restyle) or the levels do."""
    levels = tuple(levels) if levels is not None else tuple(bar.levels())
    axis = bar.axis
    ticks = bar_ticks(levels, digits)
    axis.setTicks([ticks, []])
    font = axis.style.get("tickFont") or QtWidgets.QApplication.font()
    metrics = QtGui.QFontMetricsF(font)
    half_line = math.ceil(metrics.height() / 2) + 2
    if axis.style.get("hideOverlappingLabels") != half_line:
        axis.setStyle(hideOverlappingLabels=half_line)
    widest = max(metrics.horizontalAdvance(text) for _, text in ticks)
    offset = axis.style.get("tickTextOffset", [5, 2])[0]
    width = max(math.ceil(widest + max(axis.style.get("tickLength", 5), 0) + offset + 6), math.ceil(least_width))
    if axis.width() != width:
        axis.setWidth(width)
    axis.picture = None
    axis.update()


def set_bar_levels(bar, levels, digits: int | None = None) -> None:
    """Give colour bar ``bar`` the ``levels`` (lo, hi) and label it as :func:`label_colour_bar` does (both
    ends, and 0 inside), relabelling only when the levels, the precision or the font changed: the window's
    bars read like the stage's and the page's, whatever the scale (a bar of ±1.5e9 read only "0")."""
    levels = (float(levels[0]), float(levels[1]))
    if tuple(bar.levels()) != levels:
        bar.setLevels(values=levels)
    digits = presentation.digits() if digits is None else int(digits)
    # A scale's ends are round numbers (nice_ceil): written with the decimals they need, at most the
    # precision's ("1.5", not "1.5000"), so that the bar takes no width from the heatmap beside it.
    digits = next((d for d in range(digits + 1) if all(abs(round(v, d) - v) < 1e-12 for v in levels)), digits)
    font = bar.axis.style.get("tickFont") or QtWidgets.QApplication.font()
    key = (levels, digits, font.key())
    if getattr(bar, "_labelled", None) != key:
        # Never narrower than the bar first was: the window's heatmaps are laid out around that width
        # (their labels' slant and height), and short labels gain nothing by taking it back.
        least = getattr(bar, "_least_width", None)
        if least is None:
            least = bar._least_width = bar.axis.width()
        label_colour_bar(bar, levels, digits, least_width=least)
        bar._labelled = key
        bar._relabel_with = relabel_bar  # how a restyle (presentation, a layer below) labels it again


def relabel_bar(bar, digits: int) -> None:
    """Write a labelled colour bar's labels again at ``digits`` decimals (the precision changed)."""
    if bar is not None and getattr(bar, "_labelled", None) is not None:
        set_bar_levels(bar, bar.levels(), digits)
