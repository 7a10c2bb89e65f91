"""How a leaf's `.grad` is laid out after an element-wise op's backward, compared with PyTorch.

AccumulateGrad keeps ("steals") the incoming gradient when its strides are the leaf's
where a dim has more than one element, so `.grad` shows the layout the op's backward
gave, a dim of size 1 included. PyTorch computes `grad * self.cos()` step by step:
`self.cos()` is laid out by `self` alone (row-major where `self` is contiguous, its
size-1 dims' strides ignored), and that factor, not `self`, lays the product out. A
(1, 1, 3) leaf with strides (3, 1, 1) gets a `.grad` with strides (3, 3, 1).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

# (shape, permutation, steps): the leaf is arange(...) sliced by the steps, then permuted.
LEAVES = {
    "(1,1,3) strides (3,1,1)": ((1, 3, 1), (0, 2, 1), (1, 1, 1)),
    "(1,3) strides (1,1)": ((3, 1), (1, 0), (1, 1)),
    "(3,1) strides (1,3)": ((1, 3), (1, 0), (1, 1)),
    "(3,1) strides (2,6), not dense": ((1, 3), (1, 0), (1, 2)),
    "(3,1,3) permuted": ((1, 3, 3), (1, 0, 2), (1, 1, 1)),
    "(1,3,3) strides (9,1,3)": ((1, 3, 3), (0, 2, 1), (1, 1, 1)),
    "(1,3,3) not dense": ((1, 3, 3), (2, 0, 1), (1, 1, 2)),
    "(3,2) transposed": ((2, 3), (1, 0), (1, 1)),
    "(3,2) strided": ((3, 2), (0, 1), (1, 2)),
    "(1,) stride 2": ((1,), (0,), (2,)),
    "(1,1) strides (2,2)": ((1, 1), (0, 1), (1, 2)),
}

UNARY = ["sin", "cos", "tan", "abs", "sqrt", "log1p", "expm1", "sinh", "cosh", "reciprocal",
         "rsqrt", "erf", "erfc", "asin", "atan", "asinh", "atanh", "log2", "log10", "exp",
         "tanh", "sigmoid", "relu", "sinc", "floor", "sign", "sgn"]

GRADS = {
    "sum": lambda m, y: y.sum(),
    "times 2, sum": lambda m, y: (y * 2).sum(),
    "times a row-major tensor": lambda m, y: (y * m.ones(y.shape, dtype=m.float64)).sum(),
}


def _leaf(m, shape: tuple, perm: tuple, steps: tuple):
    big = tuple(n * k for n, k in zip(shape, steps))
    x = m.arange(float(math.prod(big)), dtype=m.float64).reshape(big) % 5 * 0.1 + 0.3
    return x[tuple(slice(None, None, k) for k in steps)].permute(*perm).detach().requires_grad_()


@pytest.mark.parametrize("grad", list(GRADS))
@pytest.mark.parametrize("leaf", list(LEAVES))
@pytest.mark.parametrize("op", UNARY)
def test_leaf_grads_of_element_wise_ops_are_laid_out_as_in_pytorch(torch, op, leaf, grad):
    # (floor's `zeros_like(grad)` keeps the 0 stride `sum()`'s gradient of a (1,) leaf
    # has, so AccumulateGrad copies it; sgn's efficient zero tensor is row-major, and
    # PyTorch keeps it as `.grad` unmaterialised: `clone()` before `tolist()`.)
    import minigrad

    def run(m):
        x = _leaf(m, *LEAVES[leaf])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            GRADS[grad](m, getattr(x, op)()).backward()
        return (x.stride(), x.grad.stride(), x.grad._version), x.grad.clone().tolist()

    mg, pt = run(minigrad), run(torch)
    assert mg[0] == pt[0]
    assert np.allclose(mg[1], pt[1], rtol=1e-13, atol=0)


def test_the_factor_of_sin_lays_out_the_gradient(torch):
    # The case the module's docstring describes.
    import minigrad

    def run(m):
        x = m.arange(3.0).reshape(1, 3, 1).permute(0, 2, 1).requires_grad_()
        x.sin().sum().backward()
        return x.stride(), x.grad.stride(), x.grad._version

    assert run(minigrad) == run(torch) == ((3, 1, 1), (3, 3, 1), 0)


def test_a_number_minus_a_tensor_is_laid_out_as_the_tensor(torch):
    # C++'s `1 - t` (in atanh's formula) is `empty_like(t).fill_(1).sub_(t)`: laid out
    # as `t` is, not row-major. Seen where DivBackward0 of a create_graph backward
    # saves it.
    import minigrad

    def run(m):
        x = _leaf(m, (2, 3), (1, 0), (1, 1))
        g, = m.autograd.grad(x.atanh().sum(), x, create_graph=True)
        return g.stride(), g.grad_fn.name(), g.grad_fn._saved_other.stride()

    assert run(minigrad) == run(torch)


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


@pytest.mark.parametrize("leaf", list(LEAVES))
def test_an_efficient_zero_gradient_given_by_backward_inputs(torch, leaf):
    import minigrad

    def run(m):
        x = _leaf(m, *LEAVES[leaf])
        x.sgn().sum().backward(inputs=[x])
        return x.grad.stride(), x.grad._version, x.grad.clone().tolist()

    assert run(minigrad) == run(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_product_with_a_row_of_unit_strides_in_float32_too(torch, dtype):
    # A short float32 product runs in float64; only where both operands are row-major,
    # their size-1 dims' strides counted: `x` of strides (1, 1) has a say in the layout.
    import minigrad

    def run(m):
        dt = getattr(m, dtype)
        x = m.arange(3.0, dtype=dt).reshape(3, 1).t().requires_grad_()
        (x * x).sum().backward()
        spread = m.ones((), dtype=dt).expand(1, 3) * x.detach()
        row = m.ones(1, 3, dtype=dt) / x.detach().add(1)
        return x.grad.stride(), x.grad._version, spread.stride(), row.stride()

    assert run(minigrad) == run(torch)


# sgn's gradient is PyTorch's efficient zero tensor, and its mul and div of one compute
# nothing: `0 * inf` and `0 / 0` are 0 there, so sgn's zero reaches `t` through `t * inf`,
# `t.exp() * inf`, `t / 0` or `log`'s `grad / self` at 0 as a zero, not nan (minigrad's
# `*` and `/` on arrays had computed them).
ZERO_THROUGH = {
    "times a tensor with inf": lambda m, t: t * m.tensor([float("inf"), 1.0, 0.0]),
    "times inf": lambda m, t: t * float("inf"),
    "exp times inf": lambda m, t: t.exp() * float("inf"),
    "over 0": lambda m, t: t / 0.0,
    "over a tensor with 0": lambda m, t: t / m.tensor([0.0, 0.0, 2.0]),
    "log times 2": lambda m, t: t.log() * 2,
    "log over 2": lambda m, t: t.log() / 2,
    "2 times log": lambda m, t: 2 * t.log(),
    # (summed to t's shape, the zero is materialised: nan at 0 in both)
    "log times a row": lambda m, t: t.log() * m.ones(2, 3),
    "log in float32": lambda m, t: t.float().log() * 3,
    "to the power -1": lambda m, t: t.pow(-1.0),
    "square root by a power": lambda m, t: t ** 0.5,
    "to a tensor power": lambda m, t: (t * 0) ** t,
}


@pytest.mark.parametrize("program", list(ZERO_THROUGH))
def test_sgns_efficient_zero_passes_through_mul_and_div(torch, program):
    import minigrad

    def run(m):
        t = m.tensor([1.0, 0.0, 3.0], dtype=m.float64, requires_grad=True)
        ZERO_THROUGH[program](m, t).sgn().sum().backward()
        return [repr(v) for v in t.grad.clone().tolist()], t.grad.stride(), t.grad._version

    assert run(minigrad) == run(torch)


# The activations' backward kernels (hardtanh_backward, ...) and clamp's and cumprod's
# gradients, computed by numpy's `where` or in another order: laid out as PyTorch's
# kernel lays out its operands (grad, then the input; the input first for leaky_relu),
# clamp's as `where(min <= x <= max, grad, 0)` (its condition made in place by
# `logical_and_`), cumprod's with a zero factor row-major.
def _f(m):
    return m.nn.functional


ACTIVATIONS = {
    "hardtanh": lambda m, x: _f(m).hardtanh(x, -0.5, 1.0),
    "hardtanh in place": lambda m, x: _f(m).hardtanh(x * 1, -0.5, 1.0, inplace=True),
    "relu6": lambda m, x: _f(m).relu6(x),
    "hardshrink": lambda m, x: _f(m).hardshrink(x, 0.7),
    "softshrink": lambda m, x: _f(m).softshrink(x, 0.7),
    "leaky_relu": lambda m, x: _f(m).leaky_relu(x, 0.1),
    "elu": lambda m, x: _f(m).elu(x),
    "hardsigmoid": lambda m, x: _f(m).hardsigmoid(x),
    "hardswish": lambda m, x: _f(m).hardswish(x),
    "mish": lambda m, x: _f(m).mish(x),
    "gelu": lambda m, x: _f(m).gelu(x),
    "gelu tanh": lambda m, x: _f(m).gelu(x, approximate="tanh"),
    "clamp": lambda m, x: x.clamp(-0.5, 1.0),
    "clamp_min": lambda m, x: x.clamp(min=0.1),
    "clamp by tensors": lambda m, x: x.clamp(m.zeros_like(x) - 0.5, m.ones_like(x)),
    "cumprod with a zero, dim 0": lambda m, x: (x - 0.3).cumprod(0),
    "cumprod with a zero, last dim": lambda m, x: (x - 0.3).cumprod(-1),
}


@pytest.mark.parametrize("grad", list(GRADS))
@pytest.mark.parametrize("leaf", list(LEAVES))
@pytest.mark.parametrize("op", list(ACTIVATIONS))
def test_activation_and_clamp_gradients_are_laid_out_as_in_pytorch(torch, op, leaf, grad):
    import minigrad

    def run(m):
        x = _leaf(m, *LEAVES[leaf])  # (values 0.3 to 0.7: x - 0.3 has zeros)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            GRADS[grad](m, ACTIVATIONS[op](m, x)).backward()
        return (x.stride(), x.grad.stride(), x.grad._version), x.grad.tolist()

    mg, pt = run(minigrad), run(torch)
    assert mg[0] == pt[0]
    assert np.allclose(mg[1], pt[1], rtol=1e-13, atol=1e-15)


# Their forwards, too: laid out by the input as PyTorch's kernels lay it out (numpy's
# `where` had chosen its own layout for an input that is not dense), hardtanh's in
# `empty_like(input)`, whose strides are the input's exactly.
@pytest.mark.parametrize("leaf", list(LEAVES))
@pytest.mark.parametrize("op", [op for op in ACTIVATIONS if "cumprod" not in op])
def test_activation_results_are_laid_out_as_in_pytorch(torch, op, leaf):
    import minigrad

    def run(m):
        x = _leaf(m, *LEAVES[leaf]).detach()
        y = ACTIVATIONS[op](m, x)
        return y.stride(), y.tolist()

    mg, pt = run(minigrad), run(torch)
    assert mg[0] == pt[0]
    assert np.allclose(mg[1], pt[1], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("leaf", list(LEAVES))
def test_copysign_gradient_masks_its_ratio_in_place(torch, leaf):
    # PyTorch's copysign_tensor_self_backward fills `result / self` in place
    # (`masked_fill_`), so the ratio keeps its layout; an out-of-place masked_fill
    # clones into row-major order.
    import minigrad

    def run(m):
        x = _leaf(m, *LEAVES[leaf])
        m.copysign(x, m.ones(x.shape, dtype=m.float64) * -1).sum().backward()
        return x.grad.stride(), x.grad._version, x.grad.tolist()

    assert run(minigrad) == run(torch)


# logsigmoid's backward kernel writes into `empty_like(grad)`: a gradient's layout,
# a 0 stride on a size-1 dim included (`sum()`'s of a (1,) leaf, which AccumulateGrad
# then copies: `.grad` at version 1), lays the result out, not the input's.
LOG_SIGMOID_GRADS = {
    "sum": lambda m, y: y.sum().backward(),
    "times 2, sum": lambda m, y: (y * 2).sum().backward(),
    "a transposed gradient": lambda m, y: y.backward(
        m.ones(tuple(reversed(y.shape)), dtype=m.float64).permute(*reversed(range(y.dim())))),
}


@pytest.mark.parametrize("grad", list(LOG_SIGMOID_GRADS))
@pytest.mark.parametrize("leaf", ["(1,)", "(1,1)", *LEAVES])
def test_log_sigmoid_grads_are_laid_out_as_in_pytorch(torch, leaf, grad):
    import minigrad

    def run(m):
        if leaf in LEAVES:
            x = _leaf(m, *LEAVES[leaf])
        else:
            x = m.full((1,) * leaf.count("1"), 0.5, dtype=m.float64, requires_grad=True)
        LOG_SIGMOID_GRADS[grad](m, m.nn.functional.logsigmoid(x))
        return (x.grad.stride(), x.grad._version), x.grad.tolist()

    mg, pt = run(minigrad), run(torch)
    assert mg[0] == pt[0]
    assert np.allclose(mg[1], pt[1], rtol=1e-13, atol=0)
