"""The dropout family of `nn.functional`: channel-wise (feature) dropout and alpha
dropout, as PyTorch computes them on the CPU.

Each is a product with a random "noise" tensor (and, for alpha dropout, a sum), so the
graph PyTorch records is MulBackward0 (saving the noise), then AddBackward0 for alpha
dropout: no node of its own. The noise is drawn with PyTorch's `bernoulli_(1 - p)`
(the same numbers for the same seed):
* feature dropout draws one number per (sample, channel), of shape (N, C, 1, ...), so
  a whole channel is zeroed or kept;
* alpha dropout keeps the mean and variance of SELU activations: dropped elements are
  set to SELU's negative saturation value -alpha * scale rather than 0, then an affine
  map a * x + b restores the moments: out = x * (noise * a) + b, with
  b = (noise - 1) * alpha * a + alpha * a * p.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _generator
from ..ops.arithmetic import add_, mul, mul_
from ..ops.public_forms import checked_input
from ..tensor import Tensor

# SELU's alpha * scale: the value alpha dropout sets dropped elements to, negated
ALPHA = 1.7580993408473766


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input: Tensor, p: float, train: bool, *, feature: bool,  # noqa: A002
                  alpha: bool, inplace: bool) -> Tensor:
    """PyTorch's `_dropout_impl`: the noise, then the product (and sum)."""
    if p == 0 or not train or input.numel() == 0:
        return input
    multiply = mul_ if inplace else mul
    if p == 1:
        return multiply(input, Tensor._make(np.zeros((), input._data.dtype)))
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = input.shape[:2] + (1,) * (input.ndim - 2)
        noise = np.empty(shape, input._data.dtype)
    else:
        noise = np.empty_like(input._data)
    _generator.bernoulli_into(noise, 1 - p)
    kind = noise.dtype.type
    if not alpha:
        noise /= kind(1 - p)
        return multiply(input, Tensor._make(noise))
    a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    b = (noise - kind(1)) * kind(ALPHA * a)
    b += kind(ALPHA * a * p)
    noise *= kind(a)
    return add_(multiply(input, Tensor._make(noise)), Tensor._make(b))


def _feature_dropout(input: Tensor, p: float, training: bool,  # noqa: A002
                     inplace: bool) -> Tensor:
    return _dropout_impl(input, p, training, feature=True, alpha=False, inplace=inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, L) or (C, L) input with probability `p`,
    scaling the others by 1 / (1 - p)."""
    _check_p(p)
    ndim = input.ndim
    if ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _unbatched(input, p, training, inplace, batched=ndim == 3)


def _unbatched(input: Tensor, p: float, training: bool, inplace: bool,  # noqa: A002
               *, batched: bool) -> Tensor:
    """Feature dropout of an input without its batch dim: one added, then taken off."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, H, W) input with probability `p`, scaling the
    others by 1 / (1 - p). (A 3-D input is taken as (N, C, L), with PyTorch's warning.)"""
    _check_p(p)
    ndim = input.ndim
    if ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret "
            "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input with probability
    `p`, scaling the others by 1 / (1 - p)."""
    _check_p(p)
    ndim = input.ndim
    if ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {ndim}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _unbatched(input, p, training, inplace, batched=ndim == 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps the mean and variance of SELU activations (training only)."""
    _check_p(p)
    return _dropout_impl(checked_input(input, "alpha_dropout"), p, training, feature=False,
                         alpha=True, inplace=inplace)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (training only)."""
    _check_p(p)
    return _dropout_impl(checked_input(input, "feature_alpha_dropout"), p, training,
                         feature=True, alpha=True, inplace=inplace)
