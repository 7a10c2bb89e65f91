"""Optimizer updates, one fused loop per parameter: no temporary arrays.

Each kernel follows PyTorch's single-tensor algorithm step by step, so the results
agree with `torch.optim` to rounding.
"""

import math

from numba import njit


@njit(cache=True, error_model="numpy")
def sgd_step(p, g, buf, lr, momentum, dampening, weight_decay, nesterov, maximize, first):
    """p -= lr * d, where d is the gradient with weight decay and momentum applied.

    `buf` is the momentum buffer (ignored when momentum == 0); on the first step it
    is set to the gradient itself, as PyTorch does.
    """
    for i in range(p.size):
        d = -g[i] if maximize else g[i]
        if weight_decay != 0:
            d = d + weight_decay * p[i]
        if momentum != 0:
            if first:
                buf[i] = d
            else:
                buf[i] = buf[i] * momentum + (1 - dampening) * d
            d = d + momentum * buf[i] if nesterov else buf[i]
        p[i] = p[i] - lr * d


@njit(cache=True, error_model="numpy")
def adam_step(p, g, exp_avg, exp_avg_sq, max_sq, step, lr, beta1, beta2, eps,
              weight_decay, amsgrad, maximize):
    """One Adam step: running averages of the gradient and its square, bias-corrected."""
    bias_correction1 = 1 - beta1**step
    bias_correction2_sqrt = math.sqrt(1 - beta2**step)
    step_size = lr / bias_correction1
    for i in range(p.size):
        d = -g[i] if maximize else g[i]
        if weight_decay != 0:
            d = d + weight_decay * p[i]
        exp_avg[i] = exp_avg[i] + (d - exp_avg[i]) * (1 - beta1)  # lerp, as PyTorch
        exp_avg_sq[i] = exp_avg_sq[i] * beta2 + (1 - beta2) * d * d
        second = exp_avg_sq[i]
        if amsgrad:
            if second > max_sq[i]:
                max_sq[i] = second
            second = max_sq[i]
        denom = math.sqrt(second) / bias_correction2_sqrt + eps
        p[i] = p[i] - step_size * exp_avg[i] / denom
