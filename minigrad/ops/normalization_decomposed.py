"""Forward mode through the backward ops of batch_norm and layer_norm, by decomposition.

`native_batch_norm_backward` and `native_layer_norm_backward` (what a backward through
batch_norm or layer_norm calls when it records, with `create_graph=True`) have no
tangent formula in PyTorch's tables. When one of their
inputs has a tangent, PyTorch runs instead a *decomposition* of the op into smaller
ops (`torch/_decomp/decompositions_for_jvp.py`) on the dual inputs: each small op
carries the tangents along with its own formula. The op's outputs take the values
and the tangents the decomposition gives, but keep the op's own node as grad_fn
(NativeBatchNormBackwardBackward0, ...), so a further backward still uses the double
backward formulas. minigrad does the same: the two functions below are those
decompositions, step by step, written with minigrad's ops, which compute the
tangents (and, in grad mode, record the tangents' graphs) as any op does.

Unlike the fused backward, the decompositions recompute mean and variance from the
input, so that the tangents see the statistics move with the input; `eps` is
recovered from the saved rstd as `1 / rstd**2 - var`, a constant.

Values: PyTorch gets mean and variance from one `var_mean` (a running, Welford
sum) and rstd from `rsqrt`; minigrad has neither op and uses `mean`, `var` (two
passes) and `pow(-0.5)`. The results agree with PyTorch's to a few units in the
last place, not bit for bit.
"""

from __future__ import annotations

import math

from .._creation import zeros
from ..autograd.tangents import DUAL, set_tangent, tangent_of
from ..tensor import Tensor


def has_tangents(inputs: tuple) -> bool:
    """Whether the op must run its decomposition: a dual level is active and some
    input has a tangent."""
    return DUAL.active and any(isinstance(t, Tensor) and tangent_of(t) is not None
                               for t in inputs)


def give_tangents(outputs: tuple, decomposed: tuple) -> None:
    """Each output (the op's, with its node) gets the tangent of its counterpart in
    the decomposition, if that has one."""
    for out, d in zip(outputs, decomposed):
        if out is not None:
            tangent = tangent_of(d)
            if tangent is not None:
                set_tangent(out, tangent)


def _recomputed_statistics(input: Tensor, rstd: Tensor, dims: tuple,  # noqa: A002
                           keepdim: bool) -> tuple[Tensor, Tensor]:
    """Mean and rstd computed again from `input` over `dims`, so that they carry the
    input's tangent; the eps the forward added is what makes the saved rstd."""
    var = input.var(dims, correction=0, keepdim=keepdim)
    mean = input.mean(dims, keepdim=keepdim)
    eps = ((1 / rstd).pow(2) - var).detach()
    return mean, (var + eps).pow(-0.5)


def layer_norm_backward_decomposed(grad_out: Tensor, input: Tensor,  # noqa: A002
                                   normalized_shape: tuple, mean: Tensor, rstd: Tensor,
                                   weight: Tensor | None, mask: tuple) -> tuple:
    """native_layer_norm_backward's gradients of input, weight and bias (those `mask`
    asks for, else None) as PyTorch's decomposition computes them:
    d_input = rstd / N * (N * g - sum(g) - x_hat * sum(g * x_hat)), g = grad_out * weight,
    over the N normalised elements of each sample."""
    axis = input.dim() - len(normalized_shape)
    inner, outer = tuple(range(axis, input.dim())), tuple(range(axis))
    n, m = math.prod(input.shape[axis:]), math.prod(input.shape[:axis])
    if m <= 0 or n <= 0:  # (nothing to normalise: zeros, without tangents)
        shapes = (input.shape, input.shape[axis:], input.shape[axis:])
        return tuple(zeros(s, dtype=input.dtype) if want else None
                     for s, want in zip(shapes, mask))
    mean_, rstd_ = _recomputed_statistics(input, rstd, inner, keepdim=True)
    x_hat = (input - mean_) * rstd_
    grad_x_hat = grad_out if weight is None else grad_out * weight
    a = grad_x_hat * n
    b = grad_x_hat.sum(inner, True)
    c = x_hat * (grad_x_hat * x_hat).sum(inner, True)
    d_input = (rstd_ / n) * (a - b - c) if mask[0] else None
    d_weight = d_bias = None
    if mask[1]:
        d_weight = grad_out * x_hat
        d_weight = d_weight.sum(outer, False) if outer else d_weight
    if mask[2]:
        d_bias = grad_out.sum(outer, False) if outer else grad_out.clone()
    return d_input, d_weight, d_bias


def batch_norm_backward_decomposed(grad_out: Tensor, input: Tensor,  # noqa: A002
                                   weight: Tensor | None, running_mean: Tensor | None,
                                   running_var: Tensor | None, save_invstd: Tensor,
                                   train: bool, eps: float, mask: tuple) -> tuple:
    """native_batch_norm_backward's gradients of input, weight and bias (those `mask`
    asks for, else None) as PyTorch's decomposition computes them, per channel (dim 1):
    in training, (grad_out - (x - mean) * dot * invstd**2 / n - sum(grad_out) / n) *
    invstd * weight with dot = sum(grad_out * (x - mean)); in eval mode, with the
    running statistics as constants, grad_out * invstd * weight."""
    shape, rank = input.shape, input.dim()
    axes = tuple(d for d in range(rank) if d != 1)
    if train:
        mean, invstd = _recomputed_statistics(input, save_invstd, axes, keepdim=False)
    else:
        mean, invstd = running_mean, (running_var + eps).pow(-0.5)
    channels = [1] * rank
    channels[1] = shape[1]
    norm = 1.0 / (math.prod(shape) / shape[1])
    mean = mean.reshape(channels)
    grad_output_sum = grad_out.sum(axes)
    dot_p = (grad_out * (input - mean)).sum(axes)
    grad_mean = (grad_output_sum * norm).reshape(channels)
    proj_scale = ((dot_p * norm) * (invstd * invstd)).reshape(channels)
    if weight is None:
        grad_scale = invstd.reshape(channels) * 1.0
    else:
        grad_scale = (invstd * weight).reshape(channels)
    grad_input = None
    if mask[0]:
        if train:
            proj = (input - mean) * proj_scale
            grad_input = ((grad_out - proj) - grad_mean) * grad_scale
        else:
            grad_input = grad_out * grad_scale
    grad_weight = dot_p * invstd if mask[1] else None
    return grad_input, grad_weight, grad_output_sum if mask[2] else None
