"""Exercise checks for the course notebooks.

Every exercise has a name (``"l3_tiny_graph_twice"``) and is checked with::

    check("l3_tiny_graph_twice", answer)

The expected answer is never written down here: each exercise owns a small function
that *runs the scenario with minigrad* and returns what happened, so the answer key
always agrees with the library. Coding exercises take the learner's function instead of
a value and check what it does.

``check`` prints a short confirmation when the answer is right and returns nothing (so
a notebook shows the message only). For the untouched learner stub (``NotImplemented``,
or a function that raises ``NotImplementedError``) it prints "not yet solved" and
returns: *Run All* carries on to the rest of the lesson. A wrong answer raises
``WrongAnswer`` with a hint (never a bare ``AssertionError``), so it stops a run where
the learner has something to fix.

Three kinds of exercise: value exercises (predict, then check), coding exercises (the
learner's function or class is run on fresh inputs) and multiple-choice "why" questions
(``show_choices(name)`` prints the options; every wrong option has its own feedback).

``grade(name, answer)`` is the strict form: the stub raises ``NotSolvedYet``, so an
exercise not done fails. nbgrader's grade cells do not call it (a learner's cell could
replace it): they grade with ``widgets/_grader.py``, which loads a private copy of this
module (see there and scripts/nbgrader_course.py).

The answer key: in the repository (the instructor's source) every value exercise runs
its scenario, every question names its right option, and a coding exercise's reference
results come from functions declared with ``_reference``. A learner's install holds none
of that: scripts/seal_answers.py writes ``widgets/_answer_key.py`` into the built package
(a wheel, docs/hub/install.sh) with a seal of every answer (digests, see ``_sealed.py``)
and strips the scenarios, the right options, the explanations and the reference
functions from the banks. With that module present this one checks against the seals.

``progress()`` lists every exercise of the course and which ones are solved (solved
exercises are remembered across notebooks in a small JSON file, see ``progress_file``);
``reset_exercise(name)`` puts an exercise's starter code back into the current cell.

Two helpers the lessons use around the exercises:

* ``show_error(...)``: a context manager that prints the type and message of the error
  raised inside it (and complains if nothing was raised);
* ``same_as_torch(scenario)``: run ``scenario(torch_module)`` under minigrad and under
  the real PyTorch (when installed) and show that the results agree.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from . import _sealed
from ._exercise_kit import (  # noqa: F401 - the exercises' parts, public here too
    EXERCISES,
    REFERENCES,
    SEALED,
    Choice,
    Exercise,
    NotSolvedYet,
    Reference,
    WrongAnswer,
    _as_array,
    _choice,
    _code,
    _is_tensor,
    _reference,
    _value,
    next_names,
    node_name,
    raised,
    reference_result,
)
from ._sealed import _numbers

__all__ = [
    "EXERCISES",
    "NotSolvedYet",
    "WrongAnswer",
    "check",
    "expected_answer",
    "grade",
    "progress",
    "reset_exercise",
    "run_node",
    "same_as_torch",
    "show_choices",
    "show_error",
]


# -- comparing answers ------------------------------------------------------------------


def _describe(x: Any) -> str:
    if _is_tensor(x):
        return f"tensor {np.round(np.asarray(x.detach().numpy(), np.float64), 4).tolist()}"
    return repr(x)


def _text(value: str) -> str:
    """A string answer as compared: case and spacing do not matter ("(a-1).mean()" is
    "(a - 1).mean()")."""
    return "".join(value.split()).lower()


def same(expected: Any, answer: Any) -> bool:
    """Whether `answer` matches `expected`: numbers and tensors up to rounding, in any
    form (list, tuple, tensor, nested); strings whatever their case and spacing."""
    if expected is None:
        return answer is None
    if isinstance(expected, (bool, np.bool_)):
        return isinstance(answer, (bool, np.bool_)) and bool(answer) == bool(expected)
    if isinstance(expected, str):
        return isinstance(answer, str) and _text(answer) == _text(expected)
    if isinstance(expected, (set, frozenset)):
        if not isinstance(answer, (set, frozenset, list, tuple)):
            return False
        norm = {_text(a) if isinstance(a, str) else a for a in answer}
        return norm == {_text(e) if isinstance(e, str) else e for e in expected}
    if isinstance(expected, (int, float)):
        if isinstance(answer, (bool, np.bool_)):
            return False
        if isinstance(answer, (int, float, np.number)):
            return math.isclose(float(answer), float(expected), rel_tol=1e-5, abs_tol=1e-6)
        if _is_tensor(answer) and answer.numel() == 1:
            return same(expected, float(answer.detach().numpy().reshape(-1)[0]))
        return False
    if _is_tensor(expected):
        arr = _as_array(answer)
        want = _as_array(expected)
        if arr is None:
            return False
        return arr.shape == want.shape and np.allclose(arr, want, rtol=1e-5, atol=1e-6)
    if isinstance(expected, (list, tuple)):
        want, got = _numbers(expected), _numbers(answer)
        if want is not None and got is not None:  # numbers: the form does not matter
            return got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-6)
        if not isinstance(answer, (list, tuple)) or len(answer) != len(expected):
            return False
        return all(same(e, a) for e, a in zip(expected, answer))
    return answer == expected


def expected_answer(name: str) -> Any:
    """The answer of value exercise `name`, computed by running minigrad now."""
    ex = _exercise(name)
    if ex.kind != "value":
        raise TypeError(f"exercise {name!r} is not a value exercise")
    if ex.expected is None:
        raise LookupError("the answers are not installed with the course (only their seals)")
    return ex.expected()


def _exercise(name: str) -> Exercise:
    try:
        return EXERCISES[name]
    except KeyError:
        close = [n for n in EXERCISES if n.split("_")[0] == name.split("_")[0]]
        raise KeyError(
            f"there is no exercise called {name!r}"
            + (f"; exercises of this lesson: {', '.join(sorted(close))}" if close else "")
        ) from None


def _not_solved_message(name: str) -> str:
    return (f"Not yet solved: exercise {name!r}. Replace the stub (the line saying "
            "'not yet solved') with your answer, then run this cell again.")


def _not_solved(name: str) -> NotSolvedYet:
    return NotSolvedYet(_not_solved_message(name))


def _verdict(name: str, answer: Any) -> str | None:
    """The confirmation for a right `answer` to exercise `name`; None for the learner
    stub; raises WrongAnswer (with a hint, or a wrong option's feedback) otherwise."""
    ex = _exercise(name)
    if answer is NotImplemented or answer is Ellipsis:
        return None
    if ex.choices:
        secret = _check_choice(ex, answer)
        if secret is not None:
            return f"Correct! {_sealed.decrypt(ex.sealed['explain'], secret)}"
    elif ex.verify is not None:
        if not callable(answer):
            raise WrongAnswer(
                f"Exercise {name!r} expects your function itself (without calling it), "
                f"got {_describe(answer)}."
            )
        try:
            with _quiet_warnings():
                problem = ex.verify(answer)
        except NotImplementedError:
            return None
        except (NotSolvedYet, WrongAnswer):
            raise
        except Exception as exc:
            raise WrongAnswer(
                f"Exercise {name!r}: your function raised {type(exc).__name__}: {exc}\n"
                f"Hint: {ex.hint}"
            ) from exc
        if problem:
            raise WrongAnswer(f"Exercise {name!r}: {problem}\nHint: {ex.hint}")
    elif ex.sealed is not None:
        secret = _sealed.opens(ex.sealed["seal"], answer)
        if secret is None:
            raise WrongAnswer(
                f"Exercise {name!r}: {_describe(answer)} is not right.\nHint: {ex.hint}")
        return f"Correct! {_sealed.decrypt(ex.sealed['explain'], secret)}"
    else:
        with _quiet_warnings():
            expected = ex.expected()
        if not same(expected, answer):
            raise WrongAnswer(
                f"Exercise {name!r}: {_describe(answer)} is not right.\nHint: {ex.hint}"
            )
    return f"Correct! {ex.explain}"


def check(name: str, answer: Any) -> None:
    """Check `answer` to exercise `name`.

    Right: prints a confirmation (and remembers the exercise as solved). The learner
    stub: prints "not yet solved" and returns, so Run All continues. Wrong: raises
    WrongAnswer with a hint, or for a multiple-choice question with the feedback of
    the option chosen."""
    verdict = _verdict(name, answer)
    if verdict is None:
        print(_not_solved_message(name))
        return
    _record_solved(name)
    print(verdict)


def grade(name: str, answer: Any) -> None:
    """The strict test of exercise `name` (nbgrader's grade cells use
    ``widgets/_grader.py``, which does the same with a private copy of this module).

    The same verdict as `check`, but every answer that is not right raises: the learner
    stub raises NotSolvedYet, a wrong answer WrongAnswer. nbgrader gives a grade cell
    its points only when it runs without an error, so an untouched exercise scores zero.
    A right answer returns silently (nbgrader would read a returned number as partial
    credit) and is not recorded in the learner's progress: grading is not practice."""
    if _verdict(name, answer) is None:
        raise _not_solved(name)


@contextlib.contextmanager
def _quiet_warnings():
    """The checkers run scenarios that may warn (reading a non-leaf's .grad, a learner's
    float(loss)): those warnings belong to the checking, not to the learner's cell."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _check_choice(ex: Exercise, answer: Any) -> bytes | None:
    """Raises WrongAnswer unless `answer` is the right option; for a sealed question
    returns the seal's secret (the explanation's key)."""
    keys = [c.key for c in ex.choices]
    given = answer.strip().lower() if isinstance(answer, str) else answer
    chosen = next((c for c in ex.choices if c.key.lower() == given), None)
    if chosen is None:
        raise WrongAnswer(
            f"Exercise {ex.name!r}: answer with one of {', '.join(map(repr, keys))} "
            f"(see show_choices({ex.name!r})), got {_describe(answer)}."
        )
    secret = None
    if ex.correct:
        right = chosen.key == ex.correct
    else:
        secret = _sealed.opens(ex.sealed["seal"], chosen.key)
        right = secret is not None
    if not right:
        raise WrongAnswer(f"Exercise {ex.name!r}: ({chosen.key}) is not right. "
                          f"{chosen.feedback}")
    return secret


def show_choices(name: str) -> None:
    """Print a multiple-choice question and its options."""
    ex = _exercise(name)
    if not ex.choices:
        raise TypeError(f"exercise {name!r} is not a multiple-choice question")
    print(ex.question)
    for c in ex.choices:
        print(f"  ({c.key}) {c.text}")
    print(f'Answer with check({name!r}, "<letter>").')


# -- progress across the course ---------------------------------------------------------


def progress_file() -> Path | None:
    """Where solved exercises are remembered: $MINIGRAD_COURSE_PROGRESS if set (``off``
    remembers nothing), else ``minigrad-course/progress.json`` in the user's cache."""
    env = os.environ.get("MINIGRAD_COURSE_PROGRESS")
    if env is not None:
        return None if env.strip().lower() in ("", "off", "0", "none") else Path(env)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "minigrad-course" / "progress.json"


