"""Exercise checks for the course notebooks.

Every exercise has a name (``"l3_tiny_graph_twice"``) and is checked with::

    check("l3_tiny_graph_twice", answer)

The expected answer is never written down here: each exercise owns a small function
that *runs the scenario with minigrad* and returns what happened, so the answer key
always agrees with the library. Coding exercises take the learner's function instead of
a value and check what it does.

``check`` prints a short confirmation when the answer is right. Otherwise it raises:

* ``NotSolvedYet`` for the untouched learner stub (``NotImplemented``, or a function
  that raises ``NotImplementedError``): "Run All" stops there with a clear message;
* ``WrongAnswer`` with a hint, never a bare ``AssertionError``.

Two helpers the lessons use around the exercises:

* ``show_error(...)``: a context manager that prints the type and message of the error
  raised inside it (and complains if nothing was raised);
* ``same_as_torch(scenario)``: run ``scenario(torch_module)`` under minigrad and under
  the real PyTorch (when installed) and show that the results agree.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "EXERCISES",
    "NotSolvedYet",
    "WrongAnswer",
    "check",
    "expected_answer",
    "same_as_torch",
    "show_error",
]


class _ShortError(Exception):
    """Shown in a notebook as one line, `Name: message`, without a traceback through
    the checking code: the message is all a learner needs."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook for custom display
        return [f"{type(self).__name__}: {self}"]


class NotSolvedYet(_ShortError):
    """The exercise still holds the learner stub."""


class WrongAnswer(_ShortError):
    """The answer was checked and is not right; the message says why."""


@dataclass(frozen=True)
class Exercise:
    name: str
    question: str
    hint: str
    explain: str
    expected: Callable[[], Any] | None = None  # value exercises: runs minigrad
    verify: Callable[[Callable], str | None] | None = None  # coding exercises


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


def same(expected: Any, answer: Any) -> bool:
    """Whether `answer` matches `expected` (numbers and tensors up to rounding)."""
    if expected is None:
        return answer is None
    if isinstance(expected, (bool, np.bool_)):
        return isinstance(answer, (bool, np.bool_)) and bool(answer) == bool(expected)
    if isinstance(expected, str):
        return isinstance(answer, str) and answer.strip().lower() == expected.strip().lower()
    if isinstance(expected, (set, frozenset)):
        if not isinstance(answer, (set, frozenset, list, tuple)):
            return False
        norm = {a.strip().lower() if isinstance(a, str) else a for a in answer}
        return norm == {e.lower() if isinstance(e, str) else e for e in expected}
    if isinstance(expected, (int, float)) and not isinstance(answer, (bool, np.bool_)):
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
        if not isinstance(answer, (list, tuple)) or len(answer) != len(expected):
            return False
        return all(same(e, a) for e, a in zip(expected, answer))
    return answer == expected


def expected_answer(name: str) -> Any:
    """The answer of value exercise `name`, computed by running minigrad now."""
    ex = _exercise(name)
    if ex.expected is None:
        raise TypeError(f"exercise {name!r} is a coding exercise: pass it your function")
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


def _not_solved(name: str) -> NotSolvedYet:
    return NotSolvedYet(
        f"Exercise {name!r} is not yet solved: replace the stub (the line saying "
        "'not yet solved') with your answer, then run this cell again."
    )


def check(name: str, answer: Any) -> bool:
    """Check `answer` to exercise `name`. Prints a confirmation and returns True when
    right; raises NotSolvedYet for the stub and WrongAnswer (with a hint) otherwise."""
    ex = _exercise(name)
    if answer is NotImplemented or answer is Ellipsis:
        raise _not_solved(name)
    if ex.verify is not None:
        if not callable(answer):
            raise WrongAnswer(
                f"Exercise {name!r} expects your function itself (without calling it), "
                f"got {_describe(answer)}."
            )
        try:
            problem = ex.verify(answer)
        except NotImplementedError:
            raise _not_solved(name) from None
        except (NotSolvedYet, WrongAnswer):
            raise
        except Exception as exc:
            raise WrongAnswer(
                f"Exercise {name!r}: your function raised {type(exc).__name__}: {exc}\n"
                f"Hint: {ex.hint}"
            ) from exc
        if problem:
            raise WrongAnswer(f"Exercise {name!r}: {problem}\nHint: {ex.hint}")
    else:
        expected = ex.expected()
        if not same(expected, answer):
            raise WrongAnswer(
                f"Exercise {name!r}: {_describe(answer)} is not right.\nHint: {ex.hint}"
            )
    print(f"Correct! {ex.explain}")
    return True


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


def same_as_torch(scenario: Callable[[Any], dict]) -> bool | None:
    """Run ``scenario(lib)`` with ``lib`` = minigrad and = the real torch, print both
    results and whether they agree. Returns None (and says so) when torch is absent;
    raises WrongAnswer if the two disagree."""
    import minigrad

    mine = _plain(scenario(minigrad), "minigrad")
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed here, so only minigrad ran:")
        for key, value in mine.items():
            print(f"  {key}: {value}")
        print("(install torch==2.13.0 to compare with the real thing)")
        return None
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
    return True


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
