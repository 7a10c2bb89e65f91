"""The reduced negative log-likelihood, summed in PyTorch's order."""

import numpy as np
from numba import njit

# PyTorch adds the batch's losses in a cascade of 8 partial sums: each partial sum
# takes 16 terms (or more, for batches beyond 2**40), then is carried into the next
# one. It is more accurate than one running sum, and minigrad adds in the same order
# so that the float32 total has the same bits.
_LEVELS = 8


@njit(cache=True, error_model="numpy")
def nll_sums(x, target, weight, use_weight, ignore_index):
    """(sum of -weight[t] * x[b, t], sum of weight[t]) over the rows b whose target t
    is not `ignore_index`, as PyTorch's `nll_loss` accumulates them, in x's dtype;
    without `use_weight` every weight is 1 and the total weight is the row count."""
    batch = x.shape[0]
    ceil_log2 = 0
    while (1 << ceil_log2) < batch:
        ceil_log2 += 1
    power = max(4, ceil_log2 // _LEVELS)
    mask = (1 << power) - 1
    loss = np.zeros(_LEVELS, x.dtype)
    wsum = np.zeros(_LEVELS, x.dtype)
    ignored = 0
    for b in range(batch):
        t = target[b]
        if t == ignore_index:
            ignored += 1
            continue
        if use_weight:
            w = weight[t]
            loss[0] -= x[b, t] * w
            wsum[0] += w
        else:
            loss[0] -= x[b, t]
        for j in range(_LEVELS - 1):
            if (b & (mask << (j * power))) != 0:
                break
            wsum[j + 1] += wsum[j]
            loss[j + 1] += loss[j]
            wsum[j] = 0
            loss[j] = 0
    total_loss = x.dtype.type(0)
    total_weight = x.dtype.type(0)
    for j in range(_LEVELS):
        total_loss += loss[j]
        total_weight += wsum[j]
    if not use_weight:
        total_weight = x.dtype.type(batch - ignored)
    return total_loss, total_weight
