"""conv1d and conv2d: one op, `convolution`, and its node ConvolutionBackward0.

A convolution slides a small weight over the input and takes a dot product at every
position. The kernels (`kernels/convolution.py`) turn it into one matrix product:
every window of the input becomes a column (`unfold`), and the weight, one row per
output channel, multiplies the columns.

**The gradient of a convolution is itself a convolution.** For y = conv(x, w):
* the gradient of x sends each output gradient back through the weight into the
  window it came from: a *transposed* convolution of `grad` with the same `w`
  (`fold(w.T @ grad)`), the windows that overlap adding up;
* the gradient of w is the input's windows weighted by the output gradient: a
  convolution of `x` with `grad` playing the kernel (`grad @ unfold(x).T`);
* the gradient of the bias is `grad` summed over everything but the channels.

So a `create_graph=True` backward calls one op for all three, `convolution_backward`
(PyTorch's name), which records ConvolutionBackwardBackward0; its own gradients
(`convolution_double_backward`, below) are convolutions again, built as PyTorch's C++
builds them (a transposed convolution for the input, a convolution over the batch
for the weight), so even a third derivative records PyTorch's graph. Transposed
convolutions exist here for that only (there is no conv_transpose2d).
"""

from __future__ import annotations

import numpy as np

from .._warn import Once, warn_user
from ..arrays.quiet import quietly
from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..kernels import on_demand
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, helper, on_arrays
from .joining import cat
from .padding import constant_pad_nd
from .tangent_formulas import ZERO, Tangent, dense

kernels = on_demand("convolution")  # (loaded at the first convolution: see `on_demand`)

_TYPE = {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}
_TENSOR_TYPE = {"float32": "FloatTensor", "float64": "DoubleTensor", "int64": "LongTensor",
                "bool": "BoolTensor"}


# -- the arithmetic, on arrays -----------------------------------------------------------------


def _as_2d(x: np.ndarray, dims: int) -> np.ndarray:
    """A 1-D convolution's (N, C, L) array as a 2-D one's (N, C, 1, L)."""
    return x[:, :, None, :] if dims == 1 else x


def _pairs(stride: tuple, padding: tuple, dilation: tuple, dims: int) -> tuple:
    """(sh, sw, ph, pw, dh, dw): the 2-D parameters (a 1-D convolution has a height
    of 1, stride 1, no padding)."""
    if dims == 1:
        return 1, stride[0], 0, padding[0], 1, dilation[0]
    return stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1]


