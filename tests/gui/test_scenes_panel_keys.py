"""The Scenes panel as a lecturer uses it from the keyboard and the menus: View → Scenes, Alt+↑ /
Alt+↓ and Delete in the list (undoable; elsewhere Alt+↑ / Alt+↓ still move the query), a refused
Ctrl+M said in the panel, fields that always edit the scene the list shows as selected, a pinned
cell (Pin, Unpin, kept by Update, saved and opened again), and the stage's precision a scene keeps."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.scenes import example_lecture, read_lecture
from gui_helpers import put_lecture_away, settle
from window_reset import activate

WINDOW_PRESET = "journey"
WINDOW_SIZE = (1280, 720)
ALT, CTRL = QtCore.Qt.AltModifier, QtCore.Qt.ControlModifier


@pytest.fixture
def window(shared_window, qtbot):
    w = shared_window
    w.scenes.set_lecture(None, record=False)
    w.scenes._undo.clear()
    w.scenes._redo.clear()
    w.lecture_files.path = w.lecture_files.saved = None
    w.heatmap_view.pinned = None
    w.scenes_dock.show()
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    settle(w)
    activate(w, qtbot)
    yield w
    put_lecture_away(qtbot, w)
    w.heatmap_view.pinned = None


def _focus(qtbot, widget) -> None:
    widget.setFocus(QtCore.Qt.OtherFocusReason)
    qtbot.waitUntil(lambda: QtWidgets.QApplication.focusWidget() is widget)


def _titles(panel) -> list[str]:
    return [s.title for s in panel.lecture.scenes]


def _list_texts(panel) -> list[str]:
    return [panel.list.item(i).text() for i in range(panel.list.count())]


def _tab(w, name: str) -> None:
    tabs = w.view_tabs
    tabs.setCurrentIndex(next(i for i in range(tabs.count()) if tabs.tabText(i) == name))
    settle(w)


def _three_scenes(w) -> None:
    """A lecture of three toy scenes made with Ctrl+M, each of its own temperature."""
    for i in range(3):
        w.studio.update(temperature=1.0 + i)
        settle(w)
        QTest.keyClick(w, QtCore.Qt.Key_M, CTRL)
        settle(w)
    for i in range(3):
        w.scenes.list.setCurrentRow(i)
        w.scenes.scene_title.setText(f"T{1 + i}")
        w.scenes.commit_edits()
    assert _titles(w.scenes) == ["T1", "T2", "T3"]


def _click_cell(w, i: int, j: int) -> None:
    """Click cell (query ``i``, key ``j``) of the Attention view's weights, as a person does."""
    view = w.heatmap_view
    hm, canvas = view.stages["weights"], view.canvases["weights"]
    point = canvas.mapFromScene(hm.cell_scene_rect(i, j).center())
    QTest.mouseClick(canvas.viewport(), QtCore.Qt.LeftButton, QtCore.Qt.NoModifier, point)
    settle(w)
    assert view.pinned == ("weights", i, j)


def test_view_scenes_shows_and_hides_the_scenes_panel(window):
    w = window
    view_menu = next(a.menu() for a in w.menuBar().actions() if a.menu() and a.text().replace("&", "") == "View")
    action = w.findChild(QtGui.QAction, "scenesDockAction")
    assert action is not None and action in view_menu.actions()
    assert action.text().replace("&", "") == "Scenes" and action.isCheckable()
    assert w.scenes_dock.isVisible() and action.isChecked()
    action.trigger()
    settle(w)
    assert not w.scenes_dock.isVisible() and not action.isChecked()
    action.trigger()
    settle(w)
    assert w.scenes_dock.isVisible() and action.isChecked() and w.scenes.isVisible()
    # Hidden, it stays hidden while the lecture is edited, and comes back when a lecture opens.
    w.scenes.open_example()
    action.trigger()
    settle(w)
    w.scenes.list.setCurrentRow(0)
    w.scenes.duplicate()
    w.scenes.add_current()
    settle(w)
    assert not w.scenes_dock.isVisible() and len(w.scenes.lecture.scenes) == len(example_lecture().scenes) + 2
    w.scenes.set_lecture(None, record=False)
    w.scenes.add_current()
    settle(w)
    assert w.scenes_dock.isVisible() and action.isChecked()


