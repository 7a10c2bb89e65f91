"""A function of the namespace called with something that is not a tensor where its
first argument must be one (`minigrad.exp(2.0)`, `minigrad.sum([1, 2])`): PyTorch's
TypeError, "exp(): argument 'input' (position 1) must be Tensor, not float", never the
AttributeError the op would meet on its first look at the input.

Every declared function that takes a tensor alone (`f(t)` works in PyTorch) is probed,
none listed by hand: those PyTorch refuses with that message for each argument below
must give the same text in minigrad. (Called with too few arguments, an op of several
gives Python's own "missing argument" TypeError where PyTorch's parser names the first
argument's type first: a difference of text only, left alone.)
"""

from __future__ import annotations

import warnings

import pytest

import minigrad
from minigrad.ops.declaration import namespace

NOT_TENSORS = {"int": "3", "float": "2.5", "list": "[1.0, 2.0]", "str": "'a'"}
_WRAPPED = sorted(name for name, fn in namespace().items() if hasattr(fn, "__wrapped__"))


def _functional(lib):
    return lib.nn.functional


def _error(lib, name: str, text: str, keyword: str | None = None, space=None) -> str:
    value = eval(text)  # noqa: S307 - one of NOT_TENSORS' literals
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn = getattr(space(lib) if space else lib, name)
            fn(**{keyword: value}) if keyword else fn(value)
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            return f"{type(exc).__name__}: {exc}"
    return "no error"


def _takes_a_tensor_alone(torch, name: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            getattr(torch, name)(torch.ones(2, 2))
        except Exception:  # noqa: BLE001 - only whether it works matters
            return False
    return True


def _pytorch_refusals(torch) -> list[tuple[str, str]]:
    return [(name, kind) for name in _WRAPPED
            if hasattr(torch, name) and _takes_a_tensor_alone(torch, name)
            for kind, text in NOT_TENSORS.items()
            if "(position 1) must be Tensor, not" in _error(torch, name, text)]


def test_a_function_refuses_what_is_not_a_tensor_as_pytorch(torch):
    cases = _pytorch_refusals(torch)
    assert len(cases) > 300, "the probe should find most one-tensor functions"
    wrong = [f"{name}({NOT_TENSORS[kind]}): minigrad {_error(minigrad, name, NOT_TENSORS[kind])!r}"
             f" / PyTorch {_error(torch, name, NOT_TENSORS[kind])!r}"
             for name, kind in cases
             if _error(minigrad, name, NOT_TENSORS[kind]) != _error(torch, name, NOT_TENSORS[kind])]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("name", ["exp", "sigmoid", "where", "trapezoid"])
def test_the_keyword_form_names_the_argument_without_a_position(torch, name):
    keyword = {"where": "condition", "trapezoid": "y"}.get(name, "input")
    assert _error(minigrad, name, "3", keyword) == _error(torch, name, "3", keyword)


def test_a_tensor_input_still_reaches_the_op():
    # (an AttributeError from inside the op, with a tensor input, is not rewritten)
    assert minigrad.exp(minigrad.zeros(2)).tolist() == [1.0, 1.0]
    assert minigrad.exp.__wrapped__ is minigrad.Tensor.exp


def test_nn_functional_refuses_what_is_not_a_tensor_as_pytorch(torch):
    # (every function of minigrad's F that PyTorch's refuses with its message; those
    # PyTorch writes in Python fail with an AttributeError in both)
    def takes_a_tensor_alone(name):
        try:
            getattr(torch.nn.functional, name)(torch.ones(2, 2))
        except Exception:  # noqa: BLE001 - only whether it works matters
            return False
        return True

    names = [n for n in minigrad.nn.functional.__all__ if takes_a_tensor_alone(n)]
    wrong = []
    for name in names:
        theirs = _error(torch, name, "3", space=_functional)
        ours = _error(minigrad, name, "3", space=_functional)
        if theirs.startswith("AttributeError"):
            ours, theirs = ours.split(":")[0], theirs.split(":")[0]
        if ours != theirs:
            wrong.append(f"F.{name}(3): minigrad {ours!r} / PyTorch {theirs!r}")
    assert len(names) > 30 and not wrong, "\n".join(wrong)


@pytest.mark.parametrize("form", ["function", "method"])
def test_a_warning_points_at_the_callers_line_through_either_form(torch, form):
    # (the function form is a wrapper, one frame more than the method: the warning
    # still names the line that called the op, as PyTorch's C++ warnings do)
    def where(lib):
        x = lib.ones(2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.var(x, correction=7) if form == "function" else x.var(correction=7)
        (w,) = caught
        return w.filename, w.lineno

    assert where(minigrad) == where(torch)
    assert where(minigrad)[0] == __file__
