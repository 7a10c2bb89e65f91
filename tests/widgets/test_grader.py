"""nbgrader's grade cells hold against a learner's own cells (widgets/_grader.py).

Each test runs the grade cell that `scripts/nbgrader_course.py annotate` writes, as the
autograder does: in the namespace (and the process) where the learner's cells ran. A
learner's cell that patches the checking code the kernel has loaded, swaps an exercise's
checker, or edits the bank must not change the grade: a wrong or untouched answer still
scores nothing, a right one still scores.
"""

from __future__ import annotations

import dataclasses
import sys
import types
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import nbgrader_course  # noqa: E402

import widgets.exercises as exercises  # noqa: E402


def square_grad(values):  # the right answer of l0_grad_of_square
    import minigrad as torch

    x = torch.tensor(values, requires_grad=True)
    (x * x).sum().backward()
    return x.grad


def stub(values):
    raise NotImplementedError("not yet solved: write your code here")


def wrong_grad(values):
    import minigrad as torch

    return torch.tensor(values)


VALUE, CHOICE, CODE = "l0_add_node", "l0_why_accumulate", "l0_grad_of_square"
RIGHT = {VALUE: "AddBackward0", CHOICE: exercises.EXERCISES[CHOICE].correct, CODE: square_grad}
WRONG = {VALUE: "MulBackward0", CODE: wrong_grad,
         CHOICE: next(c.key for c in exercises.EXERCISES[CHOICE].choices
                      if c.key != exercises.EXERCISES[CHOICE].correct)}


# written by the instructor's annotate, before any learner's cell ran
GRADE_CELLS = {name: nbgrader_course.grade_cell(name, "answer", nbgrader_course.answer_key(name))
               for name in (VALUE, CHOICE, CODE)}


def run_grade_cell(name: str, answer) -> str | None:
    """Run exercise `name`'s grade cell with `answer`; the error's name, or None."""
    try:
        exec(GRADE_CELLS[name].source, {"answer": answer})
    except Exception as exc:
        return type(exc).__name__
    return None


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("MINIGRAD_COURSE_PROGRESS", "off")


@pytest.mark.parametrize("name", [VALUE, CHOICE, CODE])
def test_a_grade_cell_passes_the_right_answer_only(name):
    assert run_grade_cell(name, RIGHT[name]) is None
    assert run_grade_cell(name, WRONG[name]) == "WrongAnswer"
    assert run_grade_cell(name, stub if name == CODE else NotImplemented) == "NotSolvedYet"


def test_the_grade_cell_holds_the_answer_of_value_and_choice_exercises():
    assert nbgrader_course.answer_key(VALUE) == "'AddBackward0'"
    assert nbgrader_course.answer_key(CHOICE) == repr(RIGHT[CHOICE])
    assert nbgrader_course.answer_key(CODE) is None  # the learner's function is run


def _everything_passes(*args, **kwargs):
    return None


ATTACKS = {
    # the cell that gave full marks to an untouched lesson
    "patch grade": lambda mp: mp.setattr(exercises, "grade", _everything_passes),
    "patch check, same and the verdict": lambda mp: [
        mp.setattr(exercises, "check", _everything_passes),
        mp.setattr(exercises, "same", lambda *a: True),
        mp.setattr(exercises, "_verdict", lambda *a: "Correct!"),
        mp.setattr(exercises, "_check_choice", _everything_passes)],
    "edit the bank": lambda mp: [
        mp.setitem(exercises.EXERCISES, name, dataclasses.replace(
            exercises.EXERCISES[name], expected=lambda: WRONG[VALUE],
            verify=(lambda f: None) if name == CODE else None,
            correct=WRONG[CHOICE] if name == CHOICE else ""))
        for name in (VALUE, CHOICE, CODE)],
    "replace the module": lambda mp: mp.setitem(
        sys.modules, "widgets.exercises", types.SimpleNamespace(
            grade=_everything_passes, check=_everything_passes, EXERCISES={})),
    "patch the bank's checker": lambda mp: mp.setattr(
        sys.modules["widgets._exercise_bank"], "np", types.SimpleNamespace(
            allclose=lambda *a, **k: True)),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_learner_s_cell_cannot_change_a_grade(monkeypatch, attack):
    ATTACKS[attack](monkeypatch)
    for name in (VALUE, CHOICE, CODE):
        assert run_grade_cell(name, WRONG[name]) == "WrongAnswer", name
        assert run_grade_cell(name, stub if name == CODE else NotImplemented) == "NotSolvedYet"
        assert run_grade_cell(name, RIGHT[name]) is None, name


def test_the_private_copy_is_new_and_not_left_in_sys_modules():
    from widgets import _grader

    before = set(sys.modules)
    with _grader.private_checker() as copy:
        assert copy is not exercises and copy.EXERCISES is not exercises.EXERCISES
        assert sorted(copy.EXERCISES) == sorted(exercises.EXERCISES)
        assert copy.same is not exercises.same
    assert set(sys.modules) == before


def test_a_checker_that_imports_while_it_runs_grades_in_the_private_copy():
    def as_array(t):  # l10_to_numpy's right answer; its checker imports lazily
        return t.detach().numpy()

    cell = nbgrader_course.grade_cell("l10_to_numpy", "answer", None)
    exec(cell.source, {"answer": as_array})


def test_learners_never_see_a_grade_cell_s_answer():
    for path in sorted((ROOT / "notebooks" / "learner").glob("*.ipynb")):
        text = path.read_text()
        assert "expected=" not in text and "_g.grade" not in text, path.name
    # and the lessons' grade cells are those annotate writes now (answers up to date)
    assert nbgrader_course.stale_lessons() == []
    nb = nbformat.read(ROOT / "notebooks" / "00_start_here.ipynb", as_version=4)
    assert any("_g.grade(\"l0_add_node\", answer_0_1, expected='AddBackward0')" in c.source
               for c in nb.cells)
