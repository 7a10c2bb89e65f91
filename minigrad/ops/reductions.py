"""sum, mean, max, min: over the whole tensor or along dimensions."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import _dtype
from .._args import combination_error, is_int, type_name, unpack_error, view_shape
from .._creation import tensor
from .._dtype import result_type
from ..arrays.broadcasting import broadcast_shape
from ..arrays.layout import element_strides, empty_result, fresh_result, spread_strides
from ..arrays.scalars import u64
from ..arrays.summing import add_up, whole_sum
from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor, bump_version
from ..autograd.record import record
from ..grad_mode import STATE
from ..kernels import reductions as R
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, Scalar, helper, named, on_arrays
from .public_forms import tensor_first
from .tangent_formulas import Tangent


class _AllDims:
    """The default `dim` of sum and mean. PyTorch records `x.sum()` as SumBackward0
    but `x.sum(dim=None)` as SumBackward1 (with `_saved_dim` None), so minigrad must
    tell "no dim given" apart from an explicit None."""

    def __repr__(self) -> str:
        return "<all dims>"


ALL_DIMS = _AllDims()


# The signatures PyTorch lists when a call to sum or mean fits none of them, and max's
# and min's.
_SUM_HEADS = ["*, minigrad.dtype dtype = None",
              "tuple of ints dim, bool keepdim = False, *, minigrad.dtype dtype = None"]
_MAX_HEADS = ["", "Tensor other", "int dim, bool keepdim = False"]
_NO_DIM = object()


def _dim_and_keepdim(name: str, args: tuple, dim, keepdim, default, ints_only: bool):
    """`dim` and `keepdim` given positionally (`x.sum(0, True)`) or by keyword, checked
    as PyTorch's argument parser checks them: an int or (unless `ints_only`) a tuple
    or list of ints for dim, a bool for keepdim; anything else gets PyTorch's error."""
    kwargs = {}
    if dim is not default:
        kwargs["dim"] = dim
    if keepdim is not False:
        kwargs["keepdim"] = keepdim
    heads = _MAX_HEADS if ints_only else _SUM_HEADS
    if len(args) > 2:
        if ints_only:
            raise combination_error(name, args, kwargs, heads, tail=False)
        raise TypeError(f"{name}() takes from 1 to 2 positional arguments but {len(args)} "
                        "were given")
    for arg in ("dim", "keepdim")[:len(args)]:
        if arg in kwargs:
            if ints_only and arg == "keepdim":  # (max/min's parser: no signature fits)
                raise combination_error(name, args, kwargs, heads, tail=False)
            raise TypeError(f"{name}() got multiple values for argument '{arg}'")
    if args:
        dim = args[0]
        if len(args) == 2:
            keepdim = args[1]
    if dim is not default:  # (sum's and mean's None means every dim)
        if isinstance(dim, (list, tuple)) and not ints_only:
            for i, d in enumerate(dim):
                if not is_int(d):
                    raise unpack_error(name, "dim", i + 1, "type must be tuple of ints,but "
                                       f"got {type_name(d)}")
        elif not (is_int(dim) or (dim is None and not ints_only)):
            raise combination_error(name, args, kwargs, heads, tail=False)
    if not isinstance(keepdim, bool):
        where = " (position 2)" if len(args) == 2 else ""
        raise TypeError(f"{name}(): argument 'keepdim'{where} must be bool, not "
                        f"{type_name(keepdim)}")
    return dim, keepdim


def _no_dim_keepdim(name: str) -> TypeError:
    """PyTorch's error for `sum(keepdim=True)` / `mean(keepdim=True)`: keepdim needs a dim."""
    return TypeError(
        f"{name}() received an invalid combination of arguments - got (keepdim=bool, ), "
        "but expected one of:\n * (*, minigrad.dtype dtype = None)\n"
        " * (tuple of ints dim, bool keepdim = False, *, minigrad.dtype dtype = None)\n"
    )


def _dims(dim, ndim: int) -> tuple[int, ...]:
    """The dims to reduce over, wrapped and checked. None or an empty list means every
    dim; a 0-d tensor accepts dim 0 (or -1) and has nothing to reduce."""
    dims = () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return tuple(range(ndim))
    wrapped = [_wrap_dim(d, ndim) for d in dims]
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(wrapped) if ndim else ()


