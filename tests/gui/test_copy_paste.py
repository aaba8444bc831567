"""Ctrl+C / Ctrl+V in the tables: blocks of numbers to and from a spreadsheet, one edit each."""

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets

WINDOW_PRESET = "animal"


@pytest.fixture
def win(shared_window):
    """One window for the module: each test changes only the Studio's state (undone after it),
    the shown table, its selection and the clipboard, which each test sets itself."""
    w = shared_window
    # As in a new window: no message left by the test before to answer for this one.
    w.clear_message()
    w.message_label.setText("")
    w.table_tabs.setCurrentIndex(0)
    return w


def _select(table, top, left, bottom, right):
    model = table.model()
    selection = QtCore.QItemSelection(model.index(top, left), model.index(bottom, right))
    table.selectionModel().setCurrentIndex(model.index(top, left), QtCore.QItemSelectionModel.NoUpdate)
    table.selectionModel().select(selection, QtCore.QItemSelectionModel.ClearAndSelect)


def test_ctrl_c_copies_the_selected_block_at_full_precision(win, qtbot):
    w = win
    w.table_tabs.setCurrentIndex(list(w.models).index("w_q"))
    table = w.tables["w_q"]
    table.setFocus()
    _select(table, 1, 0, 2, 1)
    qtbot.keyClick(table, QtCore.Qt.Key_C, QtCore.Qt.ControlModifier)
    text = QtWidgets.QApplication.clipboard().text()
    rows = [[float(v) for v in line.split("\t")] for line in text.splitlines()]
    np.testing.assert_array_equal(rows, w.studio.state.w_q[w.studio.state.head_index, 1:3, 0:2])


def test_ctrl_v_pastes_a_spreadsheet_block_as_one_undoable_edit(win, qtbot):
    w = win
    table = w.tables["embeddings"]
    w.table_tabs.setCurrentIndex(0)
    table.setFocus()
    _select(table, 1, 2, 1, 2)
    QtWidgets.QApplication.clipboard().setText("0.5\t−0.25\n1e-2\t3\n")
    before = w.studio.state
    qtbot.keyClick(table, QtCore.Qt.Key_V, QtCore.Qt.ControlModifier)
    w.bridge.flush()
    x = w.studio.x
    np.testing.assert_array_equal(x[1:3, 2:4], [[0.5, -0.25], [0.01, 3.0]])
    assert table.model().data(table.model().index(1, 3)) == "\u22120.2500"  # a true minus, four decimals
    assert w.studio.undo()  # one step takes the whole block back
    assert w.studio.state == before


def test_a_block_with_one_bad_cell_changes_nothing_and_says_where(win):
    w = win
    table = w.tables["w_k"]
    _select(table, 0, 0, 0, 0)
    QtWidgets.QApplication.clipboard().setText("1, 2\n3, abc")
    before = w.studio.state
    assert not table.paste()
    assert w.studio.state is before
    assert "row 2, column 2" in w.message_label.text() and "abc" in w.message_label.text()


def test_a_block_that_does_not_fit_is_refused(win):
    table = win.tables["w_v"]
    _select(table, 7, 3, 7, 3)  # bottom-right corner of an 8 x 4 matrix
    QtWidgets.QApplication.clipboard().setText("1 2\n3 4")
    before = win.studio.state
    assert not table.paste()
    assert win.studio.state is before
    assert "does not fit" in win.message_label.text()


def test_the_output_table_is_read_only_to_paste(win):
    table = win.tables["output"]
    _select(table, 0, 0, 0, 0)
    QtWidgets.QApplication.clipboard().setText("1")
    assert not table.paste()
    assert "computed" in win.message_label.text()
