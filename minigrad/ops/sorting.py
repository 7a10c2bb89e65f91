"""sort, argsort, msort, topk, kthvalue, median, nanmedian and mode: the ops that
order the elements along a dim and pick by rank.

Each picks elements and returns (values, indices); the gradient of the values goes
back to the places the indices name (PyTorch's `value_selecting_reduction_backward`:
zeros of the input's sizes with the gradient scattered in), so only the values get a
`grad_fn`. The median of a whole tensor shares its gradient among the elements equal
to it, as max() does.

How ties are ordered: PyTorch's CPU sort is stable (equal values keep their order,
ascending or descending, NaN counting as the largest value), and so is this one. topk,
kthvalue and median along a dim find their element with a quickselect, whose choice
among equal values follows no rule a learner could state; minigrad picks the first in
stable order (the values always agree).
"""

from __future__ import annotations

import numpy as np

from .._args import type_name
from ..arrays.layout import empty_like
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, OUTPUT, VALUE, Node, SavedTensor, bump_version
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, on_arrays
from .reductions import _return_type
from .tangent_formulas import Tangent

sort_result = _return_type("sort")
topk_result = _return_type("topk")
kthvalue_result = _return_type("kthvalue")
median_result = _return_type("median")
nanmedian_result = _return_type("nanmedian")
mode_result = _return_type("mode")


# -- the gradient of a pick: back to the picked places ----------------------------------


@on_arrays("value_selecting_reduction_backward")
def _value_selecting_reduction_backward(grad: np.ndarray, dim: int, indices: np.ndarray,
                                        sizes: tuple, keepdim: bool) -> np.ndarray:
    """`value_selecting_reduction_backward` on arrays: `grad` put at the places
    `indices` names along `dim`, in zeros of the input's `sizes`."""
    out = np.zeros(sizes, grad.dtype)
    if not sizes:  # a 0-d input: its one element was picked
        out[()] = grad
    else:
        d = dim % len(sizes)
        if not keepdim:
            grad, indices = np.expand_dims(grad, d), np.expand_dims(indices, d)
        np.put_along_axis(out, indices, grad, axis=d)
    bump_version(out, 2)  # (PyTorch's zeros are filled with zero_, then scatter_ed)
    return out


class _Pick(ArrayFormulaNode):
    """kthvalue, median(dim), nanmedian(dim), mode: the gradient goes to the picked
    element of each slice. Saves the dim, the INDICES (an output), keepdim and the
    input's sizes."""

    tangent = Tangent("gather_with_keepdimed_indices(self_t, (dim,), indices, keepdim)")
    saves = {"dim": VALUE, "indices": OUTPUT, "keepdim": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "value_selecting_reduction_backward(grad, dim, indices, "
                                "self_sym_sizes, keepdim)"),)


class KthvalueBackward0(_Pick):
    __doc__ = _Pick.__doc__


class MedianBackward1(_Pick):
    __doc__ = _Pick.__doc__


class NanmedianBackward1(_Pick):
    __doc__ = _Pick.__doc__


class ModeBackward0(_Pick):
    __doc__ = _Pick.__doc__


class _Ordered(ArrayFormulaNode):
    """sort, topk: each value's gradient goes back to where it came from (the dim is
    kept: sort and topk reduce nothing). Saves the dim, the INDICES and the input's
    sizes."""

    tangent = Tangent("gather_with_keepdimed_indices(self_t, (dim,), indices, True)")
    saves = {"dim": VALUE, "indices": OUTPUT, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "value_selecting_reduction_backward(grad, dim, indices, "
                                "self_sym_sizes, True)"),)


class SortBackward0(_Ordered):
    __doc__ = _Ordered.__doc__


class SortBackward1(_Ordered):
    """sort(stable=...): as SortBackward0 (PyTorch's overload with `stable`)."""


class TopkBackward0(_Ordered):
    __doc__ = _Ordered.__doc__
    tangent = Tangent("gather(self_t, dim, indices)", linear=True)


def _record_pick(node_cls: type[Node], x: Tensor, values: np.ndarray, indices: np.ndarray,
                 dim: int, keepdim: bool | None, result_type, laid_out: bool = False):
    """`laid_out`: `values` and `indices` are fresh arrays laid out as the op's results
    are (else made row-major)."""
    if not laid_out:
        values, indices = np.array(values, order="C"), np.array(indices, np.int64, order="C")
    out, idx = Tensor._make(values), Tensor._make(indices)
    node = record(node_cls, out, x)
    if node is not None:
        # (the indices, an output that needs no gradient, are saved as themselves, as
        # PyTorch saves a leaf: `_saved_indices` is the tensor returned)
        node._saved.update({"dim": u64(dim), "indices": SavedTensor(idx),
                            "self_sym_sizes": x._data.shape})
        if keepdim is not None:
            node._saved["keepdim"] = keepdim
    return result_type(out, idx)


