"""The Heads tab on its own, over a tiny trained BERT (2 layers x 4 heads): the report card, sorting,
opening a head, find the head, weight or norm, importance off the GUI thread and its staleness,
flow beside rollout, what silencing changed, exports. The window's assembly and MiniLM's
"it" -> "animal" heads are in test_heads_window.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore

from attn_studio.gui import presentation
from attn_studio.pretrained import load_pretrained
from attn_studio.pretrained.heads import attention_flow, find_heads, head_report, norm_attention
from attn_studio.trained import TrainedStudio

DATA = Path(__file__).resolve().parents[1] / "data" / "pretrained"


@pytest.fixture(scope="module")
def tiny():
    return load_pretrained(DATA / "tiny-bert")


@pytest.fixture
def lab(qtbot, tiny):
    """A shown Heads tab on a fresh studio; ``lab.selected`` records what it asked to select."""
    from attn_studio.gui.heads import HeadsTab

    studio = TrainedStudio(tiny)
    selected = []

    def select(layer, head, query=None):
        selected.append((layer, head))
        studio.select(layer=layer, head=head, query=query)

    tab = HeadsTab(select)
    tab.resize(1100, 700)
    qtbot.addWidget(tab)
    tab.show()
    qtbot.waitExposed(tab)
    tab.set_studio(studio)
    tab.selected, tab.test_studio = selected, studio
    yield tab
    tab.shutdown()


def test_report_card_has_a_row_per_head_counting_from_1_and_sorts(lab):
    studio = lab.test_studio
    report = head_report(studio.computed.run)
    layers, heads = report.role.shape
    proxy = lab.proxy
    assert proxy.rowCount() == layers * heads
    # Unsorted: (layer, head) order, both from 1.
    assert [(proxy.index(r, 0).data(), proxy.index(r, 1).data()) for r in range(3)] == [(1, 1), (1, 2), (1, 3)]
    assert proxy.index(0, 2).data() == str(report.role[0, 0])
    # Sorting by confidence (column 4) puts the most confident head first, by its number.
    lab.table.sortByColumn(4, QtCore.Qt.DescendingOrder)
    shown = [proxy.index(r, 4).data(QtCore.Qt.UserRole) for r in range(proxy.rowCount())]
    assert shown == sorted(report.confidence.ravel().tolist(), reverse=True)
    l, h = np.unravel_index(np.argmax(report.confidence), report.confidence.shape)
    assert (proxy.index(0, 0).data(), proxy.index(0, 1).data()) == (l + 1, h + 1)


def test_the_report_cards_columns_fit_every_text_without_the_table_reading_every_cell(qtbot, tiny, monkeypatch):
    """Each column is at least as wide as its widest cell (badge included) and its header, and sizing
    them asks the model for no cell: Qt's resizeColumnsToContents read 8,640 cells for MiniLM."""
    from PySide6 import QtGui

    from attn_studio.gui.heads import HeadsTab
    from attn_studio.gui.heads.report_card import ReportCardModel

    reads = []
    data = ReportCardModel.data
    monkeypatch.setattr(ReportCardModel, "data", lambda self, index, role=QtCore.Qt.DisplayRole: (
        reads.append(role), data(self, index, role))[1])
    tab = HeadsTab(lambda *a, **k: None)
    tab.resize(1100, 700)
    qtbot.addWidget(tab)
    tab.show()
    qtbot.waitExposed(tab)
    during = []
    size = tab._size_columns

    def sized():
        reads.clear()
        size()
        during.append(len(reads))

    tab._size_columns = sized
    tab.set_studio(TrainedStudio(tiny))
    assert during == [0]  # sized once, for the first report, and no cell read to do it
    model, table = tab.report_model, tab.table
    cells = table.fontMetrics()
    bold = QtGui.QFont(table.horizontalHeader().font())
    bold.setBold(True)
    for column in range(model.columnCount()):
        texts = [str(model.index(row, column).data()) for row in range(model.rowCount())]
        needed = max(cells.horizontalAdvance(t) for t in texts)
        needed = max(needed, QtGui.QFontMetrics(bold).horizontalAdvance(str(model.headerData(column, QtCore.Qt.Horizontal))))
        assert table.columnWidth(column) >= needed + 4, (column, texts[:3])
    tab.shutdown()


