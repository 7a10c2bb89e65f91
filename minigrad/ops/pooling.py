"""max_pool2d and avg_pool2d, and their nodes MaxPool2DWithIndicesBackward0 and
AvgPool2DBackward0.

Pooling shrinks each plane of an (N, C, H, W) input by summarising every window:
* max pooling keeps the window's largest element and where it was (its index within
  the plane: the "indices", the op's second output). Backward sends each gradient to
  that one element; elements never the largest get zero.
* average pooling divides the window's sum by its size; backward spreads each
  gradient evenly over the window.

Both backward passes are linear in `grad`, so their own gradients are simple again:
the gradient of max pooling's backward picks `grad` at the indices (a gather), and
that of average pooling's backward is average pooling itself.
"""

from __future__ import annotations

import numpy as np

from .._creation import empty, zeros
from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..kernels import on_demand
from ..tensor import Tensor
from .copies import zero_
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, helper, on_arrays
from .scatter import gather
from .tangent_formulas import ZERO, Tangent

kernels = on_demand("pooling")  # (loaded at the first pooling: see `on_demand`)


# -- PyTorch's argument forms and checks ---------------------------------------------------------


def _pair(op: str, name: str, value, *, may_omit: bool = False) -> tuple:
    """kernel_size, stride, padding, dilation: one int (for both dims) or one or two
    ints; stride may be omitted (None: the kernel size)."""
    if value is None and may_omit:
        return ()
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * 2
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not "
                        f"{type(value).__name__}")
    value = tuple(int(v) for v in value)
    if len(value) not in ((0, 1, 2) if may_omit else (1, 2)):
        what = {"kernel_size": "kernel_size must either be a single int",
                "stride": "stride must either be omitted, a single int",
                "padding": "padding must either be a single int",
                "dilation": "dilation must be either a single int"}[name]
        raise RuntimeError(f"{op}: {what}, or a tuple of two ints")
    return value


def _both(value: tuple, default: tuple = ()) -> tuple:
    """(height, width) from a parameter as given: one value stands for both."""
    if not value:
        return default
    return value * 2 if len(value) == 1 else value


def pooled_size(size: int, k: int, pad: int, stride: int, dilation: int,
                ceil_mode: bool) -> int:
    """How many windows fit along one dim (rounded up with `ceil_mode`, but never a
    window starting in the right padding), with PyTorch's checks of the parameters."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > int(((k - 1) * dilation + 1) / 2):  # (C++'s division, towards zero)
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={k} and dilation={dilation}")
    out = (size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)) \
        // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _dims_list(shape: tuple) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _output_shape(input: Tensor, k: tuple, s: tuple, p: tuple, d: tuple,  # noqa: A002
                  ceil_mode: bool) -> tuple:
    """The pooled planes' (height, width), after PyTorch's checks of the shapes."""
    shape = input.shape
    oh = pooled_size(shape[-2], k[0], p[0], s[0], d[0], ceil_mode)
    ow = pooled_size(shape[-1], k[1], p[1], s[1], d[1], ceil_mode)
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} "
                           f"kW: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                           f"dilationW: {d[1]}")
    if input.ndim not in (3, 4) or any(n == 0 for n in shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{_dims_list(shape)}")
    if oh < 1 or ow < 1:
        planes, h, w = shape[-3:]
        raise RuntimeError(f"Given input size: ({planes}x{h}x{w}). Calculated output size: "
                           f"({planes}x{oh}x{ow}). Output size is too small")
    return oh, ow


def _planes(x: np.ndarray) -> np.ndarray:
    """(N, C, H, W) or (C, H, W) as contiguous planes (P, H, W)."""
    return np.ascontiguousarray(x).reshape(-1, x.shape[-2], x.shape[-1])


def _no_bool(input: Tensor, kernel: str) -> None:  # noqa: A002
    """PyTorch's pooling kernels take floats and integers, but not bool."""
    if input.dtype.type_name == "Bool":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


# -- max pooling -----------------------------------------------------------------------------------


