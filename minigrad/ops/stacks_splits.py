"""atleast_1d/2d/3d, hstack, vstack, dstack, column_stack, tensor_split, hsplit, vsplit,
dsplit and split_with_sizes: joins and splits PyTorch composes of other ops.

None has a node of its own: the stacks are a `cat` of inputs given enough dims
(atleast_*: a reshape of a 0-d tensor, an unsqueeze of a 1-d one, the tensor itself
when it has them), the splits are slices (`tensor_split`: one SliceBackward0 view
per piece), so the graph is PyTorch's, node for node.
"""

from __future__ import annotations

from .._args import combination_error
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .joining import _tensor_list, cat
from .multi_output import split
from .views import slice_dim

# (The op table, `widgets.op_table` and docs/ops.md, lists them with cat and stack.)
OP_FAMILY = "joining"


# -- atleast_1d, atleast_2d, atleast_3d -----------------------------------------------------


def _at_least(tensors: tuple, one) -> Tensor | tuple:
    """`one` applied to a tensor, or to each of several (given as arguments or as
    one list): a tensor for a tensor, a tuple for several."""
    if len(tensors) == 1:
        tensors = tensors[0]
    if isinstance(tensors, Tensor):
        return one(tensors)
    return tuple(one(t) for t in tensors)


def _1d(t: Tensor) -> Tensor:
    return t.reshape(1) if t._data.ndim == 0 else t


def _2d(t: Tensor) -> Tensor:
    if t._data.ndim == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t._data.ndim == 1 else t


def _3d(t: Tensor) -> Tensor:
    if t._data.ndim == 0:
        return t.reshape(1, 1, 1)
    if t._data.ndim == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t._data.ndim == 2 else t


def atleast_1d(*tensors) -> Tensor | tuple:
    """Each tensor with at least 1 dim: a 0-d one reshaped to (1,), the others as they
    are (the same tensor)."""
    return _at_least(tensors, _1d)


def atleast_2d(*tensors) -> Tensor | tuple:
    """Each tensor with at least 2 dims: (1, 1) for a 0-d one, (1, n) for a 1-d one."""
    return _at_least(tensors, _2d)


def atleast_3d(*tensors) -> Tensor | tuple:
    """Each tensor with at least 3 dims: (1, 1, 1), (1, n, 1), (m, n, 1)."""
    return _at_least(tensors, _3d)


# -- hstack, vstack, dstack, column_stack ----------------------------------------------------


def _stack_inputs(fn: str, tensors) -> list:
    tensors = _tensor_list(fn, tensors)
    if not tensors:
        raise RuntimeError(f"{fn} expects a non-empty TensorList")
    return tensors


def hstack(tensors) -> Tensor:
    """Join column-wise: along dim 1 (dim 0 for 1-d tensors)."""
    pieces = [_1d(t) for t in _stack_inputs("hstack", tensors)]
    return cat(pieces, 0 if pieces[0]._data.ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Join row-wise: along dim 0, 1-d tensors as rows."""
    return cat([_2d(t) for t in _stack_inputs("vstack", tensors)], 0)


def dstack(tensors) -> Tensor:
    """Join depth-wise: along dim 2, each given at least 3 dims."""
    return cat([_3d(t) for t in _stack_inputs("dstack", tensors)], 2)


def column_stack(tensors) -> Tensor:
    """Join as columns: 0-d and 1-d tensors become (n, 1) columns, then hstack."""
    tensors = _stack_inputs("column_stack", tensors)
    return hstack([t.reshape(t._data.size, 1) if t._data.ndim <= 1 else t for t in tensors])


# -- tensor_split, hsplit, vsplit, dsplit, split_with_sizes ---------------------------------


def _split_at(x: Tensor, d: int, bounds: list) -> tuple:
    """One slice view per (start, end) of `bounds` along dim `d`."""
    return tuple(slice_dim(x, d, start, end, 1) for start, end in bounds)


def tensor_split(x: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Views of `x` split along `dim`: into n nearly equal pieces (an int: the first
    size % n pieces one longer), or at the given indices."""
    if x._data.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        if t.dtype.name != "int64":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {t.dtype.type_name}")
        if t._data.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {t._data.ndim} dims")
        indices_or_sections = t.tolist()
    d = _wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if isinstance(indices_or_sections, (list, tuple)):
        starts = [0, *indices_or_sections]
        ends = [*indices_or_sections, n]
        return _split_at(x, d, list(zip(starts, ends)))
    sections = int(indices_or_sections)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    bounds, start = [], 0
    for i in range(sections):
        size = n // sections + (1 if i < n % sections else 0)
        bounds.append((start, start + size))
        start += size
    return _split_at(x, d, bounds)


def _split_by(x: Tensor, fn: str, dim: int, need: int, indices_or_sections) -> tuple:
    if x._data.ndim < need:
        raise RuntimeError(f"torch.{fn} requires a tensor with at least {need} dimension, but "
                           f"got a tensor with {x._data.ndim} dimensions!")
    if not isinstance(indices_or_sections, (list, tuple)):
        size = indices_or_sections
        if not isinstance(size, int) or isinstance(size, bool):
            raise combination_error(fn, (x, size), {}, ["Tensor input, int sections",
                                                        "Tensor input, tuple of ints indices"],
                                    tail=False)
        if size == 0 or x._data.shape[dim] % size:
            raise RuntimeError(f"torch.{fn} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {x._data.shape[dim]} is not divisible by "
                               f"the split_size {size}!")
    return tensor_split(x, indices_or_sections, dim)


def hsplit(x: Tensor, indices_or_sections) -> tuple:
    """Split column-wise (dim 1; dim 0 of a 1-d tensor) into equal pieces or at
    indices."""
    return _split_by(x, "hsplit", 1 if x._data.ndim > 1 else 0, 1, indices_or_sections)


def vsplit(x: Tensor, indices_or_sections) -> tuple:
    """Split row-wise (dim 0) into equal pieces or at indices."""
    return _split_by(x, "vsplit", 0, 2, indices_or_sections)


def dsplit(x: Tensor, indices_or_sections) -> tuple:
    """Split depth-wise (dim 2) into equal pieces or at indices."""
    return _split_by(x, "dsplit", 2, 3, indices_or_sections)


def split_with_sizes(x: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Pieces of the given sizes along `dim` (views sharing one node)."""
    return split(x, list(split_sizes), dim)


declare("atleast_1d", function=atleast_1d)
declare("atleast_2d", function=atleast_2d)
declare("atleast_3d", function=atleast_3d)
declare("hstack", function=hstack)
declare("vstack", function=vstack, aliases=("row_stack",))
declare("dstack", function=dstack)
declare("column_stack", function=column_stack)
declare("tensor_split", function=tensor_split, method=True)
declare("hsplit", function=hsplit, method=True)
declare("vsplit", function=vsplit, method=True)
declare("dsplit", function=dsplit, method=True)
declare("split_with_sizes", function=split_with_sizes, method=True)
