"""The presenter's keys on the stage, as PowerPoint, Keynote, pdfpc and a clicker's buttons have them:
B or "." a black screen, W or "," a white one (any key brings the stage back, and does nothing else);
the scene's number "n / N" in a corner (N turns it off); F1 or ? lists the stage's keys until a key is
pressed; Shift+F5 presents from the lecture's current scene. What is refused while presenting is said
on the stage in a banner; a right-to-left caption is laid out apart from the keys' hints."""

from __future__ import annotations

import re

import dataclasses

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.gui.lecture.stage import is_key_hint, text_direction
from attn_studio.gui.lecture.stage_keys import STAGE_KEYS
from attn_studio.scenes import Lecture, Scene, example_lecture
from gui_helpers import put_lecture_away, settle, wait_idle

WINDOW_PRESET = "animal"
WINDOW_SIZE = (1280, 720)
PROJECTOR = QtCore.QRect(0, 0, 1280, 720)
ARABIC = "الانتباه يوزع الأوزان على الكلمات: 0.68 إلى animal"


@pytest.fixture
def window(shared_window, qtbot):
    w = shared_window
    w.scenes.set_lecture(None, record=False)
    yield w
    w.present.leave()
    settle(w)
    w.present.number_on = True
    put_lecture_away(qtbot, w)


def present(w, view="Attention", rect=PROJECTOR):
    """The stage on ``view`` (None: the window's, a scene's when one was just shown) at ``rect``."""
    stage = w.present.enter(view, geometry=rect)
    settle(w)
    return stage


def pixels(stage) -> np.ndarray:
    """The stage as the room sees it: an (h, w, 3) array of its pixels."""
    settle(stage.present.window)
    image = stage.grab().toImage().convertToFormat(QtGui.QImage.Format_RGB888)
    data = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes())
    rows = data.reshape(image.height(), image.bytesPerLine())[:, :image.width() * 3]
    return rows.reshape(image.height(), image.width(), 3).copy()  # its own: the image is freed after


def share(image: np.ndarray, colour) -> float:
    """The share of the pixels of ``image`` that are ``colour`` (r, g, b) within 8 levels."""
    return float(np.all(np.abs(image.astype(int) - colour) <= 8, axis=2).mean())


BLACK, WHITE = (0, 0, 0), (255, 255, 255)


def lecture_of(*captions) -> Lecture:
    """The example lecture's first scenes with ``captions``."""
    scenes = example_lecture().scenes
    return Lecture("keys", tuple(dataclasses.replace(scenes[i], caption=c) for i, c in enumerate(captions)))


@pytest.mark.parametrize("key", [QtCore.Qt.Key_B, QtCore.Qt.Key_Period], ids=["B", "period"])
def test_b_or_period_blacks_out_the_stage_and_any_key_brings_it_back_doing_nothing_else(window, key):
    w = window
    stage = present(w)
    before = pixels(stage)
    assert share(before, BLACK) < 0.5  # the figure and its words on the canvas
    query = w.studio.state.query_index
    QTest.keyClick(stage, key)
    blank = pixels(stage)
    assert share(blank, BLACK) > 0.999
    blank_widget = stage.findChild(QtWidgets.QWidget, "presentBlank")
    assert blank_widget.isVisible() and blank_widget.geometry() == stage.rect()
    # Any other key: the stage again, and the key is spent on that (the query does not move).
    QTest.keyClick(stage, QtCore.Qt.Key_Down)
    after = pixels(stage)
    assert w.studio.state.query_index == query
    assert not blank_widget.isVisible()
    assert np.array_equal(after, before)
    # The same key again brings it back too; a modifier pressed alone does not.
    QTest.keyClick(stage, key)
    QTest.keyClick(stage, QtCore.Qt.Key_Shift)
    assert share(pixels(stage), BLACK) > 0.999
    QTest.keyClick(stage, key)
    assert np.array_equal(pixels(stage), before)
    assert w.studio.state.query_index == query


