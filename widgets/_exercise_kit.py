"""What an exercise is and how a bank registers one: the part of the exercise checks
that the exercise banks need (`_value`, `_code`, `_choice`, and small helpers their
answer keys use). `widgets/exercises.py` checks answers; it imports this module and
the banks, and the banks import only this one, so no import goes round in a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _sealed
from ._sealed import _as_array, _is_tensor  # noqa: F401 - used by the exercises too


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


def raised(fn: Callable[[], Any]) -> str | None:
    """Run `fn`; return "Type: message" of the error it raises, or None."""
    try:
        fn()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def node_name(obj: Any) -> str | None:
    """The class name of a node (or of a tensor's grad_fn); None for None."""
    if obj is None:
        return None
    node = obj.grad_fn if _is_tensor(obj) else obj
    return None if node is None else type(node).__name__


def next_names(node: Any) -> list:
    """`next_functions` as (class name or None, index) pairs: easy to compare."""
    return [(node_name(n), i) for n, i in node.next_functions]
