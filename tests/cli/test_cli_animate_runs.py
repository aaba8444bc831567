"""Animations of a training run (``train NAME --animate``) and of a lecture (``export --lecture … --out .mp4``),
read back by independent readers (Pillow, imageio-ffmpeg's reader, ElementTree)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import xml.etree.ElementTree as ET

import imageio_ffmpeg
import numpy as np
import pytest
from PIL import Image

NUMBER = re.compile(r"^−?-?\d+(\.\d+)?$")


def run_here(capfd, *args) -> subprocess.CompletedProcess:
    from attn_studio import cli

    capfd.readouterr()
    try:
        code = cli.main(list(args))
    except SystemExit as exc:
        code = exc.code
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(["attn-studio", *args], code, out, err)


def test_train_animate_writes_a_frame_every_k_steps(tmp_path, capfd):
    out = tmp_path / "scaling.gif"
    done = run_here(capfd, "train", "scaling", "--steps", "20", "--animate", str(out), "--frames", "5",
                    "--fps", "5", "--hold", "1")
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and "(5 frames, steps 0 to 20)" in done.stdout
    assert "propagateSizeHints" not in done.stderr
    with Image.open(out) as im:
        assert im.n_frames == 5 and im.info["loop"] == 0
        durations = []
        for k in range(5):
            im.seek(k)
            durations.append(im.info["duration"])
    assert durations == [200] * 4 + [1200]
    assert [p.name for p in tmp_path.iterdir()] == ["scaling.gif"]  # no tables without --out


def test_training_frames_keep_their_axes(qapp):
    """Every frame's tick labels are the whole run's: the curves draw themselves on axes that do not move."""
    from attn_studio.gui.training.run_frames import RunFrames, frame_steps, play_run
    from attn_studio.training.report import make_experiment

    runs = play_run(make_experiment("scaling", seed=0, d_k=None), frame_steps(30, 4))
    assert [r.step_count for r in runs] == [0, 10, 20, 30]
    frames = RunFrames("scaling", runs)
    assert frames.prepare()
    ticks = []
    titles = []
    for svg in frames.svgs():
        root = ET.fromstring(svg)
        texts = [" ".join("".join(e.itertext()).split()) for e in root.iter() if e.tag.endswith("text")]
        ticks.append(sorted(t for t in texts if NUMBER.match(t)))
        titles.append(texts[0])
    assert all(t == ticks[0] for t in ticks[1:]), "a frame's tick labels differ from the first's"
    assert "30" in ticks[0]  # the step axis reaches the run's end from the first frame on
    assert [t.rsplit("step ", 1)[-1] for t in titles] == ["0", "10", "20", "30"]


def test_train_animate_refusals_write_nothing(tmp_path, capfd):
    for extra, words in [(["--animate", str(tmp_path / "a.avi")], "not .avi"),
                         (["--animate", str(tmp_path / "no" / "a.gif")], "does not exist"),
                         (["--animate", str(tmp_path / "a.gif"), "--fps", "0"], "above 0"),
                         (["--animate", str(tmp_path / "a.gif"), "--frames", "5000"], "at most 1000"),
                         (["--animate", str(tmp_path / "a.gif"), "--frames", "99"], "--frames must be 2 to 21")]:
        done = run_here(capfd, "train", "scaling", "--steps", "20", *extra)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def small_lecture(tmp_path):
    from attn_studio.scenes import example_lecture, write_lecture

    lecture = example_lecture()
    toy = [s for s in lecture.scenes if s.view in ("Attention", "Step by step") and "MiniLM" not in s.title][:2]
    path = tmp_path / "two.attn-lecture.json"
    write_lecture(dataclasses.replace(lecture, scenes=type(lecture.scenes)(toy)), path)
    return path, toy


def test_lecture_as_mp4_holds_each_scene(tmp_path, capfd, small_lecture):
    path, scenes = small_lecture
    out = tmp_path / "lecture.mp4"
    done = run_here(capfd, "export", "--lecture", str(path), "--out", str(out), "--hold", "1.5", "--fps", "2")
    assert done.returncode == 0, done.stderr
    reader = imageio_ffmpeg.read_frames(str(out))
    meta = next(reader)
    frames = list(reader)
    assert meta["codec"] == "h264" and meta["pix_fmt"].startswith("yuv420p")
    assert meta["size"] == (1280, 720) and meta["fps"] == 2
    assert len(frames) == 2 * 3  # two scenes, each 1.5 s at 2 frames a second
    pixels = [np.frombuffer(f, np.uint8).astype(int) for f in frames]
    differ = lambda a, b: np.abs(pixels[a] - pixels[b]).mean()  # noqa: E731
    assert differ(0, 2) < 1 and differ(3, 5) < 1  # a scene held: the same page
    assert differ(0, 3) > 2  # the next scene: another page


def test_lecture_video_refusals(tmp_path, capfd, small_lecture):
    path, _ = small_lecture
    before = sorted(p.name for p in tmp_path.iterdir())
    for extra, words in [(["--out", str(tmp_path / "l.mp4"), "--hold", "-1"], "0 seconds or more"),
                         (["--out", str(tmp_path / "l.mp4"), "--fps", "0"], "above 0"),
                         (["--out", str(tmp_path / "l.mp4"), "--hold", "60", "--fps", "100"], "at most 1000"),
                         (["--out", str(tmp_path / "missing" / "l.mp4")], "does not exist")]:
        done = run_here(capfd, "export", "--lecture", str(path), *extra)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr, done.stderr
    done = run_here(capfd, "export", "--lecture", str(tmp_path / "nope.attn-lecture.json"),
                    "--out", str(tmp_path / "l.mp4"))
    assert done.returncode == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_export_a_training_panel_as_the_run_goes(tmp_path, capfd):
    out = tmp_path / "run.png"
    done = run_here(capfd, "export", "--view", "Training: Why √dₖ", "--panel", "window", "--animate", "steps=0:20:3",
                    "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "(3 frames, steps 0 to 20)" in done.stdout
    with Image.open(out) as im:
        assert im.is_animated and im.n_frames == 3
    done = run_here(capfd, "export", "--panel", "heatmaps", "--animate", "steps=0:20:3", "--out", str(tmp_path / "x.gif"))
    assert done.returncode == 2 and "training" in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["run.png"]
