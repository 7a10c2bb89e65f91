"""The inverse trigonometric and hyperbolic functions, angles in degrees, and sinc.

Each derivative is a function of the input (1 / sqrt(1 - x**2) for asin, ...), so
each node saves its INPUT. deg2rad and rad2deg are multiplications by a constant:
their derivative is that constant, and they save nothing.

The forwards are numpy's ufuncs computed in double (float32 correctly rounded); the
fused backwards are numpy passes in the order PyTorch's formula rounds
(`kernels/passes.py`): no numba kernel, so these ops cost no compile time.
"""

from __future__ import annotations

import math

import numpy as np

from .._creation import zeros
from ..arrays.dispatch import unary
from ..autograd.inplace import begin_inplace, finish_inplace
from ..kernels import elementwise as K
from ..kernels.passes import in_double, rsqrt_into, scaled, times_factor
from ..tensor import Tensor
from .declaration import Declaration, unary_op
from .formulas import Formula, FormulaNode, Scalar, helper, named

# -- fused backwards: each formula's steps, one numpy pass each -----------------------------


def asin_backward(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """grad * (-x * x + 1).rsqrt()."""
    with np.errstate(all="ignore"):
        np.negative(x, out=out)
        np.multiply(out, x, out=out)
        np.add(out, 1, out=out)
        rsqrt_into(out, out)
        np.multiply(grad, out, out=out)


def acos_backward(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """grad * -((-x * x + 1).rsqrt())."""
    with np.errstate(all="ignore"):
        np.negative(x, out=out)
        np.multiply(out, x, out=out)
        np.add(out, 1, out=out)
        rsqrt_into(out, out)
        np.negative(out, out=out)
        np.multiply(grad, out, out=out)


def atan_backward(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """grad / (x * x + 1)."""
    with np.errstate(all="ignore"):
        np.multiply(x, x, out=out)
        np.add(out, 1, out=out)
        np.divide(grad, out, out=out)


def _squared_plus(grad: np.ndarray, x: np.ndarray, out: np.ndarray, c: int) -> None:
    """grad * (x * x + c).rsqrt(): asinh's (c = 1) and acosh's (c = -1)."""
    with np.errstate(all="ignore"):
        np.multiply(x, x, out=out)
        np.add(out, c, out=out)
        rsqrt_into(out, out)
        np.multiply(grad, out, out=out)


def asinh_backward(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """grad * (x.pow(2) + 1).rsqrt()."""
    _squared_plus(grad, x, out, 1)


def acosh_backward(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """grad * (x * x - 1).rsqrt()."""
    _squared_plus(grad, x, out, -1)


def atanh_backward(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """grad * 1 / (1 - x.pow(2)) (grad * 1 is grad)."""
    with np.errstate(all="ignore"):
        np.multiply(x, x, out=out)
        np.subtract(1, out, out=out)
        np.divide(grad, out, out=out)


# -- declarations (see `declaration.py`); formulas as PyTorch's derivatives.yaml writes them

unary_op("asin", node="AsinBackward0", kernel=in_double(np.arcsin),
         formula="grad * (-self * self + 1).rsqrt()", fused=asin_backward,
         aliases=("arcsin",),
         doc="The inverse sine, in [-pi/2, pi/2] (nan outside [-1, 1]). Its derivative "
             "1 / sqrt(1 - x**2) needs the input, so it saves its input.")

unary_op("acos", node="AcosBackward0", kernel=in_double(np.arccos),
         formula="grad * -((-self * self + 1).rsqrt())", fused=acos_backward,
         aliases=("arccos",),
         doc="The inverse cosine, in [0, pi] (nan outside [-1, 1]). Its derivative "
             "-1 / sqrt(1 - x**2) needs the input, so it saves its input.")

unary_op("atan", node="AtanBackward0", kernel=in_double(np.arctan),
         formula="grad / (self * self + 1)", fused=atan_backward, aliases=("arctan",),
         doc="The inverse tangent, in (-pi/2, pi/2). Its derivative 1 / (1 + x**2) needs "
             "the input, so it saves its input.")

_asinh = unary_op("asinh", node="AsinhBackward0", kernel=in_double(np.arcsinh),
         formula="grad * (self.pow(2) + 1).rsqrt()", fused=asinh_backward,
         aliases=("arcsinh",),
         doc="The inverse hyperbolic sine. Its derivative 1 / sqrt(x**2 + 1) needs the "
             "input, so it saves its input.")

_acosh = unary_op("acosh", node="AcoshBackward0", kernel=in_double(np.arccosh),
         formula="grad * (self * self - 1).rsqrt()", fused=acosh_backward,
         aliases=("arccosh",),
         doc="The inverse hyperbolic cosine (nan below 1). Its derivative "
             "1 / sqrt(x**2 - 1) needs the input, so it saves its input.")

_atanh = unary_op("atanh", node="AtanhBackward0", kernel=in_double(np.arctanh),
         formula="grad * 1 / (1 - self.pow(2))", fused=atanh_backward,
         aliases=("arctanh",),
         doc="The inverse hyperbolic tangent (+-inf at +-1, nan beyond). Its derivative "
             "1 / (1 - x**2) needs the input, so it saves its input.")

def _in_place_without_derivative(declared: Declaration, node: str) -> None:
    """Give `declared`'s in-place form (`asinh_`, and its alias's) PyTorch's node for an
    in-place op it gives no derivative (`not_implemented("inplace version of asinh")`
    in derivatives.yaml): the node records, its backward raises PyTorch's
    NotImplementedError, and forward mode refuses it."""
    name = declared.name
    node_cls = type(node, (FormulaNode,), {
        "__module__": __name__, "__qualname__": node, "elementwise": True,
        "__doc__": f"{name}_, in place: PyTorch gives it no derivative.",
        "forward_ad_refused": f"{name}_",
        "formulas": (Formula("self", f"not_implemented('inplace version of {name}')"),),
    })
    op = declared.functions[name]

    def op_(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        if not input.dtype.is_floating_point:
            raise RuntimeError("result type Float can't be cast to the desired output "
                               f"type {input.dtype.type_name}")
        values = op(input.detach())._data
        recorded = begin_inplace(node_cls, input)
        input._data[...] = values
        finish_inplace(input, recorded)
        return input

    op_.__name__ = op_.__qualname__ = name + "_"
    op_.__doc__ = f"In place: {declared.doc} (not differentiable in place, as in PyTorch)"
    for public in [n for n, f in declared.methods.items() if n.endswith("_")]:
        declared.methods[public] = op_
        if public in declared.functions:
            declared.functions[public] = op_
    declared.nodes = (*declared.nodes, node_cls)


_in_place_without_derivative(_asinh, "AsinhBackward1")
_in_place_without_derivative(_acosh, "AcoshBackward1")
_in_place_without_derivative(_atanh, "AtanhBackward1")


# pi / 180 and 180 / pi, as PyTorch's M_PI_180 and M_180_PI
_PI_180 = math.pi / 180
_180_PI = 180 / math.pi

unary_op("deg2rad", node="Deg2RadBackward0", kernel=scaled(_PI_180),
         formula="deg2rad_backward(grad)", fused=times_factor(_PI_180),
         doc="Degrees to radians: x * pi / 180. Its derivative is that constant, so it "
             "saves nothing.")

unary_op("rad2deg", node="Rad2DegBackward0", kernel=scaled(_180_PI),
         formula="rad2deg_backward(grad)", fused=times_factor(_180_PI),
         doc="Radians to degrees: x * 180 / pi. Its derivative is that constant, so it "
             "saves nothing.")


# -- sinc ---------------------------------------------------------------------------------


def sinc_forward(x: np.ndarray, out: np.ndarray) -> None:
    """sin(pi x) / (pi x), 1 at 0 (pi x rounded in x's dtype, as PyTorch's opmath)."""
    with np.errstate(all="ignore"):
        np.multiply(x, x.dtype.type(math.pi), out=out)
        sine = np.sin(out)
        np.divide(sine, out, out=out)
        out[x == 0] = 1


def sinc_backward_fused(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """`sinc_backward(grad, x)` in passes, its sin and cos through minigrad's own kernels
    (as the formula's ops run them), so the two agree to the bit."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        x_pi = x * t(math.pi)
        squared_pi = x * x * t(math.pi)
        np.multiply(x_pi, unary(K.cos, x_pi), out=out)
        np.subtract(out, unary(K.sin, x_pi), out=out)
        np.multiply(grad, out, out=out)
        np.divide(out, squared_pi, out=out)
        out[squared_pi == 0] = 0


unary_op("sinc", node="SincBackward0", kernel=sinc_forward,
         formula="sinc_backward(grad, self)", fused=sinc_backward_fused,
         doc="The normalised sinc, sin(pi x) / (pi x), 1 at 0. Its derivative needs the "
             "input, so it saves its input.")


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) -------------------


@helper
def deg2rad_backward(grad: Tensor) -> Tensor:
    """The gradient of deg2rad: grad * pi / 180 (a Scalar, MulBackward1)."""
    return grad * Scalar(_PI_180)


@helper
def rad2deg_backward(grad: Tensor) -> Tensor:
    """The gradient of rad2deg: grad * 180 / pi."""
    return grad * Scalar(_180_PI)


@helper
def sinc_backward(grad: Tensor, self: Tensor) -> Tensor:
    """(pi x cos(pi x) - sin(pi x)) / (pi x**2) times grad, 0 where x is 0 (where sinc
    is flat)."""
    self_pi = self * Scalar(math.pi)
    self_squared_pi = self * self * Scalar(math.pi)
    out = grad * ((self_pi * self_pi.cos()) - self_pi.sin()) / self_squared_pi
    return named("where")(self_squared_pi == 0.0, zeros((), dtype=grad.dtype), out)
