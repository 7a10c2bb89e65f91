"""Gradients at the edges of each formula's domain, and in-place ops whose operand
overlaps the memory they write: each program is run under PyTorch and minigrad and
everything observable is compared (values, gradients, nodes, versions, errors).

Both families once gave wrong values silently: `x.abs().sqrt()` had a gradient of 0
at 0 where PyTorch's is nan (inf * sign(0)), and `t.div_(t[0])` divided by a value
the op itself had already overwritten where PyTorch refuses.
"""

from __future__ import annotations

import math

import pytest
from parity_harness import check

EDGES = [-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, math.inf, -math.inf, math.nan]
TIES = [1.0, 3.0, 3.0, -1.0, 0.0, 3.0, 2.0, 1.0, 0.0, 0.0]

# name -> f(module, x) for a leaf x holding EDGES or TIES
FORMULAS = {
    "abs then sqrt": lambda m, x: x.abs().sqrt(),
    "abs": lambda m, x: x.abs(),
    "sqrt": lambda m, x: x.sqrt(),
    "log": lambda m, x: x.log(),
    "exp": lambda m, x: x.exp(),
    "relu": lambda m, x: x.relu(),
    "sigmoid": lambda m, x: x.sigmoid(),
    "tanh": lambda m, x: x.tanh(),
    "sin": lambda m, x: x.sin(),
    "cos": lambda m, x: x.cos(),
    "pow 0.5": lambda m, x: x ** 0.5,
    "pow -0.5": lambda m, x: x ** -0.5,
    "pow -1": lambda m, x: x ** -1,
    "pow 0": lambda m, x: x ** 0,
    "pow 1.5": lambda m, x: x ** 1.5,
    "pow 3": lambda m, x: x ** 3,
    "pow x": lambda m, x: x ** x,
    "2 ** x": lambda m, x: 2 ** x,
    "0 ** x": lambda m, x: 0 ** x,
    "1 / x": lambda m, x: 1 / x,
    "x / x": lambda m, x: x / x,
    "x / 0": lambda m, x: x / 0,
    "x * 0": lambda m, x: x * 0,
    "clamp 0..1": lambda m, x: x.clamp(0, 1),
    "clamp min 0": lambda m, x: x.clamp(min=0),
    "clamp max 0": lambda m, x: x.clamp(max=0),
    "max": lambda m, x: x.max(),
    "min": lambda m, x: x.min(),
    "max dim": lambda m, x: x.reshape(2, 5).max(dim=1)[0],
    "min dim": lambda m, x: x.reshape(2, 5).min(dim=1)[0],
    "round": lambda m, x: x.round(),
    "round 1 decimal": lambda m, x: (x * 0.37).round(decimals=1),
    "floor": lambda m, x: x.floor(),
    "ceil": lambda m, x: x.ceil(),
    "sign": lambda m, x: x.sign(),
    "where sqrt": lambda m, x: m.where(x > 0, x.sqrt(), m.zeros(10, dtype=x.dtype)),
    "where a number": lambda m, x: m.where(x > 0, x, 0.0),
    "where method": lambda m, x: x.where(x < 1, x * 2),
}


