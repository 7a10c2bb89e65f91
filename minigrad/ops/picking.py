"""gather, scatter, scatter_add, index_select, index_add, index_copy, index_fill, take,
take_along_dim, masked_select, masked_scatter, nonzero and argwhere, as PyTorch's
namespace and methods have them.

`ops/scatter.py` keeps the forms PyTorch's backward formulas call (its `torch.ops.aten`:
they take only what the formulas pass them); the public forms here check their
arguments first, with PyTorch's errors in PyTorch's order (index dtype, dims, sizes,
then each index's bounds), then compute and record the same node classes. A 0-d
tensor is read as a 1-element vector, as PyTorch's kernels read it. The ops only the
public API has (index_copy, index_fill, take) have their nodes here.
"""

from __future__ import annotations

import numpy as np

from .._creation import zeros, zeros_like
from .._warn import Once, warn_user
from ..arrays.broadcasting import broadcast_shape
from ..arrays.layout import copy_like, empty_like
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor, _wrap_dim
from . import indexing
from . import scatter as aten
from .declaration import declare
from .formulas import Formula, FormulaNode, helper
from .tangent_formulas import Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the indexing ops.)
OP_FAMILY = "indexing"


def _sizes(shape: tuple) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _vector(a: np.ndarray) -> np.ndarray:
    """A 0-d array seen as a 1-element vector (PyTorch's `ensure_nonempty`)."""
    return a.reshape(1) if a.ndim == 0 else a


def _index_dtype(fn: str, index: Tensor) -> None:
    if index._data.size and index._data.dtype != np.int64:
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for index")


def _check_bounds(index: np.ndarray, size: int, dim: int) -> None:
    bad = index[(index < 0) | (index >= size)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension "
                           f"{dim} with size {size}")


def _places(index: np.ndarray, dim: int) -> tuple:
    """The numpy index of the places `index` names along `dim` (i itself elsewhere)."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _save_dim_index(node, dim: int, index: Tensor) -> None:
    node._saved.update({"dim": u64(dim), "index": SavedTensor(index)})


# -- gather ----------------------------------------------------------------------------------


def gather(x: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """Values picked along `dim` at `index`, shaped like `index` (for dim 0,
    out[i][j] = x[index[i][j]][j])."""
    d = _wrap_dim(dim, x._data.ndim)
    _index_dtype("gather", index)
    xv, iv = _vector(x._data), _vector(index._data)
    if index._data.size:
        if xv.ndim != iv.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as input "
                               "tensor")
        for i in range(xv.ndim):
            if i != d and iv.shape[i] > xv.shape[i]:
                raise RuntimeError(f"Size does not match at dimension {i} expected index "
                                   f"{_sizes(index._data.shape)} to be no larger than self "
                                   f"{_sizes(x._data.shape)} apart from dimension {d}")
        _check_bounds(iv, xv.shape[d], d)
        data = xv[_places(iv, d)].reshape(index._data.shape)
    else:
        data = np.zeros(index._data.shape, x._data.dtype)
    out = Tensor._make(np.array(data, order="C"))
    node = record(aten.GatherBackward0, out, x)
    if node is not None:
        _save_dim_index(node, dim, index)
        node._saved.update({"self": SavedTensor(x), "sparse_grad": sparse_grad})
    return out


# -- scatter and scatter_add -------------------------------------------------------------------


def _scatter_checks(x: Tensor, d: int, index: Tensor, src: Tensor | None) -> None:
    """PyTorch's scatter_gather_dtype_check and scatter_shape_check, then the bounds."""
    _index_dtype("scatter", index)
    if src is not None and src.dtype is not x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if not index._data.size:
        return
    xv, iv = _vector(x._data), _vector(index._data)
    if xv.ndim != iv.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    wrong = any(iv.shape[i] > xv.shape[i] for i in range(xv.ndim) if i != d)
    if src is not None:
        sv = _vector(src._data)
        if not wrong and sv.ndim == iv.ndim:
            wrong = any(iv.shape[i] > sv.shape[i] for i in range(xv.ndim))
        if sv.ndim != iv.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        if wrong:
            raise RuntimeError(f"Expected index {_sizes(index._data.shape)} to be no larger than "
                               f"self {_sizes(x._data.shape)} apart from dimension {d} and to be "
                               f"no larger size than src {_sizes(src._data.shape)}")
    elif wrong:
        raise RuntimeError(f"Expected index {_sizes(index._data.shape)} to be no larger than self "
                           f"{_sizes(x._data.shape)} apart from dimension {d}")
    _check_bounds(iv, xv.shape[d], d)


