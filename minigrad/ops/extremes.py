"""amax, amin and logsumexp: the largest or smallest element over dims, and its smooth
version, log(sum(exp(x))).

Unlike max(dim), amax and amin reduce several dims at once and return no indices,
so their gradient cannot go to one picked element: it is shared evenly by every
element equal to the result (`scale_grad_by_count`). logsumexp's gradient is the
softmax of its input, `exp(self - result)`, times the gradient.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._args import is_int, type_name
from ..arrays.layout import element_strides, laid_out_as, spread_strides, step_layout
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, helper, named, on_arrays
from .reductions import unsqueeze_multiple
from .tangent_formulas import Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the reductions.)
OP_FAMILY = "reductions"


def _dim_list(name: str, dim) -> tuple[int, ...]:
    """`dim` as PyTorch's `int[1]` argument takes it: an int or a tuple/list of ints."""
    if is_int(dim):
        return (int(dim),)
    if isinstance(dim, (tuple, list)) and all(is_int(d) for d in dim):
        return tuple(int(d) for d in dim)
    raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, not {type_name(dim)}")


def _wrapped(dims: tuple, ndim: int) -> tuple[int, ...]:
    """The dims wrapped and checked (every dim when none are given)."""
    if not dims:
        return tuple(range(ndim))
    wrapped = [_wrap_dim(d, ndim) for d in dims]
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(wrapped) if ndim else ()


# -- the helpers of amax's and amin's formulas (PyTorch's FunctionsManual) -------------


def _restored_shape(sizes: tuple, dims: tuple) -> tuple:
    total = len(sizes) + len(dims)
    target = [0] * total
    for d in dims:
        target[d % total if total else 0] = 1
    rest = iter(sizes)
    return tuple(t if t else next(rest) for t in target)


