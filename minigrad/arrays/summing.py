"""Float sums in PyTorch's order, so they agree with PyTorch's bit for bit.

The order has two parts. The kernel (kernels/cascade.py) adds one 2-D block of
numbers the way PyTorch's `cascade_sum` does. This module decides, as PyTorch's
TensorIterator does, which blocks the kernel sees:

1. The dims are ordered fastest first: summed dims before kept ones; the summed dims
   by the input's strides, the kept ones by the output's (a fresh row-major array).
   Dims of size 1 play no part.
2. Neighbouring dims that walk memory as one (for the input and the output alike)
   are merged, so a contiguous sum over trailing dims is one long run.
3. The first two dims form the kernel's block; the others are counted through, and
   each block's sum is added to the output in that order.
4. Above 32768 elements PyTorch splits the work between its threads, and that
   changes the order: a sum to a single number adds each thread's share separately
   and then the shares; a sum to many numbers splits the outputs between threads,
   which can change which outputs the kernel treats as a block of columns. minigrad
   follows the split PyTorch makes with its default number of threads
   (`_cpu.THREADS`); after `torch.set_num_threads(n)` PyTorch's large sums can
   differ from minigrad's in the last bits.
"""

from __future__ import annotations

import numpy as np

from .._cpu import SUM_VECTOR_BYTES, THREADS
from ..kernels.cascade import column_cascade, sum_2d, sum_contiguous, sum_strided
from .layout import reorder_dims

# PyTorch's at::internal::GRAIN_SIZE: below this many elements an op runs on one thread.
GRAIN_SIZE = 32768


def add_up(a: np.ndarray, dims: tuple, keepdim: bool = False, dtype=None) -> np.ndarray:
    """`a` summed over `dims` as PyTorch sums: float32 and float64 in PyTorch's order
    (`cascade_sum`), other dtypes exactly with numpy (in `dtype`, if given)."""
    if a.dtype.kind == "f" and a.itemsize in (4, 8):
        return cascade_sum(a, dims, keepdim)
    return np.asarray(a.sum(axis=dims, keepdims=keepdim, dtype=dtype))


def cascade_sum(a: np.ndarray, dims: tuple, keepdim: bool = False) -> np.ndarray:
    """`a` (float32 or float64) summed over `dims` in PyTorch's order: a new array of
    a's dtype, shaped as numpy's `a.sum(axis=dims, keepdims=keepdim)`."""
    if len(dims) == a.ndim:  # (the shapes of the common sums, without a loop)
        total = whole_sum(a)
        if total is not None:
            out = np.array(total, a.dtype)
            return out.reshape((1,) * a.ndim) if keepdim else out
        kept_shape = (1,) * a.ndim
        shape = kept_shape if keepdim else ()
    elif a.ndim == 2:
        rows, cols = a.shape
        kept_shape = (1, cols) if dims == (0,) else (rows, 1)
        shape = kept_shape if keepdim else (cols,) if dims == (0,) else (rows,)
    else:
        kept_shape = tuple(1 if d in dims else n for d, n in enumerate(a.shape))
        shape = kept_shape if keepdim else tuple(n for d, n in enumerate(a.shape)
                                                 if d not in dims)
    out = np.zeros(shape, a.dtype)  # (PyTorch too fills its output with 0, then adds)
    if a.size and not _common_case(a, dims, out):
        _sum_into(a, dims, out.reshape(kept_shape))
    return out


