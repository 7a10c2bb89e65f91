"""Whole-tensor copies, and the in-place ops that write a whole tensor.

`clone`, `contiguous` and a dtype change (`to_dtype`) make new memory with a node
that hands the gradient straight back (cast to the input's dtype). `copy_`,
`fill_` and `zero_` overwrite a tensor in place: its version goes up, and a view's
base gets a new history (see `autograd/inplace.py`).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._args import fill_number
from ..arrays.broadcasting import check_inplace_shape, sum_to
from ..arrays.layout import copy_in_order, copy_like
from ..autograd.graph import Node
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record
from ..tensor import Tensor, as_tensor_arg
from .formulas import Formula


class CloneBackward0(Node):
    """clone(): the gradient passes unchanged."""

    formulas = (Formula("self", "grad"),)

    def backward(self, grad):
        return (grad,)


def clone(x: Tensor, row_major: bool = False) -> Tensor:
    """A copy with its own memory and version counter, still in the graph. Laid out
    as x is (PyTorch's `preserve_format`: a transposed tensor's clone is transposed
    too), or row-major if asked (`contiguous`)."""
    data = x._data
    out = Tensor._make(np.array(data, copy=True, order="C") if row_major
                       else copy_like(data, data))
    record(CloneBackward0, out, x)
    return out


def contiguous(x: Tensor) -> Tensor:
    return x if x._data.flags.c_contiguous else clone(x, row_major=True)


class CopyBackwards(Node):
    """self.copy_(src): self's old values are gone (zero gradient); src gets the
    gradient, summed to its shape."""

    _display_name = "minigrad::autograd::CopyBackwards"
    # (src's gradient is summed to its shape and cast to its dtype by the engine)
    formulas = (Formula("self", "zeros_like(grad)"), Formula("src", "grad"))

    def backward(self, grad):
        ga = np.zeros_like(grad) if self.needs_grad(0) else None
        gb = None
        if self.needs_grad(1):
            shape, dt = self._input_meta[1]
            gb = sum_to(grad, shape).astype(dt, copy=False)
        return ga, gb


def copy_(x: Tensor, src, _stretched: bool = False) -> Tensor:
    """Overwrite x's values with src's (broadcast), in place. (`_stretched`: the
    caller, an assignment, stretched src to x's shape first, as PyTorch's does.)"""
    src = as_tensor_arg(src)
    if not isinstance(src, Tensor):
        src = Tensor._make(np.array(src, x._data.dtype))
    check_inplace_shape(x._data.shape, src._data.shape)
    if not x.dtype.is_floating_point:
        # An integer tensor cannot carry a gradient: PyTorch records nothing (and
        # checks nothing about grad) whatever src is.
        src = src.detach()
    stretched = _stretched and src._data.shape != x._data.shape
    node = begin_inplace(CopyBackwards, x, src, overlap_matters=not stretched)
    copy_in_order(x._data, src._data)
    finish_inplace(x, node)
    return x


class FillBackward2(Node):
    """fill_(number): every old value is overwritten, so the gradient is zero."""

    formulas = (Formula("self", "zeros_like(grad)"),)

    def backward(self, grad):
        return (np.zeros_like(grad),)


class FillBackward3(Node):
    """fill_(0-d tensor): zero for self; the value gets the sum of the gradient."""

    formulas = (Formula("self", "zeros_like(grad)"), Formula("value", "grad.sum()"))

    def backward(self, grad):
        gv = np.asarray(grad.sum(), self._input_meta[1][1]) if self.needs_grad(1) else None
        return (np.zeros_like(grad) if self.needs_grad(0) else None, gv)


class ZeroBackward0(Node):
    """zero_(): every old value is overwritten, so the gradient is zero."""

    formulas = (Formula("self", "zeros_like(grad)"),)

    def backward(self, grad):
        return (np.zeros_like(grad),)


def fill_(x: Tensor, value) -> Tensor:
    value = fill_number(x, value)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions."
            )
        node = begin_inplace(FillBackward3, x, value, overlap_matters=False)
        x._data[...] = value._data
    else:
        node = begin_inplace(FillBackward2, x)
        x._data[...] = value
    finish_inplace(x, node)
    return x


def zero_(x: Tensor) -> Tensor:
    node = begin_inplace(ZeroBackward0, x)
    x._data[...] = 0
    finish_inplace(x, node)
    return x



def to_dtype(x: Tensor, dt) -> Tensor:
    """A copy in another dtype (the same tensor if the dtype already matches)."""
    dt = _dtype.to_dtype(dt)
    if dt is x.dtype:
        return x
    with np.errstate(over="ignore", invalid="ignore"):  # (PyTorch converts nan, inf and
        out = Tensor._make(x._data.astype(dt.np))     # out-of-range values silently)
    if dt.is_floating_point:
        node = record(ToCopyBackward0, out, x)
        if node is not None:
            node._input_meta = ((x._data.shape, x._data.dtype),)
    return out


class ToCopyBackward0(Node):
    """A dtype conversion: the gradient converted back (by the engine, which casts a
    gradient to its input's dtype)."""

    formulas = (Formula("self", "grad"),)

    def backward(self, grad):
        return (grad.astype(self._input_meta[0][1]),)
