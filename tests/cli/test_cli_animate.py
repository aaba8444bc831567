"""``attn-studio export --animate``: animations of a panel's figure, read back by independent readers.

The command runs in this process (``main()``, as ``test_cli_export.run_here`` does); the files are
decoded with Pillow (GIF, APNG, PNG frames), imageio-ffmpeg's reader (MP4: codec, pixel format,
size, frame rate, frame count) and ElementTree (SVG frames: every text as text).
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET

import imageio_ffmpeg
import numpy as np
import pytest
from PIL import Image

CELL_VALUE = re.compile(r"^−?\d+\.\d\d$")  # a cell's value at the default 2 decimals


def run_here(capfd, *args) -> subprocess.CompletedProcess:
    from attn_studio import cli

    capfd.readouterr()
    try:
        code = cli.main(list(args))
    except SystemExit as exc:
        code = exc.code
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(["attn-studio", *args], code, out, err)


def svg_texts(path) -> list[str]:
    root = ET.parse(path).getroot()
    return [" ".join("".join(e.itertext()).split()) for e in root.iter() if e.tag.endswith("text")]


def test_temperature_gif_frames_size_rate_and_loop(tmp_path, capfd):
    out = tmp_path / "weights.gif"
    done = run_here(capfd, "export", "--preset", "journey", "--panel", "heatmaps",
                    "--animate", "temperature=0.2:5:6", "--fps", "4", "--hold", "0.5", "--out", str(out))
    assert done.returncode == 0, done.stderr
    m = re.search(r"\((\d+) frames, (\d+)×(\d+), 4 fps\)", done.stdout)
    assert m and int(m.group(1)) == 6
    with Image.open(out) as im:
        assert im.n_frames == 6
        assert im.size == (int(m.group(2)), int(m.group(3)))
        assert im.info["loop"] == 0
        durations = []
        for k in range(6):
            im.seek(k)
            durations.append(im.info["duration"])
            assert (np.asarray(im.convert("RGB"))[1, 1] == 255).all()  # the page stays white
    assert durations == [250] * 5 + [750]
    assert [p.name for p in tmp_path.iterdir()] == ["weights.gif"]


def test_mp4_is_h264_yuv420p_even_sized_at_the_rate_asked(tmp_path, capfd):
    out = tmp_path / "mask.mp4"
    done = run_here(capfd, "export", "--preset", "animal", "--panel", "head:1", "--animate", "causal=off:on:4",
                    "--fps", "8", "--hold", "0.25", "--out", str(out))
    assert done.returncode == 0, done.stderr
    reader = imageio_ffmpeg.read_frames(str(out))
    meta = next(reader)
    frames = list(reader)
    assert meta["codec"] == "h264" and meta["pix_fmt"].startswith("yuv420p")
    w, h = meta["size"]
    assert w % 2 == 0 and h % 2 == 0
    assert meta["fps"] == 8
    assert len(frames) == 4 + 2  # four frames and a quarter second held at 8 fps


def test_frame_k_as_svg_carries_every_value_of_the_still_export(tmp_path, capfd):
    from attn_studio.session import load_preset, write_session

    frames = tmp_path / "frames"
    done = run_here(capfd, "export", "--preset", "journey", "--panel", "heatmaps",
                    "--animate", "temperature=0.5:2:3", "--out", str(frames), "--format", "svg")
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in frames.iterdir())
    assert names == ["frame_0001.svg", "frame_0002.svg", "frame_0003.svg"]
    per_frame = [svg_texts(frames / name) for name in names]
    for k, temperature in enumerate((0.5, 1.0, 2.0)):  # the sweep is geometric: 0.5, 1, 2
        session = tmp_path / f"t{k}.attn.json"
        write_session(session, load_preset("journey").replace(temperature=temperature))
        still = tmp_path / f"still{k}.svg"
        done = run_here(capfd, "export", "--session", str(session), "--panel", "heatmaps", "--out", str(still))
        assert done.returncode == 0, done.stderr
        still_values = sorted(t for t in svg_texts(still) if CELL_VALUE.match(t))
        frame_values = sorted(t for t in per_frame[k] if CELL_VALUE.match(t))
        assert len(still_values) == 3 * 36  # scores, logits, weights of six tokens
        assert frame_values == still_values
        assert per_frame[k][0] == f"T = {temperature:g}"  # the value in the title
    # Tick labels, axis titles and colour-bar labels: the same in every frame (the heatmaps' own
    # titles and the figure's title say the temperature and change with it).
    fixed = [[t for t in texts[2:] if not CELL_VALUE.match(t) and not t.startswith("logits")] for texts in per_frame]
    assert fixed[0] == fixed[1] == fixed[2]
    assert "−3" in fixed[0] and "3" in fixed[0]  # the logits' bar covers T = 0.5's logits in every frame


def test_png_frames_same_size_and_colour_bar_fixed(tmp_path, capfd):
    frames = tmp_path / "dk"
    done = run_here(capfd, "export", "--preset", "animal", "--panel", "heatmaps", "--animate", "scale=off:on",
                    "--animate", "d_k=1:256:3", "--out", str(frames), "--format", "png")
    assert done.returncode == 0, done.stderr
    files = sorted(frames.iterdir())
    assert len(files) == 6
    sizes = {Image.open(f).size for f in files}
    assert len(sizes) == 1
    # The stages' colour bars (scores, logits) with their labels: the same pixels in every frame, while
    # the cells beside them change. In the stages' band (below the title, above the heads), find the
    # columns no frame changes: two wide runs of them stand right of the scores and of the logits.
    images = [np.asarray(Image.open(f).convert("RGB")) for f in files]
    h, w, _ = images[0].shape
    changed = np.zeros((h, w), bool)
    for im in images[1:]:
        changed |= (im != images[0]).any(axis=2)
    band = changed[int(0.1 * h): int(0.5 * h)].any(axis=0)
    still = np.flatnonzero(~band)
    runs = np.split(still, np.flatnonzero(np.diff(still) > 1) + 1)
    wide = [(r[0], r[-1]) for r in runs if len(r) >= 100 and 0 < r[0] and r[-1] < w - 1]
    assert len(wide) >= 2, wide
    assert band[wide[0][0] - 40: wide[0][0]].any()  # the scores' cells just left of its bar do change


def test_apng_of_a_query_walking_the_steps(tmp_path, capfd):
    out = tmp_path / "walk.png"
    done = run_here(capfd, "export", "--preset", "journey", "--panel", "steps", "--animate", "query=1:6",
                    "--no-loop", "--out", str(out))
    assert done.returncode == 0, done.stderr
    with Image.open(out) as im:
        assert im.is_animated and im.n_frames == 6 and im.info["loop"] == 1
        firsts = []
        for k in range(6):
            im.seek(k)
            firsts.append(np.asarray(im.convert("RGB")).copy())
    assert not (firsts[0] == firsts[5]).all()


HOSTILE = [
    (["--animate", "colour=0:1"], "cannot be swept"),
    (["--animate", "temperature=0:5"], "temperature goes from"),
    (["--animate", "temperature=0.2:1e9"], "temperature goes from"),
    (["--animate", "temperature=nan:1"], "finite"),
    (["--animate", "d_k=0:300"], "d_k goes 1 to 256"),
    (["--animate", "heads=1:17"], "heads goes 1 to 16"),
    (["--animate", "d_k=1:4:9"], "at most 4 frames"),
    (["--animate", "temperature=0.2:5:1001"], "FRAMES must be 1 to 1000"),
    (["--animate", "temperature=0.2:5:40", "--animate", "cell=X[1,1]:0:1:30"], "at most 1000"),
    (["--animate", "temperature"], "NAME=FROM:TO"),
    (["--animate", "cell=Y[1,1]:0:1"], "not a matrix"),
    (["--animate", "cell=X[1]:0:1"], "ROW,COLUMN"),
    (["--animate", "scale=off:maybe"], "off:on"),
    (["--animate", "temperature=0.2:5", "--fps", "0"], "above 0"),
    (["--animate", "temperature=0.2:5", "--fps", "-2"], "above 0"),
    (["--animate", "temperature=0.2:5", "--hold", "-1"], "0 seconds or more"),
    (["--animate", "temperature=0.2:5", "--size", "99999x2"], "--size"),
    (["--animate", "temperature=0.2:5", "--dpi", "300"], "--dpi"),
    (["--fps", "10"], "goes with --animate"),
]


@pytest.mark.parametrize("extra, words", HOSTILE, ids=[" ".join(e) for e, _ in HOSTILE])
def test_refused_in_one_line_with_exit_2_and_nothing_written(tmp_path, capfd, extra, words):
    out = tmp_path / "a.gif"
    done = run_here(capfd, "export", "--preset", "journey", "--panel", "heatmaps", *extra, "--out", str(out))
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], lines
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


HOSTILE_MODEL = [
    (["--animate", "layer=1:2"], "one layer"),
    (["--animate", "query=1:99"], "query goes 1 to 6"),
    (["--animate", "cell=X[9,1]:0:1"], "outside"),
    (["--animate", "d_k=1:8"], "without projections"),  # the journey example has Q = K = V = X
]


@pytest.mark.parametrize("extra, words", HOSTILE_MODEL, ids=[" ".join(e) for e, _ in HOSTILE_MODEL])
def test_sweeps_the_model_cannot_make_are_refused(tmp_path, capfd, extra, words):
    out = tmp_path / "a.mp4"
    done = run_here(capfd, "export", "--preset", "journey", "--panel", "heatmaps", *extra, "--out", str(out))
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [line for line in done.stderr.strip().splitlines() if "propagateSizeHints" not in line]
    assert len(lines) == 1 and words in lines[0], lines
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("out", ["missing/a.gif", "a.avi", "a", "dir.gif"])
def test_unwritable_or_unknown_targets_are_refused(tmp_path, capfd, out):
    (tmp_path / "dir.gif").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    done = run_here(capfd, "export", "--preset", "journey", "--animate", "temperature=0.2:5:3",
                    "--out", str(tmp_path / out))
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_an_interrupted_export_leaves_the_old_file_and_no_temporary(tmp_path, capfd, monkeypatch):
    from attn_studio.gui.files import sweep_frames

    out = tmp_path / "talk.mp4"
    out.write_bytes(b"last week's animation")
    drawn = []
    real = sweep_frames.SweepFrames._image

    def interrupted(self, layout):
        drawn.append(1)
        if len(drawn) == 3:
            raise KeyboardInterrupt  # Ctrl+C while the third frame is drawn
        return real(self, layout)

    monkeypatch.setattr(sweep_frames.SweepFrames, "_image", interrupted)
    done = run_here(capfd, "export", "--preset", "journey", "--animate", "temperature=0.2:5:6", "--out", str(out))
    assert done.returncode == 130 and "nothing was written" in done.stderr
    assert len(drawn) == 3
    assert out.read_bytes() == b"last week's animation"
    assert [p.name for p in tmp_path.iterdir()] == ["talk.mp4"]


def test_the_readme_animations_have_their_commands_and_stay_under_5_mb():
    """Each GIF of the README is made by the command beside it (its frame count is that command's),
    and stays small enough for a README (< 5 MB)."""
    import shlex
    from pathlib import Path

    from attn_studio.sweeps import frames_of, parse

    readme = Path(__file__).resolve().parents[2] / "README.md"
    text = readme.read_text(encoding="utf-8")
    gifs = re.findall(r"!\[[^\]]*\]\((docs/[^)]+\.gif)\)", text)
    assert len(gifs) >= 2
    for gif in gifs:
        commands = [c for c in re.findall(r"`(attn-studio (?:export|train) [^`]*)`", text) if gif in c]
        assert commands, f"{gif} has no command beside it"
        words = shlex.split(commands[0])
        path = readme.parent / gif
        assert path.is_file() and path.stat().st_size < 5 * 2**20, gif
        if words[1] == "export":
            sweeps = [parse(words[i + 1]) for i, w in enumerate(words) if w == "--animate"]
            expected = len(frames_of(sweeps))
        else:
            expected = int(words[words.index("--frames") + 1])
        with Image.open(path) as im:
            assert im.n_frames == expected, gif


def test_the_whole_window_keeps_its_colour_bars_over_the_sweep(tmp_path, capfd):
    frames = tmp_path / "window"
    done = run_here(capfd, "export", "--preset", "animal", "--panel", "window", "--animate", "temperature=0.5:2:3",
                    "--out", str(frames), "--format", "svg")
    assert done.returncode == 0, done.stderr
    whole = [[t for t in svg_texts(f) if re.fullmatch(r"[−-]?\d+", t)] for f in sorted(frames.iterdir())]
    assert len(whole) == 3 and whole[0] == whole[1] == whole[2]  # the bars' and axes' whole-number labels


def test_a_trained_models_layers_frame_k_is_the_still_export_of_layer_k(tmp_path, capfd):
    from attn_studio.pretrained import default_model_zip

    if default_model_zip() is None:
        pytest.skip("all-MiniLM-L6-v2 is not installed")
    text = "The animal didn't cross the street because it was too tired."
    frames = tmp_path / "layers"
    done = run_here(capfd, "export", "--model", "all-MiniLM-L6-v2", "--text", text, "--panel", "model",
                    "--animate", "layer=2:4", "--out", str(frames), "--format", "png")
    assert done.returncode == 0, done.stderr
    still = tmp_path / "still.png"
    done = run_here(capfd, "export", "--model", "all-MiniLM-L6-v2", "--text", text, "--panel", "model",
                    "--layer", "3", "--scale", "1", "--out", str(still))
    assert done.returncode == 0, done.stderr
    frame = np.asarray(Image.open(frames / "frame_0002.png").convert("RGB")).astype(int)
    page = np.asarray(Image.open(still).convert("RGB")).astype(int)
    assert frame.shape[1] == page.shape[1]
    # Below the titles (the frame's states the layer swept), the figure is the still's, pixel for pixel.
    h = min(frame.shape[0], page.shape[0]) - 120
    assert np.abs(frame[-h:] - page[-h:]).max() == 0
    assert np.abs(frame[-h:] - np.asarray(Image.open(frames / "frame_0001.png").convert("RGB")).astype(int)[-h:]).mean() > 1
