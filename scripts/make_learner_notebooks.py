"""Write the learner versions of the course notebooks.

The course notebooks in ``notebooks/`` carry their exercise solutions between marker
lines, nbgrader style::

    def grad_of_square(x):
        ### BEGIN SOLUTION
        return 2 * x
        ### END SOLUTION

This script writes ``notebooks/learner/<same name>.ipynb`` for every course notebook,
with each solution block replaced by a one-line stub at the marker's indentation and
with every output cleared (so no solution leaks through an output either):

* ``### BEGIN SOLUTION`` becomes
  ``raise NotImplementedError("not yet solved: write your code here")``.
  Use it inside functions: the exercise's checker calls the function, catches the
  ``NotImplementedError`` and prints "not yet solved" instead of a traceback.
* ``### BEGIN SOLUTION: answer, grads`` (a comma-separated list of names) becomes
  one line per name, ``answer = NotImplemented  # not yet solved: write your code here``.
  Use it for top-level answers: the checker prints "not yet solved" for any value
  that ``is NotImplemented``.

Either way ``check`` *prints* "Not yet solved" and returns: "Run All" goes through the
whole lesson (a learner can answer the exercises in any order), and only a wrong
answer stops it, with a hint.

Solution blocks in markdown cells become ``*Not yet solved: write your answer here.*``.

Code between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` lines is removed
(no stub). The lessons use it in the nbgrader grade cell that follows each exercise
(``scripts/nbgrader_course.py``): the learner sees only the cell's comment, and "Run
All" is not stopped by a test of an exercise not yet done. These are the rules of
nbgrader's own ``generate_assignment`` (which the course configures with these stubs),
so both make the same learner notebooks.

Learner notebooks are stored **without outputs**, as nbgrader's release stores them: an
output would give away what a "predict before running" exercise asks, since a lesson
prints the answer a few cells after the question. A learner sees each output when they
run its cell.

Usage::

    python scripts/make_learner_notebooks.py           # (re)write notebooks/learner/
    python scripts/make_learner_notebooks.py --check   # fail if they are out of date
    python scripts/make_learner_notebooks.py --execute # and run them, storing nothing

With ``--execute`` (what ``make learner`` uses; with ``--check`` too) every learner
notebook is also run top to bottom in a fresh kernel, in memory: the run must reach the
last cell without an error, with "Not yet solved" at each exercise. Nothing of the run
is written (``tests/test_learner_runs.py`` makes the same run in the test suite).

Exit status: 0 ok, 1 learner notebooks out of date (``--check``) or a run failed
(``--execute``), 2 malformed markers.
The output is deterministic (sorted JSON keys, cell ids kept or derived from the
notebook's name and the cell's position), so ``--check`` compares bytes.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
DEFAULT_NOTEBOOKS = REPO / "notebooks"
LEARNER_DIRNAME = "learner"

STUB_MESSAGE = "not yet solved: write your code here"
RAISE_STUB = f'raise NotImplementedError("{STUB_MESSAGE}")'
NAME_STUB = "{name} = NotImplemented  # " + STUB_MESSAGE
MARKDOWN_STUB = "*Not yet solved: write your answer here.*"

BEGIN_RE = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION(?::(?P<names>.*))?[ \t\r]*$")
END_RE = re.compile(r"^[ \t]*### END SOLUTION[ \t\r]*$")
HIDDEN_BEGIN_RE = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[ \t\r]*$")
HIDDEN_END_RE = re.compile(r"^[ \t]*### END HIDDEN TESTS[ \t\r]*$")
# Anything that looks like a marker but does not match exactly is an error: a typo in
# a marker must not leak a solution (or a hidden test) into the learner notebook.
LOOSE_MARKER_RE = re.compile(r"(BEGIN|END)\s+(SOLUTION|HIDDEN\s+TESTS)", re.IGNORECASE)
SOLUTION, HIDDEN_TESTS = "SOLUTION", "HIDDEN TESTS"
MALFORMED_HINT = {
    SOLUTION: "write exactly '### BEGIN SOLUTION' (optionally ': name, ...') or "
              "'### END SOLUTION' on a line of its own",
    HIDDEN_TESTS: "write exactly '### BEGIN HIDDEN TESTS' or '### END HIDDEN TESTS' on a "
                  "line of its own",
}

# Per-cell metadata that only records a past execution or a UI state.
VOLATILE_CELL_METADATA = ("execution", "ExecuteTime", "collapsed", "scrolled")
# Notebook metadata that holds saved widget state (it would carry solution values).
VOLATILE_NOTEBOOK_METADATA = ("widgets",)


class SolutionMarkerError(ValueError):
    """A notebook's solution markers are unbalanced or malformed."""


@dataclass(frozen=True)
class Drift:
    path: Path
    reason: str


