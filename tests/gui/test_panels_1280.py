"""The window itself on a 1280×720 projector (and at 1920×1080): with all-MiniLM-L6-v2 every control of
the Model panel is whole, the Heads tab shows the selected head at 300 px or more with every token named
beside at least 8 rows of the report card, and the training lab never makes the window wider than 1280 px.

The trained-model tests are skipped where the model is not installed."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets

from attn_studio.pretrained import default_model_zip
from gui_helpers import fit_screen, fully_shown, settle, showing_minilm

SIZES = [(1280, 720), (1920, 1080)]
needs_minilm = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")


@pytest.fixture
def window(shared_window):
    return shared_window


fit = fit_screen  # the layout the window chooses on a screen of that size, at that size


@pytest.fixture
def trained(window, qtbot, minilm):
    """The module's window showing MiniLM on its "animal" sentence; back to the toy model afterwards."""
    with showing_minilm(window, qtbot, minilm):
        yield window


# -- the training lab ------------------------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
def test_after_the_training_tab_the_window_still_fits_1280_px(window, size):
    w = window
    fit(w, size)
    for name in ("scaling", "seq2seq", "induction"):
        panel = w.training.open(name)
        settle(w)
        assert w.size() == QtCore.QSize(*size)
        # Every control of the bar, whole, inside the panel.
        for child in (panel.play_button, panel.step_button, panel.reset_button, panel.speed_combo, panel.lr_combo,
                      panel.seed_spin, panel.step_label, panel.export_button):
            assert child.isVisible() and fully_shown(child, panel), (name, child.objectName())
        assert w.minimumSizeHint().width() <= 1280, name
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    settle(w)
    # Every page of the tabs fits 1280 px beside the Model panel: the least width was 1,333 px.
    assert w.minimumSizeHint().width() <= 1280


def test_the_training_bar_wraps_beside_the_model_panel(window):
    """With the Model and Numbers panels brought back over the lab (View menu), the bar wraps rather
    than widen the window: every control stays whole inside the panel."""
    w = window
    fit(w, (1280, 720))
    panel = w.training.open("scaling")
    w.controls_dock.show()
    settle(w)
    try:
        assert w.size() == QtCore.QSize(1280, 720)
        assert panel.width() < panel.controls_row.sizeHint().width()  # too narrow for one line
        for child in (panel.play_button, panel.seed_spin, panel.d_k_combo, panel.export_button):
            assert fully_shown(child, panel), child.objectName()
        # The figure starts under the bar's last line.
        bottom = max(c.mapTo(panel, QtCore.QPoint(0, c.height())).y() for c in (panel.play_button, panel.export_button))
        assert panel.figure.mapTo(panel, QtCore.QPoint(0, 0)).y() >= bottom
    finally:
        w.view_tabs.setCurrentWidget(w.heatmap_view)
        settle(w)


# -- the Model panel with a trained model ------------------------------------------------------------

@needs_minilm
@pytest.mark.parametrize("size", SIZES)
def test_every_control_of_the_model_panel_is_whole_with_minilm(trained, size):
    w = trained
    fit(w, size)
    panel, scroll = w.trained.room.panel, w.controls_scroll
    viewport = scroll.viewport()
    assert not scroll.horizontalScrollBar().isVisible()  # nothing to scroll to at the right
    shown = [c for c in panel.findChildren(QtWidgets.QWidget) if c.isVisibleTo(w) and not c.isWindow()]
    names = {c.objectName() for c in shown}
    assert {"modelCombo", "layerSpin", "silenceHeadButton", "headScaleSpin", "resetHeadButton", "resetAllButton",
            "secondSentenceEdit", "meaningWordEdit"} <= names
    for child in shown:
        assert fully_shown(child, viewport), (child.objectName() or type(child).__name__, child.geometry())
    # The model's name, whole in its box (it read "all-MiniLM-L6-v2 (train").
    combo = panel.model_combo
    assert combo.currentText().startswith("all-MiniLM-L6-v2")
    option = QtWidgets.QStyleOptionComboBox()
    combo.initStyleOption(option)
    field = combo.style().subControlRect(QtWidgets.QStyle.CC_ComboBox, option,
                                         QtWidgets.QStyle.SC_ComboBoxEditField, combo)
    assert combo.fontMetrics().horizontalAdvance(combo.currentText()) <= field.width()
    # Each button's text fits it.
    for button in (panel.silence_button, panel.reset_head_button, panel.reset_all_button):
        assert button.fontMetrics().horizontalAdvance(button.text()) < button.width(), button.text()


