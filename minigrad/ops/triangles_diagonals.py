"""tril, triu, diag_embed, diag, diagflat, tril_indices and triu_indices: the triangles
and diagonals of matrices.

tril keeps the lower triangle (on and below a diagonal) and zeroes the rest, so its
gradient is the gradient's lower triangle; triu the same above. diag_embed is the
inverse of `diagonal`: a vector laid on the diagonal of zero matrices, whose gradient
is the gradient's diagonal. diag (a vector to a matrix, or a matrix's diagonal
copied) and diagflat are PyTorch compositions of diag_embed and diagonal.
"""

from __future__ import annotations

import numpy as np

from .._device import check as check_device
from .._dtype import int64
from ..arrays.scalars import u64
from ..autograd.graph import VALUE
from ..autograd.record import record
from ..grad_mode import no_grad
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .einsum import _diagonal_data, diagonal
from .formulas import ArrayFormulaNode, Formula, on_arrays
from .tangent_formulas import Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the views.)
OP_FAMILY = "views"


# -- tril and triu ----------------------------------------------------------------------


@on_arrays("tril", method=True)
def _tril(a: np.ndarray, diagonal: int) -> np.ndarray:
    return np.array(np.tril(a, diagonal), order="C")


@on_arrays("triu", method=True)
def _triu(a: np.ndarray, diagonal: int) -> np.ndarray:
    return np.array(np.triu(a, diagonal), order="C")


class TrilBackward0(ArrayFormulaNode):
    """tril(diagonal): the gradient's lower triangle."""

    tangent = Tangent("self_t.tril(diagonal)", linear=True)

    saves = {"diagonal": VALUE}
    formulas = (Formula("self", "grad.tril(diagonal)"),)


class TriuBackward0(ArrayFormulaNode):
    """triu(diagonal): the gradient's upper triangle."""

    tangent = Tangent("self_t.triu(diagonal)", linear=True)

    saves = {"diagonal": VALUE}
    formulas = (Formula("self", "grad.triu(diagonal)"),)


def _triangle(x: Tensor, diagonal: int, fn: str, node_cls, keep) -> Tensor:
    if x._data.ndim < 2:
        raise RuntimeError(f"{fn}: input tensor must have at least 2 dimensions")
    out = Tensor._make(keep(x._data, diagonal))
    node = record(node_cls, out, x)
    if node is not None:
        node._saved["diagonal"] = u64(diagonal)
    return out


def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of each matrix (in the last two dims): the elements on and
    below the `diagonal`-th diagonal kept, the others zero."""
    return _triangle(x, diagonal, "tril", TrilBackward0, _tril)


def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of each matrix: on and above the `diagonal`-th diagonal."""
    return _triangle(x, diagonal, "triu", TriuBackward0, _triu)


def _triangle_indices(row: int, col: int, offset: int, dtype, lower: bool) -> Tensor:
    rows, cols = np.nonzero(np.tri(row, col, offset, dtype=bool) if lower
                            else ~np.tri(row, col, offset - 1, dtype=bool))
    data = np.stack([rows, cols]).astype((dtype or int64).np)
    return Tensor._make(np.ascontiguousarray(data.reshape(2, -1)))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The (row, column) indices of a row x col matrix's lower triangle, as a 2 x N
    tensor (row by row)."""
    _indices_check(row, col, device)
    return _triangle_indices(row, col, offset, dtype, lower=True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The (row, column) indices of a row x col matrix's upper triangle."""
    _indices_check(row, col, device)
    return _triangle_indices(row, col, offset, dtype, lower=False)


def _indices_check(row: int, col: int, device) -> None:
    check_device(device)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")


# -- diag_embed, diag, diagflat -----------------------------------------------------------


class DiagEmbedBackward0(ArrayFormulaNode):
    """diag_embed(offset, dim1, dim2): the gradient's diagonal, where the input went."""

    tangent = Tangent("self_t.diag_embed(offset, dim1, dim2)", linear=True)

    saves = {"dim1": VALUE, "dim2": VALUE, "offset": VALUE}
    formulas = (Formula("self", "grad.diagonal(offset, dim1, dim2)"),)


