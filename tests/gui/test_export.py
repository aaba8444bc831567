"""Figures out: PNG / SVG / PDF of any panel, the clipboard, and matrices as CSV / NumPy / LaTeX.

Every figure is measured, not trusted: its size follows the scale, its lines
grow with it, its SVG keeps the tokens as text, and a failed export leaves an
existing file as it was.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import io
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6 import QtGui, QtWidgets

from attn_studio.engine import tokenize
from attn_studio.gui.files import export, figures
from attn_studio.gui.files.export import ExportError
from attn_studio.state import StudioState
from gui_helpers import settle

SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def window(_module_window, shared_window):
    # Figures change nothing but the Studio's state and the window's size: one window serves the
    # module, put back by the shared reset. Checked.
    start = _module_window[1]
    assert shared_window.size() == start["size"] and shared_window.studio.state == start["state"]
    assert not shared_window.studio.can_undo and not shared_window.studio.is_modified
    return shared_window


def rgb(image: QtGui.QImage) -> np.ndarray:
    """(height, width, 3) uint8 array of a QImage."""
    image = image.convertToFormat(QtGui.QImage.Format_RGB32)
    h, w = image.height(), image.width()
    data = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(h, image.bytesPerLine())[:, : 4 * w]
    bgra = data.reshape(h, w, 4)
    return bgra[:, :, 2::-1].astype(int)


def longest_vertical_run(mask: np.ndarray, col: int) -> int:
    best = run = 0
    for hit in mask[:, col]:
        run = run + 1 if hit else 0
        best = max(best, run)
    return best


def line_thickness(image: QtGui.QImage, colour: QtGui.QColor, cols: np.ndarray) -> float:
    """Median over columns of the longest vertical run of pixels close to ``colour``."""
    pixels = rgb(image)
    target = np.array([colour.red(), colour.green(), colour.blue()])
    mask = np.abs(pixels - target).sum(axis=2) < 90
    runs = [longest_vertical_run(mask, int(c)) for c in cols]
    return float(np.median(runs))


# -- figures -----------------------------------------------------------------------


def test_png_size_follows_the_scale_with_the_title_band(window):
    panel = export.find_panel(window, "heatmaps")
    one = export.render_panel(panel, scale=1)
    three = export.render_panel(panel, scale=3)
    assert abs(three.width() - 3 * one.width()) <= 2
    assert abs(three.height() - 3 * one.height()) <= 2
    # The title band is part of the figure: without it the figure is shorter, as wide.
    bare = export.render_panel(panel, scale=1, title="")
    assert bare.width() == one.width()
    assert one.height() - bare.height() >= 20
    # The figure is laid out for the page, not grabbed from the window: the same at any window size.
    window.resize(800, 600)
    settle(window)
    small = export.render_panel(export.find_panel(window, "heatmaps"), scale=1)
    window.resize(1500, 900)
    settle(window)
    large = export.render_panel(export.find_panel(window, "heatmaps"), scale=1)
    assert small.size() == large.size() == one.size()


def test_lines_grow_with_the_scale(window):
    panel = export.find_panel(window, "variance")
    plot = panel.keep  # the plot drawn again for the page, beside the window's own
    assert plot is not window.variance_plot
    colour = plot.scaled_curve.opts["pen"].color()
    pens_before = [c.opts["pen"].widthF() for c in (plot.scaled_curve, plot.raw_curve)]
    thick = {}
    # The dashed theory lines are drawn over the curves; hide them to measure the curve itself.
    for line in (plot.theory_raw, plot.theory_scaled):
        line.hide()
    for scale in (1, 4):
        image = export.render_panel(panel, scale=scale, title="")
        # The scaled curve is flat near var = 1 at large d_k: the right third of the plot.
        cols = np.linspace(0.7, 0.9, 9) * image.width()
        thick[scale] = line_thickness(image, colour, cols)
    for line in (plot.theory_raw, plot.theory_scaled):
        line.show()
    assert thick[1] >= 1
    assert 3.0 <= thick[4] / thick[1] <= 5.5, thick
    # The plot keeps its own pens and caches.
    assert [c.opts["pen"].widthF() for c in (plot.scaled_curve, plot.raw_curve)] == pens_before
    assert plot.variance.getAxis("left").cacheMode() == QtWidgets.QGraphicsItem.DeviceCoordinateCache


def test_svg_keeps_every_token_as_text(window, tmp_path):
    path = tmp_path / "heatmaps.svg"
    # No title: the tokens must come from the heatmaps' own axis labels.
    export.export_svg(export.find_panel(window, "heatmaps"), path, title="")
    root = ET.parse(path).getroot()
    texts = {"".join(t.itertext()).strip() for t in root.iter(f"{SVG_NS}text")}
    tokens = tokenize(window.studio.state.sentence)
    assert tokens and all(tok in texts for tok in tokens), (tokens, sorted(texts)[:40])
    assert root.get("viewBox") is not None
    # With the default title, the file says what it shows.
    export.export_svg(export.find_panel(window, "heatmaps"), path)
    title = ET.parse(path).getroot().find(f"{SVG_NS}title")
    assert title is not None and window.studio.state.sentence.split()[0] in title.text


def test_pdf_page_is_the_figure(window, tmp_path):
    panel = export.find_panel(window, "head:1")
    path = tmp_path / "head.pdf"
    assert export.export_figure(panel, path) == "pdf"
    data = path.read_bytes()
    assert data.startswith(b"%PDF")
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", data)
    assert box, "no page size in the PDF"
    image = export.render_panel(panel, scale=1)
    dpi = panel.widget.logicalDpiX()
    assert float(box.group(1)) == pytest.approx(image.width() * 72 / dpi, abs=2)
    assert float(box.group(2)) == pytest.approx(image.height() * 72 / dpi, abs=2)
    # The whole window too; Qt's notice about flat-drawn style gradients is not a warning
    # to the person (the fixture fails the test on any other Qt message).
    export.export_pdf(export.find_panel(window, "window"), tmp_path / "window.pdf")
    assert (tmp_path / "window.pdf").read_bytes().startswith(b"%PDF")


def test_png_records_its_dpi(window, tmp_path):
    panel = export.find_panel(window, "saturation")
    path = tmp_path / "sat.png"
    export.export_png(panel, path, dpi=192)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = QtGui.QImage(str(path))
    assert image.dotsPerMeterX() == pytest.approx(192 / 0.0254, abs=2)
    one = export.render_panel(panel, scale=1)
    assert abs(image.width() - 2 * one.width()) <= 2
    for bad in (0, 0.5, 9, float("nan")):
        with pytest.raises(ExportError, match="scale"):
            export.export_png(panel, path, scale=bad)
    with pytest.raises(ExportError, match="DPI"):
        export.export_png(panel, path, dpi=2000)


def test_title_states_the_setting(window):
    window.studio.update(causal=True)
    settle(window)
    assert "causal" in export.find_panel(window, "heatmaps").title
    state = StudioState(sentence="Your journey starts with one step", d_model=3, d_head=3, heads=2,
                        causal=True, temperature=2.0)
    title = export.setting_title(state, "head:2")
    assert title == "Your journey starts with one step — head 2 of 2 · scaled ÷√3 · causal · T=2"
    plain = export.setting_title(state.replace(scale=False, causal=False, temperature=1.0, heads=1,
                                               projections=False, positional=True, softmax="naive"), "heatmaps")
    assert plain == ("Your journey starts with one step — head 1 · unscaled · positional · "
                     "no projections (Q = K = V = X) · naive softmax")
    cross = export.setting_title(state.replace(target_sentence="Le chat"), "variance")
    assert "cross-attention" in cross and "d_k = 3" in cross and "head" not in cross
    long = export.setting_title(state.replace(sentence="word " * 40), "heatmaps")
    assert len(long.split(" — ")[0]) <= 60 and "…" in long


def test_unknown_panels_are_refused_in_one_line(window):
    for name in ("nope", "head:0", "head:99", "head:x", ""):
        with pytest.raises(ExportError) as info:
            export.find_panel(window, name)
        message = str(info.value)
        assert "\n" not in message and "heatmaps" in message, message
    with pytest.raises(ExportError):
        export.export_figure(window, "figure.gif")


def test_a_head_alone_shows_its_row_labels_and_the_window_is_left_as_it_was(window):
    window.studio.update(projections=True, heads=2)
    settle(window)
    view = window.heatmap_view
    second = view.head_maps[1]
    assert second.left_axis.style["showValues"]  # every head carries its row labels on screen too
    width_before = second.left_axis.width()
    panel = export.find_panel(window, "head:2")
    assert panel.widget is not view.head_canvases[1]  # drawn again for the page
    svg = export.svg_bytes(panel, title="")
    texts = ["".join(t.itertext()).strip() for t in ET.fromstring(svg).iter(f"{SVG_NS}text")]
    assert "query" in texts and "head 2" in texts
    for token in window.studio.state.tokens:
        assert texts.count(token) == 2 * window.studio.state.tokens.count(token), token  # rows and columns
    assert second.left_axis.style["showValues"]
    assert second.left_axis.width() == width_before
    # With one head, head:1 is the weights heatmap.
    window.studio.update(heads=1)
    settle(window)
    sheet = export.find_panel(window, "head:1").widget
    assert [hm.title for hm in sheet.heatmaps] == [view.stages["weights"].title]


def test_a_missing_folder_is_refused_and_nothing_is_written(window, tmp_path):
    panel = export.find_panel(window, "heatmaps")
    missing = tmp_path / "no such folder" / "x.png"
    for fmt in ("png", "svg", "pdf"):
        with pytest.raises(ExportError, match="does not exist"):
            export.export_figure(panel, missing.with_suffix(f".{fmt}"))
    assert not missing.parent.exists()


def test_a_failed_export_leaves_the_old_file_intact(window, tmp_path, monkeypatch):
    path = tmp_path / "figure.png"
    path.write_bytes(b"the lecture's figure")

    def broken(*args, **kwargs):
        raise RuntimeError("drawing failed")

    monkeypatch.setattr(figures, "render_panel", broken)
    with pytest.raises(RuntimeError):
        export.export_png(export.find_panel(window, "heatmaps"), path)
    assert path.read_bytes() == b"the lecture's figure"
    assert [p.name for p in tmp_path.iterdir()] == ["figure.png"]


def test_copy_figure_puts_an_image_and_its_svg_on_the_clipboard(window):
    clipboard = QtWidgets.QApplication.clipboard()
    clipboard.clear()
    export.copy_figure(export.find_panel(window, "heatmaps"), scale=1)
    image = clipboard.image()
    assert not image.isNull() and image.width() > 100
    mime = clipboard.mimeData()
    assert mime.hasFormat("image/svg+xml")
    assert bytes(mime.data("image/svg+xml").data()).lstrip().startswith(b"<?xml")


# -- matrices ------------------------------------------------------------------------


def test_the_old_names_still_lead_to_their_new_rooms():
    # The window and the command line call export.<name>; each is the very function of its room.
    from attn_studio import matrices

    for name in ("ExportError", "check_output_path", "matrix_to_csv", "matrix_to_latex", "save_matrix",
                 "studio_arrays", "save_arrays"):
        assert getattr(export, name) is getattr(matrices, name), name
    for name in ("Panel", "find_panel", "show_panel", "export_figure", "copy_figure", "figure_format",
                 "resolve_scale", "render_panel", "png_bytes", "check_panel_name", "setting_title"):
        assert getattr(export, name) is getattr(figures, name), name
    assert set(export.__all__) <= set(dir(export))


def test_a_table_saves_with_its_headers(window, tmp_path):
    array, rows, cols = export.table_matrix(window.models["embeddings"])
    assert rows == window.studio.state.tokens
    assert array.shape == (len(rows), len(cols)) == (len(rows), window.studio.state.d_model)
    export.save_matrix(tmp_path / "x.csv", array, rows, cols)
    table = list(csv.reader(io.StringIO((tmp_path / "x.csv").read_text(encoding="utf-8"))))
    assert [r[0] for r in table[1:]] == rows
    np.testing.assert_array_equal(np.array([[float(v) for v in r[1:]] for r in table[1:]]), array)


def test_copy_latex_puts_text_on_the_clipboard(qtbot):
    text = export.copy_latex(np.eye(2))
    assert QtWidgets.QApplication.clipboard().text() == text
    assert "\\begin{bmatrix}" in text


def outline_pixels(image: QtGui.QImage, colour: QtGui.QColor) -> int:
    """How many pixels are (nearly) the selected row's outline colour."""
    pixels = rgb(image)
    target = np.array([colour.red(), colour.green(), colour.blue()])
    return int((np.abs(pixels - target).sum(axis=2) < 40).sum())


