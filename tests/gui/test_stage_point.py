"""The stage shows the scene's point: at a projector's 1280×720 (and 1024×768) the stage fits the sentence
before it windows it (its own precision, colour-only cells, then a window of tokens), keeps the pinned
cell, the query row and (causal) each shown row's own cell in view, outlines the pinned cell, says both
ranges when it windows, and labels its colour bars at both ends (and at 0 when 0 lies inside)."""

from __future__ import annotations

import re

import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.gui import settings
from attn_studio.scenes import Lecture, Scene, example_lecture
from gui_helpers import play_example_scene, put_lecture_away, settle
from stage_measure import drawn_texts

WINDOW_PRESET = "journey"
WINDOW_SIZE = (1280, 720)
PROJECTOR = QtCore.QRect(0, 0, 1280, 720)
XGA = QtCore.QRect(0, 0, 1024, 768)
RANGES = re.compile(r"queries \d+–\d+, keys \d+–\d+ of \d+")


@pytest.fixture
def window(shared_window, qtbot):
    w = shared_window
    w.scenes.set_lecture(None, record=False)
    w.present.set_stage_digits(2)
    yield w
    w.present.set_stage_digits(2)
    put_lecture_away(qtbot, w)


def play(w, qtbot, number: int, rect=PROJECTOR):
    """Scene ``number`` (from 1) of the example lecture on a stage of ``rect``'s size."""
    return play_example_scene(w, qtbot, number, rect, strip=True)


def caption(stage) -> str:
    return stage.findChild(QtWidgets.QLabel, "presentCaption").text()


def shown(hm) -> tuple[list[str], list[str]]:
    return list(hm.data.row_labels), list(hm.data.col_labels)


def cell_pixel(stage, hm, i, j, where="left") -> QtGui.QColor:
    """The stage's colour at the middle of cell (i, j)'s left edge (or its centre)."""
    view = hm.plot.scene().views()[0]
    rect = view.mapFromScene(hm.cell_scene_rect(i, j)).boundingRect()
    point = QtCore.QPoint(rect.left(), rect.center().y()) if where == "left" else rect.center()
    image = stage.grab().toImage()
    return image.pixelColor(view.mapTo(stage, point))


def test_it_animal_shows_all_keys_the_weight_and_the_pinned_cell(window, qtbot, minilm):
    w = window
    stage = play(w, qtbot, 9)
    scene = example_lecture().scenes[8]
    assert w.present.pinned_cell() == (10, 2) == scene.pin
    hm = w.present.sheet.heatmaps[0]
    rows, cols = shown(hm)
    tokens = list(w.studio.state.key_tokens)
    assert len(tokens) == 16 and cols == tokens  # every key, whole
    assert "it" in rows and "animal" in cols
    texts = drawn_texts(stage)
    labels = {t: px for t, px in texts if t in set(tokens) and t not in ("'", ".")}
    assert set(labels) >= {"[CLS]", "animal", "street", "because", "tired", "[SEP]"}
    assert min(labels.values()) >= 30 - 0.5, sorted(labels.items(), key=lambda kv: kv[1])[:3]
    # 0.68 is written in the it → animal cell, at a size the back row reads.
    i, j = rows.index("it"), cols.index("animal")
    assert hm.data.values[i, j] == pytest.approx(0.6768, abs=5e-4)
    assert hm.overlay.cell_text(i, j) == "0.68"
    assert [px for t, px in texts if t == "0.68"] and min(px for t, px in texts if t == "0.68") >= 24 - 0.5
    assert hm.overlay.last_text_px >= 24 - 0.5
    # The pinned cell is outlined: its edge is drawn in black and white over the map's green.
    assert hm.overlay.pinned == (i, j)
    edge = cell_pixel(stage, hm, i, j)
    assert edge.lightness() < 40 or edge.lightness() > 230, edge.name()
    # The queries are windowed (16 rows do not fit with the strip): both ranges are said.
    if len(rows) < 16:
        assert RANGES.search(caption(stage)), caption(stage)
        assert "keys 1–16 of 16" in caption(stage)
    # H hides the strip: more queries, the same keys.
    QTest.keyClick(stage, QtCore.Qt.Key_H)
    settle(w)
    more_rows, more_cols = shown(w.present.sheet.heatmaps[0])
    assert len(more_rows) >= len(rows) and more_cols == tokens and "it" in more_rows
    QTest.keyClick(stage, QtCore.Qt.Key_H)
    settle(w)


