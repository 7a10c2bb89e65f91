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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import _sealed

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


class _ShortError(Exception):
    """Shown in a notebook as one line, `Name: message`, without a traceback through
    the checking code: the message is all a learner needs."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook for custom display
        return [f"{type(self).__name__}: {self}"]


class NotSolvedYet(_ShortError):
    """The exercise still holds the learner stub (raised by helpers; ``check`` prints
    "not yet solved" instead, so Run All goes on)."""


class WrongAnswer(_ShortError):
    """The answer was checked and is not right; the message says why."""


@dataclass(frozen=True)
class Choice:
    """One option of a multiple-choice question, and what to tell a learner who picks
    it when it is wrong."""

    key: str
    text: str
    feedback: str = ""


@dataclass(frozen=True)
class Exercise:
    name: str
    question: str
    hint: str
    explain: str
    expected: Callable[[], Any] | None = None  # value exercises: runs minigrad
    verify: Callable[[Callable], str | None] | None = None  # coding exercises
    choices: tuple[Choice, ...] = ()  # multiple choice: the options
    correct: str = ""  # multiple choice: the key of the right option
    sealed: dict | None = None  # a learner's install: the seal of the answer (_sealed.py)

    @property
    def lesson(self) -> int:
        return int(self.name.split("_")[0][1:])

    @property
    def kind(self) -> str:
        """'value', 'code' or 'choice'."""
        if self.choices:
            return "choice"
        return "code" if self.verify is not None else "value"


EXERCISES: dict[str, Exercise] = {}

try:  # present in a learner's install only (scripts/seal_answers.py)
    from ._answer_key import KEY as _KEY
except ImportError:
    _KEY = None
SEALED = _KEY is not None  # the answers are digests here, not values


def _sealed_entry(name: str) -> dict | None:
    if _KEY is None:
        return None
    if name not in _KEY:
        raise KeyError(f"{name}: not in the installed answer key (run scripts/seal_answers.py)")
    return _KEY[name]


def _value(name: str, question: str, hint: str, explain: str = ""):
    def register(fn: Callable[[], Any]) -> Callable[[], Any]:
        sealed = _sealed_entry(name)
        EXERCISES[name] = Exercise(name, question, hint, explain,
                                   expected=None if sealed else fn, sealed=sealed)
        return fn

    return register


def _code(name: str, question: str, hint: str, explain: str):
    def register(fn: Callable[[Callable], str | None]) -> Callable:
        EXERCISES[name] = Exercise(name, question, hint, explain, verify=fn)
        return fn

    return register


def _choice(name: str, question: str, options: list[tuple[str, str, str]], correct: str = "",
            explain: str = "") -> None:
    """Register a multiple-choice question: `options` are (key, text, feedback) with
    feedback for every wrong option (why it is wrong)."""
    choices = tuple(Choice(k, t, f) for k, t, f in options)
    sealed = _sealed_entry(name)
    if sealed is not None:
        EXERCISES[name] = Exercise(name, question, hint="", explain="", choices=choices,
                                   sealed=sealed)
        return
    if correct not in {c.key for c in choices}:
        raise ValueError(f"{name}: the right answer {correct!r} is not an option")
    missing = [c.key for c in choices if c.key != correct and not c.feedback]
    if missing:
        raise ValueError(f"{name}: wrong options without feedback: {missing}")
    EXERCISES[name] = Exercise(name, question, hint="", explain=explain, choices=choices,
                               correct=correct)


# A coding exercise's reference results: name -> (the reference, its cases, tolerances).
REFERENCES: dict[str, tuple[Callable[..., dict], tuple, dict[str, tuple[float, float]]]] = {}


def _reference(name: str, cases: tuple, tolerance: dict[str, tuple[float, float]]):
    """Declare the reference implementation of coding exercise `name`: ``fn(*case)``
    returns named numeric results for each of `cases`, which the checker compares with
    the learner's within ``tolerance[result] = (rtol, atol)`` (``reference_result``).
    A learner's install holds the results' seals instead of the function."""
    def register(fn: Callable[..., dict]) -> Callable[..., dict]:
        REFERENCES[name] = (fn, tuple(cases), dict(tolerance))
        return fn

    return register


@dataclass(frozen=True)
class Reference:
    """One reference result: its values (the repository) or their seal (an install)."""

    rtol: float
    atol: float
    values: Any = None
    sealed: dict | None = None

    def close(self, got: Any) -> bool:
        """``numpy.allclose(got, values, rtol, atol)``, with the same shape."""
        if self.sealed is not None:
            return _sealed.close_to_sealed(self.sealed, got)
        arr = _as_array(got) if _is_tensor(got) else np.asarray(got, np.float64)
        want = np.asarray(self.values, np.float64)
        return arr.shape == want.shape and np.allclose(arr, want, self.rtol, self.atol)

    def __str__(self) -> str:
        if self.sealed is not None:
            return "the reference's values"
        return str(np.round(np.asarray(self.values, np.float64), 5).tolist())


def reference_result(name: str, case: int) -> dict[str, Reference]:
    """The results of coding exercise `name`'s reference on its case number `case`."""
    fn, cases, tolerance = REFERENCES[name]
    if _KEY is not None:
        sealed = _KEY[name]["references"][case]
        return {k: Reference(*tolerance[k], sealed=v) for k, v in sealed.items()}
    return {k: Reference(*tolerance[k], values=v) for k, v in fn(*cases[case]).items()}


