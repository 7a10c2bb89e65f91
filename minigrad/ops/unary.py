"""Element-wise functions of one tensor.

Each node saves whichever tensor its derivative is cheapest to write with:
`exp`, `tanh`, `sigmoid`, `sqrt` and `relu` reuse their OUTPUT (exp's derivative *is*
its output); `log`, `sin`, `cos`, `abs` and `clamp` need their INPUT. That choice
decides which in-place modifications later break backward.
"""

from __future__ import annotations

import math

import numpy as np

from .._args import clamp_bounds
from .._dtype import result_type
from ..arrays.dispatch import backward2, unary, unary_into
from ..arrays.layout import flat, fresh_result
from ..arrays.scalars import as_float_data
from ..autograd.graph import INPUT, OUTPUT, Node, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record, record_elementwise
from ..kernels import elementwise as K
from ..tensor import Tensor

VALUE = "value"


class _Unary(Node):
    """A one-input node whose backward is one fused kernel of (grad, saved)."""

    saved_name = ""
    grad_kernel = None
    elementwise = True

    def backward(self, grad):
        return (backward2(type(self).grad_kernel, grad, self.saved(self.saved_name)),)


class ExpBackward0(_Unary):
    """exp(x): the derivative is exp(x) itself, so the OUTPUT is saved."""

    saves = {"result": OUTPUT}
    saved_name = "result"
    grad_kernel = K.mul


class LogBackward0(_Unary):
    """log(x): grad / x, so the INPUT is saved."""

    saves = {"self": INPUT}
    saved_name = "self"
    grad_kernel = K.log_backward


class SinBackward0(_Unary):
    """sin(x): grad * cos(x), from the saved INPUT."""

    saves = {"self": INPUT}
    saved_name = "self"
    grad_kernel = K.sin_backward


class CosBackward0(_Unary):
    """cos(x): -grad * sin(x), from the saved INPUT."""

    saves = {"self": INPUT}
    saved_name = "self"
    grad_kernel = K.cos_backward


class TanhBackward0(_Unary):
    """tanh(x): grad * (1 - y**2), from the saved OUTPUT y."""

    saves = {"result": OUTPUT}
    saved_name = "result"
    grad_kernel = K.tanh_backward


class SigmoidBackward0(_Unary):
    """sigmoid(x): grad * y * (1 - y), from the saved OUTPUT y."""

    saves = {"result": OUTPUT}
    saved_name = "result"
    grad_kernel = K.sigmoid_backward


class ReluBackward0(_Unary):
    """relu(x): the gradient passes where the saved OUTPUT is positive."""

    saves = {"result": OUTPUT}
    saved_name = "result"
    grad_kernel = K.relu_backward


class SqrtBackward0(_Unary):
    """sqrt(x): grad / (2 y), from the saved OUTPUT y."""

    saves = {"result": OUTPUT}
    saved_name = "result"
    grad_kernel = K.sqrt_backward


class AbsBackward0(_Unary):
    """|x|: grad * sign(x), from the saved INPUT."""

    saves = {"self": INPUT}
    saved_name = "self"
    grad_kernel = K.abs_backward


_FORWARD = {
    ExpBackward0: K.exp,
    LogBackward0: K.log,
    SinBackward0: K.sin,
    CosBackward0: K.cos,
    TanhBackward0: K.tanh,
    SigmoidBackward0: K.sigmoid,
    ReluBackward0: K.relu,
    SqrtBackward0: K.sqrt,
    AbsBackward0: K.abs,
}


def _save(node: Node, x: Tensor, out: Tensor) -> None:
    name = type(node).saved_name
    if name == "result":
        node._saved["result"] = SavedTensor(out, is_output=True)
    else:
        node._saved["self"] = SavedTensor(x)


def _apply(node_cls, x: Tensor) -> Tensor:
    data = x._data
    if data.dtype.kind != "f":
        # relu and abs keep integer dtypes; the others compute in floating point.
        if node_cls not in (ReluBackward0, AbsBackward0):
            data = as_float_data(x)
        elif data.dtype == np.bool_:
            raise _bool_error(node_cls)
    out = Tensor._make(unary(_FORWARD[node_cls], data))
    # (Only a float input can need a gradient, and then the output is just like it.)
    node = record_elementwise(node_cls, out, x)
    if node is not None:
        _save(node, x, out)
    return out


