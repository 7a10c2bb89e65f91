"""`create_graph=True` through in-place ops on views, against PyTorch.

An in-place op on a view (or an assignment into one) gives the base a CopySlices
node, and a view made before its base changed gets an AsStridedBackward0 history.
Their backward, recorded, is PyTorch's C++ step by step (`ops/view_history.py`):
CopyBackwards, AsStridedBackward0, CloneBackward0, the wrapped node's formulas and a
CopySlices of its own; as_strided's gradient records SqueezeBackward1, SumBackward1,
CopySlices and AsStridedBackward0. The harness compares the graphs the gradients
have and the derivatives one order higher (float64 to 1e-10) with PyTorch's, and
`gradgradcheck` the second derivatives with finite differences.
"""

from __future__ import annotations

import pytest
from parity_harness import check
from test_parity_create_graph_ops import O, X, check_second_and_third_order


def _slice_mul(m, x, o):
    y = x * o
    y[1:4].mul_(x[:3])
    return y.exp()


def _select_add(m, x, o):
    y = x * o
    y[2].add_(o[0] * x[5])
    return y ** 3


def _transposed_exp(m, x, o):
    y = (x * o).view(2, 3)
    y.t()[1:].exp_()
    return y * o.view(2, 3)


def _assignments(m, x, o):
    y = x.clone()
    y[0] = x[2] ** 2
    y[3:] = o[:3] * x[:3]
    return y * y * o


def _column_copy(m, x, o):
    y = (x * o).view(2, 3)
    y[:, 1].copy_(x[:2].sin())
    return y.tanh()


def _masked_fill_number(m, x, o):
    y = (x * o).view(2, 3)
    y[1].masked_fill_(m.tensor([True, False, True]), 0.5)
    return y ** 2 * x.view(2, 3)


def _masked_fill_tensor(m, x, o):
    y = (x * o).view(3, 2)
    y[:, 0].masked_fill_(m.tensor([False, True, True]), o[1] * o[2])
    return y.sin()


def _strided_view_of_a_view(m, x, o):
    y = x * o
    y.view(2, 3)[1][::2].mul_(o[:2])
    return y.exp() * x


def _transposed_base(m, x, o):
    y = (x * o).view(2, 3).t().clone()  # (laid out transposed, as its source)
    y[1].mul_(o[:2] * x[4:])
    return y ** 3


def _two_views(m, x, o):
    y = x * o
    y[:3].mul_(o[3:])
    y[2:].add_(x[:4] * y[:4].detach())
    return y.sin() * o


def _div_by_a_slice(m, x, o):
    y = x * x
    y[::2].div_(o[1::2] + 3)
    return y * o


def _fills(m, x, o):
    y = (x * o).view(2, 3)
    y[0].zero_()
    y[:, 2].fill_(o[1] * x[1])
    return y.exp() * x.view(2, 3)


def _index_put_into_a_slice(m, x, o):
    y = x * o
    y[1:][m.tensor([0, 3])] = x[:2] * o[4:]
    return y ** 2


def _assignment_into_a_constant(m, x, o):
    y = o.detach().clone()
    y[1:3] = x[:2] * x[4:]
    return y * o


def _view_of_a_modified_base(m, x, o):
    y = x * o
    v = y[1:4]
    y.mul_(x)
    return v.exp() * y[:3]


def _expanded_view_of_a_modified_base(m, x, o):
    y = x * o
    v = y.view(2, 3)[:1].expand(3, 3)
    y.mul_(o)
    return v.sin() * x[:3]


def _column_of_a_modified_base(m, x, o):
    y = (x * o).view(2, 1, 3)
    v = y[:, :, 1:]
    y.mul_(2.0)
    return (v.exp() * v).sum() * x


def _element_of_a_modified_base(m, x, o):
    y = x * o
    v = y[4]
    y.add_(x * x)
    return v ** 3 * o


def _row_of_a_modified_transposed_base(m, x, o):
    y = (x * o).view(2, 3).t().clone()  # (laid out transposed)
    v = y[1]
    y.mul_(o.view(2, 3).t())
    return v.exp() * x[:2]


# (name, function of the module and two float64 tensors of six elements each)
PROGRAMS = {
    "mul_ on a slice": _slice_mul,
    "add_ on a select": _select_add,
    "exp_ on a transposed view": _transposed_exp,
    "assignments": _assignments,
    "copy_ into a column": _column_copy,
    "masked_fill_ on a view": _masked_fill_number,
    "masked_fill_ on a view with a tensor": _masked_fill_tensor,
    "mul_ on a strided view of a view": _strided_view_of_a_view,
    "mul_ on a view of a transposed base": _transposed_base,
    "two in-place ops on overlapping views": _two_views,
    "div_ on a strided slice": _div_by_a_slice,
    "zero_ and fill_ on views": _fills,
    "index_put_ into a slice": _index_put_into_a_slice,
    "assignment into a tensor without history": _assignment_into_a_constant,
    # a view made before its base changed (AsStridedBackward0)
    "a slice of a modified base": _view_of_a_modified_base,
    "an expanded view of a modified base": _expanded_view_of_a_modified_base,
    "a view with a dim of size 1 of a modified base": _column_of_a_modified_base,
    "an element of a modified base": _element_of_a_modified_base,
    "a row of a modified base laid out transposed": _row_of_a_modified_transposed_base,
}


