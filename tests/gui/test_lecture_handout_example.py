"""The example lecture's hand-out, as the command line prints it: a page a scene, A4, readable, its training
scenes trained to the example's own lengths (600 and 2,000 steps, the phase change's) and their progress
printed. The suite's longest in-process test, in a module of its own so that the suite's two workers
(``--dist loadfile`` puts a whole module on one) share the hand-out tests out; the other hand-out tests
are in ``test_lecture_handout.py``, whose PDF reading this module uses."""

from __future__ import annotations

import pytest

from attn_studio import cli
from attn_studio.scenes import example_lecture, write_lecture

pytest.importorskip("pypdf")

from test_lecture_handout import A4, SMALLEST_PT, _joined, _read  # noqa: E402  (needs pypdf)


def test_the_example_handout_prints_on_a4_pages_readable_and_trained(tmp_path, capsys, qtbot):
    lecture_path = tmp_path / "example.attn-lecture.json"
    lecture = example_lecture()
    write_lecture(lecture, lecture_path)
    out = tmp_path / "handout.pdf"
    assert cli.main(["export", "--lecture", str(lecture_path), "--out", str(out), "--paper", "a4", "--notes"]) == 0
    err = capsys.readouterr().err
    assert "step 600 of 600" in err and "step 2,000 of 2,000" in err  # the training's progress is printed
    _, sizes, texts = _read(out)
    total = len(lecture.scenes)
    assert len(sizes) == total and set(sizes) == {A4}
    smallest = min((size, text, n) for n, page in enumerate(texts, 1) for text, size in page)
    assert smallest[0] >= SMALLEST_PT - 0.01, smallest
    for n, (scene, page) in enumerate(zip(lecture.scenes, texts), start=1):
        words = _joined(page)
        assert f"page {n} of {total}" in words and lecture.title in words  # the footer
        assert scene.title.split()[0] in words and scene.caption.split()[-1] in words
        assert " ".join(scene.notes.split()[:4]) in words  # --notes
        assert "press Play" not in words
    # The scene's own numbers at the stage's precision (2 decimals): MiniLM's "it" → "animal" weight.
    assert "0.68" in _joined(texts[8]) and "0.6800" not in _joined(texts[8])
    # The training scenes drawn after their runs: the run's step on the page, and its curves' axes.
    assert "step 600" in _joined(texts[10]) and "loss" in _joined(texts[10])
    assert "step 2,000" in _joined(texts[11])
    # The lab model's scene: its model trained from its recipe (or found in this machine's cache), drawn.
    lab = next(n for n, s in enumerate(lecture.scenes) if s.title == "The induction head, opened")
    words = _joined(texts[lab])
    assert "not on this machine" not in words and "head 2" in words
    assert "1UQIJBCAF0" * 2 in "".join(text for text, _ in texts[lab] if len(text) == 1)  # its tokens on an axis
    # The ablation scene: the same run (seed 0, step 2,000) taken apart, its bars and their words printed.
    knock = next(n for n, s in enumerate(lecture.scenes) if s.title == "Why two layers: knock the heads out")
    words = _joined(texts[knock])
    assert "seed 0" in words and "step 2,000" in words
    assert "Nats added by silencing a head" in words and "2.1+2.2" in words
    assert "The repeat needs heads" in words and "no better than guessing" in words
