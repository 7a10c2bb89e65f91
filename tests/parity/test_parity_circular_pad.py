"""nn.functional.pad(mode='circular') against PyTorch: PyTorch has no node of its own
for it, it copies slices into a new tensor (the input into the middle, then each
border from the other end), so its graph is CopySlices over SliceBackward0 nodes.
Values, gradients, the nodes and their saved values, versions and errors."""

from __future__ import annotations

import pytest
from parity_harness import check
from test_parity_bad_input import compare
from test_parity_joining_statistics import _leaf


def _pad(c, x, amounts):
    return c.m.nn.functional.pad(x, amounts, mode="circular")


PROGRAMS = {
    "1 dim": lambda c: _pad(c, _leaf(c, 2, 5), (1, 2)),
    "1 dim, batched": lambda c: _pad(c, _leaf(c, 2, 3, 5), (2, 0)),
    "2 dims": lambda c: _pad(c, _leaf(c, 2, 3, 4, 5), (1, 2, 2, 1)),
    "2 dims, crop and pad": lambda c: _pad(c, _leaf(c, 2, 3, 4, 5), (-1, 2, 0, 1)),
    "3 dims": lambda c: _pad(c, _leaf(c, 1, 2, 2, 3, 3), (1, 1, 0, 2, 2, 0)),
    "by the whole size": lambda c: _pad(c, _leaf(c, 1, 3), (3, 3)),
    "float32": lambda c: _pad(c, _leaf(c, 1, 2, 3, dtype="float32"), (1, 1)),
    "no grad": lambda c: _pad(c, _leaf(c, 2, 3, requires_grad=False), (1, 1)),
    "of a view": lambda c: _pad(c, c.keep(_leaf(c, 3, 4).t()), (1, 2)),
    "double backward": lambda c: c.m.autograd.grad(
        (_pad(c, c.keep(_leaf(c, 2, 4) * 1.5), (2, 1)) ** 2).sum(), c.kept[-1],
        create_graph=True),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_circular_pad(torch, name):
    check(torch, PROGRAMS[name])


X = "x = torch.ones(2, 3, 4)\n"
ERRORS = {
    "wraps twice": X + "torch.nn.functional.pad(x, (5, 1), 'circular')",
    "crops to nothing": X + "torch.nn.functional.pad(x, (-3, -2), 'circular')",
    "a value": X + "torch.nn.functional.pad(x, (1, 1), 'circular', 2.0)",
    "too many dims padded": X + "torch.nn.functional.pad(x, (1,) * 6, 'circular')",
    "integer input": X + "torch.nn.functional.pad(x.long(), (1, 2), 'circular')",
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_circular_pad_errors(torch, name):
    compare(torch, ERRORS[name])