@pytest.mark.parametrize("key", [QtCore.Qt.Key_W, QtCore.Qt.Key_Comma], ids=["W", "comma"])
def test_w_or_comma_whites_out_the_stage_and_a_click_brings_it_back(window, key):
    w = window
    stage = present(w)
    before = pixels(stage)
    dark = (np.asarray(before).sum(axis=2) < 200).mean()
    assert dark > 0.005  # the figure's colours and the words
    QTest.keyClick(stage, key)
    white = pixels(stage)
    assert share(white, WHITE) > 0.999
    blank = stage.findChild(QtWidgets.QWidget, "presentBlank")
    QTest.mouseClick(blank, QtCore.Qt.LeftButton, pos=QtCore.QPoint(300, 300))
    assert np.array_equal(pixels(stage), before)
    # From white, B gives the stage back first (any key does); pressed again, black.
    QTest.keyClick(stage, key)
    QTest.keyClick(stage, QtCore.Qt.Key_B)
    assert np.array_equal(pixels(stage), before)
    QTest.keyClick(stage, QtCore.Qt.Key_B)
    assert share(pixels(stage), BLACK) > 0.999


def test_f1_lists_every_key_of_the_stage_until_a_key_is_pressed(window):
    w = window
    stage = present(w)
    QTest.keyClick(stage, QtCore.Qt.Key_F1)
    settle(w)
    overlay = stage.findChild(QtWidgets.QFrame, "presentKeys")
    assert overlay.isVisible() and overlay.geometry() == stage.rect()
    text = overlay.text()
    for keys, what in STAGE_KEYS:
        assert f"{keys}: {what}" in text
    for name in ("PageDown", "Shift+PageDown", "G", "Home", "↑ ↓", "← →", "1–9", "S", "C", "H", "B or .",
                 "W or ,", "N", "F1 or ?", "Ctrl+Z", "Ctrl+M", "Esc"):
        assert name in text, name
    # The list is drawn whole at the stage's caption size: not cut, not made smaller.
    label = overlay.findChild(QtWidgets.QLabel, "presentKeysText")
    assert label.font().pixelSize() == stage.sizes()["caption"] >= 26
    assert label.sizeHint().height() <= stage.height() and label.sizeHint().width() <= stage.width()
    assert overlay.rect().contains(label.geometry())
    for keys, what in STAGE_KEYS:
        assert keys.split()[0] in label.text() and what.split()[0] in label.text()
    # Any key closes it and does only that: S does not switch the scaling.
    scale = w.studio.state.scale
    QTest.keyClick(stage, QtCore.Qt.Key_S)
    settle(w)
    assert not overlay.isVisible() and w.studio.state.scale == scale
    # "?" (Shift and /) shows it too.
    QTest.keyClick(stage, QtCore.Qt.Key_Question, QtCore.Qt.ShiftModifier)
    assert overlay.isVisible()
    QTest.keyClick(stage, QtCore.Qt.Key_F1)
    assert not overlay.isVisible()


def test_the_scene_number_sits_in_a_corner_while_a_lecture_plays_and_n_turns_it_off(window):
    w = window
    stage = present(w)
    number = stage.findChild(QtWidgets.QLabel, "presentNumber")
    assert not number.isVisible()  # no lecture: no number
    w.present.leave()
    w.scenes.open_example()
    settle(w)
    total = len(w.scenes.lecture.scenes)
    stage = present(w)
    number = stage.findChild(QtWidgets.QLabel, "presentNumber")
    assert number.isVisible() and number.text() == f"1 / {total}"
    for key in (QtCore.Qt.Key_G, QtCore.Qt.Key_3, QtCore.Qt.Key_Return):
        QTest.keyClick(stage, key)
    settle(w)
    assert w.scenes.current == 2 and number.text() == f"3 / {total}"
    # At the room's size, in the top right corner, clear of the title.
    assert number.font().pixelSize() == stage.sizes()["caption"] >= 26
    corner = QtCore.QRect(number.mapTo(stage, QtCore.QPoint(0, 0)), number.size())
    assert corner.right() >= stage.width() - stage.sizes()["margin"] - 2 and corner.top() <= stage.sizes()["margin"]
    title = stage.findChild(QtWidgets.QLabel, "presentTitle")
    title_box = QtCore.QRect(title.mapTo(stage, QtCore.QPoint(0, 0)), title.size())
    assert not title_box.intersects(corner)
    QTest.keyClick(stage, QtCore.Qt.Key_N)
    assert not number.isVisible()
    # Home rather than End: the example's last scenes train a run on the stage (minutes on a busy machine).
    QTest.keyClick(stage, QtCore.Qt.Key_Home)
    settle(w)
    assert w.scenes.current == 0
    assert not number.isVisible()  # off stays off from scene to scene
    QTest.keyClick(stage, QtCore.Qt.Key_N)
    assert number.isVisible() and number.text() == f"1 / {total}"


