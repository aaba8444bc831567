"""A lecture's hand-out: printed pages of one paper size, readable, trained, from the command line and
the window; and a lecture file opened by the window's command.

The PDF is read back with pypdf: each page's size, and every text with its size in points (the font
size times the scale of the text and drawing matrices, as a printer draws it).
"""

from __future__ import annotations

import math
import re
import unicodedata
import xml.etree.ElementTree as ET

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio import cli
from attn_studio.gui import MainWindow
from attn_studio.gui.files import pages
from attn_studio.gui.lecture import handout
from attn_studio.gui.lecture.scene_show import capture_scene
from attn_studio.scenes import Lecture, Scene, example_lecture, write_lecture
from attn_studio.session import load_preset

pypdf = pytest.importorskip("pypdf")

A4 = (842, 595)  # points, landscape (297 × 210 mm)
LETTER = (792, 612)  # 11 × 8.5 in
SMALLEST_PT = 8.0


def _small_lecture() -> Lecture:
    journey, animal = load_preset("journey"), load_preset("animal")
    return Lecture("Two scenes", (
        Scene.of_state("By hand", journey, view="Step by step", caption="the journey row",
                       notes="Walk the steps with the arrow keys."),
        Scene.of_state("Causal", animal.replace(causal=True), view="Attention", caption="the causal mask",
                       selection={"page": 2, "digits": 4}, notes="Hatched cells are blocked."),
        Scene(title="A missing model", view="Drift", caption="needs a model",
              session={**example_lecture().scenes[9].to_dict()["session"],
                       "model": {"name": "no-such-model", "folder": None, "sha256": "0" * 64}}),
        Scene.of_state("Trained a little", journey, view="Training: Why √dₖ", caption="forty steps",
                       selection={"page": 0, "steps": 40}),
    ))


def _texts(page) -> list[tuple[str, float]]:
    """(text, size in points as printed) of every text on a PDF page."""
    found = []

    def visit(text, cm, tm, font, size):
        if text.strip():
            # The text's vertical scale: the second column of tm × cm.
            c = tm[2] * cm[0] + tm[3] * cm[2]
            d = tm[2] * cm[1] + tm[3] * cm[3]
            found.append((text.strip(), size * math.hypot(c, d)))

    page.extract_text(visitor_text=visit)
    return found


def _read(path):
    reader = pypdf.PdfReader(str(path))
    sizes = [(round(float(p.mediabox.width)), round(float(p.mediabox.height))) for p in reader.pages]
    return reader, sizes, [_texts(p) for p in reader.pages]


def _joined(texts) -> str:
    """A page's texts as one line (ligatures such as "ﬁ" spelled out, as a reader reads them)."""
    return unicodedata.normalize("NFKC", " ".join(" ".join(t.split()) for t, _ in texts))


@pytest.fixture
def small_lecture_file(tmp_path):
    path = tmp_path / "small.attn-lecture.json"
    write_lecture(_small_lecture(), path)
    return path


def test_the_example_handout_prints_on_a4_pages_readable_and_trained(tmp_path, capsys, qtbot):
    lecture_path = tmp_path / "example.attn-lecture.json"
    lecture = example_lecture()
    write_lecture(lecture, lecture_path)
    out = tmp_path / "handout.pdf"
    assert cli.main(["export", "--lecture", str(lecture_path), "--out", str(out), "--paper", "a4", "--notes"]) == 0
    err = capsys.readouterr().err
    assert "step 600 of 600" in err and "step 2,000 of 2,000" in err  # the training's progress is printed
    _, sizes, texts = _read(out)
    pages = len(lecture.scenes)
    assert len(sizes) == pages and set(sizes) == {A4}
    smallest = min((size, text, n) for n, page in enumerate(texts, 1) for text, size in page)
    assert smallest[0] >= SMALLEST_PT - 0.01, smallest
    for n, (scene, page) in enumerate(zip(lecture.scenes, texts), start=1):
        words = _joined(page)
        assert f"page {n} of {pages}" in words and lecture.title in words  # the footer
        assert scene.title.split()[0] in words and scene.caption.split()[-1] in words
        assert " ".join(scene.notes.split()[:4]) in words  # --notes
        assert "press Play" not in words
    # The scene's own numbers at the stage's precision (2 decimals): MiniLM's "it" → "animal" weight.
    assert "0.68" in _joined(texts[8]) and "0.6800" not in _joined(texts[8])
    # The training scenes drawn after their runs: the run's step on the page, and its curves' axes.
    assert "step 600" in _joined(texts[10]) and "loss" in _joined(texts[10])
    assert "step 2,000" in _joined(texts[11])
    # The ablation scene: the same run (seed 0, step 2,000) taken apart, its bars and their words printed.
    knock = next(n for n, s in enumerate(lecture.scenes) if s.title == "Why two layers: knock the heads out")
    words = _joined(texts[knock])
    assert "seed 0" in words and "step 2,000" in words
    assert "Nats added by silencing a head" in words and "2.1+2.2" in words
    assert "The repeat needs heads" in words and "no better than guessing" in words


