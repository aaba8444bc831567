"""Every picture in the README is made by a command the README gives beside it.

The pictures are made again by running those commands (they take minutes: a training panel is
played to its step); this test keeps each picture tied to a command that the export command
accepts, so a picture cannot lose its recipe or keep one that no longer parses.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _pictures_and_commands():
    text = README.read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\((docs/[^)]+\.png)\)", text)
    commands = {out: cmd for cmd, out in re.findall(r"`(attn-studio export [^`]*--out (docs/[^` ]+\.png))`", text)}
    return pictures, commands


def test_every_readme_picture_has_its_command_and_the_file_exists():
    pictures, commands = _pictures_and_commands()
    assert len(pictures) >= 8
    missing = [p for p in pictures if p not in commands]
    assert not missing, f"pictures without the command that makes them: {missing}"
    for picture in pictures:
        assert (README.parent / picture).is_file(), picture


def test_every_picture_command_is_one_the_export_command_accepts():
    from attn_studio.cli.export import export_parser

    _, commands = _pictures_and_commands()
    for out, command in commands.items():
        words = shlex.split(command)
        assert words[:2] == ["attn-studio", "export"]
        args = export_parser().parse_args(words[2:])
        assert args.out == out
