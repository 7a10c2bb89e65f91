"""Optimizer updates, one fused loop per parameter: no temporary arrays.

Each kernel follows PyTorch's single-tensor algorithm step by step, and the callers
pass every hyper-parameter as a scalar of the parameter's dtype, so float32 updates
are rounded where PyTorch rounds them.
"""

import math

import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy")
def sgd_step(p, g, buf, d, lr, momentum, keep, weight_decay, nesterov, maximize, first):
    """p -= lr * d, where d is the gradient with weight decay and momentum applied.

    `buf` is the momentum buffer (ignored when momentum == 0); on the first step it is
    set to the gradient itself, as PyTorch does. `keep` is 1 - dampening. Every
    intermediate is stored in an array of p's dtype (`d`, `buf`), so a float32 update
    is rounded at the same points as PyTorch's.
    """
    for i in range(p.size):
        d[i] = -g[i] if maximize else g[i]
        if weight_decay != 0:
            d[i] = d[i] + weight_decay * p[i]
        if momentum != 0:
            if first:
                buf[i] = d[i]
            else:
                buf[i] = buf[i] * momentum
                buf[i] = buf[i] + keep * d[i]
            if nesterov:
                d[i] = d[i] + momentum * buf[i]
            else:
                d[i] = buf[i]
        p[i] = p[i] - lr * d[i]


@njit(cache=True, error_model="numpy")
def adam_step(p, g, exp_avg, exp_avg_sq, max_sq, d, t, neg_step_size, bias_correction2_sqrt,
              weight1, beta2, weight2, eps, weight_decay, decay, amsgrad, maximize):
    """One Adam step: running averages of the gradient and its square, bias-corrected.

    The caller computes `neg_step_size` = -lr / (1 - beta1**step), `weight1` = 1 - beta1,
    `weight2` = 1 - beta2 and `decay` (AdamW's weight factor, else 1) as PyTorch does.
    Intermediates are stored in the scratch arrays `d` and `t` (p's dtype), so a float32
    step rounds where PyTorch's does. Where PyTorch's CPU kernels fuse a multiply and an
    add (lerp, addcmul), the sum is computed in float64 from exact products instead.
    """
    for i in range(p.size):
        if decay != 1:
            p[i] = p[i] * decay
        d[i] = -g[i] if maximize else g[i]
        if weight_decay != 0:
            d[i] = d[i] + weight_decay * p[i]
        # exp_avg.lerp_(d, weight1): from the nearer end, as PyTorch's lerp does.
        t[i] = d[i] - exp_avg[i]
        if weight1 < 0.5:
            exp_avg[i] = exp_avg[i] + weight1 * t[i]
        else:
            exp_avg[i] = d[i] - (1.0 - weight1) * t[i]
        # exp_avg_sq.mul_(beta2).addcmul_(d, d, value=weight2)
        exp_avg_sq[i] = exp_avg_sq[i] * beta2
        t[i] = weight2 * d[i]
        exp_avg_sq[i] = exp_avg_sq[i] + np.float64(t[i]) * d[i]
        second = exp_avg_sq[i]
        if amsgrad:
            if second > max_sq[i]:
                max_sq[i] = second
            second = max_sq[i]
        t[i] = math.sqrt(second)
        t[i] = t[i] / bias_correction2_sqrt
        t[i] = t[i] + eps  # the denominator
        # p.addcdiv_(exp_avg, denom, value=neg_step_size): (value * exp_avg) / denom
        d[i] = neg_step_size * exp_avg[i]
        d[i] = d[i] / t[i]
        p[i] = p[i] + d[i]
