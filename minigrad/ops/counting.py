"""bincount, histc, isin, searchsorted and bucketize: ops that count or locate values.
Their results are counts, positions or booleans, through which no gradient flows, so
they record no node.
"""

from __future__ import annotations

import numpy as np

from .._args import type_name
from .._dtype import from_numpy_dtype
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .public_forms import checked_input

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the reductions.)
OP_FAMILY = "reductions"


def _array(value) -> np.ndarray:
    """A tensor's data, or a Python number as a 0-d array (of PyTorch's dtype for it)."""
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, bool):
        return np.array(value)
    return np.array(value, np.int64 if isinstance(value, int) else np.float64)


# -- bincount -------------------------------------------------------------------------


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """How many times each non-negative integer occurs in the 1-D `input` (the sum of
    `weights` at its places, with weights); at least `minlength` bins."""
    a = input._data
    if a.dtype.kind not in "iu" or a.dtype == np.bool_:
        raise RuntimeError(f"\"bincount_cpu\" not implemented for "
                           f"'{from_numpy_dtype(a.dtype).type_name}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if a.ndim == 1 and a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if a.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return Tensor._make(np.bincount(a, minlength=minlength).astype(np.int64))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out_dtype = w.dtype if w.dtype == np.float32 else np.dtype(np.float64)
    counts = np.bincount(a, weights=w.astype(np.float64), minlength=minlength)
    return Tensor._make(np.ascontiguousarray(counts.astype(out_dtype)))


# -- histc ----------------------------------------------------------------------------


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """A histogram of `input` in `bins` equal bins from `min` to `max` (the data's
    smallest and largest elements when both are 0); elements outside are left out."""
    a = input._data
    if a.dtype.kind != "f":
        raise RuntimeError(f"\"histogram_cpu\" not implemented for "
                           f"'{from_numpy_dtype(a.dtype).type_name}'")
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0, but got "
                           f"{bins} for dim 0".replace("torch.", "minigrad."))
    lo, hi = a.dtype.type(min), a.dtype.type(max)
    if lo == hi and a.size:
        lo, hi = a.min(), a.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite"
                           .replace("torch.", "minigrad."))
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min"
                           .replace("torch.", "minigrad."))
    flat = a.reshape(-1)
    inside = flat[(flat >= lo) & (flat <= hi)]
    with np.errstate(invalid="ignore"):
        pos = ((inside - lo) / (hi - lo) * a.dtype.type(bins)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)  # (the largest edge belongs to the last bin)
    return Tensor._make(np.bincount(pos, minlength=bins).astype(a.dtype))


# -- isin -----------------------------------------------------------------------------