class MaxPool2DWithIndicesBackward0(ArrayFormulaNode):
    """max_pool2d: each output's gradient goes to the element its window's maximum
    came from (`result1`, the indices), added up where windows share a maximum.
    Saves the INPUT and the indices (its second OUTPUT)."""

    tangent = Tangent("max_pool_jvp(self_t, result1, result)")
    # (result1, the indices, is the op's second output; it needs no gradient, so it is
    # kept as a plain tensor and comes back without a grad_fn, as PyTorch's)
    saves = {"ceil_mode": VALUE, "dilation": VALUE, "kernel_size": VALUE, "padding": VALUE,
             "result1": OUTPUT, "self": INPUT, "stride": VALUE}
    formulas = (Formula("self", "max_pool2d_with_indices_backward(grad, self, kernel_size, "
                                "stride, padding, dilation, ceil_mode, result1)"),)


@on_arrays("max_pool2d_with_indices_backward")
def _max_pool_backward_on_arrays(grad: np.ndarray, input: np.ndarray, kernel_size: tuple,  # noqa: A002
                                 stride: tuple, padding: tuple, dilation: tuple,
                                 ceil_mode: bool, indices: np.ndarray) -> np.ndarray:
    """`max_pool2d_with_indices_backward` on arrays, the plain backward's: the
    indices say where each gradient goes; of the input, only its shape is read."""
    return max_pool_backward_array(grad, indices, input.shape)


def max_pool_backward_array(grad: np.ndarray, indices: np.ndarray, shape: tuple) -> np.ndarray:
    """Each gradient added to the element of the plane its maximum came from."""
    planes = _planes(grad)
    out = np.zeros((planes.shape[0], shape[-2] * shape[-1]), grad.dtype)
    kernels.max_pool_backward(planes, _planes(indices), out)
    return out.reshape(shape)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
                            dilation=1, ceil_mode: bool = False, return_indices: bool = True,
                            *, op: str = "max_pool2d") -> tuple[Tensor, Tensor]:
    """The largest element of every window of each plane, and its index in the plane
    (row * width + column)."""
    k = _pair(op, "kernel_size", kernel_size)
    s = _pair(op, "stride", stride, may_omit=True)
    p = _pair(op, "padding", padding)
    d = _pair(op, "dilation", dilation)
    if input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    kh, kw = _both(k)
    sh, sw = _both(s, (kh, kw))
    ph, pw = _both(p)
    dh, dw = _both(d)
    oh, ow = _output_shape(input, (kh, kw), (sh, sw), (ph, pw), (dh, dw), ceil_mode)
    _no_bool(input, "max_pool2d")
    shape = input.shape[:-2] + (oh, ow)
    planes = _planes(input._data)
    out = np.empty((planes.shape[0], oh, ow), planes.dtype)
    indices = np.empty((planes.shape[0], oh, ow), np.int64)
    lowest = np.iinfo(planes.dtype).min if planes.dtype.kind == "i" else -np.inf
    kernels.max_pool(planes, kh, kw, sh, sw, ph, pw, dh, dw, lowest, out, indices)
    result, where = Tensor._make(out.reshape(shape)), Tensor._make(indices.reshape(shape))
    node = record(MaxPool2DWithIndicesBackward0, result, input)
    if node is not None:
        node._saved.update({"ceil_mode": bool(ceil_mode), "dilation": d, "kernel_size": k,
                            "padding": p, "result1": SavedTensor(where),
                            "self": SavedTensor(input), "stride": s})
    return result, where


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """The largest element of every window (kh, kw) of each plane of `input`
    (N, C, H, W) or (C, H, W); with `return_indices`, also where each was."""
    out, indices = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return (out, indices) if return_indices else out


class MaxPool2DWithIndicesBackwardBackward0(FormulaNode):
    """max_pool2d_with_indices_backward: linear in grad_output, whose gradient picks
    `grad` at the indices (`max_pool_double_backward`); the input's is zero. Saves
    the indices (and of the input, its shape only)."""

    saves = {"indices": INPUT}
    unshown = ("self_info",)
    formulas = (Formula("grad_output", "max_pool_double_backward(grad, indices, 2)"),
                Formula("self", "zeros_like_input(self_info)"))


@helper
def zeros_like_input(info: tuple) -> Tensor:
    """PyTorch's `zeros_like(self)` in a formula, from the input's (shape, dtype): an
    empty tensor zeroed in place (so at version 1, as PyTorch's C++ makes it)."""
    shape, dtype = info
    return zero_(empty(shape, dtype=dtype))


