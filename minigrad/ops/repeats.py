"""repeat, tile and repeat_interleave: a tensor copied side by side along its dims.

`x.repeat(2, 3)` lays 2 x 3 copies of a matrix out as a grid, so each input element
appears once in every copy, and its gradient is the sum of the gradient over the
copies: PyTorch's `repeat_backward` reshapes the gradient so each repeated dim becomes
(copies, size) and sums over the copies. tile is repeat with the repeats padded by
ones in front (PyTorch records it as repeat). repeat_interleave repeats each element
in place instead, composed as PyTorch composes it (an expand and a copy, or an
index_select of repeated indices).
"""

from __future__ import annotations

import numpy as np

from .._args import int_list_arg
from ..autograd.graph import VALUE
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .copies import clone
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, on_arrays
from .tangent_formulas import Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the views.)
OP_FAMILY = "views"


def _grad_size(repeats: tuple, sizes: tuple) -> tuple[list, list]:
    """The shape that splits each repeated dim into (copies, size), and the dims of
    the copies to sum over (PyTorch's repeat_backward)."""
    unsqueezed = len(repeats) - len(sizes)
    grad_size, sum_dims = [], []
    for d, n in enumerate(sizes):
        r = repeats[d + unsqueezed]
        if r != 1:
            grad_size.append(r)
            sum_dims.append(len(grad_size) - 1)
        grad_size.append(n)
    return grad_size, sum_dims


@helper
def repeat_backward(grad: Tensor, repeats: tuple, sizes: tuple) -> Tensor:
    """The gradient of `repeat`: the sum over the copies (zeros if a repeat is 0)."""
    if 0 in repeats:
        return grad.new_zeros(sizes)
    for _ in range(grad.ndim - len(sizes)):
        grad = grad.sum(0)
    grad_size, sum_dims = _grad_size(repeats, sizes)
    if sum_dims:
        grad = grad.reshape(grad_size).sum(sum_dims)
    return grad


@on_arrays("repeat_backward")
def _repeat_backward(grad: np.ndarray, repeats: tuple, sizes: tuple) -> np.ndarray:
    if 0 in repeats:
        return np.zeros(sizes, grad.dtype)
    grad = np.asarray(grad.sum(tuple(range(grad.ndim - len(sizes)))))  # (0-d: an array)
    grad_size, sum_dims = _grad_size(repeats, sizes)
    return grad.reshape(grad_size).sum(tuple(sum_dims)) if sum_dims else grad


class RepeatBackward0(ArrayFormulaNode):
    """repeat(repeats): the gradient summed over the copies."""

    tangent = Tangent("self_t.repeat(repeats)", linear=True)

    saves = {"repeats": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "repeat_backward(grad, repeats, self_sym_sizes)"),)


@on_arrays("repeat", method=True)
def _repeat(a: np.ndarray, repeats: tuple) -> np.ndarray:
    lead = (1,) * (len(repeats) - a.ndim)
    return np.array(np.tile(a.reshape(lead + a.shape), repeats), order="C")


def repeat(x: Tensor, *repeats) -> Tensor:
    """`x` copied `repeats[d]` times along each dim d (more repeats than dims: new
    leading dims)."""
    repeats = int_list_arg(repeats, "repeat", "repeats")
    if len(repeats) < x._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    lead = (1,) * (len(repeats) - x._data.ndim)
    shape = tuple(r * n for r, n in zip(repeats, lead + x._data.shape))
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(shape)}: [{', '.join(map(str, shape))}]")
    out = Tensor._make(_repeat(x._data, repeats))
    node = record(RepeatBackward0, out, x)
    if node is not None:
        node._saved.update(repeats=repeats, self_sym_sizes=x._data.shape)
    return out


def tile(x: Tensor, *dims) -> Tensor:
    """`x` copied `dims[d]` times along each dim d; fewer reps than dims are padded
    with ones in front (PyTorch's repeat does the work)."""
    reps = int_list_arg(dims, "tile", "dims")
    return repeat(x, (1,) * (x._data.ndim - len(reps)) + reps)


def _counts_to_indices(repeats: Tensor) -> Tensor:
    """`repeat_interleave(counts)`: each index i repeated counts[i] times."""
    if repeats._data.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats._data.dtype != np.int64:
        raise NotImplementedError('"repeat_interleave_cpu" not implemented for '
                                  f"'{repeats.dtype.type_name}'")
    if (repeats._data < 0).any():
        raise RuntimeError("repeats can not be negative")
    counts = repeats._data
    return Tensor._make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))


def repeat_interleave(x: Tensor, repeats=None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element (each slice along `dim`; with no dim, of the flattened `x`)
    repeated `repeats` times in place, one after another: for an int, PyTorch's
    unsqueeze, expand, a row-major clone and flatten; for a tensor of counts, an
    index_select.
    `repeat_interleave(counts)` alone gives the indices."""
    if repeats is None:
        return _counts_to_indices(x)
    source = x if dim is not None else x.flatten()
    if isinstance(repeats, Tensor):
        d = _wrap_dim(0 if dim is None else dim, source._data.ndim)
        n = source._data.shape[d] if source._data.ndim else 1
        if repeats._data.ndim == 0 or repeats._data.shape == (1,):
            repeats = repeats.reshape(1).expand(n)
        elif repeats._data.ndim == 1:
            if repeats._data.shape[0] != n:
                raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                                   f"repeats.size(0) = {repeats._data.shape[0]} and "
                                   f"input.size({d}) = {n}")
        else:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        return source.index_select(d, _counts_to_indices(repeats))
    d = _wrap_dim(0 if dim is None else dim, x._data.ndim)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    spread = list(source._data.shape)
    spread.insert(d + 1, repeats)
    # (a row-major clone, as PyTorch's: flattened, it is a view, whatever x's layout)
    return clone(source.unsqueeze(d + 1).expand(spread), row_major=True).flatten(d, d + 1)


declare("repeat", nodes=(RepeatBackward0,), method=repeat)
declare("repeat_interleave", function=repeat_interleave, method=True)
declare("tile", function=tile, method=True)
