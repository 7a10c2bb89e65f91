"""How a leaf's `.grad` is laid out after an element-wise op's backward, compared with PyTorch."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("op", ["atanh", "reciprocal", "rsqrt"])
def test_a_formula_that_scales_grad_first_lays_out_by_grad(torch, op):
    # atanh's `grad * 1 / (1 - self.pow(2))`: `grad * 1` (of sum()'s spread-out
    # gradient) is row-major and decides the layout before the transposed factor, so
    # AccumulateGrad copies it into the leaf's layout (version 1).
    import minigrad

    def run(m):
        x = (m.arange(6.0, dtype=m.float64).reshape(2, 3) * 0.1 + 0.05).t().requires_grad_()
        getattr(x, op)().sum().backward()
        return x.grad.stride(), x.grad._version, x.grad.tolist()

    mg, pt = run(minigrad), run(torch)
    assert mg[:2] == pt[:2]
    assert np.allclose(mg[2], pt[2], rtol=1e-13, atol=0)