@helper
def restore_reduced_dims(output: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    """A reduction's output reshaped with its reduced dims put back as size 1."""
    if keepdim:
        return output
    return output.reshape(_restored_shape(tuple(output.shape), tuple(dims)))


@on_arrays("restore_reduced_dims")
def _restore_reduced_dims(output: np.ndarray, dims: tuple, keepdim: bool) -> np.ndarray:
    if keepdim:
        return output
    return output.reshape(_restored_shape(output.shape, tuple(dims)))


@helper
def scale_grad_by_count(grad: Tensor, mask: Tensor, dims: tuple) -> Tensor:
    """The gradient shared evenly by the elements `mask` marks, in each reduced slice."""
    return (grad / mask.sum(tuple(dims), True)) * mask


@on_arrays("scale_grad_by_count")
def _scale_grad_by_count(grad: np.ndarray, mask: np.ndarray, dims: tuple) -> np.ndarray:
    axes = tuple(dims) if dims else None
    count = mask.sum(axis=axes, keepdims=True) if mask.ndim else mask.astype(np.int64)
    with np.errstate(all="ignore"):  # (no element equal to a NaN result: 0 / 0, as PyTorch)
        # (an array even of 0-d ones, where numpy makes a scalar: a stream is added into it)
        return np.asarray((grad / count.astype(grad.dtype)) * mask)


@on_arrays("eq")
def _eq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.equal(a, b)


@helper
def amaxamin_jvp(x: Tensor, dx: Tensor, result: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    """amax's and amin's tangent: the mean of the tangent over the elements equal to
    the result."""
    mask = x == restore_reduced_dims(result, dims, keepdim)
    where = named("where")
    return where(mask, dx, 0.0).sum(tuple(dims), keepdim) / mask.sum(tuple(dims), keepdim)


# -- amax and amin ----------------------------------------------------------------------


class _ExtremeOver(ArrayFormulaNode):
    """amax/amin: the gradient is shared evenly by the elements equal to the result, in
    each reduced slice. Saves the dims, keepdim, its INPUT and its OUTPUT."""

    tangent = Tangent("amaxamin_jvp(self_p, self_t, result, dim, keepdim)")
    saves = {"dim": VALUE, "keepdim": VALUE, "result": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "scale_grad_by_count(restore_reduced_dims(grad, dim, keepdim), "
                                "eq(restore_reduced_dims(result, dim, keepdim), self), dim)"),)


class AmaxBackward0(_ExtremeOver):
    __doc__ = _ExtremeOver.__doc__


class AminBackward0(_ExtremeOver):
    __doc__ = _ExtremeOver.__doc__


def _extreme_over(name: str, input: Tensor, dim, keepdim: bool, node_cls, reduce) -> Tensor:  # noqa: A002
    given = _dim_list(name, dim)
    if not isinstance(keepdim, bool):
        raise TypeError(f"{name}(): argument 'keepdim' must be bool, not {type_name(keepdim)}")
    a = input._data
    dims = _wrapped(given, a.ndim)
    if not given and a.size == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument.")
    for d, shown in zip(dims, given):  # (the message shows the dim as given: -1)
        if a.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {shown} to have non-zero size.")
    data = reduce(a, axis=dims, keepdims=keepdim) if a.ndim else a.copy()
    out = Tensor._make(np.array(data, a.dtype, order="C"))
    node = record(node_cls, out, input)
    if node is not None:
        node._saved.update({"dim": tuple(u64(d) for d in given), "keepdim": keepdim,
                            "result": SavedTensor(out, is_output=True),
                            "self": SavedTensor(input)})
    return out


def amax(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:  # noqa: A002
    """The largest element over `dim` (every dim by default); NaN wins."""
    return _extreme_over("amax", input, dim, keepdim, AmaxBackward0, np.max)


def amin(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:  # noqa: A002
    """The smallest element over `dim` (every dim by default); NaN wins."""
    return _extreme_over("amin", input, dim, keepdim, AminBackward0, np.min)


# -- aminmax: both at once, two outputs of one node ---------------------------------------


def _aminmax_type():
    from collections import namedtuple

    base = namedtuple("aminmax", ["min", "max"])

    def __repr__(self) -> str:
        return f"minigrad.return_types.aminmax(\nmin={self.min!r},\nmax={self.max!r})"

    return type("aminmax", (base,), {"__slots__": (), "__repr__": __repr__,
                                     "__module__": "minigrad.return_types"})


aminmax_result = _aminmax_type()


@helper
def aminmax_backward(self: Tensor, dim, keepdim: bool, grads: list, min: Tensor,  # noqa: A002
                     max: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """aminmax's gradient: amin's of the first output's gradient plus amax's of the
    second's (either may be missing)."""
    dims = () if dim is None else (dim,)
    result = None
    for g, extreme in zip(grads, (min, max)):
        if g is not None:
            part = scale_grad_by_count(restore_reduced_dims(g, dims, keepdim),
                                       restore_reduced_dims(extreme, dims, keepdim) == self,
                                       dims)
            result = part if result is None else result + part
    return result


class AminmaxBackward0(FormulaNode):
    """aminmax: amin's gradient plus amax's. Saves the dim, keepdim, its OUTPUTS (max,
    min) and its INPUT."""

    saves = {"dim": VALUE, "keepdim": VALUE, "max": OUTPUT, "min": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "aminmax_backward(self, dim, keepdim, grads, min, max)"),)

    def _num_outputs(self) -> int:
        return 2


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False):  # noqa: A002
    """(amin, amax) over `dim` (one dim, or every dim by default), in one call."""
    a = input._data
    if dim is None and a.size == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                           "the operation has no identity.")
    if dim is not None:
        d = _wrap_dim(dim, a.ndim)
        if a.ndim and a.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    dims = tuple(range(a.ndim)) if dim is None else ((_wrap_dim(dim, a.ndim),) if a.ndim
                                                     else ())
    keep = keepdim and (dim is not None or a.ndim > 0)
    lo = np.min(a, axis=dims, keepdims=keep) if a.ndim else a.copy()
    hi = np.max(a, axis=dims, keepdims=keep) if a.ndim else a.copy()
    if dim is None and keepdim and a.ndim:
        lo, hi = lo.reshape((1,) * a.ndim), hi.reshape((1,) * a.ndim)
    low = Tensor._make(np.array(lo, a.dtype, order="C"))
    high = Tensor._make(np.array(hi, a.dtype, order="C"))
    node = record(AminmaxBackward0, low, input)
    if node is not None:
        high._grad_fn, high._output_nr = node, 1
        node._saved.update({"dim": None if dim is None else u64(dim), "keepdim": keepdim,
                            "max": SavedTensor(high, is_output=True),
                            "min": SavedTensor(low, is_output=True),
                            "self": SavedTensor(input)})
    return aminmax_result(low, high)


# -- logsumexp --------------------------------------------------------------------------


@helper
def logsumexp_backward(grad: Tensor, self: Tensor, result: Tensor, dims: tuple,
                       keepdim: bool) -> Tensor:
    """logsumexp's gradient: the gradient times softmax(self), exp(self - result)."""
    if not keepdim and self.dim() != 0:
        grad = unsqueeze_multiple(grad, dims, self.dim())
        result = unsqueeze_multiple(result, dims, self.dim())
    return grad * (self - result).exp()


@on_arrays("logsumexp_backward")
def _logsumexp_backward(grad: np.ndarray, self: np.ndarray, result: np.ndarray,
                        dims: tuple, keepdim: bool) -> np.ndarray:
    if self.ndim > 1 and self.size:  # (laid out step by step as PyTorch's formula)
        axes = tuple(d % self.ndim for d in dims)
        spread = [as_strided(a, self.shape, [s * a.itemsize for s in spread_strides(
            a.shape, element_strides(a), axes, keepdim, self.shape)]) for a in (grad, result)]
        model = step_layout(spread[0], step_layout(step_layout(self, spread[1])),
                            dtype=grad.dtype)  # grad * (self - result).exp()
    if not keepdim and self.ndim != 0:
        axes = sorted(d % self.ndim for d in dims)
        grad, result = np.expand_dims(grad, axes), np.expand_dims(result, axes)
    with np.errstate(all="ignore"):
        out = np.asarray(grad * np.exp(self - result))  # (0-d: an array, not a scalar)
    return laid_out_as(out, model) if self.ndim > 1 and self.size else out


@helper
def logsumexp_dims_jvp(self_p: Tensor, self_t: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    """logsumexp's tangent over a list of dims (PyTorch's logsumexp_jvp; the helper
    of that name beside softmax takes softmax's one dim): the tangent averaged with
    the weights exp(x - amax) / their sum, in place as PyTorch's."""
    if self_p.numel() > 0:
        exp = (self_p - self_p.amax(tuple(dims), True)).exp()
    else:
        exp = self_p.exp()
    sumexp_p = exp.sum(tuple(dims), keepdim)
    exp.mul_(self_t)
    return exp.sum(tuple(dims), keepdim).div_(sumexp_p)


class LogsumexpBackward0(ArrayFormulaNode):
    """logsumexp(dim): the gradient times exp(self - result), the softmax of the
    input. Saves the dims, keepdim, its INPUT and its OUTPUT."""

    tangent = Tangent("logsumexp_dims_jvp(self_p, self_t, dim, keepdim)")
    saves = {"dim": VALUE, "keepdim": VALUE, "result": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "logsumexp_backward(grad, self, result, dim, keepdim)"),)


_NO_DIM = object()  # (PyTorch's own message when `dim` is left out)


def logsumexp(input: Tensor, dim=_NO_DIM, keepdim: bool = False) -> Tensor:  # noqa: A002
    """log(sum(exp(x))) over `dim`, computed without overflow: the largest element
    is taken out first (an infinite one is not). Integer inputs give float32."""
    if dim is _NO_DIM:
        raise TypeError('logsumexp() missing 1 required positional arguments: "dim"')
    given = _dim_list("logsumexp", dim)
    if not isinstance(keepdim, bool):
        raise TypeError("logsumexp(): argument 'keepdim' must be bool, not "
                        f"{type_name(keepdim)}")
    a = input._data
    if a.dtype.kind != "f":
        a = a.astype(np.float32)
    dims = _wrapped(given, a.ndim)
    if a.ndim == 0:
        data = a.copy()
    elif a.size == 0:
        with np.errstate(divide="ignore"):
            data = np.log(np.sum(np.exp(a), axis=dims, keepdims=keepdim))
    else:
        top = np.max(a, axis=dims, keepdims=True)
        top = np.where(np.isinf(top), a.dtype.type(0), top)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            total = np.sum(np.exp(a - top), axis=dims, keepdims=True)
            data = np.log(total) + top
        if not keepdim:
            data = data.squeeze(dims)
    out = Tensor._make(np.array(data, a.dtype, order="C"))
    node = record(LogsumexpBackward0, out, input)
    if node is not None:
        node._saved.update({"dim": tuple(u64(d) for d in given), "keepdim": keepdim,
                            "result": SavedTensor(out, is_output=True),
                            "self": SavedTensor(input)})
    return out


# -- declarations: each op's public names (see `declaration.py`) ----------------------------

declare("amax", nodes=(AmaxBackward0,), function=amax, method=True)
declare("amin", nodes=(AminBackward0,), function=amin, method=True)
declare("aminmax", nodes=(AminmaxBackward0,), function=aminmax, method=True)
declare("logsumexp", nodes=(LogsumexpBackward0,), function=logsumexp, method=True)
