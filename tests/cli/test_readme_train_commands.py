"""The README's training commands (``attn-studio train``, induction's aside) run as written, at the
lengths the README gives them (``readme_commands.py``; the rest of the README's commands run in
``test_readme_commands.py``). A module of their own: the suite's other worker runs the others meanwhile."""

from __future__ import annotations

import pytest

from readme_commands import Placeholders, command_id, run_as_written, share, why_skipped

MINE = share("train")


@pytest.mark.parametrize("command", MINE, ids=[command_id(c) for c in MINE])
def test_a_readme_training_command_runs_as_written(command, tmp_path):
    why = why_skipped(command)
    if why:
        pytest.skip(why)
    run_as_written(command, Placeholders(tmp_path / "made"), tmp_path)
