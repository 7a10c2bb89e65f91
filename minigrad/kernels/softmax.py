"""softmax and log_softmax of float64 and float32 values, and their gradients, computed in
the order and with the exp and log of PyTorch's CPU kernels (aten/src/ATen/native/cpu/
SoftMaxKernel.cpp), so that the results agree with PyTorch's bit for bit.

Four things fix the bits:

* exp and log: PyTorch's AVX2 and AVX-512 builds call SLEEF (`sleef.py` for float64,
  `sleef_float.py` for float32) on whole vectors; its portable build, and the scalar
  tail loops of its kernels along other dims, call the C library (`math.exp`, which
  numba compiles to a call of the C library's exp, or expf for a float32).
  `use_sleef=False` is the portable build.
* the order of the sums along the dim: the kernels along the LAST dim add a row in
  `lanes` lanes (the values in one vector: 64 bytes with AVX-512, else 32, so 8 or 4
  doubles, 16 or 8 floats) and then add the lanes together; see `lane_sum`. The
  kernels along any other dim add each column from top to bottom, one value at a time.
* how the lanes are added together (`tree`): one after the other, except for float32
  in the AVX2 and AVX-512 builds, which fold the vector in halves.
* fused multiply-adds (`fused`): where PyTorch's AVX2 and AVX-512 builds compute
  `c - a * b` or `acc + a * b` with one rounding.

Every kernel is compiled once per element type: its scalars are made with
`x.dtype.type`, so float32 values are computed in float32 throughout.

Every kernel works on a flat C-ordered array viewed as (outer, dim, inner), `inner`
being 1 for the last dim; the `vector` masks say which columns PyTorch's kernels along
another dim compute with whole vectors (SLEEF) rather than in their scalar tails.
"""

from __future__ import annotations

import math

import numpy as np
from numba import config, njit, types
from numba.extending import overload

from . import sleef, sleef_float
from .fused import fma, mul_add

BLOCK_BYTES = 128 * 1024  # the column block the kernels along other dims work in


# -- SLEEF's exp and log for the element type (float32 or float64) -------------------------


def _sleef_exp(x):
    """SLEEF's exp of a float32 or a float64 (in compiled code, the overload below)."""
    return sleef_float.exp(x) if isinstance(x, np.float32) else sleef.exp(x)


def _sleef_log(x):
    """SLEEF's log of a float32 or a float64."""
    return sleef_float.log(x) if isinstance(x, np.float32) else sleef.log(x)


if not config.DISABLE_JIT:

    @overload(_sleef_exp)
    def _sleef_exp_typed(x):
        if x == types.float32:
            return lambda x: sleef_float.exp(x)
        return lambda x: sleef.exp(x)

    @overload(_sleef_log)
    def _sleef_log_typed(x):
        if x == types.float32:
            return lambda x: sleef_float.log(x)
        return lambda x: sleef.log(x)


@njit(cache=True, nogil=True)
def _exp(x, use_sleef):
    """exp(x): SLEEF's, or the C library's."""
    return _sleef_exp(x) if use_sleef else math.exp(x)


@njit(cache=True, nogil=True, inline="always")
def _exp_all(v, out, use_sleef):
    """out = exp(v), value by value, over whole flat arrays (one long loop per exp, so
    that the compiler can vectorise it: rows are often shorter than a vector)."""
    if use_sleef:
        for j in range(v.size):
            out[j] = _sleef_exp(v[j])
    else:
        for j in range(v.size):
            out[j] = math.exp(v[j])


@njit(cache=True, nogil=True)
def _log(x, use_sleef):
    """log(x): SLEEF's, or the C library's."""
    return _sleef_log(x) if use_sleef else math.log(x)


@njit(cache=True, nogil=True, inline="always")
def _maximum(a, b):
    """PyTorch's vectorised maximum: NaN if either is NaN, else the larger (b when
    they are equal, so max(0.0, -0.0) is -0.0)."""
    if a != a or b != b:
        return a + b  # (a NaN of their type)
    return a if a > b else b


@njit(cache=True, nogil=True, inline="always")
def _fold(acc, used, tree, is_max):
    """The lanes acc[:used] combined into one value, as PyTorch's `vec_reduce_all`
    does: lane 0 + lane 1 + lane 2 + ..., in that order; or, when `tree` (float32 in
    the AVX2 and AVX-512 builds, a full vector), folded in halves: lane k + lane
    k + lanes/2, then the same on the first half, down to one lane."""
    if tree and used == acc.size:
        half = used // 2
        while half:
            for k in range(half):
                acc[k] = _maximum(acc[k], acc[k + half]) if is_max else acc[k] + acc[k + half]
            half //= 2
        return acc[0]
    total = acc[0]
    for k in range(1, used):
        total = _maximum(total, acc[k]) if is_max else total + acc[k]
    return total


