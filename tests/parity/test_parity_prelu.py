"""prelu against PyTorch: the weight viewed to broadcast (ViewBackward0), the
PreluKernelBackward0 node and what it saves, both gradients (the weight's summed from
the input's shape), the PreluKernelBackwardBackward0 a `create_graph=True` backward
records (second and third order), the tangent, the errors, and nn.PReLU."""

from __future__ import annotations

import pytest
from parity_harness import check, raised

import minigrad

V = [0.5, -1.0, 0.0, -2.0, 3.0, -0.5, 1.5, -0.25, -3.0, 2.0, 0.75, -1.25]

# name -> (input shape, weight values)
CASES = {
    "one weight, 2-D": ((2, 6), [0.25]),
    "a weight per channel, 2-D": ((4, 3), [0.25, -0.5, 2.0]),
    "a weight per channel, 3-D": ((2, 3, 2), [0.25, -0.5, 2.0]),
    "a weight per channel, 4-D": ((1, 2, 3, 2), [0.1, -1.5]),
    "1-D input, one weight": ((12,), [0.3]),
    "1-D input, a 0-d weight": ((12,), 0.3),
    "0-d input, a 0-d weight": ((), 0.3),
    "a 0-d weight, 3-D": ((2, 3, 2), -0.4),
}


def _inputs(c, name, dtype="float64"):
    shape, weight = CASES[name]
    n = 1
    for s in shape:
        n *= s
    x = c.leaf(V[:n], dtype)
    w = c.leaf(weight, dtype)
    return (x.view(shape) if shape else x.view(())), w


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(CASES))
def test_prelu(torch, name, dtype):
    def program(c):
        x, w = _inputs(c, name, dtype)
        return c.keep(c.m.nn.functional.prelu(x * 1.5, w) * 2)

    check(torch, program)


@pytest.mark.parametrize("order", [2, 3])
@pytest.mark.parametrize("name", list(CASES))
def test_prelu_differentiated_again(torch, name, order):
    def program(c):
        x, w = _inputs(c, name)
        y = c.m.prelu(x * x - 0.5, w * w)
        grads = c.m.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        if order == 3:
            grads = c.m.autograd.grad(sum((g * g).sum() for g in grads), (x, w),
                                      create_graph=True)
        return c.keep(*grads)

    check(torch, program)


def test_prelu_one_gradient_only(torch):
    """Only the input's gradient wanted, then differentiated again: the formulas of
    PreluKernelBackwardBackward0 for a missing output gradient."""
    def program(c):
        x, w = _inputs(c, "a weight per channel, 2-D")
        y = c.m.nn.functional.prelu(x * x - 1, w * 3)
        (gx,) = c.m.autograd.grad(y.sum(), x, create_graph=True)
        (gw,) = c.m.autograd.grad((y * y).sum(), w, create_graph=True)
        return c.keep(gx), c.keep(gw)

    check(torch, program)


def test_prelu_tangent(torch):
    def run(m):
        fa = m.autograd.forward_ad
        x0 = m.tensor(V, dtype=m.float64).view(4, 3)
        w0 = m.tensor([0.25, -0.5, 2.0], dtype=m.float64)
        out = []
        with fa.dual_level():
            for tangents in [(True, True), (True, False), (False, True)]:
                x = fa.make_dual(x0, m.ones(4, 3, dtype=m.float64) * 0.5) if tangents[0] else x0
                w = fa.make_dual(w0, m.tensor([1.0, 2.0, -1.0], dtype=m.float64)) \
                    if tangents[1] else w0
                y = fa.unpack_dual(m.nn.functional.prelu(x, w))
                out.append((y.primal.tolist(), y.tangent.tolist()))
        return out

    assert run(minigrad) == run(torch)


BAD = {
    "dtypes differ": lambda m: m.prelu(m.ones(2, 3, dtype=m.float64), m.ones(3)),
    "weights for other channels": lambda m: m.prelu(m.ones(2, 3), m.ones(2)),
    "a 2-D weight": lambda m: m.prelu(m.ones(2, 3), m.ones(1, 3)),
    "a 0-d input, weights per channel": lambda m: m.prelu(m.tensor(1.0), m.ones(3)),
    "a number for the weight": lambda m: m.nn.functional.prelu(m.ones(2, 3), 0.5),
    "integers": lambda m: m.prelu(m.ones(2, 3, dtype=m.int64), m.ones(3, dtype=m.int64)),
}


@pytest.mark.parametrize("case", list(BAD))
def test_prelu_errors(torch, case):
    assert raised(lambda: BAD[case](minigrad)) == raised(lambda: BAD[case](torch)) != (
        "no error", "")


def test_prelu_module(torch):
    def program(c):
        layer = c.m.nn.PReLU(3, init=0.1, dtype=c.m.float64)
        c.keep(layer.weight)
        x = c.leaf(V).view(4, 3)
        return c.keep(layer(x * 2 - 1)), c.keep(c.m.tensor(float(len(repr(layer)))))

    check(torch, program)
    assert repr(minigrad.nn.PReLU(2)) == repr(torch.nn.PReLU(2))