def output_size(size: int, k: int, s: int, p: int, d: int) -> int:
    """How many positions a window of `k` elements, `d` apart, takes in `size`
    elements padded by `p` on each side, moving by `s`."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _columns(x: np.ndarray, kh: int, kw: int, params: tuple, oh: int, ow: int) -> np.ndarray:
    """Every window of `x` (N, C, H, W) as a column: (N, C * kh * kw, oh * ow)."""
    n, c = x.shape[:2]
    cols = np.empty((n, c * kh * kw, oh * ow), x.dtype)
    kernels.unfold(np.ascontiguousarray(x), kh, kw, *params, oh, ow, cols)
    return cols


def convolution_arrays(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: tuple,
                       padding: tuple, dilation: tuple, groups: int) -> np.ndarray:
    """conv(x, w) + b for (N, C, L) or (N, C, H, W) arrays: per group of channels,
    the weight's rows times the input's windows."""
    dims = w.ndim - 2
    x4, w4 = _as_2d(x, dims), _as_2d(w, dims)
    params = _pairs(stride, padding, dilation, dims)
    n, _, h, wd = x4.shape
    out_ch, in_per_group, kh, kw = w4.shape
    oh = output_size(h, kh, params[0], params[2], params[4])
    ow = output_size(wd, kw, params[1], params[3], params[5])
    cols = _columns(x4, kh, kw, params, oh, ow)
    rows = in_per_group * kh * kw  # (each group's share of the columns' rows)
    per_group = out_ch // groups
    weight = w4.reshape(groups, per_group, rows)
    out = np.empty((n, out_ch, oh * ow), np.result_type(x, w))
    for g in range(groups):
        # (inf times 0 is nan, silently, as in PyTorch)
        out[:, g * per_group:(g + 1) * per_group] = quietly(
            np.matmul, weight[g], cols[:, g * rows:(g + 1) * rows])
    if b is not None:
        out += b[:, None]
    return out.reshape((n, out_ch) + ((ow,) if dims == 1 else (oh, ow)))


def transposed_arrays(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: tuple,
                      padding: tuple, dilation: tuple, output_padding: tuple,
                      groups: int) -> np.ndarray:
    """The transposed convolution of `x` (N, C_in, ...) with `w` (C_in, C_out / groups,
    ...): what a convolution with weight `w` sends back to its input, the input's
    gradient of `convolution_arrays` (each side `output_padding` longer)."""
    dims = w.ndim - 2
    size = tuple((x.shape[2 + i] - 1) * stride[i] - 2 * padding[i]
                 + dilation[i] * (w.shape[2 + i] - 1) + output_padding[i] + 1
                 for i in range(dims))
    shape = (x.shape[0], w.shape[1] * groups) + size
    like = np.broadcast_to(np.zeros((), x.dtype), shape)  # (its shape is all that is read)
    out = convolution_backward_arrays(x, like, w, stride, padding, dilation, groups,
                                      (True, False, False))[0]
    if b is not None:
        out += b.reshape((1, -1) + (1,) * dims)
    return out


def transposed_backward_arrays(grad: np.ndarray, x: np.ndarray, w: np.ndarray, stride: tuple,
                               padding: tuple, dilation: tuple, groups: int,
                               mask: tuple) -> tuple:
    """The gradients of a transposed convolution: the input's is a convolution of
    `grad` with the weight, the weight's that of a convolution of `grad` whose output
    gradient was `x`."""
    gx = gw = gb = None
    if mask[0]:
        gx = convolution_arrays(grad, w, None, stride, padding, dilation, groups)
    if mask[1]:
        gw = convolution_backward_arrays(x, grad, w, stride, padding, dilation, groups,
                                         (False, True, False))[1]
    if mask[2]:
        gb = np.array(grad.sum(axis=(0,) + tuple(range(2, grad.ndim))), grad.dtype)
    return gx, gw, gb


def convolution_backward_arrays(grad: np.ndarray, x: np.ndarray, w: np.ndarray, stride: tuple,
                                padding: tuple, dilation: tuple, groups: int,
                                mask: tuple) -> tuple:
    """The gradients of input, weight and bias (those `mask` asks for) as arrays:
    the input's a transposed convolution of `grad` with the weight (`fold`), the
    weight's a product of `grad` with the input's windows, the bias's a sum."""
    dims = w.ndim - 2
    x4, w4, g4 = _as_2d(x, dims), _as_2d(w, dims), _as_2d(grad, dims)
    params = _pairs(stride, padding, dilation, dims)
    n, channels = x4.shape[:2]
    out_ch, in_per_group, kh, kw = w4.shape
    oh, ow = g4.shape[2:]
    rows = in_per_group * kh * kw
    per_group = out_ch // groups
    g = np.ascontiguousarray(g4).reshape(n, out_ch, oh * ow)
    weight = w4.reshape(groups, per_group, rows)
    gx = gw = gb = None
    if mask[0]:
        grad_cols = np.empty((n, channels * kh * kw, oh * ow), grad.dtype)
        for k in range(groups):
            grad_cols[:, k * rows:(k + 1) * rows] = quietly(
                np.matmul, weight[k].T, g[:, k * per_group:(k + 1) * per_group])
        gx = np.zeros(x4.shape, grad.dtype)
        kernels.fold(grad_cols, kh, kw, *params, oh, ow, gx)
        gx = gx.reshape(x.shape)
    if mask[1]:
        cols = _columns(x4, kh, kw, params, oh, ow)
        gw = np.empty((groups, per_group, rows), grad.dtype)
        for k in range(groups):
            # (one product per image, then their sum: BLAS reads the transposed
            # columns in place, where one big product would first copy both operands)
            gw[k] = quietly(np.matmul, g[:, k * per_group:(k + 1) * per_group],
                            cols[:, k * rows:(k + 1) * rows].transpose(0, 2, 1)).sum(axis=0)
        gw = gw.reshape(w.shape)
    if mask[2]:
        gb = np.array(g.sum(axis=(0, 2)), grad.dtype)
    return gx, gw, gb


