"""Custom Functions against PyTorch: outputs that are views, keyword arguments, the
`setup_context` form, and the errors for misuse of `mark_dirty`, `save_for_backward`
and backward's return value."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from float_policy import CHAIN, assert_floats

import minigrad


def _outcome(fn):
    """What calling `fn` does: its result's gradients, or the error it raises."""
    try:
        return ("ok", fn())
    except Exception as exc:  # noqa: BLE001 - comparing whatever each library raises
        return (type(exc).__name__, str(exc).replace("torch", "minigrad"))


def _plain(value):
    if hasattr(value, "detach"):
        return np.array(value.detach().tolist())
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


def _same(torch, program):
    expected, actual = program(torch), program(minigrad)
    assert expected[0] == actual[0], (expected, actual)
    if expected[0] == "ok":
        for e, a in zip(_plain(expected[1]), _plain(actual[1])):
            assert_floats(a, e, CHAIN)
    else:
        assert actual[1] == expected[1]


RETURNS = {
    "input as-is": lambda ctx, x: x,
    "slice of input": lambda ctx, x: x[:1],
    "slice of a new tensor": lambda ctx, x: (x * 2)[:1],
}


def _times_ten(lib, forward):
    class R(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return forward(ctx, x)

        @staticmethod
        def backward(ctx, grad):
            return grad * 10

    return R


@pytest.mark.parametrize("returns", list(RETURNS))
@pytest.mark.parametrize("modified", ["output", "base"])
def test_a_view_output_refuses_in_place_changes(torch, returns, modified):
    """Rewriting the history of a custom Function's view output would skip its
    backward: PyTorch refuses, whichever of the view or its base is modified."""
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        xx = x * 1
        fn = _times_ten(lib, RETURNS[returns])

        def run():
            y = fn.apply(xx)
            (y if modified == "output" else xx).mul_(3)
            y.sum().backward()
            return (x.grad,)

        return _outcome(run)

    _same(torch, program)


@pytest.mark.parametrize("grad_mode", [True, False])
def test_a_view_output_is_marked_even_when_nothing_is_recorded(torch, grad_mode):
    def program(lib):
        x = lib.ones(2)
        with lib.set_grad_enabled(grad_mode):
            y = _times_ten(lib, RETURNS["input as-is"]).apply(x)
        return _outcome(lambda: y.mul_(lib.ones(2, requires_grad=True)))

    _same(torch, program)


def test_a_non_differentiable_view_output_is_refused_too(torch):
    def forward(ctx, x):
        view = x[:1]
        ctx.mark_non_differentiable(view)
        return view

    def program(lib):
        y = _times_ten(lib, forward).apply(lib.ones(2, requires_grad=True) * 1)
        return _outcome(lambda: y.add_(1))

    _same(torch, program)


def test_a_dirty_view_input_may_still_be_modified(torch):
    def program(lib):
        class AddOne_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        a = lib.ones(4, requires_grad=True)
        view = (a * 1)[:2]

        def run():
            y = AddOne_.apply(view)
            y.mul_(2)
            y.sum().backward()
            return (a.grad, y)

        return _outcome(run)

    _same(torch, program)


def test_keyword_arguments_take_their_places(torch):
    def program(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=2.0):
                ctx.k = k
                return x * k

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.k

        x = lib.ones(2, requires_grad=True)
        by_name = Scale.apply(x=x)  # one input: needs_input_grad has one entry
        by_name.sum().backward()
        wrong_count = _outcome(lambda: Scale.apply(x, k=3.0).sum().backward())
        return ("ok", (x.grad, by_name.grad_fn.needs_input_grad, wrong_count))

    expected, actual = program(torch), program(minigrad)
    assert_floats(_plain(actual[1][0]), _plain(expected[1][0]), CHAIN)
    assert actual[1][1:] == expected[1][1:]


def test_a_separate_setup_context_sees_the_inputs_with_their_defaults(torch):
    def program(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x, k=2.0):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k = inputs[1]
                ctx.save_for_backward(inputs[0], output)

            @staticmethod
            def backward(ctx, grad):
                x, out = ctx.saved_tensors
                return grad * ctx.k + 0 * x * out, None

        x = lib.ones(2, requires_grad=True)

        def run():
            y = Scale.apply(x) + Scale.apply(x, k=5.0) + Scale.apply(x=x)
            y.sum().backward()
            return (y, x.grad, y.grad_fn.name())

        return _outcome(run)

    expected, actual = program(torch), program(minigrad)
    assert expected[0] == actual[0] == "ok"
    for e, a in zip(_plain(expected[1][:2]), _plain(actual[1][:2])):
        assert_floats(a, e, CHAIN)


def _misuse(lib, name):
    class DirtyNotReturned(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

    class SavesANumber(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

    class ReturnsAFloat(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return 1.0

    class ReturnsAList(ReturnsAFloat):
        @staticmethod
        def backward(ctx, grad):
            return [grad]

    x = lib.ones(2, requires_grad=True)
    return {
        "dirty not returned": lambda: DirtyNotReturned.apply(x * 1),
        "saves a number": lambda: SavesANumber.apply(x),
        "returns a float": lambda: ReturnsAFloat.apply(x).sum().backward(),
        "returns a list": lambda: ReturnsAList.apply(x).sum().backward(),
    }[name]


@pytest.mark.parametrize(
    "name", ["dirty not returned", "saves a number", "returns a float", "returns a list"]
)
def test_misuse_gets_pytorchs_errors(torch, name):
    def program(lib):
        run = _misuse(lib, name)
        return _outcome(lambda: (run(), None)[1])

    _same(torch, program)


def test_instantiating_a_function_warns_as_in_pytorch(torch):
    def warning_of(lib):
        class Plain(lib.autograd.Function):
            pass

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            Plain()
        return [(w.category, str(w.message).split(">", 1)[1]) for w in caught]

    assert warning_of(minigrad) == warning_of(torch)
    assert warning_of(minigrad)[0][0] is DeprecationWarning