def whole_sum(a: np.ndarray) -> float | None:
    """The sum of every element of a float32 or float64 array in PyTorch's order, as
    a Python float (which holds a float32 sum exactly), for the commonest sum there
    is: a contiguous array of two or more elements, small enough for one thread.
    None for anything else (`cascade_sum` then walks the general way)."""
    if (a.flags.c_contiguous and 2 <= a.size and (a.size < GRAIN_SIZE or THREADS == 1)
            and a.dtype.kind == "f" and a.itemsize in (4, 8)):
        return float(sum_contiguous(a, SUM_VECTOR_BYTES // a.itemsize))
    return None


def _common_case(a: np.ndarray, dims: tuple, out: np.ndarray) -> bool:
    """The sums most programs make, handed straight to the kernel with the blocks
    `_sum_into` would work out for them (a loss's mean, a bias's gradient: a few
    microseconds each, against about twenty for the general walk): a contiguous
    array summed whole (below the grain size), or a matrix over its rows or columns.
    Returns False for anything else."""
    if not a.flags.c_contiguous or a.size < 2:
        return False
    lanes = SUM_VECTOR_BYTES // a.itemsize
    flat, flat_out = a.reshape(-1), out.reshape(-1)
    if len(dims) == a.ndim:  # one run of every element
        if a.size >= GRAIN_SIZE and THREADS > 1:
            return False  # (split between threads: `_two_pass`)
        sum_2d(flat, 0, a.size, 1, 1, 0, flat_out, 0, 0, 0, lanes)
        return True
    if a.ndim == 2 and len(dims) == 1 and 1 not in a.shape:
        rows, cols = a.shape
        if dims == (0,):  # down the columns
            _add_columns(a, flat_out)
        else:  # along each row: every row's sum is its own, however threads share them
            sum_2d(flat, 0, cols, rows, 1, cols, flat_out, 0, 0, 1, lanes)
        return True
    return False


def column_sums(a: np.ndarray) -> np.ndarray:
    """A float matrix summed over its rows, keeping the dim: `cascade_sum(a, (0,),
    keepdim=True)` with less Python on the way (a bias's gradient, every training
    step)."""
    rows, cols = a.shape
    if not a.flags.c_contiguous or a.dtype.itemsize not in (4, 8) or rows < 2 or cols < 2:
        return cascade_sum(a, (0,), keepdim=True)
    out = np.zeros((1, cols), a.dtype)
    _add_columns(a, out.reshape(-1))
    return out


def _add_columns(a: np.ndarray, flat_out: np.ndarray) -> None:
    """Add the sums down the columns of `a` (C-contiguous, 2-D) into `flat_out`: the
    summed dim first, the columns next to each other. Above the grain size each
    thread sums a range of the columns, which decides where the kernel's blocks of
    columns start (as in `_split_outputs`); the ranges of a width are worked out once."""
    rows, cols = a.shape
    lanes = SUM_VECTOR_BYTES // a.itemsize
    if a.size < GRAIN_SIZE or THREADS == 1:  # (one thread: all the columns in one range)
        column_cascade(a, lanes, flat_out)
        return
    key = (cols, a.itemsize)
    ranges = _COLUMN_RANGES.get(key)
    if ranges is None:
        ranges = _COLUMN_RANGES[key] = tuple(_thread_ranges(cols, 128 // a.itemsize))
    flat = a.reshape(-1)
    for begin, end in ranges:
        sum_2d(flat, begin, rows, end - begin, cols, 1, flat_out, begin, 0, 1, lanes)


_COLUMN_RANGES: dict = {}  # (columns, item size) -> the threads' ranges


def _thread_ranges(n: int, multiple: int) -> list:
    """How PyTorch's `parallel_for` cuts n outputs between its threads: ranges of
    ceil(n / threads), each boundary but the last rounded down to `multiple` (128
    bytes' worth where the outputs are contiguous); empty ranges dropped."""
    threads = min(THREADS, n)
    chunk = -(-n // threads)
    ranges = []
    for t in range(threads):
        begin, end = t * chunk, min(n, (t + 1) * chunk)
        if begin >= end:
            continue
        begin -= begin % multiple
        if end != n:
            end -= end % multiple
        if begin != end:
            ranges.append((begin, end))
    return ranges


def _sum_into(a: np.ndarray, dims: tuple, out: np.ndarray) -> None:
    """Add a's sums over `dims` into `out` (zeros, a's shape with those dims 1)."""
    item = a.itemsize
    if any(s < 0 or s % item for s in a.strides):  # (never so in PyTorch: a copy)
        a = np.ascontiguousarray(a)
    out_strides = [s // item for s in out.strides]
    # (size, input stride, output stride) per dim, in elements; 0 for summed dims
    iter_dims = [(n, s // item, 0 if d in dims else out_strides[d])
                 for d, (n, s) in enumerate(zip(a.shape, a.strides)) if n != 1]
    iter_dims = _coalesce(_fastest_first(iter_dims[::-1]))
    shape = np.array([n for n, _, _ in iter_dims], np.int64)
    in_strides = np.array([s for _, s, _ in iter_dims], np.int64)
    o_strides = np.array([s for _, _, s in iter_dims], np.int64)
    # The memory from a's first element to its last, as one flat array of elements.
    span = 1 + sum((n - 1) * s for n, s, _ in iter_dims)
    memory = np.lib.stride_tricks.as_strided(a, (span,), (item,), writeable=False)
    flat_out = out.reshape(-1)
    lanes = SUM_VECTOR_BYTES // item
    numel = a.size
    if numel < GRAIN_SIZE or THREADS == 1:
        sum_strided(memory, 0, shape, in_strides, flat_out, 0, o_strides, 0, numel, lanes)
    elif out.size == 1:
        _two_pass(memory, shape, in_strides, o_strides, flat_out, lanes)
    else:
        _split_outputs(memory, shape, in_strides, o_strides, flat_out, lanes, item)


def _fastest_first(iter_dims: list) -> list:
    """PyTorch's `reorder_dimensions`: an insertion sort that moves summed dims to the
    front, and otherwise orders by the output's strides, then the input's (equal
    strides: the smaller dim first); a pair neither operand orders stays put."""
    def should_swap(d0: tuple, d1: tuple) -> int:
        (n0, in0, out0), (n1, in1, out1) = d0, d1
        if (out0 == 0) != (out1 == 0):  # summed dims go first
            return 1 if out1 == 0 else -1
        for s0, s1 in ((out0, out1), (in0, in1)):
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if n0 > n1:
                return 1
        return 0

    return reorder_dims(iter_dims, should_swap)


def _coalesce(iter_dims: list) -> list:
    """PyTorch's `coalesce_dimensions`: merge a dim into the previous one when, for
    the input and the output, stepping past the previous dim's end is one step of it."""
    merged: list = []
    for n, s_in, s_out in iter_dims:
        if merged:
            n0, s0_in, s0_out = merged[-1]
            if n0 * s0_in == s_in and n0 * s0_out == s_out:
                merged[-1] = (n0 * n, s0_in, s0_out)
                continue
        merged.append((n, s_in, s_out))
    return merged


def _two_pass(memory, shape, in_strides, o_strides, flat_out, lanes) -> None:
    """A sum to one number above the grain size: PyTorch's `two_pass_reduction`. The
    elements are cut into one run per thread (counted as the kernel walks them), each
    run summed into that thread's slot of a zeroed buffer; then the buffer is summed."""
    numel = int(np.prod(shape))
    threads = min(THREADS, -(-numel // GRAIN_SIZE)) if numel > GRAIN_SIZE else 1
    chunk = -(-numel // threads)
    slots = np.zeros(THREADS, flat_out.dtype)
    for t in range(threads):
        begin = t * chunk
        if begin < numel:
            sum_strided(memory, 0, shape, in_strides, slots, t, o_strides, begin,
                        min(numel, begin + chunk), lanes)
    one = np.ones(1, np.int64)
    sum_strided(slots, 0, one * THREADS, one, flat_out, 0, one * 0, 0, THREADS, lanes)


def _split_outputs(memory, shape, in_strides, o_strides, flat_out, lanes, item) -> None:
    """A sum to many numbers above the grain size: PyTorch's `parallel_dim_reduction`.
    The outermost kept dim at least as long as the thread count (else the longest) is
    cut into one range per thread, rounded to 128 bytes where the input is contiguous
    along it; each range is walked on its own, as its thread would."""
    dim = shape.size - 1  # (the kept dims are the last ones: summed dims come first)
    for d in range(shape.size - 1, -1, -1):
        if o_strides[d] == 0:
            break
        if shape[d] >= THREADS:
            dim = d
            break
        if shape[d] > shape[dim]:
            dim = d
    multiple = 128 // item if in_strides[dim] == 1 else 1
    for begin, end in _thread_ranges(int(shape[dim]), multiple):
        part = shape.copy()
        part[dim] = end - begin
        sum_strided(memory, begin * in_strides[dim], part, in_strides, flat_out,
                    begin * o_strides[dim], o_strides, 0, int(np.prod(part)), lanes)