def svg_texts(svg: bytes) -> list[str]:
    return ["".join(t.itertext()).strip() for t in ET.fromstring(svg).iter(f"{SVG_NS}text")]


def test_a_figure_has_every_token_label_and_no_on_screen_marks(window):
    # More tokens than a small window's heads can label at full size.
    window.studio.update(projections=True, heads=4,
                         sentence="the quick brown fox jumps over the lazy dog while seven tired cats "
                                  "watch it run across a wide green field")
    window.resize(800, 600)
    settle(window)
    view = window.heatmap_view
    first = view.head_maps[0]
    outline = first.overlay.outline
    tokens = window.studio.state.tokens
    # On screen: head 1 (the one the stages show) is marked and the query row outlined.
    on_screen = view.head_canvases[0].grab().toImage()
    assert first.title.endswith("◀")
    assert outline_pixels(on_screen, outline) > 50
    panel = export.find_panel(window, "head:1")
    image = export.render_panel(panel, scale=2, title="")
    assert outline_pixels(image, outline) == 0
    texts = svg_texts(export.svg_bytes(panel, title=""))
    assert not any("◀" in t for t in texts), texts
    # Every token on both axes, as often as the sentence has it (no more, no fewer).
    for token in set(tokens):
        assert texts.count(token) == 2 * tokens.count(token), (token, texts)
    whole = svg_texts(export.svg_bytes(export.find_panel(window, "heatmaps"), title=""))
    assert "head 1" in whole and not any("◀" in t for t in whole)
    for token in set(tokens):  # three stages and four heads
        assert whole.count(token) == 2 * 7 * tokens.count(token), token
    # The window is as it was: the mark and the outline are back.
    assert first.title.endswith("◀")
    settle(window)
    assert outline_pixels(view.head_canvases[0].grab().toImage(), outline) > 50