def test_the_causal_scene_shows_each_row_s_own_cell_and_its_weights_add_up(window, qtbot):
    w = window
    stage = play(w, qtbot, 4)
    assert w.present.pinned_cell() == (0, 0)
    hm = w.present.sheet.heatmaps[0]
    assert hm.title.startswith("weights")
    rows, cols = shown(hm)
    tokens = list(w.studio.state.query_tokens)
    first_row = tokens.index(rows[0])
    first_col = tokens.index(cols[0])
    for r in range(len(rows)):
        own = first_row + r - first_col  # the row's own key, within the shown keys
        assert 0 <= own < len(cols), (rows[r], cols)
        assert hm.data.values[r].sum() == pytest.approx(1.0, abs=1e-9), rows[r]  # nothing cut off
    assert hm.overlay.pinned == (0 - first_row, 0 - first_col)
    assert hm.overlay.cell_text(0, 0) == "1.00"
    if len(rows) < len(tokens) or len(cols) < len(tokens):
        notes = caption(stage)
        assert RANGES.search(notes) or len(notes) > 60  # said, unless the scene's own line fills the caption
    # Colour bars: both ends labelled, 0 too when it lies inside (the scores page).
    bar = w.present.sheet.bars[0]
    assert [text for _, text in bar.axis._tickLevels[0]] == ["0", "1"]
    texts = [t for t, _ in drawn_texts(stage)]
    assert "0" in texts and "1" in texts
    QTest.keyClick(stage, QtCore.Qt.Key_Left)
    QTest.keyClick(stage, QtCore.Qt.Key_Left)
    settle(w)
    assert w.present.page == 0
    scores_bar = w.present.sheet.bars[0]
    labels = [text for _, text in scores_bar.axis._tickLevels[0]]
    assert len(labels) == 3 and labels[1] == "0" and labels[0].startswith("−") and labels[2] == labels[0][1:]


@pytest.mark.parametrize("rect", [PROJECTOR, XGA], ids=["1280x720", "1024x768"])
def test_a_six_token_sentence_is_shown_whole(window, rect):
    w = window
    w.studio.update(sentence="the cat sat on the mat")
    settle(w)
    stage = w.present.enter("Attention", geometry=rect)
    settle(w)
    for page in range(w.present.pages):
        for hm in w.present.sheet.heatmaps:
            rows, cols = shown(hm)
            assert len(rows) == 6 and len(cols) == 6, (page, hm.title, cols)
            assert hm.overlay.last_text_px >= 24 * rect.height() / 720 - 0.5
        QTest.keyClick(stage, QtCore.Qt.Key_Right)
        settle(w)
    assert not RANGES.search(caption(stage))
    w.present.leave()
    settle(w)


def test_the_stage_keeps_its_own_precision(window, qtbot, tmp_path):
    w = window
    w.lecture.set_precision(4)  # the window's View → Precision
    settle(w)
    stage = w.present.enter("Attention", geometry=PROJECTOR)
    settle(w)
    window_hm = w.heatmap_view.stages["weights"]
    assert window_hm.digits == 4
    hm = w.present.sheet.heatmaps[0]
    assert hm.digits == 2 and re.fullmatch(r"\d\.\d\d", hm.overlay.cell_text(0, 0))
    menu = w.findChild(QtWidgets.QMenu, "stagePrecisionMenu")
    assert menu is not None and menu.title().replace("&", "") == "Precision on the stage"
    view_menu = next(a.menu() for a in w.menuBar().actions() if a.text().replace("&", "") == "View")
    assert menu.menuAction() in view_menu.actions()
    four = w.findChild(QtGui.QAction, "stagePrecision4Action")
    four.trigger()
    settle(w)
    hm = w.present.sheet.heatmaps[0]
    assert hm.digits == 4 and re.fullmatch(r"\d\.\d{4}", hm.overlay.cell_text(0, 0))
    w.lecture.set_precision(2)  # the window's precision moves; the stage's stays
    settle(w)
    assert w.present.sheet.heatmaps[0].digits == 4 and window_hm.digits == 2
    # The step view on the stage writes the stage's precision too, not the window's.
    w.present.go_to("Step by step")
    settle(w)
    table = w.present.steps_table
    texts = " ".join(table.item(r, 0).text() for r in range(table.rowCount()))
    assert re.search(r"\d\.\d{4}", texts), texts
    # ... and its explanation under the table (the scaling step quotes √d_k).
    decimals = set()
    for _ in range(len(w.pipeline_view.steps)):
        decimals |= {len(m) for m in re.findall(r"\d\.(\d+)", w.present.steps_explanation.text())}
        QTest.keyClick(stage, QtCore.Qt.Key_Right)
        settle(w)
    assert decimals == {4}, decimals
    # Kept between runs with the window's settings.
    w.save_settings()
    assert settings.load().stage_digits == 4
    w.present.leave()
    settle(w)
    # A scene's own precision wins while it plays.
    scene = Scene.of_state("Four decimals", w.studio.state, view="Attention", selection={"page": 2, "digits": 4})
    w.present.set_stage_digits(2)
    w.scenes.set_lecture(Lecture(title="digits", scenes=[scene]), record=False)
    stage = w.present.enter(geometry=PROJECTOR)
    with qtbot.waitSignal(w.scenes.sceneShown, timeout=60_000):
        w.scenes.go(0)
    settle(w)
    assert w.present.stage_digits() == 4
    assert re.fullmatch(r"\d\.\d{4}", w.present.sheet.heatmaps[0].overlay.cell_text(0, 0))