def _scattered(x: Tensor, d: int, index: Tensor, src, add: bool) -> np.ndarray:
    """A copy of x's data with src written (or added) at the places index names."""
    data = np.array(x._data, order="C")
    if index._data.size:
        iv = _vector(index._data)
        where = _places(iv, d)
        view = _vector(data)
        if isinstance(src, Tensor):
            sv = _vector(src._data)
            values = sv[tuple(slice(0, n) for n in iv.shape)]
            if add:
                np.add.at(view, where, values)
            else:
                view[where] = values
        else:
            view[where] = src
    return data


def scatter(x: Tensor, dim: int, index: Tensor, src=None, *, value=None,
            reduce: str | None = None) -> Tensor:
    """`x` with `src` (a tensor, or a number: `value`) written at the places `index`
    names along `dim` (for dim 0, out[index[i][j]][j] = src[i][j])."""
    if src is None:
        src = value
    d = _wrap_dim(dim, x._data.ndim)
    tensor_src = isinstance(src, Tensor)
    _scatter_checks(x, d, index, src if tensor_src else None)
    if reduce is not None:
        return _scatter_reduced(x, d, index, src, reduce)
    out = Tensor._make(_scattered(x, d, index, src, add=False))
    node = record(aten.ScatterBackward0 if tensor_src else aten.ScatterBackward1, out, x,
                  *((src,) if tensor_src else ()))
    if node is not None:
        _save_dim_index(node, dim, index)
    return out


_REDUCE_DEPRECATED = Once()  # (PyTorch warns once per process)


def scatter_(x: Tensor, dim: int, index: Tensor, src=None, *, value=None,
             reduce: str | None = None) -> Tensor:
    """scatter in place."""
    if src is None:
        src = value
    d = _wrap_dim(dim, x._data.ndim)
    tensor_src = isinstance(src, Tensor)
    _scatter_checks(x, d, index, src if tensor_src else None)
    if reduce is not None:
        raise NotImplementedError("minigrad's scatter_ takes no reduce= (PyTorch deprecates it "
                                  "for scatter_reduce_)")
    node = begin_inplace(aten.ScatterBackward0 if tensor_src else aten.ScatterBackward1, x,
                         *((src,) if tensor_src else ()))
    x._data[...] = _scattered(x, d, index, src, add=False)
    finish_inplace(x, node)
    if node is not None:
        _save_dim_index(node, dim, index)
    return x


def scatter_add_(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """scatter_add in place."""
    d = _wrap_dim(dim, x._data.ndim)
    _scatter_checks(x, d, index, src)
    node = begin_inplace(aten.ScatterAddBackward0, x, src)
    x._data[...] = _scattered(x, d, index, src, add=True)
    finish_inplace(x, node)
    if node is not None:
        _save_dim_index(node, dim, index)
    return x


def _scatter_reduced(x: Tensor, d: int, index: Tensor, src, reduce: str) -> Tensor:
    """scatter(reduce="add" or "multiply"): src added into, or multiplied into, the
    places named (PyTorch does not differentiate it, nor does minigrad)."""
    ufunc = {"add": np.add, "multiply": np.multiply}.get(reduce)
    if ufunc is None:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor) and _REDUCE_DEPRECATED.due():
        warn_user("The reduce argument of torch.scatter with Tensor src is deprecated and "
                      "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                      "instead for more reduction options.")
    if is_grad_enabled() and (x.requires_grad or getattr(src, "requires_grad", False)):
        raise NotImplementedError("minigrad does not differentiate scatter(reduce=...) (PyTorch "
                                  "records a node whose backward raises)")
    data = np.array(x._data, order="C")
    if index._data.size:
        iv = _vector(index._data)
        values = (_vector(src._data)[tuple(slice(0, n) for n in iv.shape)]
                  if isinstance(src, Tensor) else data.dtype.type(src))  # (cast first)
        ufunc.at(_vector(data), _places(iv, d), values)
    return Tensor._make(data)


def scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """`x` with `src` added at the places `index` names along `dim` (a place named
    twice gets both)."""
    d = _wrap_dim(dim, x._data.ndim)
    _scatter_checks(x, d, index, src)
    out = Tensor._make(_scattered(x, d, index, src, add=True))
    node = record(aten.ScatterAddBackward0, out, x, src)
    if node is not None:
        _save_dim_index(node, dim, index)
    return out


# -- index_select and index_add ---------------------------------------------------------------


def _index_bounds(index: np.ndarray, size: int, message: str = "index out of range in self"
                  ) -> None:
    if ((index < 0) | (index >= size)).any():
        raise IndexError(message)


def _index_select_bounds(data: np.ndarray, d: int, index: np.ndarray, size: int) -> None:
    """PyTorch's errors for indices out of range, which depend on its CPU kernel's
    path: a vector's, and dim 0's copy of whole slices, say "index out of range in
    self" (IndexError); any other dim (or an input of no elements) goes through its
    element loop, which names the first bad index (RuntimeError)."""
    if data.ndim <= 1 or not index.size:
        _index_bounds(index, size)
        return
    if not data.size and not size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = index[(index < 0) | (index >= size)]
    if not bad.size:
        return
    if d == 0 and data.size:
        raise IndexError("index out of range in self")
    raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad[0])} "
                       f"axis_dim={size}")


