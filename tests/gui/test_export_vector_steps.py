"""File → Export as SVG or PDF and Copy figure, recorded in steps: the window's event loop runs between
the steps, and the file holds what the figure drawn in one piece holds (its texts where they were, the
same pixels when the SVG is drawn)."""

from __future__ import annotations

import io
import shutil

import numpy as np
import pypdf
import pytest
from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

from attn_studio.gui.files import export, figures, vector_figure
from gui_helpers import settle
from svg_boxes import text_boxes

WORDS = "the quick brown fox jumps over a lazy dog while the cat sleeps".split()
SENTENCE = " ".join(WORDS[i % len(WORDS)] for i in range(40))  # 1,600 cells a heatmap, every value written


@pytest.fixture
def window(_module_window, shared_window):
    shared_window.studio.update(sentence=SENTENCE)
    settle(shared_window)
    assert len(shared_window.studio.state.tokens) >= 40
    shared_window.view_tabs.setCurrentWidget(shared_window.compare_view)
    settle(shared_window)
    return shared_window


def boxes(svg: bytes) -> list:
    """Every text of ``svg`` with its box, rounded to a hundredth of a pixel, in reading order."""
    found = [(text, round(r.x(), 2), round(r.y(), 2), round(r.width(), 2), round(r.height(), 2))
             for text, r in text_boxes(svg)]
    return sorted(found)


def drawn(svg: bytes) -> np.ndarray:
    """``svg`` drawn by Qt's SVG renderer on white, as 32-bit pixels."""
    renderer = QtSvg.QSvgRenderer(QtCore.QByteArray(svg))
    size = renderer.defaultSize()
    image = QtGui.QImage(size, QtGui.QImage.Format_ARGB32)
    image.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(image)
    renderer.render(painter)
    painter.end()
    return np.frombuffer(image.constBits(), np.uint32, count=size.width() * size.height()).copy()


def pdf_words(data: bytes) -> tuple[list, tuple]:
    page = pypdf.PdfReader(io.BytesIO(data)).pages[0]
    return sorted(page.extract_text().split()), tuple(float(v) for v in page.mediabox)


def one_piece(window, kind: str) -> bytes:
    """The figure as the command line draws it: in one call."""
    panel = export.find_panel(window, "compare")
    data = figures.svg_bytes(panel) if kind == "svg" else figures.pdf_bytes(panel)
    export.done_with(panel)
    return data


class Steps:
    """Counts the event loop's turns (a zero timer) and, at each step of a vector figure, how many had run."""

    def __init__(self, monkeypatch):
        self.ticks = 0
        self.at_steps: list[int] = []
        self.timer = QtCore.QTimer()
        self.timer.timeout.connect(self._tick)
        step = vector_figure.SteppedVector.step

        def counted(stepped):
            self.at_steps.append(self.ticks)
            return step(stepped)

        monkeypatch.setattr(vector_figure.SteppedVector, "step", counted)

    def _tick(self):
        self.ticks += 1

    def __enter__(self):
        self.timer.start(0)
        return self

    def __exit__(self, *exc):
        self.timer.stop()

    def turns_between_steps(self) -> int:
        """Steps that the event loop ran a turn before (after the first)."""
        return sum(1 for a, b in zip(self.at_steps, self.at_steps[1:]) if b > a)


@pytest.mark.parametrize("kind", ["svg", "pdf"])
def test_file_export_records_the_figure_in_steps_and_writes_what_one_piece_holds(window, tmp_path, monkeypatch,
                                                                                 kind):
    actions = window.export_actions
    out = tmp_path / f"compare.{kind}"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    messages = []
    monkeypatch.setattr(actions, "status", lambda text, ms=0: messages.append(text))
    with Steps(monkeypatch) as steps:
        assert actions.export_panel_dialog("compare")
        assert not out.exists() and actions.busy()  # under way, not done inside the menu's click
        assert actions.wait_written()
    assert len(steps.at_steps) >= 4, "recorded in one piece"
    assert steps.turns_between_steps() >= len(steps.at_steps) - 2, "the event loop did not run between the steps"
    assert any("%" in m for m in messages[:-1])  # the status line said how far it was
    assert messages[-1] == f"Exported compare as {kind.upper()} to {out}"
    written, expected = out.read_bytes(), one_piece(window, kind)
    if kind == "svg":
        found = boxes(written)
        assert len(found) > 2 * 40 * 40  # every value of two heatmaps, and the labels
        assert found == boxes(expected)
        assert (drawn(written) == drawn(expected)).all(), "the SVG draws other pixels than the one-piece one"
    else:
        assert written[:5] == b"%PDF-"
        words, page = pdf_words(written)
        assert len(words) > 2 * 40 * 40
        assert (words, page) == pdf_words(expected)
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # nothing half-written beside it


def test_the_values_and_axes_come_after_the_figure_each_written_once(window):
    panel = export.find_panel(window, "compare")
    stepped = vector_figure.SteppedVector(panel, "svg", budget=0.001)
    while not stepped.step():
        QtWidgets.QApplication.processEvents()
    kinds = {type(piece).__name__ for piece in stepped.left}
    assert kinds == {"_Values", "_Axis"}
    assert stepped.steps >= 2 + len(stepped.left), "what was left out was not spread over the steps"
    written = stepped.data()
    export.done_with(panel)
    texts = [text for text, _box in text_boxes(written)]
    expected = [text for text, _box in text_boxes(one_piece(window, "svg"))]
    assert sorted(texts) == sorted(expected)  # no value twice, none missing