def _bool_error(node_cls) -> Exception:
    """PyTorch's error for relu or abs of a bool tensor (the other ops compute in float)."""
    if node_cls is ReluBackward0:
        return RuntimeError("Boolean inputs not supported for relu")
    return NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")


def _apply_(node_cls, x: Tensor) -> Tensor:
    """The in-place form: compute, write into x, then record with x as the output."""
    if not x.dtype.is_floating_point:
        if node_cls not in (ReluBackward0, AbsBackward0):
            raise RuntimeError("result type Float can't be cast to the desired output type "
                               f"{x.dtype.tensor_type[:-6]}")
        if x._data.dtype == np.bool_:
            raise _bool_error(node_cls)
    node = begin_inplace(node_cls, x)
    original = x.detach().clone() if node is not None and node_cls.saved_name == "self" else None
    kernel = _FORWARD[node_cls]
    if x._data.flags.c_contiguous:
        data = flat(x._data)
        unary_into(kernel, data, data)
    else:
        x._data[...] = unary(kernel, x._data)
    finish_inplace(x, node)
    if node is not None:
        _save(node, original if original is not None else x, x)
    return x


def exp(x: Tensor) -> Tensor:
    return _apply(ExpBackward0, x)


def log(x: Tensor) -> Tensor:
    return _apply(LogBackward0, x)


def sin(x: Tensor) -> Tensor:
    return _apply(SinBackward0, x)


def cos(x: Tensor) -> Tensor:
    return _apply(CosBackward0, x)


def tanh(x: Tensor) -> Tensor:
    return _apply(TanhBackward0, x)


def sigmoid(x: Tensor) -> Tensor:
    return _apply(SigmoidBackward0, x)


def relu(x: Tensor) -> Tensor:
    return _apply(ReluBackward0, x)


def sqrt(x: Tensor) -> Tensor:
    return _apply(SqrtBackward0, x)


def abs(x: Tensor) -> Tensor:  # noqa: A001
    return _apply(AbsBackward0, x)


def exp_(x: Tensor) -> Tensor:
    return _apply_(ExpBackward0, x)


def tanh_(x: Tensor) -> Tensor:
    return _apply_(TanhBackward0, x)


def sigmoid_(x: Tensor) -> Tensor:
    return _apply_(SigmoidBackward0, x)


def relu_(x: Tensor) -> Tensor:
    return _apply_(ReluBackward0, x)


def sqrt_(x: Tensor) -> Tensor:
    return _apply_(SqrtBackward0, x)


def log_(x: Tensor) -> Tensor:
    return _apply_(LogBackward0, x)


def sin_(x: Tensor) -> Tensor:
    return _apply_(SinBackward0, x)


def cos_(x: Tensor) -> Tensor:
    return _apply_(CosBackward0, x)


def abs_(x: Tensor) -> Tensor:
    return _apply_(AbsBackward0, x)


# -- clamp -------------------------------------------------------------------------------


class ClampBackward1(Node):
    """clamp(x, min, max) with number bounds: the gradient passes where x was
    inside the bounds. Saves the INPUT and the bounds (None where absent)."""

    saves = {"self": INPUT, "min": VALUE, "max": VALUE}

    def backward(self, grad):
        x = self.saved("self")
        lo, hi = self._saved["min"], self._saved["max"]
        lo = -math.inf if lo is None else lo
        hi = math.inf if hi is None else hi
        out, flat_out, (flat_grad, flat_x) = fresh_result(
            grad.shape, grad.dtype, grad, x.astype(grad.dtype, copy=False))
        K.clamp_backward(flat_grad, flat_x, grad.dtype.type(lo), grad.dtype.type(hi), flat_out)
        return (out,)


def _clamp_bounds(min, max):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        raise NotImplementedError("minigrad supports clamp with number bounds only")
    return (-math.inf if min is None else min, math.inf if max is None else max)


def _clamp_data(x: np.ndarray, lo, hi, out_dtype=None) -> np.ndarray:
    out_dtype = x.dtype if out_dtype is None else out_dtype
    if x.dtype.kind != "f" or out_dtype != x.dtype:
        return np.clip(x.astype(out_dtype), lo, hi).astype(out_dtype)
    out, flat_out, (flat_x,) = fresh_result(x.shape, x.dtype, x)  # (laid out as x is)
    K.clamp(flat_x, x.dtype.type(lo), x.dtype.type(hi), flat_out)
    return out


