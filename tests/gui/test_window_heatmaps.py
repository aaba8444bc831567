"""Heatmaps: the causal mask, one heatmap per head, clicking a row to follow a token."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from gui_helpers import stage_maps, assert_result_matches, expected_result, find, settle, shown_image

Qt = QtCore.Qt


@pytest.fixture
def window(shared_window):
    # One window serves the module: undone to how it opened before each test.
    return shared_window


def click_checkbox(qtbot, box: QtWidgets.QCheckBox):
    """Click a check box where a person clicks it: on its indicator."""
    option = QtWidgets.QStyleOptionButton()
    box.initStyleOption(option)
    rect = box.style().subElementRect(QtWidgets.QStyle.SE_CheckBoxIndicator, option, box)
    qtbot.mouseClick(box, Qt.LeftButton, pos=rect.center())


def cell_pos(canvas, heatmap, row: float, col: float) -> QtCore.QPoint:
    """The viewport pixel of the centre of cell (row, col) (or any point in view coordinates)."""
    scene = heatmap.plot.vb.mapViewToScene(QtCore.QPointF(col, row))
    return canvas.mapFromScene(scene)


def cell_pixels(image: QtGui.QImage, canvas, heatmap, row: int, col: int, frac: float = 0.3) -> np.ndarray:
    """RGB of the pixels near the top-left corner of a cell (away from its text and borders)."""
    a = cell_pos(canvas, heatmap, row - 0.5 + frac * 0.5, col - 0.5 + frac * 0.5)
    b = cell_pos(canvas, heatmap, row - 0.5 + frac, col - 0.5 + frac)
    pixels = []
    for y in range(min(a.y(), b.y()), max(a.y(), b.y()) + 1):
        for x in range(min(a.x(), b.x()), max(a.x(), b.x()) + 1):
            c = image.pixelColor(x, y)
            pixels.append((c.red(), c.green(), c.blue()))
    assert pixels
    return np.array(pixels, dtype=float)


def test_causal_mask_blanks_the_future(window, qtbot):
    w = window
    box = find(w, QtWidgets.QCheckBox, "causalCheck")
    assert not box.isChecked()
    click_checkbox(qtbot, box)
    settle(w)

    assert box.isChecked() and w.studio.state.causal
    weights = w.studio.result.weights
    n = weights.shape[-1]
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    assert np.all(weights[:, future] == 0.0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)
    want = expected_result(w.studio.state)
    assert_result_matches(w.studio, want)
    for key, heatmap in stage_maps(w.heatmap_view):
        image = shown_image(heatmap)
        assert np.all(np.isnan(image[future])), key
        assert not np.any(np.isnan(image[~future])), key
        np.testing.assert_array_equal(heatmap.overlay.masked, future)
    np.testing.assert_allclose(shown_image(w.heatmap_view.stages["weights"])[~future], want["weights"][0][~future])
    assert "causal" in w.heatmap_view.header.text()

    click_checkbox(qtbot, box)
    settle(w)
    assert not w.studio.state.causal
    assert not np.any(np.isnan(shown_image(w.heatmap_view.stages["weights"])))
    assert not w.heatmap_view.stages["weights"].overlay.masked.any()


def test_masked_cells_look_different_from_zero_weight(window, qtbot):
    """A masked cell is hatched grey; a real 0.00 weight has the colour map's 0 colour."""
    w = window
    w.resize(1366, 768)
    find(w, QtWidgets.QCheckBox, "causalCheck").click()
    # A low temperature makes some unmasked weights practically 0.
    find(w, QtWidgets.QDoubleSpinBox, "temperatureSpin").setValue(0.05)
    settle(w)
    qtbot.wait(20)
    state = w.studio.state
    assert state.causal and state.temperature == 0.05
    heatmap = w.heatmap_view.stages["weights"]
    canvas = w.heatmap_view.canvases["weights"]
    weights = w.studio.result.weights[0]
    n = weights.shape[0]
    # the smallest unmasked weight outside the selected (outlined) row
    rows = [i for i in range(n) if i != state.query_index]
    candidates = [(weights[i, j], i, j) for i in rows for j in range(i + 1)]
    zero_w, zi, zj = min(candidates)
    assert zero_w < 1e-3, "the test needs an unmasked weight that rounds to 0.00"
    mi, mj = rows[0], n - 1
    assert mj > mi  # a masked (future) cell

    image = canvas.viewport().grab().toImage()
    assert not image.isNull()
    zero_colour = np.array(heatmap.colormap.map(0.0, mode="byte")[:3], dtype=float)
    assert np.allclose(zero_colour, pg_viridis_zero(), atol=1)
    zero_px = cell_pixels(image, canvas, heatmap, zi, zj)
    masked_px = cell_pixels(image, canvas, heatmap, mi, mj)
    # the near-zero cell shows the colour map's 0 colour
    assert np.abs(zero_px - zero_colour).max(axis=1).mean() < 12, zero_px[:5]
    # the masked cell is grey (fill and hatching), nowhere near that colour
    assert np.abs(masked_px - zero_colour).max(axis=1).min() > 60, masked_px[:5]
    spread = masked_px.max(axis=1) - masked_px.min(axis=1)
    assert spread.max() < 10, "masked cells should be neutral grey"


