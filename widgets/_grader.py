"""Grading that a cell of the graded notebook cannot change (nbgrader's grade cells).

A grade cell runs in the kernel that has just run the learner's cells, so anything the
learner's kernel loaded may have been changed by one of them: ``widgets.exercises.grade``
replaced by a function that passes everything, ``check`` or ``same`` patched, an
exercise's checker swapped in ``EXERCISES``. So a grade cell uses none of it. It loads
this file by its path into a new module (the learner's kernel never imports it), and
this module loads a **private copy** of the checking code, ``exercises.py`` and the
exercise banks, from their files, as new module objects that no cell has seen; the copy
is in ``sys.modules`` only while the grade cell runs, so no later cell finds it there.
The answer of a value or multiple-choice exercise is not looked up at all: the grade
cell holds it (written by ``scripts/nbgrader_course.py annotate``, hidden from learners
by nbgrader), and only the comparison (``same``, the choice check) comes from the private
copy. A coding exercise is checked by the private copy's checker, which runs the
learner's function.

What this does not stop: a cell that rewrites Python itself (``importlib``, builtins,
numpy) or minigrad, which the checkers of coding exercises run; a learner's function
that, while a coding checker runs it, reaches into the private copy; or a cell that
writes to the installed files (grade from an install the grading account cannot write
to, as docs/hub/install.sh leaves it). Autograding runs the learner's code as the
grading account: docs/instructor.md says what follows from that.

This module imports nothing from ``widgets`` at import time, so loading it by path works
in any kernel.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
_copies = itertools.count()
NO_KEY = object()


@contextlib.contextmanager
def private_checker() -> Iterator[types.ModuleType]:
    """A private copy of ``widgets.exercises`` with its exercise banks, loaded from their
    files now (new module objects, under a package name of their own). The copy is in
    ``sys.modules`` only inside the ``with`` block (a checker may import lazily, while it
    runs), which no learner's cell can interrupt."""
    package = f"_minigrad_grading_{next(_copies)}"
    root = types.ModuleType(package)
    root.__path__ = [str(HERE)]  # its submodules are found in this folder, loaded anew
    root.__package__ = package
    spec = importlib.util.spec_from_file_location(f"{package}.exercises", HERE / "exercises.py")
    exercises = importlib.util.module_from_spec(spec)
    sys.modules[package] = root
    sys.modules[spec.name] = exercises
    try:
        spec.loader.exec_module(exercises)  # its last lines load the banks, relatively
        yield exercises
    finally:
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]


def tensor(values: Any, dtype: str) -> Any:
    """A tensor answer as the grade cell writes it: its values and dtype name."""
    import minigrad

    return minigrad.tensor(values, dtype=getattr(minigrad, dtype))


def grade(name: str, answer: Any, expected: Any = NO_KEY) -> None:
    """The test of exercise `name` in its grade cell: returns silently for a right
    answer; raises NotSolvedYet for the learner's stub and WrongAnswer otherwise (nbgrader
    gives the cell its points only when nothing is raised). `expected` is the answer of
    a value exercise, or the right option's key of a multiple-choice question."""
    with private_checker() as checker:
        _grade(checker, name, answer, expected)


def _grade(checker: types.ModuleType, name: str, answer: Any, expected: Any) -> None:
    exercise = checker._exercise(name)
    if answer is NotImplemented or answer is Ellipsis:
        raise checker.NotSolvedYet(checker._not_solved_message(name))
    if exercise.verify is not None:
        if checker._verdict(name, answer) is None:  # the function still raises the stub
            raise checker.NotSolvedYet(checker._not_solved_message(name))
        return
    if expected is NO_KEY:
        raise checker.WrongAnswer(
            f"the grade cell of {name!r} holds no answer: run "
            "`python scripts/nbgrader_course.py annotate` and generate the assignment again")
    if exercise.choices:
        import dataclasses

        checker._check_choice(dataclasses.replace(exercise, correct=expected), answer)
        return
    if not checker.same(expected, answer):
        raise checker.WrongAnswer(
            f"Exercise {name!r}: {checker._describe(answer)} is not right.\n"
            f"Hint: {exercise.hint}")