def clamp(x: Tensor, min=None, max=None) -> Tensor:  # noqa: A002
    """Limit every element to [min, max]."""
    clamp_bounds(x, "clamp", min, max)
    lo, hi = _clamp_bounds(min, max)
    # Float bounds on an integer tensor promote the result, as in PyTorch.
    dt = result_type(x, *(b for b in (min, max) if b is not None))
    out = Tensor._make(_clamp_data(x._data, lo, hi, dt.np))
    node = record(ClampBackward1, out, x)
    if node is not None:
        node._saved.update({"self": SavedTensor(x), "min": min, "max": max})
    return out


def clamp_(x: Tensor, min=None, max=None) -> Tensor:  # noqa: A002
    clamp_bounds(x, "clamp_", min, max)
    lo, hi = _clamp_bounds(min, max)
    if result_type(x, *(b for b in (min, max) if b is not None)) is not x.dtype:
        raise RuntimeError("result type Float can't be cast to the desired output type long int")
    node = begin_inplace(ClampBackward1, x)
    original = x.detach().clone() if node is not None else None
    x._data[...] = _clamp_data(x._data, lo, hi)
    finish_inplace(x, node)
    if node is not None:
        node._saved.update({"self": SavedTensor(original), "min": min, "max": max})
    return x


# -- round, floor, ceil, sign: flat almost everywhere ---------------------------------------


class _Steps(Node):
    """A step function: its derivative is 0 wherever it exists, so the gradient is
    zeros whatever the input was. Saves nothing. (Learners meet these as "my loss
    went through round() and nothing learns".)"""

    elementwise = True

    def backward(self, grad):
        return (np.zeros_like(grad),)


class RoundBackward0(_Steps):
    """round(x), halves to even: a zero gradient."""


class RoundBackward1(_Steps):
    """round(x, decimals=d): a zero gradient."""


class FloorBackward0(_Steps):
    """floor(x): a zero gradient."""


class CeilBackward0(_Steps):
    """ceil(x): a zero gradient."""


class SignBackward0(_Steps):
    """sign(x): -1, 0 or 1 (nan stays nan): a zero gradient."""


def _step_values(x: np.ndarray, fn, decimals: int) -> np.ndarray:
    if x.dtype.kind != "f":  # integers and bools are already whole numbers
        return np.sign(x) if fn is np.sign and x.dtype != np.bool_ else x.copy()
    if decimals:
        return np.round(x, decimals)
    out = fn(x)
    if fn is np.sign:
        out[np.isnan(out)] = 0  # (PyTorch's sign of nan is 0)
    return out


def _step(x: Tensor, node_cls, fn, decimals: int = 0) -> Tensor:
    out = Tensor._make(_step_values(x._data, fn, decimals))
    record_elementwise(node_cls, out, x)
    return out


def _step_(x: Tensor, node_cls, fn, decimals: int = 0) -> Tensor:
    node = begin_inplace(node_cls, x)
    x._data[...] = _step_values(x._data, fn, decimals)
    finish_inplace(x, node)
    return x


def round(x: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001 - PyTorch's name
    """Round to the nearest integer (halves to even), or to `decimals` places."""
    return _step(x, RoundBackward1 if decimals else RoundBackward0, np.round, decimals)


def floor(x: Tensor) -> Tensor:
    return _step(x, FloorBackward0, np.floor)


def ceil(x: Tensor) -> Tensor:
    return _step(x, CeilBackward0, np.ceil)


def sign(x: Tensor) -> Tensor:
    return _step(x, SignBackward0, np.sign)


def round_(x: Tensor, decimals: int = 0) -> Tensor:
    return _step_(x, RoundBackward1 if decimals else RoundBackward0, np.round, decimals)


def floor_(x: Tensor) -> Tensor:
    return _step_(x, FloorBackward0, np.floor)


def ceil_(x: Tensor) -> Tensor:
    return _step_(x, CeilBackward0, np.ceil)


def sign_(x: Tensor) -> Tensor:
    return _step_(x, SignBackward0, np.sign)
