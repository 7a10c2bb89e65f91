"""slice_scatter, select_scatter and diagonal_scatter: a copy of a tensor with one of its
views (a slice, a row, a diagonal) replaced by another tensor.

Each is the out-of-place form of writing into a view (`y = x.clone(); y[:, ::2] = src`):
the input's gradient is the gradient with that view zeroed (the same scatter of zeros),
the source's is the gradient's view.
"""

from __future__ import annotations

import numpy as np

from ..arrays.scalars import u64
from ..autograd.graph import VALUE
from ..autograd.record import record
from ..grad_mode import no_grad
from ..tensor import Tensor
from .declaration import declare
from .einsum import diagonal
from .formulas import Formula, FormulaNode
from .views import select, slice_dim

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the views.)
OP_FAMILY = "views"


def _scattered(x: Tensor, src: Tensor, view) -> Tensor:
    """A copy of `x` with `view` of it (a function of a tensor) overwritten by src."""
    out = Tensor._make(np.array(x._data, order="C"))
    with no_grad():
        target = view(out)
    if target._data.shape != src._data.shape:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"[{', '.join(map(str, src._data.shape))}], slice size = "
                           f"[{', '.join(map(str, target._data.shape))}]")
    target._data[...] = src._data
    return out


class SliceScatterBackward0(FormulaNode):
    """slice_scatter(self, src, dim, start, end, step): self's gradient is zero on
    the slice; src's is the gradient's slice."""

    tangent = "slice_scatter(dense(self_t, self_p), dense(src_t, src_p), dim, start, end, step)"

    saves = {"dim": VALUE, "end": VALUE, "start": VALUE, "step": VALUE}
    formulas = (Formula("self", "slice_scatter(grad, zeros_of(src_info), dim, start, end, step)"),
                Formula("src", "slice_dim(grad, dim, start, end, step)"))
    # (src's shape and dtype, for PyTorch's zeros_like(src): kept, not shown)
    unshown = ("src_info",)


def slice_scatter(x: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """`x` with its slice start:end:step along `dim` replaced by `src`."""
    with no_grad():
        out = _scattered(x, src, lambda t: slice_dim(t, dim, start, end, step))
    node = record(SliceScatterBackward0, out, x, src)
    if node is not None:
        node._saved.update(dim=u64(dim), start=None if start is None else u64(start),
                           end=None if end is None else u64(end), step=u64(step),
                           _src_info=(src._data.shape, src.dtype))
    return out


class SelectScatterBackward0(FormulaNode):
    """select_scatter(self, src, dim, index): self's gradient is zero on the row;
    src's is the gradient's row."""

    tangent = "select_scatter(dense(self_t, self_p), dense(src_t, src_p), dim, index)"

    saves = {"dim": VALUE, "index": VALUE}
    formulas = (Formula("self", "select_scatter(grad, zeros_of(src_info), dim, index)"),
                Formula("src", "grad.select(dim, index)"))
    unshown = ("src_info",)


def select_scatter(x: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """`x` with its row `index` along `dim` replaced by `src`."""
    with no_grad():
        out = _scattered(x, src, lambda t: select(t, dim, index))
    node = record(SelectScatterBackward0, out, x, src)
    if node is not None:
        node._saved.update(dim=u64(dim), index=u64(index), _src_info=(src._data.shape, src.dtype))
    return out


class DiagonalScatterBackward0(FormulaNode):
    """diagonal_scatter(self, src, offset, dim1, dim2): self's gradient is zero on
    the diagonal; src's is the gradient's diagonal."""

    tangent = ("diagonal_scatter(dense(self_t, self_p), dense(src_t, src_p), offset, dim1, "
               "dim2)")

    saves = {"dim1": VALUE, "dim2": VALUE, "offset": VALUE}
    formulas = (Formula("self", "diagonal_scatter(grad, zeros_of(src_info), offset, dim1, dim2)"),
                Formula("src", "grad.diagonal(offset, dim1, dim2)"))
    unshown = ("src_info",)


def diagonal_scatter(x: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """`x` with its `offset`-th diagonal in dims dim1, dim2 replaced by `src`."""
    with no_grad():
        out = _scattered(x, src, lambda t: diagonal(t, offset, dim1, dim2))
    node = record(DiagonalScatterBackward0, out, x, src)
    if node is not None:
        node._saved.update(dim1=u64(dim1), dim2=u64(dim2), offset=u64(offset),
                           _src_info=(src._data.shape, src.dtype))
    return out


declare("slice_scatter", nodes=(SliceScatterBackward0,), function=slice_scatter, method=True)
declare("select_scatter", nodes=(SelectScatterBackward0,), function=select_scatter, method=True)
declare("diagonal_scatter", nodes=(DiagonalScatterBackward0,), function=diagonal_scatter,
        method=True)