def test_shift_f5_presents_the_open_lecture_from_its_current_scene(window, qtbot):
    w = window
    action = w.findChild(QtGui.QAction, "presentSceneAction")
    assert action is not None and action.shortcut() == QtGui.QKeySequence("Shift+F5")
    view_menu = next(a.menu() for a in w.menuBar().actions() if a.menu() and a.text().replace("&", "") == "View")
    assert action in view_menu.actions()
    # No lecture open: the current view, as F5.
    w.view_tabs.setCurrentIndex(next(i for i in range(w.view_tabs.count())
                                     if w.view_tabs.tabText(i).replace("&", "") == "Compare"))
    settle(w)
    action.trigger()
    settle(w)
    assert w.present.active and w.present.view == "Compare"
    w.present.leave()
    settle(w)
    # A lecture open on its fifth scene, then the window changed: Shift+F5 plays scene 5 as it was saved.
    w.scenes.open_example()
    settle(w)
    w.scenes.go(4)
    settle(w)
    scene = w.scenes.lecture.scenes[4]
    w.studio.update(temperature=2.5)
    settle(w)
    stage = w.present.enter_scene(geometry=PROJECTOR)
    settle(w)
    assert w.present.active and w.scenes.current == 4 and w.present.view == scene.view
    assert w.studio.state.temperature == scene.session["temperature"]
    assert stage.findChild(QtWidgets.QLabel, "presentNumber").text() == f"5 / {len(w.scenes.lecture.scenes)}"
    assert stage.caption.text().startswith(scene.caption[:30])
    # On the stage, Shift+F5 gives the current scene again from its start (F5 alone leaves).
    w.studio.update(temperature=3.0)
    settle(w)
    QTest.keyClick(stage, QtCore.Qt.Key_F5, QtCore.Qt.ShiftModifier)
    settle(w)
    assert w.present.active and w.scenes.current == 4
    assert w.studio.state.temperature == scene.session["temperature"]
    w.present.leave()
    settle(w)
    # The action itself, with a lecture open: the stage opens on the current scene.
    w.scenes.go(2)
    settle(w)
    action.trigger()
    settle(w)
    assert w.present.active and w.scenes.current == 2 and w.present.view == w.scenes.lecture.scenes[2].view


def test_a_refused_ctrl_m_is_said_on_the_stage_in_a_banner(window):
    w = window
    full = example_lecture().scenes[:1] * 1000  # a lecture holds at most 1000 scenes
    w.scenes.set_lecture(Lecture("full", full), record=False)
    w.scenes.go(0)
    settle(w)
    stage = present(w, None)
    banner = stage.findChild(QtWidgets.QLabel, "presentBanner")
    assert not banner.isVisible()
    QTest.keyClick(stage, QtCore.Qt.Key_M, QtCore.Qt.ControlModifier)
    assert len(w.scenes.lecture.scenes) == 1000
    assert banner.isVisible() and banner.text().startswith("Not added:") and "1000" in banner.text()
    assert stage.caption.text().startswith("Not added:")  # where it was said before, too
    assert "1000" in w.message_label.text()  # and in the window
    # Over the view, across the stage, at the caption's size, for a few seconds.
    assert banner.font().pixelSize() == stage.sizes()["caption"]
    assert banner.width() >= stage.width() * 0.9 and banner.height() >= banner.heightForWidth(banner.width())
    assert stage.rect().contains(banner.geometry())
    assert stage._banner_timer.isActive() and 2000 <= stage._banner_timer.interval() <= 8000
    stage._banner_timer.timeout.emit()  # its time is up
    assert not banner.isVisible()
    # The caption line keeps its answer for its two seconds, whatever is drawn meanwhile, then the scene's.
    w.present.render()
    assert stage.caption.text().startswith("Not added:")
    stage._hold.stop()
    stage._hold.timeout.emit()
    settle(w)
    assert stage.caption.text().startswith(full[0].caption[:30])


