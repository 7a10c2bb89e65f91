"""Whole-tensor arg-reductions as plain loops. Sums: cascade.py."""

import numpy as np
from numba import njit

# Every kernel uses IEEE arithmetic, like PyTorch: 1 / 0 is inf and 0 / 0 is nan
# (numba's default "python" error model raises ZeroDivisionError instead).


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
