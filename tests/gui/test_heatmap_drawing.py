"""A heatmap draws the colours of its values, leaves masked cells to the hatching, and is
not drawn again when its data did not change."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.gui.views.heatmap import WEIGHTS_CMAP, Heatmap

from gui_helpers import shown_canvas

VALUES = np.array([[0.0, 1.0, 0.5],
                   [1.0, 0.0, 0.25]])
MASKED = np.array([[False, False, True],
                   [False, False, False]])
LABELS = dict(row_labels=["a", "b"], col_labels=["x", "y", "z"])


@pytest.fixture
def canvas(qtbot):
    heatmap = Heatmap("test", WEIGHTS_CMAP)
    heatmap.overlay.show_values = False  # colours only: no text over the sampled pixels
    canvas = shown_canvas(qtbot, heatmap, 420, 320)
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


def _ink(image: QtGui.QImage, rect: QtCore.QRect, dark: bool) -> np.ndarray:
    """Which pixels of ``rect`` are the text's (near white, or near black for dark text)."""
    rgb = np.array([[image.pixelColor(x, y).getRgb()[:3] for x in range(rect.left() + 2, rect.right() - 1)]
                    for y in range(rect.top() + 2, rect.bottom() - 1)], dtype=int)
    return rgb.max(axis=2) < 90 if dark else rgb.min(axis=2) > 190


def _centre(ink: np.ndarray) -> tuple[float, float]:
    ys, xs = np.nonzero(ink)
    return (xs.min() + xs.max()) / 2, (ys.min() + ys.max()) / 2


def test_cell_values_on_the_screen_are_the_texts_a_figure_draws(qtbot):
    # The screen copies each value from a picture of its text made once; a figure draws the texts
    # themselves. Both show the same text in the same place, and a changed value its new text.
    from attn_studio.gui.views.token_axis import exporting

    heatmap = Heatmap("test", WEIGHTS_CMAP)
    canvas = shown_canvas(qtbot, heatmap, 420, 320)
    labels = dict(row_labels=["a", "b"], col_labels=["x", "y"])
    values = np.array([[0.07, 0.93], [0.5, 0.25]])
    heatmap.set_data(values, masked=np.zeros((2, 2), dtype=bool), levels=(0.0, 1.0), **labels)

    def inks(image, values):
        dark = heatmap._dark_text(values)
        return {(i, j): _ink(image, canvas.mapFromScene(heatmap.cell_scene_rect(i, j)).boundingRect(), dark[i, j])
                for i in range(2) for j in range(2)}

    def figure():
        image = QtGui.QImage(canvas.size(), QtGui.QImage.Format_ARGB32_Premultiplied)
        image.fill(QtCore.Qt.white)
        with exporting():
            QtWidgets.QWidget.render(canvas, image)  # the widget as it draws itself (pyqtgraph's is the scene's)
        return image

    screen = inks(canvas.grab().toImage(), values)
    assert heatmap.overlay.last_text_px >= 7  # the values are written
    drawn = inks(figure(), values)
    assert {bool(heatmap._dark_text(values)[i, j]) for i in range(2) for j in range(2)} == {True, False}
    for cell, ink in screen.items():
        assert ink.sum() > 15, cell
        assert abs(int(ink.sum()) - int(drawn[cell].sum())) <= 0.3 * drawn[cell].sum(), cell
        assert np.allclose(_centre(ink), _centre(drawn[cell]), atol=1.0), cell

    changed = values.copy()
    changed[0, 0] = 0.71  # another text, the other colour
    heatmap.set_data(changed, masked=np.zeros((2, 2), dtype=bool), levels=(0.0, 1.0), **labels)
    again = inks(canvas.grab().toImage(), changed)
    assert heatmap._dark_text(changed)[0, 0] != heatmap._dark_text(values)[0, 0]
    drawn = inks(figure(), changed)
    assert abs(int(again[(0, 0)].sum()) - int(drawn[(0, 0)].sum())) <= 0.3 * drawn[(0, 0)].sum()
    assert np.array_equal(again[(1, 1)], screen[(1, 1)])  # an unchanged value looks the same

    # Other levels: the same texts in the other colour (0.93 is now at the dark end).
    dark_before = heatmap._dark_text(changed)
    heatmap.set_data(changed, masked=np.zeros((2, 2), dtype=bool), levels=(0.9, 1.0), **labels)
    recoloured = inks(canvas.grab().toImage(), changed)
    drawn = inks(figure(), changed)
    assert dark_before[0, 1] and not heatmap._dark_text(changed)[0, 1]
    for cell, ink in recoloured.items():
        assert abs(int(ink.sum()) - int(drawn[cell].sum())) <= 0.3 * drawn[cell].sum(), cell


def test_a_colour_bar_relabelled_to_an_earlier_scale_plays_the_picture_it_drew(qtbot, monkeypatch):
    """A new sentence moves the scores' bar from ±20 to ±30 and back: the bar draws ±20 as it drew it before,
    pixel for pixel, without working its labels out again; a figure (no item cache) still draws its own."""
    from attn_studio.gui.qt.pg import pg
    from attn_studio.gui.views.heatmap import SCORES_CMAP, set_bar_levels
    from attn_studio.gui.views.heatmap_canvas import HeatmapCanvas

    heatmap = Heatmap("scores", SCORES_CMAP)
    canvas = HeatmapCanvas(heatmap)
    qtbot.addWidget(canvas)
    canvas.resize(380, 330)
    canvas.show()
    qtbot.waitExposed(canvas)
    bar = canvas.bar
    worked_out = []
    real = pg.AxisItem.generateDrawSpecs
    monkeypatch.setattr(pg.AxisItem, "generateDrawSpecs",
                        lambda axis, p: (worked_out.append(axis), real(axis, p))[1])

    def bar_pixels():
        box = canvas.mapFromScene(bar.axis.mapRectToScene(bar.axis.rect())).boundingRect()
        return canvas.grab(box).toImage()

    set_bar_levels(bar, (-20.0, 20.0), 4)
    first = bar_pixels()
    set_bar_levels(bar, (-30.0, 30.0), 4)
    other = bar_pixels()
    assert bar.axis in worked_out and other != first  # a new scale is drawn: "−30", "30"
    del worked_out[:]
    set_bar_levels(bar, (-20.0, 20.0), 4)
    again = bar_pixels()
    assert bar.axis not in worked_out  # played, not worked out again
    assert again == first
    # A figure draws the bar afresh (its items uncached), with the same labels.
    bar.axis.setCacheMode(QtWidgets.QGraphicsItem.NoCache)
    bar.axis.picture = None
    figure = bar_pixels()
    assert bar.axis in worked_out and figure == first
