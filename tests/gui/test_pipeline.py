"""The step-by-step view: numbers read back FROM THE WIDGET and compared with the engine.

Every expected number comes from ``studio.result`` (the engine), never from
attn_studio.explain, so a formatting or layout slip in the view shows up here.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore

from attn_studio.gui.views.pipeline import CURRENT_BG, ERROR_BG, MASKED_BG, MIN_POINT_SIZE, PipelineView
from attn_studio.session import load_preset
from attn_studio.studio import Studio

Qt = QtCore.Qt
MINUS = "\u2212"
ROWS = ["query", "keys", "scores", "scaled", "masked", "exp", "weights", "weighted", "output"]
IGNORED_QT_MESSAGES = ("This plugin does not support propagateSizeHints()",)


@pytest.fixture
def make_view(qtbot, qtlog):
    """Build a PipelineView over a Studio; fail on unexpected Qt warnings afterwards."""

    made = []  # alive until the test ends, when Qt deletes them (never left to the cycle collector)

    def make(preset="journey"):
        studio = Studio(load_preset(preset))
        view = PipelineView(studio)
        made.append(view)
        qtbot.addWidget(view)
        view.resize(1400, 600)
        view.show()
        qtbot.waitExposed(view)
        view.render()
        return studio, view

    yield make
    bad = [r.message for r in qtlog.records
           if r.type not in (QtCore.QtMsgType.QtDebugMsg, QtCore.QtMsgType.QtInfoMsg)
           and not any(m in r.message for m in IGNORED_QT_MESSAGES)]
    assert not bad, "unexpected Qt messages:\n" + "\n".join(bad)


# -- reading the widget ---------------------------------------------------------------------
def cell(view, row_key: str, col: int, role=Qt.DisplayRole):
    model = view.table.model()
    return model.data(model.index(ROWS.index(row_key), col), role)


def to_float(text: str) -> float:
    return float(text.replace(MINUS, "-"))


def to_vector(text: str) -> np.ndarray:
    text = text.split("= ", 1)[-1] if text.startswith("z =") else text
    return np.array([to_float(t) for t in text.strip("()").split(", ")])


def row_numbers(view, row_key: str) -> np.ndarray:
    n_keys = view.table.model().columnCount() - 1
    return np.array([to_float(cell(view, row_key, j)) for j in range(n_keys)])


def output_vector(view) -> np.ndarray:
    model = view.table.model()
    return to_vector(cell(view, "output", model.columnCount() - 1))


# -- tests ------------------------------------------------------------------------------------
def test_view_shows_the_engine_numbers(make_view):
    studio, view = make_view()
    assert view.objectName() == "pipelineView"
    r, q = studio.result, studio.state.query_index
    assert q == 1  # the preset selects "journey"
    model = view.table.model()
    assert model.rowCount() == 9
    assert model.columnCount() == 7
    assert [model.headerData(c, Qt.Horizontal) for c in range(7)] == studio.state.key_tokens + ["result"]
    np.testing.assert_allclose(row_numbers(view, "weights"), r.weights[0, q], atol=5e-5)
    np.testing.assert_allclose(row_numbers(view, "scores"), r.scores[0, q], atol=5e-5)
    np.testing.assert_allclose(output_vector(view), r.head_outputs[0, q], atol=5e-5)
    # The seed's numbers, for good measure.
    np.testing.assert_allclose(output_vector(view), [0.4419, 0.6515, 0.5683], atol=5e-5)
    assert cell(view, "query", 0) == "(0.5500, 0.8700, 0.6600)"
    assert "journey" in view.header.text() and "head 1" in view.header.text()


def test_numbers_follow_an_edit(make_view):
    studio, view = make_view()
    before = row_numbers(view, "weights")
    studio.set_embedding("starts", 1, "-0.5")
    view.render()
    r = studio.result
    after = row_numbers(view, "weights")
    assert not np.allclose(before, after, atol=1e-3)
    np.testing.assert_allclose(after, r.weights[0, 1], atol=5e-5)
    np.testing.assert_allclose(output_vector(view), r.head_outputs[0, 1], atol=5e-5)
    assert to_vector(cell(view, "keys", 2))[1] == pytest.approx(-0.5)


def test_query_selection_follows(make_view):
    studio, view = make_view("bank")
    assert "“bank”" in view.header.text()
    np.testing.assert_allclose(output_vector(view), [-0.1061, -0.13715, -0.02285], atol=5e-5)
    studio.select(query=4)
    view.render()
    assert "“money”" in view.header.text()
    np.testing.assert_allclose(row_numbers(view, "weights"), studio.result.weights[0, 4], atol=5e-5)


def test_steps_move_with_buttons_and_keys(make_view, qtbot):
    studio, view = make_view()

    def highlighted():
        rows = [r for r in range(9) if cell(view, ROWS[r], 0, Qt.BackgroundRole) == CURRENT_BG]
        assert len(rows) == 1
        return rows[0]

    assert view.current_step == 0 and highlighted() == 0
    assert not view.prev_button.isEnabled()
    view.next_step()
    assert view.current_step == 1 and highlighted() == 1
    view.prev_step()
    view.prev_step()  # stays at the first step
    assert view.current_step == 0
    qtbot.mouseClick(view.next_button, Qt.LeftButton)
    assert view.current_step == 1
    qtbot.keyClick(view, Qt.Key_Down)
    assert view.current_step == 2 and highlighted() == 2
    qtbot.keyClick(view, Qt.Key_N)
    assert view.current_step == 3
    qtbot.keyClick(view, Qt.Key_Up)
    assert view.current_step == 2
    qtbot.keyClick(view, Qt.Key_P)
    assert view.current_step == 1
    qtbot.keyClick(view.table, Qt.Key_Down)  # keys reach the view through the table too
    assert view.current_step == 2
    for _ in range(20):
        view.next_step()
    assert view.current_step == 8 and highlighted() == 8
    assert not view.next_button.isEnabled()
    assert "z = Σ" in view.explanation.text() or "weighted vectors" in view.explanation.text()
    # The explanation is the current step's.
    assert view.steps[8].title.split()[0] in view.explanation.text()
    # The current step survives a re-render.
    studio.set_embedding("one", 0, "0.1")
    view.render()
    assert view.current_step == 8
    # Clicking a row selects its step.
    model = view.table.model()
    rect = view.table.visualRect(model.index(ROWS.index("exp"), 1))
    qtbot.mouseClick(view.table.viewport(), Qt.LeftButton, pos=rect.center())
    assert view.current_step == ROWS.index("exp")


def test_tooltips_fill_in_the_formulas(make_view):
    studio, view = make_view()
    tip = cell(view, "scores", 2, Qt.ToolTipRole)
    assert "q2·k3 = 0.5500×0.5700 + 0.8700×0.8500 + 0.6600×0.6400 = 1.4754" in tip
    weight_tip = cell(view, "weights", 2, Qt.ToolTipRole)
    assert "α = exp(" in weight_tip
    assert f"{studio.result.weights[0, 1, 2]:.4f}" in weight_tip
    output_tip = cell(view, "output", 6, Qt.ToolTipRole)
    assert "z2[1] = Σ_j α_j·v_j[1] = 0.1385×0.4300 + " in output_tip and "0.4419" in output_tip
    weighted_tip = cell(view, "weighted", 0, Qt.ToolTipRole)
    assert "× (0.4300, 0.1500, 0.8900)" in weighted_tip


def test_causal_mask_marks_cells(make_view):
    studio, view = make_view()
    studio.update(causal=True)
    view.render()
    for key in ("exp", "weights", "weighted"):
        for j in (2, 3, 4, 5):
            assert cell(view, key, j) == "masked"
            assert cell(view, key, j, Qt.BackgroundRole) == MASKED_BG
        assert cell(view, key, 0) != "masked"
    assert cell(view, "masked", 3) == f"{MINUS}inf (masked)"
    assert "masked (causal: key after query)" in cell(view, "scores", 3, Qt.ToolTipRole)
    weights = np.array([to_float(cell(view, "weights", j)) for j in (0, 1)])
    np.testing.assert_allclose(weights, studio.result.weights[0, 1, :2], atol=5e-5)
    studio.update(causal=False)
    view.render()
    assert all(cell(view, "weights", j) != "masked" for j in range(6))


def test_naive_overflow_is_shown_not_hidden(make_view):
    studio, view = make_view()
    studio.update(softmax="naive", projections=False)
    studio.set_embedding("journey", 0, "300")
    view.render()
    assert cell(view, "exp", 1) == "overflow"
    assert cell(view, "exp", 1, Qt.BackgroundRole) == ERROR_BG
    for j in range(6):
        assert cell(view, "weights", j) == "overflow"
        assert cell(view, "weights", j, Qt.BackgroundRole) == ERROR_BG
    assert cell(view, "output", 6) == "z = overflow"
    assert "overflows" in cell(view, "weights", 1, Qt.ToolTipRole)
    # Every cell and tooltip renders.
    model = view.table.model()
    for r in range(model.rowCount()):
        for c in range(model.columnCount()):
            model.data(model.index(r, c), Qt.DisplayRole)
            model.data(model.index(r, c), Qt.ToolTipRole)
    view.grab()
    studio.update(softmax="stable")
    view.render()
    np.testing.assert_allclose(row_numbers(view, "weights"), studio.result.weights[0, 1], atol=5e-5)


def test_head_selection_follows(make_view):
    studio, view = make_view()
    studio.update(projections=True, heads=2)
    studio.select(head=1)
    view.render()
    r = studio.result
    assert "head 2" in view.header.text()
    np.testing.assert_allclose(row_numbers(view, "scores"), r.scores[1, 1], atol=5e-5)
    np.testing.assert_allclose(row_numbers(view, "weights"), r.weights[1, 1], atol=5e-5)
    np.testing.assert_allclose(output_vector(view), r.head_outputs[1, 1], atol=5e-5)
    assert not np.allclose(r.weights[0, 1], r.weights[1, 1], atol=1e-3)
    studio.select(head=0)
    view.render()
    np.testing.assert_allclose(row_numbers(view, "weights"), r.weights[0, 1], atol=5e-5)


def test_cross_attention_and_empty_sentence(make_view):
    studio, view = make_view()
    studio.update(target_sentence="Ihre Reise beginnt")
    studio.select(query=2)
    view.render()
    model = view.table.model()
    assert [model.headerData(c, Qt.Horizontal) for c in range(model.columnCount())] == \
        studio.state.key_tokens + ["result"]
    assert "“beginnt”" in view.header.text()
    np.testing.assert_allclose(row_numbers(view, "weights"), studio.result.weights[0, 2], atol=5e-5)
    studio.update(target_sentence="", sentence="")
    view.render()
    assert model.rowCount() == 0
    assert "No query token" in view.header.text()
    view.next_step()
    view.prev_step()
    studio.update(sentence="Your journey starts")
    view.render()
    assert model.rowCount() == 9 and model.columnCount() == 4


def test_readable_on_a_projector(make_view):
    studio, view = make_view("bank")
    assert view.table.font().pointSizeF() >= MIN_POINT_SIZE
    assert view.header.font().pointSizeF() > view.table.font().pointSizeF()
    assert view.explanation.font().pointSizeF() >= MIN_POINT_SIZE
    assert view.explanation.wordWrap()
    hh = view.table.horizontalHeader()
    fm = view.table.fontMetrics()
    for c in range(view.table.model().columnCount() - 1):
        # A scalar cell fits its column.
        assert hh.sectionSize(c) >= fm.horizontalAdvance(cell(view, "weights", c))
