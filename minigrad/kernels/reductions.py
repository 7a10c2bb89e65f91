"""Whole-tensor reductions as plain loops. Reductions along a dimension use numpy."""

import numpy as np
from numba import njit

# Every kernel uses IEEE arithmetic, like PyTorch: 1 / 0 is inf and 0 / 0 is nan
# (numba's default "python" error model raises ZeroDivisionError instead).


# Allowing reassociation lets LLVM keep several partial sums at once (SIMD): the
# float64 total is the same up to rounding, and the loop runs several times faster.
# (Only "reassoc": full fastmath would also assume there are no NaNs or infinities.)
@njit(cache=True, nogil=True, fastmath={"reassoc"}, error_model="numpy")
def sum_all(x):
    """The sum of every element, accumulated in float64 for accuracy."""
    flat = x.ravel()
    total = 0.0
    for i in range(flat.size):
        total += flat[i]
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def sum_rows(a, out):
    """out[j] = a[0, j] + a[1, j] + ...: a bias's gradient, the batch summed away.
    Rows are added in order, as numpy's `a.sum(axis=0)` adds them."""
    for j in range(a.shape[1]):
        out[j] = 0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[j] += a[i, j]


@njit(cache=True, error_model="numpy")
def argmax_all(x):
    """The flat index of the first largest element (NaN counts as largest)."""
    flat = x.ravel()
    best = 0
    for i in range(1, flat.size):
        if np.isnan(flat[best]):
            break
        if flat[i] > flat[best] or np.isnan(flat[i]):
            best = i
    return best


@njit(cache=True, error_model="numpy")
def argmin_all(x):
    """The flat index of the first smallest element (NaN counts as smallest)."""
    flat = x.ravel()
    best = 0
    for i in range(1, flat.size):
        if np.isnan(flat[best]):
            break
        if flat[i] < flat[best] or np.isnan(flat[i]):
            best = i
    return best