def test_clicking_a_row_selects_that_head(lab, qtbot):
    lab.table.sortByColumn(3, QtCore.Qt.AscendingOrder)  # by entropy: the row order is no longer the heads'
    index = lab.proxy.index(5, 0)
    layer, head = lab.proxy.index(5, 0).data() - 1, lab.proxy.index(5, 1).data() - 1
    rect = lab.table.visualRect(index)
    qtbot.mouseClick(lab.table.viewport(), QtCore.Qt.LeftButton, pos=rect.center())
    assert lab.selected[-1] == (layer, head)
    state = lab.test_studio.state
    assert (state.layer_index, state.head_index) == (layer, head)
    # The role grid and the tab's heatmap follow the selection.
    assert lab.role_grid.highlight == (layer, head)
    assert lab.head_map.title.startswith(f"Head {layer + 1}.{head + 1}")


def test_find_the_head_ranks_the_heads_and_opens_the_first(lab):
    run = lab.test_studio.computed.run
    expected = find_heads(run, "it", "animal")
    assert lab.find("it", "animal")
    table = lab.found_table
    first_layer, first_head, weight = expected[0]
    assert table.item(0, 0).text() == f"{first_layer + 1}.{first_head + 1}"
    assert table.item(0, 1).text() == f"{weight:.{presentation.digits()}f}"  # at the precision setting
    assert table.rowCount() == len(expected)
    assert lab.selected[-1] == (first_layer, first_head)
    assert lab.test_studio.state.query_index == run.tokens.index("it")  # the found query's row is the one shown


def test_a_word_not_in_the_sentence_says_so_and_changes_nothing(lab):
    assert lab.find("it", "animal")
    rows, selected = lab.found_table.rowCount(), list(lab.selected)
    assert not lab.find("it", "giraffe")
    assert "giraffe" in lab.find_message.text()
    assert lab.found_table.rowCount() == rows and lab.selected == selected


def test_clicking_a_cell_of_the_heatmap_finds_heads_for_that_query_and_key(lab):
    run = lab.test_studio.computed.run
    q, k = run.tokens.index("it"), run.tokens.index("animal")
    lab.head_map.cellClicked.emit(q, k)
    assert (lab.query_edit.text(), lab.key_edit.text()) == ("it", "animal")
    layer, head, _ = find_heads(run, q, k)[0]
    assert lab.selected[-1] == (layer, head)


def test_the_norm_switch_shows_norm_attention_instead_of_weights(lab):
    run = lab.test_studio.computed.run
    state = lab.test_studio.state
    l, h = state.layer_index, state.head_index
    np.testing.assert_array_equal(lab.head_map.values, run.attentions[l, h])
    lab.norm_radio.setChecked(True)
    np.testing.assert_allclose(lab.head_map.values, norm_attention(run)[l, h], rtol=1e-12)
    assert not np.allclose(lab.head_map.values, run.attentions[l, h])
    assert "length" in lab.norm_note.text()  # the line saying why a weight is not the whole story
    lab.weight_radio.setChecked(True)
    np.testing.assert_array_equal(lab.head_map.values, run.attentions[l, h])