def test_copy_figure_puts_the_svg_drawn_in_one_piece_on_the_clipboard_while_the_window_runs(window, monkeypatch):
    actions = window.export_actions
    clipboard = QtWidgets.QApplication.clipboard()
    clipboard.clear()
    with Steps(monkeypatch) as steps:
        actions.copy_figure_action.trigger()
        assert actions.busy()
        assert actions.wait_written()
    assert len(steps.at_steps) >= 4 and steps.turns_between_steps() >= len(steps.at_steps) - 2
    svg = bytes(clipboard.mimeData().data(figures.SVG_MIME).data())
    expected = one_piece(window, "svg")
    assert boxes(svg) == boxes(expected)
    assert (drawn(svg) == drawn(expected)).all()
    assert clipboard.mimeData().hasImage()


def test_a_vector_figure_drops_the_views_empty_background_cache_and_keeps_its_look(window):
    # pyqtgraph caches a view's background as a transparent pixmap the size of the view: an SVG held it
    # as a page-sized picture of nothing. Drawn uncached, the background is the view's white brush.
    panel = export.find_panel(window, "compare")
    assert panel.widget.cacheMode() == QtWidgets.QGraphicsView.CacheBackground
    svg = figures.svg_bytes(panel)
    assert panel.widget.cacheMode() == QtWidgets.QGraphicsView.CacheBackground  # put back
    layout = figures._Layout(panel, None)
    export.done_with(panel)
    assert f'width="{layout.source.width()}" height="{layout.source.height()}" preserveAspectRatio'.encode() \
        not in svg
    assert b"<image" in svg  # the heatmaps themselves are still images


def test_an_svg_export_to_a_folder_gone_meanwhile_says_so_and_writes_nothing(window, tmp_path, monkeypatch):
    actions = window.export_actions
    folder = tmp_path / "figures"
    folder.mkdir()
    out = folder / "compare.svg"
    shown = []
    monkeypatch.setattr(actions, "show_message", shown.append)
    assert actions.export_panel("compare", out, background=True)
    shutil.rmtree(folder)  # before the worker writes the file
    assert actions.wait_written()
    assert not out.exists()
    assert shown and str(out.parent) in shown[-1]


def test_an_svg_export_to_a_missing_folder_is_refused_at_once(window, tmp_path, monkeypatch):
    actions = window.export_actions
    shown = []
    monkeypatch.setattr(actions, "show_message", shown.append)
    assert not actions.export_panel("compare", tmp_path / "nowhere" / "compare.pdf", background=True)
    assert not actions.busy()
    assert shown == [f"the folder {tmp_path / 'nowhere'} does not exist"]


def test_the_whole_window_is_drawn_in_one_piece_and_written(window, tmp_path):
    # A part of the window itself may change between two turns: it is recorded in one step.
    panel = export.find_panel(window, "window")
    stepped = vector_figure.SteppedVector(panel, "pdf")
    assert not stepped.stepped
    assert not stepped.step()  # the whole figure
    assert stepped.step()  # the file written
    assert stepped.left == []
    assert stepped.data()[:5] == b"%PDF-"


def test_closing_the_window_during_an_svg_export_does_not_crash(fresh_window, tmp_path, monkeypatch):
    window = fresh_window
    window.studio.update(sentence=SENTENCE)
    out = tmp_path / "compare.svg"
    actions = window.export_actions
    assert actions.export_panel("compare", out, background=True)
    for _ in range(3):
        QtWidgets.QApplication.processEvents()  # under way
    window.studio.mark_saved()
    window.close()
    assert actions.wait_written()
    assert not actions.busy()
    if out.exists():  # whole (written atomically) when it is there at all
        assert out.read_bytes().rstrip().endswith(b"</svg>")


def test_a_heatmaps_right_click_copy_figure_runs_in_steps_and_copies_its_values(window, monkeypatch):
    actions = window.export_actions
    monkeypatch.setattr(QtWidgets.QMenu, "popup", lambda self, pos: None)
    canvas = window.heatmap_view.canvases["weights"]
    menu = window.show_heatmap_menu(canvas, QtCore.QPoint(10, 10))
    clipboard = QtWidgets.QApplication.clipboard()
    clipboard.clear()
    with Steps(monkeypatch) as steps:
        next(a for a in menu.actions() if a.text() == "Copy figure").trigger()
        assert actions.busy()  # under way: the menu's click returned
        assert actions.wait_written()
    menu.close()
    assert len(steps.at_steps) >= 4 and steps.turns_between_steps() >= len(steps.at_steps) - 2
    svg = bytes(clipboard.mimeData().data(figures.SVG_MIME).data())
    texts = [text for text, _box in text_boxes(svg)]
    weights = window.studio.result.weights[window.studio.state.head_index]
    n = len(window.studio.state.tokens)
    assert sum(1 for t in texts if t.replace(".", "", 1).isdigit()) >= n * n  # every value written
    assert f"{weights.max():.2f}" in texts
    assert clipboard.mimeData().hasImage()
