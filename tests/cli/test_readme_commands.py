"""Every shell command of the README runs as written: the code blocks are read from README.md itself,
so a command that changes or stops working fails here before a reader finds it.

This module runs the commands that are not training runs (exports, heads, the skipped ones with their
reasons); ``test_readme_train_commands.py`` and ``test_readme_induction_command.py`` run the training
runs, on the other worker (``readme_commands.py`` says how the commands are shared and run).
"""

from __future__ import annotations

import pytest

from readme_commands import COMMANDS, PLACEHOLDER, README, SHARES, Placeholders, command_id, run_as_written, \
    share, why_skipped

MINE = share("other")


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


def test_every_command_is_run_by_exactly_one_module():
    # The three modules share the commands out: none is left out, none runs twice.
    for command in COMMANDS:
        assert sum(takes(command) for takes in SHARES.values()) == 1, command
    assert share("induction") and share("train")


@pytest.fixture(scope="module")
def placeholders(tmp_path_factory):
    return Placeholders(tmp_path_factory.mktemp("made"))


@pytest.mark.parametrize("command", MINE, ids=[command_id(c) for c in MINE])
def test_a_readme_command_runs_as_written(command, placeholders, tmp_path):
    why = why_skipped(command)
    if why:
        pytest.skip(why)
    run_as_written(command, placeholders, tmp_path)