# -- comparing answers ------------------------------------------------------------------


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "detach") and hasattr(x, "shape") and hasattr(x, "numpy")


def _as_array(x: Any) -> np.ndarray | None:
    if _is_tensor(x):
        return np.asarray(x.detach().numpy(), dtype=np.float64)
    if isinstance(x, np.ndarray):
        return x.astype(np.float64)
    if isinstance(x, (list, tuple)) and x and all(
        isinstance(v, (int, float, list, tuple)) and not isinstance(v, bool) for v in x
    ):
        try:
            return np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            return None
    return None


def _describe(x: Any) -> str:
    if _is_tensor(x):
        return f"tensor {np.round(np.asarray(x.detach().numpy(), np.float64), 4).tolist()}"
    return repr(x)


def _text(value: str) -> str:
    """A string answer as compared: case and spacing do not matter ("(a-1).mean()" is
    "(a - 1).mean()")."""
    return "".join(value.split()).lower()


def _numbers(x: Any) -> np.ndarray | None:
    """`x` as an array of floats when it is numbers in any form (a tensor, an array, or
    a list / tuple of numbers, tensors or such lists, nested), else None."""
    if _is_tensor(x) or isinstance(x, np.ndarray):
        return _as_array(x)
    if isinstance(x, (list, tuple)) and x:
        parts = [_numbers(v) if isinstance(v, (list, tuple, np.ndarray)) or _is_tensor(v)
                 else (np.asarray(float(v)) if isinstance(v, (int, float, np.number))
                       and not isinstance(v, (bool, np.bool_)) else None) for v in x]
        if any(p is None for p in parts) or len({p.shape for p in parts}) != 1:
            return None
        return np.stack(parts)
    return None


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


def raised(fn: Callable[[], Any]) -> str | None:
    """Run `fn`; return "Type: message" of the error it raises, or None."""
    try:
        fn()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


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


def node_name(obj: Any) -> str | None:
    """The class name of a node (or of a tensor's grad_fn); None for None."""
    if obj is None:
        return None
    node = obj.grad_fn if _is_tensor(obj) else obj
    return None if node is None else type(node).__name__


def next_names(node: Any) -> list:
    """`next_functions` as (class name or None, index) pairs: easy to compare."""
    return [(node_name(n), i) for n, i in node.next_functions]


# Exercises of every lesson are in their own module to keep this one short.
from . import _clinic_exercises as _lesson_10  # noqa: E402,F401
from . import _exercise_bank  # noqa: E402,F401  (registers the exercises)
from . import _graph_too_exercises as _lesson_11  # noqa: E402,F401
from . import _hooks_exercises as _lesson_12  # noqa: E402,F401
from ._exercise_bank import run_node  # noqa: E402,F401  (lesson 9's engine runs nodes with it)
