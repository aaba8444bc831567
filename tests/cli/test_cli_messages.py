"""What the command says when a person gets something wrong: a misspelt command, a session with a
number too large to hold, a PNG's pixel size asked of a vector figure. Each is one line on stderr,
exit code 2, and says what happened (``main()`` in this process: nothing here starts Qt).
"""

from __future__ import annotations

import json

import pytest

from test_cli_export import run_here


def one_line(done) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("typed, meant", [("exprot", "export"), ("expor", "export"), ("heds", "heads"),
                                          ("trian", "train"), ("Export", "export")])
def test_a_mistyped_command_is_named_with_the_closest(tmp_path, capfd, monkeypatch, typed, meant):
    monkeypatch.chdir(tmp_path)
    line = one_line(run_here(capfd, typed, "--preset", "animal", "--out", "x.png"))
    assert f"'{typed}' is not a command" in line and f"did you mean {meant}?" in line
    assert "does not exist" not in line


def test_a_file_named_like_a_command_still_opens_as_a_file(tmp_path, capfd, monkeypatch):
    # Only a word that is no file is taken for a misspelt command; here "exprot" is a (bad) file.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exprot").write_text("not a session", encoding="utf-8")
    line = one_line(run_here(capfd, "exprot"))
    assert "did you mean" not in line


def _session_text() -> str:
    from attn_studio.session import load_preset, state_to_json

    return state_to_json(load_preset("journey"))


@pytest.mark.parametrize("literal", ["1e400", "-1e999", "123456789012345678901234567890"])
def test_a_number_too_large_is_called_that_not_invalid_json(tmp_path, capfd, literal):
    text = _session_text()
    json.loads(text.replace('"temperature": 1.0', f'"temperature": {literal}'))  # valid JSON, as Python reads it
    path = tmp_path / "big.attn.json"
    path.write_text(text.replace('"temperature": 1.0', f'"temperature": {literal}'), encoding="utf-8")
    line = one_line(run_here(capfd, "export", "--session", str(path), "--out", str(tmp_path / "x.png")))
    assert "not valid JSON" not in line
    assert "too large" in line and "temperature" in line, line


@pytest.mark.parametrize("args", [["--dpi", "300"], ["--scale", "3"]])
@pytest.mark.parametrize("suffix", ["svg", "pdf"])
def test_png_sizes_with_a_vector_figure_are_refused(tmp_path, capfd, args, suffix):
    out = tmp_path / f"x.{suffix}"
    line = one_line(run_here(capfd, "export", "--preset", "animal", *args, "--out", str(out)))
    assert f"{args[0]} sizes a PNG's pixels" in line and f".{suffix}" in line
    assert not out.exists()


def test_png_sizes_still_apply_to_a_png(tmp_path, capfd):
    from test_cli_export import png_size

    out = tmp_path / "x.png"
    done = run_here(capfd, "export", "--preset", "journey", "--panel", "steps", "--dpi", "96", "--out", str(out))
    assert done.returncode == 0, done.stderr
    small = png_size(out.read_bytes())
    done = run_here(capfd, "export", "--preset", "journey", "--panel", "steps", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert png_size(out.read_bytes())[0] == 2 * small[0]  # the default scale is still 2
