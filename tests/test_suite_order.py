"""The suite's order: the longest modules named in tests/suite_order.py (``SLOW_FIRST``) exist, so a
renamed or split module is not silently left to the end, where one worker would run it alone."""

from pathlib import Path

from suite_order import SLOW_FIRST

ROOT = Path(__file__).resolve().parents[1]


def test_every_slow_module_named_first_is_a_test_module():
    missing = [name for name in SLOW_FIRST if not (ROOT / name).is_file()]
    assert missing == []
    assert len(set(SLOW_FIRST)) == len(SLOW_FIRST)


def test_the_slow_modules_are_collected_first_and_marked(request):
    items = request.session.items
    ranks = [SLOW_FIRST.index(p) if (p := item.path.relative_to(ROOT).as_posix()) in SLOW_FIRST
             else len(SLOW_FIRST) for item in items]
    assert ranks == sorted(ranks)
    assert all((item.get_closest_marker("slow") is not None) == (r < len(SLOW_FIRST))
               for item, r in zip(items, ranks))
