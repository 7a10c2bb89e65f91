"""Element-wise functions of one tensor.

Each node saves whichever tensor its derivative is cheapest to write with:
`exp`, `tanh`, `sigmoid`, `sqrt` and `relu` reuse their OUTPUT (exp's derivative *is*
its output); `log`, `sin`, `cos`, `abs` and `clamp` need their INPUT. That choice
decides which in-place modifications later break backward.
"""

from __future__ import annotations

import math

import numpy as np

from .._args import CLAMP_HEADS, clamp_bounds, combination_error
from .._cpu import FUSED_MULTIPLY_ADD
from .._creation import zeros
from .._dtype import result_type
from ..arrays.dispatch import backward2, unary
from ..arrays.layout import WRAPPED_NUMBER, fresh_result, laid_out_as, reorders, step_layout
from ..autograd.graph import INPUT, VALUE, SavedTensor, efficient_zeros
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record, record_elementwise
from ..kernels import ahead, passes
from ..kernels import elementwise as K
from ..tensor import Tensor
from .declaration import declare, functions_declared_in, unary_op
from .formulas import ArrayFormulaNode, Formula, FormulaNode, helper, named, on_arrays
from .pointwise import ClampBackward0, clamp_tensors, clamp_tensors_
from .tangent_formulas import AUTO_ELEMENT_WISE, Tangent

# 1 - y*y with one rounding where this machine's PyTorch fuses it (see `minigrad._cpu`)
TANH_BACKWARD = K.tanh_backward if FUSED_MULTIPLY_ADD else K.tanh_backward_rounded_twice
if not FUSED_MULTIPLY_ADD:  # (the kernel the lessons' backward runs here: `kernels.ahead`)
    ahead.HOST_CHOICE["tanh_backward"] = "tanh_backward_rounded_twice"


# Long arrays run these instead of the kernels (`vectorised=`, `vectorised_fused=`).


def sigmoid_in_passes(x: np.ndarray, out: np.ndarray) -> None:
    """1 / (1 + exp(-x)) in vectorised passes, for long arrays."""
    with np.errstate(all="ignore"):
        np.negative(x, out=out)
        np.exp(out, out=out)
        np.add(out, 1, out=out)
        np.divide(1, out, out=out)