def _stub_lines(indent: str, names: str | None, cell_type: str, where: str) -> list[str]:
    if cell_type == "markdown":
        return [indent + MARKDOWN_STUB]
    if names is None:
        return [indent + RAISE_STUB]
    parsed = [n.strip() for n in names.split(",")]
    bad = [n for n in parsed if not n.isidentifier()]
    if not parsed or bad:
        raise SolutionMarkerError(
            f"{where}: '### BEGIN SOLUTION: {names.strip()}' must list Python names "
            f"separated by commas (bad: {', '.join(repr(b) for b in bad) or 'none given'})"
        )
    return [indent + NAME_STUB.format(name=n) for n in parsed]


def _marker(line: str) -> tuple[str, str] | None:
    """("BEGIN" or "END", block kind) if `line` is an exact marker line, else None."""
    for kind, begin, end in ((SOLUTION, BEGIN_RE, END_RE),
                             (HIDDEN_TESTS, HIDDEN_BEGIN_RE, HIDDEN_END_RE)):
        if begin.match(line):
            return "BEGIN", kind
        if end.match(line):
            return "END", kind
    return None


def strip_solutions(source: str, *, cell_type: str = "code", where: str = "cell",
                    remove_hidden_tests: bool = True) -> str:
    """Return ``source`` with every solution block replaced by its stub and every hidden
    test block removed (kept, markers and all, with ``remove_hidden_tests=False``: nbgrader
    stores a grade cell's hidden tests after clearing the solutions, and removes them later).

    Raises SolutionMarkerError (naming ``where`` and the line) for a BEGIN without END,
    an END without BEGIN, nested blocks, hidden tests outside a code cell, or a line that
    looks like a marker but is not one.
    """
    def copied(kind: str) -> bool:  # a block kept as it is, markers and all
        return kind == HIDDEN_TESTS and not remove_hidden_tests

    out: list[str] = []
    open_block: tuple[str, int] | None = None  # (kind, line number of its BEGIN)
    lines = source.split("\n")
    for line_no, line in enumerate(lines, start=1):
        marker = _marker(line)
        loc = f"{where}, line {line_no}"
        if marker is not None and marker[0] == "BEGIN":
            kind = marker[1]
            if open_block is not None:
                outer, at = open_block
                raise SolutionMarkerError(
                    f"{loc}: '### BEGIN {kind}' inside the block opened at line {at} "
                    f"(blocks cannot nest; is an '### END {outer}' missing?)"
                )
            if kind == HIDDEN_TESTS and cell_type != "code":
                raise SolutionMarkerError(f"{loc}: hidden tests belong in a code cell")
            open_block = (kind, line_no)
            if copied(kind):
                out.append(line)
            elif kind == SOLUTION:
                begin = BEGIN_RE.match(line)
                out.extend(_stub_lines(begin["indent"], begin["names"], cell_type, loc))
        elif marker is not None:
            kind = marker[1]
            if open_block is None or open_block[0] != kind:
                raise SolutionMarkerError(
                    f"{loc}: '### END {kind}' without a matching '### BEGIN {kind}'"
                )
            if copied(kind):
                out.append(line)
            open_block = None
        elif loose := LOOSE_MARKER_RE.search(line):
            kind = SOLUTION if loose[2].upper() == SOLUTION else HIDDEN_TESTS
            what = "solution" if kind == SOLUTION else "hidden-tests"
            raise SolutionMarkerError(
                f"{loc}: malformed {what} marker {line.strip()!r}; {MALFORMED_HINT[kind]}"
            )
        elif open_block is None or copied(open_block[0]):
            out.append(line)
    if open_block is not None:
        kind, at = open_block
        raise SolutionMarkerError(
            f"{where}, line {at}: '### BEGIN {kind}' is never closed by '### END {kind}'"
        )
    return "\n".join(out)


def _stable_id(origin: str, index: int) -> str:
    return hashlib.sha1(f"{origin}:{index}".encode()).hexdigest()[:12]


def make_learner(nb: nbformat.NotebookNode, origin: str) -> nbformat.NotebookNode:
    """Return the learner version of notebook ``nb`` (``origin`` names it in messages)."""
    nb = copy.deepcopy(nb)
    for key in VOLATILE_NOTEBOOK_METADATA:
        nb.metadata.pop(key, None)
    nb.metadata["minigrad_course"] = {
        "generated_from": origin,
        "note": "learner version; edit the course notebook and run `make learner`",
    }
    for index, cell in enumerate(nb.cells):
        where = f"{origin}: cell {index}"
        source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        if cell.cell_type in ("code", "markdown"):
            cell.source = strip_solutions(source, cell_type=cell.cell_type, where=where)
        elif LOOSE_MARKER_RE.search(source):
            raise SolutionMarkerError(
                f"{where}: solution and hidden-test markers are only supported in code "
                "and markdown cells"
            )
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        if not cell.get("id"):
            cell["id"] = _stable_id(origin, index)
    nb.nbformat, nb.nbformat_minor = 4, max(int(nb.get("nbformat_minor", 5)), 5)
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    """Serialize deterministically (sorted keys, one-space indent, final newline)."""
    text = nbformat.writes(nb, version=4)
    return text if text.endswith("\n") else text + "\n"


