"""Every shell command of the README runs as written: the code blocks are read from README.md itself,
so a command that changes or stops working fails here before a reader finds it.

Each command runs through ``bash`` in a fresh folder with a fresh data folder (ATTN_STUDIO_DATA_DIR),
``attn-studio`` being this checkout's. A placeholder path is written ``path/to/…`` in the README (the
text says so); it stands here for a file made for the test (a lecture, a toy session, a trained
session). The commands that cannot run here are skipped, each with its reason.
"""

from __future__ import annotations

import dataclasses

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"^[ \t]*```(\w*)[ \t]*\n(.*?)^[ \t]*```", re.S | re.M)
SHELLS = ("bash", "sh", "")  # an unlabelled block of the README holds commands too
PLACEHOLDER = re.compile(r"path/to/\S+")


def readme_commands() -> list[str]:
    """Every command of the README's shell blocks, a continued line (``\\``) joined to its next."""
    commands = []
    for lang, body in BLOCK.findall(README.read_text(encoding="utf-8")):
        if lang not in SHELLS:
            continue
        for line in re.sub(r"\\\n[ \t]*", " ", body).splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def why_skipped(command: str) -> str | None:
    """Why ``command`` is not run here, or None."""
    words = shlex.split(command, comments=True)
    if "pip" in words or "apt-get" in words:
        return "installs packages (needs the network and changes the environment)"
    if "pytest" in words:
        return "runs this test suite"
    if words[:1] == ["attn-studio"] and (len(words) == 1 or words[1] not in ("export", "heads", "train")):
        return "opens the window"
    if any(w.startswith("path/to/bert") for w in words):
        return "needs a BERT folder of the reader's (no BERT model is installed here)"
    if "--model" in words and not _minilm_installed():
        return "all-MiniLM-L6-v2 is not installed"
    if "trained.attn.json" in command and not _minilm_installed():
        return "a trained session needs all-MiniLM-L6-v2, which is not installed"
    return None


def _minilm_installed() -> bool:
    from attn_studio.pretrained.loading import default_model_zip

    return default_model_zip() is not None


COMMANDS = readme_commands()


def test_the_readme_has_the_commands_it_is_read_for():
    # The parsing itself: a README whose blocks were no longer found would skip everything.
    assert sum(c.startswith("attn-studio export") for c in COMMANDS) >= 10
    assert any(c.startswith("attn-studio train") for c in COMMANDS)
    assert any(c.startswith("attn-studio heads") for c in COMMANDS)
    # Every placeholder path is one the text explains as such.
    text = README.read_text(encoding="utf-8")
    for command in COMMANDS:
        for placeholder in PLACEHOLDER.findall(command):
            assert "`path/to/" in text.replace(placeholder, ""), placeholder


def _placeholders(folder: Path) -> dict[str, Path]:
    """A real file for each kind of ``path/to/…`` the README uses."""
    from attn_studio.scenes import example_lecture, write_lecture
    from attn_studio.session import load_preset, write_session

    made = folder / "made"
    made.mkdir()
    lecture = made / "my-lecture.attn-lecture.json"
    # A lecture a person saved: the example's scenes, its training scenes played to a few steps (the
    # example's own 600 and 2,000 steps are printed once, by the hand-out's own test).
    example = example_lecture()
    scenes = tuple(dataclasses.replace(s, selection={**s.selection, "steps": 20}) if s.view.startswith("Training")
                   else s for s in example.scenes)
    write_lecture(dataclasses.replace(example, scenes=scenes), lecture)
    toy = made / "lecture.attn.json"
    write_session(toy, load_preset("animal"))
    found = {"my-lecture.attn-lecture.json": lecture, "lecture.attn.json": toy}
    if _minilm_installed():
        from attn_studio.pretrained import load_pretrained
        from attn_studio.trained.studio import TrainedStudio

        studio = TrainedStudio(load_pretrained(None))
        studio.set_head_scale(3, 1, 0.0)  # head 4.2 silenced, as the README's walk-through does
        trained = made / "trained.attn.json"
        write_session(trained, studio.state)
        found["trained.attn.json"] = trained
    return found


@pytest.mark.parametrize("command", COMMANDS, ids=[c[:70] for c in COMMANDS])
def test_a_readme_command_runs_as_written(command, tmp_path):
    why = why_skipped(command)
    if why:
        pytest.skip(why)
    made = _placeholders(tmp_path)
    for placeholder in PLACEHOLDER.findall(command):
        name = placeholder.removeprefix("path/to/")
        assert name in made, f"no file stands for {placeholder}"
        command = command.replace(placeholder, shlex.quote(str(made[name])))
    run_in = tmp_path / "reader"
    run_in.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["ATTN_STUDIO_DATA_DIR"] = str(tmp_path / "data")
    # This checkout's attn-studio (the interpreter's own scripts folder) first on the PATH.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(["bash", "-c", command], cwd=run_in, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr
    # What the command says it writes is there (--out FILE or FOLDER).
    words = shlex.split(command, comments=True)
    if "--out" in words:
        out = run_in / words[words.index("--out") + 1]
        assert out.exists() and (out.is_dir() and any(out.iterdir()) or out.is_file() and out.stat().st_size > 0), out
    assert not (tmp_path / "data").exists() or not list((tmp_path / "data").glob("recovery-*")), "a command wrote recovery"
