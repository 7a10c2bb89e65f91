"""Forward mode through what backward records, and through custom Functions, against
PyTorch.

* Forward over reverse: inside a dual level, `autograd.grad(..., create_graph=True)`
  records the gradient from each node's formula, and the formula's ops carry the
  tangents along, so the gradient's tangent is a Hessian-vector product (without
  create_graph too: nothing is recorded, but the tangent is there). A formula
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
from float_policy import CHAIN, assert_floats
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
    "gelu (gelu_backward)": lambda x: (x.exp() * _lib(x).nn.functional.gelu(x)
                                       + _lib(x).nn.functional.gelu(x, approximate="tanh")).sum(),
    "max along a dim (scatter)": lambda x: (x.view(2, 2).max(1).values ** 3).sum(),
    "embedding (embedding_dense_backward)": lambda x: (
        _lib(x).nn.functional.embedding(_index(x), x.view(2, 2)) ** 3).sum(),
    "atan2 (masked_fill)": lambda x: _lib(x).atan2(x, x * x + 1).sum(),
    "smooth_l1 and bce losses": lambda x: (
        _lib(x).nn.functional.smooth_l1_loss(x * 2, x.detach() * 0 + 0.5, beta=0.5)
        + _lib(x).nn.functional.binary_cross_entropy(x.sigmoid(), x.detach() * 0 + 0.25)
        + _lib(x).nn.functional.binary_cross_entropy_with_logits(
            x * 3, x.detach() * 0 + 0.75, pos_weight=x.detach() * 0 + 2.0)),
    "a product and a mean": lambda x: (x.view(2, 2) @ x.view(2, 2).t()).exp().mean(),
    "prod with a zero factor (cumprod_jvp)": lambda x: (x * _zero_factor(x)).prod() * x.sum(),
    "prod along a dim with zeros (cumprod_jvp)": lambda x: (
        (x * _zero_factor(x)[[1, 0, 3, 2]]).view(2, 2).prod(0) * x[:2]).exp().sum(),
}


def _zero_factor(x):
    """A factor with one zero: prod's gradient then comes from cumprods (PyTorch's
    prod_safe_zeros_backward), whose tangents are cumprod_jvp's."""
    return _lib(x).tensor([1.0, 0.0, 1.5, -2.0], dtype=x.dtype)


def _lib(x):
    """The library `x` belongs to (the functions run under both)."""
    return __import__(type(x).__module__.split(".")[0])


def _index(x):
    return _lib(x).tensor([1, 0, 1])


@pytest.mark.parametrize("name", list(SCALAR_FUNCTIONS))
def test_the_tangent_of_a_recorded_gradient_is_a_hessian_vector_product(torch, name):
    f = SCALAR_FUNCTIONS[name]

    def program(m):
        x = fad(m).make_dual(m.tensor(V, requires_grad=True), m.tensor(TV))
        (g,) = m.autograd.grad(f(x), x, create_graph=True)
        return g

    expected, got = run(torch, program), run(minigrad, program)
    assert_same(expected, got)
    # and it is the Hessian times the tangent (checked by central differences)
    step = 1e-6
    grads = []
    for sign in (1, -1):
        x = minigrad.tensor(V + sign * step * TV, requires_grad=True)
        grads.append(minigrad.autograd.grad(f(x), x)[0].numpy())
    np.testing.assert_allclose(got[0][1], (grads[0] - grads[1]) / (2 * step), rtol=1e-5,
                               atol=1e-7)


@pytest.mark.parametrize("name", list(SCALAR_FUNCTIONS))
def test_a_gradient_taken_without_create_graph_has_its_tangent_too(torch, name):
    """Inside a dual level, `autograd.grad` without create_graph records no graph, yet
    PyTorch's gradient has a tangent: the formulas' ops carry it. So does minigrad's."""
    f = SCALAR_FUNCTIONS[name]

    versions = {}

    def program(m):
        x = fad(m).make_dual(m.tensor(V, requires_grad=True), m.tensor(TV))
        (g,) = m.autograd.grad(f(x), x)
        assert g.grad_fn is None and not g.requires_grad
        # (with grad mode off, a second gradient stream is added in place: version 1)
        versions[m.__name__] = g._version
        return g

    assert_same(run(torch, program), run(minigrad, program))
    assert versions["minigrad"] == versions["torch"]


# a second derivative's graph reaches the ops backward formulas call (gather, scatter_add,
# masked_select, masked_scatter, index_add, index_select)
SECOND_DERIVATIVES = {
    "max along a dim": "max along a dim (scatter)",
    "embedding": "embedding (embedding_dense_backward)",
    "masked_fill with a tensor value": None,
    "gelu": "gelu (gelu_backward)",
    "prod with a zero factor": "prod with a zero factor (cumprod_jvp)",
}


def _masked_fill_value(x):
    value = (x * x).sum()
    return (x.masked_fill(x > 0, value) ** 3).sum()


@pytest.mark.parametrize("name", list(SECOND_DERIVATIVES))
def test_the_tangent_of_a_second_derivative(torch, name):
    key = SECOND_DERIVATIVES[name]
    f = SCALAR_FUNCTIONS[key] if key else _masked_fill_value

    def program(m):
        x = fad(m).make_dual(m.tensor(V, requires_grad=True), m.tensor(TV))
        (g,) = m.autograd.grad(f(x), x, create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), x, create_graph=True)
        return h

    assert_same(run(torch, program), run(minigrad, program))


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


def test_unpack_duals_primal_is_differentiated_twice_as_in_pytorch(torch):
    """The primal `unpack_dual` gives passes its gradient on unchanged (PyTorch's
    `_fw_primal`: `self: grad`), with create_graph=True too."""
    def program(m):
        x = m.tensor(V, requires_grad=True)
        with fad(m).dual_level():
            d = fad(m).make_dual(x * 1, m.tensor(TV))
            p = fad(m).unpack_dual(d.exp()).primal
        (g,) = m.autograd.grad((p * p).sum(), x, create_graph=True)
        (h,) = m.autograd.grad(g.sum(), x)
        names = [type(n).__name__ if n is not None else None
                 for n, _ in g.grad_fn.next_functions]
        return g.detach().numpy(), h.numpy(), type(g.grad_fn).__name__, names

    want, got = program(torch), program(minigrad)
    assert_floats(got[0], want[0], CHAIN)
    assert_floats(got[1], want[1], CHAIN)
    assert got[2:] == want[2:]
