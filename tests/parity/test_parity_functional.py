"""`autograd.functional` against PyTorch: jacobian, hessian, vjp, jvp, hvp, vhp.

Each call is compared by its whole answer: the nesting of tuples (a tensor where
PyTorch answers a tensor, a tuple of tuples where it answers one), and every
tensor's values, dtype, shape, `requires_grad` and `grad_fn` name. With
`create_graph=True` the answers go through the parity harness too, which compares
the graph they have node for node and differentiates them once more. Bad arguments
and strict mode must raise PyTorch's errors, word for word.
"""

from __future__ import annotations

import numpy as np
import pytest
from parity_harness import check, raised

import minigrad

X = [0.5, -1.0, 2.0]
Y = [[1.0, 2.0], [0.5, -0.25]]


def _leaves(m, requires_grad=True):
    x = m.tensor(X, dtype=m.float64, requires_grad=requires_grad)
    y = m.tensor(Y, dtype=m.float64, requires_grad=requires_grad)
    return x, y


def _describe(answer):
    """The answer as plain data: its nesting, and each tensor's observable state."""
    if isinstance(answer, tuple):
        return tuple(_describe(a) for a in answer)
    if answer is None or isinstance(answer, (bool, int, float)):
        return answer
    fn = answer.grad_fn
    return ("tensor", str(answer.dtype).split(".")[-1], tuple(answer.shape),
            answer.detach().numpy().round(12).tolist(), answer.requires_grad,
            None if fn is None else type(fn).__name__)


def _same(torch, call):
    """`call(m, F)` (F: the module's autograd.functional) answers the same."""
    expected = _describe(call(torch, torch.autograd.functional))
    assert _describe(call(minigrad, minigrad.autograd.functional)) == expected
    return expected


