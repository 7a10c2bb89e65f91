"""Float sums: any dims of any layout brought to one of the two sum kernels
(`kernels/sums.py`): the summed elements of each output as a row (`sum_rows`), or,
for a row-major array summed over its leading dims (a bias's gradient), as columns
(`sum_columns`). Other dtypes sum exactly with numpy.

Within the float policy (README, "How alike, exactly"): a sum is within a few ulps of
its terms' magnitudes of PyTorch's, not its bits, since PyTorch's order depends on the
processor's vector width and its thread count.
"""

from __future__ import annotations

import numpy as np

from ..kernels.sums import RUN, RUN_OF_ROWS, levels, sum_columns, sum_rows
from .layout import odd_unit_stride

# Float32 arrays shorter than this are summed in float64 and so are the element-wise ops
# of `arrays.dispatch.IN_FLOAT64`: one kernel compiled for both dtypes. The lessons'
# tensors are far shorter; past it, the copies to float64 and back cost more than the
# op (a float32 MLP step of 256 x 10 outputs was 10 % slower at 4096).
IN_FLOAT64_MAX = 1024

# PyTorch's at::internal::GRAIN_SIZE: below this many elements an op runs on one thread.
GRAIN_SIZE = 32768


def add_up(a: np.ndarray, dims: tuple, keepdim: bool = False, dtype=None) -> np.ndarray:
    """`a` summed over `dims` as PyTorch sums: float32 and float64 with minigrad's sum
    kernels, in a's dtype; other dtypes exactly with numpy (in `dtype`, if given)."""
    if a.dtype.kind == "f" and a.itemsize in (4, 8):
        return float_sum(a, dims, keepdim)
    total = np.asarray(a.sum(axis=dims, keepdims=keepdim, dtype=dtype))
    if total.flags.c_contiguous and not odd_unit_stride(total):
        return total
    # (row-major, as PyTorch allocates a reduction's result, a size-1 dim's stride
    # too: numpy's follows a's layout)
    out = np.empty(total.shape, total.dtype)
    out[...] = total
    return out


def float_sum(a: np.ndarray, dims: tuple, keepdim: bool = False) -> np.ndarray:
    """`a` (float32 or float64) summed over `dims`: a new array of a's dtype, shaped as
    numpy's `a.sum(axis=dims, keepdims=keepdim)`."""
    if a.dtype == np.float32 and a.size < IN_FLOAT64_MAX:
        # The kernels add float32 terms in float64 anyway: summed as float64 (exact
        # copies), the total rounds to the same float32. The kernels then compile once
        # for both dtypes (see `arrays.dispatch.IN_FLOAT64`).
        total = float_sum(a.astype(np.float64), dims, keepdim)
        with np.errstate(over="ignore"):  # (beyond float32's range: inf, silently)
            return total.astype(np.float32)
    if not a.flags.writeable:  # (a read-only array would compile the kernels again)
        a = np.array(a)
    if len(dims) == a.ndim and a.flags.c_contiguous:  # (the commonest: a loss's sum)
        out = np.empty((1,) * a.ndim if keepdim else (), a.dtype)
        sum_rows(a.reshape(-1), 1, a.size, out.reshape(-1), np.empty(levels(-(-a.size // RUN))))
        return out
    dims = tuple(sorted(dims))
    kept = [d for d in range(a.ndim) if d not in dims]
    shape = tuple(1 if d in dims else n for d, n in enumerate(a.shape)) if keepdim \
        else tuple(a.shape[d] for d in kept)
    out = np.empty(shape, a.dtype)
    flat_out = out.reshape(-1)
    outputs = flat_out.size
    count = a.size // outputs if outputs else 0
    if outputs == 0:
        return out
    if a.flags.c_contiguous and dims == tuple(range(len(dims))) and dims \
            and outputs > 1:  # leading dims of a row-major array: columns
        held = np.zeros((levels(-(-count // RUN_OF_ROWS)), outputs))
        sum_columns(a.reshape(-1), count, outputs, flat_out, held, np.empty(outputs))
        return out
    if not (a.flags.c_contiguous and dims == tuple(range(a.ndim - len(dims), a.ndim))):
        # the kept dims first, the summed ones last: each output's terms one row
        a = np.ascontiguousarray(a.transpose(kept + list(dims)))
    sum_rows(a.reshape(-1), outputs, count, flat_out, np.empty(levels(-(-count // RUN))))
    return out


def whole_sum(a: np.ndarray) -> float | None:
    """The sum of every element of a float32 or float64 array as a Python float, or
    None for an empty array (whose mean is nan, not a division by zero)."""
    return float(float_sum(a, tuple(range(a.ndim)))) if a.size else None


def column_sums(a: np.ndarray) -> np.ndarray:
    """A float matrix summed over its rows, keeping the dim (a bias's gradient)."""
    return float_sum(a, (0,), keepdim=True)
