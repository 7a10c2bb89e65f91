"""Every declared op (`minigrad/ops/declaration.py`) against PyTorch, with the cases
generated from the declarations themselves: a new declaration is compared the moment
it exists. Values, gradients, node names, `_saved_*` tensors and versions, for the
function and the method, float64 and float32, values at the edges of each formula,
and the in-place variant."""

from __future__ import annotations

import numpy as np
import pytest
from float_policy import EXACT, VECTOR_MATH, assert_floats, stated
from parity_harness import check

from minigrad.ops.declaration import DECLARATIONS as ALL_DECLARATIONS

# Inputs where formulas break down: zeros of both signs, -1 (log1p's pole), large
# values (exp overflows, tanh and sigmoid saturate), infinities and nan.
EDGES = [0.0, -0.0, -1.0, 1.0, 0.5, -2.5, 30.0, -30.0, 1000.0, float("inf"),
         -float("inf"), float("nan")]
# Pairs for two-input ops, including the origin (atan2's formula divides by 0 there).
EDGES_OTHER = [0.0, 0.0, -0.0, 2.0, -3.0, 0.5, 1.0, -1.0, float("inf"), 1.0, 2.0, 1.0]
PLAIN = [0.25, -1.5, 2.0]
PLAIN_OTHER = [1.5, 0.5, -2.0]

# The ops built from a kernel and a formula (the hand-written ones are registered
# with `declare` and tested with their families).
DECLARATIONS = [d for d in ALL_DECLARATIONS if d.generated]
UNARY = [d for d in DECLARATIONS if len(d.formulas) == 1]
BINARY = [d for d in DECLARATIONS if len(d.formulas) == 2]


def _call(c, d, style: str, *args):
    return getattr(args[0], d.name)(*args[1:]) if style == "method" else getattr(
        c.m, d.name)(*args)


def test_every_declared_op_is_covered():
    assert {d.name for d in UNARY + BINARY} == {d.name for d in DECLARATIONS}
    assert {"exp", "log1p", "expm1", "atan2"} <= {d.name for d in DECLARATIONS}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("style", ["method", "function"])
@pytest.mark.parametrize("values", ["plain", "edges"])
@pytest.mark.parametrize("d", UNARY, ids=lambda d: d.name)
def test_unary_op_matches_torch(torch, d, style, values, dtype):
    def program(c):
        x = c.leaf(PLAIN if values == "plain" else EDGES, dtype)
        return _call(c, d, style, x)

    check(torch, program)


@pytest.mark.parametrize("d", UNARY, ids=lambda d: d.name)
def test_unary_op_of_integers_and_bools_matches_torch(torch, d):
    check(torch, lambda c: getattr(c.keep(c.m.tensor([2, -3, 0])), d.name)())
    check(torch, lambda c: getattr(c.keep(c.m.tensor([True, False])), d.name)())


@pytest.mark.parametrize("d", UNARY, ids=lambda d: d.name)
def test_unary_op_in_place_matches_torch(torch, d):
    def program(c):
        x = c.leaf(PLAIN)
        y = c.keep(x * 1)
        getattr(y, d.name + "_")()
        return y

    check(torch, program)


@pytest.mark.parametrize("d", UNARY, ids=lambda d: d.name)
def test_unary_op_in_place_after_its_saved_tensor_changed_matches_torch(torch, d):
    """The saved input (or output) changed in place later: backward's version error."""
    def program(c):
        x = c.leaf(PLAIN)
        y = c.keep(x * 1)
        z = getattr(y, d.name)()
        (z if "result" in d.saves else y).add_(1)
        return z

    check(torch, program)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("values", ["plain", "edges", "broadcast"])
@pytest.mark.parametrize("style", ["method", "function"])
@pytest.mark.parametrize("d", BINARY, ids=lambda d: d.name)
def test_binary_op_matches_torch(torch, d, style, values, dtype):
    def program(c):
        if values == "broadcast":
            a, b = c.leaf(PLAIN, dtype), c.leaf([[0.5], [-2.0]], dtype)
        elif values == "edges":
            a, b = c.leaf(EDGES, dtype), c.leaf(EDGES_OTHER, dtype)
        else:
            a, b = c.leaf(PLAIN, dtype), c.leaf(PLAIN_OTHER, dtype)
        return _call(c, d, style, a, b)

    check(torch, program)


@pytest.mark.parametrize("case", ["one-needs-grad", "integers", "mixed-dtypes", "number",
                                  "bad-shapes", "in-place", "in-place-integers"])