@pytest.mark.parametrize("order", [2, 3])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_second_and_third_order_gradients(torch, name, order):
    check_second_and_third_order(torch, PROGRAMS[name], order)


@pytest.mark.parametrize("name", ["mul_ on a slice", "assignments", "a slice of a modified base"])
def test_gradient_of_one_input(torch, name):
    """Only `x`'s gradient asked for: CopySlices lets its base's edge decide whether the
    wrapped node computes the view's gradient, and computes nothing else."""
    def program(c):
        x, o = c.leaf(X), c.leaf(O)
        y = PROGRAMS[name](c.m, x, o)
        (g,) = c.m.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = c.m.autograd.grad((g * g).sum(), o, create_graph=True)
        return c.keep(g, h)

    check(torch, program)


@pytest.mark.parametrize("order", [2, 3])
def test_a_view_kept_alive(torch, order):
    """exp_'s formula reads its saved output: while the modified view lives, that
    output comes back with the view's AsStridedBackward0 as its producer (PyTorch's
    weak reference), and the recorded graph leads there instead of to ExpBackward0."""
    def program(c):
        x, o = c.leaf(X), c.leaf(O)
        y = (x * o).view(2, 3)
        v = c.keep(y.t()[1:])
        v.exp_()
        grads = c.m.autograd.grad((y * o.view(2, 3)).sum(), (x, o), create_graph=True)
        if order == 3:
            grads = c.m.autograd.grad(sum((g * g).sum() for g in grads), (x, o),
                                      create_graph=True)
        return c.keep(*grads)

    check(torch, program)


def test_a_base_as_the_output(torch):
    """The gradient CopySlices gets first is the caller's, which has no history: its
    copy records nothing, the wrapped node's formula does."""
    def program(c):
        x, o = c.leaf(X), c.leaf(O)
        y = x * o
        y[2:5].mul_(x[:3])
        seed = c.m.tensor([0.5, 1.0, -1.0, 2.0, 0.25, 1.5], dtype=c.m.float64)
        return c.keep(*c.m.autograd.grad(y, (x, o), seed, create_graph=True))

    check(torch, program)


def test_the_example_of_the_brief(torch):
    """A product of a base modified through a slice and of an assignment's result,
    differentiated three times."""
    def program(c):
        a = c.leaf([0.5, -1.0, 2.0])
        b = a * 1
        b[1:].mul_(a[:2])
        d = a.clone()
        d[0] = a[2] ** 2
        (g,) = c.m.autograd.grad((b * b * d).sum(), a, create_graph=True)
        (h,) = c.m.autograd.grad(g.sum(), a, create_graph=True)
        (k,) = c.m.autograd.grad(h.sum(), a)
        return c.keep(g, h, k)

    check(torch, program)


@pytest.mark.parametrize("name", ["mul_ on a slice", "add_ on a select", "assignments",
                                  "copy_ into a column", "mul_ on a view of a transposed base",
                                  "a slice of a modified base",
                                  "an expanded view of a modified base"])
def test_second_derivatives_match_finite_differences(name):
    import minigrad

    x = minigrad.tensor(X, dtype=minigrad.float64, requires_grad=True)
    o = minigrad.tensor(O, dtype=minigrad.float64, requires_grad=True)
    assert minigrad.autograd.gradgradcheck(lambda x, o: PROGRAMS[name](minigrad, x, o), (x, o))


@pytest.mark.parametrize("create_graph", [False, True])
def test_a_custom_function_that_gives_the_view_no_gradient(torch, create_graph):
    """A custom Function modifying a view in place whose backward returns None for it:
    CopySlices gives the base no gradient at all (not the rest of the incoming one)."""
    def program(c):
        class Double(c.m.autograd.Function):
            @staticmethod
            def forward(ctx, t, w):
                t.mul_(2)
                ctx.mark_dirty(t)
                return t

            @staticmethod
            def backward(ctx, g):
                return None, g.sum() * 3

        x, w = c.leaf(X[:4]), c.leaf(1.5)
        y = x * x
        Double.apply(y[1:3], w)
        grads = c.m.autograd.grad((y * y).sum(), (x, w), create_graph=create_graph,
                                  allow_unused=True)
        return c.keep(*[g for g in grads if g is not None])

    check(torch, program)
