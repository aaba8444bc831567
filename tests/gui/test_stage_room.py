"""The stage's room goes to the sentence: its figure has no empty band under the rows (the key axis is as tall
as its slanted labels reach, each colour bar spans its heatmap's rows), its title fits beside the scene's
number, and at a projector's 1280×720 the example lecture's sentences show as many rows as the room holds
with every label and value at the room's size (labels ≥ 30 px, values ≥ 24 px, no two labels' boxes
overlapping)."""

from __future__ import annotations

import math

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.scenes import example_lecture
from gui_helpers import play_example_scene, put_lecture_away, settle
from stage_measure import drawn_texts

WINDOW_PRESET = "journey"
WINDOW_SIZE = (1280, 720)
PROJECTOR = QtCore.QRect(0, 0, 1280, 720)
XGA = QtCore.QRect(0, 0, 1024, 768)


@pytest.fixture
def window(shared_window, qtbot):
    w = shared_window
    w.scenes.set_lecture(None, record=False)
    w.present.set_stage_digits(2)
    yield w
    put_lecture_away(qtbot, w)


def play(w, qtbot, number: int, rect=PROJECTOR, strip: bool = True):
    """Scene ``number`` (from 1) of the example lecture on a stage of ``rect``'s size, the strip shown or hidden."""
    return play_example_scene(w, qtbot, number, rect, strip)


def in_stage(stage, item, rect: QtCore.QRectF | None = None) -> QtCore.QRectF:
    """``rect`` of a plot item (its bounding rect by default) in the stage's coordinates."""
    scene_rect = item.mapRectToScene(rect if rect is not None else item.boundingRect())
    view = item.scene().views()[0]
    top_left = view.mapTo(stage, view.mapFromScene(scene_rect.topLeft()))
    return QtCore.QRectF(QtCore.QPointF(top_left), scene_rect.size())


def scaled(font: QtGui.QFont, scale: float) -> QtGui.QFont:
    font = QtGui.QFont(font)
    if font.pixelSize() > 0:
        font.setPixelSize(max(1, int(font.pixelSize() * scale + 1e-6)))
    else:
        font.setPointSizeF(font.pointSizeF() * scale)
    return font


def label_boxes_bottom(stage, hm) -> float:
    """The lowest point of the key labels' text boxes (ascent + descent, each turned by its slant) as drawn,
    in the stage's coordinates."""
    axis = hm.bottom_axis
    metrics = QtGui.QFontMetricsF(scaled(axis.style["tickFont"], axis.shown_scale))
    angle = math.radians(axis.shown_angle)
    top = in_stage(stage, axis).top()
    reach = max((metrics.horizontalAdvance(t) + 2) * math.sin(angle) + metrics.height() / 2 * math.cos(angle)
                for _, t in axis.drawn)
    return top + 3 + reach


@pytest.mark.parametrize("number", [4, 9])
def test_the_figure_has_no_empty_band_under_its_rows(window, qtbot, minilm, number):
    w = window
    stage = play(w, qtbot, number)
    sheet = w.present.sheet
    hm = sheet.heatmaps[0]
    rows = in_stage(stage, hm.plot.vb)
    bar = in_stage(stage, hm.bar.vb)
    # The colour bar spans the heatmap's rows, not the key labels' room under them.
    assert abs(bar.bottom() - rows.bottom()) <= 2, (bar, rows)
    assert rows.top() - 1 <= bar.top() <= rows.top() + 30, (bar, rows)  # at most half a line lower, for its "1"
    # The figure ends where its key labels' boxes end: no band of empty room under them.
    figure_bottom = sheet.mapTo(stage, QtCore.QPoint(0, sheet.height())).y()
    labels_bottom = label_boxes_bottom(stage, hm)
    assert labels_bottom <= figure_bottom + 1, (labels_bottom, figure_bottom)  # nothing cut
    assert figure_bottom - labels_bottom <= 8, (labels_bottom, figure_bottom)
    # ...and the ink is there: the lowest drawn pixel under the rows is within a line of the figure's end.
    image = stage.grab().toImage()
    canvas = image.pixelColor(stage.width() - 3, int(rows.bottom()) + 3)
    axis = in_stage(stage, hm.bottom_axis)
    lowest = max(y for y in range(int(rows.bottom()) + 2, figure_bottom)
                 if any(image.pixelColor(x, y) != canvas for x in range(max(0, int(axis.left())), int(axis.right()))))
    assert figure_bottom - lowest <= 0.6 * QtGui.QFontMetricsF(hm.bottom_axis.style["tickFont"]).height()