def pg_viridis_zero():
    from attn_studio.gui.qt.pg import pg

    return pg.colormap.get("viridis").map(0.0, mode="byte")[:3]


def visible_head_maps(view) -> list:
    return [hm for hm, canvas in zip(view.head_maps, view.head_canvases) if canvas.isVisible()]


def room_for_the_heads(w) -> None:
    """A window tall enough for the grid of heads under the stages (on a shorter one the stages keep
    the height and the head bar reaches every head)."""
    w.resize(1700, 1100)
    settle(w)


def test_head_count_follows_the_spin_box(window, qtbot):
    w = window
    room_for_the_heads(w)
    w.load_preset("animal")
    settle(w)
    spin = find(w, QtWidgets.QSpinBox, "headsSpin")
    combo = find(w, QtWidgets.QComboBox, "headCombo")
    view = w.heatmap_view
    assert w.studio.state.projections
    for heads in (1, 2, 4):
        spin.setValue(heads)
        settle(w)
        state = w.studio.state
        assert state.heads == heads
        assert combo.count() == heads
        assert [combo.itemText(i) for i in range(heads)] == [f"head {i + 1}" for i in range(heads)]
        want = expected_result(state)
        assert_result_matches(w.studio, want)
        assert w.studio.result.weights.shape[0] == heads
        shown = visible_head_maps(view)
        # one head: the stage heatmaps say it all; more: one heatmap per head
        expected_shown = heads if heads > 1 else 0
        assert view.heads_shown == expected_shown
        assert len(shown) == expected_shown
        assert view.heads_widget.isVisible() == (heads > 1)
        for i, hm in enumerate(shown):
            np.testing.assert_allclose(shown_image(hm), want["weights"][i], atol=1e-12)
            assert hm.title.startswith(f"head {i + 1}")
        if heads > 1:
            # the heads really differ, so the comparison above is not trivial
            assert not np.allclose(want["weights"][0], want["weights"][1])
        np.testing.assert_allclose(w.models["output"].array(), want["output"], atol=1e-12)
        assert w.models["w_o"].rowCount() == heads * state.d_head

    # choose head 3 in the combo: stage heatmaps and the W_Q table show it
    combo.setCurrentIndex(2)
    combo.activated.emit(2)
    settle(w)
    state = w.studio.state
    assert state.head_index == 2
    np.testing.assert_allclose(shown_image(view.stages["weights"]), w.studio.result.weights[2], atol=1e-12)
    np.testing.assert_array_equal(w.models["w_q"].array(), state.w_q[2])
    assert view.head_maps[2].title.endswith("◀")

    # back to 2 heads with head 1 selected: two maps remain
    combo.setCurrentIndex(0)
    combo.activated.emit(0)
    spin.setValue(2)
    settle(w)
    assert w.studio.state.heads == 2
    assert len(visible_head_maps(view)) == 2
    assert combo.count() == 2


def test_fewer_heads_than_the_selected_head_is_accepted(window, qtbot):
    w = window
    room_for_the_heads(w)
    w.load_preset("animal")
    spin = find(w, QtWidgets.QSpinBox, "headsSpin")
    combo = find(w, QtWidgets.QComboBox, "headCombo")
    spin.setValue(4)
    settle(w)
    combo.setCurrentIndex(3)
    combo.activated.emit(3)
    settle(w)
    assert w.studio.state.head_index == 3
    spin.setValue(2)
    settle(w)
    label = find(w, QtWidgets.QLabel, "messageLabel")
    assert not label.isVisible(), label.text()
    assert w.studio.state.heads == 2
    assert spin.value() == 2
    assert combo.count() == 2 and combo.currentIndex() == 1
    assert len(visible_head_maps(w.heatmap_view)) == 2