_SOLVED_HERE: set[str] = set()  # solved in this kernel (also when no file can be written)


def _stored_solved() -> set[str]:
    path = progress_file()
    if path is None or not path.exists():
        return set()
    try:
        return set(json.loads(path.read_text(encoding="utf-8")).get("solved", []))
    except (OSError, ValueError, AttributeError):
        return set()


def _write_solved(solved: set[str]) -> None:
    path = progress_file()
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"solved": sorted(solved)}, indent=1), encoding="utf-8")
    except OSError:
        pass  # a read-only home must not break a lesson: this kernel still remembers


def _record_solved(name: str) -> None:
    _SOLVED_HERE.add(name)
    stored = _stored_solved()
    if name not in stored:
        _write_solved(stored | {name})


def solved_exercises() -> set[str]:
    """Names of the exercises solved so far (this kernel and earlier sessions)."""
    return (_SOLVED_HERE | _stored_solved()) & set(EXERCISES)


def progress(lesson: int | None = None) -> None:
    """Print, lesson by lesson, how many exercises are solved and which are still open
    (all lessons, or only `lesson`)."""
    solved = solved_exercises()
    by_lesson: dict[int, list[Exercise]] = {}
    for ex in EXERCISES.values():
        by_lesson.setdefault(ex.lesson, []).append(ex)
    total = done = 0
    for number in sorted(by_lesson):
        if lesson is not None and number != lesson:
            continue
        exercises = by_lesson[number]
        open_ = [e.name for e in exercises if e.name not in solved]
        total, done = total + len(exercises), done + len(exercises) - len(open_)
        line = f"lesson {number}: {len(exercises) - len(open_)} of {len(exercises)} solved"
        print(line + (f"; open: {', '.join(open_)}" if open_ else ""))
    print(f"{done} of {total} exercises solved.")