def index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of `x` along `dim` at `index` (a vector, or one index), in order."""
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._data.dtype != np.int64:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    d = _wrap_dim(dim, x._data.ndim)
    xv = _vector(x._data)
    _index_select_bounds(x._data, d, index._data.reshape(-1), xv.shape[d])
    data = np.take(xv, index._data.reshape(-1), axis=d)
    if x._data.ndim == 0:  # (a 0-d input gives a 0-d result)
        data = data.reshape(())
    out = Tensor._make(np.array(data, order="C"))
    node = record(indexing.IndexSelectBackward0, out, x)
    if node is not None:
        node._saved.update({"dim": u64(dim), "index": SavedTensor(index),
                            "self_sym_sizes": x._data.shape, "_dim": d})
    return out


def _index_add_checks(x: Tensor, d: int, index: Tensor, source: Tensor) -> None:
    """PyTorch's index_add checks, in its order."""
    if index._data.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index._data.ndim} with type: {index.dtype.type_name} and size: "
                         f"{_sizes(index._data.shape)}")
    if index._data.dtype != np.int64:
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype.type_name}")
    if x.dtype is not source.dtype:
        raise RuntimeError(f"index_add_(): self ({x.dtype.type_name}) and source "
                           f"({source.dtype.type_name}) must have the same scalar type")
    if not (d == 0 or d < source._data.ndim):
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source "
                           f"tensor with dim {source._data.ndim}")
    n = 1 if source._data.ndim == 0 else source._data.shape[d]
    if index._data.size != n:
        raise RuntimeError(f"index_add_(): Number of indices ({index._data.size}) should be "
                           f"equal to source.size(dim): ({n}), for dim: {d}")
    xs, ss = _vector(x._data).shape, _vector(source._data).shape
    if len(xs) != len(ss) or any(a != b for i, (a, b) in enumerate(zip(xs, ss)) if i != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {_sizes(x._data.shape)} "
                           f"source.shape = {_sizes(source._data.shape)}")
    _index_bounds(index._data, xs[d])


