"""What an exercise is and how a bank registers one: the part of the exercise checks
that the exercise banks need (`_value`, `_code`, `_choice`, and small helpers their
answer keys use). `widgets/exercises.py` checks answers; it imports this module and
the banks, and the banks import only this one, so no import goes round in a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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

    @property
    def lesson(self) -> int:
        return int(self.name.split("_")[0][1:])


EXERCISES: dict[str, Exercise] = {}


def _value(name: str, question: str, hint: str, explain: str):
    def register(fn: Callable[[], Any]) -> Callable[[], Any]:
        EXERCISES[name] = Exercise(name, question, hint, explain, expected=fn)
        return fn

    return register


def _code(name: str, question: str, hint: str, explain: str):
    def register(fn: Callable[[Callable], str | None]) -> Callable:
        EXERCISES[name] = Exercise(name, question, hint, explain, verify=fn)
        return fn

    return register


def _choice(name: str, question: str, options: list[tuple[str, str, str]], correct: str,
            explain: str) -> None:
    """Register a multiple-choice question: `options` are (key, text, feedback) with
    feedback for every wrong option (why it is wrong)."""
    choices = tuple(Choice(k, t, f) for k, t, f in options)
    if correct not in {c.key for c in choices}:
        raise ValueError(f"{name}: the right answer {correct!r} is not an option")
    missing = [c.key for c in choices if c.key != correct and not c.feedback]
    if missing:
        raise ValueError(f"{name}: wrong options without feedback: {missing}")
    EXERCISES[name] = Exercise(name, question, hint="", explain=explain, choices=choices,
                               correct=correct)


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "detach") and hasattr(x, "shape") and hasattr(x, "numpy")


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
