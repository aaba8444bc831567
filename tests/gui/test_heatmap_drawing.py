"""A heatmap draws the colours of its values, leaves masked cells to the hatching, and is
not drawn again when its data did not change."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from attn_studio.gui.views.heatmap import WEIGHTS_CMAP, Heatmap
from attn_studio.gui.views.heatmap_view import HeatmapCanvas

VALUES = np.array([[0.0, 1.0, 0.5],
                   [1.0, 0.0, 0.25]])
MASKED = np.array([[False, False, True],
                   [False, False, False]])
LABELS = dict(row_labels=["a", "b"], col_labels=["x", "y", "z"])


@pytest.fixture
def canvas(qtbot):
    heatmap = Heatmap("test", WEIGHTS_CMAP)
    heatmap.overlay.show_values = False  # colours only: no text over the sampled pixels
    canvas = HeatmapCanvas(heatmap, with_bar=False)
    qtbot.addWidget(canvas)
    canvas.resize(420, 320)
    canvas.show()
    qtbot.waitExposed(canvas)
    heatmap.set_data(VALUES, masked=MASKED, levels=(0.0, 1.0), **LABELS)
    return canvas


def _pixel(canvas, image: QtGui.QImage, i: int, j: int) -> tuple[int, int, int]:
    # A quarter of the way into the cell: clear of the outline and the pointer's edge.
    rect = canvas.mapFromScene(canvas.heatmap.cell_scene_rect(i, j)).boundingRect()
    point = QtCore.QPoint(rect.left() + rect.width() // 4, rect.top() + rect.height() // 4)
    colour = image.pixelColor(point)
    return colour.red(), colour.green(), colour.blue()


def test_cells_show_the_colour_map_and_masked_cells_the_hatching(canvas):
    lut = canvas.heatmap.colormap.getLookupTable(nPts=256, alpha=False)
    image = canvas.grab().toImage()
    for i, j in ((0, 0), (0, 1), (1, 0), (1, 1)):
        want = lut[255 if VALUES[i, j] == 1.0 else 0]
        got = _pixel(canvas, image, i, j)
        assert max(abs(int(a) - int(b)) for a, b in zip(got, want)) <= 2, (i, j, got, want)
    masked = _pixel(canvas, image, 0, 2)
    # Neither colour map end: the masked cell shows the mask's tone, not a value.
    assert all(max(abs(int(a) - int(b)) for a, b in zip(masked, lut[k])) > 10 for k in (0, 128, 255))


def test_the_same_data_again_changes_nothing_and_new_data_is_drawn(canvas):
    heatmap = canvas.heatmap
    shown = heatmap.image.image
    heatmap.set_data(VALUES.copy(), masked=MASKED.copy(), levels=(0.0, 1.0), **LABELS)
    assert heatmap.image.image is shown  # not handed to the image again: nothing to repaint
    changed = VALUES.copy()
    changed[1, 1] = 1.0
    heatmap.set_data(changed, masked=MASKED, levels=(0.0, 1.0), **LABELS)
    assert heatmap.image.image is not shown
    assert heatmap.image.image[1, 1] == 1.0
    lut = heatmap.colormap.getLookupTable(nPts=256, alpha=False)
    got = _pixel(canvas, canvas.grab().toImage(), 1, 1)
    assert max(abs(int(a) - int(b)) for a, b in zip(got, lut[255])) <= 2
    # A caller reusing its array in place is still drawn: the heatmap keeps its own copy to compare.
    changed[1, 1] = 0.0
    heatmap.set_data(changed, masked=MASKED, levels=(0.0, 1.0), **LABELS)
    assert heatmap.image.image[1, 1] == 0.0


def test_new_colours_redraw_the_same_numbers(canvas):
    heatmap = canvas.heatmap
    heatmap.set_colormap("magma")
    lut = heatmap.colormap.getLookupTable(nPts=256, alpha=False)
    got = _pixel(canvas, canvas.grab().toImage(), 0, 1)
    assert max(abs(int(a) - int(b)) for a, b in zip(got, lut[255])) <= 2
    np.testing.assert_array_equal(heatmap.data.values, VALUES)
