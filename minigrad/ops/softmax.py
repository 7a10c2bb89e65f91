"""softmax and log_softmax along one dim: the last layer of a classifier.

Both subtract the largest value along the dim before exponentiating (so exp never
overflows), and both save their OUTPUT: the gradient of softmax is written with
softmax itself, `y * (grad - sum(grad * y))`, and that of log_softmax with
`exp(y)`, so neither needs the input again.

float64 and float32 values go through the plain loops of `kernels/softmax.py`; other
float types (float16, bfloat16) through numpy. PyTorch's own kernels call a vector math
library and add in vector lanes, so the last bits can differ, within the float policy.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype
from .._args import is_int, type_name
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, OUTPUT, VALUE, Node, SavedTensor
from ..autograd.record import record
from ..kernels import on_demand
from ..tensor import Tensor, _wrap_dim
from .copies import to_dtype
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, helper, on_arrays
from .tangent_formulas import ZERO, Tangent

kernels = on_demand("softmax")  # (loaded at the first softmax: see `on_demand`)


EXACT = (np.dtype(np.float64), np.dtype(np.float32))  # (the dtypes the kernels take)


def _layout(a: np.ndarray, d: int) -> tuple[np.ndarray, int, int, int]:
    """`a` as one flat C-ordered array, and its shape as (outer, dim, inner) around d."""
    flat = np.ascontiguousarray(a).reshape(-1)
    return flat, math.prod(a.shape[:d]), a.shape[d], math.prod(a.shape[d + 1:])


def _shifted(x: np.ndarray, d: int) -> np.ndarray:
    """x minus its largest value along `d` (-inf - -inf is nan, as in PyTorch)."""
    with np.errstate(invalid="ignore"):
        return x - x.max(axis=d, keepdims=True)


def _softmax_data(x: np.ndarray, d: int) -> np.ndarray:
    """exp(x - max) / sum(exp(x - max)) along d (`kernels/softmax.py`)."""
    if x.dtype in EXACT:
        flat, outer, n, inner = _layout(x, d)
        out = np.empty(x.shape, x.dtype)  # (its own array: a view would be copied later)
        kernels.softmax(flat, out.reshape(-1), outer, n, inner)
        return out
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        e = np.exp(_shifted(x, d))
        return e / e.sum(axis=d, keepdims=True)


def _log_softmax_data(x: np.ndarray, d: int) -> np.ndarray:
    """x - max - log(sum(exp(x - max))), in that order (PyTorch keeps it: adding the
    max to the log first loses digits when the inputs are large and close)."""
    if x.dtype in EXACT:
        flat, outer, n, inner = _layout(x, d)
        out = np.empty(x.shape, x.dtype)
        kernels.log_softmax(flat, out.reshape(-1), outer, n, inner)
        return out
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = x.max(axis=d, keepdims=True)
        log_total = np.log(np.exp(x - m).sum(axis=d, keepdims=True))
        return x - m - log_total


class SoftmaxBackward0(ArrayFormulaNode):
    """softmax(x, dim): grad_x = y * (grad - sum(grad * y, dim)). Saves its OUTPUT."""

    tangent = Tangent("result * (self_t - logsumexp_jvp(self_p, self_t, dim, True))")
    saves = {"dim": VALUE, "result": OUTPUT}
    formulas = (Formula("self", "_softmax_backward_data(grad, result, dim, result.dtype)"),)



class LogSoftmaxBackward0(ArrayFormulaNode):
    """log_softmax(x, dim): grad_x = grad - exp(y) * sum(grad, dim). Saves its OUTPUT."""

    tangent = Tangent("self_t - logsumexp_jvp(self_p, self_t, dim, True)")
    saves = {"dim": VALUE, "result": OUTPUT}
    formulas = (Formula("self", "_log_softmax_backward_data(grad, result, dim, "
                                "result.dtype)"),)



# -- their backward ops ---------------------------------------------------------------------
# A `create_graph=True` backward records them with nodes of their own, whose formulas
# are PyTorch's too. (`input_dtype`: the dtype softmax's input had, kept unshown.)


class _BackwardData(FormulaNode):
    saves = {"dim": VALUE, "grad_output": INPUT, "output": INPUT}
    unshown = ("input_dtype",)


class SoftmaxBackwardDataBackward0(_BackwardData):
    """_softmax_backward_data(grad_output, output, dim) = output * (grad_output -
    sum(grad_output * output, dim))."""

    tangent = Tangent("softmax_backward_data_jvp(grad_output_t, output_t, grad_output_p, "
                      "output_p, dim)")
    formulas = (
        Formula("grad_output", "_softmax_backward_data(grad.to(output.dtype), output, dim, "
                               "input_dtype)"),
        Formula("output", "softmax_double_backward(grad.to(output.dtype), grad_output, dim, "
                          "output).to(output.dtype)"))


class LogSoftmaxBackwardDataBackward0(_BackwardData):
    """_log_softmax_backward_data(grad_output, output, dim) = grad_output -
    exp(output) * sum(grad_output, dim)."""

    tangent = Tangent("log_softmax_backward_data_jvp(grad_output_t, output_t, grad_output_p, "
                      "output_p, dim)")
    formulas = (
        Formula("grad_output", "grad.to(output.dtype) - (grad.to(output.dtype) * "
                               "output.exp()).sum(dim, True)"),
        Formula("output", "(-grad_output.sum(dim, True) * output.exp() * "
                          "grad.to(output.dtype)).to(output.dtype)"))


def _backward_data(node_cls, compute, grad_output: Tensor, output: Tensor, dim: int,
                   input_dtype) -> Tensor:
    y, g = output._data, grad_output._data
    d = _wrap_dim(dim, y.ndim) if y.ndim else 0
    with np.errstate(invalid="ignore", over="ignore"):
        data = compute(g.reshape(1), y.reshape(1), 0).reshape(()) if not y.ndim else \
            compute(g, y, d)
    out = Tensor._make(np.array(data, y.dtype, order="C"))
    node = record(node_cls, out, grad_output, output)
    if node is not None:
        node._saved.update({"dim": u64(dim), "grad_output": SavedTensor(grad_output),
                            "output": SavedTensor(output), "_input_dtype": input_dtype})
    return out


def _grad_operands(g: np.ndarray, y: np.ndarray, d: int) -> tuple:
    """What the backward kernels take: `g` (broadcast to y's shape) and `y` as flat
    C-ordered arrays, a fresh flat output, and the shape as (outer, dim, inner) around d."""
    g_flat, outer, n, inner = _layout(np.broadcast_to(g, y.shape) if g.shape != y.shape
                                      else g, d)
    out = np.empty(y.shape, y.dtype)
    return out, (g_flat, _layout(y, d)[0], out.reshape(-1), outer, n, inner)


@on_arrays("_softmax_backward_data")
def _softmax_backward_data_on_arrays(grad: np.ndarray, output: np.ndarray, dim: int,
                                     input_dtype) -> np.ndarray:
    d = dim % output.ndim if output.ndim else None
    return np.asarray(_softmax_grad(grad, output, d), getattr(input_dtype, "np", input_dtype))


@on_arrays("_log_softmax_backward_data")
def _log_softmax_backward_data_on_arrays(grad: np.ndarray, output: np.ndarray, dim: int,
                                         input_dtype) -> np.ndarray:
    d = dim % output.ndim if output.ndim else None
    return np.asarray(_log_softmax_grad(grad, output, d), getattr(input_dtype, "np", input_dtype))


def _softmax_grad(g: np.ndarray, y: np.ndarray, d: int) -> np.ndarray:
    """(g - sum(g * y)) * y along d."""
    if d is None:  # (a 0-d tensor: its one value is the dim; its own memory, not a view,
        # so that a second stream is added into it as into PyTorch's)
        return _softmax_grad(np.reshape(g, 1), y.reshape(1), 0).reshape(()).copy()
    if y.dtype in EXACT and g.dtype == y.dtype and y.size:
        out, operands = _grad_operands(g, y, d)
        kernels.softmax_backward(*operands)
        return out
    with np.errstate(invalid="ignore", over="ignore"):
        return (g - (g * y).sum(axis=d, keepdims=True)) * y


def _log_softmax_grad(g: np.ndarray, y: np.ndarray, d: int) -> np.ndarray:
    """g - exp(y) * sum(g) along d."""
    if d is None:  # (a 0-d tensor: its one value is the dim; its own memory, not a view,
        # so that a second stream is added into it as into PyTorch's)
        return _log_softmax_grad(np.reshape(g, 1), y.reshape(1), 0).reshape(()).copy()
    if y.dtype in EXACT and g.dtype == y.dtype and y.size:
        out, operands = _grad_operands(g, y, d)
        kernels.log_softmax_backward(*operands)
        return out
    with np.errstate(invalid="ignore", over="ignore"):
        return g - np.exp(y) * g.sum(axis=d, keepdims=True)


def softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int,
                          input_dtype) -> Tensor:
    """The gradient of softmax from its output (PyTorch's aten::_softmax_backward_data)."""
    return _backward_data(SoftmaxBackwardDataBackward0, _softmax_grad, grad_output, output,
                          dim, input_dtype)


def log_softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int,
                              input_dtype) -> Tensor:
    """The gradient of log_softmax from its output (aten::_log_softmax_backward_data)."""
    return _backward_data(LogSoftmaxBackwardDataBackward0, _log_softmax_grad, grad_output,
                          output, dim, input_dtype)




def parse_args(name: str, args: tuple, kwargs: dict, first: int) -> tuple:
    """`dim` and `dtype` of `softmax(input, dim, dtype=None)`, checked as PyTorch's
    argument parser checks them. `first`: the position of `dim` in PyTorch's messages
    (2 for the function, 1 for the method, whose input is `self`)."""
    if not kwargs and 0 < len(args) <= 2 and type(args[0]) is int and (
            len(args) == 1 or isinstance(args[1], _dtype.dtype)):  # (`softmax(x, 1)`)
        return args[0], args[1] if len(args) == 2 else None
    for key in kwargs:
        if key not in ("dim", "dtype"):
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    if len(args) > 2:
        raise TypeError(f"{name}() takes from {first} to {first + 1} positional arguments but "
                        f"{len(args) + first - 1} were given")
    given = dict(zip(("dim", "dtype"), args))
    for key in kwargs:
        if key in given:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
    given.update(kwargs)
    if "dim" not in given:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    dim, dtype = given["dim"], given.get("dtype")
    for i, (key, value, ok) in enumerate((("dim", dim, is_int(dim)),
                                          ("dtype", dtype, dtype is None
                                           or isinstance(dtype, _dtype.dtype)))):
        if not ok:
            where = f" (position {first + i})" if len(args) > i else ""
            kind = "int" if key == "dim" else "minigrad.dtype"
            raise TypeError(f"{name}(): argument '{key}'{where} must be {kind}, not "
                            f"{type_name(value)}")
    return int(dim), dtype


def _run(name: str, node_cls: type[Node], compute, x: Tensor, dim: int, dtype) -> Tensor:
    if dtype is not None:
        x = to_dtype(x, dtype)  # (a conversion PyTorch records as ToCopyBackward0)
    data = x._data
    d = _wrap_dim(dim, data.ndim)
    if data.dtype.kind != "f":
        kernel = "lastdim_kernel_impl" if d == max(data.ndim - 1, 0) else "kernel_impl"
        raise NotImplementedError(f'"{name}_{kernel}" not implemented for '
                                  f"'{x.dtype.type_name}'")
    if data.ndim == 0:
        out_data = compute(data.reshape(1), 0).reshape(())
    elif data.size == 0:
        out_data = np.empty(data.shape, data.dtype)
    else:
        out_data = np.ascontiguousarray(compute(data, d))
    out = Tensor._make(out_data)
    node = record(node_cls, out, x)
    if node is not None:
        node._saved.update({"dim": u64(dim), "_dim": d if data.ndim else None,
                            "result": SavedTensor(out, is_output=True)})
    return out


def softmax(input: Tensor, *args, **kwargs) -> Tensor:  # noqa: A002
    """softmax(input, dim, dtype=None): exp(x) / sum(exp(x)) along `dim` (each slice
    sums to 1); with `dtype`, the input is converted first."""
    dim, dtype = parse_args("softmax", args, kwargs, 2)
    return _run("softmax", SoftmaxBackward0, _softmax_data, input, dim, dtype)


def log_softmax(input: Tensor, *args, **kwargs) -> Tensor:  # noqa: A002
    """log_softmax(input, dim, dtype=None): log(softmax(x)) along `dim`, computed
    without forming the softmax (stable for very negative values)."""
    dim, dtype = parse_args("log_softmax", args, kwargs, 2)
    return _run("log_softmax", LogSoftmaxBackward0, _log_softmax_data, input, dim, dtype)


def softmax_method(self: Tensor, *args, **kwargs) -> Tensor:
    """`x.softmax(dim, dtype=None)`."""
    dim, dtype = parse_args("softmax", args, kwargs, 1)
    return _run("softmax", SoftmaxBackward0, _softmax_data, self, dim, dtype)


def log_softmax_method(self: Tensor, *args, **kwargs) -> Tensor:
    """`x.log_softmax(dim, dtype=None)`."""
    dim, dtype = parse_args("log_softmax", args, kwargs, 1)
    return _run("log_softmax", LogSoftmaxBackward0, _log_softmax_data, self, dim, dtype)


def implicit_dim(name: str, ndim: int, stacklevel: int) -> int:
    """The dim `F.softmax(x)` picks when none is given (0 for 0-, 1- and 3-D input, 1
    otherwise), with PyTorch's deprecation warning."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


# -- declarations: each op's public names (see `declaration.py`) ----------------------------



declare("softmax", nodes=(SoftmaxBackward0,), function=softmax, method=softmax_method)
declare("log_softmax", nodes=(LogSoftmaxBackward0,), function=log_softmax,
        method=log_softmax_method)
declare("_softmax_backward_data", nodes=(SoftmaxBackwardDataBackward0,),
        aten=softmax_backward_data)
declare("_log_softmax_backward_data", nodes=(LogSoftmaxBackwardDataBackward0,),
        aten=log_softmax_backward_data)


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


# softmax_backward_data's slope in its output, applied to `grad` (C++'s order of
# evaluation, as in a formula: see `_AsInCpp`).
_SOFTMAX_DOUBLE_BACKWARD = Formula(
    "output", "grad_output * grad - (output * grad_output).sum(dim, True) * grad "
              "- grad_output * (output * grad).sum(dim, True)")


@helper
def softmax_double_backward(grad: Tensor, grad_output: Tensor, dim: int,
                            output: Tensor) -> Tensor:
    """The gradient of _softmax_backward_data for its output."""
    return _SOFTMAX_DOUBLE_BACKWARD(grad, grad_output=grad_output, dim=dim, output=output)


# -- the helpers this family's tangent formulas call (PyTorch's `*_jvp`) -----------------


def _unsqueeze_dims(t: Tensor, dims: tuple, ndim: int) -> Tensor:
    for d in sorted(dims or range(ndim)):
        t = t.unsqueeze(d)
    return t


@helper
def logsumexp_jvp(self_p: Tensor, self_t: Tensor, dim: int, keepdim: bool) -> Tensor:
    """The tangent of logsumexp along `dim` (softmax's and log_softmax's formulas use
    it): the tangent averaged with the weights exp(x - max) / their sum. In place, as
    PyTorch's (so a backward through such a tangent finds exp's output modified, and
    refuses, as PyTorch's does)."""
    if self_p.dim() == 0:  # (one element, whose weight is 1)
        return logsumexp_jvp(self_p.reshape(1), self_t.reshape(1), 0, keepdim).reshape(())
    if self_p.numel() > 0:
        exp = (self_p - self_p.max(dim, keepdim=True).values).exp()
    else:
        exp = self_p.exp()
    sumexp_p = exp.sum(dim, keepdim)
    exp.mul_(self_t)
    return exp.sum(dim, keepdim).div_(sumexp_p)


@helper
def softmax_backward_data_jvp(grad_output_t, output_t, grad_output: Tensor, output: Tensor,
                              dim: int) -> Tensor:
    """The tangent of `output * (grad_output - sum(grad_output * output, dim))`."""
    out = ZERO
    if grad_output_t is not ZERO:
        out = output * (grad_output_t - (grad_output_t * output).sum(dim, True))
    if output_t is not ZERO:
        out = out + (output_t * (grad_output - (grad_output * output).sum(dim, True))
                     - output * (grad_output * output_t).sum(dim, True))
    return out


@helper
def log_softmax_backward_data_jvp(grad_output_t, output_t, grad_output: Tensor,
                                  output: Tensor, dim: int) -> Tensor:
    """The tangent of `grad_output - exp(output) * sum(grad_output, dim)`."""
    exp = output.exp()
    out = ZERO
    if grad_output_t is not ZERO:
        out = grad_output_t - exp * grad_output_t.sum(dim, True)
    if output_t is not ZERO:
        out = out - exp * output_t * grad_output.sum(dim, True)
    return out