COPY_THEN_QUIT = """
import sys
from PySide6 import QtCore, QtWidgets
from attn_studio import cli
from attn_studio.gui import MainWindow
app = QtWidgets.QApplication(["attn-studio"])
def copy_then_quit():
    window = next(w for w in app.topLevelWidgets() if isinstance(w, MainWindow))
    window.export_actions.copy_current_figure()
    formats = app.clipboard().mimeData().formats()
    print("copied", "image/png" in formats, "image/svg+xml" in formats, flush=True)
    QtCore.QTimer.singleShot(100, window.close)
QtCore.QTimer.singleShot(300, copy_then_quit)
sys.exit(cli.main([]))
"""


def test_quitting_after_copying_a_figure_exits_cleanly(tmp_path):
    # The clipboard keeps the figure until the application is torn down; that must not crash.
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATTN_STUDIO_DATA_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", COPY_THEN_QUIT], capture_output=True, text=True, env=env,
                          timeout=120)
    assert "copied True True" in done.stdout, done.stderr
    assert done.returncode == 0, done.stderr


def test_an_opaque_figure_is_written_as_rgb_and_a_transparent_one_keeps_its_alpha(qapp):
    # PNG colour type (byte 25): 2 is RGB, 6 is RGB with alpha. The pixels read back are the same.
    opaque = QtGui.QImage(6, 4, QtGui.QImage.Format_ARGB32_Premultiplied)
    opaque.fill(QtGui.QColor(30, 120, 200))
    opaque.setPixelColor(2, 1, QtGui.QColor(250, 10, 0))
    see_through = QtGui.QImage(opaque)
    see_through.setPixelColor(3, 2, QtGui.QColor(0, 0, 0, 0))
    for image, colour_type in ((opaque, 2), (see_through, 6)):
        data = figures.encode_png(QtGui.QImage(image), 192)
        assert data[25] == colour_type
        back = QtGui.QImage.fromData(data)
        assert back.convertToFormat(QtGui.QImage.Format_ARGB32) == image.convertToFormat(QtGui.QImage.Format_ARGB32)
        assert round(back.dotsPerMeterX() * 0.0254) == 192


