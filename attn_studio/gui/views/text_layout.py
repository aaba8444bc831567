"""Texts laid out and measured once: the token labels and cell values of every heatmap share them.

:func:`laid_out` keeps a text prepared for the screen per font (the same token on every head's map,
the same value in many cells); :func:`label_measures` and :func:`token_labels` keep each token's
elided label and its width per font, and the last few whole label lists (the stages and heads of
one sentence share their tokens). :func:`font_pixels` is a font's size on the screen.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui

MEASURES_KEPT = 20_000  # token measurements kept per font (then forgotten and measured again)
_MEASURES: dict = {}  # (font key, elision limit) -> {token: (label, width in pixels)}
LISTS_KEPT = 8  # whole label lists kept (the oldest forgotten first)
_LISTS: dict = {}  # (font key, elision limit, positions, tokens) -> ([(position, label)], widest label in pixels)

LAID_OUT_KEPT = 20_000  # texts laid out for the screen kept (then forgotten and laid out again)
_LAID_OUT: dict = {}  # (font key, text) -> laid_out(): a new sentence's labels on 15 maps are laid out once


def laid_out(text: str, font: QtGui.QFont, font_key: str | None = None) -> tuple[QtGui.QStaticText, float, float]:
    """``text`` laid out once in ``font`` (whose ``key()`` is ``font_key``, when known) for the screen:
    (QStaticText, half its width, half its height). Kept per font and text: the same token on every head's
    map and the same value in many cells are laid out once, drawn again for a third of the cost."""
    key = (font.key() if font_key is None else font_key, text)
    found = _LAID_OUT.get(key)
    if found is None:
        if len(_LAID_OUT) >= LAID_OUT_KEPT:
            _LAID_OUT.clear()
        static = QtGui.QStaticText(text)
        static.setTextFormat(QtCore.Qt.PlainText)
        static.prepare(QtGui.QTransform(), font)
        size = static.size()
        found = _LAID_OUT[key] = (static, size.width() / 2, size.height() / 2)
    return found


def font_pixels(font: QtGui.QFont) -> float:
    """The size of ``font`` in pixels on the screen (a point size at the screen's logical dpi)."""
    if font.pixelSize() > 0:
        return float(font.pixelSize())
    screen = QtGui.QGuiApplication.primaryScreen()
    dpi = screen.logicalDotsPerInchY() if screen is not None else 96.0
    return font.pointSizeF() * dpi / 72.0


def label_measures(font: QtGui.QFont, elide_em: float) -> tuple[QtGui.QFontMetricsF, float, dict, tuple]:
    """(metrics, elision limit, {token: (label, width)}, their key) for ``font``, tokens elided past
    ``elide_em`` font heights: every axis with the same font shares the measurements, so a 2,000-token
    sentence measures each word once, not once per axis and edit."""
    metrics = QtGui.QFontMetricsF(font)
    limit = elide_em * metrics.height()
    key = (font.key(), limit)
    cache = _MEASURES.get(key)
    if cache is None or len(cache) > MEASURES_KEPT:
        cache = _MEASURES[key] = {}
    return metrics, limit, cache, key


def token_labels(metrics: QtGui.QFontMetricsF, limit: float, cache: dict, font_key: tuple,
                 positions: tuple, full: list) -> tuple[list[tuple[float, str]], float]:
    """([(position, label)], widest label in pixels) of tokens ``full`` at ``positions``, long tokens
    elided to ``limit`` pixels (``cache`` and ``font_key``: :func:`label_measures`'). The stages and heads
    of one sentence share their tokens: the labels of the last few token lists are kept whole."""
    key = (font_key, positions, tuple(full))
    known_list = _LISTS.get(key)
    if known_list is None:
        texts, widest = [], 0.0
        for t in full:
            known = cache.get(t)
            if known is None:
                # A 20,000-character word would make the axis (and every repaint) hundreds of
                # thousands of pixels wide: measure and draw at most a bounded prefix.
                label = metrics.elidedText(t[:400], QtCore.Qt.ElideRight, limit) if len(t) > 4 else t
                known = cache[t] = (label, metrics.horizontalAdvance(label))
            texts.append(known[0])
            widest = max(widest, known[1])
        known_list = (list(zip(positions, texts)), widest)
        if len(_LISTS) >= LISTS_KEPT:
            _LISTS.pop(next(iter(_LISTS)))
        _LISTS[key] = known_list
    return known_list