def test_alt_arrows_in_the_list_move_the_scene_undoably_and_elsewhere_still_move_the_query(window, qtbot):
    w = window
    panel = w.scenes
    panel.open_example()
    settle(w)
    first, second, third = _titles(panel)[:3]
    panel.list.setCurrentRow(0)
    _focus(qtbot, panel.list)
    query = w.studio.state.query_index
    QTest.keyClick(panel.list, QtCore.Qt.Key_Down, ALT)
    settle(w)
    # The scene moved, in the lecture and in the list; it stays selected; the query did not move.
    assert _titles(panel)[:3] == [second, first, third]
    assert _list_texts(panel)[:2] == [f"1. {second}", f"2. {first}"]
    assert panel.list.currentRow() == 1 and panel.scene_title.text() == first
    assert w.studio.state.query_index == query
    QTest.keyClick(panel.list, QtCore.Qt.Key_Down, ALT)
    settle(w)
    assert _titles(panel)[:3] == [second, third, first] and panel.list.currentRow() == 2
    QTest.keyClick(panel.list, QtCore.Qt.Key_Up, ALT)
    settle(w)
    assert _titles(panel)[:3] == [second, first, third] and panel.list.currentRow() == 1
    # The panel's Undo takes each move back, one at a time, as it does a drag's.
    undo = w.findChild(QtWidgets.QPushButton, "scenes_undo")
    undo.click()
    assert _titles(panel)[:3] == [second, third, first]
    undo.click()
    undo.click()
    assert _titles(panel)[:3] == [first, second, third]
    # The first scene goes no higher: nothing changes, nothing to undo.
    panel.list.setCurrentRow(0)
    _focus(qtbot, panel.list)
    QTest.keyClick(panel.list, QtCore.Qt.Key_Up, ALT)
    assert _titles(panel)[:3] == [first, second, third] and not undo.isEnabled()
    # Delete in the list deletes the selected scene, undoably.
    count = len(panel.lecture.scenes)
    panel.list.setCurrentRow(1)
    QTest.keyClick(panel.list, QtCore.Qt.Key_Delete)
    assert len(panel.lecture.scenes) == count - 1 and _titles(panel)[:2] == [first, third]
    undo.click()
    assert len(panel.lecture.scenes) == count and _titles(panel)[:3] == [first, second, third]
    # Elsewhere (the Attention view has the focus) Alt+↓ / Alt+↑ move the query, not a scene.
    _tab(w, "Attention")
    w.studio.select(query=1)
    settle(w)
    _focus(qtbot, w.heatmap_view)
    QTest.keyClick(w.heatmap_view, QtCore.Qt.Key_Down, ALT)
    settle(w)
    assert w.studio.state.query_index == 2 and _titles(panel)[:3] == [first, second, third]
    QTest.keyClick(w.heatmap_view, QtCore.Qt.Key_Up, ALT)
    settle(w)
    assert w.studio.state.query_index == 1 and _titles(panel)[:3] == [first, second, third]


