"""nansum, nanmean and count_nonzero: sums that leave NaNs out, and counting.

nansum is a sum with every NaN read as 0, so its gradient is sum's, 0 at the NaNs.
nanmean is nansum divided by how many elements were not NaN, written (as PyTorch
writes it) with those two ops, so its `grad_fn` is the division's, DivBackward0.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._args import combination_error, is_int, type_name
from .._dtype import to_dtype
from ..arrays.layout import element_strides, laid_out_as, spread_strides, step_layout
from ..arrays.scalars import u64
from ..arrays.summing import add_up
from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor
from .declaration import declare
from .extremes import _dim_list, _wrapped
from .formulas import ArrayFormulaNode, Formula, helper, named, on_arrays
from .tangent_formulas import Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the reductions.)
OP_FAMILY = "reductions"

_TYPE_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}


def _optional_dims(name: str, dim) -> tuple[int, ...] | None:
    """PyTorch's `int[1]? dim`: None, an int or a tuple/list of ints."""
    return None if dim is None else _dim_list(name, dim)


# -- nansum ---------------------------------------------------------------------------


@helper
def nansum_backward(grad: Tensor, self: Tensor, dims, keepdim: bool) -> Tensor:
    """nansum's gradient: sum's, times 0 at the NaNs (`self == self` is false there)."""
    if grad.dtype != self.dtype:  # (PyTorch's `grad.to(self.scalar_type())`)
        grad = grad.to(self.dtype)
    spread = named("sum_backward")(grad, tuple(self.shape), dims or (), keepdim) \
        if dims else grad.expand(tuple(self.shape))
    return spread * (self == self)


@on_arrays("nansum_backward")
def _nansum_backward(grad: np.ndarray, self: np.ndarray, dims, keepdim: bool) -> np.ndarray:
    grad = grad.astype(self.dtype, copy=False)
    model = None
    if self.ndim > 1 and self.size:  # (laid out as PyTorch's spread gradient * the mask)
        axes = tuple(d % self.ndim for d in dims) if dims else tuple(range(self.ndim))
        spread = as_strided(grad, self.shape, [s * grad.itemsize for s in spread_strides(
            grad.shape, element_strides(grad), axes, keepdim, self.shape)])
        model = step_layout(spread, step_layout(self))  # sum_backward(...) * ~isnan(self)
    if dims and not keepdim and self.ndim:
        grad = np.expand_dims(grad, tuple(sorted(d % self.ndim for d in dims)))
    out = np.asarray(np.broadcast_to(grad, self.shape) * ~np.isnan(self))  # (0-d: an array)
    return out if model is None else laid_out_as(out, model)


class NansumBackward0(ArrayFormulaNode):
    """nansum: the gradient broadcast back over the summed dims, 0 at the NaNs. Saves
    the dims, keepdim and its INPUT."""

    tangent = Tangent("nansum_jvp(self_p, self_t, dim, keepdim)")
    saves = {"dim": VALUE, "keepdim": VALUE, "self": INPUT}
    formulas = (Formula("self", "nansum_backward(grad, self, dim, keepdim)"),)


@helper
def nansum_jvp(self_p: Tensor, self_t: Tensor, dims, keepdim: bool) -> Tensor:
    """nansum's tangent: `where(self_p.isnan(), 0, self_t).sum(dim, keepdim)`."""
    masked = named("where")(self_p != self_p, 0.0, self_t)
    return masked.sum(tuple(dims), keepdim) if dims else masked.sum((), keepdim)


def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """The sum over `dim` (every dim by default) with each NaN read as 0."""
    given = _optional_dims("nansum", dim)
    if not isinstance(keepdim, bool):
        raise TypeError(f"nansum(): argument 'keepdim' must be bool, not {type_name(keepdim)}")
    a = input._data
    if dtype is not None:
        a = a.astype(to_dtype(dtype).np)
    dims = _wrapped(given or (), a.ndim)
    if a.dtype.kind == "f":
        data = add_up(np.where(np.isnan(a), a.dtype.type(0), a), dims, keepdim)
    else:
        data = add_up(a, dims, keepdim, dtype=np.int64)
    out = Tensor._make(np.array(data, order="C"))
    node = record(NansumBackward0, out, input)
    if node is not None:
        node._saved.update({"dim": None if given is None else tuple(u64(d) for d in given),
                            "keepdim": keepdim, "self": SavedTensor(input)})
    return out


# -- nanmean --------------------------------------------------------------------------


def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """The mean over `dim` of the elements that are not NaN: nansum divided by their
    count (DivBackward0, as PyTorch's)."""
    if input._data.dtype.kind != "f":
        raise RuntimeError("nanmean(): expected input to have floating point or complex "
                           f"dtype but got {_TYPE_NAMES[input._data.dtype.name]}")
    given = _optional_dims("nanmean", dim)
    counted = (input == input).sum(None if given is None else given, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype).div(counted)


# -- count_nonzero --------------------------------------------------------------------


# (PyTorch's two signatures, as its argument error lists them; the method's without input)
_COUNT_NONZERO = ["Tensor input, int dim = None", "Tensor input, tuple of ints dim"]


def count_nonzero(input: Tensor, *args, **kwargs) -> Tensor:  # noqa: A002
    """How many elements are not zero, over `dim` (every dim by default)."""
    return _count_nonzero(input, args, kwargs, _COUNT_NONZERO, (input,))


def count_nonzero_method(self: Tensor, *args, **kwargs) -> Tensor:
    """`t.count_nonzero(dim)`."""
    heads = [h.removeprefix("Tensor input, ") for h in _COUNT_NONZERO]
    return _count_nonzero(self, args, kwargs, heads, ())


def _count_nonzero(input: Tensor, args: tuple, kwargs: dict, heads: list,  # noqa: A002
                   given: tuple) -> Tensor:
    dim = args[0] if args else kwargs.get("dim")
    if (len(args) > 1 or set(kwargs) - {"dim"} or (args and kwargs)
            or not (dim is None or is_int(dim) or isinstance(dim, (tuple, list)))):
        raise combination_error("count_nonzero", given + args, kwargs, heads, tail=False)
    a = input._data
    dims = _wrapped(_optional_dims("count_nonzero", dim) or (), a.ndim)
    counted = np.count_nonzero(a, axis=dims) if a.ndim else np.count_nonzero(a)
    return Tensor._make(np.array(counted, np.int64, order="C"))


# -- declarations: each op's public names (see `declaration.py`) ----------------------------

declare("nansum", nodes=(NansumBackward0,), function=nansum, method=True)
declare("nanmean", function=nanmean, method=True)
declare("count_nonzero", function=count_nonzero, method=count_nonzero_method)
