"""Shared plumbing for ops: dtype handling, broadcasting, and calling kernels."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from .._dtype import float32, float64
from ..kernels import elementwise as K
from ..kernels.reductions import sum_all, sum_rows

if TYPE_CHECKING:  # the engine imports this module while tensor.py is loading
    from ..tensor import Tensor


def u64(dim: int) -> int:
    """PyTorch stores a negative dim in a saved attribute as an unsigned 64-bit wrap
    (`-1` reads back as 18446744073709551615); minigrad reports the same value."""
    return dim + 2**64 if dim < 0 else dim


def flat(a: np.ndarray) -> np.ndarray:
    """`a` as the 1-D array kernels loop over: itself when it is 1-D (the kernels
    take any strides), else a flat view, or a copy in row-major order when its
    memory is not laid out that way. (`ravel` costs a third of `reshape(-1)`, but
    copies a spread-out single value that `reshape` can still view.)"""
    if a.ndim == 1:
        return a
    return a.ravel() if a.flags.c_contiguous else a.reshape(-1)


def broadcast_shape(a: tuple, b: tuple) -> tuple:
    """The broadcast shape of two shapes, with PyTorch's error message."""
    if len(b) <= len(a) and a[len(a) - len(b):] == b:
        return a  # b is a's trailing dims (a bias for a batch): the common case
    ndim = max(len(a), len(b))
    a = (1,) * (ndim - len(a)) + tuple(a)
    b = (1,) * (ndim - len(b)) + tuple(b)
    # Checked from the last dim backwards: PyTorch reports the innermost mismatch.
    for i in reversed(range(ndim)):
        x, y = a[i], b[i]
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}"
            )
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def shape_mismatch(shape: tuple, broadcast: tuple) -> RuntimeError:
    """PyTorch's error when a result of `broadcast` shape must be written into a tensor
    of `shape` (an in-place op, `copy_`, `linear`'s bias)."""
    return RuntimeError(f"output with shape [{', '.join(map(str, shape))}] doesn't match the "
                        f"broadcast shape [{', '.join(map(str, broadcast))}]")


def check_inplace_shape(shape: tuple, other: tuple) -> None:
    """An in-place op keeps its tensor's shape: the other operand may broadcast to it,
    not beyond it (PyTorch's errors, the size mismatch first)."""
    full = broadcast_shape(shape, other)
    if full != shape:
        raise shape_mismatch(shape, full)