def _saved_dim(dim):
    """`_saved_dim` as PyTorch reports it: a tuple of (unsigned) dims, or None."""
    if dim is None:
        return None
    return tuple(u64(d) for d in ((dim,) if isinstance(dim, int) else dim))


def _expand_back(grad: np.ndarray, shape: tuple, dims: tuple, keepdim: bool) -> np.ndarray:
    """Broadcast a reduced gradient back over the reduced dims."""
    if not keepdim:
        for d in sorted(dims):
            grad = np.expand_dims(grad, d)
    # (nothing to broadcast: numpy's broadcast_to would give the size-1 dims stride 0,
    # where PyTorch's expand keeps them, which decides whether a leaf keeps the gradient)
    if grad.shape != shape:
        return np.broadcast_to(grad, shape)
    view = np.asarray(grad).view()  # (read-only, as broadcast_to's)
    view.flags.writeable = False
    return view


def _sum_dtype(x: Tensor):
    # Integer and bool sums are int64, like PyTorch.
    return x._data.dtype if x._data.dtype.kind == "f" else np.dtype(np.int64)


@on_arrays("sum", method=True)
def _sum_all(a: np.ndarray) -> np.ndarray:
    """`t.sum()`, in PyTorch's order of additions."""
    return add_up(a, tuple(range(a.ndim)))


@on_arrays("sum_backward")
def _sum_backward(grad: np.ndarray, sizes: tuple, dim, keepdim: bool) -> np.ndarray:
    """`sum_backward` on an array: the gradient broadcast back over the summed dims."""
    return _expand_back(grad, sizes, _dims(dim, len(sizes)), keepdim)


@on_arrays("mean_backward")
def _mean_backward(grad: np.ndarray, sizes: tuple, dim, numel: int,
                   keepdim: bool) -> np.ndarray:
    """`mean_backward` on an array: a full array (not `sum`'s spread-out view: PyTorch
    divides the spread-out gradient, which makes a new tensor, one a leaf can keep as
    its `.grad`)."""
    if not dim:
        # (The share is divided in Python floats, cheaper than numpy's 0-d arithmetic
        # and the same bits in float32 too: a double quotient of float32 values,
        # rounded to float32, is the correctly rounded float32 quotient.)
        share = grad.item() / float(grad.dtype.type(numel)) if numel else 0.0
        return np.full(sizes, share, grad.dtype)
    dims = _dims(dim, len(sizes))
    count = int(np.prod([sizes[d] for d in dims]))
    if 0 in sizes:  # (no elements: laid out as PyTorch's spread-out gradient / count)
        spread = spread_strides(grad.shape, element_strides(grad), dims, keepdim, sizes)
        return empty_result(tuple(sizes), grad.dtype, (tuple(sizes), spread), ((), ()))
    spread_out = _expand_back(grad / grad.dtype.type(count), sizes, dims, keepdim)
    return np.array(spread_out, copy=True, order="C")


class SumBackward0(ArrayFormulaNode):
    """sum(): every element gets the incoming (scalar) gradient."""

    tangent = Tangent("self_t.sum()", linear=True)

    saves = {"self_sym_sizes": VALUE}
    formulas = (Formula("self", "grad.expand(self_sym_sizes)"),)
    exact = True  # (a float sum keeps its input's dtype; other sums need no gradient)


class SumBackward1(ArrayFormulaNode):
    """sum(dim): the gradient is broadcast back along the summed dims."""

    tangent = Tangent("self_t.sum(dim, keepdim)", linear=True)

    saves = {"dim": VALUE, "keepdim": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "sum_backward(grad, self_sym_sizes, dim, keepdim)"),)