def test_a_letter_handout_has_a_card_for_a_missing_model_and_no_notes_unless_asked(small_lecture_file, tmp_path,
                                                                                    qtbot):
    out = tmp_path / "letter.pdf"
    assert cli.main(["export", "--lecture", str(small_lecture_file), "--out", str(out), "--paper", "letter"]) == 0
    _, sizes, texts = _read(out)
    assert len(sizes) == 4 and set(sizes) == {LETTER}
    assert min(size for page in texts for _, size in page) >= SMALLEST_PT - 0.01
    words = [_joined(page) for page in texts]
    assert "no-such-model" in words[2] and "not on this machine" in words[2]
    assert all("Walk the steps" not in w and "Hatched" not in w for w in words)  # no --notes
    assert "page 3 of 4" in words[2]
    assert re.search(r"0\.\d{4}\b", words[1])  # the causal scene keeps its own precision: 4 decimals
    assert "forty steps" in words[3] and "step 40" in words[3]
    assert not list(tmp_path.glob("*.tmp*"))


def _loss_points(svg: bytes) -> int:
    """The most points of one line an SVG draws (a curve of a plot is a path of many points)."""
    most = 0
    for node in ET.fromstring(svg).iter():
        if node.tag.endswith("polyline"):
            most = max(most, len((node.get("points") or "").split()))
        elif node.tag.endswith("path"):
            most = max(most, len(re.findall(r"[-\d.]+,[-\d.]+|[-\d.]+ [-\d.]+", node.get("d") or "")))
    return most


def test_pages_in_a_folder_are_png_or_svg_of_one_size_the_training_run_drawn(small_lecture_file, tmp_path, qtbot):
    out = tmp_path / "png"
    assert cli.main(["export", "--lecture", str(small_lecture_file), "--out", str(out), "--paper", "a4"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["01-by-hand.png", "02-causal.png", "03-a-missing-model.png", "04-trained-a-little.png"]
    shapes = {(QtGui.QImage(str(out / n)).width(), QtGui.QImage(str(out / n)).height()) for n in names}
    assert shapes == {(2245, 1587)}  # A4 landscape at 192 dpi, every page
    svg_dir = tmp_path / "svg"
    assert cli.main(["export", "--lecture", str(small_lecture_file), "--out", str(svg_dir), "--format", "svg",
                     "--paper", "letter", "--notes"]) == 0
    svgs = sorted(svg_dir.iterdir())
    assert len(svgs) == 4
    for path in svgs:
        root = ET.fromstring(path.read_bytes())
        assert (root.get("width"), root.get("height")) == ("1056", "816") or root.get("viewBox") == "0 0 1056 816"
    texts = pages.svg_text_sizes(svgs[0].read_bytes())
    joined = " ".join(t for t, _ in texts)
    assert "1. By hand" in joined and "Walk the steps" in joined and "page 1 of 4" in joined
    assert min(size for _, size in texts) * pages.PX_PT >= SMALLEST_PT - 0.01
    trained = svgs[3].read_bytes()
    assert b"press Play" not in trained
    assert _loss_points(trained) >= 40  # a loss curve of the forty steps, not empty axes


def test_the_locale_chooses_the_paper():
    letter = [QtCore.QLocale(QtCore.QLocale.English, QtCore.QLocale.UnitedStates),
              QtCore.QLocale(QtCore.QLocale.French, QtCore.QLocale.Canada),
              QtCore.QLocale(QtCore.QLocale.Spanish, QtCore.QLocale.Mexico)]
    a4 = [QtCore.QLocale(QtCore.QLocale.English, QtCore.QLocale.UnitedKingdom),
          QtCore.QLocale(QtCore.QLocale.German, QtCore.QLocale.Germany),
          QtCore.QLocale(QtCore.QLocale.Japanese, QtCore.QLocale.Japan)]
    assert [pages.default_paper(loc) for loc in letter] == ["letter"] * 3
    assert [pages.default_paper(loc) for loc in a4] == ["a4"] * 3
    size = pages.page_size("letter")
    assert (round(size.width()), round(size.height())) == (1056, 816)
    with pytest.raises(Exception, match="a4, letter"):
        pages.check_paper("a3")


def test_the_windows_dialog_offers_format_paper_and_notes_and_cancel_writes_nothing(window, tmp_path,
                                                                                     monkeypatch):
    w = window
    w.scenes.set_lecture(Lecture("Short", _small_lecture().scenes[:2]))
    answers = {"fmt": "png", "paper": "letter", "notes": True}

    def exec_(dialog):
        assert [dialog.format_combo.itemData(i) for i in range(dialog.format_combo.count())] == ["pdf", "png", "svg"]
        assert [dialog.paper_combo.itemData(i) for i in range(dialog.paper_combo.count())] == ["a4", "letter"]
        dialog.format_combo.setCurrentIndex(dialog.format_combo.findData(answers["fmt"]))
        dialog.paper_combo.setCurrentIndex(dialog.paper_combo.findData(answers["paper"]))
        dialog.notes_check.setChecked(answers["notes"])
        return QtWidgets.QDialog.Accepted

    monkeypatch.setattr(handout.HandoutDialog, "exec", exec_)
    folder = tmp_path / "pages"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    labels = []
    monkeypatch.setattr(QtWidgets.QProgressDialog, "setLabelText", lambda self, text: labels.append(text))
    w.scenes.handout_dialog()
    files = sorted(folder.iterdir())
    assert [p.suffix for p in files] == [".png", ".png"]
    assert {(QtGui.QImage(str(p)).width(), QtGui.QImage(str(p)).height()) for p in files} == {(2112, 1632)}
    assert labels and "scene 2 of 2" in labels[-1]
    # Cancel during the second scene: nothing is written, neither a folder nor a PDF.
    monkeypatch.setattr(QtWidgets.QProgressDialog, "wasCanceled", lambda self: self.value() >= 100)
    cancelled = tmp_path / "cancelled"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: str(cancelled))
    w.scenes.handout_dialog()
    assert not cancelled.exists()
    answers["fmt"] = "pdf"
    pdf = tmp_path / "cancelled.pdf"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(pdf), "PDF (*.pdf)"))
    w.scenes.handout_dialog()
    assert not pdf.exists()
    assert "cancelled" in w.message_label.text()


