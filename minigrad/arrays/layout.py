"""Memory layout: how PyTorch lays out a fresh result (the operands' dim order, so
`x.t().exp()` is transposed too), and the flat views the kernels walk."""

from __future__ import annotations

import numpy as np


def flat(a: np.ndarray) -> np.ndarray:
    """`a` as the 1-D array kernels loop over: itself when it is 1-D (the kernels
    take any strides), else a flat view, or a copy in row-major order when its
    memory is not laid out that way. (`ravel` costs a third of `reshape(-1)`, but
    copies a spread-out single value that `reshape` can still view.)"""
    if a.ndim == 1:
        return a
    return a.ravel() if a.flags.c_contiguous else a.reshape(-1)


def result_order(shape: tuple, *arrays: np.ndarray) -> list | None:
    """How PyTorch lays out an element-wise result of `shape` from `arrays` (each
    broadcastable to it): its dims from outermost to innermost in the order the
    operands' strides give them, so `x.t().exp()` is transposed like `x.t()`. The
    first operand decides; one broadcast along a dim has no say about it, and the
    next one is asked. None when that order is plain row-major, as it always is
    when every operand is row-major."""
    for a in arrays:
        if not a.flags.c_contiguous:
            break
    else:
        return None
    strides = [_strides_at(a, shape) for a in arrays]

    def outer(d0: int, d1: int) -> int:
        """1 if dim d0 belongs outside dim d1, -1 if inside, 0 if no operand says."""
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:  # equal strides: the longer dim goes outside
                return 1
        return 0

    inner_first = reorder_dims(list(range(len(shape) - 1, -1, -1)), outer)
    order = inner_first[::-1]
    return None if order == sorted(order) else order


def reorder_dims(dims: list, should_swap) -> list:
    """PyTorch's insertion sort of TensorIterator dims, innermost first:
    `should_swap(a, b)` > 0 moves b before a, < 0 stops b there, 0 (undecided) lets it
    look further; so undecided pairs keep their order."""
    dims = list(dims)
    for i in range(1, len(dims)):
        j = i
        for k in range(i - 1, -1, -1):
            decided = should_swap(dims[k], dims[j])
            if decided > 0:
                dims[k], dims[j] = dims[j], dims[k]
                j = k
            elif decided < 0:
                break
    return dims


def _strides_at(a: np.ndarray, shape: tuple) -> tuple:
    """`a`'s strides seen at the broadcast `shape`: 0 along the dims it is stretched
    over (a dim of size 1 in both keeps its stride, which `np.broadcast_to` zeroes)."""
    lead = len(shape) - a.ndim
    return (0,) * lead + tuple(
        0 if n == 1 and shape[lead + i] != 1 else s
        for i, (n, s) in enumerate(zip(a.shape, a.strides))
    )


def layout_matters(a: np.ndarray) -> bool:
    """Whether operand `a` can make an element-wise result other than row-major: it
    is laid out otherwise, and is not one value spread out (whose strides are all 0,
    `sum()`'s gradient), which has no say."""
    return not a.flags.c_contiguous and any(a.strides)


def memory_order(array: np.ndarray) -> list:
    """`array`'s dims from the outermost in memory (largest stride) to the innermost:
    `array.transpose(memory_order(array))` walks its memory in row-major order."""
    return sorted(range(array.ndim), key=lambda d: -array.strides[d])


def is_dense(array: np.ndarray) -> bool:
    """Non-overlapping and dense: a row-major array with its dims in some order
    (`x.t()` is, `x[:, ::2]` and an expanded array are not)."""
    return array.transpose(memory_order(array)).flags.c_contiguous


def empty_in_order(shape: tuple, dtype, order: list) -> np.ndarray:
    """A fresh array of `shape` whose memory runs through its dims in `order`
    (outermost first), owning its memory as a fresh PyTorch tensor does. (numpy
    allocates an array with the strides asked for when given no buffer.)"""
    strides = [0] * len(shape)
    step = np.dtype(dtype).itemsize
    for d in reversed(order):
        strides[d] = step
        step *= max(shape[d], 1)
    return np.ndarray(shape, dtype, strides=strides)


def copy_like(data: np.ndarray, model: np.ndarray) -> np.ndarray:
    """A copy of `data` (of `model`'s shape) laid out as PyTorch lays out a result
    made from `model` (`result_order`): a transposed model gives a transposed copy."""
    order = result_order(model.shape, model) if layout_matters(model) else None
    if order is None:
        return np.array(data, copy=True, order="C")
    copy = empty_in_order(model.shape, data.dtype, order)
    copy[...] = data
    return copy


def fresh_result(shape: tuple, dtype, *operands: np.ndarray) -> tuple:
    """For an element-wise kernel over `operands` (each broadcastable to `shape`): a
    fresh result laid out as PyTorch lays it out (`result_order`), a flat view of it,
    and the operands flattened in the same order, for the kernel to walk side by side."""
    order = None
    for a in operands:
        if layout_matters(a):
            order = result_order(shape, *operands)
            break
    if order is None:
        out = np.empty(shape, dtype)
        flats = [flat(a if a.shape == shape else np.broadcast_to(a, shape)) for a in operands]
        return out, out.reshape(-1), flats
    out = empty_in_order(shape, dtype, order)
    flats = [flat(np.broadcast_to(a, shape).transpose(order)) for a in operands]
    return out, out.transpose(order).ravel(), flats


def copy_in_order(dst: np.ndarray, src: np.ndarray) -> None:
    """`dst[...] = src` as PyTorch copies: element by element, through `dst`'s memory in
    order. numpy copies through a buffer when the two overlap; PyTorch does not, so
    where `src` reads memory the copy has already written (`t[1] = t[:, 0]` of a 2x2
    `t`) a later element gets the new value. (PyTorch refuses the overlaps it can
    decide, see `check_no_partial_overlap`; these are the ones it leaves alone.)"""
    if dst is src or not np.shares_memory(dst, src):
        dst[...] = src
        return
    order = memory_order(dst)
    to = dst.transpose(order)
    source = np.broadcast_to(src, dst.shape).transpose(order)
    for index in np.ndindex(to.shape):
        to[index] = source[index]
