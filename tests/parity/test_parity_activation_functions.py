"""The activations of `ops/piecewise_activations.py` and `ops/smooth_activations.py`
(and their nn modules) against
PyTorch: values, gradients, node names, saved tensors and versions, in place and out,
and the graph a `create_graph=True` backward records (HardtanhBackwardBackward0, ...)."""

from __future__ import annotations

import pytest
from float_policy import CHAIN, assert_floats
from parity_harness import check

import minigrad

VALUES = [-3.0, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 6.0, 7.5, float("inf"), float("nan")]

ACTIVATIONS = {
    "threshold": lambda F, x: F.threshold(x, 0.25, -2.0),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh_bounds": lambda F, x: F.hardtanh(x, -0.5, 1.0),
    "relu6": lambda F, x: F.relu6(x),
    "hardshrink": lambda F, x: F.hardshrink(x),
    "hardshrink_1": lambda F, x: F.hardshrink(x, 1.0),
    "softshrink": lambda F, x: F.softshrink(x),
    "softshrink_0": lambda F, x: F.softshrink(x, 0.0),
    "softsign": lambda F, x: F.softsign(x),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "silu": lambda F, x: F.silu(x),
    "mish": lambda F, x: F.mish(x),
    "softplus": lambda F, x: F.softplus(x),
    "softplus_beta": lambda F, x: F.softplus(x, 2.0, 1.5),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "elu": lambda F, x: F.elu(x),
    "elu_alpha": lambda F, x: F.elu(x, 0.5),
    "celu": lambda F, x: F.celu(x, 0.3),
    "selu": lambda F, x: F.selu(x),
}
IN_PLACE = {
    "threshold_": lambda F, x: F.threshold_(x, 0.25, -2.0),
    "threshold_inplace": lambda F, x: F.threshold(x, 0.25, -2.0, inplace=True),
    "hardtanh_": lambda F, x: F.hardtanh_(x, -0.5, 1.0),
    "hardtanh_inplace": lambda F, x: F.hardtanh(x, inplace=True),
    "relu6_inplace": lambda F, x: F.relu6(x, inplace=True),
    "relu_inplace": lambda F, x: F.relu(x, inplace=True),
    "silu_inplace": lambda F, x: F.silu(x, inplace=True),
    "mish_inplace": lambda F, x: F.mish(x, inplace=True),
    "hardsigmoid_inplace": lambda F, x: F.hardsigmoid(x, inplace=True),
    "hardswish_inplace": lambda F, x: F.hardswish(x, inplace=True),
    "elu_": lambda F, x: F.elu_(x, 0.5),
    "elu_inplace": lambda F, x: F.elu(x, inplace=True),
    "celu_": lambda F, x: F.celu_(x, 0.3),
    "selu_inplace": lambda F, x: F.selu(x, inplace=True),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_matches_torch(torch, name, dtype):
    check(torch, lambda c: ACTIVATIONS[name](c.m.nn.functional, c.leaf(VALUES, dtype)))


@pytest.mark.parametrize("name", list(IN_PLACE))
def test_activation_in_place_matches_torch(torch, name):
    """The node reads a recorded copy of the input; the version goes up by one."""
    def program(c):
        y = c.keep(c.leaf(VALUES) * 1)
        return IN_PLACE[name](c.m.nn.functional, y)

    check(torch, program)


@pytest.mark.parametrize("name", [n for n in ACTIVATIONS if n not in ("softsign", "tanhshrink")])
def test_activation_saved_input_changed_matches_torch(torch, name):
    """The saved input modified in place before backward: PyTorch's version error."""
    def program(c):
        y = c.keep(c.leaf(VALUES) * 1)
        z = ACTIVATIONS[name](c.m.nn.functional, y)
        y.add_(1)
        return z

    check(torch, program)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_double_backward_matches_torch(torch, name):
    """The graph of the gradient (HardtanhBackwardBackward0, ...) and its gradient."""
    def program(c):
        x = c.leaf([-3.0, -0.75, -0.25, 0.3, 0.75, 2.0, 7.0])
        y = ACTIVATIONS[name](c.m.nn.functional, x * x - 1)
        (g,) = c.m.autograd.grad((y * y).sum(), x, create_graph=True)
        return c.keep(g)

    check(torch, program)


@pytest.mark.parametrize("case", ["int", "bool", "bad-lambd", "bad-bounds"])
@pytest.mark.parametrize("name", ["threshold", "hardtanh", "relu6", "hardshrink", "softshrink",
                                  "silu", "mish", "softplus", "hardsigmoid", "hardswish",
                                  "elu", "celu", "selu"])
def test_activation_errors_match_torch(torch, name, case):
    def program(c):
        F = c.m.nn.functional
        if case in ("int", "bool"):
            x = c.keep(c.m.tensor([3, -1, 0, 9] if case == "int" else [True, False]))
            return ACTIVATIONS[name](F, x)
        x = c.leaf(VALUES)
        if case == "bad-lambd":
            return F.softshrink(x, -0.5) if name == "softshrink" else F.hardshrink(x, -0.5)
        return F.hardtanh(x, 1.0, -1.0)

    check(torch, program)


MODULES = ["Threshold(0.1, 20.0)", "Threshold(0.1, 20.0, inplace=True)", "Hardtanh()",
           "Hardtanh(-2, 2, True)", "ReLU6()", "ReLU6(inplace=True)", "Hardshrink()",
           "Softshrink(0.3)", "Softsign()", "Tanhshrink()", "SiLU()", "SiLU(inplace=True)",
           "Mish(True)", "Hardsigmoid()", "Hardswish(inplace=True)", "Softplus()",
           "Softplus(2, 5.5)", "ELU()", "ELU(0.5, True)", "CELU()", "CELU(0.5, True)",
           "SELU()", "SELU(True)"]


@pytest.mark.parametrize("spec", MODULES)
def test_activation_module_matches_torch(torch, spec):

    assert repr(eval(f"nn.{spec}", {"nn": minigrad.nn})) == repr(  # noqa: S307
        eval(f"nn.{spec}", {"nn": torch.nn}))  # noqa: S307

    def program(c):
        layer = eval(f"nn.{spec}", {"nn": c.m.nn})  # noqa: S307
        return layer(c.keep(c.leaf(VALUES) * 1))

    check(torch, program)


TANGENT_AT = [0.3, -0.6, 0.0, 2.0, -4.0, 5.0, 0.45]
TANGENT = [1.0, -2.0, 0.5, 0.25, 1.5, -1.0, 3.0]
ELEMENT_WISE = ["asin", "acos", "atan", "asinh", "atanh", "tan", "log2", "log10", "exp2",
                "rsqrt", "square", "trunc", "frac", "erf", "erfc", "erfinv", "deg2rad",
                "rad2deg", "sinc", "nan_to_num", "angle", "logit"]


def _tangent(lib, fn, inplace: bool = False):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        dual = fw.make_dual(lib.tensor(TANGENT_AT, dtype=lib.float64),
                            lib.tensor(TANGENT, dtype=lib.float64))
        out = fn(lib, dual * 1 if inplace else dual)
        return fw.unpack_dual(out).tangent.numpy()


@pytest.mark.parametrize("name", list(ACTIVATIONS) + list(IN_PLACE))
def test_activation_tangent_matches_torch(torch, name):
    """Forward mode: the tangent of each activation (PyTorch's auto_element_wise, or
    its formula for an in-place form)."""
    fn = {**ACTIVATIONS, **IN_PLACE}[name]
    got = _tangent(minigrad, lambda lib, x: fn(lib.nn.functional, x), name in IN_PLACE)
    want = _tangent(torch, lambda lib, x: fn(lib.nn.functional, x), name in IN_PLACE)
    assert_floats(got, want, CHAIN)


@pytest.mark.parametrize("name", ELEMENT_WISE)
def test_element_wise_tangent_matches_torch(torch, name):
    got = _tangent(minigrad, lambda lib, x: getattr(lib, name)(x))
    want = _tangent(torch, lambda lib, x: getattr(lib, name)(x))
    assert_floats(got, want, CHAIN)
