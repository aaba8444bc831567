"""What random use of the window broke, each kept fixed: a hidden view never breaks a slot (Compare
with a trained model), the dark theme's colour maps built once, a refused edit on a long token never
widens the window."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.gui import presentation
from attn_studio.gui.qt.pg import pg
from attn_studio.pretrained import default_model_zip
from gui_helpers import axis_tokens, find, finish, settle, wait_idle

needs_minilm = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")


def choose_model(window, qtbot, text: str) -> None:
    """Choose ``text`` in the Model panel's combo as a person does, and wait until it is loaded and drawn."""
    combo = find(window, QtWidgets.QComboBox, "modelCombo")
    index = next(i for i in range(combo.count()) if combo.itemText(i).startswith(text))
    combo.setCurrentIndex(index)
    combo.activated.emit(index)
    qtbot.waitUntil(lambda: window.studio.is_trained == (not text.startswith("Toy")), timeout=60000)
    wait_idle(qtbot, window)
    window.finish_drawing()
    settle(window)


def minilm_at_1280(window, qtbot):
    """The window at 1280×720 showing all-MiniLM-L6-v2, chosen as a person does; returns the window."""
    window.resize(1280, 720)
    choose_model(window, qtbot, "all-MiniLM")
    return window


@needs_minilm
def test_choosing_minilm_with_compare_shown_finishes_the_slot(window, qtbot):
    # An edit of the toy model to undo, Compare on screen, then MiniLM: the switch's redraw reached the
    # Compare view with a trained studio and raised, and the Edit menu kept "Undo change d_model".
    find(window, QtWidgets.QSpinBox, "dModelSpin").setValue(window.studio.state.d_model + 2)
    settle(window)
    assert window.undo_action.isEnabled()
    window.view_tabs.setCurrentWidget(window.compare_view)
    settle(window)
    choose_model(window, qtbot, "all-MiniLM")
    assert not window.undo_action.isEnabled() and window.undo_action.text().replace("&", "").strip() == "Undo"
    tabs = window.view_tabs
    assert tabs.isTabVisible(tabs.indexOf(window.compare_view))  # the trained model against its edits
    assert not tabs.isTabVisible(tabs.indexOf(window.positional_view))  # hidden, a toy-only view
    window.render_view(window.compare_view)
    assert "trained model" in window.compare_view.caption.text()
    assert not window.compare_view.pin_button.isVisibleTo(window)  # the trained model is always the pin
    # File → Export offers only what can be drawn for a trained model.
    menu = window.export_actions.export_menu
    menu.aboutToShow.emit()
    texts = [a.text() for a in menu.actions()]
    assert "Compare…" in texts and "Positions…" not in texts and "Drift plot…" in texts
    from attn_studio.gui.files import export, panels

    with pytest.raises(export.ExportError, match="toy model"):
        export.find_panel(window, "positions")
    assert "compare" in panels.available(window) and "positions" not in panels.available(window)
    # Back to the toy model: Compare compares again, and its edit is still there to undo.
    choose_model(window, qtbot, "Toy")
    window.view_tabs.setCurrentWidget(window.compare_view)
    settle(window)
    assert window.undo_action.isEnabled() and "d_model" in window.undo_action.text()
    assert window.compare_view.pin_button.isEnabled() and "toy model" not in window.compare_view.caption.text()


@needs_minilm
def test_precision_with_minilm_shown_reaches_every_view(window, qtbot):
    choose_model(window, qtbot, "all-MiniLM")
    find(window, QtGui.QAction, "precision2Action").trigger()
    settle(window)
    assert presentation.STYLE.digits == 2
    for view in (window.heatmap_view, window.pipeline_view, window.geometry_view, window.compare_view):
        assert view.digits == 2, view.objectName()
    assert window.numbers.models["w_q"].digits == 2
    find(window, QtGui.QAction, "precision4Action").trigger()
    settle(window)


@pytest.fixture
def light_again():
    """The look is application-wide: back to the light theme for the tests that follow."""
    yield
    app = QtWidgets.QApplication.instance()
    for top in app.topLevelWidgets():
        presentation.apply(app, top, theme="light")
        break


def test_the_dark_theme_builds_each_colour_map_once(window, qtbot, monkeypatch, light_again):
    # 16 heads, every view drawn once: about 30 heatmaps, two colour maps between them.
    window.studio.update(projections=True, d_model=64, heads=16)
    finish(window, qtbot)
    for index in range(window.view_tabs.count()):
        if window.view_tabs.isTabVisible(index) and window.view_tabs.widget(index) is not window.training.page:
            window.view_tabs.setCurrentIndex(index)
            finish(window, qtbot)
    heatmaps = [hm for hm in _heatmaps(window) if hm.image.image is not None]
    assert len(heatmaps) >= 25
    built = []
    original = pg.ColorMap.__init__

    def counting(self, *args, **kwargs):
        built.append(kwargs.get("name"))
        original(self, *args, **kwargs)

    monkeypatch.setattr(pg.ColorMap, "__init__", counting)
    actions = {a.data(): a for a in window.lecture.theme_actions.actions()}
    for theme in ("dark", "light", "dark"):
        actions[theme].trigger()
        settle(window)
    names = {hm._cmap_name for hm in heatmaps}
    # One dimmed map per colour map (the first switch), none on the switches after it.
    assert len(built) <= len(names), built
    for name in names:
        shared = {id(hm.colormap) for hm in heatmaps if hm._cmap_name == name}
        assert len(shared) == 1, f"{name}: {len(shared)} colour map objects for one map and theme"
    weights = next(hm for hm in heatmaps if hm._cmap_name == "viridis")
    assert weights._lut[-1, 0] < 255 * 0.83  # dimmed on the dark theme: viridis' yellow is no longer full red
    actions["light"].trigger()
    settle(window)
    assert weights._lut[-1, 0] > 250