# -- sorting --------------------------------------------------------------------------


def stable_order(a: np.ndarray, d: int, descending: bool) -> np.ndarray:
    """The indices that sort `a` along `d`, equal values keeping their order (NaN
    counts as the largest). Descending: sort the reversed array ascending and reverse
    the answer, so that equal values still come in their first order."""
    if not descending:
        return np.argsort(a, axis=d, kind="stable")
    order = np.flip(np.argsort(np.flip(a, d), axis=d, kind="stable"), d)
    return a.shape[d] - 1 - order


def _check_bool(name: str, value, arg: str, position: int | None = None) -> None:
    if not isinstance(value, bool):
        where = f" (position {position})" if position is not None else ""
        raise TypeError(f"{name}(): argument '{arg}'{where} must be bool, not "
                        f"{type_name(value)}")


def _sorted(x: Tensor, dim: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    """The values and indices of `sort`."""
    a = x._data
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return a.copy(), np.array(0, np.int64)
    order = stable_order(a, d, descending)
    # (laid out as PyTorch's `empty_like(a)`: a transposed input gives transposed
    # results, one of no elements its own strides)
    values, indices = empty_like(a), empty_like(a, np.int64)
    values[...] = np.take_along_axis(a, order, axis=d)
    indices[...] = order
    return values, indices


def sort(input: Tensor, dim: int = -1, descending: bool = False, *,  # noqa: A002
         stable: bool | None = None):
    """The elements of each slice along `dim` in order, and where each came from:
    a (values, indices) pair. Stable: equal elements keep their order."""
    _check_bool("sort", descending, "descending")
    values, order = _sorted(input, dim, descending)
    node_cls = SortBackward0 if stable is None else SortBackward1
    return _record_pick(node_cls, input, values, order, dim, None, sort_result, laid_out=True)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *,  # noqa: A002
            stable: bool = False) -> Tensor:
    """The indices that sort each slice along `dim` (sort's indices)."""
    _check_bool("argsort", descending, "descending")
    return Tensor._make(_sorted(input, dim, descending)[1])


def msort(input: Tensor) -> Tensor:  # noqa: A002
    """The input sorted along its first dim (sort(input, 0).values)."""
    return sort(input, 0).values


# -- topk and kthvalue ----------------------------------------------------------------


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True,  # noqa: A002
         sorted: bool = True):  # noqa: A002 - PyTorch's name
    """The k largest (or smallest) elements of each slice along `dim`, in order, and
    their indices."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    size = a.shape[d] if a.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if a.ndim == 0:
        values, order = a.copy(), np.array(0, np.int64)
    else:
        order = np.take(stable_order(a, d, largest), np.arange(k), axis=d)
        values = np.take_along_axis(a, order, axis=d)
    return _record_pick(TopkBackward0, input, values, order, dim, None, topk_result)


def _picked(a: np.ndarray, d: int, rank: np.ndarray | int, keepdim: bool):
    """The element of rank `rank` (0 the smallest) of each slice along `d`, and its
    index: the values and indices, the dim kept or not."""
    order = np.argsort(a, axis=d, kind="stable")
    rank = np.broadcast_to(np.asarray(rank), np.delete(a.shape, d))
    idx = np.take_along_axis(order, np.expand_dims(rank, d), axis=d)
    values = np.take_along_axis(a, idx, axis=d)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return values, idx


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):  # noqa: A002
    """The k-th smallest element of each slice along `dim` (k from 1), and its index."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    size = a.shape[d] if a.ndim else 1
    if size == 0:  # (PyTorch checks this first, with an error of its own)
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if a.ndim == 0:
        values, idx = a.copy(), np.array(0, np.int64)
    else:
        values, idx = _picked(a, d, k - 1, keepdim)
    return _record_pick(KthvalueBackward0, input, values, idx, dim, keepdim,
                        kthvalue_result)


# -- median and mode ------------------------------------------------------------------


class MedianBackward0(ArrayFormulaNode):
    """median(): the gradient is shared evenly by the elements equal to the median
    (the NaNs, when it is NaN). Saves its INPUT and its OUTPUT."""

    tangent = Tangent("evenly_read_jvp(self_t, self_p, result)")
    saves = {"result": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "evenly_distribute_backward(grad, self, result)"),)


class NanmedianBackward0(MedianBackward0):
    __doc__ = MedianBackward0.__doc__


