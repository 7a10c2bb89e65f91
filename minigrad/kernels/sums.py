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
Their buffers come from the caller: allocating inside a kernel would compile numba's
allocator along with it, seconds of a first run.
"""

from __future__ import annotations

import numba

RUN = 64  # elements added up before their total joins the others
RUN_OF_ROWS = 16  # rows added up before their totals join the others (`sum_columns`)


def levels(runs: int) -> int:
    """How many pairwise levels `runs` runs' totals need (see `sum_rows`)."""
    return max(1, runs.bit_length())


@numba.njit(cache=True)
def sum_rows(x, rows, count, out, held):
    """out[r] = the sum of row r of the row-major matrix `x` (flat, rows x count).
    Each row is added in runs of `RUN`; the runs' totals are added pairwise: `held[k]`
    (float64, `levels(runs)` of them) holds the sum of 2**k runs until another such sum
    arrives, as a binary counter holds its carries."""
    for r in range(rows):
        for level in range(held.size):
            held[level] = 0.0
        n = 0
        end = (r + 1) * count
        for start in range(r * count, end, RUN):
            stop = start + RUN if start + RUN < end else end
            # four running sums, so the additions overlap rather than wait for each other
            s0 = s1 = s2 = s3 = 0.0
            for i in range(start, stop - 3, 4):
                s0 += x[i]
                s1 += x[i + 1]
                s2 += x[i + 2]
                s3 += x[i + 3]
            for i in range(stop - (stop - start) % 4, stop):
                s0 += x[i]
            total = (s0 + s1) + (s2 + s3)
            level = 0
            while n >> level & 1:  # (the n-th run completes a pair at each 1 bit of n)
                total += held[level]
                held[level] = 0.0
                level += 1
            held[level] = total
            n += 1
        total = 0.0
        for level in range(held.size):
            total += held[level]
        out[r] = total


@numba.njit(cache=True)
def sum_columns(x, rows, cols, out, held, run):
    """out[j] = the sum of column j of the row-major matrix `x` (flat, rows x cols):
    rows added one after another into float64 totals (along a row, so the loop
    vectorises), `RUN_OF_ROWS` rows at a time, the runs' totals pairwise as in
    `sum_rows` (`held`: levels(runs) x cols, zeros; `run`: cols, both float64)."""
    n = 0
    for start in range(0, rows, RUN_OF_ROWS):
        stop = start + RUN_OF_ROWS if start + RUN_OF_ROWS < rows else rows
        for j in range(cols):
            run[j] = 0.0
        for r in range(start, stop):
            row = x[r * cols:(r + 1) * cols]  # (a slice: its index is known >= 0, so
            for j in range(cols):              # the loop vectorises)
                run[j] += row[j]
        level = 0
        while n >> level & 1:
            for j in range(cols):
                run[j] += held[level, j]
                held[level, j] = 0.0
            level += 1
        for j in range(cols):
            held[level, j] = run[j]
        n += 1
    for j in range(cols):
        total = 0.0
        for level in range(held.shape[0]):
            total += held[level, j]
        out[j] = total