def _learner_folder() -> Path:
    return Path(__file__).resolve().parent.parent / "notebooks" / "learner"


def starter_code(name: str) -> str:
    """The code cell of exercise `name` as the learner notebook has it (with the stub)."""
    import nbformat

    _exercise(name)
    needle = f'check("{name}"'
    for path in sorted(_learner_folder().glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and needle in cell.source:
                return cell.source
    raise KeyError(f"no learner notebook has a cell checking {name!r}")


def reset_exercise(name: str) -> None:
    """Put the starter code of exercise `name` back: in Jupyter it replaces the cell you
    run this in (run that cell again to see "not yet solved"); elsewhere it is printed.
    It also forgets that the exercise was solved."""
    code = starter_code(name)
    _SOLVED_HERE.discard(name)
    stored = _stored_solved()
    if name in stored:
        _write_solved(stored - {name})
    shell = None
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # pragma: no cover - the course installs IPython
        pass
    if shell is not None and hasattr(shell, "set_next_input"):
        shell.set_next_input(code, replace=True)
        print(f"Exercise {name!r} is reset: this cell now holds its starter code.")
    else:
        print(f"Exercise {name!r} is reset. Its starter code:\n{code}")


# -- helpers for the lessons ------------------------------------------------------------


@contextlib.contextmanager
def show_error(*expected: type[BaseException]):
    """Run the block and print the error it raises as ``Type: message``.

    With exception types given, any other error propagates, and a block that raises
    nothing is reported as a problem (the lesson expected an error there)."""
    kinds = expected or (Exception,)
    try:
        yield
    except kinds as exc:
        print(f"{type(exc).__name__}: {exc}")
    else:
        if expected:
            names = " or ".join(k.__name__ for k in expected)
            raise WrongAnswer(f"expected {names} here, but the code ran without error")


def _plain(value: Any, module_name: str) -> Any:
    """Results in a form both libraries produce identically."""
    if _is_tensor(value):
        return np.round(np.asarray(value.detach().numpy(), np.float64), 6).tolist()
    if isinstance(value, str):
        return value.replace(module_name, "<lib>")
    if isinstance(value, (list, tuple)):
        return [_plain(v, module_name) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v, module_name) for k, v in value.items()}
    if isinstance(value, float):
        return round(value, 6)
    return value


