"""Record which kernels each lesson compiles, in order: `minigrad/kernels/course_kernels.json`.

    python scripts/record_course_kernels.py [--lessons 3 7]

runs each lesson's code cells with an empty numba cache (`benchmarks.coldstart`) and
keeps the kernels the lesson itself calls, in the order they first compile, with their
argument types, and a digest of the lesson's first cell (how a kernel that is not
told the notebook's name recognises the lesson). `minigrad.kernels.ahead` compiles them
on a second core while a lesson runs on a fresh runtime. Run it again after a lesson
or a kernel changes which kernels run (about 15 s a lesson); a list out of date only
makes the helper less useful.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from benchmarks.coldstart import compiles, lesson_path  # noqa: E402
from minigrad.kernels.ahead import COURSE_KERNELS, fingerprint  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", nargs="+", type=int, default=list(range(13)))
    args = parser.parse_args(argv)
    recorded = (json.loads(COURSE_KERNELS.read_text()) if COURSE_KERNELS.exists()
                else {"lessons": {}})
    first_cells = recorded.setdefault("first_cells", {})
    for n in args.lessons:
        order = compiles(lesson_path(n))["order"]
        recorded["lessons"][f"{n:02d}"] = order
        first = next(c for c in nbformat.read(lesson_path(n), as_version=4).cells
                     if c.cell_type == "code")
        first_cells[f"{n:02d}"] = fingerprint(first.source)
        print(f"lesson {n:02d}: {len(order)} kernels", file=sys.stderr)
    recorded["lessons"] = dict(sorted(recorded["lessons"].items()))
    lines = ['{"first_cells": ' + json.dumps(dict(sorted(first_cells.items()))) + ",",
             '"lessons": {']
    for i, (lesson, order) in enumerate(recorded["lessons"].items()):
        rows = ",\n".join(f"  {json.dumps(k)}" for k in order)
        end = "," if i < len(recorded["lessons"]) - 1 else ""
        lines.append(f'"{lesson}": [\n{rows}\n]{end}')
    lines.append("}}")
    COURSE_KERNELS.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
