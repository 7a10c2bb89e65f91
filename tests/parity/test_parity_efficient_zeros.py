"""sgn's gradient is PyTorch's efficient zero tensor (a ZeroTensor): its mul and div
compute nothing with one (a product with it, or it divided by anything, is one; anything
divided by it is +inf everywhere), in a plain backward and in a `create_graph=True` one
alike, and a tensor of one shows row-major strides (it has no memory to stride over).

`test_parity_grad_layouts.py` compares the plain backward's values; here the harness
compares the graph, values, strides and versions of gradients taken with
`create_graph=True`, then differentiated again."""

from __future__ import annotations

import pytest
from parity_harness import check, raised

INF = float("inf")

# f, whose gradient meets sgn's zero in `f(x).sgn()`: through its formula's mul or div.
THROUGH = {
    "log": lambda m, x: x.log(),  # (grad / self, at 0: 0 / 0)
    "log2": lambda m, x: x.log2(),
    "times inf": lambda m, x: x * INF,
    "times a tensor with inf": lambda m, x: x * m.tensor([INF, 1.0, 0.0], dtype=m.float64),
    "over 0": lambda m, x: x / 0.0,
    "over a tensor with 0": lambda m, x: x / m.tensor([0.0, 0.0, 2.0], dtype=m.float64),
    "log times 2": lambda m, x: x.log() * 2,
    "log over a 0-d 2": lambda m, x: x.log() / m.tensor(2.0, dtype=m.float64),
    "square root by a power": lambda m, x: x ** 0.5,
    "to the power -1": lambda m, x: x.pow(-1.0),
    "sqrt": lambda m, x: x.sqrt(),
    "reciprocal": lambda m, x: x.reciprocal(),  # (-grad: materialised, as in PyTorch)
}


@pytest.mark.parametrize("name", list(THROUGH))
def test_sgns_zero_passes_through_a_gradient_taken_with_create_graph(torch, name):
    def program(c):
        x = c.leaf([0.0, 1.0, 4.0])
        y = THROUGH[name](c.m, x).sgn()
        (g,) = c.m.autograd.grad(y.sum(), x, create_graph=True)
        return c.keep(g)  # (the harness's backward differentiates it again)

    check(torch, program)


def test_sgns_zero_passes_through_backward_with_create_graph(torch):
    def program(c):
        x = c.leaf([0.0, -1.0, 2.0])
        (x.log() * INF).sgn().sum().backward(create_graph=True)
        g, x.grad = x.grad, None
        return c.keep(g)

    check(torch, program)


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_of_sgn_is_row_major(torch, create_graph):
    """`autograd.grad` returns sgn's zero as it is: row-major and contiguous in PyTorch
    (minigrad's had shown its array's zero strides)."""
    def program(c):
        x = c.leaf([[0.0, -1.0, 2.0], [3.0, 0.5, -0.5]])
        (g,) = c.m.autograd.grad(x.sgn().sum(), x, create_graph=create_graph)
        contiguous = c.m.tensor(g.is_contiguous())
        return c.keep(g), c.keep(contiguous)

    check(torch, program)


def test_dividing_by_sgns_zero_is_inf_everywhere(torch):
    """A tensor over sgn's zero gradient: +inf everywhere, and so is the backward's
    `grad / other` (minigrad's had been +-inf and nan)."""
    def program(c):
        x = c.leaf([0.0, -1.0, 2.0])
        w = c.leaf([0.0, -3.0, 2.0])
        (g,) = c.m.autograd.grad(x.sgn().sum(), x)
        return c.keep(w / g), c.keep(2.0 / g), c.keep(w * g), c.keep(g / w)

    check(torch, program)


@pytest.mark.parametrize("op", ["mul_", "zero_", "fill_", "add_", "sin_"])
def test_sgns_zero_is_immutable(torch, op):
    import minigrad

    args = {"mul_": (2.0,), "fill_": (1.0,), "add_": (1.0,)}.get(op, ())

    def attempt(m):
        x = m.tensor([0.0, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(x.sgn().sum(), x)
        return raised(lambda: getattr(g, op)(*args))

    assert attempt(minigrad) == attempt(torch)


def test_sgns_zero_is_its_own_contiguous_form(torch):
    import minigrad

    def same(m):
        x = m.tensor([0.0, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(x.sgn().sum(), x)
        return g.contiguous() is g

    assert same(torch) and same(minigrad)
