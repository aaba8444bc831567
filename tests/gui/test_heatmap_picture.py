"""A heatmap's picture: pyqtgraph's colours exactly at the seeds' sizes, block means past a screen's
size, made off the GUI thread for a large model and drawn with the new numbers after every edit,
and every cell again in a figure for the page."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtGui, QtWidgets

from attn_studio.gui.files import export
from attn_studio.gui.views.heatmap import SCORES_CMAP, WEIGHTS_CMAP, Heatmap
from attn_studio.gui.views.heatmap_canvas import HeatmapCanvas
from attn_studio.gui.views.heatmap_image import MAX_IMAGE_SIDE, block_mean

from gui_helpers import finish, shown_canvas
from window_reset import quiet


@pytest.fixture
def window(shared_window, qtbot):
    # One window serves the module: its state undone (the shared reset), nothing left computing or
    # fitting, and every heatmap's largest picture back to a screen's (tests shrink it). Checked.
    w = shared_window
    quiet(w, qtbot)
    qtbot.waitUntil(lambda: not any(table.fitting() for table in w.tables.values()), timeout=10_000)
    heatmaps = [canvas.heatmap for canvas in w.findChildren(HeatmapCanvas)]
    for heatmap in heatmaps:
        if heatmap.max_image_side not in (MAX_IMAGE_SIDE, None):  # None: a figure's, every cell drawn
            heatmap.max_image_side = MAX_IMAGE_SIDE
    w.heatmap_view.render()
    finish(w, qtbot)
    assert all(heatmap.max_image_side in (MAX_IMAGE_SIDE, None) for heatmap in heatmaps)
    assert all(heatmap.max_image_side == MAX_IMAGE_SIDE for heatmap in w.heatmap_view.stages.values())
    assert all(heatmap.image.factor == 1 for heatmap in w.heatmap_view.stages.values())
    assert len(w.studio.state.tokens) < 100 and not w.studio.computing()
    yield w
    quiet(w, qtbot)


def _argb(qimage: QtGui.QImage) -> np.ndarray:
    """A QImage's pixels as premultiplied ARGB32 words, (height, width)."""
    image = qimage.convertToFormat(QtGui.QImage.Format_ARGB32_Premultiplied)
    rows = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(image.height(), image.bytesPerLine())
    return rows[:, : 4 * image.width()].copy().view(np.uint32)