# -- PyTorch's checks ----------------------------------------------------------------------------


def _dims_list(values: tuple) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


def _expand(name: str, value: tuple, dims: int) -> tuple:
    """A parameter of one value stands for every dim; otherwise it needs one per dim."""
    if len(value) == 1:
        return value * dims
    if len(value) != dims:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dims} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={_dims_list(value)}")
    return value


def _check(input: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple,  # noqa: A002
           padding: tuple, dilation: tuple, groups: int) -> None:
    """PyTorch's checks of a convolution's arguments and shapes, in its order."""
    x, w = input._data, weight._data
    dims = w.ndim - 2
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(d < 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if x.ndim != w.ndim:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional "
                           f"weight {_dims_list(w.shape)}, but got {x.ndim}-dimensional input "
                           f"of size {_dims_list(x.shape)} instead")
    sizes = _dims_list(w.shape)
    if w.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {sizes} instead")
    if w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{sizes}] instead")
    if x.shape[1] != w.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {sizes}, expected "
                           f"input{_dims_list(x.shape)} to have {w.shape[1] * groups} channels, "
                           f"but got {x.shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != w.shape[0]):
        raise RuntimeError(f"Given weight of size {sizes}, expected bias to be 1-dimensional "
                           f"with {w.shape[0]} elements, but got bias of size "
                           f"{_dims_list(bias.shape)} instead")
    padded = tuple(x.shape[2 + i] + 2 * padding[i] for i in range(dims))
    kernel = tuple(dilation[i] * (w.shape[2 + i] - 1) + 1 for i in range(dims))
    if any(k > p for k, p in zip(kernel, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                           f"than actual input size")
    if input.dtype is not weight.dtype:
        if input.dtype.name == "float64" or not input.dtype.is_floating_point:
            raise RuntimeError(f"expected scalar type {input.dtype.type_name} but found "
                               f"{weight.dtype.type_name}")
        raise RuntimeError(f"Input type (minigrad.{_TENSOR_TYPE[input.dtype.name]}) and weight "
                           f"type (minigrad.{_TENSOR_TYPE[weight.dtype.name]}) should be the same "
                           f"or input should be a MKLDNN tensor and weight is a dense tensor")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_TYPE[input.dtype.name]}) and bias type "
                           f"({_TYPE[bias.dtype.name]}) should be the same")
    if any(d == 0 for d in dilation):
        # (PyTorch's float32 convolutions (oneDNN) and its others check this apart;
        # the latter see a 1-D convolution as a 2-D one of height 1)
        if input.dtype.name == "float32":
            raise RuntimeError("non-positive dilation is not supported")
        raise RuntimeError(f"dilation should be greater than zero, but got "
                           f"{_dims_list((1, *dilation) if dims == 1 else dilation)}")


