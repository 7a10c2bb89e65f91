"""Losses PyTorch composes of other ops (its C++ `margin_ranking_loss`,
`hinge_embedding_loss`, `cosine_embedding_loss`, `poisson_nll_loss` and Python's
`gaussian_nll_loss`): no node of their own, so minigrad writes them with the same ops
in the same order, and their graphs are PyTorch's node for node (ClampMinBackward0,
WhereBackward0, MeanBackward0, ...).

C++ distinguishes a number in arithmetic by its side: `tensor + 0.5` is the Scalar
overload (AddBackward1), `1 - tensor` a subtraction from a wrapped 0-d tensor
(SubBackward0); `_number` makes the latter.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._creation import ones_like, zeros_like
from ..grad_mode import no_grad
from ..ops.arithmetic import add_, sub
from ..ops.distances import pairwise_distance
from ..ops.indexing import where
from ..ops.loss import REDUCTIONS, legacy_reduction
from ..ops.margin_losses import soft_margin_loss_forward
from ..ops.pointwise import clamp_min, clamp_min_
from ..ops.reductions import minimum
from ..ops.scalar_overloads import add_scalar, mul_scalar, sub_scalar
from ..tensor import Tensor

_REDUCTIONS = ("none", "mean", "sum")


def _number(x) -> Tensor:
    """A number as C++ passes it to a Tensor operator from the left: a wrapped 0-d
    tensor, which promotes as the number would."""
    t = Tensor._make(np.array(x, _dtype.of_number(x).np))
    t._wrapped_number = True
    return t


def _reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's `_Reduction.get_enum` (the deprecated arguments first)."""
    if size_average is not None or reduce is not None:
        return legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    """PyTorch's `apply_loss_reduction`."""
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin): target 1 says input1 should rank
    higher, -1 lower."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    # (C++ evaluates an operator's right operand first: the nodes are numbered so)
    diff = input1 - input2
    unclamped = add_scalar((-target) * diff, margin)
    return _reduce(clamp_min_(unclamped, 0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """x where the target is 1, max(0, margin - x) where it is -1 (a distance that
    should be small for similar pairs, above the margin for dissimilar ones)."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = zeros_like(input)
    margin_clamp = clamp_min_(sub(_number(margin), input), 0)
    output_margin = where(target != 1, margin_clamp, zeros)
    output_self = where(target != -1, input, zeros)
    return _reduce(output_margin + output_self, reduction)


_EPSILON = 1e-12  # (PyTorch's, added to each squared magnitude)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where the target is 1, max(0, cos(x1, x2) - margin) where -1."""
    reduction = _reduction(size_average, reduce, reduction)
    dim = target.ndim
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if dim == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {_sizes(input1)} and {_sizes(input2)}.")
    if dim == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {_sizes(input1)} and {_sizes(input2)}.")
    prod_sum = (input1 * input2).sum(dim)
    mag_square1 = add_scalar((input1 * input1).sum(dim), _EPSILON)
    mag_square2 = add_scalar((input2 * input2).sum(dim), _EPSILON)
    denom = (mag_square1 * mag_square2).sqrt_()
    cos = prod_sum / denom
    zeros = zeros_like(cos)
    pos = sub(_number(1), cos)
    neg = clamp_min_(sub_scalar(cos, margin), 0)
    output_pos = where(target == 1, pos, zeros)
    output_neg = where(target == -1, neg, zeros)
    return _reduce(output_pos + output_neg, reduction)


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(map(str, t.shape)) + "]"


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,  # noqa: A002
                     full: bool = False, size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """The negative log likelihood of `target` under Poisson(rate): rate = exp(input)
    with `log_input`, else input itself (+ eps inside the log); `full` adds Stirling's
    approximation of log(target!) where target > 1."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    # (in C++'s order: an operator's right operand first)
    if log_input:
        product = target * input
        loss = input.exp() - product
    else:
        loss = input - target * add_scalar(input, eps).log()
    if full:
        half_log = mul_scalar(mul_scalar(target, 2 * math.pi).log(), 0.5)
        stirling = target * target.log() - target + half_log
        loss = add_(loss, stirling.masked_fill(target <= 1, 0))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False,  # noqa: A002
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """The negative log likelihood of `target` under N(input, var), up to a constant
    (`full` adds it): 0.5 * (log(var) + (input - target)**2 / var), var clamped to at
    least `eps` (without a gradient through the clamping)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(
                y for x, y in zip(input.shape, var.shape, strict=True) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the pairwise
    p-norm distance (with `swap`, the smaller of d(anchor, negative) and
    d(positive, negative))."""
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative "
            f"{n_dim}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_swap = pairwise_distance(positive, negative, p, eps)
        dist_neg = minimum(dist_neg, dist_swap)
    output = clamp_min(add_scalar(dist_pos, margin) - dist_neg, 0)
    return _reduce(output, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """The triplet margin loss with `distance_function(x1, x2)` (pairwise_distance by
    default) as the distance."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative "
            f"{n_dim}D inputs")
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_swap = distance_function(positive, negative)
        dist_neg = minimum(dist_neg, dist_swap)
    loss = clamp_min(margin + dist_pos - dist_neg, 0)
    return _reduce(loss, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None,  # noqa: A002
                     reduce=None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-y * x)) for labels y = +-1, averaged (or summed, or not reduced)."""
    reduction = _reduction(size_average, reduce, reduction)
    return soft_margin_loss_forward(input, target, REDUCTIONS[reduction])