def _sum_input(x: Tensor, dtype) -> tuple[np.ndarray, np.dtype]:
    """The values `sum` adds and the dtype of its result: x's (integers and bools
    give int64), or, with `dtype`, x's converted to it first (PyTorch refuses an
    integer or bool result for an x that requires grad)."""
    if dtype is None:
        return x._data, _sum_dtype(x)
    dt = _dtype.to_dtype(dtype).np
    if dt.kind != "f" and x._requires_grad and STATE.grad_enabled:
        raise RuntimeError(f"Autograd not support dtype: {_dtype.from_numpy_dtype(dt).type_name}")
    return x._data.astype(dt, copy=False), dt


def sum(x: Tensor, *args, dim=ALL_DIMS, keepdim: bool = False, dtype=None) -> Tensor:  # noqa: A001
    """Sum of all elements, or along `dim` (an int, a tuple of ints, or None or () for
    every dim, which keeps the dims with `keepdim=True`); with `dtype`, of the elements
    converted to it first."""
    if args or dim is not ALL_DIMS or keepdim is not False:
        dim, keepdim = _dim_and_keepdim("sum", args, dim, keepdim, ALL_DIMS, False)
    a, dt = _sum_input(x, dtype)
    if dim is ALL_DIMS:
        if keepdim:
            raise _no_dim_keepdim("sum")
        out = Tensor._make(add_up(a, tuple(range(a.ndim)), dtype=dt))
        node = record(SumBackward0, out, x)
        if node is not None:
            node._saved["self_sym_sizes"] = a.shape
            _check_gradient_dtype(node, x, a)
        return out
    dims = _dims(dim, a.ndim)
    out = Tensor._make(add_up(a, dims, keepdim, dtype=dt))
    node = record(SumBackward1, out, x)
    _check_gradient_dtype(node, x, a)
    if node is not None:
        node._saved.update(
            {"dim": _saved_dim(dim), "keepdim": keepdim, "self_sym_sizes": x._data.shape})
    return out


def sum_to_size(x: Tensor, *size) -> Tensor:
    """`x` summed down to `size`, a shape that broadcasts to x's (how a broadcast
    gradient is summed back): one sum over the leading dims and the dims that are 1
    in `size`, keeping them, then a view without the leading ones. `x` itself when
    it has that shape already (except to no dims at all: a full sum, as PyTorch)."""
    shape = tuple(view_shape(size, "sum_to_size", "size"))
    have = x._data.shape
    lead = len(have) - len(shape)
    if lead < 0 or any(n != 1 and n != h for n, h in zip(shape, have[lead:])):
        raise RuntimeError(f"size {{[{', '.join(map(str, shape))}]}} is not expandable to "
                           f"size {{[{', '.join(map(str, have))}]}}.")
    if not shape:  # (PyTorch's sum_to: to no dims at all is a full sum, SumBackward0)
        return sum(x)
    dims = [*range(lead), *(lead + i for i, n in enumerate(shape)
                            if n == 1 and have[lead + i] != 1)]
    if dims:
        x = sum(x, dims, keepdim=True)
    return x.view(shape) if lead else x


class MeanBackward0(ArrayFormulaNode):
    """mean(): each element gets grad / numel."""

    tangent = Tangent("self_t.mean()", linear=True)

    saves = {"self_sym_numel": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "mean_backward(grad, self_sym_sizes, (), self_sym_numel, "
                                "False)"),)
    exact = True


class MeanBackward1(ArrayFormulaNode):
    """mean(dim): grad / (number of elements averaged), broadcast back."""

    tangent = Tangent("self_t.mean(dim, keepdim)", linear=True)

    saves = {"dim": VALUE, "keepdim": VALUE, "self_sym_numel": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "mean_backward(grad, self_sym_sizes, dim, self_sym_numel, "
                                "keepdim)"),)


def average(a: np.ndarray, dims: tuple, keepdim: bool) -> np.ndarray:
    """PyTorch's mean on the CPU: the sum, then divided in place
    by the number of elements summed, in a's dtype. An empty mean is 0 / 0 = nan,
    without numpy's warning."""
    if len(dims) == a.ndim:  # the mean of every element: a loss, in every training step
        total = whole_sum(a)
        if total is not None:
            # (In doubles: a float32 quotient rounded from its double is the
            # correctly rounded float32 quotient, as PyTorch's division gives.)
            out = np.array(total / float(a.dtype.type(a.size)), a.dtype)
            return out.reshape((1,) * a.ndim) if keepdim else out
    count = 1
    for d in dims:
        count *= a.shape[d]
    out = add_up(a, dims, keepdim)
    if count:
        np.divide(out, out.dtype.type(count), out=out)  # (nan or inf / count: no warning)
    else:
        with np.errstate(invalid="ignore"):
            np.divide(out, out.dtype.type(count), out=out)
    return out


