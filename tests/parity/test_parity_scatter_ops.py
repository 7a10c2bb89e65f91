"""The ops picking ops' backward formulas call (gather, scatter, scatter_add_,
masked_select, masked_scatter_, index_add), against PyTorch's.

minigrad keeps them with the formulas (PyTorch's `torch.ops.aten`, not its
namespace), so these programs call PyTorch's public forms and minigrad's aten ones:
values, nodes, saved tensors, gradients, and second and third derivatives (each
op's gradient calls another of them: gather's scatter_add, masked_scatter's
masked_select, index_add's index_select).
"""

from __future__ import annotations

import pytest
from parity_harness import check

X = [[0.5, -1.5, 2.0, 0.25], [1.0, -0.75, 3.0, 1.25], [2.5, 1.5, -0.5, -1.0]]
S = [[1.5, 0.5], [-2.0, 3.0], [0.5, 2.0]]


class _Aten:
    """The ops under test, as each library has them."""

    def __init__(self, m) -> None:
        self.m = m
        if m.__name__ == "torch":
            self.gather, self.scatter = m.gather, m.scatter
            self.masked_select, self.index_add = m.masked_select, m.index_add
            self.scatter_ = lambda x, *a: x.scatter_(*a)
            self.scatter_add_ = lambda x, *a: x.scatter_add_(*a)
            self.masked_scatter_ = lambda x, *a: x.masked_scatter_(*a)
            self.index_add_ = lambda x, *a, **k: x.index_add_(*a, **k)
        else:
            from minigrad.ops.formulas import BACKWARD_OPS as ops

            for name in ("gather", "scatter", "masked_select", "index_add", "scatter_",
                         "scatter_add_", "masked_scatter_", "index_add_"):
                setattr(self, name, ops[name])


def _idx(m):
    return m.tensor([[2, 0], [1, 3], [0, 0]])


PROGRAMS = {
    "gather": lambda a, x, s: a.gather(x * 2, 1, _idx(a.m)) ** 2,
    "gather dim 0": lambda a, x, s: a.gather(x.exp(), 0, a.m.tensor([[2, 0, 1], [0, 0, 2]])),
    "gather dim -1": lambda a, x, s: a.gather(x * x, -1, _idx(a.m)).sin(),
    "scatter": lambda a, x, s: a.scatter(x * 2, 1, a.m.tensor([[2, 0], [1, 3], [0, 1]]),
                                         s * s) ** 2,
    # (an index smaller than the source: PyTorch's gradient for it has the index's
    # shape, which its engine refuses)
    "scatter from a larger source": lambda a, x, s: a.scatter(x * 2, 1, _idx(a.m)[:, :1], s),
    "scatter of a number": lambda a, x, s: a.scatter(x.exp(), 0, a.m.tensor([[1, 2]]), 0.5) * x,
    "scatter_ in place": lambda a, x, s: a.scatter_(x * 1, 1, a.m.tensor([[3], [0], [1]]),
                                                    s[:, :1].exp()).sin(),
    "scatter_add_": lambda a, x, s: a.scatter_add_(x * 1, 1, _idx(a.m), s * s) ** 2,
    "masked_select": lambda a, x, s: a.masked_select(x * x, x > 0.3) ** 3,
    "masked_select broadcast": lambda a, x, s: a.masked_select(
        (x * 2)[0], a.m.tensor([[True, False, True, True], [False, True, False, True]])).exp(),
    "masked_scatter_": lambda a, x, s: a.masked_scatter_(x * 1, x > 0.3,
                                                         a.m.cat([s * s, s], 0)).exp(),
    "masked_scatter_ with source to spare": lambda a, x, s: a.masked_scatter_(
        x * 2, x < 0, s.exp()) ** 2,
    "index_add": lambda a, x, s: a.index_add(x * 2, 1, a.m.tensor([3, 0]), s * s) ** 2,
    "index_add with alpha": lambda a, x, s: a.index_add(x.exp(), 0, a.m.tensor([2, 2]),
                                                        x[:2] * s[0, 0], alpha=0.5).sin(),
    "index_add_ in place": lambda a, x, s: a.index_add_(x * 1, 1, a.m.tensor([1, 1]),
                                                        s.exp()) ** 2,
}


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_gradients_and_higher_derivatives(torch, name, order):
    def program(c):
        x, s = c.leaf(X), c.leaf(S)
        y = c.keep(PROGRAMS[name](_Aten(c.m), x, s))
        if order == 1:
            return y
        grads = c.m.autograd.grad(y.sum(), (x, s), create_graph=True, allow_unused=True)
        if order == 3:
            total = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
            grads = c.m.autograd.grad(total, (x, s), create_graph=True, allow_unused=True)
        return c.keep(*[g for g in grads if g is not None])

    check(torch, program)


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n != "scatter from a larger source"])
def test_second_derivatives_match_finite_differences(name):
    import minigrad

    x = minigrad.tensor(X, dtype=minigrad.float64, requires_grad=True)
    s = minigrad.tensor(S, dtype=minigrad.float64, requires_grad=True)
    assert minigrad.autograd.gradgradcheck(
        lambda x, s: PROGRAMS[name](_Aten(minigrad), x, s), (x, s))