@on_arrays("evenly_distribute_backward")
def _evenly_distribute(grad: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`evenly_distribute_backward` on arrays: PyTorch's row-major zeros (whatever x's
    layout), the share of the gradient filled in where x equals the result."""
    mask = np.isnan(x) if np.isnan(y) else x == y
    # (a result changed since, through `.data`, may match no element: the share
    # grad / 0 then goes nowhere, and PyTorch's zeros come back without a warning)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = grad / grad.dtype.type(mask.sum())
    out = np.zeros(x.shape, grad.dtype)
    out[mask] = share
    bump_version(out)  # (PyTorch fills its zeros in with `masked_fill_`)
    return out


def _median_rank(a: np.ndarray, d: int, skip_nan: bool) -> np.ndarray | int:
    """The rank of the (lower) median in each slice: of the non-NaN elements for
    nanmedian; a slice with a NaN has NaN as its median (the first NaN, in order)."""
    n = a.shape[d]
    if a.dtype.kind != "f":
        return (n - 1) // 2
    nans = np.isnan(a).sum(axis=d)
    if skip_nan:
        # (a slice of NaNs only: the first NaN)
        return np.where(nans == n, 0, (n - nans - 1) // 2)
    return np.where(nans > 0, n - nans, (n - 1) // 2)


def _median_all(input: Tensor, node_cls, skip_nan: bool) -> Tensor:
    a = input._data.reshape(-1)
    if a.size == 0:
        value = np.array(np.nan, a.dtype) if a.dtype.kind == "f" else None
        if value is None:
            raise IndexError("median() input tensor cannot be empty")
    else:
        value = _picked(a, 0, _median_rank(a, 0, skip_nan), False)[0]
    out = Tensor._make(np.array(value, order="C"))
    node = record(node_cls, out, input)
    if node is not None:
        node._saved.update({"result": SavedTensor(out, is_output=True),
                            "self": SavedTensor(input)})
    return out


def _median_dim(input: Tensor, dim: int, keepdim: bool, name: str, skip_nan: bool):
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    _check_bool(name, keepdim, "keepdim")
    if a.ndim == 0:
        values, idx = a.copy(), np.array(0, np.int64)
    else:
        if a.shape[d] == 0:
            # (nanmedian's too: PyTorch's message names median)
            raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
        values, idx = _picked(a, d, _median_rank(a, d, skip_nan), keepdim)
    node_cls, result_type = ((NanmedianBackward1, nanmedian_result) if skip_nan else
                             (MedianBackward1, median_result))
    return _record_pick(node_cls, input, values, idx, dim, keepdim, result_type)


def median(input: Tensor, dim: int | None = None, keepdim: bool = False):  # noqa: A002
    """The lower median of every element; with `dim`, of each slice, and its index.
    A NaN makes it NaN."""
    if dim is None:
        return _median_all(input, MedianBackward0, False)
    return _median_dim(input, dim, keepdim, "median", False)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False):  # noqa: A002
    """median, leaving NaNs out (NaN only where every element is NaN)."""
    if dim is None:
        return _median_all(input, NanmedianBackward0, True)
    return _median_dim(input, dim, keepdim, "nanmedian", True)


def _mode_of(row: np.ndarray) -> tuple:
    """The most frequent value of a 1-D array (the smallest of those tied), and the
    last index it is at."""
    order = np.argsort(row, kind="stable")
    ranked = row[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    counts = np.diff(np.r_[starts, ranked.size])
    best = int(np.argmax(counts))
    last = starts[best] + counts[best] - 1
    return ranked[last], order[last]


def mode(input: Tensor, dim: int = -1, keepdim: bool = False):  # noqa: A002
    """The most frequent value of each slice along `dim` (the smallest, if several
    are), and the last index it is at."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    _check_bool("mode", keepdim, "keepdim")
    if a.ndim == 0:
        values, idx = a.copy(), np.array(0, np.int64)
    else:
        rows = np.moveaxis(a, d, -1)
        flat = rows.reshape(-1, rows.shape[-1]) if rows.shape[-1] else None
        shape = rows.shape[:-1]
        if flat is None:
            raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
        picked = [_mode_of(r) for r in flat]
        values = np.array([v for v, _ in picked], a.dtype).reshape(shape)
        idx = np.array([i for _, i in picked], np.int64).reshape(shape)
        if keepdim:
            values, idx = np.expand_dims(values, d), np.expand_dims(idx, d)
    return _record_pick(ModeBackward0, input, values, idx, dim, keepdim, mode_result)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------

declare("sort", nodes=(SortBackward0, SortBackward1), function=sort, method=True)
declare("argsort", function=argsort, method=True)
declare("msort", function=msort, method=True)  # (records SortBackward0, sort's)
declare("topk", nodes=(TopkBackward0,), function=topk, method=True)
declare("kthvalue", nodes=(KthvalueBackward0,), function=kthvalue, method=True)
declare("median", nodes=(MedianBackward0, MedianBackward1), function=median, method=True)
declare("nanmedian", nodes=(NanmedianBackward0, NanmedianBackward1), function=nanmedian,
        method=True)
declare("mode", nodes=(ModeBackward0,), function=mode, method=True)
