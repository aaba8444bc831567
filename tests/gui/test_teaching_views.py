"""Compare view, multi-head summary, additive scores and naive-softmax overflow in the window."""

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets

from attn_studio.engine import additive_scores, attention, multi_head_attention, softmax
from attn_studio.formatting import format_number
from gui_helpers import settle


WINDOW_PRESET = "animal"
WINDOW_SIZE = (1366, 768)
PNG_SCALE = 2.0  # what a new window exports PNGs at


@pytest.fixture
def win(document_window, opening_document, qtbot):
    # One window serves the module: it is put back to the animal example before each test (the
    # shared reset), its document too (a test may load another example), the compare view's own
    # controls to how they open, the PNG resolution, and no tooltip left up. Checked.
    w = document_window
    view = w.compare_view
    view.mode_combo.setCurrentIndex(0)
    view.temp_a.setValue(1.0)
    view.temp_b.setValue(5.0)
    w.png_scale = PNG_SCALE
    QtWidgets.QToolTip.hideText()
    qtbot.waitUntil(lambda: not QtWidgets.QToolTip.isVisible())
    w.bridge.flush()
    assert w.studio.state.sentence == opening_document["preset_state"].sentence and not w.studio.state.cross
    assert w.findChild(QtWidgets.QLineEdit, "targetSentenceEdit").text() == ""
    assert view.mode_combo.currentIndex() == 0 and (view.temp_a.value(), view.temp_b.value()) == (1.0, 5.0)
    assert w.png_scale == PNG_SCALE
    return w


def _example(w, name):
    """The shared window showing example ``name``, as a new window opened on it would."""
    assert w.load_preset(name)
    w.bridge.flush()
    assert w.document.preset_name == name and not w.studio.is_modified


def _show(win, view):
    win.view_tabs.setCurrentWidget(view)
    win.bridge.flush()


def _independent(state, x, **overrides):
    s = state.replace(**overrides)
    return multi_head_attention(x, s.w_q, s.w_k, s.w_v, s.w_o, scale=s.scale, causal=s.causal,
                                temperature=s.temperature, kind=s.softmax)


def test_compare_scaled_vs_unscaled_shows_both_and_their_difference(win):
    view = win.compare_view
    _show(win, view)
    view.mode_combo.setCurrentIndex(view.mode_combo.findData("scale"))
    state, x = win.studio.state, win.studio.x
    head = state.head_index
    a = _independent(state, x, scale=True).weights[head]
    b = _independent(state, x, scale=False).weights[head]
    np.testing.assert_allclose(view.maps["a"].image.image, a)
    np.testing.assert_allclose(view.maps["b"].image.image, b)
    np.testing.assert_allclose(view.maps["diff"].image.image, b - a)
    assert np.abs(b - a).max() > 0.01  # the comparison shows a real difference
    assert format_number(np.abs(b - a).max(), view.digits) in view.caption.text()


def test_compare_temperatures_follow_the_spin_boxes(win):
    view = win.compare_view
    _show(win, view)
    view.mode_combo.setCurrentIndex(view.mode_combo.findData("temperature"))
    view.findChild(QtWidgets.QDoubleSpinBox, "compareTempA").setValue(0.5)
    view.findChild(QtWidgets.QDoubleSpinBox, "compareTempB").setValue(20.0)
    state, x = win.studio.state, win.studio.x
    b = _independent(state, x, temperature=20.0).weights[state.head_index]
    np.testing.assert_allclose(view.maps["b"].image.image, b)
    # a high temperature flattens the rows towards uniform
    assert np.abs(b - 1 / b.shape[1]).max() < np.abs(view.maps["a"].image.image - 1 / b.shape[1]).max()


def test_compare_pinned_before_vs_after_an_edit(win):
    view = win.compare_view
    _show(win, view)
    before = win.studio.result.weights[win.studio.state.head_index].copy()
    view.findChild(QtWidgets.QPushButton, "comparePin").click()
    win.studio.set_embedding("it", 0, "3.0")
    win.bridge.flush()
    after = win.studio.result.weights[win.studio.state.head_index]
    np.testing.assert_allclose(view.maps["a"].image.image, before)
    np.testing.assert_allclose(view.maps["b"].image.image, after)
    assert not np.allclose(before, after)


