"""The Heads tab's head detector: the three scores as columns of the report card, the kinds it names as
letters in the grid of roles, "Detect" on seeded random tokens twice (its sequence shown) off the GUI
thread, again by itself after an edit; in the window on all-MiniLM-L6-v2, on the model's worker thread,
naming the head the report card calls "previous token"."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets

from attn_studio.gui import presentation
from attn_studio.pretrained import DETECTORS, default_model_zip, detect_heads, load_pretrained, repeated_tokens
from attn_studio.pretrained.detect import detect
from attn_studio.trained import TrainedStudio
from gui_helpers import settle, wait_idle

DATA = Path(__file__).resolve().parents[1] / "data" / "pretrained"
HEADERS = {"previous": "Previous score", "duplicate": "Duplicate score", "induction": "Induction score"}


@pytest.fixture(scope="module")
def tiny():
    return load_pretrained(DATA / "tiny-bert")


@pytest.fixture
def lab(qtbot, tiny):
    from attn_studio.gui.heads import HeadsTab

    studio = TrainedStudio(tiny)
    tab = HeadsTab(lambda layer, head, query=None: studio.select(layer=layer, head=head, query=query))
    tab.resize(1100, 700)
    qtbot.addWidget(tab)
    tab.show()
    qtbot.waitExposed(tab)
    tab.set_studio(studio)
    tab.test_studio = studio
    yield tab
    tab.shutdown()


def _column(lab, header: str) -> int:
    model = lab.proxy
    return next(c for c in range(model.columnCount()) if model.headerData(c, QtCore.Qt.Horizontal) == header)


def _shown(lab, name: str) -> np.ndarray:
    """The report card's column of detector ``name`` as (layers, heads), read from the cells' sort values."""
    proxy, column = lab.proxy, _column(lab, HEADERS[name])
    model = lab.test_studio.model
    values = np.zeros((model.layers, model.heads))
    for row in range(proxy.rowCount()):
        layer, head = proxy.index(row, 0).data() - 1, proxy.index(row, 1).data() - 1
        values[layer, head] = proxy.index(row, column).data(QtCore.Qt.UserRole)
        assert proxy.index(row, column).data() == f"{values[layer, head]:.{presentation.digits()}f}"
    return values


def _detect(lab, qtbot, length: int | None = None, seed: int | None = None):
    if length is not None:
        lab.detect_length.setValue(length)
    if seed is not None:
        lab.detect_seed.setValue(seed)
    with qtbot.waitSignal(lab.detect_job.finished, timeout=60_000):
        qtbot.mouseClick(lab.detect_button, QtCore.Qt.LeftButton)
    return lab.detection


def test_the_columns_start_on_the_sentence_shown(lab):
    run = lab.test_studio.computed.run
    for name in DETECTORS:
        np.testing.assert_array_equal(_shown(lab, name), detect_heads(run, name))
    assert lab.detect_source.currentText() == "the sentence shown"
    assert "On the sentence shown: " + " ".join(run.tokens) in lab.detect_sequence.text()


def test_detect_runs_on_seeded_repeated_tokens_and_shows_them(lab, qtbot, tiny):
    detection = _detect(lab, qtbot, length=9, seed=4)
    ids = repeated_tokens(tiny, length=9, seed=4)
    run = tiny.run_ids(ids)
    np.testing.assert_array_equal(detection.ids, ids)
    for name in DETECTORS:
        np.testing.assert_array_equal(_shown(lab, name), detect_heads(run, name))
    # The sequence it ran on, shown: the stretch once, then the same again, framed as BERT frames it.
    stretch = " ".join(run.tokens[1:10])
    assert lab.detect_sequence.text() == (f"On 9 random tokens twice, seed 4: [CLS] {stretch} — then the same 9 "
                                          "again, [SEP]")
    assert lab.detect_source.currentText() == "random tokens twice"
    # Another seed, another stretch.
    other = _detect(lab, qtbot, seed=5)
    assert not np.array_equal(other.ids, ids)
    np.testing.assert_array_equal(other.ids, repeated_tokens(tiny, length=9, seed=5))
    assert "seed 5" in lab.detect_sequence.text()


def test_the_grid_of_roles_marks_the_heads_the_detector_names(lab, qtbot, tiny):
    detection = _detect(lab, qtbot, length=12, seed=0)
    expected = detect(tiny.run_ids(repeated_tokens(tiny, length=12, seed=0))).roles
    letters = {"previous token": "P", "duplicate token": "D", "induction": "I", "": ""}
    marks = lab.role_grid.marks
    assert marks.shape == expected.shape
    assert [[letters[str(r)] for r in row] for row in expected] == marks.tolist()
    np.testing.assert_array_equal(detection.roles, expected)
    # The cells keep the report card's role colours; the note under the grid names the letters used.
    assert lab.role_grid.colours is not None
    named = [f"{letters[k]} {k.split()[0]}" for k in ("previous token", "duplicate token", "induction")
             if (expected == k).any()]
    assert lab.role_grid.note == ("detected: " + ", ".join(named) if named else "detected: no head")
    # What the page says names each detected head with its score.
    for layer, head in np.argwhere(expected != ""):
        assert f"{layer + 1}.{head + 1} (" in lab.detect_status.text()


def test_an_edit_runs_the_detector_again_with_the_edit(lab, qtbot, tiny):
    _detect(lab, qtbot, length=10, seed=1)
    before = lab.detection
    with qtbot.waitSignal(lab.detect_job.finished, timeout=60_000):
        lab.test_studio.set_head_scale(0, 1, 0.0)  # silences head 1.2: layer 2's attention changes
    edits = lab.test_studio.state.edits
    run = tiny.run_ids(repeated_tokens(tiny, length=10, seed=1), edits=edits)
    for name in DETECTORS:
        np.testing.assert_array_equal(_shown(lab, name), detect_heads(run, name))
    assert not np.array_equal(lab.detection.scores["induction"][1], before.scores["induction"][1])


def test_back_to_the_sentence_and_the_selected_heads_picture(lab, qtbot):
    _detect(lab, qtbot, length=8)
    lab.test_studio.select(layer=1, head=2)
    QtWidgets.QApplication.processEvents()
    assert lab.detect_map.title == "Head 2.3 on the repeated tokens: weights α"
    np.testing.assert_array_equal(lab.detect_map.values, lab._detect_run.attentions[1, 2])
    assert lab.detect_head_line.text().startswith("Head 2.3: previous ")
    index = lab.detect_source.findData("sentence")
    lab.detect_source.setCurrentIndex(index)
    lab.detect_source.activated.emit(index)
    run = lab.test_studio.computed.run
    np.testing.assert_array_equal(_shown(lab, "previous"), detect_heads(run, "previous"))
    assert lab.detect_map.title == "Head 2.3 on the sentence: weights α"


def test_the_csv_holds_the_detectors_columns(lab, qtbot, tmp_path, tiny):
    _detect(lab, qtbot, length=7, seed=2)
    path = tmp_path / "heads.csv"
    lab.export_csv(path)
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    header = rows[0]
    assert header[-4:] == ["previous_score", "duplicate_score", "induction_score", "detected"]
    run = tiny.run_ids(repeated_tokens(tiny, length=7, seed=2))
    for row in rows[1:]:
        layer, head = int(row[0]) - 1, int(row[1]) - 1
        assert float(row[-2]) == detect_heads(run, "induction")[layer, head]


def test_a_length_the_model_cannot_hold_is_kept_within_its_positions(lab, tiny):
    lab.run_detect()
    most = (tiny.max_positions - 2) // 2
    assert lab.detect_length.maximum() == most
    lab.detect_length.setValue(10_000)
    assert lab.detect_length.value() == most


# -- in the window, on MiniLM ------------------------------------------------------------------------

@pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")
def test_detect_in_the_window_names_minilms_previous_token_head_on_the_models_worker(shared_window, qtbot, minilm):
    w = shared_window
    room = w.trained.room
    room.set_studio(TrainedStudio(minilm))
    wait_idle(qtbot, w)
    lab = w.heads_tab
    w.view_tabs.setCurrentWidget(lab)
    lab.pages.setCurrentWidget(lab.detect_page)
    settle(w)
    kinds = []
    room.worker.resultReady.connect(lambda kind, generation, result: kinds.append(kind))
    try:
        qtbot.mouseClick(lab.detect_button, QtCore.Qt.LeftButton)
        qtbot.waitUntil(lambda: lab.detection is not None and lab.detection.source.startswith("20 random"),
                        timeout=60_000)
        assert kinds == ["measure"]  # the model's worker ran it, as a measure beside its runs
        assert not lab.detect_job.is_running()
        report = lab.report_model.report
        carded = {tuple(int(v) for v in lh) for lh in np.argwhere(report.role == "previous token")}
        named = {tuple(int(v) for v in lh) for lh in np.argwhere(lab.detection.roles == "previous token")}
        assert carded == named == {(0, 2)}
        assert lab.role_grid.marks[0, 2] == "P"
        assert "previous token</b>: 1.3 (" in lab.detect_status.text()
        expected = detect_heads(minilm.run_ids(repeated_tokens(minilm, 20, 0)), "previous")
        np.testing.assert_array_equal(_shown_window(lab, minilm), expected)
    finally:
        room.use_toy()
        wait_idle(qtbot, w)


def _shown_window(lab, model) -> np.ndarray:
    proxy, column = lab.proxy, _column(lab, HEADERS["previous"])
    values = np.zeros((model.layers, model.heads))
    for row in range(proxy.rowCount()):
        values[proxy.index(row, 0).data() - 1, proxy.index(row, 1).data() - 1] = proxy.index(row, column).data(
            QtCore.Qt.UserRole)
    return values
