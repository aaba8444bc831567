"""A lecture's hand-out from the command line, and a lecture file opened by the window's command."""

from __future__ import annotations

import re

import pytest
from PySide6 import QtWidgets

from attn_studio import cli
from attn_studio.gui import MainWindow
from attn_studio.scenes import Lecture, Scene, example_lecture, write_lecture
from attn_studio.session import load_preset


def _small_lecture() -> Lecture:
    journey, animal = load_preset("journey"), load_preset("animal")
    return Lecture("Two scenes", (
        Scene.of_state("By hand", journey, view="Step by step", caption="the journey row"),
        Scene.of_state("Causal", animal.replace(causal=True), view="Attention", caption="the causal mask"),
        Scene(title="A missing model", view="Drift", caption="needs a model",
              session={**example_lecture().scenes[9].to_dict()["session"],
                       "model": {"name": "no-such-model", "folder": None, "sha256": "0" * 64}}),
    ))


def test_the_handout_is_one_pdf_page_a_scene_with_its_text(tmp_path, capsys, qtbot):
    lecture_path = tmp_path / "two.attn-lecture.json"
    write_lecture(_small_lecture(), lecture_path)
    out = tmp_path / "handout.pdf"
    assert cli.main(["export", "--lecture", str(lecture_path), "--out", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page\b", data)) == 3  # one page a scene, the missing model's a card
    assert not list(tmp_path.glob("*.tmp*"))


def test_the_handout_in_a_folder_is_a_numbered_figure_a_scene(tmp_path, qtbot):
    lecture_path = tmp_path / "two.attn-lecture.json"
    write_lecture(_small_lecture(), lecture_path)
    out = tmp_path / "slides"
    assert cli.main(["export", "--lecture", str(lecture_path), "--out", str(out), "--format", "svg"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["01-by-hand.svg", "02-causal.svg"]  # the scene whose model is missing has no figure
    svg = (out / "02-causal.svg").read_text(encoding="utf-8")
    assert "2. Causal" in svg and "animal" in svg


def test_a_broken_lecture_file_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "bad.attn-lecture.json"
    path.write_text('{"kind": "lecture", "schema_version": 1, "title": "x", "scenes": [{"title": ""}]}')
    assert cli.main(["export", "--lecture", str(path), "--out", str(tmp_path / "x.pdf")]) == 2
    err = capsys.readouterr().err
    assert "scene 1" in err and len(err.strip().splitlines()) == 1


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