def test_importance_runs_off_the_gui_thread_shows_results_and_goes_stale_after_an_edit(lab, qtbot):
    steps = []
    lab.job.progress.connect(lambda done, total: steps.append((done, total)))
    with qtbot.waitSignal(lab.job.finished, timeout=60000):
        lab.importance_button.click()
    layers, heads = lab.test_studio.model.layers, lab.test_studio.model.heads
    assert steps[-1] == (layers * heads, layers * heads) and len(steps) == layers * heads
    shown = lab.importance_map.values
    assert shown.shape == (layers, heads) and shown.max() > 0
    column = lab.proxy.index(0, 11).data()
    # As the command line writes it (attn-studio heads --importance): four decimals, 0.0787.
    assert "e" not in column and len(column.split(".")[1]) == 4
    assert any(column == f"{v:.4f}" for v in lab.importance.flat)
    top = lab.importance.max()
    assert f"(1 − cosine {top:.4f})" in lab.importance_status.text()
    assert lab.importance_map.number(top) == f"{top:.4f}"
    assert "stale" not in column
    assert not lab.importance_map.stale
    lab.test_studio.set_head_scale(0, 1, 0.0)  # an edit: what was measured no longer holds
    assert lab.importance_stale() and lab.importance_map.stale
    assert "stale" in lab.proxy.index(0, 11).data() and "Stale" in lab.importance_status.text()
    # Only the selection moving keeps it fresh.
    with qtbot.waitSignal(lab.job.finished, timeout=60000):
        lab.importance_button.click()
    lab.test_studio.select(layer=1, head=2)
    assert not lab.importance_stale()


def test_flow_is_computed_in_the_background_and_drawn_beside_rollout(lab, qtbot):
    computed = lab.test_studio.computed
    with qtbot.waitSignal(lab.flow_job.finished, timeout=60000):
        lab.flow_button.click()
    np.testing.assert_allclose(lab.flow_map.values, attention_flow(computed.run), atol=1e-12)
    np.testing.assert_array_equal(lab.rollout_map.values, computed.rollout[-1])
    # One colour scale for the three pictures.
    assert lab.raw_map.vmax == lab.rollout_map.vmax == lab.flow_map.vmax
    assert lab.flow_map.rows == lab.flow_map.cols and len(lab.flow_map.rows) == len(computed.run.tokens)


def test_silencing_a_head_is_read_out_in_words(lab):
    assert "unedited" in lab.readout.text()
    lab.test_studio.set_head_scale(0, 2, 0.0)
    text = lab.readout.text()
    assert text.startswith("Silencing 1.3 moved the sentence embedding by") and "cosine" in text
    np.testing.assert_array_equal(lab.drift.drift, lab.test_studio.computed.drift)


def test_exports_write_a_figure_and_the_csv(lab, tmp_path):
    lab.export_figure("head", tmp_path / "head.png")
    assert (tmp_path / "head.png").read_bytes().startswith(b"\x89PNG")
    lab.export_figure("roles", tmp_path / "roles.svg")
    assert b"<svg" in (tmp_path / "roles.svg").read_bytes()
    lab.export_csv(tmp_path / "heads.csv")
    lines = (tmp_path / "heads.csv").read_text().splitlines()
    layers, heads = lab.test_studio.model.layers, lab.test_studio.model.heads
    assert lines[0].startswith("layer,head,role,entropy") and len(lines) == 1 + layers * heads


def test_the_model_view_switches_to_norms_and_outlines_the_query_row(qtbot, tiny):
    from attn_studio.gui.views.model_view import ModelView, ModelViewData

    run = tiny.run("The animal didn't cross the street because it was too tired.")
    view = ModelView()
    qtbot.addWidget(view)
    view.show_data(ModelViewData.from_run(run))
    T = len(run.tokens)
    first = view.image.image[:T, :T]  # layer 1, head 1 (float32 in the picture)
    np.testing.assert_allclose(first, run.attentions[0, 0], rtol=1e-6)
    view.norm_check.setChecked(True)
    norms = norm_attention(run)
    np.testing.assert_allclose(view.image.image[:T, :T], norms[0, 0], rtol=1e-5)
    assert view.colorbar.levels()[1] == pytest.approx(float(norms.max()), rel=1e-6)
    view.norm_check.setChecked(False)
    np.testing.assert_allclose(view.image.image[:T, :T], run.attentions[0, 0], rtol=1e-6)
    # The chosen query's row is outlined in every cell; the tokens under the pointer are named.
    assert view.query_rows.path().isEmpty()
    view.set_query(3)
    rect = view.query_rows.path().boundingRect()
    assert rect.top() == pytest.approx(view.cell_rect(0, 0).top() + 3.5) and rect.width() > T
    cell = view.cell_rect(1, 2)
    assert view.token_pair_at(cell.left() + 5.5, cell.top() + 2.5) == (2, 5)


