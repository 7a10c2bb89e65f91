"""Powers: `x ** p`, `x ** y` and `number ** x`, forward, backward and what each saves.

The derivative `p * x**(p-1)` needs the input `x`, so PowBackward0 saves it;
with a tensor exponent the gradient for the exponent is `result * log(x)`, so
PowBackward1 saves the output too.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._args import combination_error
from .._creation import zeros, zeros_like
from .._dtype import _BY_NUMPY, result_type
from ..arrays.dispatch import binary, scalar_op
from ..arrays.layout import fresh_result, laid_out_as, reorders, step_layout
from ..arrays.scalars import scalar_of
from ..autograd.graph import INPUT, OUTPUT, SavedTensor, efficient_zeros, is_efficient_zeros
from ..autograd.record import record
from ..kernels import elementwise as K
from ..tensor import Tensor, operand
from .arithmetic import VALUE, _inplace, _Save
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, Scalar, helper, named, on_arrays
from .public_forms import as_method, not_with_ndarray
from .tangent_formulas import AUTO_ELEMENT_WISE, Tangent

# (In lesson 4's table the powers stand with the rest of the arithmetic.)
OP_FAMILY = "arithmetic"

class PowBackward0(ArrayFormulaNode):
    """x ** p for a number p: grad * p * x**(p-1). Saves the input x."""

    tangent = AUTO_ELEMENT_WISE

    saves = {"self": INPUT, "exponent": VALUE}
    formulas = (Formula("self", "pow_backward(grad, self, exponent)"),)


class PowBackward1(ArrayFormulaNode):
    """x ** y for two tensors: saves x, y and the result (d/dy = result * log x)."""

    tangent = Tangent("pow_backward_self(dense(self_t, self_p), self_p, exponent_p) + "
                      "pow_backward_exponent(dense(exponent_t, exponent_p), self_p, exponent_p, "
                      "result)")
    saves = {"self": INPUT, "exponent": INPUT, "result": OUTPUT}
    formulas = (Formula("self", "pow_backward_self(grad, self, exponent)"),
                Formula("exponent", "pow_backward_exponent(grad, self, exponent, result)"))


class PowBackward2(ArrayFormulaNode):
    """number ** x: grad * result * log(number). Saves x and the result."""

    tangent = AUTO_ELEMENT_WISE
    saves = {"self": VALUE, "exponent": INPUT, "result": OUTPUT}
    scalars = ("self",)
    formulas = (Formula("exponent", "pow_backward_exponent(grad, self, exponent, result)"),)


def _log(number) -> float:
    """log of a Python number as PyTorch's Scalar.log() gives it: -inf at 0 and nan
    below (math.log raises for both)."""
    if number > 0 or number != number:  # positive, inf or nan
        return math.log(number)
    return -math.inf if number == 0 else math.nan


def _refuse_bool_pow(dt) -> None:
    if dt is _dtype.bool_:
        raise NotImplementedError('"pow" not implemented for \'Bool\'')


def pow(self: Tensor, exponent) -> Tensor:  # noqa: A001
    """self ** exponent, for a number or a tensor exponent."""
    exponent = operand(exponent)
    if exponent is NotImplemented:
        return exponent
    dt = _dtype.result_type(self, exponent)
    if isinstance(exponent, Tensor):
        _refuse_bool_pow(dt)
        kernel = K.pow if dt.is_floating_point else K.pow_int
        out = Tensor._make(binary(kernel, self._data, exponent._data, dt.np))
        node = record(PowBackward1, out, self, exponent)
        if node is not None:
            node._saved["exponent"] = SavedTensor(exponent)  # (in name order: see mul)
            node._saved["self"] = SavedTensor(self)
            node._saved["result"] = SavedTensor(out, is_output=True)
        return out
    kernel = K.pow_scalar
    if not dt.is_floating_point:
        if exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        # bool ** True / False (a bool result) is x or all True: the integer kernel
        # computes exactly that.
        kernel = K.pow_scalar_int
    out = Tensor._make(scalar_op(kernel, self._data, exponent, dt, wrapped=False))
    node = record(PowBackward0, out, self)
    if node is not None:
        node._saved["self"] = SavedTensor(self)
        node._saved["exponent"] = exponent
    return out


def rpow(self: Tensor, base) -> Tensor:
    """base ** self for a Python number base (`2 ** x`)."""
    base = operand(base)
    if base is NotImplemented:
        return base
    if isinstance(base, Tensor):
        return pow(base, self)
    dt = _dtype.result_type(self, base)
    _refuse_bool_pow(dt)
    kernel = K.rpow_scalar if dt.is_floating_point else K.rpow_scalar_int
    # (Unlike the other element-wise ops, PyTorch makes `number ** x` row-major
    # whatever x's layout.)
    data = np.asarray(self._data, order="C")
    out = Tensor._make(scalar_op(kernel, data, base, dt, reverse=True, wrapped=False))
    node = record(PowBackward2, out, self)
    if node is not None:
        node._saved["self"] = base
        node._saved["exponent"] = SavedTensor(self)
        node._saved["result"] = SavedTensor(out, is_output=True)
    return out


def pow_(self: Tensor, exponent) -> Tensor:
    exponent = operand(exponent)
    if exponent is NotImplemented:
        return exponent
    if isinstance(exponent, Tensor):
        raise NotImplementedError("minigrad supports pow_ with a number exponent only")

    def save(node, s, o, orig):
        node._saved["self"] = SavedTensor(orig)
        node._saved["exponent"] = exponent

    return _inplace(PowBackward0, lambda s, o: pow(s.detach(), o), self, exponent,
                    _Save(save, needs_original=lambda node: True), number_other=True)


def pow_function(input, exponent) -> Tensor:  # noqa: A002 - PyTorch's names
    """input ** exponent; either may be a number (`minigrad.pow(2, t)` is `2 ** t`)."""
    if isinstance(input, Tensor):
        result = pow(input, exponent)
    elif isinstance(exponent, Tensor):
        result = rpow(exponent, input)
    else:  # (two numbers: no signature fits)
        result = NotImplemented
    if result is NotImplemented:
        raise combination_error("pow", (input, exponent), {}, [
            "Tensor input, Tensor exponent, *, Tensor out = None",
            "Number self, Tensor exponent, *, Tensor out = None",
            "Tensor input, Number exponent, *, Tensor out = None"], tail=False)
    return result


pow_function.__name__ = pow_function.__qualname__ = "pow"  # (`minigrad.pow`)

declare("pow", nodes=(PowBackward0, PowBackward1, PowBackward2), function=pow_function,
        method=as_method(pow, heads=["Tensor exponent", "Number exponent"]),
        inplace=as_method(pow_, heads=["Tensor exponent", "Number exponent"]),
        attributes={"__pow__": pow, "__rpow__": not_with_ndarray(rpow), "__ipow__": pow_})


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


@helper
def pow_backward(grad: Tensor, self: Tensor, exponent) -> Tensor:
    """The gradient of `self ** exponent` for a number: zero for the exponent 0, else
    `grad * (exponent * self ** (exponent - 1))`, computed in double as PyTorch."""
    if exponent == 0:
        return zeros_like(self)
    p = Scalar(float(exponent))
    return grad * (p * self ** (p - 1))


@helper
def pow_backward_self(grad: Tensor, self: Tensor, exponent: Tensor) -> Tensor:
    """The gradient of `self ** exponent` for self (two tensors): exponent * self **
    (exponent - 1), and 0 where the exponent is 0."""
    slope = grad * (exponent * self.pow(exponent - Scalar(1)))
    return named("where")(exponent == 0.0, zeros((), dtype=grad.dtype), slope)


@helper
def pow_backward_exponent(grad: Tensor, self, exponent: Tensor, result: Tensor) -> Tensor:
    """The gradient of `self ** exponent` for the exponent: result * log(self), and 0
    where self is 0 and the exponent not negative (0 ** p is flat in p there).
    `self` is a tensor, or a number (`2 ** x`: a Scalar)."""
    where = named("where")
    zero = zeros((), dtype=grad.dtype)
    if isinstance(self, Scalar):
        slope = result * Scalar(_log(self.value))
        if self.value == 0:
            return grad * where(exponent >= 0, zero, slope)
        return grad * slope
    dtype = result_type(self, exponent)
    self_ = self if self.dtype is dtype else self.to(dtype)
    return grad * where((self == 0) & (exponent >= 0), zero, result * self_.log())


# -- the helpers' array versions: fused kernels, each one pass over the arrays -------------
# (`tests/minigrad/test_formulas_equal_backwards.py` checks each against its helper)


# (`where`'s 0-d zero, an operand of its step: with it not every operand has the
# result's shape, which turns TensorIterator's fast setup off)
_ZERO = np.zeros(())


@on_arrays("pow_backward")
def _pow_backward_on_arrays(grad: np.ndarray, self: np.ndarray, exponent) -> np.ndarray:
    if exponent != 0 and grad.base is not None and is_efficient_zeros(grad):
        return efficient_zeros(grad.shape, grad.dtype)  # (`grad * ...`: see `_arithmetic`)
    x = self.astype(grad.dtype, copy=False)
    out, flat_out, (flat_grad, flat_x) = fresh_result(grad.shape, grad.dtype, grad, x)
    K.pow_scalar_backward(flat_grad, flat_x, scalar_of(exponent, _BY_NUMPY[grad.dtype]),
                          flat_out)
    if reorders(grad.shape, (grad, x)):  # (PyTorch's steps, each laid out by its operands)
        factor = step_layout(step_layout(x), number=True)  # exponent * self.pow(exponent - 1)
        out = laid_out_as(out, step_layout(grad, factor, dtype=out.dtype))
    return out


@on_arrays("pow_backward_self")
def _pow_backward_self_on_arrays(grad: np.ndarray, self: np.ndarray,
                                 exponent: np.ndarray) -> np.ndarray:
    dt = grad.dtype
    out, flat_out, flats = fresh_result(grad.shape, dt, grad, self.astype(dt, copy=False),
                                        exponent.astype(dt, copy=False))
    K.pow_backward_self(*flats, flat_out)
    if reorders(grad.shape, (grad, self, exponent)):  # (PyTorch's steps, as above)
        power = step_layout(self, step_layout(exponent, number=True))  # self.pow(exponent - 1)
        slope = step_layout(grad, step_layout(exponent, power))
        out = laid_out_as(out, step_layout(step_layout(exponent, number=True), _ZERO, slope,
                                           dtype=out.dtype))  # where(exponent == 0, 0, slope)
    return out


@on_arrays("pow_backward_exponent")
def _pow_backward_exponent_on_arrays(grad: np.ndarray, self, exponent: np.ndarray,
                                     result: np.ndarray) -> np.ndarray:
    dt = grad.dtype
    if grad.base is not None and is_efficient_zeros(grad):
        return efficient_zeros(grad.shape, dt)  # (`grad * where(...)`: see `_arithmetic`)
    x, y = exponent.astype(dt, copy=False), result.astype(dt, copy=False)
    if not isinstance(self, np.ndarray):  # `number ** x`
        out, flat_out, flats = fresh_result(grad.shape, dt, grad, x, y)
        K.rpow_backward(*flats, scalar_of(_log(self), _BY_NUMPY[dt]), self == 0, flat_out)
        if reorders(grad.shape, (grad, exponent, result)):  # (PyTorch's steps, as above)
            slope = step_layout(result, number=True)  # result * log(self)
            if self == 0:  # where(exponent >= 0, 0, slope)
                slope = step_layout(step_layout(exponent, number=True), _ZERO, slope)
            out = laid_out_as(out, step_layout(grad, slope, dtype=dt))
        return out
    out, flat_out, flats = fresh_result(grad.shape, dt, grad, self.astype(dt, copy=False), x, y)
    K.pow_backward_exponent(*flats, flat_out)
    if reorders(grad.shape, (grad, self, exponent, result)):  # (PyTorch's steps, as above)
        # grad * where((self == 0) & (exponent >= 0), 0, result * self.log())
        flat = step_layout(step_layout(self, number=True), step_layout(exponent, number=True))
        slope = step_layout(flat, _ZERO, step_layout(result, step_layout(self)))
        out = laid_out_as(out, step_layout(grad, slope, dtype=dt))
    return out
