"""No Qt platform message reaches the user's terminal: the commands that draw offscreen
(``train --png``, ``export``) print only their own lines. Each command runs as a person runs it,
in a fresh process, where Qt's default handler would print to stderr."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def run_command(*args, cwd):
    env = dict(os.environ)
    env.pop("QT_QPA_PLATFORM", None)  # the command sets offscreen itself, as on a machine without a display
    return subprocess.run([sys.executable, "-m", "attn_studio", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args", [
    ("train", "induction", "--steps", "3", "--png", "--out", "run"),
    ("export", "--preset", "journey", "--panel", "heatmaps", "--out", "fig.png"),
])
def test_an_offscreen_command_prints_no_qt_message(tmp_path, args):
    done = run_command(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "propagateSizeHints" not in done.stderr + done.stdout
    assert "Qt" not in done.stderr, done.stderr  # nor any other Qt line
    assert list(tmp_path.rglob("*.png")), "the command wrote its figure"


def test_a_qt_warning_that_matters_still_reaches_the_terminal(tmp_path):
    """The quiet handler drops the platform's chatter, not Qt's real warnings."""
    code = ("from attn_studio.cli.basics import quiet_qt; quiet_qt();"
            "from PySide6 import QtCore; QtCore.qWarning('This plugin does not support propagateSizeHints()');"
            "QtCore.qWarning('a real problem')")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == ["attn-studio: Qt: a real problem"]