def test_compare_pin_is_undone_and_redone_like_any_edit(win):
    view = win.compare_view
    _show(win, view)
    pinned = win.studio.state
    view.findChild(QtWidgets.QPushButton, "comparePin").click()
    win.bridge.flush()
    assert win.studio.state.pinned == pinned and view.mode_combo.currentData() == "pinned"
    assert "before (pinned)" in view.caption.text()
    win.studio.undo()
    win.bridge.flush()
    assert win.studio.state.pinned is None
    assert "Press “Pin current" in view.caption.text()
    assert view.maps["a"].image.image.shape == (1, 1)  # nothing drawn
    win.studio.redo()
    win.bridge.flush()
    assert win.studio.state.pinned == pinned
    np.testing.assert_allclose(view.maps["a"].image.image, win.studio.result.weights[win.studio.state.shown_head])


def test_heads_summary_shows_concat_wo_and_output(win):
    win.studio.update(heads=3, d_head=2)
    view = win.heads_summary_view
    _show(win, view)
    r = win.studio.result
    np.testing.assert_allclose(view.maps["concat"].image.image, r.concat)
    np.testing.assert_allclose(view.maps["w_o"].image.image, win.studio.state.w_o)
    np.testing.assert_allclose(view.maps["output"].image.image, r.concat @ win.studio.state.w_o)
    # head blocks of the concatenation are separated
    lines = view.separators
    assert lines == [1.5, 3.5]


def test_hidden_views_render_when_shown(win):
    _show(win, win.heatmap_view)
    win.studio.update(heads=2)
    win.bridge.flush()
    # the summary was not on screen; it is brought up to date when its tab opens
    _show(win, win.heads_summary_view)
    np.testing.assert_allclose(win.heads_summary_view.maps["concat"].image.image, win.studio.result.concat)


def test_additive_scores_from_the_combo_show_additive_weights(win):
    combo = win.findChild(QtWidgets.QComboBox, "scoreCombo")
    combo.setCurrentIndex(combo.findData("additive"))
    combo.activated.emit(combo.currentIndex())
    win.bridge.flush()
    state, r = win.studio.state, win.studio.result
    assert state.score == "additive"
    h = state.head_index
    expected = additive_scores(r.q[h], r.k[h], state.w_1[h], state.w_2[h], state.v_a[h])
    np.testing.assert_allclose(win.heatmap_view.stages["scores"].image.image, expected)
    np.testing.assert_allclose(r.weights.sum(axis=-1), 1.0)
    # the titles say what was computed: additive scores, never divided by √d_k (whatever the switch says)
    assert state.scale  # the animal preset scales its dot products
    stages = win.heatmap_view.stages
    assert stages["scores"].title == "scores vᵀtanh(qW₁+kW₂)"
    assert stages["logits"].title == "logits = scores (additive)"
    header = win.heatmap_view.header.text()
    assert "scores → logits → weights" in header and "scaled logits" not in header
    np.testing.assert_allclose(stages["logits"].image.image, expected)  # the logits are the scores
    # The √d_k panel says so where it is shown (on a laptop it steps aside for the Attention tab).
    win.view_tabs.setCurrentWidget(win.pipeline_view)
    win.bridge.flush()
    QtWidgets.QApplication.processEvents()
    assert "heatmaps are unscaled (additive" in win.findChild(QtWidgets.QLabel, "varianceCaption").text()
    # the additive weight tables are there to edit; scaling does not apply
    keys = list(win.models)
    assert win.table_tabs.isTabVisible(keys.index("w_1"))
    assert not win.scale_check.isEnabled()
    assert win.models["v_a"].setData(win.models["v_a"].index(h, 0), "2.0")
    assert win.studio.state.v_a[h, 0] == 2.0


def test_naive_softmax_overflow_is_shown_as_overflow_beside_the_stable_result(win):
    w = win
    _example(w, "bank")
    w.studio.update(softmax="naive")
    w.studio.set_embedding("bank", 2, "40")
    w.bridge.flush()
    weights = w.studio.result.weights[0]
    overflow = ~np.isfinite(weights)
    assert overflow.any()  # exp(1600) is inf: the naive softmax fails here
    hm = w.heatmap_view.stages["weights"]
    assert np.array_equal(hm.overflow, overflow)
    assert np.array_equal(hm.overlay.overflow, overflow)
    assert "overflowed" in w.heatmap_view.header.text()
    stable = w.heatmap_view.stages["stable"]
    assert w.heatmap_view.canvases["stable"].isVisible()
    np.testing.assert_allclose(stable.image.image, softmax(w.studio.result.logits[0], kind="stable"))
    assert np.all(np.isfinite(stable.image.image))
    # back to the stable softmax: no comparison needed
    w.studio.update(softmax="stable")
    w.bridge.flush()
    assert not w.heatmap_view.canvases["stable"].isVisible()
    assert not w.heatmap_view.stages["weights"].overflow.any()