@pytest.mark.parametrize("d", BINARY, ids=lambda d: d.name)
def test_binary_op_cases_match_torch(torch, d, case):
    def program(c):
        m = c.m
        a, b = c.leaf(PLAIN), c.leaf(PLAIN_OTHER)
        if case == "one-needs-grad":
            return getattr(m, d.name)(a, c.leaf(PLAIN_OTHER, requires_grad=False))
        if case == "integers":
            return getattr(m, d.name)(c.keep(m.tensor([1, 2])), c.keep(m.tensor([3, -4])))
        if case == "mixed-dtypes":
            return getattr(m, d.name)(c.leaf(PLAIN, "float32"), b)
        if case == "number":
            return getattr(m, d.name)(a, 2.0)
        if case == "bad-shapes":
            return getattr(m, d.name)(a, c.leaf([1.0, 2.0]))
        if case == "in-place":
            y = c.keep(a * 1)
            getattr(y, d.name + "_")(b)
            return y
        y = c.keep(m.tensor([1, 2]))
        getattr(y, d.name + "_")(m.tensor([3, 4]))
        return y

    check(torch, program)


# Ops whose backward formula is IEEE arithmetic only (+ - * /, comparisons): their
# fused kernels must give PyTorch's gradient bit for bit, on any host. The others call
# a C library function (cos, sin) whose last bit differs between PyTorch's vectorised
# implementation (SLEEF, within 1 ulp) and the C library's: the float policy's
# VECTOR_MATH. tanh's
# rounds as the PyTorch of the host does (one fused multiply-add with AVX2 or
# AVX-512, two roundings in its portable kernel): bit for bit on any host.
IEEE_ONLY = {"exp", "log", "log1p", "expm1", "sigmoid", "relu", "sqrt", "abs", "atan2", "neg",
             "reciprocal", "floor", "ceil", "sign", "sgn", "tanh"}


# Ops whose gradient amplifies a last-bit difference of the functions it calls, with
# the reason: (op, dtype) -> tolerance
AMPLIFIED = {
    ("erfinv", "float64"): stated(
        (1e-14, 0.0), (1e-5, 0.0),
        "exp(erfinv(x)**2) turns erfinv's one ulp into 2 erfinv(x)**2 ulps (up to ~30 "
        "near |x| = 1)"),
    ("sinc", "float32"): stated(
        (4 * 2.0**-52, 0.0), (1e-5, 3e-4),
        "pi x cos(pi x) - sin(pi x) cancels near x = 0: float32 sin's and cos's last bits "
        "(SLEEF's or the C library's) become the gradient's third digit there"),
}


def _torch_gradients(torch, d, inputs: list[np.ndarray], grad: np.ndarray):
    """PyTorch's gradients of op `d` at `inputs`, and the tensors its node saved."""
    leaves = [torch.tensor(x, requires_grad=True) for x in inputs]
    y = getattr(torch, d.name)(*leaves)
    saved = {name: getattr(y.grad_fn, f"_saved_{name}").detach().numpy() for name in d.saves}
    grads = torch.autograd.grad(y, leaves, torch.from_numpy(grad), allow_unused=True)
    return [g.numpy(force=True) for g in grads], saved  # (force: sgn's zeros are a ZeroTensor)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", DECLARATIONS, ids=lambda d: d.name)
def test_fused_kernels_on_pytorchs_saved_values_give_pytorchs_gradients(torch, d, dtype):
    rng = np.random.default_rng(3)
    n = 5000
    inputs = [np.concatenate([EDGES, rng.normal(0, 3, n)]).astype(dtype)]
    if len(d.formulas) == 2:
        inputs.append(np.concatenate([EDGES_OTHER, rng.normal(0, 3, n)]).astype(dtype))
    grad = rng.uniform(-2, 2, inputs[0].size).astype(dtype)
    expected, saved = _torch_gradients(torch, d, inputs, grad)
    # minigrad's node for the same op, its saved tensors replaced by PyTorch's
    import minigrad
    from minigrad.autograd.graph import SavedTensor

    leaves = [minigrad.tensor(x, requires_grad=True) for x in inputs]
    node = getattr(minigrad, d.name)(*leaves).grad_fn
    for name, values in saved.items():
        node._saved[name] = SavedTensor(minigrad.tensor(values))
    got = node.backward(grad)
    for g, e in zip(got, expected):
        how = EXACT if d.name in IEEE_ONLY else VECTOR_MATH
        assert_floats(g, e, AMPLIFIED.get((d.name, np.dtype(dtype).name), how))
