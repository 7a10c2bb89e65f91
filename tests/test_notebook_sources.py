"""Lessons print minigrad's own source (`print(inspect.getsource(...))`). The outputs
stored in the course and learner notebooks must show the source as it is now: a
change to a printed function without re-running the notebooks would teach code that
no longer exists."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
    (ROOT / "notebooks" / "learner").glob("*.ipynb"))
SOURCE = "\n".join(p.read_text() for folder in ("minigrad", "widgets")
                   for p in sorted((ROOT / folder).rglob("*.py")))
# A line the engine lesson prints between two excerpts of one function.
ELISION = "        ..."


def _printed_sources(path: Path) -> list[str]:
    """The stdout of every code cell that prints `inspect.getsource`."""
    nb = nbformat.read(path, as_version=4)
    shown = []
    for cell in nb.cells:
        if cell.cell_type == "code" and "inspect.getsource(" in cell.source:
            shown += [o.text for o in cell.outputs
                      if o.output_type == "stream" and o.name == "stdout"]
    return shown


def _excerpts(text: str) -> list[str]:
    """Runs of printed lines to look up in the source: split at blank lines (a cell may
    print several functions) and where the lesson elided lines."""
    runs, current = [], []
    for line in text.splitlines():
        if line.strip() and line != ELISION:
            current.append(line)
        elif current:
            runs.append("\n".join(current))
            current = []
    if current:
        runs.append("\n".join(current))
    return runs


def test_the_course_prints_source_somewhere():
    printed = [p.name for p in NOTEBOOKS if _printed_sources(p)]
    assert len(printed) >= 8, printed  # lessons 1-8 each show some of the library


def _definitions(text: str) -> list[str]:
    """A printout cut into whole top-level definitions (each starts at column 0 with
    `def`, `class` or a decorator): each must appear in the library as it is, so a
    method added inside a printed class makes the printout stale too."""
    blocks: list[list[str]] = []
    for line in text.rstrip("\n").splitlines():
        if line.startswith(("def ", "class ", "@")) and not (
                blocks and blocks[-1] and blocks[-1][-1].startswith("@")):
            blocks.append([])
        if blocks:
            blocks[-1].append(line)
    return ["\n".join(b).rstrip() for b in blocks]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_printed_source_matches_the_library(path):
    for text in _printed_sources(path):
        if ELISION not in text:  # (a printout with lines left out is checked by runs)
            for definition in _definitions(text):
                assert definition in SOURCE, (
                    f"{path.name} shows source that is not current (re-run the course "
                    "notebooks, then `scripts/make_learner_notebooks.py --execute --rerun`):\n"
                    + definition)
        for excerpt in _excerpts(text):
            assert excerpt in SOURCE, (
                f"{path.name} shows source that is not current (re-run the course notebooks, "
                "then `scripts/make_learner_notebooks.py --execute --rerun`):\n" + excerpt)
