"""Edge cases that once differed from PyTorch: a size-1 operand summed back over a
broadcast, empty tensors, a max whose value no longer matches, reflected
subtraction of tensors, round's two overloads, keyword bounds of arange, prod's
dtype, 0-d transposes and means, and autograd.grad's argument checks.

Graph-level cases run through the parity harness (values, nodes, saved values,
gradients, warnings); the others are snippets compared as in
`test_parity_bad_input.py` (result, error text, warnings)."""

from __future__ import annotations

import pytest
from parity_harness import check
from test_parity_bad_input import compare

# -- programs: the whole graph compared ---------------------------------------------------


def _size_one_operand_over_a_matrix(c):
    t = c.leaf([2.0])
    return (c.m.ones(2, 2, dtype=c.m.float64) * t).sum()


def _size_one_operand_over_rows(c):
    t = c.leaf([[2.0]])
    return c.m.ones(3, 2, dtype=c.m.float64) * t + c.leaf([1.0])


def _empty_expression(c):
    x = c.keep(c.m.zeros(0, 3, dtype=c.m.float64, requires_grad=True))
    y = (x * 2 + 1).exp().sigmoid().tanh() - x.abs()
    return c.keep(y).sum() + c.keep(y.mean(0)).sum()


def _max_matching_nothing(c):
    a = c.leaf([1.0, 3.0, 2.0])
    m = a.max()
    m.data.mul_(2)
    return m


def _rsub_of_tensors(c):
    a, b = c.leaf([1.0, 3.0]), c.leaf([[2.0], [5.0]])
    return a.__rsub__(b)


def _round_with_zero_decimals(c):
    a = c.leaf([1.5, 2.5, -0.5])
    return c.m.round(a, decimals=0) + a.round() + a.round(decimals=1)


def _round_in_place_with_zero_decimals(c):
    a = c.leaf([1.5, 2.5, -0.5])
    return c.keep(a * 1).round_(decimals=0)


def _prod_in_another_dtype(c):
    x = c.leaf([[1.0, 2.0, 3.0], [4.0, 0.0, 6.0]], "float32")
    return c.m.prod(x, 1, dtype=c.m.float64), x.prod(dtype=c.m.float64)


def _transpose_of_a_scalar(c):
    a = c.leaf(2.0)
    return a.transpose(0, 0) * a.transpose(-1, 0)


def _zero_function(c):
    x = c.keep(c.leaf([1.0, 2.0]) * 3)
    return c.m.zero_(x)


PROGRAMS = {
    "size-1 operand over a matrix": _size_one_operand_over_a_matrix,
    "size-1 operand over rows": _size_one_operand_over_rows,
    "an expression of empty tensors": _empty_expression,
    "max matching nothing after .data changed": _max_matching_nothing,
    "rsub of two tensors": _rsub_of_tensors,
    "round with decimals=0": _round_with_zero_decimals,
    "round_ with decimals=0": _round_in_place_with_zero_decimals,
    "prod with dtype": _prod_in_another_dtype,
    "transpose of a 0-d tensor": _transpose_of_a_scalar,
    "torch.zero_": _zero_function,
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_as_in_torch(torch, name):
    check(torch, PROGRAMS[name])


# -- snippets: result, error and warnings compared -----------------------------------------

A = "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
S = "s = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)\n"

SNIPPETS = {
    # empty tensors
    "sigmoid of (1, 0)": "torch.sigmoid(torch.zeros(1, 0))",
    "sigmoid of (0,) float64": "torch.zeros(0, dtype=torch.float64).sigmoid()",
    "max backward, no warning": ("a = torch.tensor([1.0, 3.0], requires_grad=True)\nm = a.max()\n"
                                 "m.data.mul_(2)\nm.backward()\na.grad"),
    # arange's bounds by keyword
    "arange end=": "torch.arange(end=3)",
    "arange start, end=": "torch.arange(0, end=3)",
    "arange start=, end=": "torch.arange(start=1, end=3)",
    "arange step=": "torch.arange(1, 5, step=2)",
    "arange all keywords": "torch.arange(start=1, end=5, step=2)",
    "arange start= only": "torch.arange(start=1)",
    "arange end twice": "torch.arange(0, 3, end=3)",
    "arange end=, step=": "torch.arange(step=2, end=4)",
    "arange end and start=": "torch.arange(5, start=1)",
    # prod's dtype
    "prod dim dtype": "torch.prod(torch.ones(2, 3), 1, dtype=torch.float64)",
    "prod dim keepdim dtype": "torch.prod(torch.tensor([[1, 2, 3]]), 1, True, dtype=torch.float32)",
    "prod dtype of ints": "torch.prod(torch.tensor([1, 2, 3]), dtype=torch.float32)",
    "prod to int of a float": "torch.prod(torch.tensor([1.5, 2.5]), dtype=torch.int64)",
    "prod to int requiring grad": A + "torch.prod(a, 0, dtype=torch.int64)",
    "prod to int in no_grad": A + "with torch.no_grad():\n    r = a.prod(dtype=torch.int64)\nr",
    "prod dtype python float": A + "a.prod(dtype=float)",
    "cumsum to int requiring grad": A + "torch.cumsum(a, 0, dtype=torch.int64)",
    # 0-d tensors
    "transpose(0, 0) backward": S + "s.transpose(0, 0).backward()\ns.grad",
    "mean(dim=0) create_graph": S + ("y = s.mean(dim=0)\n"
                                     "g, = torch.autograd.grad(y * s, s, create_graph=True)\n"
                                     "(y, g)"),
    "mean(dim=0) create_graph, constant": S + ("g, = torch.autograd.grad(s.mean(dim=0), s, "
                                               "create_graph=True)\ng"),
    # autograd.grad's and backward's arguments
    "grad of an output needing none": "t = torch.ones(2)\ntorch.autograd.grad(t.sum(), t)",
    "grad of a float": A + "torch.autograd.grad(3.0, a)",
    "grad for a float": A + "torch.autograd.grad(a.sum(), 3.0)",
    "grad for a float in a list": A + "torch.autograd.grad(a.sum(), [a, 3.0])",
    "grad of a list with a float": A + "torch.autograd.grad([3.0], a)",
    "grad, output first": A + "torch.autograd.grad(torch.ones(2).sum(), [a, 3.0])",
    "grad for None": A + "torch.autograd.grad(a.sum(), None)",
    "grad for an input needing none": A + "torch.autograd.grad((a * 2).sum(), [a, torch.ones(2)])",
    "grad_outputs a float": A + "torch.autograd.grad(a.sum(), a, grad_outputs=3.0)",
    "backward of a float": "torch.autograd.backward(3.0)",
    "backward gradient a float": A + "a.sum().backward(3.0)",
    "backward inputs a float": A + "a.sum().backward(inputs=[3.0])",
    "backward of a tuple": A + "torch.autograd.backward((a.sum(), (a * 2).sum()))\na.grad",
}


@pytest.mark.parametrize("name", list(SNIPPETS))
def test_snippet_as_in_torch(torch, name):
    compare(torch, SNIPPETS[name])
