"""``attn-studio export``: headless figures from the command line, as a lecturer's script runs it.

The figures come from a real process (``python -m attn_studio``) with no display at all:
no DISPLAY, no WAYLAND_DISPLAY and no QT_QPA_PLATFORM, so the command itself must
choose the offscreen platform. Kept few: each process costs about a second. The usage
errors, found before Qt starts, and the other formats run the same ``main()`` in this
process (``run_here``).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from attn_studio import __version__

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run(*args, cwd=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return subprocess.run([sys.executable, "-m", "attn_studio", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def run_here(capfd, *args) -> subprocess.CompletedProcess:
    """``attn-studio ARGS`` as the command's ``main()`` runs it, in this process: its exit code and
    everything written to the standard streams (file descriptors, so Qt's messages too)."""
    from attn_studio import cli

    capfd.readouterr()  # only what the command writes
    try:
        code = cli.main(list(args))
    except SystemExit as exc:  # argparse's own exits (--help, --version)
        code = exc.code
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(["attn-studio", *args], code, out, err)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE, data[:16]
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_export_png_without_a_display(tmp_path):
    out = tmp_path / "x.png"
    done = run("export", "--preset", "journey", "--panel", "heatmaps", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    width, height = png_size(out.read_bytes())
    # The default window is 1600x900 and the default scale 2: the heatmaps are most of it.
    assert 1200 < width < 2 * 1600 and 400 < height < 2 * 900


@pytest.mark.parametrize("ext", ["svg", "pdf"])
def test_export_format_follows_the_extension(tmp_path, capfd, ext):
    # In this process: that a figure is drawn by a process with no display is the PNG test's.
    out = tmp_path / f"fig.{ext}"
    done = run_here(capfd, "export", "--preset", "animal", "--panel", "head:2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    data = out.read_bytes()
    if ext == "pdf":
        assert data.startswith(b"%PDF")
    else:
        root = ET.fromstring(data)
        assert root.tag.endswith("svg")
        assert "animal" in data.decode("utf-8")


@pytest.mark.parametrize("args", [
    ["--panel", "nope"],
    ["--preset", "nope"],
    ["--scale", "0"],
    ["--out", "/nonexistent_dir/x.png"],
])
def test_bad_arguments_say_one_line(tmp_path, capfd, args):
    if "--out" not in args:
        args = [*args, "--out", str(tmp_path / "x.png")]
    done = run_here(capfd, "export", *args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("attn-studio: error:")
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("fmt, name", [("svg", "x.png"), ("png", "x.PDF"), ("pdf", "fig.svg")])
def test_format_that_contradicts_the_extension_is_an_error(tmp_path, capfd, fmt, name):
    out = tmp_path / name
    done = run_here(capfd, "export", "--format", fmt, "--out", str(out))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "contradicts the extension" in lines[0], done.stderr
    assert not out.exists()


def test_version():
    done = run("--version")
    assert done.returncode == 0
    assert __version__ in done.stdout
