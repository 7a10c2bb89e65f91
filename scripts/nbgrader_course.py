"""Grade the course's exercises with nbgrader.

For nbgrader, each exercise of a lesson is two kinds of cell:

* the **exercise cell** (the solution between ``### BEGIN SOLUTION`` markers, then the
  self-study ``check("name", answer)``) is an "autograded answer" cell: nbgrader
  metadata ``solution: true`` with a ``grade_id`` of ``<name>-answer``;
* right after it, for each ``check`` in it, a locked **"autograder tests"** cell worth
  ``POINTS``, whose ``grade_id`` is the exercise's name::

      # nbgrader grades exercise "l3_add_twice" here
      ### BEGIN HIDDEN TESTS
      import importlib.util as _u
      _s = _u.spec_from_file_location("minigrad_grader", _u.find_spec("widgets")
                                      .submodule_search_locations[0] + "/_grader.py")
      _g = _u.module_from_spec(_s); _s.loader.exec_module(_g)
      _g.grade("l3_add_twice", answer_3_2, expected=True)
      ### END HIDDEN TESTS

  The cell loads ``widgets/_grader.py`` by its path (a module the learner's kernel never
  imported) and grades with a private copy of the checking code, so a cell the learner
  added cannot change what it computes (see that module). It holds the answer of a value
  or multiple-choice exercise itself (``expected``, computed here by running the
  exercise's scenario on minigrad): ``check`` stays stale-proof, and a lesson whose
  answers changed is reported by ``check`` until ``annotate`` writes them again.
  ``grade`` raises for the learner stub as well as for a wrong answer, so an untouched
  exercise scores zero. The test is hidden: a learner version
  (``make learner`` or nbgrader's ``generate_assignment``) keeps only the comment, so
  "Run All" in a learner notebook still goes past exercises not yet done, with
  ``check`` printing "not yet solved" for each.

nbgrader's own ``generate_assignment`` replaces every solution region by one fixed stub
(a ``raise``), which at the top of a cell would stop "Run All" at the first prediction.
``configure`` (called by the course directory's ``nbgrader_config.py``) swaps its
ClearSolutions step for one that writes the course's stubs, those of
``make_learner_notebooks.py``: the learner versions nbgrader releases are the ones in
``notebooks/learner/``.

Usage::

    python scripts/nbgrader_course.py annotate   # (re)write every lesson's nbgrader cells
    python scripts/nbgrader_course.py check      # fail if they are missing or out of date
    python scripts/nbgrader_course.py course DIR [LESSON ...]   # an nbgrader course folder

``annotate`` edits the lessons' cells and metadata only: stored outputs stay as they
are (a new grade cell has none until the lesson is run again). ``course`` writes
``DIR/nbgrader_config.py`` and ``DIR/source/<lesson>/<lesson>.ipynb`` for each lesson
(all of them, or those named by number or name): one nbgrader assignment per lesson.
Exit status: 0 ok, 1 lessons out of date (``check``), 2 a lesson cannot be annotated.
"""

from __future__ import annotations

import argparse
import copy
import math
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
from make_learner_notebooks import (
    BEGIN_RE,
    VOLATILE_NOTEBOOK_METADATA,
    render,
    strip_solutions,
)

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
LESSON_GLOB = "[0-9][0-9]_*.ipynb"
POINTS = 1
SCHEMA_VERSION = 3  # nbgrader 0.9's cell metadata schema
# seconds one cell may run when nbgrader autogrades (nbgrader's default is 30)
CELL_TIMEOUT_S = 600

CHECK_RE = re.compile(r'^check\("(?P<name>[a-z0-9_]+)", (?P<answer>.+)\)[ \t]*$', re.M)
# The course site (myst-nb) leaves the grading cells out of the lesson pages.
SITE_TAGS = ["remove-cell"]


class AnnotationError(ValueError):
    """A lesson's exercise cell cannot be given nbgrader cells."""