_EVERY_DIM = [tuple(range(n)) for n in range(8)]  # (every dim of an n-d array, made once)


def _mean_dtype(x: Tensor, dtype) -> np.ndarray:
    """The values `mean` averages: x's, or, with `dtype` (a floating one), x's in it."""
    if dtype is None:
        if x._data.dtype.kind != "f":  # (minigrad's floating dtypes; it has no complex ones)
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {_TYPE_NAMES[x.dtype.name]}"
            )
        return x._data
    dt = _dtype.to_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {_TYPE_NAMES[dt.name]}"
        )
    return x._data.astype(dt.np, copy=False)


def _check_gradient_dtype(node, x: Tensor, a: np.ndarray) -> None:
    """With mean(dtype=), the gradient comes in the dtype asked for: the engine must
    cast it back to x's (the node is not `exact` then)."""
    if node is not None and a.dtype != x._data.dtype:
        node._input_meta = ((x._data.shape, x._data.dtype),)


def mean(x: Tensor, *args, dim=ALL_DIMS, keepdim: bool = False, dtype=None) -> Tensor:
    """Average of all elements, or along `dim` (as for `sum`); with `dtype` (a floating
    one), of the elements converted to it first."""
    if args or dim is not ALL_DIMS or keepdim is not False:
        dim, keepdim = _dim_and_keepdim("mean", args, dim, keepdim, ALL_DIMS, False)
    a = _mean_dtype(x, dtype)
    if dim is ALL_DIMS:
        if keepdim:
            raise _no_dim_keepdim("mean")
        dims = _EVERY_DIM[a.ndim] if a.ndim < len(_EVERY_DIM) else tuple(range(a.ndim))
        out = Tensor._make(average(a, dims, False))
        node = record(MeanBackward0, out, x)
        if node is not None:
            node._saved["self_sym_numel"] = a.size
            node._saved["self_sym_sizes"] = a.shape
            _check_gradient_dtype(node, x, a)
        return out
    dims = _dims(dim, x._data.ndim)
    out = Tensor._make(average(a, dims, keepdim))
    node = record(MeanBackward1, out, x)
    _check_gradient_dtype(node, x, a)
    if node is not None:
        node._saved.update(
            {"dim": _saved_dim(dim), "keepdim": keepdim,
             "self_sym_numel": x._data.size, "self_sym_sizes": x._data.shape})
    return out


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}

def _return_type(name: str):
    """What `max(dim=...)` returns: a (values, indices) named tuple printed like
    PyTorch's `torch.return_types.max`."""
    base = namedtuple(name, ["values", "indices"])

    def __repr__(self) -> str:
        return (f"minigrad.return_types.{name}(\nvalues={self.values!r},\n"
                f"indices={self.indices!r})")

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                "__module__": "minigrad.return_types"})


max_result = _return_type("max")
min_result = _return_type("min")


class _ExtremeAll(ArrayFormulaNode):
    """max()/min() of the whole tensor: the gradient is shared evenly by every
    element equal to the extreme value (ties split it). A NaN anywhere makes the
    result NaN, and then the NaNs share the gradient."""

    tangent = Tangent("evenly_read_jvp(self_t, self_p, result)")
    saves = {"self": INPUT, "result": OUTPUT}
    formulas = (Formula("self", "evenly_distribute_backward(grad, self, result)"),)


# (`evenly_distribute_backward` on arrays is beside median's node, in `sorting.py`)


class MaxBackward1(_ExtremeAll):
    __doc__ = _ExtremeAll.__doc__


class MinBackward1(_ExtremeAll):
    __doc__ = _ExtremeAll.__doc__