@njit(cache=True, nogil=True, inline="always")
def lane_sum(v, start, n, acc, tree):
    """v[start:start+n] added as PyTorch's `vec::reduce_all` adds, in the lanes of
    `acc` (scratch space, one vector): with 4 lanes, lane k sums the values k, k+4,
    k+8, ...; then the lanes are added together (`_fold`)."""
    lanes = acc.size
    used = min(n, lanes)
    for k in range(used):
        acc[k] = v[start + k]
    first, end = start + used, start + n
    while first < end:  # one vector at a time (the last may be partial)
        for k in range(min(lanes, end - first)):
            acc[k] += v[first + k]
        first += lanes
    return _fold(acc, used, tree, False)


@njit(cache=True, nogil=True, inline="always")
def _lane_max(v, start, n, acc, tree):
    """The largest of v[start:start+n], found in lanes as `lane_sum` adds."""
    lanes = acc.size
    used = min(n, lanes)
    for k in range(used):
        acc[k] = v[start + k]
    first, end = start + used, start + n
    while first < end:
        for k in range(min(lanes, end - first)):
            acc[k] = _maximum(acc[k], v[first + k])
        first += lanes
    return _fold(acc, used, tree, True)


# -- along the last dim -----------------------------------------------------------------


@njit(cache=True, nogil=True)
def softmax_lastdim(x, out, rows, n, lanes, use_sleef, tree):
    """exp(x - max) times the reciprocal of its sum, row by row."""
    acc = np.empty(lanes, x.dtype)
    one = x.dtype.type(1)
    for r in range(rows):  # out = x - max, then exp(out) in one loop
        start = r * n
        top = _lane_max(x, start, n, acc, tree)
        for j in range(start, start + n):
            out[j] = x[j] - top
    _exp_all(out, out, use_sleef)
    for r in range(rows):
        start = r * n
        scale = one / lane_sum(out, start, n, acc, tree)
        for j in range(start, start + n):
            out[j] *= scale


@njit(cache=True, nogil=True)
def log_softmax_lastdim(x, out, rows, n, lanes, use_sleef, tree):
    """x - max - log(sum(exp(x - max))), row by row (the exps go through `out`; the
    logs of all the rows' sums are taken in one loop, as PyTorch takes them)."""
    acc = np.empty(lanes, x.dtype)
    tops, logs = np.empty(rows, x.dtype), np.empty(rows, x.dtype)
    for r in range(rows):  # out = x - max, then exp(out) in one loop
        start = r * n
        tops[r] = _lane_max(x, start, n, acc, tree)
        for j in range(start, start + n):
            out[j] = x[j] - tops[r]
    _exp_all(out, out, use_sleef)
    for r in range(rows):
        logs[r] = lane_sum(out, r * n, n, acc, tree)
    if use_sleef:
        for r in range(rows):
            logs[r] = _sleef_log(logs[r])
    else:
        for r in range(rows):
            logs[r] = math.log(logs[r])
    for r in range(rows):
        for j in range(r * n, (r + 1) * n):
            out[j] = x[j] - tops[r] - logs[r]


@njit(cache=True, nogil=True, inline="always")
def _lane_dot(g, y, start, n, acc, tree, fused_tail):
    """sum(g * y) over g[start:start+n], y[start:start+n], as PyTorch's
    `vec::map2_reduce_all` adds: in lanes, as `lane_sum`, each product rounded before
    it is added; except that its float32 AVX2 and AVX-512 builds fuse the product and
    the sum in the last, partial vector (`fused_tail`)."""
    lanes = acc.size
    used = min(n, lanes)
    for k in range(used):
        acc[k] = g[start + k] * y[start + k]
    first, end = start + used, start + n
    while first < end:
        width = min(lanes, end - first)
        for k in range(width):
            acc[k] = mul_add(g[first + k], y[first + k], acc[k], fused_tail and width < lanes)
        first += lanes
    return _fold(acc, used, tree, False)


@njit(cache=True, nogil=True)
def softmax_backward_lastdim(g, y, out, rows, n, lanes, tree, fused_tail):
    """(g - sum(g * y)) * y, row by row (see `_lane_dot` for the sum)."""
    acc = np.empty(lanes, out.dtype)
    for r in range(rows):
        start = r * n
        total = _lane_dot(g, y, start, n, acc, tree, fused_tail)
        for j in range(start, start + n):
            out[j] = (g[j] - total) * y[j]