def test_a_refused_ctrl_m_is_said_in_the_panel_and_the_fields_edit_the_selected_scene(window, qtbot):
    w = window
    panel = w.scenes
    _three_scenes(w)
    message = w.findChild(QtWidgets.QLabel, "scenesMessage")
    assert message is not None and not message.isVisible()
    # The first scene selected, then Ctrl+M on the Drift tab, which needs a trained model: refused.
    panel.list.setCurrentRow(0)
    _tab(w, "Drift")
    before = panel.lecture
    QTest.keyClick(w, QtCore.Qt.Key_M, CTRL)
    settle(w)
    assert panel.lecture is before
    assert message.isVisible() and message.text().startswith("Not added: ") and "Drift" in message.text()
    assert "trained model" in message.text() and "Model panel" in message.text()  # and what to do
    assert "Drift" in w.statusBar().currentMessage()
    # The window's message is the reason alone (the stage says "Not added: " and it).
    assert "Drift" in w.message_label.text() and not w.message_label.text().startswith("Not added")
    # What is typed next goes to the scene the list shows as selected, and the refusal is then old news.
    assert panel.list.currentRow() == 0 and panel.list.item(0).isSelected() and panel.scene_title.text() == "T1"
    _focus(qtbot, panel.scene_title)
    panel.scene_title.selectAll()
    QTest.keyClicks(panel.scene_title, "Opening")
    QTest.keyClick(panel.scene_title, QtCore.Qt.Key_Return)
    assert _titles(panel) == ["Opening", "T2", "T3"] and not message.isVisible()
    # Typed without Enter, then another scene chosen in the list: the typing is the first scene's.
    panel.scene_title.selectAll()
    QTest.keyClicks(panel.scene_title, "First")
    rect = panel.list.visualItemRect(panel.list.item(2))
    QTest.mouseClick(panel.list.viewport(), QtCore.Qt.LeftButton, QtCore.Qt.NoModifier, rect.center())
    settle(w)
    assert _titles(panel) == ["First", "T2", "T3"]
    assert panel.list.currentRow() == 2 and panel.scene_title.text() == "T3"
    # Notes typed, then Alt+↓ at once (before the notes' pause): the notes are the scene's they were
    # typed for, and that scene moves.
    panel.list.setCurrentRow(1)
    _focus(qtbot, panel.notes)
    QTest.keyClicks(panel.notes, "say why")
    _focus(qtbot, panel.list)
    QTest.keyClick(panel.list, QtCore.Qt.Key_Down, ALT)
    settle(w)
    assert _titles(panel) == ["First", "T3", "T2"] and panel.lecture.scenes[2].notes == "say why"
    assert panel.list.currentRow() == 2 and panel.notes.toPlainText() == "say why"
    # A refused title is said in the panel, and the old one shown again.
    panel.scene_title.setText("   ")
    panel.scene_title.editingFinished.emit()
    assert _titles(panel) == ["First", "T3", "T2"] and panel.scene_title.text() == "T2"
    assert message.isVisible() and "Scene 3" in message.text() and "title" in message.text()
    # The list never shows a scene selected other than the one the fields edit (a Ctrl+click that
    # clears the selection selects the current scene again).
    rect = panel.list.visualItemRect(panel.list.item(2))
    QTest.mouseClick(panel.list.viewport(), QtCore.Qt.LeftButton, CTRL, rect.center())
    settle(w)
    assert [panel.list.row(i) for i in panel.list.selectedItems()] == [panel.list.currentRow()]
    assert panel.scene_title.text() == panel.lecture.scenes[panel.list.currentRow()].title