def sin_backward_in_passes(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """grad * cos(x), in two vectorised passes (the same two roundings as the kernel)."""
    with np.errstate(all="ignore"):
        np.cos(x, out=out)
        np.multiply(grad, out, out=out)


def cos_backward_in_passes(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """-grad * sin(x), in vectorised passes (negating is exact, so its place does not
    matter)."""
    with np.errstate(all="ignore"):
        np.sin(x, out=out)
        np.multiply(grad, out, out=out)
        np.negative(out, out=out)


# -- declared ops: see `declaration.py` -----------------------------------------------------
# Each formula is PyTorch's, in minigrad code; what a node saves follows from it
# (`result`: the output, `self`: the input). `fused` computes the same formula in one
# pass when no graph is recorded.

unary_op("exp", node="ExpBackward0", kernel=K.exp, vectorised=np.exp,
         formula="grad * result", fused=K.mul,
         doc="e to the power of each element. Its derivative is its own result, so it "
             "saves its output.")

unary_op("log", node="LogBackward0", kernel=K.log, vectorised=np.log,
         formula="grad / self", fused=K.log_backward,
         doc="The natural logarithm (-inf at 0, nan below). Saves its input.")

unary_op("log1p", node="Log1PBackward0", kernel=K.log1p, vectorised=np.log1p,
         formula="grad / (self + 1)", fused=K.log1p_backward,
         doc="log(1 + x), exact for small x. Saves its input.")

unary_op("expm1", node="Expm1Backward0", kernel=K.expm1, vectorised=np.expm1,
         formula="grad * (result + 1)", fused=K.expm1_backward,
         doc="exp(x) - 1, exact for small x. Saves its output.")

unary_op("sin", node="SinBackward0", kernel=K.sin, vectorised=np.sin,
         formula="grad * self.cos()", fused=K.sin_backward,
         vectorised_fused=sin_backward_in_passes,
         doc="The sine. Its derivative cos(x) needs the input, so it saves its input.")

unary_op("cos", node="CosBackward0", kernel=K.cos, vectorised=np.cos,
         formula="grad * -self.sin()", fused=K.cos_backward,
         vectorised_fused=cos_backward_in_passes,
         doc="The cosine. Its derivative -sin(x) needs the input, so it saves its input.")

def _in_double(ufunc):
    """ufunc(x) computed in double and rounded to x's dtype, for long arrays: float32
    comes out correctly rounded, as PyTorch's (numpy's own float32 cosh is 2 ulps off)
    and as the kernels' (which compute in double too)."""
    def forward(x: np.ndarray, out: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            ufunc(x, out=out, dtype=np.float64, casting="same_kind")
    return forward


def _times_in_passes(ufunc):
    """grad * ufunc(x) in two vectorised passes, for long arrays: ufunc(x) rounded to
    the arrays' dtype first, as the forward and PyTorch's two ops round it."""
    def fused(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            ufunc(x, out=out, dtype=np.float64, casting="same_kind")
            np.multiply(grad, out, out=out)
    return fused


def _tan_backward_in_passes(grad: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """grad * (1 + y*y), in vectorised passes (the same roundings as the kernel)."""
    with np.errstate(all="ignore"):
        np.multiply(y, y, out=out)
        np.add(out, 1, out=out)
        np.multiply(grad, out, out=out)


unary_op("tan", node="TanBackward0", kernel=K.tan, vectorised=np.tan,
         formula="grad * (1 + result.pow(2))", fused=K.tan_backward,
         vectorised_fused=_tan_backward_in_passes,
         doc="The tangent. Its derivative 1 + tan(x)**2 needs only the result, so it saves "
             "its output.")

unary_op("cosh", node="CoshBackward0", kernel=K.cosh, vectorised=_in_double(np.cosh),
         formula="grad * self.sinh()", fused=K.cosh_backward,
         vectorised_fused=_times_in_passes(np.sinh),
         doc="The hyperbolic cosine. Its derivative sinh(x) needs the input, so it saves "
             "its input.")

unary_op("sinh", node="SinhBackward0", kernel=K.sinh, vectorised=_in_double(np.sinh),
         formula="grad * self.cosh()", fused=K.sinh_backward,
         vectorised_fused=_times_in_passes(np.cosh),
         doc="The hyperbolic sine. Its derivative cosh(x) needs the input, so it saves "
             "its input.")

unary_op("tanh", node="TanhBackward0", kernel=K.tanh, vectorised=np.tanh,
         formula="tanh_backward(grad, result)", fused=TANH_BACKWARD,
         doc="The hyperbolic tangent. Its derivative 1 - tanh(x)**2 needs only the "
             "result, so it saves its output.")

unary_op("sigmoid", node="SigmoidBackward0", kernel=K.sigmoid, vectorised=sigmoid_in_passes,
         formula="sigmoid_backward(grad, result)", fused=K.sigmoid_backward,
         doc="1 / (1 + exp(-x)). Its derivative y * (1 - y) needs only the result y, so it "
             "saves its output.")

unary_op("relu", node="ReluBackward0", kernel=K.relu,
         formula="threshold_backward(grad, result, 0)", fused=K.relu_backward,
         keeps_integers=True, bool_error=(RuntimeError, "Boolean inputs not supported for relu"),
         doc="max(x, 0). The gradient passes where the result is positive, so it saves "
             "its output.")

unary_op("sqrt", node="SqrtBackward0", kernel=K.sqrt,
         formula="grad / (2 * result)", fused=K.sqrt_backward,
         doc="The square root (nan below 0). Its derivative 1 / (2 sqrt(x)) needs only the "
             "result, so it saves its output.")

def _rsqrt_backward(grad: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """-0.5 * grad * y**3 (y**3 as y * y * y), in PyTorch's order of roundings."""
    with np.errstate(all="ignore"):
        np.multiply(y, y, out=out)
        np.multiply(out, y, out=out)
        np.multiply(np.multiply(grad, grad.dtype.type(-0.5)), out, out=out)


unary_op("rsqrt", node="RsqrtBackward0", kernel=passes.rsqrt,
         formula="-0.5 * grad * result.pow(3)", fused=_rsqrt_backward,
         doc="1 / sqrt(x) (inf at 0, nan below). Its derivative -1 / (2 x sqrt(x)) is "
             "-y**3 / 2 in its result y, so it saves its output.")

unary_op("abs", node="AbsBackward0", kernel=K.abs,
         formula="grad * self.sgn()", fused=K.abs_backward,
         keeps_integers=True, operator="__abs__",
         bool_error=(NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'"),
         tangent="self_t * self_p.sgn()",
         doc="|x|. Its derivative is the sign of the input, so it saves its input.")


# -- clamp -------------------------------------------------------------------------------


class ClampBackward1(ArrayFormulaNode):
    """clamp(x, min, max) with number bounds: the gradient passes where x was
    inside the bounds. Saves the INPUT and the bounds (None where absent)."""

    tangent = AUTO_ELEMENT_WISE
    saves = {"self": INPUT, "min": VALUE, "max": VALUE}
    formulas = (Formula("self", "clamp_backward(grad, self, min, max)"),)


@on_arrays("clamp_backward")
def _clamp_backward_on_arrays(grad: np.ndarray, x: np.ndarray, min, max) -> np.ndarray:  # noqa: A002
    """clamp_backward's fused kernel: one pass, both bounds compared at once."""
    lo = -math.inf if min is None else min
    hi = math.inf if max is None else max
    out, flat_out, (flat_x, flat_grad) = fresh_result(
        grad.shape, grad.dtype, x.astype(grad.dtype, copy=False), grad)
    K.clamp_backward(flat_grad, flat_x, grad.dtype.type(lo), grad.dtype.type(hi), flat_out)
    if reorders(grad.shape, (grad, x, WRAPPED_NUMBER)):
        # (PyTorch's steps: `where(x >= min & x <= max, grad, 0)`, the condition laid out
        # by x beside a number, then the where by the condition, grad and a 0-d zero)
        condition = step_layout(x, number=True)
        out = laid_out_as(out, step_layout(condition, grad, _ZERO_D, dtype=grad.dtype))
    return out


_ZERO_D = np.zeros(())  # (`where`'s 0-d zero: an operand of its step)


def _clamp_bounds(min, max):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return (-math.inf if min is None else min, math.inf if max is None else max)


def _clamp_data(x: np.ndarray, lo, hi, out_dtype=None) -> np.ndarray:
    out_dtype = x.dtype if out_dtype is None else out_dtype
    if x.dtype.kind != "f" or out_dtype != x.dtype:
        return np.clip(x.astype(out_dtype), lo, hi).astype(out_dtype)
    out, flat_out, (flat_x,) = fresh_result(x.shape, x.dtype, x)  # (laid out as x is)
    K.clamp(flat_x, x.dtype.type(lo), x.dtype.type(hi), flat_out)
    return out


def _bounds(fn: str, args: tuple, min, max) -> tuple:  # noqa: A002
    """clamp's bounds, given positionally (`clamp(0, 1)`) or by keyword."""
    if len(args) > 2 or (args and min is not None) or (len(args) == 2 and max is not None):
        given = {k: v for k, v in (("min", min), ("max", max)) if v is not None}
        raise combination_error(fn, args, given, CLAMP_HEADS, tail=False)
    if args:
        min = args[0]  # noqa: A001
    if len(args) == 2:
        max = args[1]  # noqa: A001
    return min, max


def clamp(x: Tensor, *args, min=None, max=None) -> Tensor:  # noqa: A002
    """Limit every element to [min, max]."""
    min, max = _bounds("clamp", args, min, max)  # noqa: A001
    clamp_bounds(x, "clamp", min, max, len(args))
    lo, hi = _clamp_bounds(min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return clamp_tensors(x, min, max)
    # Float bounds on an integer tensor promote the result, as in PyTorch.
    dt = result_type(x, *(b for b in (min, max) if b is not None))
    out = Tensor._make(_clamp_data(x._data, lo, hi, dt.np))
    node = record(ClampBackward1, out, x)
    if node is not None:
        node._saved.update({"self": SavedTensor(x), "min": min, "max": max})
    return out


def clamp_(x: Tensor, *args, min=None, max=None) -> Tensor:  # noqa: A002
    """`clamp` in place."""
    min, max = _bounds("clamp_", args, min, max)  # noqa: A001
    clamp_bounds(x, "clamp_", min, max, len(args))
    lo, hi = _clamp_bounds(min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return clamp_tensors_(x, min, max)
    if result_type(x, *(b for b in (min, max) if b is not None)) is not x.dtype:
        raise RuntimeError("result type Float can't be cast to the desired output type long int")
    node = begin_inplace(ClampBackward1, x)
    original = x.clone() if node is not None else None  # (PyTorch's recorded clone)
    x._data[...] = _clamp_data(x._data, lo, hi)
    finish_inplace(x, node)
    if node is not None:
        node._saved.update({"self": SavedTensor(original), "min": min, "max": max})
    return x


# -- round, floor, ceil, sign: flat almost everywhere --------------------------------------


class _Steps(ArrayFormulaNode):
    """A step function: its derivative is 0 wherever it exists, so the gradient is
    zeros whatever the input was. Saves nothing. (Learners meet these as "my loss
    went through round() and nothing learns".)"""

    tangent = AUTO_ELEMENT_WISE
    elementwise = True
    formulas = (Formula("self", "zeros_like(grad)"),)


class RoundBackward0(_Steps):
    """round(x), halves to even: a zero gradient."""


class RoundBackward1(_Steps):
    """round(x, decimals=d): a zero gradient."""


def _rounded(x: np.ndarray, decimals: int) -> np.ndarray:
    if x.dtype.kind != "f":  # integers and bools are already whole numbers
        return x.copy()
    return np.round(x, decimals) if decimals else np.round(x)


# `round(x)` and `round(x, decimals=d)` are two overloads in PyTorch, recorded as two
# nodes even when d is 0: "no decimals given" is told apart from 0.
_WHOLE = None


def round(x: Tensor, *, decimals: int = _WHOLE) -> Tensor:  # noqa: A001 - PyTorch's name
    """Round to the nearest integer (halves to even), or to `decimals` places."""
    out = Tensor._make(_rounded(x._data, decimals or 0))
    record_elementwise(RoundBackward0 if decimals is _WHOLE else RoundBackward1, out, x)
    return out


def round_(x: Tensor, *, decimals: int = _WHOLE) -> Tensor:
    """`round` in place."""
    node = begin_inplace(RoundBackward0 if decimals is _WHOLE else RoundBackward1, x)
    x._data[...] = _rounded(x._data, decimals or 0)
    finish_inplace(x, node)
    return x


unary_op("floor", node="FloorBackward0", kernel=K.floor, vectorised=np.floor,
         formula="zeros_like(grad)", fused=K.zero, keeps_integers=True,
         bool_error=(NotImplementedError, "\"floor_vml_cpu\" not implemented for 'Bool'"),
         doc="The largest whole number <= x. Flat almost everywhere: a zero gradient, "
             "nothing saved.")

unary_op("ceil", node="CeilBackward0", kernel=K.ceil, vectorised=np.ceil,
         formula="zeros_like(grad)", fused=K.zero, keeps_integers=True,
         bool_error=(NotImplementedError, "\"ceil_vml_cpu\" not implemented for 'Bool'"),
         doc="The smallest whole number >= x. A zero gradient, nothing saved.")

def _trunc(x: np.ndarray, out: np.ndarray) -> None:
    """x rounded towards zero (an integer stays itself)."""
    if x.dtype.kind == "f":
        np.trunc(x, out=out)
    else:
        out[...] = x


def _frac(x: np.ndarray, out: np.ndarray) -> None:
    """x - trunc(x), as PyTorch computes it (nan at +-inf); PyTorch refuses integers."""
    if x.dtype.kind != "f":
        kind = "Long" if x.dtype.kind == "i" else "Bool"
        raise NotImplementedError(f"\"frac_cpu\" not implemented for '{kind}'")
    with np.errstate(all="ignore"):
        np.trunc(x, out=out)
        np.subtract(x, out, out=out)


unary_op("trunc", node="TruncBackward0", kernel=_trunc,
         formula="zeros_like(grad)", fused=K.zero, keeps_integers=True, aliases=("fix",),
         bool_error=(NotImplementedError, "\"trunc_vml_cpu\" not implemented for 'Bool'"),
         doc="x rounded towards zero. Flat almost everywhere: a zero gradient, nothing "
             "saved.")

class FracBackward0(ArrayFormulaNode):
    """frac(x) = x - trunc(x): its derivative is 1 wherever it has one, so the gradient
    passes unchanged (the same tensor, as PyTorch passes it). Saves nothing."""

    tangent = Tangent("self_t")
    elementwise = True
    formulas = (Formula("self", "grad"),)


def frac(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """The fractional part, x - trunc(x), with the sign of x."""
    out = Tensor._make(unary(_frac, input._data))
    record_elementwise(FracBackward0, out, input)
    return out


def frac_(input: Tensor) -> Tensor:  # noqa: A002
    """`frac` in place."""
    values = unary(_frac, input._data)  # (an integer tensor raises before any check)
    node = begin_inplace(FracBackward0, input)
    input._data[...] = values
    finish_inplace(input, node)
    return input


unary_op("sign", node="SignBackward0", kernel=K.sign, function_inplace=False,
         formula="zeros_like(grad)", fused=K.zero, keeps_integers=True,
         doc="-1, 0 or 1 (0 for nan and -0.0). A zero gradient, nothing saved.")

unary_op("sgn", node="SgnBackward0", kernel=K.sign, function_inplace=False,
         formula="sgn_backward(self, grad, result)", fused=None, fused_reads=None,
         keeps_integers=True,
         doc="The sign, as `sign` for real tensors (`sgn` extends it to complex ones). Its "
             "formula reads the input and the result, so it saves both; for real "
             "tensors the gradient is zero.")


# -- the backward ops of tanh, sigmoid and relu ------------------------------------------
# PyTorch's formulas for these three call an op of their own (`tanh_backward`, ...),
# which a `create_graph=True` backward records with a node of its own: the gradient
# of `x.tanh()` is a TanhBackwardBackward0. Their own formulas are PyTorch's too.


class TanhBackwardBackward0(FormulaNode):
    """tanh_backward(grad_output, output) = grad_output * (1 - output**2)."""

    tangent = Tangent("tanh_backward(dense(grad_output_t, grad_output_p), output_p) + "
                      "output_t * (-2 * output_p * grad_output_p)")
    saves = {"grad_output": INPUT, "output": INPUT}
    formulas = (Formula("grad_output", "tanh_backward(grad, output)"),
                Formula("output", "grad * (-2 * output * grad_output)"))
    elementwise = True


class SigmoidBackwardBackward0(FormulaNode):
    """sigmoid_backward(grad_output, output) = grad_output * (1 - output) * output."""

    tangent = Tangent("sigmoid_backward(dense(grad_output_t, grad_output_p), output_p) + "
                      "output_t * grad_output_p * (-2 * output_p + 1)")
    saves = {"grad_output": INPUT, "output": INPUT}
    formulas = (Formula("grad_output", "sigmoid_backward(grad, output)"),
                Formula("output", "grad * grad_output * (-2 * output + 1)"))
    elementwise = True


class ThresholdBackwardBackward0(FormulaNode):
    """threshold_backward(grad_output, self, threshold): grad_output where self is
    above the threshold, else 0."""

    tangent = Tangent("zeros_like(self_p) + threshold_backward(dense(grad_output_t, "
                      "grad_output_p), self_p, threshold)")
    saves = {"self": INPUT, "threshold": VALUE}
    formulas = (Formula("grad_output", "threshold_backward(grad, self, threshold)"),
                Formula("self", "zeros_like(grad)"))
    elementwise = True


def _backward_op(node_cls, kernel, grad_output: Tensor, saved: Tensor, name: str,
                 values: dict | None = None) -> Tensor:
    """`kernel(grad_output, saved)`, recorded as `node_cls`, which saves both tensors its
    formulas read (PyTorch's backward ops save theirs whether needed or not) and any
    other `values` (on the node made for a graph, or for a tangent only)."""
    out = Tensor._make(backward2(kernel, grad_output._data, saved._data))
    node = record(node_cls, out, grad_output, saved,
                  like_output=grad_output._data.shape == saved._data.shape)
    if node is not None:
        node._saved[name] = SavedTensor(saved)
        if "grad_output" in node_cls.saves:
            node._saved["grad_output"] = SavedTensor(grad_output)
        if values:
            node._saved.update(values)
    return out


def tanh_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    """The gradient of tanh from its output (PyTorch's aten::tanh_backward)."""
    return _backward_op(TanhBackwardBackward0, TANH_BACKWARD, grad_output, output, "output")


def sigmoid_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    """The gradient of sigmoid from its output (PyTorch's aten::sigmoid_backward)."""
    return _backward_op(SigmoidBackwardBackward0, K.sigmoid_backward, grad_output, output,
                        "output")


def threshold_backward(grad_output: Tensor, self: Tensor, threshold) -> Tensor:
    """grad_output where `self` > threshold, else 0 (PyTorch's aten::threshold_backward;
    relu's gradient is threshold_backward(grad, result, 0))."""
    if threshold == 0:
        return _backward_op(ThresholdBackwardBackward0, K.relu_backward, grad_output, self,
                            "self", {"threshold": threshold})
    data = np.where(self._data <= threshold, 0, grad_output._data)
    out = Tensor._make(data.astype(grad_output._data.dtype, copy=False))
    node = record(ThresholdBackwardBackward0, out, grad_output, self)
    if node is not None:
        node._saved.update({"self": SavedTensor(self), "threshold": threshold})
    return out


# -- square: a power ---------------------------------------------------------------------


def square(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """x * x, as `x.pow(2)` (PyTorch's square is that power: PowBackward0)."""
    return input.pow(2)


def square_(input: Tensor) -> Tensor:  # noqa: A002
    """`square` in place: `x.pow_(2)`."""
    return input.pow_(2)


# -- declarations of the ops written by hand above (see `declaration.py`) ------------------


declare("clamp", nodes=(ClampBackward1, ClampBackward0), function=clamp, method=True,
        inplace=clamp_, aliases=("clip",))
declare("round", nodes=(RoundBackward0, RoundBackward1), function=round, method=True,
        inplace=round_)
declare("frac", nodes=(FracBackward0,), function=frac, method=True, inplace=frac_,
        function_inplace=True)
declare("square", function=square, method=True, inplace=square_, function_inplace=True)
declare("tanh_backward", nodes=(TanhBackwardBackward0,), aten=tanh_backward)
declare("sigmoid_backward", nodes=(SigmoidBackwardBackward0,), aten=sigmoid_backward)
declare("threshold_backward", nodes=(ThresholdBackwardBackward0,), aten=threshold_backward)


# The functions built from this module's declarations (`exp`, `exp_`, ...), under
# their public names, for the modules that call them directly (nn).
globals().update(functions_declared_in(__name__))


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


@helper
def sgn_backward(self: Tensor, grad: Tensor, result: Tensor) -> Tensor:
    """The gradient of `sgn` for real tensors: zero (its Jacobian is zero wherever it
    has one), as PyTorch's efficient zero tensor of `self`'s shape and dtype, which
    the mul and div it meets pass on (`efficient_zero_result`)."""
    return Tensor._make(efficient_zeros(self._data.shape, self._data.dtype))


@helper
def clamp_backward(grad: Tensor, self: Tensor, min, max) -> Tensor:  # noqa: A002
    """The gradient of clamp with number bounds: `grad` where `self` is within them
    (at a bound too), else 0."""
    if min is None and max is None:
        return grad
    zero = zeros((), dtype=grad.dtype)
    if min is not None and max is not None:
        # (in place into the first condition, as PyTorch's `logical_and_`: its layout)
        return named("where")((self >= min).logical_and_(self <= max), grad, zero)
    return named("where")(self >= min if max is None else self <= max, grad, zero)
