"""pixel_shuffle, pixel_unshuffle and channel_shuffle: ops that only move elements.

* pixel_shuffle(x, r) turns an (*, C * r * r, H, W) input into (*, C, H * r, W * r):
  each group of r * r channels becomes an r-by-r block of pixels (a sub-pixel
  convolution's upsampling step);
* pixel_unshuffle(x, r) is its inverse;
* channel_shuffle(x, g) interleaves the channels of g groups (ShuffleNet's mixing of
  grouped convolutions' channels): channel i of group j moves to position i * g + j.

Each is a fixed permutation of the elements, so each gradient is the inverse
permutation of the gradient: pixel_shuffle's is pixel_unshuffle, and the other way
round, and channel_shuffle's is channel_shuffle with the other number of groups. The
tangent is the op itself (PyTorch's `auto_linear`).
"""

from __future__ import annotations

import numpy as np

from ..autograd.graph import VALUE
from ..autograd.record import record
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, on_arrays
from .tangent_formulas import Tangent

OP_FAMILY = "shuffles"


# -- the moves, on arrays -------------------------------------------------------------------


def _pixel_shuffle(a: np.ndarray, r: int) -> np.ndarray:
    *batch, c, h, w = a.shape
    blocks = a.reshape(*batch, c // (r * r), r, r, h, w)
    n = len(batch)
    moved = blocks.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return np.ascontiguousarray(moved).reshape(*batch, c // (r * r), h * r, w * r)


def _pixel_unshuffle(a: np.ndarray, r: int) -> np.ndarray:
    *batch, c, h, w = a.shape
    blocks = a.reshape(*batch, c, h // r, r, w // r, r)
    n = len(batch)
    moved = blocks.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return np.ascontiguousarray(moved).reshape(*batch, c * r * r, h // r, w // r)


def _channel_shuffle(a: np.ndarray, groups: int) -> np.ndarray:
    n, c, *rest = a.shape
    grouped = a.reshape(n, groups, c // groups, *rest)
    return np.ascontiguousarray(np.swapaxes(grouped, 1, 2)).reshape(a.shape)


# -- checks, with PyTorch's messages ------------------------------------------------------


def _check_factor(op: str, what: str, factor: int) -> None:
    if factor <= 0:
        raise RuntimeError(f"{op} expects a positive {what}, but got {factor}")


def _check_rank(op: str, x: Tensor) -> None:
    if x.ndim < 3:
        raise RuntimeError(f"{op} expects input to have at least 3 dimensions, but got "
                           f"input with {x.ndim} dimension(s)")


# -- the ops ------------------------------------------------------------------------------


class PixelShuffleBackward0(ArrayFormulaNode):
    """pixel_shuffle(x, r): the gradient pixel-unshuffled back."""

    tangent = Tangent("pixel_shuffle(self_t, upscale_factor)", linear=True)

    saves = {"upscale_factor": VALUE}
    formulas = (Formula("self", "pixel_unshuffle(grad, upscale_factor)"),)
    exact = True


class PixelUnshuffleBackward0(ArrayFormulaNode):
    """pixel_unshuffle(x, r): the gradient pixel-shuffled back."""

    tangent = Tangent("pixel_unshuffle(self_t, downscale_factor)", linear=True)

    saves = {"downscale_factor": VALUE}
    formulas = (Formula("self", "pixel_shuffle(grad, downscale_factor)"),)
    exact = True


class ChannelShuffleBackward0(ArrayFormulaNode):
    """channel_shuffle(x, g): the gradient shuffled with C / g groups, which undoes it."""

    tangent = Tangent("channel_shuffle(self_t, groups)", linear=True)

    saves = {"groups": VALUE}
    formulas = (Formula("self", "channel_shuffle(grad, other_groups(grad, groups))"),)
    exact = True


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r): each r * r channels become an
    r-by-r block of pixels."""
    r = int(upscale_factor)
    _check_rank("pixel_shuffle", input)
    _check_factor("pixel_shuffle", "upscale_factor", r)
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c}"
                           f" is not divisible by {r * r}")
    out = Tensor._make(_pixel_shuffle(input._data, r))
    node = record(PixelShuffleBackward0, out, input)
    if node is not None:
        node._saved["upscale_factor"] = r
    return out


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W), pixel_shuffle's inverse."""
    r = int(downscale_factor)
    _check_rank("pixel_unshuffle", input)
    _check_factor("pixel_unshuffle", "downscale_factor", r)
    h, w = input.shape[-2:]
    if h % r:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by "
                           f"downscale_factor, but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError("pixel_unshuffle expects width to be divisible by "
                           f"downscale_factor, but input.size(-1)={w} is not divisible by {r}")
    out = Tensor._make(_pixel_unshuffle(input._data, r))
    node = record(PixelUnshuffleBackward0, out, input)
    if node is not None:
        node._saved["downscale_factor"] = r
    return out


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """(N, C, *) with C = g * k: channel i of group j (of g) moves to i * g + j."""
    g = int(groups)
    if input.ndim <= 2:
        sizes = ", ".join(map(str, input.shape))
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input "
                           f"with sizes [{sizes}]")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. "
                           f"Value of groups:{g}")
    c = input.shape[1]
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} "
                           f"channels and {g} groups.")
    out = Tensor._make(_channel_shuffle(input._data, g))
    node = record(ChannelShuffleBackward0, out, input)
    if node is not None:
        node._saved["groups"] = g
    return out


# -- the formulas' array versions ---------------------------------------------------------

on_arrays("pixel_shuffle")(_pixel_shuffle)
on_arrays("pixel_unshuffle")(_pixel_unshuffle)


@on_arrays("channel_shuffle")
def _channel_shuffle_array(a: np.ndarray, groups: int) -> np.ndarray:
    return _channel_shuffle(a, groups)


@helper
def other_groups(grad: Tensor, groups: int) -> int:
    """PyTorch's `grad.sym_size(1) / groups`: the group count that undoes a shuffle."""
    return grad.shape[1] // groups


@on_arrays("other_groups")
def _other_groups(grad: np.ndarray, groups: int) -> int:
    return grad.shape[1] // groups


declare("pixel_shuffle", nodes=(PixelShuffleBackward0,), function=pixel_shuffle)
declare("pixel_unshuffle", nodes=(PixelUnshuffleBackward0,), function=pixel_unshuffle)
declare("channel_shuffle", nodes=(ChannelShuffleBackward0,), function=channel_shuffle)