def is_exercise_cell(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and any(
        BEGIN_RE.match(line) for line in cell.source.split("\n"))


def is_grade_cell(cell: nbformat.NotebookNode) -> bool:
    return bool(cell.metadata.get("nbgrader", {}).get("grade"))


def checks(cell: nbformat.NotebookNode, where: str) -> list[tuple[str, str]]:
    """(exercise name, answer expression) of every ``check(...)`` line of an exercise."""
    found = [(m["name"], m["answer"]) for m in CHECK_RE.finditer(cell.source)]
    if not found:
        raise AnnotationError(
            f'{where}: an exercise cell must end with check("name", answer) lines')
    return found


def answer_metadata(name: str) -> dict[str, Any]:
    """nbgrader's metadata of an "autograded answer" cell."""
    return {"grade": False, "grade_id": f"{name}-answer", "locked": False,
            "schema_version": SCHEMA_VERSION, "solution": True, "task": False}


# the grade cell's own loading of widgets/_grader.py (see the module docstring)
LOAD_GRADER = [
    "import importlib.util as _u",
    '_s = _u.spec_from_file_location("minigrad_grader", _u.find_spec("widgets")'
    '.submodule_search_locations[0] + "/_grader.py")',
    "_g = _u.module_from_spec(_s); _s.loader.exec_module(_g)",
]


def key_literal(value: Any) -> str:
    """`value` (an exercise's answer) as Python source for a grade cell: literals, and a
    tensor as ``_g.tensor(values, "dtype")``."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        dtype = str(value.dtype).rsplit(".", 1)[-1]
        return f"_g.tensor({key_literal(value.detach().numpy().tolist())}, {dtype!r})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(key_literal(v) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, (set, frozenset)):
        items = sorted(key_literal(v) for v in value)
        return "{" + ", ".join(items) + "}" if items else "set()"
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # a numpy scalar
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    raise AnnotationError(f"an answer of type {type(value).__name__} cannot be written "
                          "into a grade cell")


def answer_key(name: str) -> str | None:
    """What the grade cell of exercise `name` holds: the answer of a value exercise or
    the right option of a multiple-choice question (as source); None for a coding
    exercise (its checker runs the learner's function)."""
    from widgets.exercises import EXERCISES, SEALED, expected_answer

    if SEALED:
        raise AnnotationError("this Python's widgets is a built package, whose answer key is "
                              "sealed: annotate from the course's checkout (make install)")
    exercise = EXERCISES[name]
    if exercise.kind == "choice":
        return repr(exercise.correct)
    if exercise.kind == "code":
        return None
    return key_literal(expected_answer(name))


def grade_cell(name: str, answer: str, key: str | None = None) -> nbformat.NotebookNode:
    """The locked "autograder tests" cell of exercise `name`; `key` is what
    ``answer_key`` gives."""
    call = f'_g.grade("{name}", {answer}' + (f", expected={key})" if key else ")")
    source = "\n".join([
        f'# nbgrader grades exercise "{name}" here',
        "### BEGIN HIDDEN TESTS",
        *LOAD_GRADER,
        call,
        "### END HIDDEN TESTS",
    ])
    cell = nbformat.v4.new_code_cell(source)
    cell["id"] = f"nbgrader-{name}"
    cell.metadata = nbformat.from_dict({
        "nbgrader": {"grade": True, "grade_id": name, "locked": True, "points": POINTS,
                     "schema_version": SCHEMA_VERSION, "solution": False, "task": False},
        "tags": list(SITE_TAGS),
    })
    return cell


def annotate(nb: nbformat.NotebookNode, origin: str,
             key_of: Callable[[str], str | None] = answer_key) -> nbformat.NotebookNode:
    """`nb` with nbgrader metadata on every exercise cell and its grade cells after it
    (each holding ``key_of(exercise name)``).

    Grade cells that are already right are kept as they are (with their outputs); stale
    ones (of a renamed or removed exercise, or whose answer changed) go. Other cells are
    not touched."""
    nb = copy.deepcopy(nb)
    existing = {c.get("id"): c for c in nb.cells if is_grade_cell(c)}
    cells = []
    for index, cell in enumerate(nb.cells):
        if is_grade_cell(cell):
            continue
        cells.append(cell)
        if not is_exercise_cell(cell):
            continue
        found = checks(cell, f"{origin}: cell {index}")
        cell.metadata["nbgrader"] = answer_metadata(found[0][0])
        for name, answer in found:
            fresh = grade_cell(name, answer, key_of(name))
            old = existing.get(fresh["id"])
            same = (old is not None and old.source == fresh.source
                    and old.metadata == fresh.metadata)
            cells.append(old if same else fresh)
    nb.cells = cells
    return nb


def lessons(notebooks: Path = NOTEBOOKS) -> list[Path]:
    return sorted(notebooks.glob(LESSON_GLOB))


def _without_outputs(nb: nbformat.NotebookNode) -> list[tuple[str, str, dict]]:
    return [(c.cell_type, c.source, {k: v for k, v in c.metadata.items() if k != "execution"})
            for c in nb.cells]


def stale_lessons(notebooks: Path = NOTEBOOKS) -> list[Path]:
    """The lessons whose nbgrader cells are missing or out of date."""
    stale = []
    for path in lessons(notebooks):
        nb = nbformat.read(path, as_version=4)
        if _without_outputs(annotate(nb, path.name)) != _without_outputs(nb):
            stale.append(path)
    return stale


# -- an nbgrader course directory ---------------------------------------------------------

CONFIG_TEMPLATE = '''\
# nbgrader's configuration for the minigrad course (written by scripts/nbgrader_course.py).
# It makes generate_assignment write the course's learner stubs (see that script).
import sys

sys.path.insert(0, {scripts!r})
import nbgrader_course  # noqa: E402

nbgrader_course.configure(get_config())  # noqa: F821 (nbgrader defines get_config)
'''


def configure(c: Any) -> None:
    """Configure nbgrader (`c`, the config of an ``nbgrader_config.py``) for the course:
    generate_assignment writes the course's stubs and drops saved widget state, as
    make_learner_notebooks.py does; autograde gives a cell time to run."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.preprocessors import ClearOutput, ClearSolutions, NbGraderPreprocessor

    class CourseStubs(ClearSolutions):
        """ClearSolutions with the stubs of make_learner_notebooks.py: a prediction's
        names are set to NotImplemented (so Run All goes on), a function body raises
        NotImplementedError."""

        def _replace_solution_region(self, cell, language):
            found = any(BEGIN_RE.match(line) for line in cell.source.split("\n"))
            cell.source = strip_solutions(cell.source, cell_type=cell.cell_type,
                                          where=f"cell {cell.get('id', '')}",
                                          remove_hidden_tests=False)
            return found

    class ClearWidgetState(NbGraderPreprocessor):
        """Drops the widget state a notebook saved: an output too, which can hold the
        values of a solution."""

        def preprocess(self, nb, resources):
            for key in VOLATILE_NOTEBOOK_METADATA:
                nb.metadata.pop(key, None)
            return nb, resources

    steps = []
    for step in GenerateAssignment.class_traits()["preprocessors"].default():
        steps.append(CourseStubs if step is ClearSolutions else step)
        if step is ClearOutput:
            steps.append(ClearWidgetState)
    c.GenerateAssignment.preprocessors = steps
    c.Execute.timeout = CELL_TIMEOUT_S


def _pick(wanted: list[str], notebooks: Path) -> list[Path]:
    every = lessons(notebooks)
    if not wanted:
        return every
    picked = []
    for want in wanted:
        match = [p for p in every if p.stem == want or p.stem.split("_")[0] == want.zfill(2)]
        if not match:
            raise SystemExit(f"no lesson {want!r}; lessons: "
                             + ", ".join(p.stem for p in every))
        picked += match
    return picked


def make_course(folder: Path, wanted: list[str] | None = None,
                notebooks: Path = NOTEBOOKS) -> list[str]:
    """Write an nbgrader course directory at `folder`: its configuration and one
    assignment per lesson (named after the lesson's file). Returns the assignment names."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(
        CONFIG_TEMPLATE.format(scripts=str(Path(__file__).resolve().parent)),
        encoding="utf-8")
    names = []
    for lesson in _pick(wanted or [], notebooks):
        target = folder / "source" / lesson.stem
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lesson, target / lesson.name)
        names.append(lesson.stem)
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("annotate", help="(re)write the nbgrader cells of every lesson")
    sub.add_parser("check", help="fail if a lesson's nbgrader cells are out of date")
    course = sub.add_parser("course", help="write an nbgrader course directory")
    course.add_argument("folder", type=Path)
    course.add_argument("lessons", nargs="*", help="lesson numbers or names (default: all)")
    args = parser.parse_args(argv)

    try:
        if args.command == "check":
            stale = stale_lessons()
            for path in stale:
                print(f"{path.relative_to(REPO)}: nbgrader cells missing or out of date",
                      file=sys.stderr)
            if stale:
                print("Run `python scripts/nbgrader_course.py annotate`, then "
                      "`make learner`.", file=sys.stderr)
                return 1
            print(f"nbgrader cells up to date ({len(lessons())} lessons)")
            return 0
        if args.command == "annotate":
            for path in lessons():
                nb = nbformat.read(path, as_version=4)
                new = annotate(nb, path.name)
                if _without_outputs(new) != _without_outputs(nb):
                    path.write_text(render(new), encoding="utf-8")
                    print(f"updated {path.relative_to(REPO)}")
            return 0
    except AnnotationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    names = make_course(args.folder.resolve(), args.lessons)
    print(f"nbgrader course in {args.folder}: assignments {', '.join(names)}\n"
          f"next: cd {args.folder} && nbgrader generate_assignment '*'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
