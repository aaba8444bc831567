"""PNG figures of a training run, drawn with QPainter from `attn_studio.training.report.figure_data`.

Each figure is laid out for the page at its own size (never grabbed from a window): a title, the
axes with their ticks and labels, one line per arm, a legend. Curves against the step are noisy
(each point is one batch), so each arm is drawn faint as measured and bold as the mean of the
last ``SMOOTH`` steps.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

__all__ = ["draw_figure", "write_figures", "SMOOTH"]

SMOOTH = 20
# One colour per arm, in the arms' order (colour-blind safe: Okabe & Ito).
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7")
SIZE = (900, 540)


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]."""
    if high <= low:
        high = low + 1.0
    raw = (high - low) / count
    step = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * step:
            step *= factor
            break
    first = math.ceil(low / step - 1e-9) * step
    return [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]


def _label(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e5 else f"{value:.0e}"


def draw_figure(fig: dict, title: str, scale: float = 2.0) -> QtGui.QImage:
    """One figure (``{"x", "xlabel", "series": {arm: values}}``) as an image ``SIZE`` × ``scale``."""
    width, height = SIZE
    image = QtGui.QImage(int(width * scale), int(height * scale), QtGui.QImage.Format_ARGB32)
    image.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(image)
    painter.setRenderHint(QtGui.QPainter.Antialiasing)
    painter.scale(scale, scale)
    font = painter.font()
    font.setPointSizeF(10)
    painter.setFont(font)
    metrics = QtGui.QFontMetricsF(font)

    x = np.asarray(fig["x"], dtype=float)
    series = {arm: np.asarray(values, dtype=float) for arm, values in fig["series"].items()}
    finite = np.concatenate([v[np.isfinite(v)] for v in series.values()] or [np.zeros(1)])
    y_low, y_high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if 0.0 <= y_low and y_high <= 1.0 and ("accuracy" in title):
        y_low, y_high = 0.0, 1.0
    pad = 0.05 * (y_high - y_low or 1.0)
    y_low, y_high = y_low - pad, y_high + pad
    x_low, x_high = (float(x.min()), float(x.max())) if x.size else (0.0, 1.0)
    if x_high == x_low:
        x_high = x_low + 1.0

    left, right, top, bottom = 70.0, width - 20.0, 45.0, height - 55.0
    to_px = lambda xv, yv: QtCore.QPointF(left + (xv - x_low) / (x_high - x_low) * (right - left),
                                           bottom - (yv - y_low) / (y_high - y_low) * (bottom - top))

    title_font = QtGui.QFont(font)
    title_font.setPointSizeF(13)
    title_font.setBold(True)
    painter.setFont(title_font)
    painter.setPen(QtGui.QColor("black"))
    painter.drawText(QtCore.QRectF(0, 8, width, 30), QtCore.Qt.AlignHCenter | QtCore.Qt.AlignVCenter, title)
    painter.setFont(font)

    grid = QtGui.QPen(QtGui.QColor("#dddddd"), 1)
    axis = QtGui.QPen(QtGui.QColor("black"), 1.2)
    for yv in _ticks(y_low, y_high):
        if y_low <= yv <= y_high:
            p = to_px(x_low, yv)
            painter.setPen(grid)
            painter.drawLine(QtCore.QPointF(left, p.y()), QtCore.QPointF(right, p.y()))
            painter.setPen(axis)
            text = _label(round(yv, 10))
            painter.drawText(QtCore.QPointF(left - 8 - metrics.horizontalAdvance(text), p.y() + 4), text)
    for xv in _ticks(x_low, x_high, 6):
        if x_low <= xv <= x_high:
            p = to_px(xv, y_low)
            painter.setPen(grid)
            painter.drawLine(QtCore.QPointF(p.x(), top), QtCore.QPointF(p.x(), bottom))
            painter.setPen(axis)
            text = _label(round(xv, 10))
            painter.drawText(QtCore.QPointF(p.x() - metrics.horizontalAdvance(text) / 2, bottom + 18), text)
    painter.setPen(axis)
    painter.drawRect(QtCore.QRectF(left, top, right - left, bottom - top))
    xlabel = fig.get("xlabel", "")
    painter.drawText(QtCore.QRectF(left, bottom + 26, right - left, 20), QtCore.Qt.AlignHCenter, xlabel)

    smooth = xlabel == "step" and len(x) > SMOOTH
    painter.setClipRect(QtCore.QRectF(left, top, right - left, bottom - top))
    for i, (arm, values) in enumerate(series.items()):
        colour = QtGui.QColor(COLOURS[i % len(COLOURS)])
        if smooth:
            faint = QtGui.QColor(colour)
            faint.setAlpha(60)
            mean = np.convolve(values, np.ones(SMOOTH) / SMOOTH, mode="valid")
            lines = [(values, 1.0, faint), (np.concatenate([np.full(SMOOTH - 1, np.nan), mean]), 2.2, colour)]
        else:
            lines = [(values, 2.2, colour)]
        for ys, width_px, pen_colour in lines:
            painter.setPen(QtGui.QPen(pen_colour, width_px))
            path = QtGui.QPainterPath()
            started = False
            for xv, yv in zip(x, ys):
                if not np.isfinite(yv):
                    started = False
                    continue
                point = to_px(xv, yv)
                if started:
                    path.lineTo(point)
                else:
                    path.moveTo(point)
                    started = True
            painter.drawPath(path)
            if len(x) <= 30:  # few points (accuracy by length): mark each
                painter.setBrush(pen_colour)
                for xv, yv in zip(x, ys):
                    if np.isfinite(yv):
                        painter.drawEllipse(to_px(xv, yv), 2.5, 2.5)
                painter.setBrush(QtCore.Qt.NoBrush)
    painter.setClipping(False)

    # Legend, top right inside the axes.
    rows = list(series)
    box_w = max(metrics.horizontalAdvance(arm) for arm in rows) + 44 if rows else 0
    box = QtCore.QRectF(right - box_w - 10, top + 10, box_w, 20 * len(rows) + 8)
    painter.setPen(QtGui.QPen(QtGui.QColor("#999999"), 1))
    painter.setBrush(QtGui.QColor(255, 255, 255, 230))
    painter.drawRect(box)
    for i, arm in enumerate(rows):
        y = box.top() + 14 + 20 * i
        painter.setPen(QtGui.QPen(QtGui.QColor(COLOURS[i % len(COLOURS)]), 3))
        painter.drawLine(QtCore.QPointF(box.left() + 8, y), QtCore.QPointF(box.left() + 30, y))
        painter.setPen(QtGui.QColor("black"))
        painter.drawText(QtCore.QPointF(box.left() + 36, y + 4), arm)
    painter.end()
    return image


def write_figures(figures: dict[str, dict], folder, prefix: str = "", scale: float = 2.0) -> list[Path]:
    """One PNG per figure in ``folder`` ("<figure>.png", spaces as underscores); returns the paths.

    Needs a QGuiApplication (fonts). Each file goes to a temporary name first, then is renamed.
    """
    folder = Path(folder)
    written = []
    for name, fig in figures.items():
        path = folder / (name.replace(" ", "_") + ".png")
        image = draw_figure(fig, f"{prefix}{name}", scale=scale)
        tmp = path.with_name(f".{path.name}.tmp.png")
        if not image.save(str(tmp), "PNG"):
            raise OSError(f"cannot write {path}")
        tmp.replace(path)
        written.append(path)
    return written


def write_figures_offscreen(figures: dict[str, dict], folder, prefix: str = "") -> list[Path]:
    """``attn-studio train --png``: :func:`write_figures` with no display (fonts need an application)."""
    # A QApplication, as the other commands make, not only a QGuiApplication: called from a console
    # or a test, it is the process's one application, and a window made afterwards needs widgets.
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["attn-studio"])  # noqa: F841 (kept alive)
    return write_figures(figures, folder, prefix=prefix)