def test_hovering_a_heatmap_cell_shows_its_formula_with_the_numbers(win):
    w = win  # 1366×768
    _example(w, "journey")
    canvas = w.heatmap_view.canvases["logits"]
    hm = canvas.heatmap
    # the centre of cell (query 2 "journey", key 3 "starts"), in the canvas's pixels
    scene_pos = hm.plot.vb.mapViewToScene(QtCore.QPointF(2, 1))
    canvas.scene().sigMouseMoved.emit(scene_pos)
    text = QtWidgets.QToolTip.text()
    x = w.studio.x
    products = " + ".join(f"{a:.4f}×{b:.4f}" for a, b in zip(x[1], x[2]))
    assert products in text  # 0.5500×0.5700 + 0.8700×0.8500 + 0.6600×0.6400 at four decimals
    assert f"{float(x[1] @ x[2]):.4f}" in text  # = 1.4754
    assert "“journey”" in text and "“starts”" in text


def test_weights_tooltip_fills_in_the_softmax(win):
    state, r = win.studio.state, win.studio.result
    h = state.head_index
    text = win.heatmap_view.tooltip_for(win.heatmap_view.stages["weights"], 7, 1)
    assert f"{r.weights[h, 7, 1]:.4f}" in text
    assert "exp" in text


def test_table_cells_explain_their_number(win):
    model = win.models["embeddings"]
    win.studio.set_embedding("animal", 2, "0.5")
    win.bridge.flush()
    text = model.data(model.index(1, 2), QtCore.Qt.ToolTipRole)
    assert "animal" in text and "0.5" in text and "typed by you" in text
    other = model.data(model.index(0, 0), QtCore.Qt.ToolTipRole)
    assert f"seed {win.studio.state.seed}" in other
    wq = win.models["w_q"]
    text = wq.data(wq.index(1, 2), QtCore.Qt.ToolTipRole)
    assert "W_Q[x2, q3]" in text
    q = win.studio.result.q[win.studio.state.head_index, win.studio.state.query_index, 2]
    assert f"{q:.4g}".replace("-", "−") in text


def test_step_view_tab_follows_edits_with_the_engine_numbers(win):
    w = win
    _example(w, "bank")
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    w.bridge.flush()
    table = w.pipeline_view.table.model()

    def row_values(key):
        row = [s.key for s in w.pipeline_view.steps].index(key)
        return np.array([float(table.data(table.index(row, j)).replace("−", "-"))
                         for j in range(len(w.studio.state.key_tokens))])

    np.testing.assert_allclose(row_values("weights"), w.studio.result.weights[0, 7], atol=6e-4)
    w.studio.set_embedding("money", 0, "0.9")
    w.bridge.flush()
    np.testing.assert_allclose(row_values("weights"), w.studio.result.weights[0, 7], atol=6e-4)
    np.testing.assert_allclose(row_values("scores"), w.studio.result.scores[0, 7], atol=6e-4)


def test_export_from_the_window_writes_each_format(win, tmp_path):
    for name, suffix in (("heatmaps", "png"), ("variance", "svg"), ("steps", "pdf"), ("geometry", "png")):
        path = tmp_path / f"{name}.{suffix}"
        assert win.export_panel(name, path, scale=1.0), win.message_label.text()
        data = path.read_bytes()
        assert data[:4] in (b"\x89PNG", b"%PDF") or b"<svg" in data[:400]
    assert not win.export_panel("nope", tmp_path / "x.png")
    assert "nope" in win.message_label.text()


def test_heatmap_right_click_saves_and_copies_its_matrix(win, tmp_path, monkeypatch):
    canvas = win.heatmap_view.canvases["weights"]
    menu = win.show_heatmap_menu(canvas, QtCore.QPoint(10, 10))
    actions = {a.text(): a for a in menu.actions()}
    copy_latex = next(a for t, a in actions.items() if "LaTeX" in t)
    copy_latex.trigger()
    latex = QtWidgets.QApplication.clipboard().text()
    assert latex.startswith("\\begin{bmatrix}") and latex.count("\\\\") >= len(win.studio.state.tokens) - 1
    target = tmp_path / "weights.csv"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    next(a for t, a in actions.items() if t.startswith("Save")).trigger()
    import csv
    rows = list(csv.reader(target.open()))
    assert rows[0][1:] == win.studio.state.key_tokens
    values = np.array([[float(v) for v in row[1:]] for row in rows[1:]])
    np.testing.assert_allclose(values, win.studio.result.weights[win.studio.state.head_index])
    menu.close()