def sum_to(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Undo broadcasting: sum `grad` down to `shape` (leading dims, then size-1 dims)."""
    if grad.shape == shape:
        return grad
    if shape == ():  # (a full sum: a new array, as PyTorch's `sum()`)
        total = np.empty((), grad.dtype)
        np.sum(grad, out=total)
        return total
    # Like PyTorch's, a sum that drops leading dims comes back as a view of the
    # summed array (which decides whether a later stream may be added into it in
    # place); one that keeps every dim is the summed array itself.
    if _row_of(shape, grad.shape) and grad.size and grad.flags.c_contiguous:
        # Only leading dims are summed away (a bias's gradient): one pass down the rows.
        out = np.empty(shape, grad.dtype)
        if grad.ndim == 2 and len(shape) == 1:  # (the usual case: nothing to reshape)
            sum_rows(grad, out)
        else:
            sum_rows(grad.reshape(-1, out.size), out.reshape(-1))
        return out.reshape(shape) if grad.ndim > len(shape) else out
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1
    )
    out = grad.sum(axis=axes, keepdims=True) if axes else grad
    return out if out.shape == shape else out.reshape(shape)


def _row_of(shape: tuple, batch: tuple) -> tuple | None:
    """`shape` without its leading 1s, when that is the trailing dims of `batch` and
    `batch` has more dims: one row repeated over `batch`'s leading dims, as a bias is
    over a batch. Else None."""
    row = shape
    while row and row[0] == 1:
        row = row[1:]
    if row and len(row) < len(batch) and batch[len(batch) - len(row):] == row:
        return row
    return None


def spread(value: np.ndarray, shape: tuple) -> np.ndarray:
    """A single value (a 0-d array) seen as a read-only array of `shape` without
    copying it: every stride is 0. What `sum()`'s and `mean()`'s backward return;
    the same as `np.broadcast_to`, which costs several times more to call."""
    if value.ndim != 0:
        return np.broadcast_to(value, shape)
    view = np.ndarray(shape, value.dtype, value, 0, (0,) * len(shape))
    view.flags.writeable = False
    return view


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

    # PyTorch's insertion sort, innermost dim first; undecided pairs keep their order.
    inner_first = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(shape)):
        j = i
        for k in range(i - 1, -1, -1):
            decided = outer(inner_first[k], inner_first[j])
            if decided > 0:
                inner_first[k], inner_first[j] = inner_first[j], inner_first[k]
                j = k
            elif decided < 0:
                break
    order = inner_first[::-1]
    return None if order == sorted(order) else order


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


def float_dtype(x: Tensor):
    """The dtype a floating op computes in: integer inputs become the default float."""
    d = x.dtype
    return d if d.is_floating_point else float32


def as_float_data(x: Tensor) -> np.ndarray:
    d = x._data
    return d if d.dtype.kind == "f" else d.astype(np.float32)


# Arrays at least this long are split across the cores (the kernels release the
# GIL); below it, starting threads would cost more than it saves.
PARALLEL_MIN = 1 << 18
_WORKERS = os.cpu_count() or 1
_pool: ThreadPoolExecutor | None = None


def run_kernel(kernel, *args) -> None:
    """Call `kernel(*args)`; the last argument is the flat output. For long arrays,
    each core runs the same kernel on its own slice of every flat array argument."""
    n = args[-1].size
    if n < PARALLEL_MIN or _WORKERS == 1:
        kernel(*args)
        return
    jobs = [
        _thread_pool().submit(kernel, *(a[part] if isinstance(a, np.ndarray) and a.size == n
                                        else a for a in args))
        for part in _per_core(n)
    ]
    for job in jobs:
        job.result()


def _per_core(n: int) -> list[slice]:
    """`n` elements cut into one slice per core."""
    step = -(-n // _WORKERS)
    return [slice(i, i + step) for i in range(0, n, step)]


def _thread_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(_WORKERS, thread_name_prefix="minigrad-kernel")
    return _pool


def total(a: np.ndarray) -> float:
    """The sum of every element of a float array, accumulated in float64. Long
    arrays are summed a slice per core and the partial sums added."""
    if a.size < PARALLEL_MIN or _WORKERS == 1 or not a.flags.c_contiguous:
        return sum_all(a)
    a = a.reshape(-1)
    jobs = [_thread_pool().submit(sum_all, a[part]) for part in _per_core(a.size)]
    result = 0.0
    for job in jobs:
        result += job.result()
    return result


def _broadcast_scalar(a: np.ndarray) -> bool:
    """A broadcast single value (every stride 0), as `sum`'s backward produces."""
    return a.ndim > 0 and a.size > 1 and not any(a.strides)


# Commutative kernels and their array-op-scalar twins (see `binary`).
SCALAR_FORMS = {K.add: K.add_scalar, K.mul: K.mul_scalar}
# Kernels doing one exactly rounded IEEE operation, and numpy's ufunc for it.
EXACT_UFUNCS = {K.add: np.add, K.sub: np.subtract, K.mul: np.multiply}
# Their batch-of-rows op row forms (`x @ w.t() + bias`), and which may swap sides.
ROW_FORMS = {K.add: K.add_rows, K.sub: K.sub_rows, K.mul: K.mul_rows}
COMMUTATIVE = {K.add, K.mul}


def _as_rows(a: np.ndarray, row: np.ndarray):
    """`a` as a 2-D batch of rows and `row` as one flat row, when `row` is a single
    row repeated over `a`'s leading dims (a bias added to a batch); else None."""
    shape = _row_of(row.shape, a.shape)
    if (shape is None or a.size == 0 or not a.flags.c_contiguous
            or not row.flags.c_contiguous):
        return None
    batch = a if a.ndim == 2 and len(shape) == 1 else a.reshape(-1, row.size)
    return batch, row if row.ndim == 1 else row.reshape(-1)


def _quietly(ufunc):
    """numpy's `ufunc(x, out)` without numpy's warnings about overflow, log(0) or
    log(-1): PyTorch gives inf and nan silently. (Each thread sets its own error
    state, so this goes inside what each core runs.)"""
    def run(x: np.ndarray, out: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            ufunc(x, out=out)

    return run


def _sigmoid_in_passes(x: np.ndarray, out: np.ndarray) -> None:
    """1 / (1 + exp(-x)) as four vectorised passes over `out`. Where exp(-x)
    overflows to inf the result is the right 0, so no branch is needed."""
    with np.errstate(all="ignore"):
        np.negative(x, out=out)
        np.exp(out, out=out)
        np.add(out, 1, out=out)
        np.reciprocal(out, out=out)


def _sin_backward_in_passes(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """grad * cos(x), in two vectorised passes (the same two roundings as the kernel)."""
    with np.errstate(all="ignore"):
        np.cos(x, out=out)
        np.multiply(grad, out, out=out)


def _cos_backward_in_passes(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """-grad * sin(x), in vectorised passes (negating is exact, so its place does not
    matter)."""
    with np.errstate(all="ignore"):
        np.sin(x, out=out)
        np.multiply(grad, out, out=out)
        np.negative(out, out=out)


# numba calls the C library once per element for these (the pip build of llvmlite
# has no vector math library), numpy's ufuncs run several elements per instruction:
# 3-12x faster on long float arrays. Short arrays keep the numba kernel, whose call
# costs less. As in PyTorch, whose vectorised loops and scalar tails differ the
# same way, a result can then differ in its last bits with the array's length.
VECTORISED = {K.exp: _quietly(np.exp), K.log: _quietly(np.log), K.sin: _quietly(np.sin),
              K.cos: _quietly(np.cos), K.tanh: _quietly(np.tanh), K.sigmoid: _sigmoid_in_passes}
# The same for backward kernels of (grad, x) that call the C library per element.
VECTORISED_BACKWARD = {K.sin_backward: _sin_backward_in_passes,
                       K.cos_backward: _cos_backward_in_passes}
VECTORISED_MIN = 4096


def unary_into(kernel, x: np.ndarray, out: np.ndarray) -> None:
    """Run a one-input kernel from flat `x` into flat `out` (which may be `x`)."""
    n = out.size
    if n >= VECTORISED_MIN:
        kernel = VECTORISED.get(kernel, kernel)
    if n < PARALLEL_MIN:  # small: call the kernel directly (no packing of args)
        kernel(x, out)
    else:
        run_kernel(kernel, x, out)


def unary(kernel, x: np.ndarray) -> np.ndarray:
    """Run a one-input kernel into a fresh array of the same shape and dtype."""
    if x.ndim == 1:
        out = np.empty(x.size, x.dtype)
        if out.size < VECTORISED_MIN:  # short: straight to the kernel
            kernel(x, out)
        else:
            unary_into(kernel, x, out)
        return out
    if x.flags.c_contiguous:  # (the usual case, spelled out)
        out = np.empty(x.shape, x.dtype)
        unary_into(kernel, x.ravel(), out.ravel())
        return out
    out, flat_out, (flat_x,) = fresh_result(x.shape, x.dtype, x)  # (`x.t().exp()` is
    unary_into(kernel, flat_x, flat_out)                         # transposed too)
    return out


def binary(kernel, a: np.ndarray, b: np.ndarray, out_dtype) -> np.ndarray:
    """Run a two-input kernel, broadcasting first (the kernels see equal-length
    flat arrays). The result is laid out as PyTorch lays it out (`result_order`)."""
    if a.dtype != out_dtype:
        a = a.astype(out_dtype)
    if b.dtype != out_dtype:
        b = b.astype(out_dtype)
    shape = a.shape
    if shape == b.shape and a.flags.c_contiguous and b.flags.c_contiguous:
        # The common case: nothing to broadcast, both already flat in memory.
        if len(shape) == 1:
            out = flat_out = np.empty(a.size, out_dtype)
        else:  # (flat views: the result owns its memory)
            out = np.empty(shape, out_dtype)
            a, b, flat_out = a.ravel(), b.ravel(), out.ravel()
        if out.size < PARALLEL_MIN:
            kernel(a, b, flat_out)
        else:
            run_kernel(kernel, a, b, flat_out)
        return out
    if (len(shape) == 2 and b.ndim == 1 and shape[1] == b.shape[0] and shape[0]
            and a.flags.c_contiguous and b.flags.c_contiguous and kernel in ROW_FORMS):
        # The next most common: a bias for a batch of rows (`x @ w.t() + b`).
        out = np.empty(shape, out_dtype)
        ROW_FORMS[kernel](a, b, out)
        return out
    if a.shape != b.shape:
        shape = broadcast_shape(a.shape, b.shape)
    if not (a.flags.c_contiguous and b.flags.c_contiguous) and (
            layout_matters(a) or layout_matters(b)):
        order = result_order(shape, a, b)
        if order is not None:  # laid out as the operands are: `x.t() + y` is transposed
            out = empty_in_order(shape, out_dtype, order)
            _binary_into(kernel, np.broadcast_to(a, shape).transpose(order),
                         np.broadcast_to(b, shape).transpose(order), out.transpose(order))
            return out
    out = np.empty(shape, out_dtype)
    _binary_into(kernel, a, b, out)
    return out


def _binary_into(kernel, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """`binary`'s work beyond its common case: `a` and `b` broadcast to the shape of
    `out`, a fresh row-major array."""
    shape = out.shape
    if a.shape != b.shape:
        row_form = ROW_FORMS.get(kernel)
        if row_form is not None:
            batch = _as_rows(a, b)
            if batch is None and kernel in COMMUTATIVE:
                batch = _as_rows(b, a)
            if batch is not None:
                rows = batch[0].shape
                row_form(*batch, out if out.shape == rows else out.reshape(rows))
                return
        ufunc = EXACT_UFUNCS.get(kernel)
        if ufunc is not None and out.dtype.kind == "f":
            # Any other broadcast: numpy broadcasts without copying the stretched
            # operand out in full. One IEEE + - * per element is exactly rounded,
            # so the result is bit-identical to the kernel's. (Quietly: PyTorch gives
            # inf and nan without numpy's overflow and invalid-value warnings.)
            with np.errstate(all="ignore"):
                ufunc(a, b, out=out)
            return
        a = np.broadcast_to(a, shape)
        b = np.broadcast_to(b, shape)
    scalar_form = SCALAR_FORMS.get(kernel)
    if scalar_form is not None:
        # One side is a single value spread out: use it as a scalar, never copy it.
        if _broadcast_scalar(a):
            a, b = b, a
        if _broadcast_scalar(b):
            run_kernel(scalar_form, flat(a), b.reshape(-1)[0], out.ravel())
            return
    run_kernel(kernel, flat(a), flat(b), out.ravel())


def backward2(kernel, grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A fused backward kernel of (grad, saved) with grad's shape."""
    shape = grad.shape
    if x.shape != shape:
        x = np.broadcast_to(x, shape)
    dtype = grad.dtype
    if x.dtype is not dtype:
        x = x.astype(dtype)
    n = grad.size
    if len(shape) == 1:
        out = flat_out = np.empty(n, dtype)
        if n < VECTORISED_MIN:  # short and flat: straight to the kernel
            kernel(grad, x, out)
            return out
        flat_grad, flat_x = grad, x
    elif grad.flags.c_contiguous and x.flags.c_contiguous:  # (the usual case, spelled out)
        out = np.empty(shape, dtype)
        flat_out, flat_grad, flat_x = out.ravel(), grad.ravel(), x.ravel()
    else:  # laid out as the operands are, like the forward results
        out, flat_out, (flat_grad, flat_x) = fresh_result(shape, dtype, grad, x)
    if n >= VECTORISED_MIN:
        kernel = VECTORISED_BACKWARD.get(kernel, kernel)
    if n < PARALLEL_MIN:
        kernel(flat_grad, flat_x, flat_out)
    else:
        run_kernel(kernel, flat_grad, flat_x, flat_out)
    return out


def scalar_of(value, dtype) -> np.generic | float:
    """A Python number as a numpy scalar of the computation dtype, so kernels do
    float32 arithmetic in float32, as PyTorch does (a Python float already is a
    float64)."""
    if dtype is float64 and type(value) is float:
        return value
    return dtype.np.type(value)

