"""`as_strided` against PyTorch: the view (values, strides, `_base`, version), its
AsStridedBackward0 node and saved values, its gradient (PyTorch's
`as_strided_backward`: elements seen twice get both gradients, elements outside the
input's memory none), the gradient taken with `create_graph=True` and differentiated
again, and its errors."""

from __future__ import annotations

import pytest
from parity_harness import check, raised

import minigrad

B = [0.5, -1.5, 2.0, 0.25, 1.0, -0.75, 3.0, -2.0]

# f(m, b) for b a float64 tensor of 8 elements that requires grad (a leaf's product).
PROGRAMS = {
    "a window of a leaf's product": lambda m, b: (b * 1).as_strided((2, 2), (1, 2), 1),
    "by the function": lambda m, b: m.as_strided(b * 1, (3,), (2,)),
    "of a 2-D view, offset kept": lambda m, b: (b * 1).view(2, 4)[1:].as_strided((2, 2),
                                                                                 (2, 1)),
    "starting before its input": lambda m, b: (b * 1)[2:].as_strided((2, 2), (1, 2), 1),
    "reaching past its input": lambda m, b: (b * 1)[:4].as_strided((3,), (2,), 1),
    "elements seen twice": lambda m, b: (b * 1).view(2, 4).t().as_strided((3, 3), (1, 1), 0),
    "expanded by a 0 stride": lambda m, b: (b * 1).as_strided((3, 2), (0, 1), 2),
    "a size-1 dim": lambda m, b: (b * 1).as_strided((2, 1, 3), (3, 5, 1)),
    "of a transposed view": lambda m, b: (b * 1).view(2, 4).t().as_strided((4, 2), (1, 4)),
    "of an expanded input": lambda m, b: (b[:3] * 1).expand(2, 3).as_strided((2, 2), (1, 1)),
    "no elements": lambda m, b: (b * 1).as_strided((0, 3), (1, 1), 100),
    "0-d": lambda m, b: (b * 1).as_strided((), (), 3),
    "twice": lambda m, b: (b * 1).as_strided((4,), (2,)).as_strided((2, 2), (1, 3), 1),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_as_strided_view_and_gradient(torch, name):
    def program(c):
        b = c.leaf(B)
        y = PROGRAMS[name](c.m, b)
        return c.keep(y * y if y.numel() else y)

    check(torch, program)


def test_as_strided_of_a_leaf(torch):
    def program(c):
        b = c.leaf(B)
        return c.keep(b.as_strided((3, 2), (2, 1), 1).exp())

    check(torch, program)


def test_as_strided_saves_the_offset_given(torch):
    def program(c):
        b = c.leaf(B)
        x = b * 1
        return c.keep(x[1:].as_strided((2,), (3,))), c.keep(x.as_strided((2,), (3,), 2))

    check(torch, program)


CREATE_GRAPH = ["a window of a leaf's product", "of a 2-D view, offset kept",
                "starting before its input", "reaching past its input",
                "expanded by a 0 stride", "a size-1 dim", "of a transposed view",
                "elements seen twice", "of an expanded input"]


@pytest.mark.parametrize("name", CREATE_GRAPH)
def test_as_strided_gradient_with_create_graph(torch, name):
    def program(c):
        b = c.leaf(B)
        y = PROGRAMS[name](c.m, b * b)
        (g,) = c.m.autograd.grad((y * y).sum(), b, create_graph=True)
        return c.keep(g)

    check(torch, program)


def test_as_strided_tangent(torch):
    def run(m):
        fa = m.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(m.tensor(B, dtype=m.float64), m.arange(8.0, dtype=m.float64))
            y = fa.unpack_dual((x * 2).view(2, 4).t().as_strided((3, 2), (1, 2), 1))
            return y.primal.tolist(), y.tangent.tolist(), y.tangent.stride()

    assert run(minigrad) == run(torch)


BAD = {
    "a number for the size": lambda m, x: x.as_strided(2, (1,)),
    "a number for the size, function": lambda m, x: m.as_strided(x, 2, (1,)),
    "a number for the stride": lambda m, x: x.as_strided((2,), 1),
    "a float in the size": lambda m, x: x.as_strided((2.0,), (1,)),
    "a float offset": lambda m, x: m.as_strided(x, (2,), (1,), 1.5),
    "not a tensor": lambda m, x: m.as_strided(2.0, (2,), (1,)),
    "out of bounds": lambda m, x: x.as_strided((2, 2), (1, 2), 5),
    "a negative offset": lambda m, x: x.as_strided((2,), (1,), -1),
    "a negative stride": lambda m, x: x.as_strided((2,), (-1,)),
    "lengths that differ": lambda m, x: x.as_strided((2,), (1, 2)),
    "a negative size": lambda m, x: x.as_strided((-2,), (1,)),
}


@pytest.mark.parametrize("case", list(BAD))
def test_as_strided_errors(torch, case):
    def attempt(m):
        return raised(lambda: BAD[case](m, m.arange(6.0).reshape(2, 3)))

    assert attempt(minigrad) == attempt(torch) != ("no error", "")
