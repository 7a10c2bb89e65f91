"""Adaptive average pooling: an (N, C, H, W) or (C, H, W) input averaged down to a
given output size (oh, ow), each output the mean of the window
[floor(i * H / oh), ceil((i + 1) * H / oh)) x (the same for the columns), so the
windows cover the input and overlap where the sizes do not divide (node
AdaptiveAvgPool2DBackward0). As in PyTorch, an output of 1 x 1 is a mean over the
last two dims (MeanBackward1), and adaptive_avg_pool1d is the 2-D op of the input
unsqueezed to a height of 1.

Backward spreads each output's gradient evenly over its window (PyTorch's op
_adaptive_avg_pool2d_backward, node AdaptiveAvgPool2DBackwardBackward0), which is
linear in the gradient: its own gradient is adaptive pooling of `grad` again.
"""

from __future__ import annotations

import numpy as np

from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, helper, on_arrays
from .pooling1d import _check1d, _one
from .tangent_formulas import Tangent

OP_FAMILY = "pooling"


def _window(i: int, size: int, out: int) -> tuple[int, int]:
    """The input rows [start, end) that output row i of `out` averages."""
    return (i * size) // out, -((-(i + 1) * size) // out)


def _pool_array(a: np.ndarray, oh: int, ow: int) -> np.ndarray:
    """Each window's sum, added in PyTorch's order (row by row), divided by its height,
    then by its width."""
    h, w = a.shape[-2:]
    out = np.empty(a.shape[:-2] + (oh, ow), a.dtype)
    for i in range(oh):
        h0, h1 = _window(i, h, oh)
        for j in range(ow):
            w0, w1 = _window(j, w, ow)
            total = np.zeros(a.shape[:-2], a.dtype)
            for ih in range(h0, h1):
                for iw in range(w0, w1):
                    total += a[..., ih, iw]
            out[..., i, j] = total / a.dtype.type(h1 - h0) / a.dtype.type(w1 - w0)
    return out


def _backward_array(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Each output's gradient / window size, added to every element of its window."""
    h, w = shape[-2:]
    oh, ow = grad.shape[-2:]
    out = np.zeros(shape, grad.dtype)
    for i in range(oh):
        h0, h1 = _window(i, h, oh)
        for j in range(ow):
            w0, w1 = _window(j, w, ow)
            share = grad[..., i, j] / grad.dtype.type(h1 - h0) / grad.dtype.type(w1 - w0)
            for ih in range(h0, h1):
                for iw in range(w0, w1):
                    out[..., ih, iw] += share
    return out


class AdaptiveAvgPool2DBackward0(ArrayFormulaNode):
    """adaptive_avg_pool2d: each output's gradient spread over its window. Saves its
    INPUT (for its shape)."""

    tangent = Tangent("_adaptive_avg_pool2d(self_t, last_two_sizes(result))", linear=True)
    saves = {"self": INPUT}
    formulas = (Formula("self", "_adaptive_avg_pool2d_backward(grad, self)"),)


def _adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """PyTorch's aten::_adaptive_avg_pool2d, with its checks."""
    shape = tuple(input.shape)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"[{', '.join(map(str, shape))}]")
    for d in (input.ndim - 2, input.ndim - 1):
        if shape[d] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes [{', '.join(map(str, shape))}] with "
                f"dimension {d} being empty")
    if input._data.dtype.kind != "f":
        kind = "Long" if input._data.dtype.kind == "i" else "Bool"
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for '{kind}'")
    oh, ow = output_size
    out = Tensor._make(_pool_array(input._data, oh, ow))
    node = record(AdaptiveAvgPool2DBackward0, out, input)
    if node is not None:
        node._saved["self"] = SavedTensor(input)
    return out


class AdaptiveAvgPool2DBackwardBackward0(FormulaNode):
    """_adaptive_avg_pool2d_backward(grad_output, self): linear in grad_output, whose
    gradient is adaptive pooling of `grad` to grad_output's size."""

    saves = {"grad_output_sym_argsize_minus_1": VALUE,
             "grad_output_sym_argsize_minus_2": VALUE}
    unshown = ("self_info",)
    formulas = (Formula("grad_output", "_adaptive_avg_pool2d(grad, (grad_output_sym_argsize_"
                                       "minus_2, grad_output_sym_argsize_minus_1))"),
                Formula("self", "zeros_like_input(self_info)"))


def _adaptive_avg_pool2d_backward(grad_output: Tensor, input: Tensor) -> Tensor:  # noqa: A002
    """adaptive average pooling's gradient of its input (PyTorch's aten op)."""
    out = Tensor._make(_backward_array(grad_output._data, tuple(input.shape)))
    node = record(AdaptiveAvgPool2DBackwardBackward0, out, grad_output, input)
    if node is not None:
        node._saved.update({"grad_output_sym_argsize_minus_1": grad_output.shape[-1],
                            "grad_output_sym_argsize_minus_2": grad_output.shape[-2],
                            "_self_info": (tuple(input.shape), input.dtype)})
    return out


@on_arrays("_adaptive_avg_pool2d_backward")
def _adaptive_backward_on_arrays(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    return _backward_array(grad, x.shape)


@helper
def last_two_sizes(t: Tensor) -> tuple[int, int]:
    """The output size of an adaptive pooling, from its result."""
    return tuple(t.shape[-2:])


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average (N, C, H, W) or (C, H, W) input down to `output_size` (an int for both
    dims, or (oh, ow) where None keeps that dim's size)."""
    if not isinstance(output_size, (int, np.integer)):
        sizes = tuple(input.shape)
        if len(sizes) <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        output_size = [d if v is None else v
                       for v, d in zip(output_size, sizes[-len(output_size):], strict=False)]
    size = _one("adaptive_avg_pool2d", "output_size", output_size, 2)
    size = size * 2 if len(size) == 1 and isinstance(output_size, (int, np.integer)) else size
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if size[0] < 0 or size[1] < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{{size[0]}, {size[1]}}}")
    if size == (1, 1):  # (PyTorch's shortcut: a mean over the last two dims)
        return input.mean((-1, -2), keepdim=True)
    return _adaptive_avg_pool2d(input, size)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average (N, C, L) or (C, L) input down to `output_size` along the last dim."""
    size = _one("adaptive_avg_pool1d", "output_size", output_size, 2)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    _check1d("adaptive_avg_pool1d", "output_size", size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size[0])).squeeze(-2)


declare("_adaptive_avg_pool2d", nodes=(AdaptiveAvgPool2DBackward0,), aten=_adaptive_avg_pool2d)
declare("_adaptive_avg_pool2d_backward", nodes=(AdaptiveAvgPool2DBackwardBackward0,),
        aten=_adaptive_avg_pool2d_backward)
declare("adaptive_avg_pool1d", function=adaptive_avg_pool1d)