def _expected_colours(means: np.ndarray, levels, lut: np.ndarray) -> np.ndarray:
    """The opaque ARGB words the lookup table gives ``means`` (NaN: transparent), worked out here."""
    lo, hi = levels
    assert np.all(lut[:, 3] == 255) if lut.shape[1] == 4 else True
    index = np.clip((np.nan_to_num(means) - lo) * (256.0 / (hi - lo)), 0, 255).astype(np.uint8)
    rgb = lut[index, :3].astype(np.uint32)
    words = (np.uint32(255) << 24) | (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
    return np.where(np.isnan(means), np.uint32(0), words)


def _block_means(values: np.ndarray, ok: np.ndarray, factor: int) -> np.ndarray:
    """Mean of each factor × factor block over its ok cells, a cell at a time (NaN: none)."""
    rows, cols = values.shape
    out = np.full((-(-rows // factor), -(-cols // factor)), np.nan)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            block = (slice(i * factor, (i + 1) * factor), slice(j * factor, (j + 1) * factor))
            if ok[block].any():
                out[i, j] = values[block][ok[block]].mean()
    return out


@pytest.mark.parametrize("shape, factor", [((7, 5), 2), ((9, 10), 3), ((4, 4), 4)])
def test_block_mean_is_the_mean_of_each_blocks_unmasked_cells(shape, factor):
    rng = np.random.default_rng(sum(shape) + factor)
    values = rng.normal(size=shape)
    ok = rng.random(shape) > 0.3
    ok[:factor, :factor] = False  # a block with no cell left: transparent
    np.testing.assert_allclose(block_mean(values, ok, factor), _block_means(values, ok, factor),
                               rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(block_mean(values, None, factor), _block_means(values, np.ones(shape, bool), factor),
                               rtol=1e-12)


@pytest.mark.parametrize("cmap, levels", [(WEIGHTS_CMAP, (0.0, 1.0)), (SCORES_CMAP, (-3.0, 3.0))])
def test_a_small_heatmap_is_coloured_exactly_as_pyqtgraph_colours_it(qtbot, cmap, levels):
    rng = np.random.default_rng(6)
    values = rng.uniform(levels[0] - 0.5, levels[1] + 0.5, size=(6, 6))  # beyond the levels at both ends
    values[2, 3] = np.inf  # an overflow: drawn red by the cells, transparent in the picture
    masked = np.triu(np.ones((6, 6), dtype=bool), 1)
    heatmap = Heatmap("test", cmap)
    heatmap.set_data(values, masked=masked, row_labels=list("abcdef"), col_labels=list("abcdef"), levels=levels)
    heatmap.image.render()
    assert heatmap.image.factor == 1
    reference = pg.ImageItem()
    reference.setImage(heatmap.image.image, levels=levels, lut=heatmap.image.lut, autoLevels=False)
    reference.render()
    np.testing.assert_array_equal(_argb(heatmap.image.qimage), _argb(reference.qimage))


def test_a_matrix_wider_than_the_screen_is_pictured_by_its_block_means(qtbot):
    rng = np.random.default_rng(9)
    values = rng.uniform(0, 1, size=(9, 10))
    masked = np.triu(np.ones((9, 10), dtype=bool), 1)
    heatmap = Heatmap("test", WEIGHTS_CMAP)
    heatmap.max_image_side = 4
    heatmap.set_data(values, masked=masked, row_labels=list("abcdefghi"), col_labels=list("abcdefghij"),
                     levels=(0.0, 1.0))
    assert heatmap.image.factor == 3
    heatmap.image.render()
    pixels = _argb(heatmap.image.qimage)
    assert pixels.shape == (3, 4)
    lut = heatmap.colormap.getLookupTable(nPts=256)
    expected = _expected_colours(_block_means(values, ~masked, 3), (0.0, 1.0), lut)
    np.testing.assert_array_equal(pixels, expected)
    # The numbers stay whole: tooltips, tests and figures read every cell.
    np.testing.assert_array_equal(heatmap.image.image, np.where(masked, np.nan, values))
    assert heatmap.data.values.shape == (9, 10)


def test_a_large_edit_is_drawn_from_pictures_made_off_the_gui_thread_with_the_new_numbers(window, qtbot):
    view = window.heatmap_view
    for heatmap in view.stages.values():
        heatmap.max_image_side = 200  # 600 tokens: blocks of 3 × 3 cells
    edit = window.findChild(QtWidgets.QLineEdit, "sentenceEdit")
    weights = view.stages["weights"]
    shown = []
    for words in (" ".join(f"w{i}" for i in range(600)), " ".join(f"v{i % 97}" for i in range(600))):
        edit.setText(words)
        edit.textEdited.emit(words)
        window.controls.apply_typed()
        assert window.studio.computing()  # large: computed (and pictured) in the background
        qtbot.waitUntil(lambda: window.studio.state.sentence == words, timeout=60_000)
        finish(window, qtbot)
        result, head = window.studio.result, window.studio.state.shown_head
        picture = view._prepared.pictures[("weights", head)]
        assert view._prepared.result is result and weights.image._pixels is picture.pixels
        assert weights.image.factor == 3
        np.testing.assert_array_equal(weights.image.image, result.weights[head])  # every cell's number
        weights.image.render()
        expected = _expected_colours(_block_means(result.weights[head], np.ones((600, 600), bool), 3), (0.0, 1.0),
                                     weights.colormap.getLookupTable(nPts=256))
        np.testing.assert_array_equal(_argb(weights.image.qimage), expected)
        shown.append(expected)
    assert not np.array_equal(shown[0], shown[1])  # the second sentence's picture, not the first's


def test_a_figure_for_the_page_draws_every_cell(window, monkeypatch):
    # Every heatmap made from here on would picture more than 2 cells a side by block means...
    monkeypatch.setattr("attn_studio.gui.views.heatmap.MAX_IMAGE_SIDE", 2)
    view = window.heatmap_view
    for heatmap in view.stages.values():
        heatmap.max_image_side = 2
    view.render()
    assert view.stages["weights"].image.factor > 1  # on screen: block means
    panel = export.find_panel(window, "heatmaps")  # ...but a figure's heatmaps show every cell
    tokens = len(window.studio.state.tokens)
    for heatmap in panel.widget.heatmaps:
        assert heatmap.image.factor == 1
        assert heatmap.image._pixels.shape == (tokens, tokens)


def test_the_masked_cells_path_covers_exactly_the_masked_cells(qtbot):
    from PySide6 import QtCore

    from attn_studio.gui.views.cells import _runs_path

    rng = np.random.default_rng(4)
    cells = rng.random((9, 13)) > 0.6
    cells[3] = True  # a whole row: one run
    cells[5] = False  # none
    path = _runs_path(cells)
    covered = np.array([[path.contains(QtCore.QPointF(j, i)) for j in range(13)] for i in range(9)])
    np.testing.assert_array_equal(covered, cells)
    assert _runs_path(np.zeros((4, 4), dtype=bool)).isEmpty()


def test_a_tall_tables_columns_are_fitted_a_column_per_turn_and_hold_their_numbers(window, qtbot, monkeypatch):
    from attn_studio.gui.editing import tables
    from attn_studio.gui.editing.tables import FIT_SAMPLE_ROWS

    monkeypatch.setattr(tables, "FIT_BUDGET", 0.0)  # a column per turn, however fast this machine measures

    model, table = window.models["embeddings"], window.tables["embeddings"]
    window.studio.update(sentence=" ".join(f"w{i}" for i in range(FIT_SAMPLE_ROWS + 50)))
    window.bridge.flush()
    qtbot.waitUntil(lambda: not table.fitting(), timeout=10_000)
    assert model.columnCount() > 2
    # A block pasted over the first three columns: those three are fitted again.
    table.setCurrentIndex(model.index(0, 0))
    QtWidgets.QApplication.clipboard().setText("-6.038e-5\t-7.5e-5\t-8.25e-5")
    assert table.paste()
    window.bridge.flush()
    QtWidgets.QApplication.processEvents()
    assert table.fitting()  # the columns one at a time, the window answering between them
    qtbot.waitUntil(lambda: not table.fitting(), timeout=10_000)
    for column in range(3):
        text = model.data(model.index(0, column))
        assert table.columnWidth(column) >= table.fontMetrics().horizontalAdvance(text) + 4


def test_a_picture_drawn_smaller_than_its_pixels_shows_their_average_not_a_sample(qtbot):
    n = 600  # a cell per pixel of the picture, drawn into some 250 screen pixels
    checker = (np.add.outer(np.arange(n), np.arange(n)) % 2).astype(float)
    heatmap = Heatmap("checks", WEIGHTS_CMAP)
    canvas = shown_canvas(qtbot, heatmap, 300, 280)
    labels = [str(i) for i in range(n)]
    heatmap.set_data(checker, masked=np.zeros((n, n), dtype=bool), row_labels=labels, col_labels=labels,
                     levels=(0.0, 1.0))
    image = canvas.grab().toImage()
    rect = canvas.mapFromScene(heatmap.plot.vb.sceneBoundingRect()).boundingRect()
    assert rect.width() < n / 2  # several cells to a screen pixel
    lut = heatmap.colormap.getLookupTable(nPts=256, alpha=False).astype(float)
    middle = (lut[0] + lut[255]) / 2  # what half dark, half bright cells average to
    for fx in (0.3, 0.5, 0.7):
        for fy in (0.3, 0.5, 0.7):
            colour = image.pixelColor(int(rect.left() + fx * rect.width()), int(rect.top() + fy * rect.height()))
            got = np.array([colour.red(), colour.green(), colour.blue()], dtype=float)
            assert np.abs(got - middle).max() <= 25, (fx, fy, got, middle)  # a sample would be one end