def _heatmaps(window):
    import shiboken6

    from attn_studio.gui.views import token_axis

    alive = [hm for hm in list(token_axis._heatmaps) if shiboken6.isValid(hm.plot)]
    return [hm for hm in alive if (view := hm.plot.getViewWidget()) is not None and window.isAncestorOf(view)]


def test_a_refused_edit_on_a_long_token_never_widens_the_window(window, qtbot):
    # One 5,000-character word (the sentence allows 20,000), "inf" typed in Embeddings X [0, 1] and
    # Enter: the refusal quoted the whole word and the word-wrapped message under the tables could not
    # break it, so the window grew to ~31,000 px and stayed so.
    window.resize(1280, 720)
    # The Numbers beside Step by step (at 1280 px they step aside for the Attention tab).
    window.view_tabs.setCurrentWidget(window.pipeline_view)
    settle(window)
    word = "a" * 5000
    box = find(window, QtWidgets.QLineEdit, "sentenceEdit")
    box.setText(word)
    box.textEdited.emit(word)
    finish(window, qtbot)
    assert window.studio.state.key_tokens == [word]
    table = find(window, QtWidgets.QTableView, "embeddingTable")
    table.setFocus()
    table.setCurrentIndex(table.model().index(0, 1))
    qtbot.keyClicks(table, "i")
    editor = next(e for e in table.findChildren(QtWidgets.QLineEdit) if e.isVisible())
    qtbot.keyClicks(editor, "nf")
    qtbot.keyClick(editor, QtCore.Qt.Key_Return)
    settle(window)
    label = window.message_label
    assert label.isVisible() and "inf" in label.text() and "…" in label.text()
    assert len(label.text()) < 400, "the refusal quotes the row label shortened"
    assert window.width() <= 1280 and window.numbers.minimumSizeHint().width() < 600
    # Whatever a message says (a long word of its own), its label wraps it instead of widening the panel.
    window.show_message("refused: " + "b" * 5000)
    settle(window)
    assert window.width() <= 1280 and window.numbers.minimumSizeHint().width() < 600
    assert label.text() == "refused: " + "b" * 5000
    assert label.height() > 3 * label.fontMetrics().height()  # wrapped onto many lines, not cut


@needs_minilm
@pytest.mark.parametrize("how", ["chooser", "example", "new"])
def test_back_to_the_toy_from_a_trained_only_tab_shows_attention_with_the_model_panel(window, qtbot, how):
    # With Model view, Drift, Meaning in context or Heads current, going back to the toy model hid that
    # tab and Qt made the next visible one current: the training lab, which built itself (0.4-0.6 s on
    # the GUI thread) and hid the Model panel the lecturer had just used.
    tabs = minilm_at_1280(window, qtbot).view_tabs
    for view in (window.trained.room.model_view, window.heads_tab):
        tabs.setCurrentWidget(view)
        settle(window)
        if how == "chooser":
            choose_model(window, qtbot, "Toy")
        elif how == "example":
            combo = find(window, QtWidgets.QComboBox, "presetCombo")
            index = next(i for i in range(combo.count()) if combo.itemData(i))
            combo.setCurrentIndex(index)
            combo.activated.emit(index)
        else:
            window.files.new_session()
        finish(window, qtbot)
        assert not window.studio.is_trained
        assert tabs.currentWidget() is window.heatmap_view, tabs.tabText(tabs.currentIndex())
        assert not window.training.built, "the training lab was built without being asked for"
        # The Model panel stays; the Numbers too, except that a 1280-pixel window sets them aside for
        # the Attention tab (README: its heatmaps get the height).
        assert window.controls_dock.isVisible()
        assert window.tables_dock.isVisible() or window.layout_room.compact()
        choose_model(window, qtbot, "all-MiniLM")