def test_table_right_click_saves_the_matrix_as_npy(win, tmp_path, monkeypatch):
    target = tmp_path / "wq.npy"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    monkeypatch.setattr(QtWidgets.QMenu, "popup", lambda self, pos: None)
    table = win.tables["w_q"]
    table.customContextMenuRequested.emit(QtCore.QPoint(5, 5))  # what a right click on the table sends
    menu = table.findChild(QtWidgets.QMenu, "matrixMenu")
    next(a for a in menu.actions() if a.text().startswith("Save")).trigger()
    np.testing.assert_array_equal(np.load(target, allow_pickle=False), win.studio.state.w_q[win.studio.state.head_index])


def test_steps_figure_holds_the_whole_table(win, tmp_path):
    w = win
    _example(w, "bank")
    w.resize(1000, 700)  # too narrow to show every key on screen
    settle(w)
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    w.bridge.flush()
    assert w.pipeline_view.table.horizontalScrollBar().maximum() > 0  # the screen scrolls...
    path = tmp_path / "steps.svg"
    assert w.export_panel("steps", path)
    svg = path.read_text("utf-8")
    # ...the figure holds the last columns too: the result header and the output z
    assert ">result<" in svg.replace(" ", "") or "result" in svg
    assert "−0.1061" in svg


def test_a_second_sentence_makes_it_cross_attention(win, qtbot):
    w = win
    _example(w, "journey")
    target = w.findChild(QtWidgets.QLineEdit, "targetSentenceEdit")
    qtbot.keyClicks(target, "Ton voyage commence")
    w.bridge.flush()
    state, r = w.studio.state, w.studio.result
    assert state.cross and state.query_tokens == ["Ton", "voyage", "commence"]
    assert r.weights.shape == (1, 3, 6)
    hm = w.heatmap_view.stages["weights"]
    assert hm.image.image.shape == (3, 6)
    assert [t for _, t in w.heatmap_view.stages["scores"].left_axis.labels()] == ["Ton", "voyage", "commence"]
    assert [t for _, t in hm.bottom_axis.labels()] == state.key_tokens
    assert w.heatmap_view.stages["scores"].left_axis.labelText == "query (decoder)"
    assert hm.bottom_axis.labelText == "key (encoder)"
    # queries from the decoder side, keys and values from the encoder side
    x_q = w.studio.embeddings(state.query_tokens)
    x_kv = w.studio.embeddings(state.key_tokens)
    np.testing.assert_allclose(r.weights[0], attention(x_q, x_kv, x_kv, scale=False).weights)
    # emptying the box is self-attention again
    target.clear()
    target.textEdited.emit("")
    w.bridge.flush()
    assert not w.studio.state.cross and w.studio.result.weights.shape == (1, 6, 6)
    assert w.heatmap_view.stages["scores"].left_axis.labelText == "query"


def test_every_heatmap_explains_its_cells_on_hover(win):
    # compare and summary heatmaps: labels and the value, at the view's precision
    win.studio.update(heads=2)
    win.bridge.flush()
    for view, key in ((win.compare_view, "b"), (win.heads_summary_view, "output")):
        win.view_tabs.setCurrentWidget(view)
        win.bridge.flush()
        canvas = view.canvases[key]
        value = float(canvas.heatmap.image.image[2, 1])
        text = canvas.tooltip_text(2, 1)
        assert format_number(value, canvas.digits) in text and "→" in text
        canvas.digits = 2
        assert format_number(value, 2) in canvas.tooltip_text(2, 1)
    # positional encoding: its formula with the numbers
    pv = win.positional_view
    win.view_tabs.setCurrentWidget(pv)
    win.bridge.flush()
    from attn_studio.engine import sinusoidal_positions
    d = win.studio.state.d_model
    text = pv.canvas.tooltip_text(3, 2)
    assert f"sin(3 / 10000^(2/{d}))" in text
    assert f"{sinusoidal_positions(11, d)[3, 2]:.4f}" in text


def test_png_resolution_chosen_in_dpi_sets_the_export_scale(win, tmp_path, monkeypatch):
    monkeypatch.setattr(QtWidgets.QInputDialog, "getInt", lambda *a, **k: (288, True))
    assert win.ask_png_dpi()
    assert win.png_scale == 3.0
    small, large = tmp_path / "1x.png", tmp_path / "3x.png"
    assert win.export_panel("heatmaps", small, scale=1.0)
    assert win.export_panel("heatmaps", large)  # the chosen 288 dpi
    from PySide6 import QtGui
    a, b = QtGui.QImage(str(small)), QtGui.QImage(str(large))
    assert abs(b.width() - 3 * a.width()) <= 3
    assert round(b.dotsPerMeterX() * 0.0254) == 288
