"""The rooms keep their sizes (docs/ARCHITECTURE.md): a module that grows past them is split by job."""

from __future__ import annotations

from pathlib import Path

import attn_studio

PACKAGE = Path(attn_studio.__file__).resolve().parent
LIMITS = {
    "gui/window/main.py": 300,
    "studio.py": 500,
    "trained/studio.py": 500,
    "pretrained/model.py": 500,
    "state.py": 500,
}


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_large_rooms_stay_within_their_sizes():
    over = {name: _lines(PACKAGE / name) for name, limit in LIMITS.items() if _lines(PACKAGE / name) > limit}
    assert not over, f"split by job: {over}"


def test_gui_keeps_at_most_four_modules_at_its_top():
    top = sorted(p.name for p in (PACKAGE / "gui").glob("*.py") if p.name != "__init__.py")
    assert len(top) <= 4, top