def course_notebooks(notebooks: Path, learner: Path) -> list[Path]:
    if not notebooks.is_dir():
        return []
    found = []
    for path in notebooks.rglob("*.ipynb"):
        if ".ipynb_checkpoints" in path.parts or path.is_relative_to(learner):
            continue
        found.append(path)
    return sorted(found)


def build(notebooks: Path, learner: Path) -> dict[Path, str]:
    """Map each learner notebook path to its expected text."""
    expected: dict[Path, str] = {}
    for path in course_notebooks(notebooks, learner):
        rel = path.relative_to(notebooks)
        nb = nbformat.read(path, as_version=4)
        expected[learner / rel] = render(make_learner(nb, rel.as_posix()))
    return expected


NOT_SOLVED = "Not yet solved: exercise '{name}'."


def run_problems(path: Path) -> list[str]:
    """Run the learner notebook at `path` top to bottom in a fresh kernel, in memory
    (nothing is written), and say what went wrong: a cell that raised, or an exercise
    whose check did not print "Not yet solved"."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    # The stored run must not depend on (or change) this machine's course progress,
    # nor on whether its numba cache is empty (minigrad's one-line compile notice).
    saved = os.environ.get("MINIGRAD_COURSE_PROGRESS")
    os.environ["MINIGRAD_COURSE_PROGRESS"] = "off"
    os.environ["MINIGRAD_COMPILE_NOTICE"] = "off"
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    except CellExecutionError as exc:
        return [f"a cell raised: {str(exc).strip().splitlines()[-1]}"]
    finally:
        if saved is None:
            os.environ.pop("MINIGRAD_COURSE_PROGRESS", None)
        else:
            os.environ["MINIGRAD_COURSE_PROGRESS"] = saved
    problems = []
    for cell in nb.cells:
        if cell.cell_type == "code" and 'check("' in cell.source:
            name = cell.source.split('check("', 1)[1].split('"', 1)[0]
            said = "".join(o.get("text", "") for o in cell.outputs
                           if o.output_type == "stream")
            if NOT_SOLVED.format(name=name) not in said:
                problems.append(f"exercise {name!r} did not say 'Not yet solved'")
    return problems


def find_drift(expected: dict[Path, str], learner: Path) -> list[Drift]:
    drift = []
    for path, text in expected.items():
        if not path.exists():
            drift.append(Drift(path, "missing"))
        elif path.read_text(encoding="utf-8") != text:
            drift.append(Drift(path, "differs from its course notebook"))
    if learner.is_dir():
        for path in sorted(learner.rglob("*.ipynb")):
            if ".ipynb_checkpoints" not in path.parts and path not in expected:
                drift.append(Drift(path, "has no course notebook (stale)"))
    return sorted(drift, key=lambda d: d.path)


def write(expected: dict[Path, str], learner: Path) -> list[Path]:
    written = []
    stale = {d.path for d in find_drift(expected, learner)}
    for path, text in expected.items():
        if path in stale:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            written.append(path)
    if learner.is_dir():
        for path in sorted(learner.rglob("*.ipynb")):
            if ".ipynb_checkpoints" not in path.parts and path not in expected:
                path.unlink()
                written.append(path)
    return written


def _show(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; fail if the learner notebooks are out of date")
    parser.add_argument("--notebooks", type=Path, default=DEFAULT_NOTEBOOKS,
                        help="folder of course notebooks (default: notebooks/)")
    parser.add_argument("--execute", action="store_true",
                        help="also run every learner notebook top to bottom in a fresh "
                             "kernel, storing nothing, and fail if a run goes wrong")
    parser.add_argument("--rerun", action="store_true",
                        help="accepted for old scripts: --execute always runs them all")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for learner notebooks (default: <notebooks>/learner)")
    args = parser.parse_args(argv)
    notebooks = args.notebooks.resolve()
    learner = (args.out or notebooks / LEARNER_DIRNAME).resolve()

    try:
        expected = build(notebooks, learner)
    except SolutionMarkerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    if args.check:
        drift = find_drift(expected, learner)
        if drift:
            print("Learner notebooks are out of date:", file=sys.stderr)
            for d in drift:
                print(f"  {_show(d.path)}: {d.reason}", file=sys.stderr)
            print("Run `make learner` and commit the result.", file=sys.stderr)
            return 1
        print(f"learner notebooks up to date ({len(expected)} checked)")
    else:
        changed = write(expected, learner)
        for path in changed:
            print(f"updated {_show(path)}")
        print(f"{len(expected)} learner notebook(s), {len(changed)} changed")
    if args.execute:
        return _run_all(sorted(expected))
    return 0


def _run_all(paths: list[Path]) -> int:
    failed = 0
    for path in paths:
        problems = run_problems(path)
        for problem in problems:
            print(f"  {_show(path)}: {problem}", file=sys.stderr)
        failed += bool(problems)
    if failed:
        print(f"{failed} learner notebook(s) did not run to the end cleanly", file=sys.stderr)
        return 1
    print(f"{len(paths)} learner notebook(s) ran to the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
