"""Optimizer updates, one fused loop per parameter: no temporary arrays.

Each kernel follows PyTorch's single-tensor algorithm op by op, rounding where it
rounds: every hyper-parameter arrives as a scalar of the parameter's dtype (PyTorch
converts a Python number to the tensor's dtype before its kernel runs), every op
stores its result in p's dtype, and where PyTorch's kernel computes `a + alpha * b`
(add with alpha, lerp, addcmul) the product and the sum are rounded once when
`fused` (PyTorch's AVX2 and AVX512 kernels use fused multiply-add there, see
`minigrad.kernels.fused`), twice otherwise.

Each update is written once, element by element (`_sgd_elements`, ...), with a
switch for every option. Called with the switches of the common case as constants
(`_sgd_common`, ..., which `sgd_step` picks in Python), the compiler drops the
branches and vectorises the loop: plain SGD on a 128x64 float32 weight takes about
1.7 us instead of 9, an Adam step about 2.4 us instead of 25 (AMD EPYC, one thread).
The arithmetic of each element is the same either way, so are the bits. The element
loops (and `mul_add`) are inlined where they are called (`inline="always"`), and only
the kernel a step calls is compiled: a first plain SGD step compiles one function,
not seven (an entry, three versions of the loop, three of `mul_add`).
"""

import math

from numba import njit

from .fused import mul_add


def sgd_step(p, g, buf, lr, momentum, keep, weight_decay, nesterov, maximize, first, fused):
    """One SGD step (see `_sgd_elements`); without nesterov or maximize, after the
    first step, through a kernel with the switches as constants."""
    if nesterov or maximize or first:
        _sgd_elements(p, g, buf, lr, momentum, keep, weight_decay, nesterov, maximize, first,
                      fused)
    elif fused:
        _sgd_common_fused(p, g, buf, lr, momentum, keep, weight_decay)
    else:
        _sgd_common(p, g, buf, lr, momentum, keep, weight_decay)


@njit(cache=True, error_model="numpy")
def _sgd_common_fused(p, g, buf, lr, momentum, keep, weight_decay):
    _sgd_elements(p, g, buf, lr, momentum, keep, weight_decay, False, False, False, True)


@njit(cache=True, error_model="numpy")
def _sgd_common(p, g, buf, lr, momentum, keep, weight_decay):
    _sgd_elements(p, g, buf, lr, momentum, keep, weight_decay, False, False, False, False)


@njit(cache=True, error_model="numpy", inline="always")
def _sgd_elements(p, g, buf, lr, momentum, keep, weight_decay, nesterov, maximize, first,
                  fused):
    """p -= lr * d, where d is the gradient with weight decay and momentum applied
    (element by element: each rounded to p's dtype, as PyTorch's ops store it).

    `buf` is the momentum buffer (ignored when momentum == 0); on the first step it is
    set to the gradient itself, as PyTorch does. `keep` is 1 - dampening. The comments
    name the PyTorch op each line is.
    """
    for i in range(p.size):
        d = -g[i] if maximize else g[i]
        if weight_decay != 0:
            d = mul_add(weight_decay, p[i], d, fused)  # grad.add(p, alpha=wd)
        if momentum != 0:
            if first:
                buf[i] = d  # buf = grad.clone()
            else:
                buf[i] = buf[i] * momentum  # buf.mul_(momentum)
                buf[i] = mul_add(keep, d, buf[i], fused)  # .add_(grad, alpha=keep)
            if nesterov:
                d = mul_add(momentum, buf[i], d, fused)  # grad.add(buf, alpha=m)
            else:
                d = buf[i]
        p[i] = mul_add(-lr, d, p[i], fused)  # p.add_(grad, alpha=-lr)


def adam_step(p, g, exp_avg, exp_avg_sq, max_sq, neg_step_size, bias_correction2_sqrt,
              weight1, weight1_minus_1, beta2, weight2, eps, weight_decay, decay, amsgrad,
              maximize, fused):
    """One Adam step (see `_adam_elements`); without amsgrad or maximize, through a
    kernel with the switches as constants."""
    args = (p, g, exp_avg, exp_avg_sq, max_sq, neg_step_size, bias_correction2_sqrt, weight1,
            weight1_minus_1, beta2, weight2, eps, weight_decay, decay)
    if amsgrad or maximize:
        _adam_elements(*args, amsgrad, maximize, fused)
    elif fused:
        _adam_common_fused(*args)
    else:
        _adam_common(*args)


@njit(cache=True, error_model="numpy")
def _adam_common_fused(p, g, exp_avg, exp_avg_sq, max_sq, neg_step_size, bias_correction2_sqrt,
                       weight1, weight1_minus_1, beta2, weight2, eps, weight_decay, decay):
    _adam_elements(p, g, exp_avg, exp_avg_sq, max_sq, neg_step_size, bias_correction2_sqrt,
                   weight1, weight1_minus_1, beta2, weight2, eps, weight_decay, decay, False,
                   False, True)


@njit(cache=True, error_model="numpy")
def _adam_common(p, g, exp_avg, exp_avg_sq, max_sq, neg_step_size, bias_correction2_sqrt,
                 weight1, weight1_minus_1, beta2, weight2, eps, weight_decay, decay):
    _adam_elements(p, g, exp_avg, exp_avg_sq, max_sq, neg_step_size, bias_correction2_sqrt,
                   weight1, weight1_minus_1, beta2, weight2, eps, weight_decay, decay, False,
                   False, False)