@helper
def max_pool_double_backward(grad: Tensor, indices: Tensor, dim: int) -> Tensor:
    """The gradient of max pooling's backward: `grad`'s element at each index (a
    gather over the flattened planes)."""
    if indices.numel() == 0:
        return zeros(tuple(indices.shape), dtype=grad.dtype)
    size = tuple(indices.shape[:indices.ndim - dim]) + (-1,)
    picked = gather(grad.contiguous().view(size), -1, indices.view(size))
    return picked.view(tuple(indices.shape))


def max_pool2d_with_indices_backward(grad_output: Tensor, input: Tensor, kernel_size,  # noqa: A002
                                     stride, padding, dilation, ceil_mode: bool,
                                     indices: Tensor) -> Tensor:
    """max_pool2d's gradient of its input (PyTorch's aten op of that name), recorded
    as MaxPool2DWithIndicesBackwardBackward0."""
    out = Tensor._make(max_pool_backward_array(grad_output._data, indices._data,
                                               tuple(input.shape)))
    node = record(MaxPool2DWithIndicesBackwardBackward0, out, grad_output, input)
    if node is not None:
        node._saved.update({"indices": SavedTensor(indices),
                            "_self_info": (tuple(input.shape), input.dtype)})
    return out


# -- average pooling ----------------------------------------------------------------------------


def _avg_parameters(input: Tensor, kernel_size, stride, padding, ceil_mode: bool,  # noqa: A002
                    divisor_override) -> tuple:
    """avg_pool2d's parameters as given (what the node saves) and for both dims, and
    the output's shape, after PyTorch's checks."""
    k = _pair("avg_pool2d", "kernel_size", kernel_size)
    s = _pair("avg_pool2d", "stride", stride, may_omit=True)
    p = _pair("avg_pool2d", "padding", padding)
    if input.ndim < 3:
        n = input.ndim
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, "
                         f"{max(n, 1) - 1}], but got -3)")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kh, kw = _both(k)
    sh, sw = _both(s, (kh, kw))
    ph, pw = _both(p)
    oh, ow = _output_shape(input, (kh, kw), (sh, sw), (ph, pw), (1, 1), ceil_mode)
    _no_bool(input, "avg_pool2d")
    return (k, s, p), (kh, kw, sh, sw, ph, pw), input.shape[:-2] + (oh, ow)


class AvgPool2DBackward0(ArrayFormulaNode):
    """avg_pool2d: each output's gradient, divided as forward divided, spread over its
    window. Saves the INPUT (for its shape) and the parameters."""

    tangent = Tangent("avg_pool_jvp(self_t, kernel_size, stride, padding, ceil_mode, "
                      "count_include_pad, divisor_override)", linear=True)
    saves = {"ceil_mode": VALUE, "count_include_pad": VALUE, "divisor_override": VALUE,
             "kernel_size": VALUE, "padding": VALUE, "self": INPUT, "stride": VALUE}
    formulas = (Formula("self", "avg_pool2d_backward(grad, self, kernel_size, stride, padding, "
                                "ceil_mode, count_include_pad, divisor_override)"),)


@on_arrays("avg_pool2d_backward")
def _avg_pool_backward_on_arrays(grad: np.ndarray, input: np.ndarray, kernel_size: tuple,  # noqa: A002
                                 stride: tuple, padding: tuple, ceil_mode: bool,
                                 count_include_pad: bool, divisor_override) -> np.ndarray:
    """`avg_pool2d_backward` on arrays, the plain backward's (of the input, only its
    shape is read)."""
    return avg_pool_backward_array(grad, input.shape, kernel_size, stride, padding,
                                   count_include_pad, divisor_override)


