"""Forward mode through what backward records, and through custom Functions, against
PyTorch.

* Forward over reverse: inside a dual level, `autograd.grad(..., create_graph=True)`
  records the gradient from each node's formula, and the formula's ops carry the
  tangents along, so the gradient's tangent is a Hessian-vector product. A formula
  that reads an op's saved *output* (exp's `result`) needs that output's tangent too:
  a saved output comes back with its tangent, as PyTorch's SavedVariable keeps it.
* Custom Functions with a `jvp`: it gets one tangent per input (zeros for a tensor
  without one, unless `set_materialize_grads(False)`; None for a number), reads what
  `ctx.save_for_forward` kept as `ctx.saved_tensors`, and returns one per output;
  PyTorch's errors for a wrong count or size; an input modified in place keeps its
  tangent object, which jvp updates.
"""

from __future__ import annotations

import numpy as np
import pytest
from parity_harness import raised
from test_parity_forward_ad import TA, TV, A, V, assert_same, dual, fad, run

import minigrad

# f(x) -> a scalar; its gradient's tangent along TV is the Hessian times TV
SCALAR_FUNCTIONS = {
    "exp (saves its output)": lambda x: (x.exp() * x).sum(),
    "tanh and sigmoid (outputs)": lambda x: (x.tanh() * x.sigmoid()).sum(),
    "sqrt and reciprocal (outputs)": lambda x: (x.abs().sqrt() + (x * x + 1).reciprocal()).sum(),
    "log, sin, pow (inputs)": lambda x: ((x * x + 1).log() * x.sin() + x ** 3).sum(),
    "relu (threshold_backward)": lambda x: (x.relu() * x * x).sum(),
    "a product and a mean": lambda x: (x.view(2, 2) @ x.view(2, 2).t()).exp().mean(),
}


@pytest.mark.parametrize("name", list(SCALAR_FUNCTIONS))
def test_the_tangent_of_a_recorded_gradient_is_a_hessian_vector_product(torch, name):
    f = SCALAR_FUNCTIONS[name]

    def program(m):
        x = fad(m).make_dual(m.tensor(V, requires_grad=True), m.tensor(TV))
        (g,) = m.autograd.grad(f(x), x, create_graph=True)
        return g

    expected, got = run(torch, program), run(minigrad, program)
    assert_same(expected, got, exact=False)
    # and it is the Hessian times the tangent (checked by central differences)
    step = 1e-6
    grads = []
    for sign in (1, -1):
        x = minigrad.tensor(V + sign * step * TV, requires_grad=True)
        grads.append(minigrad.autograd.grad(f(x), x)[0].numpy())
    np.testing.assert_allclose(got[0][1], (grads[0] - grads[1]) / (2 * step), rtol=1e-5,
                               atol=1e-7)


def test_a_released_saved_output_drops_its_tangent_with_it():
    with minigrad.autograd.forward_ad.dual_level():
        x = fad(minigrad).make_dual(minigrad.tensor(V, requires_grad=True), minigrad.tensor(TV))
        y = x.exp()
        saved = y.grad_fn._raw_saved_result
        assert saved._fw_output is y
        y.sum().backward()
        assert saved._fw_output is None  # (released: nothing keeps the output alive)


# -- custom Functions ------------------------------------------------------------------------


def _scaled(m, slope, *, materialize=True, returns=None):
    """(a * b * k, a + 1) with jvp (ta * slope + tb, ta), or `returns(ta)` instead."""

    class Scaled(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            ctx.save_for_forward(a, b)
            ctx.set_materialize_grads(materialize)
            return a * b * k, a + 1

        @staticmethod
        def backward(ctx, g1, g2):
            return None, None, None

        @staticmethod
        def jvp(ctx, ta, tb, tk):
            a, b = ctx.saved_tensors
            assert tk is None
            if returns is not None:
                return returns(ta)
            extra = 0 if tb is None else tb * a
            return ta * b * slope + extra, ta.clone()

    return Scaled


FUNCTION_PROGRAMS = {
    "a tangent for one input": lambda m: _scaled(m, 5.0).apply(dual(m, V, TV), m.tensor(V), 5.0),
    "tangents for both": lambda m: _scaled(m, 5.0).apply(dual(m, V, TV), dual(m, TV, V), 5.0),
    "no materialized zeros": lambda m: _scaled(m, 5.0, materialize=False).apply(
        dual(m, V, TV), m.tensor(V), 5.0),
    "a dual that requires grad": lambda m: _scaled(m, 2.0).apply(
        fad(m).make_dual(m.tensor(V, requires_grad=True) * 1, m.tensor(TV)), m.tensor(V), 2.0),
    "in place": lambda m: _in_place(m),
}


def _in_place(m):
    class Doubled(m.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, ta):
            ta.mul_(2)
            return ta

    tangent = m.tensor(TV)
    out = Doubled.apply(fad(m).make_dual(m.tensor(V), tangent))
    return out, tangent + 0  # (the tangent object itself was doubled in place)


@pytest.mark.parametrize("name", list(FUNCTION_PROGRAMS))
def test_a_custom_functions_jvp_gives_the_tangents(torch, name):
    assert_same(run(torch, FUNCTION_PROGRAMS[name]), run(minigrad, FUNCTION_PROGRAMS[name]))


@pytest.mark.parametrize("returns", [
    lambda ta: ta,  # one tangent for two outputs
    lambda ta: (ta, ta, ta),  # three
    lambda ta: (ta[:2], ta),  # the wrong size
])
def test_a_jvp_returning_the_wrong_tangents_gets_pytorchs_error(torch, returns):
    def program(m):
        with fad(m).dual_level():
            return _scaled(m, 1.0, returns=returns).apply(dual(m, V, TV), m.tensor(V), 1.0)

    assert raised(lambda: program(torch)) == raised(lambda: program(minigrad))


def test_a_function_with_jvp_still_runs_outside_forward_mode(torch):
    for m in (torch, minigrad):
        a, b = _scaled(m, 5.0).apply(m.tensor(A), m.tensor(A), 2.0)
        np.testing.assert_array_equal(a.numpy(), A * A * 2)
        with fad(m).dual_level():  # (a level, but no dual input: forward only)
            a, _ = _scaled(m, 5.0).apply(m.tensor(A), m.tensor(TA), 2.0)
            assert fad(m).unpack_dual(a).tangent is None