def test_a_training_scene_keeps_the_step_count_of_the_run_shown(window, qtbot):
    w = window
    panel = w.present.training_panel("Training: Why √dₖ")
    w.view_tabs.setCurrentWidget(w.training.page)
    w.training.tab.show_panel("scaling")
    assert w.present.current_view() == "Training: Why √dₖ"
    panel.runner.start()
    for _ in range(7):
        panel.single_step()
    qtbot.waitUntil(lambda: panel.runner.snapshot().steps == 7, timeout=10_000)
    scene = capture_scene(w, "seven steps")
    assert scene.view == "Training: Why √dₖ" and scene.selection["steps"] == 7
    assert handout.training_steps(scene) == 7
    untrained = Scene.of_state("never played", load_preset("journey"), view="Training: Why two layers")
    assert handout.training_steps(untrained) == handout.DEFAULT_STEPS["induction"]


def test_a_broken_lecture_file_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "bad.attn-lecture.json"
    path.write_text('{"kind": "lecture", "schema_version": 1, "title": "x", "scenes": [{"title": ""}]}')
    assert cli.main(["export", "--lecture", str(path), "--out", str(tmp_path / "x.pdf")]) == 2
    err = capsys.readouterr().err
    assert "scene 1" in err and len(err.strip().splitlines()) == 1
    assert cli.main(["export", "--lecture", str(path), "--out", str(tmp_path / "x.pdf"), "--paper", "a3"]) == 2


def test_attn_studio_opens_a_lecture_file_on_its_first_scene(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "two.attn-lecture.json"
    write_lecture(_small_lecture(), path)
    seen = []
    windows = []
    monkeypatch.setattr(MainWindow, "show", lambda self: None)
    monkeypatch.setattr(QtWidgets.QApplication, "exec", lambda self=None: seen.append(
        (windows[-1].scenes.lecture.title, windows[-1].scenes.current, windows[-1].studio.state.sentence)) or 0)
    original = MainWindow.__init__

    def init(self, *a, **k):
        original(self, *a, **k)
        windows.append(self)

    monkeypatch.setattr(MainWindow, "__init__", init)
    assert cli.main([str(path)]) == 0
    assert seen == [("Two scenes", 0, load_preset("journey").sentence)]