@pytest.mark.parametrize("stored", ["7", "two", "3"])
def test_a_stored_stage_precision_that_makes_no_sense_is_ignored(stored):
    store = settings.settings()
    store.setValue("stageDigits", stored)
    store.sync()
    assert settings.load().stage_digits == 2
    store.setValue("stageDigits", "4")
    store.sync()
    assert settings.load().stage_digits == 4


@pytest.mark.parametrize("view", ["Heads → output", "Compare", "Positions"])
def test_a_six_token_sentence_is_whole_on_every_heatmap_view_at_1024x768(window, view):
    w = window
    w.studio.update(sentence="the cat sat on the mat")
    settle(w)
    stage = w.present.enter(view, geometry=XGA)
    settle(w)
    tokens = list(w.studio.state.query_tokens)
    assert len(tokens) == 6
    for page in range(w.present.pages):
        title = stage.findChild(QtWidgets.QLabel, "presentTitle").text()
        assert "queries " not in caption(stage) + title and "columns " not in caption(stage) + title
        for hm in w.present.sheet.heatmaps:
            for labels in (list(hm.data.row_labels), list(hm.data.col_labels)):
                if labels and set(labels) <= set(tokens):  # the sentence's side (W_O's are the model's)
                    assert labels == tokens, (page, hm.title, labels)
        QTest.keyClick(stage, QtCore.Qt.Key_Right)
        settle(w)
    w.present.leave()
    settle(w)


def test_token_windows_keep_the_query_the_pin_and_a_causal_row_s_own_cell():
    from attn_studio.gui.lecture.stage_figures import token_windows

    # The it → animal cell: query 10, key 2 of 16; six rows and eight keys fit.
    rows, cols = token_windows(16, 16, 6, 8, 10, pin=(10, 2))
    assert rows[0] <= 10 < rows[1] and cols[0] <= 2 < cols[1] and rows[1] - rows[0] == 6 and cols[1] - cols[0] == 8
    # Causal: every shown row's own key is shown, with fewer rows where the keys cannot hold them.
    for q in range(11):
        rows, cols = token_windows(11, 11, 6, 4, q, causal=True)
        assert rows[0] <= q < rows[1]
        assert all(cols[0] <= r < cols[1] for r in range(*rows)), (q, rows, cols)
    rows, cols = token_windows(11, 11, 6, 11, 0, pin=(0, 0), causal=True)
    assert rows == (0, 6) and cols[0] == 0


def test_colour_only_cells_write_the_query_row_and_the_pinned_cell_alone(window):
    """Where numbers do not fit every cell the stage writes the query row's and the pinned cell's only."""
    from attn_studio.gui.files import sheet as sheets

    w = window
    w.studio.update(sentence="the cat sat on the mat")
    settle(w)
    source = w.heatmap_view.stages["weights"]
    w.render_view(w.heatmap_view)
    figure = sheets.FigureSheet([sheets.Block([sheets.Tile(source, selected_row=3, pin=(0, 2),
                                                           query_numbers=True)])], cell=(70, 40))
    figure.lay_out()
    hm = figure.heatmaps[0]
    assert hm.overlay.pinned == (0, 2)
    values = hm.data.values
    expected = {hm.overlay.cell_text(3, j) for j in range(6)} | {hm.overlay.cell_text(0, 2)}
    drawn = [t for t, _ in drawn_texts(figure) if re.fullmatch(r"\d\.\d+", t)]
    assert drawn and set(drawn) <= expected
    assert len(drawn) == 7  # six in the query row, one pinned
    everything = sheets.FigureSheet([sheets.Block([sheets.Tile(source, selected_row=3)])], cell=(70, 40))
    everything.lay_out()
    assert len([t for t, _ in drawn_texts(everything) if re.fullmatch(r"\d\.\d+", t)]) == values.size
    for sheet in (figure, everything):
        sheets.discard(sheet)
