"""Give the learner a folder of their own lessons: what `make lab` opens.

Copies each learner notebook (notebooks/learner/) into the folder given (`my-lessons/`,
which git ignores) unless a copy is already there: a learner's answers are never
overwritten, and the repository's notebooks are never edited by working through the
course (JupyterLab writes the running Python's version into a notebook it opens, and a
learner's answers are saved into it). To start a lesson afresh, delete its copy.

Usage: python scripts/lab_workspace.py my-lessons
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LEARNER = REPO / "notebooks" / "learner"


def copy_lessons(folder: Path, source: Path = LEARNER) -> list[str]:
    """Copy the lessons `folder` lacks from `source`; return the names copied."""
    folder.mkdir(parents=True, exist_ok=True)
    copied = []
    for lesson in sorted(source.glob("*.ipynb")):
        target = folder / lesson.name
        if not target.exists():
            shutil.copyfile(lesson, target)
            copied.append(lesson.name)
    return copied


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    folder = Path(argv[0])
    copied = copy_lessons(folder)
    kept = len(list(folder.glob("*.ipynb"))) - len(copied)
    print(f"lab: your lessons are in {folder}/ ({len(copied)} copied from "
          f"notebooks/learner/, {kept} already yours, kept as they are)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
