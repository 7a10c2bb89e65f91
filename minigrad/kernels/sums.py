"""Float sums as plain loops.

Every total is kept in float64 (a float32 array's too, so its sum rounds to float32
once, at the end), and a long sum is added in short runs, each run totalled on its own
before the runs' totals are added pairwise: a rounding error then grows with the run
length and the logarithm of the number of runs, not with the whole length, and stays
a few ulps of the terms' magnitudes, as the README's float policy asks. (PyTorch adds in
another order, chosen by its vector width and thread count; neither order is "the"
sum, and minigrad does not copy PyTorch's.)

Two kernels cover every sum (`arrays/summing.py` brings a sum to one of their
shapes): `sum_rows`, each row of a matrix to one number, and `sum_columns`, each
column of a row-major matrix (a bias's gradient: a batch of rows added into one).
"""

from __future__ import annotations

import numba
import numpy as np

RUN = 64  # elements added up before their total joins the others
RUN_OF_ROWS = 16  # rows added up before their totals join the others (`sum_columns`)
LEVELS = 48  # room for 2**47 runs' totals


@numba.njit(cache=True)
def _run_sum(x, first, count, stride, held):
    """The sum of `count` elements of the flat array `x` from `first`, `stride` apart.
    The runs' totals are added pairwise: `held[k]` holds the sum of 2**k runs until
    another such sum arrives, as a binary counter holds its carries."""
    for level in range(LEVELS):
        held[level] = 0.0
    for n, start in enumerate(range(0, count, RUN)):
        # four running sums, so the additions overlap rather than wait for each other
        s0 = s1 = s2 = s3 = 0.0
        stop = min(start + RUN, count)
        k = start
        while k + 4 <= stop:
            i = first + k * stride
            s0 += x[i]
            s1 += x[i + stride]
            s2 += x[i + 2 * stride]
            s3 += x[i + 3 * stride]
            k += 4
        while k < stop:
            s0 += x[first + k * stride]
            k += 1
        total = (s0 + s1) + (s2 + s3)
        level = 0
        while n >> level & 1:  # (the n-th run completes a pair at each 1 bit of n)
            total += held[level]
            held[level] = 0.0
            level += 1
        held[level] = total
    total = 0.0
    for level in range(LEVELS):
        total += held[level]
    return total


@numba.njit(cache=True)
def sum_rows(x, rows, row_stride, count, stride, out):
    """out[r] = the sum of row r, for `rows` rows of `count` elements in the flat
    array `x`: row r starts at r * row_stride, its elements `stride` apart."""
    held = np.empty(LEVELS)
    for r in range(rows):
        out[r] = _run_sum(x, r * row_stride, count, stride, held)


@numba.njit(cache=True)
def sum_columns(x, rows, cols, out):
    """out[j] = the sum of column j of the row-major matrix `x` (flat, rows x cols):
    rows added one after another into float64 totals (along a row, so the loop
    vectorises), `RUN_OF_ROWS` rows at a time, the runs' totals pairwise as in
    `_run_sum`."""
    # (plain loops, not slice assignments: numba would compile their error messages)
    held = np.zeros((LEVELS, cols))
    run = np.empty(cols)
    for n, start in enumerate(range(0, rows, RUN_OF_ROWS)):
        for j in range(cols):
            run[j] = 0.0
        for r in range(start, min(start + RUN_OF_ROWS, rows)):
            row = r * cols
            for j in range(cols):
                run[j] += x[row + j]
        level = 0
        while n >> level & 1:
            for j in range(cols):
                run[j] += held[level, j]
                held[level, j] = 0.0
            level += 1
        for j in range(cols):
            held[level, j] = run[j]
    for j in range(cols):
        total = 0.0
        for level in range(LEVELS):
            total += held[level, j]
        out[j] = total
