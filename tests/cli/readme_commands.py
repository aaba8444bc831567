"""The README's shell commands, read from README.md itself, and how the tests run one as written.

Three test modules share them out (``SHARES``), so that the two workers of the suite (``--dist
loadfile`` puts a whole module on one) run the long ones side by side: the README's training runs at
their default lengths (induction 2,000 steps, the phase change's; seq2seq 2,000) take most of the time.
Every command falls in exactly one share (``test_readme_commands.py`` checks it).

Each command runs through ``bash`` in a fresh folder with a fresh data folder (ATTN_STUDIO_DATA_DIR),
``attn-studio`` being this checkout's. A placeholder path is written ``path/to/…`` in the README (the
text says so); it stands here for a file made for the test (a lecture, a toy session, a trained
session), made once per module (the commands only read it). The commands that cannot run here are
skipped, each with its reason.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

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


COMMANDS = readme_commands()

# Which module runs a command: the training runs of induction, the other training runs, the rest.
SHARES = {
    "induction": lambda c: c.startswith("attn-studio train induction"),
    "train": lambda c: c.startswith("attn-studio train") and not c.startswith("attn-studio train induction"),
    "other": lambda c: not c.startswith("attn-studio train"),
}


def share(name: str) -> list[str]:
    """The README's commands one test module runs."""
    return [c for c in COMMANDS if SHARES[name](c)]


def command_id(command: str) -> str:
    return command[:70]


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
    if "--model" in words and not minilm_installed():
        return "all-MiniLM-L6-v2 is not installed"
    if "trained.attn.json" in command and not minilm_installed():
        return "a trained session needs all-MiniLM-L6-v2, which is not installed"
    return None


def minilm_installed() -> bool:
    from attn_studio.pretrained.loading import default_model_zip

    return default_model_zip() is not None


class Placeholders:
    """A real file for each kind of ``path/to/…`` the README uses, made the first time it is asked for."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.made: dict[str, Path] = {}

    def __call__(self, name: str) -> Path | None:
        if name not in self.made:
            path = self._make(name)
            if path is None:
                return None
            self.made[name] = path
        return self.made[name]

    def _make(self, name: str) -> Path | None:
        from attn_studio.scenes import example_lecture, write_lecture
        from attn_studio.session import load_preset, write_session

        path = self.folder / name
        if name == "my-lecture.attn-lecture.json":
            # A lecture a person saved: the example's scenes, its training scenes played to a few steps
            # (the example's own 600 and 2,000 steps are printed once, by the hand-out's own test).
            example = example_lecture()
            scenes = tuple(dataclasses.replace(s, selection={**s.selection, "steps": 20})
                           if s.view.startswith("Training") else s for s in example.scenes)
            write_lecture(dataclasses.replace(example, scenes=scenes), path)
        elif name == "lecture.attn.json":
            write_session(path, load_preset("animal"))
        elif name == "trained.attn.json" and minilm_installed():
            from attn_studio.pretrained import load_pretrained
            from attn_studio.trained.studio import TrainedStudio

            studio = TrainedStudio(load_pretrained(None))
            studio.set_head_scale(3, 1, 0.0)  # head 4.2 silenced, as the README's walk-through does
            write_session(path, studio.state)
        else:
            return None
        return path


def run_as_written(command: str, placeholders: Placeholders, tmp_path: Path) -> None:
    """Run one README command through bash in a fresh folder and data folder; assert it ran cleanly and
    wrote what its ``--out`` names."""
    for placeholder in PLACEHOLDER.findall(command):
        name = placeholder.removeprefix("path/to/")
        made = placeholders(name)
        assert made is not None, f"no file stands for {placeholder}"
        command = command.replace(placeholder, shlex.quote(str(made)))
    run_in = tmp_path / "reader"
    run_in.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["ATTN_STUDIO_DATA_DIR"] = str(tmp_path / "data")
    # This checkout's attn-studio (the interpreter's own scripts folder) first on the PATH.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    # The timeout only stops a hung command: the README's 2,000-step training runs take about 40 s on a
    # quiet machine and over 300 s on a loaded one.
    done = subprocess.run(["bash", "-c", command], cwd=run_in, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr
    # What the command says it writes is there (--out FILE or FOLDER).
    words = shlex.split(command, comments=True)
    if "--out" in words:
        out = run_in / words[words.index("--out") + 1]
        assert out.exists() and (out.is_dir() and any(out.iterdir()) or out.is_file() and out.stat().st_size > 0), out
    assert not (tmp_path / "data").exists() or not list((tmp_path / "data").glob("recovery-*")), "a command wrote recovery"
