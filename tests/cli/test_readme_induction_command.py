"""The README's induction run (``attn-studio train induction``) runs as written: its default 2,000 steps,
the phase change's, and its PNG (``readme_commands.py``). The suite's longest command, in a module of its
own so that the other worker runs the README's other training runs meanwhile."""

from __future__ import annotations

import pytest

from readme_commands import Placeholders, command_id, run_as_written, share, why_skipped

MINE = share("induction")


@pytest.mark.parametrize("command", MINE, ids=[command_id(c) for c in MINE])
def test_the_readme_induction_command_runs_as_written(command, tmp_path):
    why = why_skipped(command)
    if why:
        pytest.skip(why)
    run_as_written(command, Placeholders(tmp_path / "made"), tmp_path)
