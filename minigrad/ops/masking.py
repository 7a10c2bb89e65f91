"""`masked_fill`: a value wherever a boolean mask holds, the input elsewhere.

Its gradient passes where the mask is False and is zero where the value was written;
a 0-dim tensor value gets the sum of the gradient under the mask.
"""

from __future__ import annotations

import numpy as np

from .._args import combination_error
from ..arrays.broadcasting import broadcast_shape, check_inplace_shape
from ..autograd.graph import INPUT, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record
from ..tensor import _CPP_TYPE, Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, on_arrays

# (The op table, `widgets.op_table` and docs/ops.md, lists it with the indexing ops.)
OP_FAMILY = "indexing"

_MASKED_FILL_HEADS = ["Tensor mask, Tensor value", "Tensor mask, Number value"]


@on_arrays("masked_fill", method=True)
def _masked_fill_on_arrays(a: np.ndarray, mask: np.ndarray, value) -> np.ndarray:
    return np.where(np.broadcast_to(mask, a.shape), a.dtype.type(value), a)


@on_arrays("masked_fill_backward")
def _masked_fill_backward_on_arrays(grad: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.asarray(grad[np.broadcast_to(mask, grad.shape)].sum(), grad.dtype)


class MaskedFillBackward0(ArrayFormulaNode):
    """masked_fill(x, mask, number): the gradient passes where the mask is False, and
    is 0 where the value was written. Saves the mask."""

    tangent = "self_t.masked_fill(mask, 0)"
    saves = {"mask": INPUT}
    formulas = (Formula("self", "grad.masked_fill(mask, 0)"),)


class MaskedFillBackward1(MaskedFillBackward0):
    """masked_fill(x, mask, value) with a 0-dim tensor value: x's gradient as with a
    number; the value's is the sum of the gradient where the mask holds."""

    tangent = "dense(self_t, self_p).masked_fill(mask, dense(value_t, value_p))"
    formulas = (Formula("self", "grad.masked_fill(mask, 0)"),
                Formula("value", "masked_fill_backward(grad, mask)"))


def _masked_fill_value(fn: str, mask, value):
    """The value as a tensor (or None for a number), after PyTorch's checks."""
    if not isinstance(mask, Tensor) or not isinstance(value, (Tensor, int, float, np.number)) \
            or isinstance(value, np.bool_):
        raise combination_error(fn, (mask, value), {}, _MASKED_FILL_HEADS, tail=False)
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_CPP_TYPE[mask.dtype.name]}")
    return value if isinstance(value, Tensor) else None


def masked_fill(x: Tensor, mask: Tensor, value) -> Tensor:
    """`value` wherever `mask` holds, `x` elsewhere (x and the mask broadcast). The
    value is a number or a 0-dim tensor."""
    shape = broadcast_shape(mask._data.shape, x._data.shape) \
        if isinstance(mask, Tensor) else x._data.shape
    value_t = _masked_fill_value("masked_fill", mask, value)
    # (PyTorch's clone of x expanded, in row-major order even for a transposed x)
    data = np.array(np.broadcast_to(x._data, shape), order="C")
    data[np.broadcast_to(mask._data, shape)] = value if value_t is None else value_t._data
    out = Tensor._make(data)
    node = record(MaskedFillBackward1 if value_t is not None else MaskedFillBackward0,
                  out, x, *(() if value_t is None else (value_t,)))
    if node is not None:
        node._saved["mask"] = SavedTensor(mask)
    return out


def masked_fill_(x: Tensor, mask: Tensor, value) -> Tensor:
    """`masked_fill` in place (the mask must broadcast to x's shape)."""
    value_t = _masked_fill_value("masked_fill_", mask, value)
    check_inplace_shape(x._data.shape, mask._data.shape)
    node = begin_inplace(MaskedFillBackward1 if value_t is not None else MaskedFillBackward0,
                         x, *(() if value_t is None else (value_t,)))
    x._data[np.broadcast_to(mask._data, x._data.shape)] = \
        value if value_t is None else value_t._data
    if node is not None:
        node._saved["mask"] = SavedTensor(mask)
    finish_inplace(x, node)
    return x


declare("masked_fill", nodes=(MaskedFillBackward0, MaskedFillBackward1), function=masked_fill,
        method=True, inplace=masked_fill_)