def index_add(x: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """`x` with alpha times `source`'s slices added at `index` along `dim`."""
    d = _wrap_dim(dim, x._data.ndim)
    _index_add_checks(x, d, index, source)
    return aten.index_add(x, dim, index, source, alpha)


def index_add_(x: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """index_add in place."""
    d = _wrap_dim(dim, x._data.ndim)
    _index_add_checks(x, d, index, source)
    return aten.index_add_(x, dim, index, source, alpha)


# -- index_copy and index_fill ---------------------------------------------------------------


class IndexCopyBackward0(FormulaNode):
    """index_copy(self, dim, index, source): self's gradient is zero at the copied
    slices; source's is the gradient's slices there (index_select)."""

    tangent = ("index_copy(dense(self_t, self_p), dim, index, dense(source_t, source_p))")

    saves = {"dim": VALUE, "index": INPUT, "source": INPUT, "source_dim": VALUE}
    formulas = (Formula("self", "grad.index_fill(dim, index, 0)"),
                Formula("source", "index_add_source_backward(grad, dim, index, source, "
                                  "source_dim, 1)"))


def _slices(a: np.ndarray, d: int, index: np.ndarray) -> tuple:
    return (slice(None),) * d + (index.reshape(-1),)


def index_copy(x: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """`x` with `source`'s slices copied in at `index` along `dim`."""
    d = _wrap_dim(dim, x._data.ndim)
    if index._data.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index._data.ndim})")
    n = 1 if source._data.ndim == 0 else source._data.shape[d]
    if index._data.size != n:
        raise IndexError(f"index_copy_(): Number of indices ({index._data.size}) should be "
                         f"equal to source.size(dim) ({n})")
    if index._data.dtype != np.int64:
        raise IndexError("index_copy_(): Expected a long tensor for index, but got "
                         f"{index.dtype.type_name}")
    if x.dtype is not source.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {x.dtype.type_name} and (source) {source.dtype.type_name}")
    xs, ss = _vector(x._data).shape, _vector(source._data).shape
    for i in range(max(len(xs), len(ss))):
        if i != d and (i >= len(xs) or i >= len(ss) or xs[i] != ss[i]):
            a = xs[i] if i < len(xs) else 1
            b = ss[i] if i < len(ss) else 1
            raise RuntimeError("index_copy_(): Source/destination tensor must have same slice "
                               f"shapes. Destination slice shape: {a} at dimension {i} and "
                               f"source slice shape: {b} at dimension {i}.")
    bad = index._data[(index._data < 0) | (index._data >= xs[d])]
    if bad.size:
        raise IndexError(f"index_copy_(): index {int(bad.reshape(-1)[0])} is out of bounds for "
                         f"dimension {d} with size {xs[d]}")
    data = np.array(x._data, order="C")
    _vector(data)[_slices(data, d, index._data)] = _vector(source._data)
    out = Tensor._make(data)
    node = record(IndexCopyBackward0, out, x, source)
    if node is not None:
        _save_dim_index(node, dim, index)
        node._saved.update({"source": SavedTensor(source), "source_dim": source._data.ndim})
    return out


class IndexFillBackward0(FormulaNode):
    """index_fill(self, dim, index, value): the gradient is zero at the filled slices."""

    tangent = Tangent("self_t.index_fill(dim, index, 0)", linear=True)

    saves = {"dim": VALUE, "index": INPUT}
    formulas = (Formula("self", "grad.index_fill(dim, index, 0)"),)


class IndexFillBackward1(FormulaNode):
    """index_fill(self, dim, index, value tensor): self's gradient as for a number;
    the value's is the sum of the gradient over the filled slices (each once)."""

    tangent = "dense(self_t, self_p).index_fill(dim, index, dense(value_t, value_p))"

    saves = {"dim": VALUE, "index": INPUT}
    formulas = (Formula("self", "grad.index_fill(dim, index, 0)"),
                Formula("value", "grad.index_select(dim, unique_indices(index)).sum()"))


@helper
def unique_indices(index: Tensor) -> Tensor:
    """Each index once (PyTorch's `std::get<0>(at::_unique(index, false))`)."""
    return Tensor._make(np.unique(index._data.reshape(-1)))


def index_fill(x: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """`x` with the slices at `index` along `dim` filled with `value` (a number, or a
    0-d tensor)."""
    if index._data.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if index._data.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    d = _wrap_dim(dim, x._data.ndim)
    size = _vector(x._data).shape[d]
    bad = index._data[(index._data < -size) | (index._data >= size)]
    if bad.size:
        raise IndexError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} "
                         f"with size {size}")
    data = empty_like(x._data)  # (PyTorch's clone: a transposed input, a transposed result)
    data[...] = x._data
    fill = value._data if isinstance(value, Tensor) else value
    _vector(data)[_slices(data, d, index._data)] = fill
    out = Tensor._make(data)
    tensor_value = isinstance(value, Tensor)
    node = record(IndexFillBackward1 if tensor_value else IndexFillBackward0, out, x,
                  *((value,) if tensor_value else ()))
    if node is not None:
        _save_dim_index(node, dim, index)
    return out


# -- take and take_along_dim ----------------------------------------------------------------


class TakeBackward0(FormulaNode):
    """take(self, index): each picked element's gradient added back at its place in
    zeros like self."""

    tangent = Tangent("self_t.take(index)", linear=True)

    saves = {"index": INPUT, "self": INPUT}
    formulas = (Formula("self", "take_backward(grad, self, index)"),)


@helper
def take_backward(grad: Tensor, self: Tensor, index: Tensor) -> Tensor:
    """The gradient of take: `grad` added into zeros like self at the indices
    (PyTorch's `zeros_like(self).put_(index, grad, true)`: laid out as self is)."""
    return put_(zeros_like(self, dtype=grad.dtype), index, grad, True)