def test_a_bad_value_in_the_strip_and_the_window_s_messages_are_said_on_the_stage(window):
    w = window
    stage = present(w)
    banner = stage.findChild(QtWidgets.QLabel, "presentBanner")
    sentence = stage.findChild(QtWidgets.QLineEdit, "presentSentence")
    kept = w.studio.state.sentence
    too_long = "a " * 3000  # 3,000 tokens: more than a sentence may have
    sentence.setText(too_long)
    sentence.textEdited.emit(too_long)  # as typing does
    settle(w)
    assert w.studio.state.sentence == kept
    assert banner.isVisible() and "2,048" in banner.text()
    # Whatever the window reports while the stage is up.
    w.show_message("The model could not be loaded: all-MiniLM-L6-v2 is not installed")
    assert banner.isVisible() and banner.text().startswith("The model could not be loaded")
    w.present.leave()
    settle(w)
    w.show_message("said in the window only")  # no stage: nothing to say it on, nothing breaks
    assert "said in the window only" in w.message_label.text()


def test_a_right_to_left_caption_is_laid_out_apart_from_the_key_hints(window):
    w = window
    w.scenes.set_lecture(lecture_of(ARABIC, "“journey” weighs the sentence"), record=False)
    w.scenes.go(0)
    settle(w)
    stage = present(w, None)
    caption = stage.findChild(QtWidgets.QLabel, "presentCaption")
    hints = stage.findChild(QtWidgets.QLabel, "presentHints")
    assert caption is stage.caption
    assert caption.text().startswith(ARABIC)
    assert "leaves" not in caption.text() and "→" not in caption.text()  # no key hint inside the caption
    assert hints.isVisible() and ("→" in hints.text() or "↑" in hints.text())
    assert ARABIC not in hints.text()
    assert caption.layoutDirection() == QtCore.Qt.RightToLeft and hints.layoutDirection() == QtCore.Qt.LeftToRight
    # The caption starts on the right, the hints at its end on the left; both whole on one line.
    at = lambda label: label.mapTo(stage, QtCore.QPoint(0, 0)).x()  # noqa: E731
    assert at(hints) + hints.width() <= at(caption)
    for label in (caption, hints):
        assert label.fontMetrics().horizontalAdvance(label.text()) <= label.width()
        assert label.font().pixelSize() == stage.sizes()["caption"]
    # A left-to-right scene: the caption on the left, the hints on the right.
    QTest.keyClick(stage, QtCore.Qt.Key_G)
    QTest.keyClick(stage, QtCore.Qt.Key_2)
    QTest.keyClick(stage, QtCore.Qt.Key_Return)
    settle(w)
    assert caption.text().startswith("“journey” weighs the sentence")
    assert caption.layoutDirection() == QtCore.Qt.LeftToRight
    if hints.isVisible():
        assert at(caption) + caption.width() <= at(hints)


