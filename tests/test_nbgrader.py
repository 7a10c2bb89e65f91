"""Grading the course with nbgrader (scripts/nbgrader_course.py).

The lessons carry nbgrader cell metadata: each exercise cell is an "autograded answer"
and is followed by one locked grade cell per exercise, whose test is hidden from
learners. The first tests check that metadata without nbgrader. The round trip runs the
real nbgrader (the `nbgrader` extra) on a course directory made from the lessons:

* ``generate_assignment`` must make learner versions *equivalent* to
  ``notebooks/learner/``: the same cells (type, id and source, so the same stubs and no
  hidden test left), the same nbgrader cells, no outputs and no saved widget state;
* ``autograde`` must give every grade cell of the solved lessons its points, and every
  grade cell of the learner notebooks zero, because of the stub (``NotSolvedYet``), while
  the rest of each learner notebook runs without an error.

Autograding runs a lesson twice (solved and learner): the two run side by side, in two
copies of the course directory. It runs three lessons, one of each kind of exercise
(values and a "why" choice in lesson 0, a Function written by the learner in lesson 8,
a function checked with part of minigrad switched off in lesson 11): running every
cell of every lesson again would double the test time for no new check, since nbval
already runs each solved lesson's grade cells and `test_learner_runs.py` each learner
notebook past its unsolved exercises.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LEARNER = NOTEBOOKS / "learner"
sys.path.insert(0, str(ROOT / "scripts"))
import nbgrader_course  # noqa: E402

LESSONS = nbgrader_course.lessons()
AUTOGRADED = [p for p in LESSONS if p.stem.split("_")[0] in ("00", "08", "11")]
STUDENTS = ("solved", "learner")
NBGRADER_TIMEOUT_S = 1800


def nbgrader_cells(nb) -> list[tuple[str, bool, bool]]:
    """(grade_id, solution, grade) of every nbgrader cell, in order."""
    return [(m["grade_id"], m["solution"], m["grade"]) for c in nb.cells
            if (m := c.metadata.get("nbgrader"))]


def exercises_checked(nb) -> list[str]:
    return [m["name"] for c in nb.cells if c.cell_type == "code"
            for m in nbgrader_course.CHECK_RE.finditer(c.source)
            if nbgrader_course.is_exercise_cell(c)]


# -- the cells, without nbgrader -----------------------------------------------------------


def test_every_lesson_has_its_nbgrader_cells():
    assert nbgrader_course.stale_lessons() == []
    for path in LESSONS:
        nb = nbformat.read(path, as_version=4)
        names = exercises_checked(nb)
        assert names, path.name
        graded = [gid for gid, solution, grade in nbgrader_cells(nb) if grade]
        assert graded == names, path.name
        for i, cell in enumerate(nb.cells):
            if nbgrader_course.is_grade_cell(cell):
                assert "grade(" in cell.source and "### BEGIN HIDDEN TESTS" in cell.source
                before = nb.cells[i - 1]
                assert nbgrader_course.is_exercise_cell(before) or (
                    nbgrader_course.is_grade_cell(before)), (path.name, i)


def test_every_exercise_is_graded_once_in_the_course():
    from widgets.exercises import EXERCISES

    graded = [gid for path in LESSONS
              for gid, _, grade in nbgrader_cells(nbformat.read(path, as_version=4)) if grade]
    assert sorted(graded) == sorted(EXERCISES)


def _exercise_notebook() -> nbformat.NotebookNode:
    solved = new_code_cell('### BEGIN SOLUTION: answer_1\nanswer_1 = 2\n### END SOLUTION\n'
                           'check("l1_a", answer_1)\ncheck("l1_b", answer_1)',
                           execution_count=3)
    solved.outputs = [new_output("stream", name="stdout", text="Correct!\n")]
    stale = nbgrader_course.grade_cell("l1_gone", "x")
    return new_notebook(cells=[new_markdown_cell("# Lesson"), solved, stale,
                               new_code_cell("print(1)", execution_count=4)])


def _keys(name: str) -> str | None:
    return {"l1_a": "2", "l1_b": "'b'"}.get(name)


def test_annotate_adds_grade_cells_keeps_outputs_and_drops_stale_ones():
    nb = nbgrader_course.annotate(_exercise_notebook(), "lesson.ipynb", _keys)
    assert nbgrader_cells(nb) == [("l1_a-answer", True, False), ("l1_a", False, True),
                                  ("l1_b", False, True)]
    assert [c.cell_type for c in nb.cells] == ["markdown", "code", "code", "code", "code"]
    exercise, grade_a = nb.cells[1], nb.cells[2]
    assert exercise.outputs[0].text == "Correct!\n" and exercise.execution_count == 3
    # the cell loads the grader by its path and holds the answer
    assert grade_a.source.splitlines()[1:] == [
        "### BEGIN HIDDEN TESTS", *nbgrader_course.LOAD_GRADER,
        '_g.grade("l1_a", answer_1, expected=2)', "### END HIDDEN TESTS"]
    assert nb.cells[3].source.splitlines()[-2] == '_g.grade("l1_b", answer_1, expected=\'b\')'

    assert grade_a.metadata["nbgrader"]["locked"] and grade_a.metadata["nbgrader"]["points"] == 1
    assert nb.cells[4].source == "print(1)"
    # a grade cell already right stays as it is, with what a run stored in it
    grade_a.outputs, grade_a.execution_count = [new_output("stream", text="ran\n")], 4
    again = nbgrader_course.annotate(nb, "lesson.ipynb", _keys)
    assert again.cells[2].outputs == grade_a.outputs and again.cells[2].execution_count == 4
    assert [c.source for c in again.cells] == [c.source for c in nb.cells]
    # an answer that changed makes the grade cell stale: it is written again
    changed = nbgrader_course.annotate(nb, "lesson.ipynb", lambda n: "3")
    assert changed.cells[2].source.splitlines()[-2].endswith("expected=3)")
    assert changed.cells[2].outputs == []


def test_annotate_refuses_an_exercise_without_its_check():
    nb = new_notebook(cells=[new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION")])
    with pytest.raises(nbgrader_course.AnnotationError, match=r"lesson.ipynb: cell 0: .*check"):
        nbgrader_course.annotate(nb, "lesson.ipynb", _keys)


def test_a_course_directory_has_the_config_and_one_assignment_per_lesson(tmp_path):
    names = nbgrader_course.make_course(tmp_path, ["1", "03_retain_graph"])
    assert names == ["01_backward_graph", "03_retain_graph"]
    for name in names:
        assert (tmp_path / "source" / name / f"{name}.ipynb").read_bytes() == (
            NOTEBOOKS / f"{name}.ipynb").read_bytes()
    config = (tmp_path / "nbgrader_config.py").read_text()
    assert str(ROOT / "scripts") in config and "configure(get_config())" in config
    with pytest.raises(SystemExit, match="no lesson '42'"):
        nbgrader_course.make_course(tmp_path, ["42"])


# -- the round trip through the real nbgrader ------------------------------------------------


def test_the_extra_pins_nbgrader_with_a_jupyterlab_that_loads_its_extension(nbgrader):
    import jupyterlab
    import notebook

    extra = (ROOT / "pyproject.toml").read_text().split("\nnbgrader = [", 1)[1].split("]")[0]
    assert f'"nbgrader=={nbgrader.__version__}"' in extra
    assert f'"jupyterlab=={jupyterlab.__version__}"' in extra
    assert f'"notebook=={notebook.__version__}"' in extra
    listed = subprocess.run([sys.executable, "-m", "jupyter", "labextension", "list"],
                            capture_output=True, text=True, timeout=120)
    text = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)
    # a JupyterLab that refuses the extension lists it with a reason instead of "OK"
    assert re.search(rf"@jupyter/nbgrader v{nbgrader.__version__} +enabled +OK", text), text


@dataclass
class RoundTrip:
    course: dict[str, Path]  # student -> the course directory that graded them
    scores: dict[str, dict[str, dict[str, tuple[float, float]]]]  # student, lesson, cell


def _nbgrader(args: list[str], cwd: Path, log: Path) -> subprocess.Popen:
    """Start the nbgrader command line in course directory `cwd`."""
    env = dict(os.environ, MINIGRAD_COURSE_PROGRESS="off")
    # the kernels import this checkout's minigrad and widgets
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # nbgrader runs `alembic` (installed beside it) to set up its gradebook
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.Popen([sys.executable, "-m", "nbgrader", *args, "--log-level=WARN"],
                            cwd=cwd, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)


def _finish(process: subprocess.Popen, log: Path) -> None:
    try:
        status = process.wait(timeout=NBGRADER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    assert status == 0, f"nbgrader failed ({status}); its log ends with:\n" + (
        log.read_text(errors="replace")[-4000:])


def _scores(course: Path, student: str) -> dict[str, dict[str, tuple[float, float]]]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {lesson.stem: {g.name: (g.score, g.max_score)
                              for g in gb.find_submission_notebook(
                                  lesson.stem, lesson.stem, student).grades}
                for lesson in AUTOGRADED}


@pytest.fixture(scope="module")
def round_trip(nbgrader, tmp_path_factory) -> RoundTrip:
    base = tmp_path_factory.mktemp("nbgrader")
    first = base / "solved"
    nbgrader_course.make_course(first)
    log = base / "generate.log"
    _finish(_nbgrader(["generate_assignment", "*"], first, log), log)

    course = {"solved": first, "learner": base / "learner"}
    shutil.copytree(first, course["learner"])  # its own gradebook: the two runs overlap
    runs = []
    for student, folder in course.items():
        for lesson in AUTOGRADED:
            handed_in = folder / "submitted" / student / lesson.stem
            handed_in.mkdir(parents=True)
            shutil.copyfile(lesson if student == "solved" else LEARNER / lesson.name,
                            handed_in / lesson.name)
        log = base / f"autograde-{student}.log"
        runs.append((_nbgrader(["autograde", "*", "--student", student], folder, log), log))
    for process, log in runs:
        _finish(process, log)

    with pytest.MonkeyPatch.context() as mp:  # reading the gradebook runs `alembic` too
        mp.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent),
                                           os.environ.get("PATH", "")]))
        scores = {student: _scores(folder, student) for student, folder in course.items()}
    return RoundTrip(course, scores)


def _cells(nb) -> list[tuple[str, str | None, str]]:
    return [(c.cell_type, c.get("id"), c.source) for c in nb.cells]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_generate_assignment_makes_the_learner_notebook(round_trip, lesson):
    released = round_trip.course["solved"] / "release" / lesson.stem / lesson.name
    ours = nbformat.read(LEARNER / lesson.name, as_version=4)
    theirs = nbformat.read(released, as_version=4)
    assert _cells(theirs) == _cells(ours)
    assert nbgrader_cells(theirs) == nbgrader_cells(ours)
    assert all(not c.get("outputs") for c in theirs.cells)
    assert "widgets" not in theirs.metadata
    assert "HIDDEN TESTS" not in released.read_text()


def test_the_autograded_lessons_are_found():
    assert len(AUTOGRADED) == 3


@pytest.mark.parametrize("lesson", AUTOGRADED, ids=lambda p: p.stem)
def test_autograde_gives_the_solved_lesson_full_marks(round_trip, lesson):
    nb = nbformat.read(lesson, as_version=4)
    scores = round_trip.scores["solved"][lesson.stem]
    assert sorted(scores) == sorted(exercises_checked(nb))
    assert all(score == maximum > 0 for score, maximum in scores.values()), scores


@pytest.mark.parametrize("lesson", AUTOGRADED, ids=lambda p: p.stem)
def test_autograde_gives_the_learner_notebook_zero(round_trip, lesson):
    scores = round_trip.scores["learner"][lesson.stem]
    names = exercises_checked(nbformat.read(lesson, as_version=4))
    assert sorted(scores) == sorted(names)
    assert all(score == 0 and maximum > 0 for score, maximum in scores.values()), scores
    # zero because each hidden test ran and found the stub, and only there: the rest of
    # the learner notebook ran past its unsolved exercises
    graded = round_trip.course["learner"] / "autograded" / "learner" / lesson.stem
    nb = nbformat.read(graded / lesson.name, as_version=4)
    errors = [(c.metadata.get("nbgrader", {}).get("grade_id"), o.ename)
              for c in nb.cells if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"]
    assert errors == [(name, "NotSolvedYet") for name in names]
