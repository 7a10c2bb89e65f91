"""The instructor guide's lesson table counts each lesson's exercises as the lessons do.

A lesson's exercises are counted three ways, which must agree: its numbered
"**Exercise N.M**" headings, the exercises its cells check (``check("name", ...)``) and
the exercises registered for it in the banks; the guide's table must say that number.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import nbformat
import pytest

from widgets.exercises import EXERCISES

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ROW = re.compile(
    r"^\| (\d+) \| \[[^\]]+\]\(\.\./notebooks/(\d\d_\w+\.ipynb)\) \| [^|]+ \| (\d+) \|$", re.M)
HEADING = re.compile(r"\*\*Exercise (\d+)\.(\d+[a-z]?)\b")
CHECKED = re.compile(r"""check\(\s*["'](l\d+_\w+)["']""")


def _table() -> dict[str, tuple[int, int]]:
    """notebook file name -> (lesson number, exercise count), from the guide's table."""
    text = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
    return {name: (int(n), int(count)) for n, name, count in ROW.findall(text)}


def _exercises_of(path: Path) -> tuple[list[str], set[str]]:
    """(the numbers of the exercise headings, the exercise names checked) of a lesson."""
    numbers, names = [], set()
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":
            numbers += [f"{a}.{b}" for a, b in HEADING.findall(cell.source)]
        else:
            names |= set(CHECKED.findall(cell.source))
    return numbers, names


def test_the_table_lists_every_lesson():
    assert sorted(_table()) == [p.name for p in LESSONS]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_the_tables_exercise_count_is_the_lessons(path):
    lesson, count = _table()[path.name]
    numbers, names = _exercises_of(path)
    registered = {n for n, e in EXERCISES.items() if e.lesson == lesson}
    repeated = [n for n, k in Counter(numbers).items() if k > 1]
    assert not repeated, f"{path.name}: exercise numbers used twice: {repeated}"
    assert all(n.split(".")[0] == str(lesson) for n in numbers), numbers
    assert names == registered, f"{path.name}: checked {sorted(names)}, bank {sorted(registered)}"
    assert len(numbers) == len(names), (
        f"{path.name}: {len(numbers)} exercise headings ({numbers}) for {len(names)} exercises")
    assert count == len(names), (
        f"docs/instructor.md says lesson {lesson} has {count} exercises; it has {len(names)}")