@pytest.mark.parametrize("values", ["edges", "ties"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(FORMULAS))
def test_gradients_at_the_edges_match_torch(torch, name, dtype, values):
    def program(c):
        x = c.leaf(EDGES if values == "edges" else TIES, dtype)
        return FORMULAS[name](c.m, x)

    check(torch, program)


def _arange(c, n=4):
    return c.keep(c.m.arange(float(n), dtype=c.m.float64))


# In-place ops whose operand shares memory with what they write.
OVERLAPS = {
    # the example of the report: a 0-d view of the written tensor, made under no_grad
    "div_ by its own element": lambda c: _div_by_own_element(c),
    "add_ a shifted view": lambda c: _shifted(c, lambda a: a[1:].add_(a[:3])),
    "sub_ a shifted view with alpha": lambda c: _shifted(c, lambda a: a[1:].sub_(a[:3], alpha=2)),
    "copy_ a shifted view": lambda c: _shifted(c, lambda a: a[1:].copy_(a[:3])),
    "add_ its own transpose": lambda c: _shifted(c, lambda a: a.view(2, 2).add_(a.view(2, 2).t())),
    "add_ its first element": lambda c: _shifted(c, lambda a: a.add_(a[0])),
    "add_ through a detached alias": lambda c: _shifted(c, lambda a: a[1:].add_(a.detach()[:3])),
    "assign a shifted view": lambda c: _shifted(c, lambda a: a.__setitem__(slice(1, None), a[:3])),
    "iand a shifted view": lambda c: _shifted_int(c, lambda a: a[1:].__iand__(a[:3])),
    # allowed: the same memory seen the same way, disjoint halves, strided views
    # (PyTorch does not decide those), a stretched value, fill_ with an element
    "mul_ itself": lambda c: _shifted(c, lambda a: a.mul_(a)),
    "copy_ itself": lambda c: _shifted(c, lambda a: a.copy_(a)),
    "mul_ the other half": lambda c: _shifted(c, lambda a: a[:2].mul_(a[2:])),
    "add_ the odd elements": lambda c: _shifted(c, lambda a: a[::2].add_(a[1::2])),
    "assign one element to a slice": lambda c: _shifted(
        c, lambda a: a.__setitem__(slice(0, 2), a[1])),
    "assign one element to one element": lambda c: _shifted(c, lambda a: a.__setitem__(0, a[1])),
    "fill_ with its first element": lambda c: _shifted(c, lambda a: a.fill_(a[0])),
    "sub_ a reduction of itself": lambda c: _shifted(c, lambda a: a.view(2, 2)[0].sub_(a.sum())),
    "a tracked op, then an overlapping one": lambda c: _tracked_overlap(c),
}


def _div_by_own_element(c):
    a = c.leaf([1.0, 1.0])
    t1 = c.keep(a + 3)
    with c.m.no_grad():
        t5 = c.keep(t1[0])
    t1.div_(t5)
    return t1


def _shifted(c, op):
    a = _arange(c)
    op(a)
    return a


def _shifted_int(c, op):
    a = c.keep(c.m.tensor([1, 2, 3, 4]))
    op(a)
    return a


def _tracked_overlap(c):
    x = c.leaf([1.0, 2.0, 3.0, 4.0])
    y = c.keep(x * 2)
    y[1:].mul_(y[:3])
    return y


@pytest.mark.parametrize("name", list(OVERLAPS))
def test_overlapping_in_place_operands_as_in_torch(torch, name):
    check(torch, OVERLAPS[name])


# Element-wise maximum and minimum of two tensors (`torch.max(a, b)` is `maximum`):
# a tie splits the gradient in halves, a nan wins and sends it to both.
A = [1.0, 2.0, math.nan, 3.0, 5.0, -0.0]
B = [1.0, 3.0, 1.0, math.nan, 4.0, 0.0]
EXTREMES = {
    "maximum": lambda c: c.m.maximum(c.leaf(A), c.leaf(B)),
    "minimum": lambda c: c.m.minimum(c.leaf(A), c.leaf(B)),
    "max of two": lambda c: c.m.max(c.leaf(A), c.leaf(B)),
    "min of two": lambda c: c.m.min(c.leaf(A), c.leaf(B)),
    "method": lambda c: c.leaf(A).maximum(c.leaf(B)),
    "method max": lambda c: c.leaf(A).max(c.leaf(B)),
    "other needs no grad": lambda c: c.m.maximum(c.leaf(A), c.leaf(B, requires_grad=False)),
    "broadcast": lambda c: c.m.maximum(c.leaf([[1.0], [2.0]]), c.leaf([0.5, 1.0, 3.0])),
    "float32 and float64": lambda c: c.m.minimum(c.leaf(A, "float32"), c.leaf(B)),
    "integers and floats": lambda c: c.m.maximum(
        c.keep(c.m.tensor([1, 2, 3, 4, 5, 0])), c.leaf(B)),
    "a number": lambda c: c.m.maximum(c.leaf(A), 2.0),
    "through a graph": lambda c: c.m.maximum(c.leaf(A) * 2, c.leaf(B).exp()).sum(),
}


@pytest.mark.parametrize("name", list(EXTREMES))
def test_elementwise_maximum_and_minimum_as_in_torch(torch, name):
    check(torch, EXTREMES[name])


# Found by random programs: views, unbind and slice assignment after in-place changes.
def _second_backward_through_copyslices(c):
    a = c.leaf([[-2.0, 0.25, -1.5], [1.0, 0.25, -1.5]])
    b = c.leaf([[1.75, 1.25, 2.0], [0.75, 0.75, 1.75]], requires_grad=False)
    t1 = c.keep(a + b)
    t1[0] = 2.0
    loss, loss2 = c.keep(t1.sum(), t1.relu().sum())
    loss.backward()
    loss2.backward()  # PyTorch: the graph's CopySlices let go of its node
    c.run_backward = False


def _second_backward_through_a_view_chain(c):
    a = c.leaf([1.0, 0.0, -1.5, -0.5])
    b = c.leaf([1.25, 1.5, 0.5, 0.75])
    t1 = c.keep(c.m.max(b))
    t5 = c.keep((1.5 - a[::2]).reshape(-1))
    t6 = c.keep(t5.view(2))
    t5.sub_(t1)
    loss = c.keep(t6.reshape(-1).sum())
    loss.backward()
    c.run_backward = False
    loss.backward()  # refused before anything is added into a.grad


def _unbind_of_a_no_grad_view(c):
    a = c.keep(c.leaf([1.0, 2.0]) * 1)
    with c.m.no_grad():
        t1 = c.keep(a.view(2))
    t2, t3 = c.keep(*t1.unbind(0))
    a.mul_(0.5)
    c.run_backward = False
    t2.grad_fn  # noqa: B018 - reading it raises; PyTorch names the multi-output rule


def _retained_unbind_output_after_an_update(c):
    a = c.leaf([1.5, 1.5, 1.25])
    b = c.leaf([1.25, -0.75, -1.0])
    t1, t2, t3 = c.keep(*a.unbind(0))
    t1.retain_grad()
    (t1 - b).sin().sum().backward()
    with c.m.no_grad():
        a -= 0.1 * a.grad
    c.run_backward = False
    return t1.grad  # the retained gradient, not the view's refused history


def _copy_from_an_overlapping_view(c):
    a = c.leaf([1.25, -1.0, -0.75, -0.5])
    t2 = c.keep((a + a).view(2, -1))
    t8, t9 = c.keep(*t2.unbind(1))
    t2[1] = t8  # element by element: the second element reads the first one's write
    return t2


def _in_place_error_on_a_view_of_a_modified_tensor(kept: bool):
    """exp_ on a view saves its output; a later in-place change breaks backward. The
    error names the view's producer at the time exp_ saved it (AsStridedBackward0)
    while something keeps that node alive (`t3.mean()` recorded on it), else exp's
    own node."""
    def program(c):
        a = c.leaf([[1.5, -0.5, 2.0], [0.25, 1.0, -1.25]])
        t1 = c.keep(a * 2)
        t3 = c.keep(t1.reshape(6))
        t3.exp_()
        t3.div_(t3.mean(0) if kept else t3.detach().mean(0))
        return t3

    return program


FOUND_BY_RANDOM_PROGRAMS = {
    "in-place error names AsStrided": _in_place_error_on_a_view_of_a_modified_tensor(True),
    "in-place error names Exp": _in_place_error_on_a_view_of_a_modified_tensor(False),
    "second backward through CopySlices": _second_backward_through_copyslices,
    "second backward through a view chain": _second_backward_through_a_view_chain,
    "unbind of a view made in no_grad mode": _unbind_of_a_no_grad_view,
    "retained unbind output after an update": _retained_unbind_output_after_an_update,
    "copy from an overlapping view": _copy_from_an_overlapping_view,
}


@pytest.mark.parametrize("name", list(FOUND_BY_RANDOM_PROGRAMS))
def test_programs_found_by_random_programs_as_in_torch(torch, name):
    check(torch, FOUND_BY_RANDOM_PROGRAMS[name])


STEPS_AND_WHERE = {
    "round_ in place": lambda c: c.keep(c.leaf([0.5, 1.5, 2.5]) * 1).round_(),
    "sign of integers": lambda c: c.keep(c.m.tensor([-3, 0, 4])).sign(),
    "round of integers": lambda c: c.keep(c.m.tensor([-3, 0, 4])).round(),
    "where broadcast": lambda c: c.m.where(c.keep(c.m.tensor([[True], [False]])),
                                           c.leaf([1.0, 2.0, 3.0]), c.leaf([[4.0], [5.0]])),
    "where mixed dtypes": lambda c: c.m.where(c.keep(c.m.tensor([True, False])),
                                              c.leaf([1.0, 2.0], "float32"), c.leaf([3.0, 4.0])),
    "where of a float condition": lambda c: c.m.where(c.leaf([1.0, 0.0]), c.leaf([1.0, 2.0]),
                                                      c.leaf([3.0, 4.0])),
    "where, the condition alone": lambda c: c.m.where(c.keep(c.m.tensor([True, False, True]))),
}


@pytest.mark.parametrize("name", list(STEPS_AND_WHERE))
def test_steps_and_where_as_in_torch(torch, name):
    check(torch, STEPS_AND_WHERE[name])