# (name, call): every function, single tensors and tuples, plain and with a graph.
CALLS = {
    "jacobian": lambda m, F: F.jacobian(lambda x: x.exp() * x, _leaves(m)[0]),
    "jacobian of a 2-d function": lambda m, F: F.jacobian(
        lambda y: y.mm(y).tanh(), _leaves(m)[1]),
    "jacobian of tuples": lambda m, F: F.jacobian(
        lambda x, y: (x.sin(), (y * y).sum() + x.sum()), _leaves(m)),
    "jacobian of an unused input": lambda m, F: F.jacobian(
        lambda x, y: x * 2, _leaves(m)),
    "jacobian of a constant": lambda m, F: F.jacobian(lambda x: m.ones(2), _leaves(m)[0]),
    "jacobian of inputs not requiring grad": lambda m, F: F.jacobian(
        lambda x: x ** 2, _leaves(m, requires_grad=False)[0]),
    "jacobian of a float32 output": lambda m, F: F.jacobian(
        lambda x: x.float() * 3, _leaves(m)[0]),
    "hessian": lambda m, F: F.hessian(lambda x: (x ** 3).sum(), _leaves(m)[0]),
    "hessian of tuples": lambda m, F: F.hessian(
        lambda x, y: x.exp().sum() * y.sum() + (y ** 2).sum(), _leaves(m)),
    "hessian of a linear function": lambda m, F: F.hessian(lambda x: x.sum() * 2, _leaves(m)[0]),
    "vjp": lambda m, F: F.vjp(lambda x: x.exp() * 2, _leaves(m)[0],
                              m.tensor([1.0, 0.5, -2.0], dtype=m.float64)),
    "vjp of a scalar, no v": lambda m, F: F.vjp(lambda x: (x * x).sum(), _leaves(m)[0]),
    "vjp of tuples": lambda m, F: F.vjp(
        lambda x, y: (x * 2, y.sin()), _leaves(m),
        (m.ones(3, dtype=m.float64), m.ones(2, 2, dtype=m.float64))),
    "jvp": lambda m, F: F.jvp(lambda x: x.exp() * x.sin(), _leaves(m)[0],
                              m.tensor([1.0, 0.5, -2.0], dtype=m.float64)),
    "jvp of tuples": lambda m, F: F.jvp(
        lambda x, y: (x.sum() * y, y.tanh()), _leaves(m),
        (m.ones(3, dtype=m.float64), m.full((2, 2), 0.5, dtype=m.float64))),
    "jvp of a one-element input, no v": lambda m, F: F.jvp(
        lambda x: x * 3, m.tensor([2.0], dtype=m.float64)),
    "vhp": lambda m, F: F.vhp(lambda x: (x.exp() * x).sum(), _leaves(m)[0],
                              m.tensor([1.0, 0.5, -2.0], dtype=m.float64)),
    "vhp of tuples": lambda m, F: F.vhp(
        lambda x, y: (x ** 2).sum() * y.sum(), _leaves(m),
        (m.ones(3, dtype=m.float64), m.ones(2, 2, dtype=m.float64))),
    "hvp": lambda m, F: F.hvp(lambda x: (x.tanh() * x).sum(), _leaves(m)[0],
                              m.tensor([1.0, 0.5, -2.0], dtype=m.float64)),
    "hvp of tuples": lambda m, F: F.hvp(
        lambda x, y: (x.sigmoid() ** 2).sum() * y.sum(), _leaves(m),
        (m.ones(3, dtype=m.float64), m.ones(2, 2, dtype=m.float64))),
    "hvp of a linear function": lambda m, F: F.hvp(
        lambda x: (x * 2).sum(), _leaves(m)[0], m.ones(3, dtype=m.float64)),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", list(CALLS))
def test_answers_and_their_structure(torch, name, create_graph):
    def call(m, F):
        with _create_graph(F, create_graph):
            return CALLS[name](m, F)

    _same(torch, call)


class _create_graph:  # noqa: N801 - used as a plain `with`
    """Pass `create_graph` to every call of the module's functions inside that does
    not say (hessian's own calls of jacobian do)."""

    NAMES = ("jacobian", "hessian", "vjp", "jvp", "hvp", "vhp")

    def __init__(self, F, value: bool) -> None:
        self.F, self.value, self.saved = F, value, {}

    def __enter__(self):
        for name in self.NAMES:
            fn = self.saved[name] = getattr(self.F, name)
            setattr(self.F, name, lambda *a, fn=fn, **k: fn(
                *a, **{"create_graph": self.value, **k}))

    def __exit__(self, *exc):
        for name, fn in self.saved.items():
            setattr(self.F, name, fn)


@pytest.mark.parametrize("name", ["jacobian", "jacobian of tuples", "hessian",
                                  "hessian of tuples", "vjp", "jvp", "vhp", "hvp"])
def test_graphs_of_answers_with_create_graph(torch, name):
    """The graph behind each answer (StackBackward0 over the rows for a Jacobian,
    the double backward trick's nodes for jvp and hvp), and its gradients."""
    def program(c):
        with _create_graph(c.m.autograd.functional, True):
            answer = CALLS[name](c.m, c.m.autograd.functional)
        return c.keep(*_flat(answer))

    check(torch, program)


def _flat(answer) -> list:
    if isinstance(answer, tuple):
        return [t for a in answer for t in _flat(a)]
    return [answer]


def test_a_captured_input_is_not_the_one_differentiated(torch):
    """`func` gets new tensor objects: a tensor it captures from outside counts as a
    constant (PyTorch's issue 32576)."""
    def call(m, F):
        x = _leaves(m)[0]
        return F.jacobian(lambda inp: inp * x, x)

    _same(torch, call)


def test_a_hessian_vector_product_needs_no_hessian(torch):
    x = np.linspace(-1, 1, 6)

    def call(m, F):
        t = m.tensor(x, dtype=m.float64)
        v = m.tensor(x[::-1].copy(), dtype=m.float64)
        h = F.hessian(lambda t: (t.sin() * t).sum(), t)
        return F.hvp(lambda t: (t.sin() * t).sum(), t, v)[1], h.mv(v)

    hv, hv_from_hessian = _same(torch, call)
    np.testing.assert_allclose(hv[3], hv_from_hessian[3], rtol=1e-12)


def test_through_a_custom_function(torch):
    """A custom Function's backward, run with grad mode on, records a graph: the
    Hessian goes through it."""
    def call(m, F):
        class Cube(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 3 * x ** 2

        return F.hessian(lambda x: Cube.apply(x).sum(), _leaves(m)[0], create_graph=True)

    _same(torch, call)


# -- errors ---------------------------------------------------------------------------------

ERRORS = {
    "inputs not tensors": lambda m, F: F.jacobian(lambda x: x, [1.0]),
    "a tuple with a number": lambda m, F: F.vjp(lambda x, y: x, (_leaves(m)[0], 2)),
    "output not a tensor": lambda m, F: F.jacobian(lambda x: 3.0, _leaves(m)[0]),
    "output a list": lambda m, F: F.jacobian(lambda x: [x * 2, x.exp()], _leaves(m)[0]),
    "vjp without v": lambda m, F: F.vjp(lambda x: x * 2, _leaves(m)[0]),
    "jvp without v": lambda m, F: F.jvp(lambda x: x * 2, _leaves(m)[0]),
    "hvp without v": lambda m, F: F.hvp(lambda x: x.sum(), _leaves(m)[0]),
    "vhp without v": lambda m, F: F.vhp(lambda x: x.sum(), _leaves(m)[0]),
    "v of the wrong size": lambda m, F: F.vjp(lambda x: x * 2, _leaves(m)[0], m.ones(2)),
    "v of the wrong size, tuple": lambda m, F: F.jvp(
        lambda x, y: x, _leaves(m), (m.ones(3), m.ones(2))),
    "v of the wrong length": lambda m, F: F.jvp(lambda x, y: x, _leaves(m), (m.ones(3),)),
    "v a tuple for one tensor": lambda m, F: F.vjp(
        lambda x: x * 2, _leaves(m)[0], (m.ones(3), m.ones(3))),
    "v not a tensor": lambda m, F: F.vjp(lambda x: x * 2, _leaves(m)[0], [1.0, 2.0, 3.0]),
    "hessian of a vector function": lambda m, F: F.hessian(lambda x: x * 2, _leaves(m)[0]),
    "hessian of a tuple": lambda m, F: F.hessian(lambda x: (x.sum(),), _leaves(m)[0]),
    "hvp of a vector function": lambda m, F: F.hvp(
        lambda x: x * 2, _leaves(m)[0], m.ones(3, dtype=m.float64)),
    "vhp of a tuple": lambda m, F: F.vhp(
        lambda x: (x.sum(), x.sum()), _leaves(m)[0], m.ones(3, dtype=m.float64)),
    "unknown strategy": lambda m, F: F.jacobian(lambda x: x, _leaves(m)[0], strategy="fwd"),
    "unknown hessian strategy": lambda m, F: F.hessian(
        lambda x: x.sum(), _leaves(m)[0], outer_jacobian_strategy="x"),
    "forward mode with create_graph": lambda m, F: F.jacobian(
        lambda x: x, _leaves(m)[0], create_graph=True, strategy="forward-mode"),
    "forward mode with strict": lambda m, F: F.jacobian(
        lambda x: x, _leaves(m)[0], strict=True, strategy="forward-mode"),
    "forward mode without vectorize": lambda m, F: F.jacobian(
        lambda x: x, _leaves(m)[0], strategy="forward-mode"),
    "vectorize with strict": lambda m, F: F.jacobian(
        lambda x: x, _leaves(m)[0], strict=True, vectorize=True),
}

STRICT = {
    "an output not requiring grad": lambda m, F: F.vjp(
        lambda x: m.ones(3, dtype=m.float64), _leaves(m)[0], m.ones(3, dtype=m.float64),
        strict=True),
    "an input not used": lambda m, F: F.vjp(
        lambda x, y: x * 2, _leaves(m), m.ones(3, dtype=m.float64), strict=True),
    "jacobian, an input not used": lambda m, F: F.jacobian(
        lambda x, y: x * 2, _leaves(m), strict=True),
    "jacobian of a linear function with create_graph": lambda m, F: F.jacobian(
        lambda x: x * 2, _leaves(m)[0], strict=True, create_graph=True),
    "jvp, an input not used": lambda m, F: F.jvp(
        lambda x, y: x * 2, _leaves(m), (m.ones(3, dtype=m.float64),
                                         m.ones(2, 2, dtype=m.float64)), strict=True),
    "hessian of a linear function": lambda m, F: F.hessian(
        lambda x: x.sum(), _leaves(m)[0], strict=True),
    "hessian, an input not used": lambda m, F: F.hessian(
        lambda x, y: (x ** 2).sum(), _leaves(m), strict=True),
    "vhp of a linear function": lambda m, F: F.vhp(
        lambda x: x.sum(), _leaves(m)[0], m.ones(3, dtype=m.float64), strict=True),
    "vhp, an input not used twice": lambda m, F: F.vhp(
        lambda x, y: (x ** 2).sum() + y.sum(), _leaves(m),
        (m.ones(3, dtype=m.float64), m.ones(2, 2, dtype=m.float64)), strict=True),
    "hvp of a linear function": lambda m, F: F.hvp(
        lambda x: x.sum(), _leaves(m)[0], m.ones(3, dtype=m.float64), strict=True),
    "hvp, an input not used twice": lambda m, F: F.hvp(
        lambda x, y: (x ** 2).sum() + y.sum(), _leaves(m),
        (m.ones(3, dtype=m.float64), m.ones(2, 2, dtype=m.float64)), strict=True),
    "vjp with create_graph": lambda m, F: F.vjp(
        lambda x: x * 2, _leaves(m)[0], m.ones(3, dtype=m.float64), strict=True,
        create_graph=True),
}


@pytest.mark.parametrize("name", list(ERRORS) + [f"strict: {n}" for n in STRICT])
def test_errors(torch, name):
    call = ERRORS.get(name) or STRICT[name.removeprefix("strict: ")]
    expected = raised(lambda: call(torch, torch.autograd.functional))
    assert expected[0] != "no error"
    assert raised(lambda: call(minigrad, minigrad.autograd.functional)) == expected


@pytest.mark.parametrize("call", [
    lambda F, x: F.jacobian(lambda x: x * 2, x, vectorize=True),
    lambda F, x: F.jacobian(lambda x: x * 2, x, vectorize=True, strategy="forward-mode"),
    lambda F, x: F.hessian(lambda x: x.sum(), x, vectorize=True),
])
def test_vectorize_is_refused_clearly(call):
    """vmap is not there: minigrad says so (PyTorch answers)."""
    x = minigrad.tensor(X, dtype=minigrad.float64)
    with pytest.raises(NotImplementedError, match="minigrad does not implement"):
        call(minigrad.autograd.functional, x)


class _OpaqueBackward0(minigrad.autograd.graph.Node):
    """A node with a plain backward only (no formulas as minigrad code)."""

    def backward(self, grad):
        return (grad * 2,)


def _opaque_double(x):
    from minigrad.autograd.record import record

    y = minigrad.Tensor._make(x.detach().numpy() * 2)
    record(_OpaqueBackward0, y, x)
    return y


def test_a_node_without_a_recordable_formula_is_named():
    """jvp and hessian differentiate a gradient: through a node minigrad cannot
    record, the error names that node."""
    x = minigrad.tensor(X, dtype=minigrad.float64)
    with pytest.raises(NotImplementedError, match="backward of _OpaqueBackward0"):
        minigrad.autograd.functional.jvp(lambda x: _opaque_double(x) * x, x,
                                         minigrad.ones(3).double())
    with pytest.raises(NotImplementedError, match="backward of _OpaqueBackward0"):
        minigrad.autograd.functional.hessian(lambda x: (_opaque_double(x) * x).sum(), x)
