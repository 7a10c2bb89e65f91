"""`stack` against PyTorch: values, dtype promotion, StackBackward0 and its saved dim,
the gradients (also recorded with `create_graph=True`: one SelectBackward0 per input,
and SelectBackwardBackward0 for select's own gradient), and the errors."""

from __future__ import annotations

import pytest
from parity_harness import check, raised

import minigrad

PROGRAMS = {
    "dim 0": lambda c: c.m.stack([c.leaf([1.0, 2.0]) * 2, c.leaf([3.0, -1.0])]),
    "last dim, a tuple": lambda c: c.m.stack((c.leaf([[1.0, 2.0]]), c.leaf([[3.0, 4.0]])), -1),
    "mixed dtypes": lambda c: c.m.stack([c.leaf([1.0, 2.0], "float32"), c.leaf([0.5, 4.0])]),
    "an input without grad": lambda c: c.m.stack(
        [c.leaf([1.0, 2.0]), c.leaf([5.0, 6.0], requires_grad=False)], 1),
    "0-d tensors": lambda c: c.m.stack([c.leaf(1.5), c.leaf(-2.0)]),
    "recorded gradients": lambda c: c.keep(*c.m.autograd.grad(
        c.m.stack([c.leaf([1.0, 2.0]), c.leaf([3.0, 4.0])], 1).exp().sum(), c.tensors[:2],
        create_graph=True)),
    "select's recorded gradient": lambda c: c.keep(*c.m.autograd.grad(
        c.leaf([[1.0, 2.0], [3.0, 4.0]]).select(-1, -2), c.tensors[:1],
        c.leaf([0.5, 2.0]), create_graph=True)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_stack(torch, name):
    check(torch, PROGRAMS[name])


ERRORS = {
    "empty": lambda m: m.stack([]),
    "sizes differ": lambda m: m.stack([m.ones(2, 2), m.ones(2)]),
    "dim out of range": lambda m: m.stack([m.ones(2), m.ones(2)], 2),
    "negative dim out of range": lambda m: m.stack([m.ones(2)], -3),
    "not a tensor": lambda m: m.stack([m.ones(2), 1]),
    "a tensor, not a sequence": lambda m: m.stack(m.ones(2, 2)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_stack_errors(torch, name):
    expected = raised(lambda: ERRORS[name](torch))
    assert expected[0] != "no error"
    assert raised(lambda: ERRORS[name](minigrad)) == expected