@on_arrays("diagonal", method=True)
def _diagonal(a: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """`diagonal` on an array: a view, as PyTorch's."""
    return _diagonal_data(a, offset, dim1 % a.ndim, dim2 % a.ndim)


@on_arrays("diag_embed", method=True)
def _diag_embed(a: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    ndim = a.ndim + 1
    d1, d2 = dim1 % ndim, dim2 % ndim
    n = a.shape[-1] + abs(offset) if a.ndim else abs(offset) + 1
    rest = list(a.shape[:-1])
    shape = [0] * ndim
    shape[d1] = shape[d2] = n
    for k in range(ndim):
        if k not in (d1, d2):
            shape[k] = rest.pop(0)
    out = np.zeros(shape, a.dtype)
    _diagonal_data(out, offset, d1, d2)[...] = a
    return out


def diag_embed(x: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Zero matrices (in dims `dim1`, `dim2` of the result) with the last dim of `x`
    on their `offset`-th diagonal."""
    ndim = x._data.ndim + 1
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = Tensor._make(_diag_embed(x._data, offset, d1, d2))
    node = record(DiagEmbedBackward0, out, x)
    if node is not None:
        node._saved.update(dim1=u64(dim1), dim2=u64(dim2), offset=u64(offset))
    return out


def diag(x: Tensor, diagonal: int = 0) -> Tensor:
    """A vector laid on the `diagonal`-th diagonal of a zero matrix, or a matrix's
    diagonal copied out (PyTorch's diag_embed, or diagonal then a copy)."""
    if x._data.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x._data.ndim}D")
    if x._data.ndim == 1:
        return diag_embed(x, diagonal)
    return diagonal_copy(x, diagonal)


@on_arrays("diagonal_backward")
def _diagonal_backward(grad: np.ndarray, sizes: tuple, offset: int, dim1: int,
                       dim2: int) -> np.ndarray:
    out = np.zeros(sizes, grad.dtype)
    _diagonal_data(out, offset, dim1 % len(sizes), dim2 % len(sizes))[...] = grad
    return out


class DiagonalBackward0_copy(ArrayFormulaNode):  # noqa: N801 - PyTorch's name
    """diagonal_copy(offset, dim1, dim2): the gradient laid on that diagonal of zeros
    (diagonal's formula, for its copying form)."""

    tangent = Tangent("self_t.diagonal(offset, dim1, dim2).clone()", linear=True)

    saves = {"dim1": VALUE, "dim2": VALUE, "offset": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "diagonal_backward(grad, self_sym_sizes, offset, dim1, "
                                "dim2)"),)


def diagonal_copy(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """`diagonal`, copied out into a tensor of its own (PyTorch's aten::diagonal_copy)."""
    with no_grad():
        data = np.array(diagonal(x, offset, dim1, dim2)._data, order="C")
    out = Tensor._make(data)
    node = record(DiagonalBackward0_copy, out, x)
    if node is not None:
        node._saved.update(dim1=u64(dim1), dim2=u64(dim2), offset=u64(offset),
                           self_sym_sizes=x._data.shape)
    return out


def diagflat(x: Tensor, offset: int = 0) -> Tensor:
    """The elements of `x`, flattened, on the `offset`-th diagonal of a zero matrix."""
    return diag(x.contiguous().view(-1), offset)


declare("tril", nodes=(TrilBackward0,), function=tril, method=True)
declare("triu", nodes=(TriuBackward0,), function=triu, method=True)
declare("tril_indices", function=tril_indices)
declare("triu_indices", function=triu_indices)
declare("diag_embed", nodes=(DiagEmbedBackward0,), function=diag_embed, method=True)
declare("diag", nodes=(DiagonalBackward0_copy,), function=diag, method=True)
declare("diagflat", function=diagflat, method=True)