def test_hints_give_way_first_and_the_caption_is_never_cut(window):
    w = window
    long = ("The query row of weights sums to one: each word's share of the attention of the query "
            "word is read along its row")
    w.scenes.set_lecture(lecture_of(long), record=False)
    w.scenes.go(0)
    settle(w)
    stage = present(w, None)
    caption, hints = stage.caption, stage.hints
    assert caption.text() == long  # the view's notes and the hints gave way
    assert not hints.isVisible()
    # Longer than the stage is wide: on two lines, whole, at the caption's size.
    assert caption.fontMetrics().horizontalAdvance(long) > caption.width()
    assert caption.font().pixelSize() == stage.sizes()["caption"]
    assert caption.height() >= caption.heightForWidth(caption.width()) >= 2 * caption.fontMetrics().height()
    body = stage.findChild(QtWidgets.QWidget, "presentBody")
    assert body.geometry().bottom() < stage.caption_row.geometry().top()
    # A shorter one leaves room for some of the hints, whole, after it.
    w.present.leave()
    w.scenes.set_lecture(lecture_of("The query row of weights sums to one"), record=False)
    w.scenes.go(0)
    settle(w)
    stage = present(w, None)
    caption, hints = stage.caption, stage.hints
    assert caption.text().startswith("The query row of weights sums to one")
    assert hints.isVisible() and hints.text()
    for label in (caption, hints):
        assert label.fontMetrics().horizontalAdvance(label.text()) <= label.width()
    # The same on a view lent to the stage (the √d_k plots): the caption is not measured first there.
    w.present.leave()
    first = example_lecture().scenes[1]
    variance = Scene("√d_k", caption=long, view="Why divide by √d_k", session=first.session)
    w.scenes.set_lecture(Lecture("lent", (first, variance)), record=False)
    w.scenes.go(0)
    settle(w)
    stage = present(w, None)  # a heatmap first: its caption line measured at one line
    w.scenes.go(1)
    settle(w)
    assert w.present.view == "Why divide by √d_k" and stage.caption.text() == long
    assert stage.caption.height() >= stage.caption.heightForWidth(stage.caption.width())
    # With no scene caption the view's hints have room and the list of keys is offered.
    w.present.leave()
    w.scenes.set_lecture(None, record=False)
    stage = present(w, "Step by step")
    assert stage.hints.text() == "← → step · ↑ ↓ query · Esc leaves · F1 keys" and stage.hints.isVisible()
    # The caption holds what the view shows (which keys, when they are windowed), never a key's hint.
    assert re.fullmatch(r"(keys \d+–\d+ of \d+)?", stage.caption.text())


def test_text_direction_follows_the_first_strong_letter():
    assert text_direction(ARABIC) == QtCore.Qt.RightToLeft
    assert text_direction("שלום world") == QtCore.Qt.RightToLeft
    assert text_direction("0.68 → “animal”") == QtCore.Qt.LeftToRight
    assert text_direction("") == QtCore.Qt.LeftToRight


def test_what_tells_a_key_goes_to_the_hints_and_what_the_view_shows_stays_in_the_caption():
    for hint in ("↑ ↓ query", "1–9 head", "S scaling", "C causal mask", "PageDown next view", "H controls",
                 "← → step", "Esc leaves", "Play / Pause, Step, Reset below"):
        assert is_key_hint(hint), hint
    for note in ("queries 8–13 of 16 (↑ ↓)", "keys 1–5 of 6", "find: 4.2 0.68", "plot 1 of 2 (← →)",
                 "page 2 of 3 (← →)", "A head alone", "Nothing to show yet: type a sentence.", ARABIC):
        assert not is_key_hint(note), note


def test_a_scene_whose_model_does_not_load_is_said_on_the_stage(window, qtbot, tmp_path):
    w = window
    scenes = example_lecture().scenes
    trained = scenes[8]
    missing = dict(trained.session, model={"name": "my-bert", "folder": str(tmp_path / "my-bert"), "sha256": "0" * 64})
    lecture = Lecture("missing", (scenes[1], dataclasses.replace(trained, session=missing)))
    w.scenes.set_lecture(lecture, record=False)
    w.scenes.go(0)
    settle(w)
    stage = present(w, None)
    banner = stage.findChild(QtWidgets.QLabel, "presentBanner")
    for key in (QtCore.Qt.Key_G, QtCore.Qt.Key_2, QtCore.Qt.Key_Return):
        QTest.keyClick(stage, key)
    wait_idle(qtbot, w)
    assert banner.isVisible() and "my-bert" in banner.text(), banner.text()
    assert "my-bert" in w.message_label.text()  # in the window too, as before