class PutBackward0(FormulaNode):
    """put(self, index, source, accumulate): self's gradient is the gradient (zero at
    the places written over, unless adding); source's is the gradient at the places
    it went to (take)."""

    tangent = Tangent("dense(self_t, self_p).put(index, dense(source_t, source_p), accumulate)")

    saves = {"accumulate": VALUE, "index": INPUT, "source": INPUT}
    formulas = (Formula("self", "put_self_backward(grad, index, source, accumulate)"),
                Formula("source", "grad.take(index).reshape_as(source)"))


@helper
def put_self_backward(grad: Tensor, index: Tensor, source: Tensor, accumulate: bool) -> Tensor:
    """put's gradient for self: `grad`, or, where put wrote over self, zeros there
    (PyTorch's `accumulate ? grad : grad.put(index, zeros_like(source), false)`)."""
    if accumulate:
        return grad
    return put(grad, index, zeros(tuple(source.shape), dtype=grad.dtype), False)


def _put_checks(data: np.ndarray, index: Tensor, source: Tensor) -> None:
    """PyTorch's checks of put's arguments."""
    if index._data.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{index.dtype.type_name}")
    if data.dtype != source._data.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_type_name(data)} and source.dtype = "
                           f"{source.dtype.type_name}")
    if index._data.size != source._data.size:
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source._data.size}, "
                         f"index.numel() = {index._data.size}")
    n = data.size
    flat = index._data.reshape(-1)
    bad = flat[(flat < -n) | (flat >= n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of "
                         f"{n} elements.")


def _put_into(data: np.ndarray, index: Tensor, source: Tensor, accumulate: bool) -> None:
    """source's elements written (or added) at the flat indices (a negative index from
    the end)."""
    n = data.size
    flat = index._data.reshape(-1)
    flat = np.where(flat < 0, flat + n, flat)
    if data.flags.c_contiguous:
        target = data.reshape(-1)  # (a view)
    else:  # (the flat indices count in row-major order, whatever the layout)
        target, flat = data, np.unravel_index(flat, data.shape)
    if accumulate:
        np.add.at(target, flat, source._data.reshape(-1))
    else:
        target[flat] = source._data.reshape(-1)


def _type_name(data: np.ndarray) -> str:
    return Tensor._make(data[:0].reshape(0)).dtype.type_name


def put(x: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """`x` with `source`'s elements written at the flat indices `index` (added, with
    `accumulate`): PyTorch's `clone().put_()`, so laid out as `x` is."""
    data = copy_like(x._data, x._data)
    _put_checks(data, index, source)
    _put_into(data, index, source, accumulate)
    out = Tensor._make(data)
    node = record(PutBackward0, out, x, source)
    if node is not None:
        node._saved.update({"accumulate": accumulate, "index": SavedTensor(index),
                            "source": SavedTensor(source)})
    return out


def put_(x: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """put in place."""
    _put_checks(x._data, index, source)
    node = begin_inplace(PutBackward0, x, source)
    _put_into(x._data, index, source, accumulate)
    finish_inplace(x, node)
    if node is not None:
        node._saved.update({"accumulate": accumulate, "index": SavedTensor(index),
                            "source": SavedTensor(source)})
    return x


def take(x: Tensor, index: Tensor) -> Tensor:
    """The elements of `x`, read as one flat vector, at `index` (shaped like it; a
    negative index counts from the end)."""
    if index._data.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{index.dtype.type_name}")
    n = x._data.size
    if n == 0 and index._data.size:
        raise IndexError("take(): tried to take from an empty tensor")
    bad = index._data[(index._data < -n) | (index._data >= n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad.reshape(-1)[0])} on a "
                         f"tensor of {n} elements.")
    out = Tensor._make(np.array(x._data.reshape(-1)[index._data], order="C"))
    node = record(TakeBackward0, out, x)
    if node is not None:
        node._saved.update({"index": SavedTensor(index), "self": SavedTensor(x)})
    return out


def take_along_dim(x: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """gather along `dim` after broadcasting `x` and `indices` against each other
    (but for `dim` itself); with no dim, from the flattened `x`."""
    if dim is None:
        return gather(x.view(-1), 0, indices.view(-1))
    if x._data.ndim != indices._data.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {x._data.ndim} dimensions for input, "
                           f"and {indices._data.ndim} dimensions for indices")
    if indices._data.dtype != np.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices.dtype.type_name}")
    d = _wrap_dim(dim, x._data.ndim)
    if (indices._data < 0).any():  # (a negative index counts from the end, here alone)
        indices = Tensor._make(np.where(indices._data < 0, indices._data + x._data.shape[d],
                                        indices._data))
    x_sizes = list(x._data.shape)
    x_sizes[d] = indices._data.shape[d]
    indices = indices.expand(broadcast_shape(tuple(x_sizes), indices._data.shape))
    i_sizes = list(indices._data.shape)
    i_sizes[d] = x._data.shape[d]
    x = x.expand(broadcast_shape(tuple(i_sizes), x._data.shape))
    return gather(x, d, indices)


# -- masked_select and masked_scatter -----------------------------------------------------


def masked_select(x: Tensor, mask: Tensor) -> Tensor:
    """The elements of `x` where `mask` holds (both broadcast), as a 1-D tensor."""
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    broadcast_shape(mask._data.shape, x._data.shape)
    return aten.masked_select(x, mask)


def masked_scatter(x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """`x` (broadcast with `mask`) with the first elements of `source`, in order,
    written where `mask` holds."""
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype.type_name}")
    if x.dtype is not source.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{x.dtype.type_name} and {source.dtype.type_name}")
    shape = broadcast_shape(mask._data.shape, x._data.shape)
    where = np.broadcast_to(mask._data, shape)
    if int(where.sum()) > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    data = np.array(np.broadcast_to(x._data, shape), order="C")
    data[where] = source._data.reshape(-1)[:int(where.sum())]
    out = Tensor._make(data)
    node = record(aten.MaskedScatterBackward0, out, x, source)
    if node is not None:
        node._saved.update({"mask": SavedTensor(mask), "source_sym_sizes": source._data.shape})
    return out


def masked_scatter_(x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """masked_scatter in place (the mask broadcast to x's shape)."""
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype.type_name}")
    if x.dtype is not source.dtype:
        raise RuntimeError("masked_scatter_: expected self and source to have same dtypes but "
                           f"got {x.dtype.type_name} and {source.dtype.type_name}")
    where = np.broadcast_to(mask._data, x._data.shape)
    if int(where.sum()) > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    node = begin_inplace(aten.MaskedScatterBackward0, x, source)
    x._data[where] = source._data.reshape(-1)[:int(where.sum())]
    finish_inplace(x, node)
    if node is not None:
        node._saved.update({"mask": SavedTensor(mask), "source_sym_sizes": source._data.shape})
    return x


# -- nonzero and argwhere ---------------------------------------------------------------------


def nonzero(x: Tensor, *, as_tuple: bool = False):
    """The indices of the non-zero elements, one row each (as PyTorch lays it out:
    column by column), or, `as_tuple`, one index tensor per dim."""
    found = np.nonzero(_vector(x._data))
    if as_tuple:
        return tuple(Tensor._make(np.ascontiguousarray(i, np.int64))
                     for i in (found if x._data.ndim else found[:1]))
    if x._data.ndim:
        columns = np.array(found, np.int64)
    else:  # (a 0-d tensor: a row of no indices if it is non-zero)
        columns = np.zeros((0, found[0].size), np.int64)
    return Tensor._make(columns.T)


def argwhere(x: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row each (nonzero)."""
    return nonzero(x)


declare("gather", nodes=(aten.GatherBackward0,), function=gather, method=True, aten=aten.gather)
declare("scatter", nodes=(aten.ScatterBackward0, aten.ScatterBackward1), function=scatter,
        method=True, inplace=scatter_, aten=aten.scatter)
declare("scatter_add", nodes=(aten.ScatterAddBackward0,), function=scatter_add, method=True,
        inplace=scatter_add_)
declare("index_select", nodes=(indexing.IndexSelectBackward0,), function=index_select,
        method=True, aten=indexing.index_select)
declare("index_add", nodes=(aten.IndexAddBackward0,), function=index_add, method=True,
        inplace=index_add_, aten=aten.index_add)
declare("index_copy", nodes=(IndexCopyBackward0,), function=index_copy, method=True)
declare("index_fill", nodes=(IndexFillBackward0, IndexFillBackward1), function=index_fill,
        method=True)
declare("take", nodes=(TakeBackward0,), function=take, method=True)
declare("put", nodes=(PutBackward0,), function=put, method=True, inplace=put_)
declare("take_along_dim", function=take_along_dim, method=True)
declare("masked_select", nodes=(aten.MaskedSelectBackward0,), function=masked_select,
        method=True, aten=aten.masked_select)
declare("masked_scatter", nodes=(aten.MaskedScatterBackward0,), function=masked_scatter,
        method=True, inplace=masked_scatter_)
declare("nonzero", function=nonzero, method=True)
declare("argwhere", function=argwhere, method=True)