@njit(cache=True, error_model="numpy", inline="always")
def _adam_elements(p, g, exp_avg, exp_avg_sq, max_sq, neg_step_size, bias_correction2_sqrt,
                   weight1, weight1_minus_1, beta2, weight2, eps, weight_decay, decay, amsgrad,
                   maximize, fused):
    """One Adam step: running averages of the gradient and its square, bias-corrected.

    The caller computes `neg_step_size` = -lr / (1 - beta1**step), `weight1` = 1 - beta1,
    `weight2` = 1 - beta2 and `decay` (AdamW's weight factor, else 1) as PyTorch does;
    `weight1_minus_1` is weight1 - 1 in p's dtype (exact). `d` is the gradient (with L2
    weight decay added).
    """
    for i in range(p.size):
        if decay != 1:
            p[i] = p[i] * decay  # p.mul_(1 - lr * weight_decay)
        d = -g[i] if maximize else g[i]
        if weight_decay != 0:
            d = mul_add(weight_decay, p[i], d, fused)  # grad.add(p, alpha=wd)
        # exp_avg.lerp_(grad, weight1): from the nearer end, as PyTorch's lerp does
        diff = d - exp_avg[i]
        if abs(weight1) < 0.5:
            exp_avg[i] = mul_add(weight1, diff, exp_avg[i], fused)
        else:
            exp_avg[i] = mul_add(weight1_minus_1, diff, d, fused)
        # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=weight2)
        exp_avg_sq[i] = exp_avg_sq[i] * beta2
        exp_avg_sq[i] = mul_add(weight2 * d, d, exp_avg_sq[i], fused)
        second = exp_avg_sq[i]
        if amsgrad:  # torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            if second > max_sq[i] or math.isnan(second):
                max_sq[i] = second
            second = max_sq[i]
        # denom = (second.sqrt() / bias_correction2_sqrt).add_(eps)
        denom = math.sqrt(second) / bias_correction2_sqrt + eps
        # p.addcdiv_(exp_avg, denom, value=neg_step_size): p + (value * exp_avg) / denom
        p[i] = p[i] + neg_step_size * exp_avg[i] / denom


def rmsprop_step(p, g, square_avg, grad_avg, buf, neg_lr, alpha, weight, weight_minus_1, eps,
                 weight_decay, momentum, centered, maximize, fused):
    """One RMSprop step (see `_rmsprop_elements`); not centered, without maximize,
    through a kernel with the switches as constants."""
    args = (p, g, square_avg, grad_avg, buf, neg_lr, alpha, weight, weight_minus_1, eps,
            weight_decay, momentum)
    if centered or maximize:
        _rmsprop_elements(*args, centered, maximize, fused)
    elif fused:
        _rmsprop_common_fused(*args)
    else:
        _rmsprop_common(*args)


@njit(cache=True, error_model="numpy")
def _rmsprop_common_fused(p, g, square_avg, grad_avg, buf, neg_lr, alpha, weight,
                          weight_minus_1, eps, weight_decay, momentum):
    _rmsprop_elements(p, g, square_avg, grad_avg, buf, neg_lr, alpha, weight, weight_minus_1,
                      eps, weight_decay, momentum, False, False, True)


@njit(cache=True, error_model="numpy")
def _rmsprop_common(p, g, square_avg, grad_avg, buf, neg_lr, alpha, weight, weight_minus_1,
                    eps, weight_decay, momentum):
    _rmsprop_elements(p, g, square_avg, grad_avg, buf, neg_lr, alpha, weight, weight_minus_1,
                      eps, weight_decay, momentum, False, False, False)


@njit(cache=True, error_model="numpy", inline="always")
def _rmsprop_elements(p, g, square_avg, grad_avg, buf, neg_lr, alpha, weight, weight_minus_1,
                      eps, weight_decay, momentum, centered, maximize, fused):
    """One RMSprop step: divide the gradient by the root of a running average of its
    square (minus the square of its running average, when `centered`).

    `weight` is 1 - alpha and `weight_minus_1` is weight - 1 in p's dtype (exact);
    `grad_avg` is used only when `centered`, `buf` only when momentum > 0. The
    comments name the PyTorch op each line is.
    """
    for i in range(p.size):
        d = -g[i] if maximize else g[i]
        if weight_decay != 0:
            d = mul_add(weight_decay, p[i], d, fused)  # grad.add(p, alpha=wd)
        # square_avg.mul_(alpha).addcmul_(grad, grad, value=weight)
        square_avg[i] = square_avg[i] * alpha
        square_avg[i] = mul_add(weight * d, d, square_avg[i], fused)
        if centered:
            # grad_avg.lerp_(grad, weight): from the nearer end, as PyTorch's lerp does
            diff = d - grad_avg[i]
            if abs(weight) < 0.5:
                grad_avg[i] = mul_add(weight, diff, grad_avg[i], fused)
            else:
                grad_avg[i] = mul_add(weight_minus_1, diff, d, fused)
            # square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
            avg = math.sqrt(mul_add(-grad_avg[i], grad_avg[i], square_avg[i], fused))
        else:
            avg = math.sqrt(square_avg[i])  # square_avg.sqrt()
        avg = avg + eps  # .add_(eps)
        if momentum > 0:
            buf[i] = buf[i] * momentum  # buf.mul_(momentum)
            buf[i] = buf[i] + d / avg  # .addcdiv_(grad, avg)
            p[i] = mul_add(neg_lr, buf[i], p[i], fused)  # p.add_(buf, alpha=-lr)
        else:
            p[i] = p[i] + neg_lr * d / avg  # p.addcdiv_(grad, avg, value=-lr)
