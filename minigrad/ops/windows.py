"""`Tensor.unfold`: the sliding windows of one dim, as a view.

`x.unfold(dim, size, step)` sees the windows x[i*step : i*step + size] along `dim` as a
new last dim, without copying (window i starts `step` elements after window i-1, so
windows overlap when step < size). Its gradient adds each window's gradient back into
the place it looked at (an element seen by two windows gets both): PyTorch's
`unfold_backward`, whose own gradient is the same unfold again.
"""

from __future__ import annotations

import numpy as np

from ..arrays.scalars import u64
from ..autograd.graph import VALUE
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, on_arrays
from .tangent_formulas import SAME_VIEW, Tangent
from .views import _view_of

# (The op table, `widgets.op_table` and docs/ops.md, lists it with the views.)
OP_FAMILY = "views"


def _windows(a: np.ndarray, d: int, size: int, step: int) -> np.ndarray:
    """The windows of `a` along dim `d` as a strided view (a 0-d `a`: one window of
    its one element, as a 1-d view)."""
    if a.ndim == 0:
        return np.lib.stride_tricks.as_strided(a, (size,), (a.itemsize,),
                                               writeable=a.flags.writeable)
    n = (a.shape[d] - size) // step + 1
    shape = a.shape[:d] + (n,) + a.shape[d + 1:] + (size,)
    strides = a.strides[:d] + (a.strides[d] * step,) + a.strides[d + 1:] + (a.strides[d],)
    return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=a.flags.writeable)


@on_arrays("unfold_backward")
def _unfold_backward(grad: np.ndarray, sizes: tuple, dim: int, size: int,
                     step: int) -> np.ndarray:
    """`unfold_backward` on arrays: each window's gradient added into zeros of the
    input's sizes, window by window (windows may overlap)."""
    out = np.zeros(sizes, grad.dtype)
    if not sizes:
        out[()] = grad.sum() if grad.size else 0
        return out
    d = dim % len(sizes)
    for i in range(grad.shape[d]):
        window = (slice(None),) * d + (slice(i * step, i * step + size),)
        out[window] += np.moveaxis(grad[(slice(None),) * d + (i,)], -1, d)
    return out


class UnfoldBackward0(ArrayFormulaNode):
    """unfold(dimension, size, step): each window's gradient added back where the
    window looked."""

    tangent = SAME_VIEW

    saves = {"dimension": VALUE, "self_sym_sizes": VALUE, "size": VALUE, "step": VALUE}
    formulas = (Formula("self", "unfold_backward(grad, self_sym_sizes, dimension, size, "
                                "step)"),)


class UnfoldBackwardBackward0(FormulaNode):
    """unfold_backward(grad_in, sizes, dim, size, step): linear in grad_in, whose
    gradient is the windows again (unfold)."""

    tangent = Tangent("unfold_backward(grad_in_t, result.shape, dim, size, step)", linear=True)

    saves = {"dim": VALUE, "size": VALUE, "step": VALUE}
    formulas = (Formula("grad_in", "grad.unfold(dim, size, step)"),)


def unfold_backward(grad: Tensor, sizes: tuple, dim: int, size: int, step: int) -> Tensor:
    """The gradient of `unfold` (PyTorch's aten::unfold_backward)."""
    out = Tensor._make(_unfold_backward(grad._data, tuple(sizes), dim, size, step))
    node = record(UnfoldBackwardBackward0, out, grad)
    if node is not None:
        node._saved.update(dim=u64(dim), size=u64(size), step=u64(step))
    return out


def unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """The windows of `size` elements along `dimension`, one every `step`, as a new
    last dim (a view)."""
    d = _wrap_dim(dimension, x._data.ndim)
    length = x._data.shape[d] if x._data.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is "
                           f"{size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _view_of(x, _windows(x._data, d, size, step), UnfoldBackward0,
                    dimension=u64(dimension), self_sym_sizes=x._data.shape, size=u64(size),
                    step=u64(step))


declare("unfold", nodes=(UnfoldBackward0,), method=unfold)
declare("unfold_backward", nodes=(UnfoldBackwardBackward0,), aten=unfold_backward)