def test_an_image_scaled_up_in_a_figure_keeps_its_cells_sharp(qtbot):
    # The Heads tab draws a head as an image of one pixel a cell, scaled up: in a picture of the
    # window its cells must stay flat colours, not a blur across their borders.
    from attn_studio.gui.heads.matrix import MatrixCanvas

    canvas = MatrixCanvas("head")
    qtbot.addWidget(canvas)
    canvas.set_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]), ["a", "b"], ["a", "b"])
    canvas.resize(400, 400)
    canvas.show()
    QtWidgets.QApplication.processEvents()
    image = figures.render_panel(canvas, scale=2.0, title="")
    # The row through the middle of the first row of cells, in the figure's pixels.
    colours = []
    for x in range(image.width()):
        colours.append(image.pixelColor(x, image.height() * 3 // 8).rgb())
    runs = [c for i, c in enumerate(colours) if i == 0 or c != colours[i - 1]]
    assert len(runs) < 40, f"{len(runs)} colour changes along one row of two cells: blurred"


def test_file_export_writes_a_png_off_the_gui_thread_and_says_when_it_is_there(fresh_window, tmp_path, monkeypatch):
    window = fresh_window
    out = tmp_path / "heatmaps.png"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), "PNG image (*.png)"))
    messages = []
    monkeypatch.setattr(window.export_actions, "status", lambda text, ms=0: messages.append(text))
    assert window.export_actions.export_panel_dialog("heatmaps")
    assert window.export_actions.wait_written()
    assert not window.export_actions.writing
    image = QtGui.QImage(str(out))
    expected = figures.render_panel(figures.find_panel(window, "heatmaps"), scale=window.export_actions.png_scale)
    assert (image.width(), image.height()) == (expected.width(), expected.height())
    assert messages[-1] == f"Exported heatmaps as PNG to {out}"
    # A file that cannot be written is said, and nothing is left behind.
    shown = []
    monkeypatch.setattr(window.export_actions, "show_message", shown.append)
    bad = tmp_path / "missing-folder" / "x.png"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(bad), ""))
    window.export_actions.export_panel_dialog("heatmaps")
    window.export_actions.wait_written()
    assert shown and "missing-folder" in shown[-1] and not bad.exists()
