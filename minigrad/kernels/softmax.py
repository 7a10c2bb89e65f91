"""softmax and log_softmax, and their gradients, as plain loops along one dim.

Every kernel sees its input as a flat C-ordered array viewed as (outer, n, inner): the
softmax dim holds `n` values, `inner` apart (1 for the last dim), and each of the
outer * inner columns along it is worked on by itself, in three passes: its largest
value, its exps and their sum, then the scaling.

Why subtract the largest value first: exp(x - top) is at most 1, so no exp overflows,
and the answer is unchanged, since the factor exp(-top) cancels between each exp and
their sum. A row holding NaN gives NaN throughout, as in PyTorch.

PyTorch computes exp and log with a vector math library (SLEEF) and adds a row in vector
lanes; these loops call the C library and add in order. The last bits can differ, within
the float policy (README, "How alike, exactly"). A float32 row's sum is kept in float64,
so that a long row loses nothing to it.
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _largest(x, base, n, inner):
    """The largest of the n values x[base], x[base + inner], ...; NaN if one is NaN."""
    top = x[base]
    for d in range(1, n):
        v = x[base + d * inner]
        if v > top or v != v:
            top = v
        if top != top:
            break
    return top


@njit(cache=True, nogil=True)
def softmax(x, out, outer, n, inner):
    """out = exp(x - top) / sum(exp(x - top)) along the dim."""
    for o in range(outer):
        for i in range(inner):
            base = o * n * inner + i
            top = _largest(x, base, n, inner)
            total = 0.0
            for d in range(n):
                k = base + d * inner
                e = math.exp(x[k] - top)
                out[k] = e
                total += e
            for d in range(n):
                k = base + d * inner
                out[k] = out[k] / total


@njit(cache=True, nogil=True)
def log_softmax(x, out, outer, n, inner):
    """out = x - top - log(sum(exp(x - top))) along the dim, in that order: adding top
    to the log first would lose digits when the inputs are large and close."""
    for o in range(outer):
        for i in range(inner):
            base = o * n * inner + i
            top = _largest(x, base, n, inner)
            total = 0.0
            for d in range(n):
                total += math.exp(x[base + d * inner] - top)
            log_total = x.dtype.type(math.log(total))
            for d in range(n):
                k = base + d * inner
                out[k] = x[k] - top - log_total


@njit(cache=True, nogil=True)
def softmax_backward(g, y, out, outer, n, inner):
    """The gradient of softmax from its output y: y * (g - sum(g * y)) along the dim."""
    for o in range(outer):
        for i in range(inner):
            base = o * n * inner + i
            total = 0.0
            for d in range(n):
                k = base + d * inner
                total += g[k] * y[k]
            dot = y.dtype.type(total)
            for d in range(n):
                k = base + d * inner
                out[k] = y[k] * (g[k] - dot)


@njit(cache=True, nogil=True)
def log_softmax_backward(g, y, out, outer, n, inner):
    """The gradient of log_softmax from its output y: g - exp(y) * sum(g) along the dim."""
    for o in range(outer):
        for i in range(inner):
            base = o * n * inner + i
            total = 0.0
            for d in range(n):
                total += g[base + d * inner]
            g_sum = y.dtype.type(total)
            for d in range(n):
                k = base + d * inner
                out[k] = g[k] - math.exp(y[k]) * g_sum
