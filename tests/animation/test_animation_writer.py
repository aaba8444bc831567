"""The animation writer, read back by independent readers (Pillow, imageio-ffmpeg's reader)."""

from __future__ import annotations

import os
import struct

import imageio_ffmpeg
import numpy as np
import pytest
from PIL import Image

from attn_studio import animation
from attn_studio.animation import AnimationError, write_animation, write_frames


def figure_frames(n=12, h=121, w=161, identical=False):
    """Frames like a figure's: white page, a block that moves, a smooth colour ramp (> 256 colours)."""
    out = []
    for k in range(n):
        frame = np.full((h, w, 3), 255, np.uint8)
        if not identical:
            frame[10:60, 5 + 6 * k:35 + 6 * k] = (int(255 * k / n), 40, 200)
        ramp = np.linspace(0, 255, w - 20).astype(np.uint8)
        frame[80:100, 10:w - 10] = np.stack([ramp, 255 - ramp, (ramp // 2)], axis=1)[None]
        out.append(frame)
    return out


def gif_image_descriptors(data: bytes):
    """(local colour table?, delay in 1/100 s) of every frame of a GIF, parsed by hand."""
    assert data[:6] == b"GIF89a"
    flags = data[10]
    pos = 13 + (3 * 2 ** ((flags & 7) + 1) if flags & 0x80 else 0)
    frames, delay = [], None
    while data[pos] != 0x3B:
        if data[pos] == 0x21:  # extension: label, then sub-blocks
            if data[pos + 1] == 0xF9:
                delay = struct.unpack("<H", data[pos + 4:pos + 6])[0]
            pos += 2
            while data[pos]:
                pos += data[pos] + 1
            pos += 1
        elif data[pos] == 0x2C:  # image descriptor
            local = bool(data[pos + 9] & 0x80)
            pos += 10 + (3 * 2 ** ((data[pos + 9] & 7) + 1) if local else 0)
            pos += 1  # LZW minimum code size
            while data[pos]:
                pos += data[pos] + 1
            pos += 1
            frames.append((local, delay))
        else:
            raise AssertionError(f"unexpected GIF block {data[pos]:#x}")
    return frames


def test_gif_has_every_frame_one_palette_loops_and_holds(tmp_path):
    frames = figure_frames(12)
    target = tmp_path / "sweep.gif"
    seen = []
    assert write_animation(frames, target, fps=10, hold=1.5, progress=lambda i, t: seen.append((i, t)),
                           total=12) == 12
    assert seen == [(i, 12) for i in range(1, 13)]
    with Image.open(target) as im:
        assert im.n_frames == 12 and im.size == (161, 121)
        assert im.info["loop"] == 0
        for k in range(12):
            im.seek(k)
            # One palette of 256 for > 256 colours: close, and exact on the flat colours.
            diff = np.abs(np.asarray(im.convert("RGB"), int) - frames[k])
            assert diff.max() <= 12
            assert (np.asarray(im.convert("RGB"))[0, 0] == 255).all()
    descriptors = gif_image_descriptors(target.read_bytes())
    assert len(descriptors) == 12
    assert not any(local for local, _ in descriptors), "a frame carries a palette of its own"
    assert [d for _, d in descriptors] == [10] * 11 + [160]


def test_gif_keeps_identical_frames_and_plays_once_without_loop(tmp_path):
    target = tmp_path / "still.gif"
    assert write_animation(figure_frames(5, identical=True), target, fps=5, loop=False) == 5
    with Image.open(target) as im:
        assert im.n_frames == 5
        assert "loop" not in im.info


def test_gif_delays_add_up_to_the_frame_rate(tmp_path):
    target = tmp_path / "thirty.gif"
    write_animation(figure_frames(30), target, fps=30)
    delays = [d for _, d in gif_image_descriptors(target.read_bytes())]
    assert sum(delays) == 100  # 30 frames at 30 fps: one second, whatever the rounding of each


@pytest.mark.parametrize("suffix, codec", [(".mp4", "h264"), (".webm", "vp9")])
def test_video_codec_pixel_format_even_sides_frame_rate(tmp_path, suffix, codec):
    frames = figure_frames(10, h=121, w=161)  # odd sides: padded to 162×122, never stretched
    target = tmp_path / f"sweep{suffix}"
    assert write_animation(frames, target, fps=12, hold=0.5) == 10
    reader = imageio_ffmpeg.read_frames(str(target))
    meta = next(reader)
    decoded = [np.frombuffer(f, np.uint8).reshape(122, 162, 3) for f in reader]
    assert meta["codec"] == codec
    assert meta["pix_fmt"].startswith("yuv420p")
    assert meta["size"] == (162, 122)
    assert meta["fps"] == 12
    assert len(decoded) == 10 + 6  # the hold: half a second at 12 fps
    # Not stretched: the block of frame 3 is where it was drawn (lossy, so near).
    block = decoded[3][15:55, 30:45].reshape(-1, 3).mean(axis=0)
    assert np.abs(block - frames[3][15:55, 30:45].reshape(-1, 3).mean(axis=0)).max() < 12
    assert np.abs(decoded[3][:, :161].astype(int)[105:115, 5:150].mean() - 255) < 6


def test_apng_frames_are_exact_and_loop(tmp_path):
    frames = figure_frames(8)
    target = tmp_path / "sweep.png"
    assert write_animation(frames, target, fps=4, hold=2.0) == 8
    with Image.open(target) as im:
        assert im.is_animated and im.n_frames == 8
        assert im.info["loop"] == 0
        durations = []
        for k in range(8):
            im.seek(k)
            durations.append(im.info["duration"])
            assert (np.asarray(im.convert("RGB")) == frames[k]).all()
    assert durations == [250.0] * 7 + [2250.0]
    write_animation(frames[:2], tmp_path / "once.png", fps=4, loop=False)
    with Image.open(tmp_path / "once.png") as im:
        assert im.info["loop"] == 1


@pytest.mark.parametrize("suffix", [".gif", ".mp4", ".webm", ".png"])
def test_an_interrupted_export_leaves_nothing_and_keeps_the_old_file(tmp_path, suffix):
    target = tmp_path / f"old{suffix}"
    target.write_bytes(b"the previous file")

    def interrupted():
        yield from figure_frames(3)
        raise KeyboardInterrupt  # the person pressed Ctrl+C while frame 4 was drawn

    with pytest.raises(KeyboardInterrupt):
        write_animation(interrupted(), target, fps=10)
    assert target.read_bytes() == b"the previous file"
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


@pytest.mark.parametrize("suffix", [".gif", ".mp4", ".png"])
def test_a_cancelled_export_writes_nothing(tmp_path, suffix):
    drawn = []

    def frames():
        for frame in figure_frames(10):
            drawn.append(1)
            yield frame

    target = tmp_path / f"new{suffix}"
    assert write_animation(frames(), target, fps=10, cancelled=lambda: len(drawn) >= 4) == 0
    assert len(drawn) == 4
    assert list(tmp_path.iterdir()) == []


def test_refusals_write_nothing(tmp_path):
    frames = figure_frames(2)
    for kwargs, words in [
        ({"fps": 0}, "above 0"), ({"fps": -3}, "above 0"), ({"fps": float("nan")}, "above 0"),
        ({"fps": "fast"}, "a number"), ({"fps": 10, "hold": -1}, "0 seconds or more"),
        ({"fps": 10, "total": 1001}, "at most 1000"), ({"fps": 60}, "GIF plays at most 50"),
    ]:
        with pytest.raises(AnimationError, match=words):
            write_animation(frames, tmp_path / "a.gif", **kwargs)
    with pytest.raises(AnimationError, match="not .avi"):
        write_animation(frames, tmp_path / "a.avi", fps=10)
    with pytest.raises(AnimationError, match="does not exist"):
        write_animation(frames, tmp_path / "no" / "a.gif", fps=10)
    (tmp_path / "dir.gif").mkdir()
    with pytest.raises(AnimationError, match="not a file"):
        write_animation(frames, tmp_path / "dir.gif", fps=10)
    with pytest.raises(AnimationError, match="one size"):
        write_animation([frames[0], frames[1][:-2]], tmp_path / "a.mp4", fps=10)
    with pytest.raises(AnimationError, match="uint8"):
        write_animation([frames[0].astype(float)], tmp_path / "a.png", fps=10)
    with pytest.raises(AnimationError, match="at least one frame"):
        write_animation([], tmp_path / "a.webm", fps=10)
    too_many = (frames[0] for _ in range(1001))
    with pytest.raises(AnimationError, match="at most 1000"):
        write_animation(too_many, tmp_path / "a.png", fps=10)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.gif"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_refused(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(AnimationError, match="not writable"):
            write_animation(figure_frames(1), folder / "a.gif", fps=1)
    finally:
        folder.chmod(0o700)


def test_numbered_frames_png_and_svg(tmp_path):
    frames = figure_frames(3)
    files = write_frames(frames, tmp_path / "frames", "png")
    assert [f.name for f in files] == ["frame_0001.png", "frame_0002.png", "frame_0003.png"]
    for f, frame in zip(files, frames):
        with Image.open(f) as im:
            assert (np.asarray(im.convert("RGB")) == frame).all()
    svgs = write_frames(['<svg xmlns="http://www.w3.org/2000/svg"><text>d_k = 1</text></svg>'] * 2,
                        tmp_path / "frames", "svg")
    assert svgs[1].read_text().count("<text>d_k = 1</text>") == 1
    # Written again with fewer frames: the folder holds this export's frames, none of the last one's.
    (tmp_path / "frames" / "notes.txt").write_text("mine")
    write_frames(frames[:2], tmp_path / "frames", "png")
    assert sorted(p.name for p in (tmp_path / "frames").iterdir()) == [
        "frame_0001.png", "frame_0001.svg", "frame_0002.png", "frame_0002.svg", "notes.txt"]
    for name in ("frame_0001.svg", "frame_0002.svg", "notes.txt"):
        (tmp_path / "frames" / name).unlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frames"]  # the staging folder is gone

    def interrupted():
        yield frames[0]
        raise RuntimeError("drawing failed")

    with pytest.raises(RuntimeError):
        write_frames(interrupted(), tmp_path / "new", "png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frames"]
    with pytest.raises(AnimationError, match="png or svg"):
        write_frames(frames, tmp_path / "x", "jpeg")


def test_the_temporary_file_is_named_as_safe_files_clears_it(tmp_path, monkeypatch):
    from attn_studio.safe_files import is_temporary, temporary_target

    seen = []

    def frames():
        seen.extend(p.name for p in tmp_path.iterdir())
        yield from figure_frames(1)

    write_animation(frames(), tmp_path / "talk.gif", fps=1)
    assert len(seen) == 1 and is_temporary(seen[0]) and temporary_target(seen[0]) == "talk.gif"
    assert animation.MAX_FRAMES == 1000