def test_the_title_fits_beside_the_scene_number_at_1024x768(window, qtbot, minilm):
    w = window
    stage = play(w, qtbot, 9, XGA)
    title = stage.findChild(QtWidgets.QLabel, "presentTitle")
    number = stage.findChild(QtWidgets.QLabel, "presentNumber")
    assert number.isVisible() and number.text() == f"9 / {len(example_lecture().scenes)}"
    shown = title.text()
    metrics = QtGui.QFontMetrics(title.font())
    text = QtCore.QRect(0, 0, metrics.horizontalAdvance(shown), metrics.height())
    centred = title.contentsRect()
    text.moveCenter(centred.center())
    text = QtCore.QRect(title.mapTo(stage, text.topLeft()), text.size())
    # Whole on the stage and clear of the number in its corner.
    assert text.left() >= 0 and text.right() <= stage.width()
    assert text.right() < number.mapTo(stage, QtCore.QPoint(0, 0)).x(), (shown, text)
    # Parts left out whole (the view's name first, then from the end), never letters cut, nor a smaller font.
    whole = stage.whole_title
    assert whole.startswith("Attention: layer 4 · head 2 of 12 · query “it”")
    assert shown != whole and whole.removeprefix("Attention: ").startswith(shown)
    assert shown.startswith("layer 4 · head 2 of 12")
    assert title.font().pixelSize() == stage.sizes()["title"]
    # The same stage at 1280×720 has the room: the whole title.
    stage = play(w, qtbot, 9, PROJECTOR)
    assert stage.findChild(QtWidgets.QLabel, "presentTitle").text() == stage.whole_title


def test_a_title_leaves_out_the_view_s_name_then_parts_from_its_end(window):
    w = window
    stage = w.present.enter("Attention", geometry=XGA)
    settle(w)
    whole = "Attention: layer 4 · head 2 of 12 · query “extraordinarily” · weights"
    shown = stage.fitted_title(whole)
    assert stage.title_fits(shown)
    assert shown in ("layer 4 · head 2 of 12 · query “extraordinarily” · weights",
                     "layer 4 · head 2 of 12 · query “extraordinarily”", "layer 4 · head 2 of 12")
    assert stage.fitted_title("Positions") == "Positions"  # a short one stays whole
    w.present.leave()
    settle(w)


def assert_readable(stage, hm) -> None:
    """Labels ≥ 30 px and values ≥ 24 px as drawn; no two neighbouring labels' boxes overlap (the rows' and,
    across their slant, the keys')."""
    texts = drawn_texts(stage)
    tokens = set(hm.data.row_labels) | set(hm.data.col_labels)
    labels = [px for t, px in texts if t in tokens and t not in ("'", ".")]
    assert labels and min(labels) >= 30 - 0.5, min(labels)
    assert hm.overlay.last_text_px >= 24 - 0.5
    row_gap = in_stage(stage, hm.plot.vb).height() / len(hm.data.row_labels)
    row_line = QtGui.QFontMetricsF(scaled(hm.left_axis.style["tickFont"], hm.left_axis.shown_scale)).height()
    assert row_line <= row_gap + 0.05, (row_line, row_gap)
    key = hm.bottom_axis
    col_gap = in_stage(stage, hm.plot.vb).width() / len(hm.data.col_labels)
    key_line = QtGui.QFontMetricsF(scaled(key.style["tickFont"], key.shown_scale)).height()
    assert key_line <= col_gap * math.sin(math.radians(key.shown_angle)) + 0.05, (key_line, col_gap, key.shown_angle)


def test_it_animal_at_1280x720_shows_every_key_and_fifteen_of_sixteen_queries_with_h(window, qtbot, minilm):
    """16 rows of labels 30 px apart and the key labels under them need 16 × 35 + 89 px; the stage's body has
    625 px with the strip hidden (720 less the title, the caption and the margins): 15 rows fit, and the
    windowed rows are said."""
    w = window
    stage = play(w, qtbot, 9, strip=False)
    hm = w.present.sheet.heatmaps[0]
    tokens = list(w.studio.state.key_tokens)
    assert list(hm.data.col_labels) == tokens and len(tokens) == 16
    rows = list(hm.data.row_labels)
    assert len(rows) >= 15 and "it" in rows, rows
    if len(rows) < 16:
        assert "keys 1–16 of 16" in stage.caption.text()
    assert_readable(stage, hm)
    # With the strip: fewer rows, the same keys, as readable.
    stage = play(w, qtbot, 9, strip=True)
    hm = w.present.sheet.heatmaps[0]
    assert list(hm.data.col_labels) == tokens and 12 <= len(hm.data.row_labels) <= len(rows)
    assert_readable(stage, hm)


@pytest.mark.parametrize("strip", [False, True], ids=["H", "strip"])
def test_the_causal_scene_at_1280x720_shows_all_eleven_queries(window, qtbot, strip):
    w = window
    stage = play(w, qtbot, 4, strip=strip)
    hm = w.present.sheet.heatmaps[0]
    tokens = list(w.studio.state.query_tokens)
    assert len(tokens) == 11
    assert list(hm.data.row_labels) == tokens and list(hm.data.col_labels) == tokens
    assert "queries" not in stage.caption.text()  # nothing windowed, nothing to say
    assert_readable(stage, hm)