def _check_transposed(input: Tensor, weight: Tensor, bias: Tensor | None,  # noqa: A002
                      output_padding: tuple, stride: tuple, dilation: tuple,
                      groups: int) -> None:
    """The checks of a transposed convolution minigrad makes (it has no public
    conv_transpose: only a double backward makes one)."""
    x, w = input._data, weight._data
    if x.ndim != w.ndim or x.shape[1] != w.shape[0] or w.shape[0] % groups:
        raise RuntimeError(f"Given transposed=1, weight of size {_dims_list(w.shape)}, expected "
                           f"input{_dims_list(x.shape)} to have {w.shape[0]} channels, but got "
                           f"{x.shape[1]} channels instead")
    if bias is not None and bias.shape != (w.shape[1] * groups,):
        raise RuntimeError("a transposed convolution's bias must have one value per "
                           "output channel")
    if any(p >= max(s, d) for p, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError("output padding must be smaller than either stride or dilation")


# -- the nodes -----------------------------------------------------------------------------------

_BACKWARD = ("convolution_backward(grad, input, weight, bias_sym_sizes_opt, stride, padding, "
             "dilation, transposed, output_padding, groups, grad_input_mask)")
_DOUBLE = ("convolution_double_backward(grads[0], grads[1], grads[2], grad_output, weight, "
           "input, stride, padding, dilation, transposed, output_padding, groups, "
           "grad_input_mask)")


class ConvolutionBackward0(ArrayFormulaNode):
    """conv(input, weight) + bias: the input's gradient is a transposed convolution of
    grad with the weight, the weight's a convolution of the input with grad, the
    bias's grad summed over all but the channels. Saves the INPUT, the WEIGHT and the
    parameters."""

    tangent = Tangent("convolution_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, "
                      "stride, padding, dilation, transposed, output_padding, groups)")
    saves = {"bias_sym_sizes_opt": VALUE, "dilation": VALUE, "groups": VALUE,
             "input": INPUT, "output_padding": VALUE, "padding": VALUE, "stride": VALUE,
             "transposed": VALUE, "weight": INPUT}
    formulas = (Formula("input, weight, bias", _BACKWARD),)


@on_arrays("convolution_backward")
def _convolution_backward_on_arrays(grad: np.ndarray, input: np.ndarray,  # noqa: A002
                                    weight: np.ndarray, bias_sizes: tuple, stride: tuple,
                                    padding: tuple, dilation: tuple, transposed: bool,
                                    output_padding: tuple, groups: int,
                                    output_mask: tuple) -> tuple:
    """`convolution_backward` on arrays, the plain backward's: the kernels' fused
    passes (`convolution_backward_arrays`), for the gradients `output_mask` asks for."""
    dims = weight.ndim - 2
    # (PyTorch saves the parameters as given: one value may stand for every dim)
    full = [_expand(name, value, dims) for name, value in
            (("stride", stride), ("padding", padding), ("dilation", dilation))]
    compute = transposed_backward_arrays if transposed else convolution_backward_arrays
    return compute(grad, input, weight, *full, groups, tuple(output_mask))


class ConvolutionBackwardBackward0(FormulaNode):
    """convolution_backward: the gradients of a convolution's input, weight and bias
    (outputs 0, 1, 2) from grad_output. Each is linear in grad_output and in the
    weight or input, so their gradients are convolutions again
    (`convolution_double_backward`). Saves grad_output, input, weight, the parameters."""

    saves = {"dilation": VALUE, "grad_output": INPUT, "groups": VALUE, "input": INPUT,
             "output_padding": VALUE, "padding": VALUE, "stride": VALUE, "transposed": VALUE,
             "weight": INPUT}
    formulas = (Formula("grad_output, input, weight", _DOUBLE),)

    def _num_outputs(self) -> int:
        return 3


@helper
def convolution_double_backward(ggI: Tensor | None, ggW: Tensor | None, ggb: Tensor | None,  # noqa: N803
                                gO: Tensor, weight: Tensor, input: Tensor, stride: tuple,  # noqa: A002,N803
                                padding: tuple, dilation: tuple, transposed: bool,
                                output_padding: tuple, groups: int, mask: tuple) -> tuple:
    """The gradients of convolution_backward's grad_output, input and weight, given
    those of its outputs (ggI, ggW, ggb: the gradients of the input's, weight's and
    bias's gradients), each one a convolution again, as PyTorch's C++ computes them:
    * grad_output: conv(ggI, weight) + conv(input, ggW) + ggb at every position;
    * weight: a convolution of ggI with gO over the batch (both transposed so the batch
      is the dim summed over; stride and dilation swap roles), one per group;
    * input: a transposed convolution of gO with ggW."""
    conv, _ = _ops()
    dims = weight.ndim - 2
    stride, padding, dilation = (tuple(v) * dims if len(v) == 1 else tuple(v)
                                 for v in (stride, padding, dilation))
    output_padding = tuple(output_padding) * dims if len(output_padding) == 1 \
        else tuple(output_padding)
    args = (stride, padding, dilation, transposed, output_padding, groups)
    ggO = gI = gW = None  # noqa: N806
    if input.numel() != 0:
        if ggI is not None:
            ggO = conv(ggI, weight, None, *args)  # noqa: N806
        if ggW is not None:
            term = conv(input, ggW, None, *args)
            ggO = term if ggO is None else ggO + term  # noqa: N806
    if ggb is not None:
        shape = (1, ggb.shape[0]) + (1,) * (gO.ndim - 2)
        expanded = ggb.contiguous().view(shape).expand(tuple(gO.shape))
        ggO = expanded if ggO is None else ggO + expanded  # noqa: N806
    if ggI is not None:
        gW = _weight_term(conv, ggI, gO, weight, padding, stride, dilation, transposed,  # noqa: N806
                          output_padding, groups, input.numel() != 0)
    if ggW is not None and input.numel() != 0:
        gI = _input_term(conv, gO, ggW, weight, input, stride, padding, dilation,  # noqa: N806
                         transposed, output_padding, groups)
    return ggO, gI, gW


def _weight_term(conv, ggI: Tensor, gO: Tensor, weight: Tensor, padding: tuple,  # noqa: N803
                 stride: tuple, dilation: tuple, transposed: bool, output_padding: tuple,
                 groups: int, any_input: bool) -> Tensor | None:
    """conv(ggI, gO) over the batch: the batch becomes the channels (transpose 0, 1),
    stride and dilation swap, each group on its own; then transposed back and cut to
    the weight's size (a stride leaves the convolution a little larger)."""
    if not any_input:
        return None
    gOt, ggIt = gO.transpose(0, 1), ggI.transpose(0, 1)  # noqa: N806
    params = (dilation, padding, stride, False, output_padding, 1)
    if groups == 1:
        gWt = conv(gOt, ggIt, None, *params) if transposed else conv(ggIt, gOt, None, *params)  # noqa: N806
    else:
        parts = []
        for g in range(groups):
            ggIt_g, gOt_g = _subvariable(ggIt, groups, g), _subvariable(gOt, groups, g)  # noqa: N806
            parts.append(conv(gOt_g, ggIt_g, None, *params) if transposed
                         else conv(ggIt_g, gOt_g, None, *params))
        gWt = cat(parts, 1)  # noqa: N806
    gW = gWt.transpose(0, 1)  # noqa: N806
    for i in range(2, gW.ndim):
        if gW.shape[i] > weight.shape[i]:
            gW = gW.narrow(i, 0, weight.shape[i])  # noqa: N806
    return gW


def _input_term(conv, gO: Tensor, ggW: Tensor, weight: Tensor, input: Tensor,  # noqa: A002,N803
                stride: tuple, padding: tuple, dilation: tuple, transposed: bool,
                output_padding: tuple, groups: int) -> Tensor:
    """A transposed convolution of gO with ggW (an ordinary one for a transposed
    convolution), its output padded to the input's size where the strides left it
    short."""
    if transposed:
        return conv(gO, ggW, None, stride, padding, dilation, False, output_padding, groups)
    extra = []
    for i in range(weight.ndim - 2):
        expected = ((weight.shape[2 + i] - 1) * dilation[i] - 2 * padding[i]
                    + stride[i] * (gO.shape[2 + i] - 1) + 1)
        extra.append(input.shape[2 + i] - expected if expected != input.shape[2 + i]
                     else output_padding[i])
    return conv(gO, ggW, None, stride, padding, dilation, True, tuple(extra), groups)


def _subvariable(t: Tensor, groups: int, g: int) -> Tensor:
    """Group `g`'s share of dim 0 (as a narrow, as PyTorch's)."""
    n = t.shape[0] // groups
    return t.narrow(0, n * g, n)


@helper
def convolution_jvp(input_p: Tensor, input_t, weight_p: Tensor, weight_t, bias_p, bias_t,  # noqa: ARG001
                    stride: tuple, padding: tuple, dilation: tuple, transposed: bool,
                    output_padding: tuple, groups: int):
    """The tangent of a convolution (forward mode): it is linear in the input and in
    the weight and bias together, so conv(input_t, weight) + conv(input, weight_t) +
    bias_t; ZERO for an input without a tangent."""
    args = (stride, padding, dilation, transposed, output_padding, groups)
    out = ZERO
    if input_t is not ZERO:
        out = convolution(input_t, weight_p, None, *args)
    if weight_t is not ZERO or bias_t is not ZERO:
        term = convolution(input_p, dense(weight_t, weight_p), None if bias_t is ZERO else bias_t,
                           *args)
        out = term if out is ZERO else out + term
    return out




def _ops() -> tuple:
    return convolution, convolution_backward


# -- the ops ---------------------------------------------------------------------------------------


def _int_tuple(value, name: str, op: str) -> tuple:
    """An int or a sequence of ints, as a tuple (PyTorch's `int[]` arguments)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, (tuple, list)) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        return tuple(int(v) for v in value)
    raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not "
                    f"{type(value).__name__}")


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding,  # noqa: A002
                dilation, transposed: bool, output_padding, groups: int) -> Tensor:
    """A 1-D or 2-D convolution of `input` (N, C, ...) with `weight` (O, C / groups,
    ...) plus `bias` (O); `stride`, `padding`, `dilation` as tuples of ints. Records
    ConvolutionBackward0 (PyTorch's aten::convolution)."""
    w = weight._data
    if w.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    dims = w.ndim - 2
    if dims > 2:
        raise NotImplementedError("minigrad has 1-D and 2-D convolutions only")
    stride, padding, dilation, output_padding = (
        tuple(stride), tuple(padding), tuple(dilation), tuple(output_padding))
    full = [_expand(name, value, dims) for name, value in
            (("stride", stride), ("padding", padding), ("dilation", dilation),
             ("output_padding", output_padding))]
    b = None if bias is None else bias._data
    if transposed:  # (only a double backward makes one: see convolution_double_backward)
        _check_transposed(input, weight, bias, full[3], full[0], full[2], groups)
        out = Tensor._make(transposed_arrays(input._data, w, b, *full[:3], full[3], groups))
    else:
        _check(input, weight, bias, full[0], full[1], full[2], groups)
        out = Tensor._make(convolution_arrays(input._data, w, b, *full[:3], groups))
    node = record(ConvolutionBackward0, out, input, weight, bias)
    if node is not None:
        node._saved.update({
            "bias_sym_sizes_opt": (0,) if bias is None else tuple(bias.shape),
            "dilation": dilation, "groups": groups, "input": SavedTensor(input),
            "output_padding": output_padding, "padding": padding, "stride": stride,
            "transposed": bool(transposed), "weight": SavedTensor(weight)})
    return out


def convolution_backward(grad_output: Tensor, input: Tensor, weight: Tensor,  # noqa: A002
                         bias_sizes, stride, padding, dilation, transposed: bool,
                         output_padding, groups: int, output_mask) -> tuple:
    """The gradients of a convolution's input, weight and bias (those `output_mask`
    asks for; None for the others), recorded as one node,
    ConvolutionBackwardBackward0, whose outputs they are (PyTorch's
    aten::convolution_backward)."""
    dims = weight._data.ndim - 2
    full = [_expand(name, tuple(value), dims) for name, value in
            (("stride", stride), ("padding", padding), ("dilation", dilation))]
    mask = tuple(bool(m) for m in output_mask)
    compute = transposed_backward_arrays if transposed else convolution_backward_arrays
    arrays = compute(grad_output._data, input._data, weight._data, *full, groups, mask)
    outs = tuple(None if a is None else Tensor._make(a) for a in arrays)
    node = record(ConvolutionBackwardBackward0, None, grad_output, input, weight)
    if node is not None:
        for i, out in enumerate(outs):
            if out is not None:
                out._grad_fn, out._output_nr = node, i
        node._saved.update({
            "dilation": tuple(dilation), "grad_output": SavedTensor(grad_output),
            "groups": groups, "input": SavedTensor(input),
            "output_padding": tuple(output_padding), "padding": tuple(padding),
            "stride": tuple(stride), "transposed": bool(transposed),
            "weight": SavedTensor(weight)})
    return outs


def _convolution_nd(op: str, dims: int, input: Tensor, weight: Tensor,  # noqa: A002
                    bias: Tensor | None, stride, padding, dilation, groups: int) -> Tensor:
    """conv1d / conv2d: the checks of their argument forms, then `convolution` on the
    batch (an unbatched input gets a batch dim of 1 there and back, as in PyTorch:
    UnsqueezeBackward0, SqueezeBackward1)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, ...)")
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to "
                           f"{op}, but got input of size: {_dims_list(input.shape)}")

    def as_param(value, name: str) -> tuple:
        # (an int stands for every dim of the op's own, `int[2] stride=1`)
        t = _int_tuple(value, name, op)
        return t * dims if isinstance(value, (int, np.integer)) else t

    stride_t = as_param(stride, "stride")
    dilation_t = as_param(dilation, "dilation")
    output_padding = (0,) * dims
    batched = input.ndim == dims + 2
    x = input if batched else input.unsqueeze(0)
    if isinstance(padding, str):
        padding_t, output_padding, pad_nd = _padding_mode(padding, x, weight, bias, stride_t,
                                                          dilation_t, groups, dims)
        if pad_nd is not None:  # (the input padded on one side first)
            x = constant_pad_nd(x, pad_nd, 0)
    else:
        padding_t = as_param(padding, "padding")
    out = convolution(x, weight, bias, stride_t, padding_t, dilation_t, False, output_padding,
                      groups)
    return out if batched else out.squeeze(0)


def _padding_mode(padding: str, x: Tensor, weight: Tensor, bias: Tensor | None,
                  stride: tuple, dilation: tuple, groups: int, dims: int) -> tuple:
    """The padding 'valid' (none) or 'same' (the output as long as the input: half the
    dilated kernel's extent on each side) stands for, the output padding PyTorch
    passes with it, and the amounts to pad the input by first (`constant_pad_nd`'s),
    or None; for 'same', PyTorch's checks of the batched input `x`, in its order."""
    if padding == "valid":
        return (0,), (0,), None
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    k = weight.ndim
    if k < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if k != x.ndim:
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight"
                           f"{_dims_list(weight.shape)}, but got {x.ndim}-dimensional input "
                           f"of size {_dims_list(x.shape)} instead")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dil = dilation * dims if len(dilation) == 1 else dilation
    total = [d * (k - 1) for d, k in zip(dil, weight.shape[2:])]
    padding_t = tuple(t // 2 for t in total)
    if not any(t % 2 for t in total):
        return padding_t, (0,) * dims, None
    # An odd extent (an even kernel, an odd dilation): as PyTorch, pad the input on the
    # right by the one left over (constant_pad_nd, which lists the last dim first),
    # then convolve with the rest on both sides.
    if _PADDED_COPY.due():
        warn_user("Using padding='same' with even kernel lengths and odd dilation may "
                  "require a zero-padded copy of the input be created")
    pad_nd = [0] * (2 * dims)
    for i, t in enumerate(total):
        pad_nd[2 * (dims - 1 - i) + 1] = t % 2
    return padding_t, (0,) * dims, tuple(pad_nd)


_PADDED_COPY = Once()  # (PyTorch warns once per process)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,  # noqa: A002
           padding=0, dilation=1, groups: int = 1) -> Tensor:
    """A 1-D convolution of `input` (N, C, L) or (C, L) with `weight` (O, C / groups, k),
    plus `bias` (O); `padding` may be 'valid' or 'same'."""
    return _convolution_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,  # noqa: A002
           padding=0, dilation=1, groups: int = 1) -> Tensor:
    """A 2-D convolution of `input` (N, C, H, W) or (C, H, W) with `weight`
    (O, C / groups, kh, kw), plus `bias` (O); `padding` may be 'valid' or 'same'."""
    return _convolution_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------------

declare("convolution", nodes=(ConvolutionBackward0,), function=convolution)
declare("conv1d", function=conv1d)  # (both record convolution's node)
declare("conv2d", function=conv2d)
declare("convolution_backward", nodes=(ConvolutionBackwardBackward0,),
        aten=convolution_backward)