def test_clicking_a_heatmap_row_selects_that_query(window, qtbot):
    w = window
    assert w.studio.state.query_index == 1
    for target_row, col in ((4, 2), (0, 5), (5, 0)):
        click_row(w, qtbot, target_row, col)


def click_row(w, qtbot, target_row, col):
    view = w.heatmap_view
    query = find(w, QtWidgets.QComboBox, "queryCombo")
    heatmap, canvas = view.stages["weights"], view.canvases["weights"]
    pos = cell_pos(canvas, heatmap, target_row, col)
    assert canvas.viewport().rect().contains(pos)
    qtbot.mouseClick(canvas.viewport(), Qt.LeftButton, pos=pos)
    settle(w)
    assert w.studio.state.query_index == target_row
    assert query.currentIndex() == target_row
    for hm in dict(stage_maps(view)).values():
        assert hm.overlay.selected_row == target_row
    assert f"“{w.studio.state.query_tokens[target_row]}”" in view.header.text()
    # selecting is not an edit
    assert not w.studio.can_undo


def test_clicking_a_head_heatmap_selects_head_and_query(window, qtbot):
    w = window
    w.load_preset("animal")
    settle(w)
    view = w.heatmap_view
    assert view.heads_shown == 2
    heatmap, canvas = view.head_maps[1], view.head_canvases[1]
    pos = cell_pos(canvas, heatmap, 3, 3)
    qtbot.mouseClick(canvas.viewport(), Qt.LeftButton, pos=pos)
    settle(w)
    state = w.studio.state
    assert (state.query_index, state.head_index) == (3, 1)
    assert find(w, QtWidgets.QComboBox, "headCombo").currentIndex() == 1
    assert find(w, QtWidgets.QComboBox, "queryCombo").currentIndex() == 3
    np.testing.assert_allclose(shown_image(view.stages["weights"]), w.studio.result.weights[1], atol=1e-12)


def test_clicking_outside_the_cells_changes_nothing(window, qtbot):
    w = window
    view = w.heatmap_view
    canvas = view.canvases["weights"]
    before = w.studio.state
    qtbot.mouseClick(canvas.viewport(), Qt.LeftButton, pos=QtCore.QPoint(1, 1))
    settle(w)
    assert w.studio.state is before


def test_a_new_heads_grid_shows_each_head_when_its_numbers_are_set(window, qtbot, monkeypatch):
    """Drawn in steps (a trained model, a large toy), a dozen heads appearing at once painted every
    canvas in one stall: the grid is laid out with each cell kept, and a head's canvas is shown in
    the step that sets its numbers."""
    view = window.heatmap_view
    room_for_the_heads(window)
    window.studio.update(heads=1, projections=True)
    settle(window)
    assert view.heads_shown == 0
    monkeypatch.setattr(window, "_render_visible", lambda: None)  # this test advances the drawing itself
    window.studio.update(heads=4)
    steps = view.render_steps()
    while next(steps) != "heads' grid":
        pass
    canvases = view.head_canvases[:4]
    assert view.heads_shown == 4 and all(c.isHidden() for c in canvases)
    assert all(c.sizePolicy().retainSizeWhenHidden() for c in canvases)  # each keeps its cell meanwhile
    for i in range(4):
        assert next(steps) == f"head {i + 1}"
        assert [c.isHidden() for c in canvases] == [j > i for j in range(4)]
        np.testing.assert_allclose(view.head_maps[i].image.image, window.studio.result.weights[i], rtol=1e-6)
    for _ in steps:
        pass
    assert all(c.isVisible() for c in canvases)


def test_a_drawing_step_that_would_overrun_the_turn_waits_for_the_next(window, qtbot):
    """Stepped drawing fills a turn up to its budget, but does not start a step as long as the last
    when that one would overrun it: two heads' heatmaps built in one turn froze the window twice as long."""
    import time

    from attn_studio.gui.window.drawing import STEP_BUDGET

    done = []

    def steps():
        for i in range(3):
            time.sleep(STEP_BUDGET * 0.6)  # each step takes more than half a turn's budget
            done.append(i)
            yield i

    window._steps[object()] = steps()
    window._draw_step()
    assert done == [0]
    window._draw_step()
    assert done == [0, 1]
    qtbot.waitUntil(lambda: not window._steps)
    assert done == [0, 1, 2]