class _ExtremeDim(ArrayFormulaNode):
    """max(dim)/min(dim): the gradient goes to the selected index only."""

    tangent = Tangent("gather_with_keepdimed_indices(self_t, _dims, indices, keepdim)")
    saves = {"dim": VALUE, "indices": VALUE, "keepdim": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "value_selecting_reduction_backward(grad, dim, indices, "
                                "self_sym_sizes, keepdim)"),)


@on_arrays("value_selecting_reduction_backward")
def _value_selecting_reduction_backward_on_arrays(grad: np.ndarray, dim: int,
                                                  indices: np.ndarray, sizes: tuple,
                                                  keepdim: bool) -> np.ndarray:
    if not sizes:  # a 0-d input: its one element was selected
        out = np.array(grad, copy=True)
    else:
        if not keepdim:
            grad, indices = np.expand_dims(grad, dim), np.expand_dims(indices, dim)
        out = np.zeros(sizes, grad.dtype)
        np.put_along_axis(out, indices, grad, axis=dim)
    bump_version(out, 2)  # (PyTorch's formula writes into its zeros twice in place)
    return out


class MaxBackward0(_ExtremeDim):
    __doc__ = _ExtremeDim.__doc__


class MinBackward0(_ExtremeDim):
    __doc__ = _ExtremeDim.__doc__


def _extreme(x: Tensor, args: tuple, dim, keepdim, is_max: bool):
    name = "max" if is_max else "min"
    if len(args) == 1 and isinstance(args[0], Tensor):  # `max(a, b)`: element-wise
        return (maximum if is_max else minimum)(x, args[0])
    if args or dim is not None or keepdim is not False:
        dim, keepdim = _dim_and_keepdim(name, args, dim, keepdim, None, True)
    if dim is None:
        if x._data.size == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        arg = (R.argmax_all if is_max else R.argmin_all)(x._data) \
            if x._data.dtype.kind == "f" else \
            int((np.argmax if is_max else np.argmin)(x._data))
        out = Tensor._make(np.array(x._data.reshape(-1)[arg]))
        node = record(MaxBackward1 if is_max else MinBackward1, out, x)
        if node is not None:
            node._saved["self"] = SavedTensor(x)
            node._saved["result"] = SavedTensor(out, is_output=True)
        return out
    d = _wrap_dim(dim, x._data.ndim)
    if x._data.ndim == 0:  # dim 0 of a 0-d tensor: the value itself, at index 0
        values, idx = x._data.copy(), np.array(0, np.int64)
    else:
        if x._data.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        idx = (np.argmax if is_max else np.argmin)(x._data, axis=d, keepdims=True)
        values = np.take_along_axis(x._data, idx, axis=d)
        if not keepdim:
            values, idx = values.squeeze(d), idx.squeeze(d)
    # np.array, not ascontiguousarray: that one turns a 0-d result into shape (1,).
    out = Tensor._make(np.array(values, order="C"))
    indices = Tensor._make(np.array(idx, np.int64, order="C"))
    node = record(MaxBackward0 if is_max else MinBackward0, out, x)
    if node is not None:
        node._saved.update({"dim": u64(dim), "indices": SavedTensor(indices),
                            "keepdim": keepdim,
                            "self_sym_sizes": x._data.shape, "_dims": (d,)})
    return (max_result if is_max else min_result)(out, indices)


def max(x: Tensor, *args, dim=None, keepdim: bool = False):  # noqa: A001
    """The largest element; with `dim`, a (values, indices) pair; with a tensor, the
    element-wise `maximum`."""
    return _extreme(x, args, dim, keepdim, True)


def min(x: Tensor, *args, dim=None, keepdim: bool = False):  # noqa: A001
    """The smallest element; with `dim`, a (values, indices) pair; with a tensor, the
    element-wise `minimum`."""
    return _extreme(x, args, dim, keepdim, False)