def avg_pool_backward_array(grad: np.ndarray, shape: tuple, k: tuple, s: tuple, p: tuple,
                            count_include_pad: bool, divisor_override) -> np.ndarray:
    """Each gradient, divided as forward divided, added over its window."""
    kh, kw = _both(k)
    sh, sw = _both(s, (kh, kw))
    ph, pw = _both(p)
    planes = _planes(grad)
    out = np.zeros((planes.shape[0], shape[-2], shape[-1]), grad.dtype)
    kernels.avg_pool_backward(planes, kh, kw, sh, sw, ph, pw, bool(count_include_pad),
                              int(divisor_override or 0), out)
    return out.reshape(shape)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of every window (kh, kw) of each plane of `input` (N, C, H, W) or
    (C, H, W): the window's sum divided by `divisor_override`, or by its size (the
    padding it covers counted, if `count_include_pad`)."""
    given, (kh, kw, sh, sw, ph, pw), shape = _avg_parameters(
        input, kernel_size, stride, padding, ceil_mode, divisor_override)
    planes = _planes(input._data)
    out = np.empty((planes.shape[0],) + shape[-2:], planes.dtype)
    kernels.avg_pool(planes, kh, kw, sh, sw, ph, pw, bool(count_include_pad),
                     int(divisor_override or 0), planes.dtype.kind == "i", out)
    result = Tensor._make(out.reshape(shape))
    node = record(AvgPool2DBackward0, result, input)
    if node is not None:
        k, s, p = given
        node._saved.update({"ceil_mode": bool(ceil_mode),
                            "count_include_pad": bool(count_include_pad),
                            "divisor_override": divisor_override, "kernel_size": k,
                            "padding": p, "self": SavedTensor(input), "stride": s})
    return result


class AvgPool2DBackwardBackward0(FormulaNode):
    """avg_pool2d_backward: linear in grad_output, whose gradient is average pooling
    of `grad` itself; the input's is zero. Saves the parameters (and of the input,
    its shape only)."""

    saves = {"ceil_mode": VALUE, "count_include_pad": VALUE, "divisor_override": VALUE,
             "kernel_size": VALUE, "padding": VALUE, "stride": VALUE}
    unshown = ("self_info",)
    formulas = (Formula("grad_output", "avg_pool2d(grad, kernel_size, stride, padding, "
                                       "ceil_mode, count_include_pad, divisor_override)"),
                Formula("self", "zeros_like_input(self_info)"))


def avg_pool2d_backward(grad_output: Tensor, input: Tensor, kernel_size, stride, padding,  # noqa: A002
                        ceil_mode: bool, count_include_pad: bool, divisor_override) -> Tensor:
    """avg_pool2d's gradient of its input (PyTorch's aten op of that name), recorded
    as AvgPool2DBackwardBackward0."""
    out = Tensor._make(avg_pool_backward_array(grad_output._data, tuple(input.shape),
                                               tuple(kernel_size), tuple(stride),
                                               tuple(padding), count_include_pad,
                                               divisor_override))
    node = record(AvgPool2DBackwardBackward0, out, grad_output, input)
    if node is not None:
        node._saved.update({"ceil_mode": bool(ceil_mode),
                            "count_include_pad": bool(count_include_pad),
                            "divisor_override": divisor_override,
                            "kernel_size": tuple(kernel_size), "padding": tuple(padding),
                            "stride": tuple(stride),
                            "_self_info": (tuple(input.shape), input.dtype)})
    return out


# -- forward mode ---------------------------------------------------------------------------------


@helper
def max_pool_jvp(self_t, indices: Tensor, result: Tensor):
    """max pooling's tangent: the input's tangent at each maximum's place."""
    if self_t is ZERO:
        return ZERO
    picked = gather(self_t.flatten(-2), -1, indices.flatten(-2))
    return picked.view(tuple(result.shape))


@helper
def avg_pool_jvp(self_t, kernel_size, stride, padding, ceil_mode: bool,
                 count_include_pad: bool, divisor_override):
    """average pooling's tangent: average pooling of the input's tangent (it is linear)."""
    if self_t is ZERO:
        return ZERO
    return avg_pool2d(self_t, kernel_size, stride, padding, ceil_mode, count_include_pad,
                      divisor_override)




# -- declarations: each op's public names (see `declaration.py`) ---------------------------------

declare("max_pool2d", nodes=(MaxPool2DWithIndicesBackward0,), function=max_pool2d)
declare("max_pool2d_with_indices_backward", nodes=(MaxPool2DWithIndicesBackwardBackward0,),
        aten=max_pool2d_with_indices_backward)
# (avg_pool2d is nn.functional's only, but AvgPool2DBackwardBackward0's formula calls it)
declare("avg_pool2d", nodes=(AvgPool2DBackward0,), aten=avg_pool2d)
declare("avg_pool2d_backward", nodes=(AvgPool2DBackwardBackward0,), aten=avg_pool2d_backward)
