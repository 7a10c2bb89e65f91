"""A second derivative through batch_norm and layer_norm given a bias but no weight,
against PyTorch: the gradient of the bias's gradient has no expanded form without a
weight, and PyTorch's double-backward formula adds that undefined tensor in place
(its RuntimeError), unless nothing came before it to add it to."""

from __future__ import annotations

import numpy as np
import pytest
from parity_harness import raised

import minigrad

X = np.random.default_rng(3).standard_normal((4, 3))
B = np.random.default_rng(4).standard_normal(3)
G = np.random.default_rng(5).standard_normal((4, 3))


def _second(m, op: str, input_grad: bool):
    F = m.nn.functional
    x = m.tensor(X, requires_grad=True)
    b = m.tensor(B, requires_grad=True)
    y = F.layer_norm(x, (3,), None, b) if op == "layer_norm" else \
        F.batch_norm(x, None, None, None, b, training=True)
    wanted = [x, b] if input_grad else [b]  # (the input's gradient, or the bias's alone)
    gs = m.autograd.grad(y, wanted, m.tensor(G), create_graph=True)
    total = sum((g * g).sum() for g in gs)
    return m.autograd.grad(total, wanted, allow_unused=True)


@pytest.mark.parametrize("op", ["layer_norm", "batch_norm"])
def test_a_bias_without_a_weight_is_pytorchs_error_when_added(torch, op):
    want = raised(lambda: _second(torch, op, True))
    assert want[0] == "RuntimeError"
    assert raised(lambda: _second(minigrad, op, True)) == want


@pytest.mark.parametrize("op", ["layer_norm", "batch_norm"])
def test_the_bias_gradient_alone_has_no_second_derivative(torch, op):
    # (nothing comes before the bias's term: the formula gives it as it is, undefined)
    assert _second(torch, op, False) == (None,)
    assert _second(minigrad, op, False) == (None,)