@njit(cache=True, nogil=True)
def log_softmax_backward_lastdim(g, y, out, rows, n, lanes, use_sleef, fused, tree):
    """g - exp(y) * sum(g), row by row."""
    acc = np.empty(lanes, g.dtype)
    _exp_all(y, out, use_sleef)
    for r in range(rows):
        start = r * n
        total = lane_sum(g, start, n, acc, tree)
        if fused:
            for j in range(start, start + n):
                out[j] = fma(-out[j], total, g[j])
        else:
            for j in range(start, start + n):
                out[j] = g[j] - out[j] * total


# -- along any other dim: each column (outer, :, inner) on its own ------------------------


@njit(cache=True, nogil=True)
def vector_columns(count, inner, lanes, threads):
    """Which of the `count` = outer * inner columns PyTorch's softmax kernel along a
    non-last dim computes `lanes` at a time (True), and which one by one in its scalar
    tail loop, whose exp is the C library's. The loop over the columns is split evenly
    across the `threads` threads (`at::parallel_for`; PyTorch 2.13 splits even a few
    columns), and each thread's share ends in a tail, so the split counts."""
    vector = np.zeros(count, np.bool_)
    parts = max(min(threads, count), 1)
    share = -(-count // parts)
    for p in range(parts):
        idx, end = p * share, min(count, (p + 1) * share)
        while idx < end:
            in_row = idx % inner
            if in_row + lanes <= inner and idx + lanes <= end:
                vector[idx:idx + lanes] = True
                idx += lanes
            elif idx + lanes > end:
                idx = end
            else:
                idx += inner - in_row
    return vector


@njit(cache=True, nogil=True)
def block_vector_columns(inner, dim_size, lanes, itemsize):
    """Which inner positions PyTorch's log_softmax kernels along a non-last dim (forward
    and backward) compute `lanes` at a time: they cut the inner dim into blocks of
    about 128 KB (of `itemsize`-byte values), and the last size % lanes positions of a
    block go through the scalar tail."""
    block = max(BLOCK_BYTES // dim_size // itemsize, lanes) // lanes * lanes
    vector = np.zeros(inner, np.bool_)
    for first in range(0, inner, block):
        size = min(block, inner - first)
        vector[first:first + size - size % lanes] = True
    return vector


@njit(cache=True, nogil=True)
def softmax_columns(x, out, outer, dim_size, inner, vector, use_sleef):
    """exp(x - max) / sum, each column added from top to bottom."""
    for o in range(outer):
        for i in range(inner):
            base = o * dim_size * inner + i
            vec = use_sleef and vector[o * inner + i]
            top = x[base]
            for d in range(1, dim_size):
                top = _maximum(top, x[base + d * inner])
            total = x.dtype.type(0)
            for d in range(dim_size):
                e = _exp(x[base + d * inner] - top, vec)
                out[base + d * inner] = e
                total += e
            for d in range(dim_size):
                out[base + d * inner] /= total


@njit(cache=True, nogil=True)
def log_softmax_columns(x, out, outer, dim_size, inner, vector, use_sleef):
    """x - max - log(sum(exp(x - max))), each column added from top to bottom (the max
    skips NaN, as `data > max ? data : max` does)."""
    for o in range(outer):
        for i in range(inner):
            base = o * dim_size * inner + i
            top = x.dtype.type(-np.inf)
            for d in range(dim_size):
                v = x[base + d * inner]
                top = v if v > top else top
            total = x.dtype.type(0)
            for d in range(dim_size):
                total += _exp(x[base + d * inner] - top, use_sleef and vector[i])
            log_total = _log(total, use_sleef)
            for d in range(dim_size):
                out[base + d * inner] = x[base + d * inner] - top - log_total


@njit(cache=True, nogil=True)
def softmax_backward_columns(g, y, out, outer, dim_size, inner, fused):
    """y * (g - sum(g * y)), each column's sum from top to bottom."""
    for o in range(outer):
        for i in range(inner):
            base = o * dim_size * inner + i
            total = out.dtype.type(0)
            for d in range(dim_size):
                total = mul_add(g[base + d * inner], y[base + d * inner], total, fused)
            for d in range(dim_size):
                k = base + d * inner
                out[k] = y[k] * (g[k] - total)


@njit(cache=True, nogil=True)
def log_softmax_backward_columns(g, y, out, outer, dim_size, inner, vector, use_sleef,
                                 fused):
    """g - exp(y) * sum(g), each column's sum from top to bottom."""
    for o in range(outer):
        for i in range(inner):
            base = o * dim_size * inner + i
            total = out.dtype.type(0)
            for d in range(dim_size):
                total += g[base + d * inner]
            for d in range(dim_size):
                k = base + d * inner
                out[k] = mul_add(-_exp(y[k], use_sleef and vector[i]), total, g[k], fused)
