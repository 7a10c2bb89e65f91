"""What `autograd.grad` returns for a gradient the caller gave, compared with PyTorch.

PyTorch returns the gradient its backward computed, as it is: where every node passed
the caller's `grad_outputs` tensor on unchanged (`x.clone()`, `x + 0`, `+x`), that
tensor itself (`result is g`); where a node viewed it (`x.t()`, `x.view(...)`), a view
sharing its memory and version counter; where one computed a new tensor (`x * 1`), a
tensor of its own. Writing into the result in place shows which.
"""

from __future__ import annotations

import pytest

PROGRAMS = {
    "clone": lambda m, x: x.clone(),
    "plus 0": lambda m, x: x + 0,
    "positive": lambda m, x: +x,
    "expand to its own shape": lambda m, x: x.expand(2, 3),
    "to its own dtype (no node)": lambda m, x: x.to(m.float32),
    "view": lambda m, x: x.view(2, 3),
    "transposed twice": lambda m, x: x.t().t(),
    "contiguous transpose": lambda m, x: x.t().contiguous(),
    "sum over a dim (spread out)": lambda m, x: x.sum(0),
    "times 1": lambda m, x: x * 1,
    "negated twice": lambda m, x: x.neg().neg(),
}


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_grad_returns_the_callers_gradient_as_pytorch_does(torch, program):
    import minigrad

    def run(m):
        x = m.ones(2, 3, requires_grad=True)
        y = PROGRAMS[program](m, x)
        g = m.full(y.shape, 2.0)
        gx, = m.autograd.grad(y, x, g)
        same = gx is g
        stride = gx.stride()
        if 0 not in stride:  # (writing through a 0 stride is refused)
            gx.add_(1)
        return same, stride, gx._version, g._version, g.reshape(-1).tolist()

    assert run(minigrad) == run(torch)


def test_grad_returns_the_same_tensor_for_each_input_it_reached_unchanged(torch):
    import minigrad

    def run(m):
        x = m.ones(2, 3, requires_grad=True)
        y = x.clone()
        g = m.full((2, 3), 2.0, requires_grad=True)
        gx, gy = m.autograd.grad(y.clone(), [x, y], g)
        gc, = m.autograd.grad(x.clone(), x, g, create_graph=True)
        return gx is g, gy is g, gc is g, gx.requires_grad

    assert run(minigrad) == run(torch) == (True, True, True, True)