def isin(elements, test_elements, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """Whether each of `elements` is in `test_elements` (either may be a number)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got "
                        f"({type_name(elements)}, {type_name(test_elements)}), but expected "
                        "one of:\n * (Tensor elements, Tensor test_elements, *, bool "
                        "assume_unique = False, bool invert = False, Tensor out = None)\n"
                        " * (Number element, Tensor test_elements, *, bool assume_unique = "
                        "False, bool invert = False, Tensor out = None)\n * (Tensor "
                        "elements, Number test_element, *, bool assume_unique = False, bool "
                        "invert = False, Tensor out = None)\n")
    a, b = _array(elements), _array(test_elements)
    return Tensor._make(np.array(np.isin(a, b, invert=invert), order="C"))


# -- searchsorted and bucketize -------------------------------------------------------


def _side(right: bool, side: str | None) -> str:
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}".replace("torch.", "minigrad."))
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True"
                               .replace("torch.", "minigrad."))
        return side
    return "right" if right else "left"


def _search(boundaries: np.ndarray, values: np.ndarray, side: str) -> np.ndarray:
    """np.searchsorted row by row: each row of `values` in the same row of
    `boundaries` (a 1-D `boundaries` serves every value)."""
    if boundaries.ndim == 1:
        return np.asarray(np.searchsorted(boundaries, values, side=side), np.int64)
    if values.size == 0 or boundaries.shape[-1] == 0:  # (every place is 0)
        return np.zeros(values.shape, np.int64)
    rows_b = boundaries.reshape(-1, boundaries.shape[-1])
    rows_v = values.reshape(-1, values.shape[-1]) if values.ndim else values.reshape(1, 1)
    out = np.stack([np.searchsorted(b, v, side=side) for b, v in zip(rows_b, rows_v)])
    return out.reshape(values.shape).astype(np.int64)


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False,  # noqa: A002
                 right: bool = False, side: str | None = None,
                 sorter: Tensor | None = None) -> Tensor:
    """Where each of `input` would go in the innermost dim of `sorted_sequence` to keep
    it sorted: the first such place (`side="left"`) or the last (`right`)."""
    if out_int32:
        raise NotImplementedError("searchsorted(out_int32=True): minigrad has no int32 dtype")
    where = _side(right, side)
    seq = sorted_sequence._data
    values = _array(input)
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension".replace("torch.", "minigrad."))
    if sorter is not None:
        if sorter._data.shape != seq.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same "
                               "size, but got boundary tensor "
                               f"{list(seq.shape)}and got sorter tensor "
                               f"{list(sorter._data.shape)}".replace("torch.", "minigrad."))
        seq = np.take_along_axis(seq, sorter._data, axis=-1)
    if seq.ndim > 1 and (values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor "
            f"{list(values.shape)}".replace("torch.", "minigrad."))
    return Tensor._make(np.array(_search(seq, values, where), order="C"))


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False,  # noqa: A002
              right: bool = False) -> Tensor:
    """The bucket of each of `input` between the 1-D `boundaries` (searchsorted's
    place: `right` puts a value equal to a boundary after it)."""
    if out_int32:
        raise NotImplementedError("bucketize(out_int32=True): minigrad has no int32 dtype")
    if boundaries._data.ndim != 1:
        raise RuntimeError("boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    values = _array(input)
    side = "right" if right else "left"
    return Tensor._make(np.array(_search(boundaries._data, values, side), order="C"))


# -- declarations: each op's public names (see `declaration.py`) ----------------------------

declare("bincount", function=bincount, method=True)
declare("histc", function=histc, method=True)
declare("isin", function=isin)
declare("searchsorted", function=searchsorted)
declare("bucketize", function=bucketize)


# -- unique and unique_consecutive --------------------------------------------------------


def _unique_results(values: np.ndarray, inverse: np.ndarray, counts: np.ndarray,
                    return_inverse: bool, return_counts: bool):
    out = [Tensor._make(np.array(values, order="C"))]
    if return_inverse:
        out.append(Tensor._make(np.array(inverse, np.int64, order="C")))
    if return_counts:
        out.append(Tensor._make(np.array(counts, np.int64, order="C")))
    return out[0] if len(out) == 1 else tuple(out)


def _rows(a: np.ndarray, dim: int | None) -> np.ndarray:
    """`a` as rows to compare: its elements (no dim), or its slices along `dim`."""
    if dim is None:
        return a.reshape(-1, 1)
    d = _wrap_dim(dim, a.ndim)
    rest = int(np.prod(np.delete(a.shape, d)))
    return np.moveaxis(a, d, 0).reshape(a.shape[d], rest)


def _back(rows: np.ndarray, a: np.ndarray, dim: int | None) -> np.ndarray:
    if dim is None:
        return rows.reshape(-1)
    d = _wrap_dim(dim, a.ndim)
    shape = (rows.shape[0], *np.delete(a.shape, d))
    return np.moveaxis(rows.reshape(shape), 0, d)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None):
    """The distinct elements (or slices along `dim`), in ascending order; with
    `return_inverse`, where each element went, and with `return_counts`, how many of
    each there were."""
    a = checked_input(input, "_unique2")._data  # (PyTorch's unique calls _unique2)
    if dim is None:
        values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True,
                                            return_counts=True)
        return _unique_results(values, inverse.reshape(a.shape), counts, return_inverse,
                               return_counts)
    rows = _rows(a, dim)
    if rows.shape[0] == 0:
        return _unique_results(a.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64),
                               return_inverse, return_counts)
    values, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    return _unique_results(_back(values, a, dim), inverse.reshape(-1), counts,
                           return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: bool = False,  # noqa: A002
                       return_counts: bool = False, dim: int | None = None):
    """Each run of equal consecutive elements (or slices along `dim`) kept once; with
    `return_inverse`, the run each element is in, with `return_counts` their lengths."""
    a = input._data
    rows = _rows(a, dim)
    if rows.shape[0] == 0:
        empty = np.zeros(0, np.int64)
        return _unique_results(a.copy(), empty.reshape(a.shape) if dim is None else empty,
                               empty, return_inverse, return_counts)
    starts = np.r_[True, (rows[1:] != rows[:-1]).any(axis=1)]
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.r_[np.flatnonzero(starts), rows.shape[0]])
    values = _back(rows[starts], a, dim)
    return _unique_results(values, inverse.reshape(a.shape) if dim is None else inverse,
                           counts, return_inverse, return_counts)


declare("unique", function=unique, method=True)
declare("unique_consecutive", function=unique_consecutive, method=True)