def same_as_torch(scenario: Callable[[Any], dict]) -> None:
    """Run ``scenario(lib)`` with ``lib`` = minigrad and = the real torch, print both
    results and whether they agree (only minigrad's, and says so, when torch is
    absent); raises WrongAnswer if the two disagree. Returns nothing, so a notebook
    shows the printed comparison only."""
    import minigrad

    mine = _plain(scenario(minigrad), "minigrad")
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed here, so only minigrad ran:")
        for key, value in mine.items():
            print(f"  {key}: {value}")
        print("(install torch==2.13.0 to compare with the real thing)")
        return
    torch.manual_seed(0)
    theirs = _plain(scenario(torch), "torch")
    width = max(len(k) for k in mine)
    differ = []
    for key in mine:
        flag = "same" if mine[key] == theirs.get(key) else "DIFFERENT"
        if flag != "same":
            differ.append(key)
        print(f"{key:<{width}}  minigrad: {mine[key]}")
        print(f"{'':<{width}}  torch {torch.__version__.split('+')[0]}: {theirs.get(key)}  "
              f"[{flag}]")
    if differ:
        raise WrongAnswer(f"minigrad and PyTorch disagree on: {', '.join(differ)}")
    print(f"minigrad and PyTorch {torch.__version__.split('+')[0]} agree on all "
          f"{len(mine)} results.")


# Exercises of every lesson are in their own module to keep this one short (they import
# `_exercise_kit`, not this module).
from . import _clinic_exercises as _lesson_10  # noqa: E402,F401
from . import _exercise_bank  # noqa: E402,F401  (registers the exercises)
from . import _graph_too_exercises as _lesson_11  # noqa: E402,F401
from . import _hooks_exercises as _lesson_12  # noqa: E402,F401
from ._exercise_bank import run_node  # noqa: E402,F401  (lesson 9's engine runs nodes with it)