def test_the_drift_plot_keeps_a_fixed_stated_scale_so_small_stays_small(qtbot):
    from attn_studio.gui.views.drift_plot import DriftPlot

    plot = DriftPlot()
    qtbot.addWidget(plot)
    plot.show_drift(np.array([0.0, 0.0, 0.001, 0.003]), edited_layers=(1,))
    top = plot.plot.vb.viewRange()[1][1]
    # The scale ends at 0.05 (its top tick), with a little room over it for the bars' values:
    # 0.003 fills 6 % of the scale, not all of the plot.
    assert plot.plot.getAxis("left")._tickLevels[0][-1][0] == pytest.approx(0.05)
    assert 0.05 <= top <= 0.06
    assert "scale 0 to 0.05" in plot.header.text()
    assert not plot.plot.getAxis("left").autoSIPrefix  # ticks read 0.01, not "10 (x0.001)"
    plot.show_drift(np.array([0.0, 0.3, 0.42]), edited_layers=(0,))
    assert 0.5 <= plot.plot.vb.viewRange()[1][1] <= 0.6


def test_a_long_sentence_is_measured_off_the_gui_thread_and_then_drawn(lab, qtbot, monkeypatch):
    """Issue 32, defect 2: the refresh after a new result ran the report card and norm attention on
    the GUI thread (about 1 s frozen for 480 words of MiniLM). Past the size the GUI thread can take
    in a turn, they run on a worker and the tab is drawn when they come back."""
    import threading

    from attn_studio.gui.heads import tab as tab_module

    assert tab_module.measures_cost(lab.test_studio.computed.run) <= tab_module.GUI_THREAD_MEASURES
    threads = []

    def report(run):
        threads.append(threading.get_ident())
        return head_report(run)

    monkeypatch.setattr(tab_module, "head_report", report)
    monkeypatch.setattr(tab_module, "GUI_THREAD_MEASURES", 0)  # every run counts as long here
    studio = lab.test_studio
    studio.update(sentence="the cat sat on the mat because it was warm and the sun was out")
    run = studio.computed.run
    assert lab.measuring() and lab.report_model.report is not None  # the last card stays until the new one
    qtbot.waitUntil(lambda: not lab.measuring(), timeout=30_000)
    qtbot.waitUntil(lambda: lab._run is run, timeout=5_000)
    assert threads and threading.get_ident() not in threads
    assert np.array_equal(lab.report_model.report.entropy, head_report(run).entropy)
    assert np.array_equal(lab._norm, norm_attention(run))
    # Two edits in a row: only the newest run is drawn.
    studio.update(sentence="a dog ran")
    studio.update(sentence="a dog ran home")
    newest = studio.computed.run
    qtbot.waitUntil(lambda: lab._run is newest, timeout=30_000)
    assert list(lab._run.tokens) == list(newest.tokens)


def test_minilm_at_480_words_is_past_the_gui_thread_budget():
    from attn_studio.gui.heads.tab import GUI_THREAD_MEASURES

    layers, heads, d_model, tokens = 6, 12, 384, 500
    assert layers * heads * tokens * (tokens + d_model) > 20 * GUI_THREAD_MEASURES
    assert layers * heads * 32 * (32 + d_model) <= GUI_THREAD_MEASURES  # a short sentence: same turn