def _arg_extreme(x: Tensor, dim, keepdim: bool, name: str) -> Tensor:
    data = x._data
    if data.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    find = np.argmax if name == "argmax" else np.argmin  # both pick the first NaN, as PyTorch
    if dim is None:
        if data.size == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        idx = np.array(find(data), np.int64)
        # keepdim without a dim keeps every dim, with size 1.
        return Tensor._make(idx.reshape((1,) * data.ndim) if keepdim else idx)
    d = _wrap_dim(dim, data.ndim)
    if data.ndim == 0:
        return Tensor._make(np.array(0, np.int64))
    if data.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return Tensor._make(np.asarray(find(data, axis=d, keepdims=keepdim), np.int64))


def argmax(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The (flat, without `dim`) index of the first largest element; NaN counts as largest."""
    return _arg_extreme(x, dim, keepdim, "argmax")


def argmin(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The (flat, without `dim`) index of the first smallest element; NaN counts as smallest."""
    return _arg_extreme(x, dim, keepdim, "argmin")


# -- element-wise maximum and minimum of two tensors ------------------------------------------


class MaximumBackward0(ArrayFormulaNode):
    """maximum(x, y): the gradient goes to the larger input; a tie splits it in halves,
    and a nan (which wins) sends all of it to both. Saves both INPUTS."""

    tangent = Tangent("other_t + share(self_p > other_p, self_p, other_p) * (self_t - other_t)")
    saves = {"self": INPUT, "other": INPUT}
    formulas = (Formula("self", "where(self == other, grad / 2, grad).masked_fill_(self < other, "
                                "0)"),
                Formula("other", "where(self == other, grad / 2, grad).masked_fill_(self > other, "
                                 "0)"))



class MinimumBackward0(ArrayFormulaNode):
    """minimum(x, y): the gradient goes to the smaller input; a tie splits it in halves.
    Saves both INPUTS."""

    tangent = Tangent("other_t + share(self_p < other_p, self_p, other_p) * (self_t - other_t)")
    saves = {"self": INPUT, "other": INPUT}
    formulas = (Formula("self", "where(self == other, grad / 2, grad).masked_fill_(self > other, "
                                "0)"),
                Formula("other", "where(self == other, grad / 2, grad).masked_fill_(self < other, "
                                 "0)"))



def _elementwise_extreme(a: Tensor, b, name: str, node_cls, pick) -> Tensor:
    if not isinstance(b, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, "
                        f"not {type(b).__name__}")
    dt = result_type(a, b)
    if a.dtype is _dtype.bool_ and b.dtype is _dtype.bool_:
        out = Tensor._make(np.asarray(pick(a._data, b._data)))
    else:
        shape = broadcast_shape(a._data.shape, b._data.shape)
        x, y = a._data.astype(dt.np, copy=False), b._data.astype(dt.np, copy=False)
        out_data, flat_out, (flat_x, flat_y) = fresh_result(shape, dt.np, x, y)
        pick(flat_x, flat_y, out=flat_out)  # (numpy's maximum, like PyTorch's, keeps nan)
        out = Tensor._make(out_data)
    node = record(node_cls, out, a, b)
    if node is not None:
        node._saved["other"] = SavedTensor(b)  # (in name order, as PyTorch packs them)
        node._saved["self"] = SavedTensor(a)
    return out


def maximum(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """The larger of two tensors, element by element (broadcast); nan wins."""
    return _elementwise_extreme(input, other, "maximum", MaximumBackward0, np.maximum)


def minimum(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """The smaller of two tensors, element by element (broadcast); nan wins."""
    return _elementwise_extreme(input, other, "minimum", MinimumBackward0, np.minimum)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------



declare("sum", nodes=(SumBackward0, SumBackward1), function=sum, method=True)
declare("sum_to_size", method=sum_to_size)
declare("mean", nodes=(MeanBackward0, MeanBackward1), function=mean, method=True)
# (A number first fits none of PyTorch's signatures: its TypeError lists them.)
_EXTREME_HEADS = ["Tensor input, *, Tensor out = None",
                  "Tensor input, Tensor other, *, Tensor out = None",
                  "Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None"]
declare("max", nodes=(MaxBackward0, MaxBackward1), method=max,
        function=tensor_first(max, "max", _EXTREME_HEADS, alone_named=True))
declare("min", nodes=(MinBackward0, MinBackward1), method=min,
        function=tensor_first(min, "min", _EXTREME_HEADS, alone_named=True))
declare("argmax", function=argmax, method=True)
declare("argmin", function=argmin, method=True)
declare("maximum", nodes=(MaximumBackward0,), function=tensor_first(maximum, "maximum"),
        method=maximum)
declare("minimum", nodes=(MinimumBackward0,), function=tensor_first(minimum, "minimum"),
        method=minimum)


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


def unsqueeze_multiple(t: Tensor, dims, ndim: int) -> Tensor:
    """`t` with the reduced `dims` of an `ndim`-dim input put back as size 1, as
    PyTorch's unsqueeze_multiple: one dim unsqueezed as given (a negative one too, as
    its UnsqueezeBackward0 saves it), several in increasing order, wrapped."""
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(dims) == 1:
        return t.unsqueeze(dims[0])
    for d in sorted(d % ndim for d in dims):
        t = t.unsqueeze(d)
    return t


@helper
def sum_backward(grad: Tensor, sizes: tuple, dims, keepdim: bool) -> Tensor:
    """The gradient of a sum over `dims`: the reduced dims put back (unless kept),
    then expanded to the input's sizes."""
    if not keepdim and sizes and dims:
        grad = unsqueeze_multiple(grad, dims, len(sizes))
    return grad.expand(sizes)


@helper
def mean_backward(grad: Tensor, sizes: tuple, dims, numel: int, keepdim: bool) -> Tensor:
    """The gradient of a mean over `dims` (all of them when empty): the sum's,
    divided by how many elements each mean took."""
    if not dims:
        return grad.expand(sizes) / Scalar(numel)
    count = 1
    for d in dims if sizes else ():  # (a 0-d input's dim 0 averaged its one element)
        count *= sizes[d % len(sizes)]
    return sum_backward(grad, sizes, dims, keepdim) / Scalar(count)


@helper
def evenly_distribute_backward(grad: Tensor, input: Tensor, value: Tensor) -> Tensor:  # noqa: A002
    """The gradient of max()/min() of a whole tensor: shared evenly by the elements
    equal to the result (the NaNs, when the result is NaN)."""
    # (x != x: whether x is NaN)
    mask = input != input if bool(value != value) else input == value
    return grad.new_zeros(tuple(input.shape)).masked_fill_(mask, grad / mask.sum())


# -- the helpers this family's tangent formulas call (PyTorch's `*_jvp`) -----------------


@helper
def share(wins: Tensor, self: Tensor, other: Tensor) -> Tensor:
    """maximum's and minimum's share of `self_t - other_t` in the tangent: 1 where
    self wins, 0.5 where it ties, else 0 (`where(self_p == other_p, 0.5, (self_p >
    other_p).to(result.scalar_type()))`, PyTorch's formula)."""
    return named("where")(self == other, 0.5, wins.to(result_type(self, other)))


def sum_over(t: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    """PyTorch's `t.sum(dim.value_or({}), keepdim)`: over `dims` (the wrapped dims the
    op saved, every dim when none were given)."""
    if t.dim() == 0 or not dims:
        return t.sum()
    return t.sum(tuple(dims), keepdim)


@helper
def evenly_read_jvp(fw_grad: Tensor, input: Tensor, value: Tensor) -> Tensor:  # noqa: A002
    """max()/min() of a whole tensor: the mean of the tangent over the elements equal
    to the extreme value."""
    mask = input == value
    count = mask.sum()
    return (mask * (fw_grad / count)).sum()


@helper
def gather_with_keepdimed_indices(input: Tensor, dims: tuple, indices: Tensor,  # noqa: A002
                                  keepdim: bool) -> Tensor:
    """max(dim)/min(dim): the tangent at the selected indices (PyTorch gathers them;
    minigrad indexes with the index grid a gather reads)."""
    if input.dim() == 0:
        return input.clone()
    d = dims[0]
    idx = indices._data if keepdim else np.expand_dims(indices._data, d)
    grid = list(np.ogrid[tuple(slice(0, n) for n in idx.shape)])
    grid[d] = idx
    out = input[tuple(tensor(np.broadcast_to(g, idx.shape)) for g in grid)]
    return out if keepdim else out.squeeze(d)
