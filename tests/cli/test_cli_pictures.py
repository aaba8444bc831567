"""``attn-studio export`` of the window in a given state, for the README's pictures: ``--view`` (a tab),
``--find`` (the Heads tab's find), ``--steps`` (a training panel played) and ``--panel stage`` (the
Present stage as a projector of ``--width`` × ``--height`` shows it).

The command's ``main()`` runs in this process (``run_here``); what it wrote is read back: a PNG's
size and pixels, an SVG's texts.
"""

from __future__ import annotations

import re

import pytest
from PySide6 import QtGui

from attn_studio.pretrained import default_model_zip
from test_cli_export import png_size, run_here
from test_cli_trained_edits import ANIMAL, MINILM, svg_texts

needs_minilm = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")


def _image(path) -> QtGui.QImage:
    image = QtGui.QImage(str(path))
    assert not image.isNull(), path
    return image


def _has_outline_red(image: QtGui.QImage) -> bool:
    # The stage outlines the query's row in red (#e74c3c-like): a run of strongly red pixels.
    for y in range(0, image.height(), 2):
        run = 0
        for x in range(0, image.width(), 2):
            c = image.pixelColor(x, y)
            run = run + 1 if c.red() > 200 and c.green() < 110 and c.blue() < 110 else 0
            if run >= 40:
                return True
    return False


def test_the_stage_is_written_at_the_projectors_size_with_its_query_outlined(tmp_path, capfd):
    pictures = {}
    for width, height in ((1280, 720), (1920, 1080)):
        out = tmp_path / f"stage-{width}.png"
        done = run_here(capfd, "export", "--preset", "animal", "--panel", "stage", "--view", "attention",
                        "--width", str(width), "--height", str(height), "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert png_size(out.read_bytes()) == (width, height)
        pictures[width] = _image(out)
    assert _has_outline_red(pictures[1280])
    assert _has_outline_red(pictures[1920])


def test_the_stage_of_another_view_and_page_is_another_picture(tmp_path, capfd):
    written = []
    for view, page in (("Attention", "1"), ("Attention", "2"), ("step by step", "1")):
        out = tmp_path / f"{view.replace(' ', '-')}-{page}.png"
        done = run_here(capfd, "export", "--preset", "animal", "--panel", "stage", "--view", view, "--page", page,
                        "--width", "1280", "--height", "720", "--out", str(out))
        assert done.returncode == 0, done.stderr
        written.append(_image(out))
    assert written[0] != written[1]  # the scores page, then the logits page
    assert written[0] != written[2]


@pytest.mark.parametrize("args, said", [
    (("--panel", "stage", "--view", "nowhere"), "there is no view 'nowhere'"),
    (("--panel", "stage", "--view", "attention", "--page", "9"), "has 3 page(s)"),
    (("--panel", "stage", "--view", "attention", "--page", "0"), "counts from 1"),
    (("--panel", "heatmaps", "--view", "attention"), "--view chooses the view of --panel window or --panel stage"),
    (("--panel", "heatmaps", "--page", "2"), "--page chooses a page of --panel stage"),
    (("--panel", "stage", "--view", "attention", "--scale", "2"), "without --scale"),
    (("--panel", "window", "--view", "attention", "--steps", "5"), "--steps trains a panel of the training lab"),
    (("--panel", "window", "--steps", "-1"), "--steps must be between"),
    (("--panel", "window", "--find", "it", "animal"), "--find edits or selects a trained model's heads"),
])
def test_a_picture_that_cannot_be_made_is_refused_in_one_line(tmp_path, capfd, args, said):
    out = tmp_path / "x.png"
    done = run_here(capfd, "export", "--preset", "animal", *args, "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()


def test_the_stage_refuses_a_vector_format(tmp_path, capfd):
    out = tmp_path / "x.svg"
    done = run_here(capfd, "export", "--preset", "animal", "--panel", "stage", "--out", str(out))
    assert done.returncode == 2 and "a .png of --width x --height pixels" in done.stderr, done.stderr
    assert not out.exists()


def test_a_training_view_is_played_to_its_steps_before_the_stage_is_drawn(tmp_path, capfd):
    out = tmp_path / "lab.png"
    done = run_here(capfd, "export", "--panel", "stage", "--view", "Training: Why attention", "--steps", "3",
                    "--width", "1280", "--height", "720", "--out", str(out))
    assert done.returncode == 0, done.stderr
    svg = tmp_path / "lab.svg"
    done = run_here(capfd, "export", "--panel", "window", "--view", "training: why attention", "--steps", "3",
                    "--out", str(svg))
    assert done.returncode == 0, done.stderr
    steps = [int(n) for n in re.findall(r"\bstep (\d+)\b", svg_texts(svg))]
    assert steps and steps[0] == 3, steps  # trained to step 3 exactly, however busy the machine
    assert png_size(out.read_bytes()) == (1280, 720)


@needs_minilm
def test_the_heads_tab_shows_its_find_in_a_picture_of_the_window(tmp_path, capfd):
    out = tmp_path / "heads.svg"
    done = run_here(capfd, "export", *MINILM, "--text", ANIMAL, "--find", "it", "animal", "--panel", "window",
                    "--view", "heads", "--width", "1280", "--height", "720", "--out", str(out))
    assert done.returncode == 0, done.stderr
    texts = svg_texts(out)
    assert "'it' → 'animal': head 4.2 sends" in texts.replace("&#39;", "'"), texts[:2000]
    missing = tmp_path / "none.svg"
    done = run_here(capfd, "export", *MINILM, "--text", ANIMAL, "--find", "it", "zebra", "--panel", "window",
                    "--view", "heads", "--out", str(missing))
    assert done.returncode == 2 and "zebra" in done.stderr, done.stderr
    assert not missing.exists()


def test_a_training_panels_figure_is_exported_after_its_run_is_played(tmp_path, capfd):
    out = tmp_path / "seq2seq.svg"
    done = run_here(capfd, "export", "--panel", "training:seq2seq", "--out", str(out))
    assert done.returncode == 2 and "give --steps N" in done.stderr, done.stderr
    assert not out.exists()
    done = run_here(capfd, "export", "--panel", "training:seq2seq", "--steps", "4", "--out", str(out))
    assert done.returncode == 0, done.stderr
    texts = svg_texts(out)
    steps = [int(n) for n in re.findall(r"\bstep (\d+)\b", texts)]
    assert steps and max(steps) == 4, texts[:1500]  # trained to step 4 exactly
    assert "Play" not in texts  # the figure for the page, not the panel with its buttons
