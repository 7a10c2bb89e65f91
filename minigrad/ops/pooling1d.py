"""avg_pool1d: average pooling along the last dim of (N, C, L) or (C, L) input. As in
PyTorch, it is avg_pool2d of the input with a dim of size 1 inserted before the last
(UnsqueezeBackward0, AvgPool2DBackward0, SqueezeBackward1), with a window of height 1.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .declaration import declare
from .pooling import avg_pool2d

OP_FAMILY = "pooling"


def _one(op: str, name: str, value, pos: int) -> tuple:
    """An int or a list of one int, as PyTorch's IntArrayRef[1] takes it."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be tuple of ints, "
                        f"not {type(value).__name__}")
    return tuple(int(v) for v in value)


def _check1d(op: str, name: str, value: tuple) -> None:
    if len(value) != 1:
        raise RuntimeError(f"{op}() argument '{name}' should contain one int (got "
                           f"{len(value)})")


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """The mean of every window of `kernel_size` along the last dim."""
    kernel_size = _one("avg_pool1d", "kernel_size", kernel_size, 2)
    stride = () if stride is None else _one("avg_pool1d", "stride", stride, 3)
    padding = _one("avg_pool1d", "padding", padding, 4)
    if not stride:
        stride = kernel_size
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "avg_pool1d)")
    for name, value in (("kernel_size", kernel_size), ("stride", stride),
                        ("padding", padding)):
        _check1d("avg_pool1d", name, value)
    out = avg_pool2d(input.unsqueeze(-2), (1, kernel_size[0]), (1, stride[0]),
                     (0, padding[0]), ceil_mode, count_include_pad)
    return out.squeeze(-2)


declare("avg_pool1d", function=avg_pool1d)