def test_pin_records_the_clicked_cell_and_update_save_and_open_keep_it(window, qtbot, tmp_path):
    w = window
    panel = w.scenes
    pin, unpin = (w.findChild(QtWidgets.QPushButton, name) for name in ("scenes_pin", "scenes_unpin"))
    label = w.findChild(QtWidgets.QLabel, "scenePin")
    message = w.findChild(QtWidgets.QLabel, "scenesMessage")
    _three_scenes(w)
    tokens = w.studio.state.query_tokens
    # No cell clicked yet: Pin says what to do, in the panel.
    panel.list.setCurrentRow(1)
    pin.click()
    assert "pin" not in str(panel.lecture.scenes[1].selection) and message.isVisible()
    assert "Click a cell" in message.text()
    assert label.text() == "none" and not unpin.isEnabled()
    # A cell clicked in the Attention view, then Pin: the selected scene pins it, in words.
    _click_cell(w, 3, 1)
    pin.click()
    scene = panel.lecture.scenes[1]
    assert scene.pin == (3, 1) and scene.selection["pin_query"] == 3 and scene.selection["pin_key"] == 1
    words = f"“{tokens[3]}” → “{w.studio.state.key_tokens[1]}”"
    assert label.text() == words and unpin.isEnabled()
    assert f"pinned: {words}" in panel.list.item(1).toolTip()
    assert panel.scene(0).pin is None and panel.scene(2).pin is None
    # Undoable as every lecture edit.
    panel.undo()
    assert panel.lecture.scenes[1].pin is None and label.text() == "none"
    panel.redo()
    assert panel.lecture.scenes[1].pin == (3, 1)
    # Update keeps the pin (and where the scene plays to) with what is shown now.
    panel.go(1)
    settle(w)
    w.studio.update(causal=True)
    settle(w)
    panel.list.setCurrentRow(1)
    panel.update_current()
    scene = panel.lecture.scenes[1]
    assert scene.session["causal"] is True and scene.pin == (3, 1)
    # A cell clicked after the scene was shown is its new pin on Update.
    _click_cell(w, 4, 2)
    panel.update_current()
    assert panel.lecture.scenes[1].pin == (4, 2)
    # Ctrl+M records the cell clicked for it; a click made for another scene is not the new one's pin.
    QTest.keyClick(w, QtCore.Qt.Key_M, CTRL)
    settle(w)
    assert panel.lecture.scenes[2].pin is None and panel.list.currentRow() == 2
    _click_cell(w, 2, 0)
    QTest.keyClick(w, QtCore.Qt.Key_M, CTRL)
    settle(w)
    assert panel.lecture.scenes[3].pin == (2, 0)
    # Saved and opened again, the pins are kept.
    path = tmp_path / "pinned.attn-lecture.json"
    assert panel.files.save_to(path)
    assert read_lecture(path).scenes[1].pin == (4, 2)
    panel.set_lecture(None, record=False)
    assert panel.files.open(path, ask=False)
    assert panel.lecture.scenes[1].pin == (4, 2) and panel.lecture.scenes[3].pin == (2, 0)
    # Unpin takes it away, undoably.
    panel.list.setCurrentRow(1)
    unpin.click()
    assert panel.lecture.scenes[1].pin is None and label.text() == "none" and not unpin.isEnabled()
    panel.undo()
    assert panel.lecture.scenes[1].pin == (4, 2)
    # A cell the selected scene does not have is refused, and said.
    w.studio.update(sentence="one two three four five six seven eight nine ten")
    settle(w)
    _click_cell(w, 9, 9)
    panel.list.setCurrentRow(0)
    pin.click()
    assert panel.lecture.scenes[0].pin is None and "Not pinned" in message.text() and message.isVisible()


def test_a_scene_keeps_the_stages_precision_when_it_is_not_the_stages_own(window, monkeypatch):
    w = window
    panel = w.scenes
    # The stage's precision (View → Precision on the stage) as the stage tells it.
    digits = [2]
    monkeypatch.setattr(type(w.present), "stage_digits", lambda self: digits[0], raising=False)
    panel.add_current()
    assert "digits" not in panel.lecture.scenes[0].selection  # the stage's own: nothing to keep
    digits[0] = 4
    panel.add_current()
    assert panel.lecture.scenes[1].selection["digits"] == 4
    # Update keeps a scene's precision when the stage is back at its own.
    digits[0] = 2
    panel.list.setCurrentRow(1)
    panel.update_current()
    assert panel.lecture.scenes[1].selection["digits"] == 4


def test_the_panel_at_a_projectors_size_says_a_refusal_and_a_pin(window, tmp_path):
    """The panel drawn as the lecturer sees it at 1280×720 (kept as a picture to look at)."""
    w = window
    _three_scenes(w)
    _click_cell(w, 2, 1)
    w.scenes.list.setCurrentRow(1)
    w.scenes.pin()
    _tab(w, "Drift")
    QTest.keyClick(w, QtCore.Qt.Key_M, CTRL)
    settle(w)
    picture = w.scenes_dock.grab()
    out = Path(tmp_path / "scenes-panel.png")
    assert picture.save(str(out))
    panel = w.scenes
    for widget in (panel.message, panel.list, panel.scene_title, panel.pin_label, panel.buttons["pin"]):
        assert widget.isVisible() and widget.height() > 10
        top = widget.mapTo(w.scenes_dock, QtCore.QPoint(0, 0)).y()
        assert 0 <= top and top + widget.height() <= w.scenes_dock.height()  # whole, inside the dock
    assert panel.list.height() >= 3 * panel.list.sizeHintForRow(0)  # a few scenes seen at once
