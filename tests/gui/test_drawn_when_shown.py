"""Work a hidden widget would do for nothing waits until it is shown: a table's column fitting
(spread over event-loop turns when visible) and the Head Lab's drawing of a just-set model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attn_studio.gui.editing.tables import MatrixModel, MatrixTable
from attn_studio.pretrained import load_pretrained
from attn_studio.trained import TrainedStudio

DATA = Path(__file__).resolve().parents[1] / "data" / "pretrained"


def _table(qtbot, values):
    holder = {"a": values}
    model = MatrixModel("W", lambda: holder["a"], lambda: [str(i) for i in range(holder["a"].shape[0])],
                        lambda: [str(j) for j in range(holder["a"].shape[1])])
    table = MatrixTable(model, "testTable")
    qtbot.addWidget(table)
    table.resize(900, 400)
    return table, model, holder


def test_a_hidden_table_fits_its_columns_when_shown(qtbot):
    table, model, holder = _table(qtbot, np.zeros((3, 4)))
    default = table.columnWidth(2)
    holder["a"] = np.full((3, 4), -123456.789)
    model.refresh()
    table.fit_columns()
    assert table.columnWidth(2) == default  # hidden: nothing measured yet
    table.show()
    qtbot.waitExposed(table)
    text = model.data(model.index(0, 2))
    assert table.columnWidth(2) >= table.fontMetrics().horizontalAdvance(text) + 4


def test_a_visible_table_fits_a_wide_matrix_over_several_turns(qtbot, monkeypatch):
    from attn_studio.gui.editing import tables

    table, model, holder = _table(qtbot, np.zeros((5, 30)))
    table.show()
    qtbot.waitExposed(table)
    monkeypatch.setattr(tables, "FIT_BUDGET", 0.0)  # one column per turn
    holder["a"] = np.full((5, 30), -98765.4321)
    model.refresh()
    table.fit_columns()
    text = model.data(model.index(0, 0))
    needed = table.fontMetrics().horizontalAdvance(text) + 4
    assert table.columnWidth(0) >= needed and table.columnWidth(29) < needed
    assert table.fitting()
    table.finish_fitting()
    assert not table.fitting()
    assert all(table.columnWidth(c) >= needed for c in range(30))


@pytest.mark.parametrize("rows", [12, 40])  # every text measured, and the widest few found by ranking
def test_a_fitted_column_is_as_wide_as_qts_own_fit_makes_it(qtbot, rows):
    # Numbers of every kind the tables show: negative, scientific, zero, long and short, so the
    # widest text of a column is not always the longest one.
    rng = np.random.default_rng(7)
    values = rng.normal(size=(rows, 9)) * 10.0 ** rng.integers(-9, 8, size=(rows, 9))
    values[rng.random(values.shape) < 0.15] = 0.0
    values[:, 4] = 1.0  # a narrow column: its header is wider than its numbers
    table, model, _ = _table(qtbot, values)
    table.show()
    qtbot.waitExposed(table)
    for column in range(values.shape[1]):
        table.fit_column(column)
        fitted = table.columnWidth(column)
        table.resizeColumnToContents(column)  # Qt's own: every cell's size asked of the delegate
        assert fitted == table.columnWidth(column), column


def test_an_edit_refits_only_its_own_columns(qtbot, monkeypatch):
    table, model, holder = _table(qtbot, np.zeros((4, 6)))
    table.show()
    qtbot.waitExposed(table)
    table.finish_fitting()  # the first fitting, spread over turns, done (a busy machine leaves columns to fit)
    fitted = []
    monkeypatch.setattr(table, "fit_column", lambda column, stop=None: fitted.append(column))
    holder["a"] = holder["a"].copy()
    holder["a"][2, 3] = -98765.4321
    model.refresh()  # one cell changed: one dataChanged for it
    table.finish_fitting()
    assert fitted == [3]  # a column's width depends on its own numbers only
    fitted.clear()
    holder["a"] = holder["a"].copy()
    holder["a"][1, 1] = holder["a"][3, 4] = 12.5
    model.refresh()  # a block: the columns from its first to its last
    table.finish_fitting()
    assert fitted == [1, 2, 3, 4]


def test_an_edited_column_is_refitted_to_its_new_widest_number(qtbot):
    table, model, holder = _table(qtbot, np.zeros((4, 6)))
    table.show()
    qtbot.waitExposed(table)
    table.finish_fitting()
    narrow = [table.columnWidth(c) for c in range(6)]
    holder["a"] = holder["a"].copy()
    holder["a"][2, 3] = -98765.4321
    model.refresh()
    table.finish_fitting()
    text = model.data(model.index(2, 3))
    assert table.columnWidth(3) >= table.fontMetrics().horizontalAdvance(text) + 4 > narrow[3]
    assert [table.columnWidth(c) for c in (0, 1, 2, 4, 5)] == [narrow[c] for c in (0, 1, 2, 4, 5)]
    holder["a"] = holder["a"].copy()
    holder["a"][2, 3] = 0.0  # the widest number gone: the column narrows again
    model.refresh()
    table.finish_fitting()
    assert table.columnWidth(3) == narrow[3]


def test_the_head_lab_draws_a_model_set_while_hidden_when_shown(qtbot):
    from attn_studio.gui.heads import HeadsTab

    studio = TrainedStudio(load_pretrained(DATA / "tiny-bert"))
    tab = HeadsTab(lambda layer, head, query=None: None)
    qtbot.addWidget(tab)
    tab.set_studio(studio)
    assert tab.report_model.report is None  # hidden: no report computed
    tab.resize(1100, 700)
    tab.show()
    qtbot.waitExposed(tab)
    assert tab.report_model.report is not None
    assert tab.report_model.rowCount() == studio.model.layers * studio.model.heads
    tab.shutdown()


def test_the_widest_number_is_found_without_writing_every_number(qtbot):
    # Ordinary numbers are ranked by their digits, point and sign: columns where the widest text is
    # not the largest number (0.1234 is wider than 0.5; −0.05 than 0.999), with both precisions.
    rng = np.random.default_rng(11)
    def rounded(x):
        return np.array([round(float(v), int(d)) for v, d in zip(x, rng.integers(1, 5, size=x.size))])

    columns = [
        rounded(rng.random(60)),
        -rounded(rng.random(60)),
        np.round(rng.normal(size=60) * 10.0 ** rng.integers(-1, 5, size=60), 3),
        np.where(rng.random(60) < 0.5, 0.5, 0.1234),
        np.where(rng.random(60) < 0.5, 0.999, -0.05),
        rng.normal(size=60) * 1e-3,
    ]
    values = np.stack(columns, axis=1)
    table, model, _ = _table(qtbot, values)
    table.show()
    qtbot.waitExposed(table)
    for digits in (2, 4):
        model.set_digits(digits)
        for column in range(values.shape[1]):
            table.fit_column(column)
            fitted = table.columnWidth(column)
            table.resizeColumnToContents(column)
            assert fitted == table.columnWidth(column), (digits, column)


def test_a_column_follows_a_longer_label_and_a_larger_font(qtbot):
    # The header's and the delegate's widths are kept between fittings: a new label or font
    # must still widen the column as Qt's own fit does.
    holder = {"a": np.full((3, 2), 0.5), "cols": ["d1", "d2"]}
    model = MatrixModel("W", lambda: holder["a"], lambda: ["a", "b", "c"], lambda: holder["cols"])
    table = MatrixTable(model, "testTable")
    qtbot.addWidget(table)
    table.resize(900, 400)
    table.show()
    qtbot.waitExposed(table)
    table.finish_fitting()
    before = table.columnWidth(1)
    holder["cols"] = ["d1", "a much longer dimension label"]
    model.refresh()
    table.finish_fitting()
    fitted = table.columnWidth(1)
    table.resizeColumnToContents(1)
    assert fitted == table.columnWidth(1) > before
    font = table.font()
    font.setPointSizeF(font.pointSizeF() * 2)
    table.setFont(font)
    table.finish_fitting()
    assert table.columnWidth(1) > fitted
    fitted = table.columnWidth(0)
    table.resizeColumnToContents(0)
    assert fitted == table.columnWidth(0)