def test_a_shown_table_narrower_than_before_is_fitted_without_a_crash(window, qtbot):
    # Additive scores and their W1 table on top, d_model 6; then an example (dot scores, d_model 3):
    # W1, W2 and v_a are hidden, Qt shows W_O, whose model waited to be refreshed while hidden. Its
    # showEvent counted the old 6 columns, refreshed the model while measuring them and read column 3
    # of a 3-column table: an IndexError inside a Qt virtual, which PySide turned into a segmentation fault.
    spin = find(window, QtWidgets.QSpinBox, "dModelSpin")
    spin.setValue(6)
    score = find(window, QtWidgets.QComboBox, "scoreCombo")
    index = next(i for i in range(score.count()) if "additive" in score.itemText(i).lower())
    score.setCurrentIndex(index)
    score.activated.emit(index)
    finish(window, qtbot)
    assert window.studio.state.score == "additive" and window.studio.state.d_model == 6
    tables = window.numbers.table_tabs
    tables.setCurrentWidget(window.numbers.tables["w_1"])
    settle(window)
    with qtbot.capture_exceptions() as raised:
        assert window.load_preset("journey")
        finish(window, qtbot)
    assert not raised, raised
    state = window.studio.state
    assert state.score == "dot" and state.d_model == 3
    shown = tables.currentWidget()
    assert shown.isVisible() and not tables.isTabVisible(tables.indexOf(window.numbers.tables["w_1"]))
    assert shown.model().columnCount() == shown.model().array().shape[1]
    header = shown.horizontalHeader()
    assert all(header.sectionSize(c) >= 40 for c in range(shown.model().columnCount()))


@needs_minilm
def test_back_to_the_toy_is_drawn_in_steps_and_ends_on_the_toy(window, qtbot):
    # The switch installed the other model's views in one GUI-thread turn: the toy's heads' grid rebuilt
    # for its heads and the whole window laid out and painted anew, 0.5 s and more on a busy machine.
    window.resize(1280, 720)
    window.studio.update(projections=True, heads=4)
    finish(window, qtbot)
    choose_model(window, qtbot, "all-MiniLM")
    assert window.heatmap_view._heads_shown == 12
    combo = find(window, QtWidgets.QComboBox, "modelCombo")
    index = next(i for i in range(combo.count()) if combo.itemText(i).startswith("Toy"))
    combo.setCurrentIndex(index)
    combo.activated.emit(index)  # the switch's own turn: the toy's views are not drawn in it
    assert not window.studio.is_trained and window.heatmap_view in window.drawer.steps
    finish(window, qtbot)
    assert not window.drawing()
    assert window.heatmap_view._heads_shown == 4
    tokens = window.studio.state.key_tokens
    assert axis_tokens(window.heatmap_view.stages["weights"].bottom_axis) == tokens


@needs_minilm
@pytest.mark.parametrize("view", ["Model view", "Drift", "Heads"])
def test_the_stage_follows_back_to_the_toy_from_a_trained_only_view(window, qtbot, view):
    # Presenting MiniLM's Model view, an example brought the toy model back under the stage, which went on
    # drawing the trained layers from the toy's state: AttributeError 'layer_index' in the studio's slot.
    present = minilm_at_1280(window, qtbot).present
    stage = present.enter(view, geometry=QtCore.QRect(0, 0, 1280, 720))
    settle(window)
    assert present.view == view
    try:
        with qtbot.capture_exceptions() as raised:
            assert window.load_preset("bank")
            finish(window, qtbot)
        assert not raised, raised
        assert not window.studio.is_trained and present.active
        assert present.view == "Attention"
        assert not stage.isAncestorOf(window.trained.room.drift_plot)  # a lent view went back
        tokens = window.studio.state.query_tokens
        rows = present.sheet.heatmaps[0].data.row_labels
        assert rows and set(rows) <= set(tokens) and "[CLS]" not in rows
    finally:
        present.leave()
        settle(window)


@needs_minilm
def test_presenting_while_minilm_arrives_the_stage_waits_for_the_window(window, qtbot):
    # Presenting the toy's Attention, the window on Positions, then MiniLM: the stage drew its figure in
    # the switch's own turn, and to do it built the window's heatmap view for 12 heads at once (0.4-0.6 s).
    window.resize(1280, 720)
    window.view_tabs.setCurrentWidget(window.positional_view)
    settle(window)
    present = window.present
    present.enter("Attention", geometry=QtCore.QRect(0, 0, 1280, 720))
    settle(window)
    toy_rows = present.sheet.heatmaps[0].data.row_labels
    seen = {}

    def probe(studio):  # after every other handler of the switch, in its turn
        seen["maps"] = len(window.heatmap_view.head_maps)
        seen["rows"] = present.sheet.heatmaps[0].data.row_labels

    window.trained.room.studioChanged.connect(probe)
    try:
        choose_model(window, qtbot, "all-MiniLM")
        assert seen["maps"] < 12, "the heads' maps were all built in the switch's turn"
        assert seen["rows"] == toy_rows  # the stage kept its figure meanwhile
        qtbot.waitUntil(lambda: "[CLS]" in present.sheet.heatmaps[0].data.row_labels, timeout=10_000)
        assert present.view == "Attention" and len(window.heatmap_view.head_maps) >= 12
    finally:
        window.trained.room.studioChanged.disconnect(probe)
        present.leave()
        settle(window)