# -- the Heads tab ------------------------------------------------------------------------------------

def visible_rows(table: QtWidgets.QTableView) -> int:
    """Rows of ``table`` shown whole in its viewport."""
    viewport = table.viewport().rect()
    model = table.model()
    return sum(viewport.contains(table.visualRect(model.index(r, 0))) for r in range(model.rowCount()))


@needs_minilm
@pytest.mark.parametrize("size", SIZES)
def test_the_heads_tab_gives_the_head_300_px_and_shows_8_report_rows(trained, size):
    w = trained
    fit(w, size)
    lab = w.heads_tab
    lab.pages.setCurrentIndex(0)  # "Find the head": the selected head's heatmap
    w.view_tabs.setCurrentWidget(lab)
    settle(w)
    head = lab.head_map
    assert fully_shown(head, w) and fully_shown(lab.table, w)
    tokens = list(w.studio.target.computed.run.tokens)
    n = len(tokens)
    # The cells' extent from the centres of the first and last cells.
    first, last = head.cell_center(0, 0), head.cell_center(n - 1, n - 1)
    cell = (last.x() - first.x()) / (n - 1)
    assert abs((last.y() - first.y()) / (n - 1) - cell) < 1  # square cells
    assert n * cell >= 299, n * cell  # was 53 px at 1280×720 (3.3 px a cell)
    plot = head.plot_rect()
    assert plot.width() >= 300 and plot.height() >= 300, plot
    assert head.contentsRect().contains(plot.toAlignedRect())  # whole, with room for its labels
    # Every token named on both axes, [CLS] and [SEP] too: no label taller than its cell (else only
    # every n-th is drawn).
    assert head.rows == tokens and head.cols == tokens and tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert cell >= head.fontMetrics().height()
    assert head.labelled()
    assert visible_rows(lab.table) >= 8  # was 4 at 1280×720


@needs_minilm
def test_the_numbers_step_aside_for_the_heads_tab_and_come_back(trained):
    w = trained
    fit(w, (1280, 720))
    # The Numbers shown beside Step by step (on a 1280-pixel screen they step aside for the Attention tab too).
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    assert w.tables_dock.isVisible()
    w.view_tabs.setCurrentWidget(w.heads_tab)
    settle(w)
    assert not w.tables_dock.isVisible()
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    assert w.tables_dock.isVisible()
    # From the Heads tab to the lab and back: each gets its own room, whatever came before.
    w.view_tabs.setCurrentWidget(w.heads_tab)
    w.training.open("scaling")
    settle(w)
    assert not any(d.isVisible() for d in (w.controls_dock, w.tables_dock, w.variance_dock))
    w.view_tabs.setCurrentWidget(w.heads_tab)
    settle(w)
    assert w.controls_dock.isVisible() and not w.tables_dock.isVisible()
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    assert w.controls_dock.isVisible() and w.tables_dock.isVisible()
    # Back to the toy model from the Heads tab (the tab goes away, the next one is shown): the Numbers
    # come back with the tab that has room for them.
    w.view_tabs.setCurrentWidget(w.heads_tab)
    settle(w)
    w.trained.room.use_toy()
    settle(w)
    assert w.view_tabs.currentWidget() is not w.heads_tab
    assert w.tables_dock.isVisible() == (w.view_tabs.currentWidget() not in (w.training.page, w.heatmap_view))
    w.view_tabs.setCurrentWidget(w.pipeline_view)
    settle(w)
    assert w.tables_dock.isVisible() and w.controls_dock.isVisible()


@needs_minilm
def test_a_divider_the_lecturer_moved_stays_where_they_put_it(trained):
    w = trained
    fit(w, (1280, 720))
    lab = w.heads_tab
    lab.pages.setCurrentIndex(0)
    w.view_tabs.setCurrentWidget(lab)
    settle(w)
    split = lab.splitter
    card, pages = split.sizes()
    try:
        split.moveSplitter(card + 60, 1)  # what dragging the handle does (it emits splitterMoved)
        settle(w)
        moved = split.sizes()
        assert moved[0] > card
        w.resize(1300, 720)
        w.resize(1280, 720)
        settle(w)
        assert abs(split.sizes()[0] - moved[0]) <= 2  # not put back to the computed share
    finally:
        lab._user_split = False
        lab.apportion()
