"""avg_pool1d and max_pool1d: average and max pooling along the last dim of (N, C, L)
or (C, L) input. As in PyTorch, each is the 2-D op of the input with a dim of size 1
inserted before the last, with a window of height 1: UnsqueezeBackward0, then
AvgPool2DBackward0 or MaxPool2DWithIndicesBackward0, then SqueezeBackward1.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .declaration import declare
from .pooling import avg_pool2d, max_pool2d_with_indices, pooled_size

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


def _check_max_pool1d(input: Tensor, k: tuple, s: tuple, p: tuple, d: tuple,  # noqa: A002
                      ceil_mode: bool) -> None:
    """PyTorch's check_max_pool1d (the path without indices), with its messages."""
    shape = tuple(input.shape)
    if input.ndim not in (2, 3) or any(n == 0 for n in shape[-2 if input.ndim == 2 else 1:]):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:[{', '.join(map(str, shape))}]")
    for name, value, what in (("kernel_size", k, "an int, list of ints or tuple of ints"),
                              ("stride", s, "None, an int, list of ints, or tuple of ints"),
                              ("padding", p, "an int, list of ints, or tuple of ints"),
                              ("dilation", d, "an int, list of ints or tuple of ints")):
        if len(value) != 1 and not (name == "stride" and not value):
            raise RuntimeError(f"max_pool1d() {name} must be {what} of size 1 but got size "
                               f"{len(value)}")
    s = s or k
    if k[0] <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k[0]}")
    if s[0] <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s[0]}")
    if p[0] < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p[0]}")
    if p[0] > k[0] // 2:
        raise RuntimeError("max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={p[0]} and kernel_size={k[0]}")
    if d[0] <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d[0]}")
    out = pooled_size(shape[-1], k[0], p[0], s[0], d[0], ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
                            dilation=1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """The largest element of every window along the last dim, and where it was:
    max_pool2d_with_indices of the input unsqueezed (PyTorch's)."""
    k = _one("max_pool1d_with_indices", "kernel_size", kernel_size, 2)
    s = () if stride is None else _one("max_pool1d_with_indices", "stride", stride, 3)
    p = _one("max_pool1d_with_indices", "padding", padding, 4)
    d = _one("max_pool1d_with_indices", "dilation", dilation, 5)
    s = s or k
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "max_pool1d)")
    for name, value in (("kernel_size", k), ("stride", s), ("padding", p), ("dilation", d)):
        _check1d("max_pool1d", name, value)
    out, indices = max_pool2d_with_indices(input.unsqueeze(-2), (1, k[0]), (1, s[0]),
                                           (0, p[0]), (1, d[0]), ceil_mode)
    return out.squeeze(-2), indices.squeeze(-2)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """The largest element of every window along the last dim of (N, C, L) or (C, L)
    input; with `return_indices`, also where each was."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation,
                                       ceil_mode)
    k = _one("max_pool1d", "kernel_size", kernel_size, 2)
    s = () if stride is None else _one("max_pool1d", "stride", stride, 3)
    p = _one("max_pool1d", "padding", padding, 4)
    d = _one("max_pool1d", "dilation", dilation, 5)
    _check_max_pool1d(input, k, s, p, d, ceil_mode)
    # (PyTorch takes the path with indices when a gradient is wanted, and its own
    # kernel otherwise: the same values, so minigrad takes the one path; but that
    # kernel takes floats only, and an integer tensor never wants a gradient)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for "
                                  f"'{input.dtype.type_name}'")
    return max_pool1d_with_indices(input, k, s or k, p, d, ceil_mode)[0]


declare("max_pool1d", function=max_pool1d)
declare("max_pool1d_with_indices", function=max_pool1d_with_indices)
