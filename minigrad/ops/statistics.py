"""var, std, norm, prod and cumsum: reductions whose gradients need more than a sum.

* `var` saves its input (the gradient is `2 / (n - correction) * grad * (x - mean)`);
  `std` saves its input and its OUTPUT (it divides the variance's gradient by
  `2 * std`).
* `norm` saves input and output: the gradient of `||x||_2` is `x / ||x||`.
* `prod` saves input and output: the gradient of each factor is the product of the
  others, `result / x` when no factor is zero.
* `cumsum` saves nothing: its gradient is the cumulative sum taken from the end.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._args import combination_error, is_int, is_number, type_name
from .._creation import ones, zeros_like
from .._warn import warn_user
from ..arrays.layout import WRAPPED_NUMBER, in_result_layout, row_major
from ..arrays.quiet import quietly
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, OUTPUT, VALUE, Node, SavedTensor
from ..autograd.record import record
from ..grad_mode import STATE
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import BACKWARD_OPS, ArrayFormulaNode, Formula, Scalar, helper, on_arrays
from .reductions import _dims, _saved_dim, sum_over, unsqueeze_multiple
from .tangent_formulas import Tangent

_NOT_GIVEN = object()


def _unsqueeze_dims(a: np.ndarray, dims: tuple, ndim: int, keepdim: bool) -> np.ndarray:
    """A reduced array with its reduced dims put back as 1s (PyTorch's
    `unsqueeze_multiple`), unless they were kept."""
    if keepdim or ndim == 0:
        return a
    for d in sorted(dims):
        a = np.expand_dims(a, d)
    return a


# -- var and std ---------------------------------------------------------------------------

_VAR_HEADS = ["tuple of ints dim, bool unbiased = True, bool keepdim = False",
              "tuple of ints dim = None, *, Number correction = None, bool keepdim = False",
              "bool unbiased = True"]


def _var_args(name: str, args: tuple, kwargs: dict):
    """(dim, correction as saved, keepdim) of `var`/`std`, read as PyTorch's three
    signatures read them: `var(unbiased)`, `var(dim, unbiased, keepdim)` and
    `var(dim, *, correction, keepdim)`. Without dim, unbiased and correction,
    PyTorch saves the correction as None (it means 1)."""
    for key in kwargs:
        if key not in ("dim", "unbiased", "keepdim", "correction"):
            raise combination_error(name, args, kwargs, _VAR_HEADS, tail=False)
    given = dict(kwargs)
    if len(args) == 1 and isinstance(args[0], bool) and not kwargs:
        given["unbiased"] = args[0]
    elif args:
        if len(args) > 3 or "dim" in kwargs:
            raise combination_error(name, args, kwargs, _VAR_HEADS, tail=False)
        given["dim"] = args[0]
        for key, value in zip(("unbiased", "keepdim"), args[1:]):
            if key in kwargs or not isinstance(value, bool):
                raise combination_error(name, args, kwargs, _VAR_HEADS, tail=False)
            given[key] = value
    if "unbiased" in given and "correction" in given:
        raise combination_error(name, (), kwargs, _VAR_HEADS, tail=False)
    dim = given.get("dim", _NOT_GIVEN)
    keepdim = given.get("keepdim", False)
    if not isinstance(keepdim, bool):
        raise combination_error(name, args, kwargs, _VAR_HEADS, tail=False)
    if dim is not _NOT_GIVEN and dim is not None and not is_int(dim) and not (
            isinstance(dim, (tuple, list)) and all(is_int(d) for d in dim)):
        raise combination_error(name, args, kwargs, _VAR_HEADS, tail=False)
    if "unbiased" in given:
        if not isinstance(given["unbiased"], bool):
            raise combination_error(name, args, kwargs, _VAR_HEADS, tail=False)
        correction = int(given["unbiased"])
    elif "correction" in given and given["correction"] is not None:
        correction = given["correction"]
        if not is_number(correction):
            raise combination_error(name, args, kwargs, _VAR_HEADS, tail=False)
    else:
        correction = None if dim is _NOT_GIVEN else 1
    return (None if dim is _NOT_GIVEN else dim), correction, keepdim


def _variance(name: str, x: Tensor, dim, correction, keepdim: bool) -> np.ndarray:
    """The variance (PyTorch's, accumulated in double), warning as PyTorch does when
    there are no degrees of freedom left."""
    if not x.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    data = x._data
    dims = _dims(dim, data.ndim)
    c = 1 if correction is None else float(correction)
    n = int(np.prod([data.shape[d] for d in dims])) if data.ndim else 1
    # (PyTorch's reduction factor is input numel / output numel: 0 for an empty input)
    if (n if data.size else 0) - c <= 0:
        warn_user(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                  "less than the reduction factor (input numel divided by output numel).")
    wide = data.astype(np.float64)
    axes = dims if data.ndim else None
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = wide.mean(axis=axes, keepdims=True) if n else wide.sum(axis=axes, keepdims=True)
        squares = ((wide - mean) ** 2).sum(axis=axes, keepdims=keepdim)
        out = squares / max(0.0, n - c)
    return row_major(np.asarray(out, data.dtype))  # (as PyTorch allocates a reduction's)


def var_backward(grad, self, dim, correction, keepdim: bool):
    """PyTorch's `var_backward`, in minigrad code (on tensors, recording)."""
    c = 1 if correction is None else correction
    if self.dim() == 0 or dim is None:
        dof = self.numel() - c
        if dof <= 0:
            mean = self.mean()
            return grad * BACKWARD_OPS["where_scalars"](self == mean, math.nan, math.inf)
        centred = self - self.mean()
        return (Scalar(2.0 / dof) * grad) * centred
    if not keepdim and self.dim() > 1:
        grad = unsqueeze_multiple(grad, dim, self.dim())
    dims = tuple(d % self.dim() for d in ((dim,) if isinstance(dim, int) else dim))
    count = 1
    for d in dims:
        count *= self.shape[d]
    # (the dims as given: MeanBackward1 saves them so)
    centred = self - self.mean((dim,) if isinstance(dim, int) else tuple(dim), True)
    return (Scalar(2.0 / (count - c)) * grad) * centred


def _var_backward_data(grad, x, dims, dim_given: bool, correction, keepdim) -> np.ndarray:
    """`var_backward` on arrays, the same operations in the same order."""
    c = 1 if correction is None else correction
    dt = x.dtype
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if x.ndim == 0 or not dim_given:
            dof = x.size - c
            mean = np.asarray(x.mean(dtype=np.float64), dt) if x.size else np.asarray(np.nan, dt)
            if dof <= 0:
                return grad * np.where(x == mean, dt.type(np.nan), dt.type(np.inf))
            return (dt.type(2.0 / dof) * grad) * (x - mean)
        grad = _unsqueeze_dims(grad, dims, x.ndim, keepdim or x.ndim <= 1)
        count = int(np.prod([x.shape[d] for d in dims]))
        # (of no elements, the gradient is empty: the mean is not needed, nor numpy's
        # "Mean of empty slice" warning)
        mean = np.asarray(x.mean(axis=dims, keepdims=True, dtype=np.float64) if count else
                          x.sum(axis=dims, keepdims=True), dt)
        # (no values left after the correction: 2 / 0 is inf, as in PyTorch; each step
        # laid out as PyTorch's, which a permuted input's gradient shows)
        scaled = in_result_layout(dt.type(np.float64(2.0) / np.float64(count - c)) * grad,
                                  grad, WRAPPED_NUMBER)
        centred = in_result_layout(x - mean, x, mean)
        return in_result_layout(scaled * centred, scaled, centred)


class VarBackward0(ArrayFormulaNode):
    """var(x, dim, correction): grad * 2 / (n - correction) * (x - mean(x)). Saves
    its INPUT."""

    tangent = Tangent("var_jvp(self_t, self_p, dim, correction, _dims, keepdim)")
    saves = {"correction": VALUE, "dim": VALUE, "keepdim": VALUE, "self": INPUT}
    formulas = (Formula("self", "var_backward(grad, self, dim, correction, keepdim)"),)



class StdBackward0(ArrayFormulaNode):
    """std(x, dim, correction): var's gradient of grad / (2 * std) (zero where the std
    is zero). Saves its INPUT and its OUTPUT."""

    tangent = Tangent("(var_jvp(self_t, self_p, dim, correction, _dims, keepdim) / (2. * result))"
                      ".masked_fill_(result == 0, 0)")
    saves = {"correction": VALUE, "dim": VALUE, "keepdim": VALUE, "result": OUTPUT,
             "self": INPUT}
    formulas = (Formula("self", "std_backward(result, grad, self, dim, correction, "
                                "keepdim)"),)



def _var_or_std(name: str, node_cls: type[Node], x: Tensor, args: tuple, kwargs: dict):
    dim, correction, keepdim = _var_args(name, args, kwargs)
    data = _variance(name, x, dim, correction, keepdim)
    if name == "std":
        data = np.asarray(np.sqrt(data))  # (a 0-d array stays an array)
    out = Tensor._make(data)
    node = record(node_cls, out, x)
    if node is not None:
        dims = _dims(dim, x._data.ndim)
        node._saved.update({"correction": correction, "dim": _saved_dim(dim),
                            "keepdim": keepdim, "self": SavedTensor(x), "_dims": dims})
        if name == "std":
            node._saved["result"] = SavedTensor(out, is_output=True)
    return out


def var(input: Tensor, *args, **kwargs) -> Tensor:  # noqa: A002 - PyTorch's name
    """The variance over `dim` (all dims by default), divided by `n - correction`
    (`correction=1`, or `unbiased=True`, by default: the sample variance)."""
    return _var_or_std("var", VarBackward0, input, args, kwargs)


def std(input: Tensor, *args, **kwargs) -> Tensor:  # noqa: A002 - PyTorch's name
    """The standard deviation: the square root of `var` (same arguments)."""
    return _var_or_std("std", StdBackward0, input, args, kwargs)


# -- norms ------------------------------------------------------------------------------------


def _norm_data(x: np.ndarray, ord: float, dims: tuple, keepdim: bool) -> np.ndarray:  # noqa: A002
    axes = dims if x.ndim else None
    a = np.abs(x)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if ord == math.inf:
            out = a.max(axis=axes, keepdims=keepdim, initial=0.0)
        elif ord == -math.inf:
            out = a.min(axis=axes, keepdims=keepdim, initial=math.inf)
        elif ord == 0:
            out = (a != 0).sum(axis=axes, keepdims=keepdim)
        elif ord == 1:
            out = a.sum(axis=axes, keepdims=keepdim)
        elif ord == 2:
            out = np.sqrt((a * a).sum(axis=axes, keepdims=keepdim))
        else:
            out = (a ** ord).sum(axis=axes, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(out, x.dtype)


class LinalgVectorNormBackward0(ArrayFormulaNode):
    """vector_norm(x, ord, dim): for ord 2, grad * x / norm (zero where the norm is
    zero); for ord 1, grad * sign(x); for ord inf, the gradient shared by the largest
    entries. Saves its INPUT and its OUTPUT."""

    tangent = Tangent("norm_jvp(self_p, self_t, ord, result, _dims, keepdim)")
    saves = {"dim": VALUE, "keepdim": VALUE, "ord": VALUE, "result": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "linalg_vector_norm_backward(grad, self, ord, result, dim, "
                                "keepdim)"),)



def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *,  # noqa: A002
                dtype=None) -> Tensor:
    """`linalg.vector_norm`: (sum |x|^ord)^(1/ord) over `dim` (every dim by default);
    ord inf is the largest |x|, -inf the smallest, 0 the count of nonzeros."""
    if isinstance(ord, bool) or not is_number(ord):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type_name(ord)}")
    if not x.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {x.dtype.type_name}")
    if dtype is not None and dtype is not x.dtype:
        if dtype.itemsize < x.dtype.itemsize or not dtype.is_floating_point:
            raise RuntimeError(
                f"linalg.vector_norm: the dtype of the input ({x.dtype.type_name}) should be "
                f"convertible without narrowing to the specified dtype ({dtype.type_name})")
        raise NotImplementedError("minigrad's vector_norm computes in the input's dtype")
    dims = _dims(dim, x._data.ndim)
    p = float(ord)
    if x._data.size == 0 and p < 0 or (x._data.size == 0 and math.isinf(p) and p > 0 and dims):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                           "tensor because the operation does not have an identity")
    out = Tensor._make(_norm_data(x._data, p, dims, keepdim))
    node = record(LinalgVectorNormBackward0, out, x)
    if node is not None:
        node._saved.update({"dim": _saved_dim(dim), "keepdim": keepdim, "ord": ord,
                            "result": SavedTensor(out, is_output=True),
                            "self": SavedTensor(x), "_dims": dims})
    return out


# -- prod -------------------------------------------------------------------------------------


def _prod_safe_zeros(grad: np.ndarray, x: np.ndarray, d: int) -> np.ndarray:
    """The product of all the other factors along `d`, computed without dividing
    (PyTorch's `prod_safe_zeros_backward`: cumulative products from each side)."""
    if x.size == 0:
        return np.broadcast_to(grad, x.shape).copy()
    if x.shape[d] == 1:
        return grad
    ones = np.ones(x.shape[:d] + (1,) + x.shape[d + 1:], x.dtype)
    before = np.cumprod(np.concatenate([ones, np.delete(x, -1, axis=d)], axis=d), axis=d)
    after_rev = np.concatenate([ones, np.flip(np.delete(x, 0, axis=d), axis=d)], axis=d)
    after = np.flip(np.cumprod(after_rev, axis=d), axis=d)
    return grad * (before * after)


def prod_backward(grad, self, result, dim=None, keepdim: bool = False):
    """PyTorch's `prod_backward` in minigrad code: `grad * (result / self)`, or, with a
    zero factor, its `prod_safe_zeros_backward` (cumulative products from each side,
    `ops/cumprod.py`; the whole tensor as one flat row)."""
    if self.dim() == 0:
        return grad
    safe_zeros = BACKWARD_OPS["prod_safe_zeros_backward"]
    if dim is None:
        if not (self._data == 0).any():
            return grad * (result / self)
        return safe_zeros(grad, self.contiguous().view(-1), 0).view_as(self)
    dim %= self.dim()  # (PyTorch wraps it first: the unsqueezes save it non-negative)
    if not keepdim:
        grad, result = grad.unsqueeze(dim), result.unsqueeze(dim)
    if not (self._data == 0).any():
        return grad * (result / self)
    return safe_zeros(grad, self, dim)


class ProdBackward0(ArrayFormulaNode):
    """prod(): each factor's gradient is grad times the product of the others. Saves
    its INPUT and its OUTPUT."""

    tangent = Tangent("prod_jvp(self_t, self_p, result)")
    saves = {"result": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "prod_backward(grad, self.to(grad.dtype), result)"),)


class ProdBackward1(ArrayFormulaNode):
    """prod(dim): as prod(), along `dim`. Saves its INPUT and its OUTPUT."""

    tangent = Tangent("prod_jvp(self_t, self_p, result, (dim,), keepdim)")
    saves = {"dim": VALUE, "keepdim": VALUE, "result": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "prod_backward(grad, self.to(grad.dtype), result, dim, "
                                "keepdim)"),)


_PROD_HEADS = ["*, minigrad.dtype dtype = None",
               "int dim, bool keepdim = False, *, minigrad.dtype dtype = None"]


def _check_differentiable_dtype(input: Tensor, dt: np.dtype) -> None:
    """PyTorch's refusal to record a gradient for an op whose result `dtype=` makes an
    integer or bool (`prod(x, dtype=torch.int64)` of an x that requires grad)."""
    if dt.kind != "f" and input._requires_grad and STATE.grad_enabled:
        raise RuntimeError("Autograd not support dtype: "
                           f"{_dtype.from_numpy_dtype(dt).type_name}")


def prod(input: Tensor, *args, dtype=None, **kwargs) -> Tensor:  # noqa: A002 - PyTorch's name
    """The product of all elements, or along one `dim` (integers and bools give int64
    unless `dtype`, which the input is converted to first)."""
    given = dict(zip(("dim", "keepdim"), args))
    named = {**kwargs, **({"dtype": dtype} if dtype is not None else {})}
    if len(args) > 2 or any(k not in ("dim", "keepdim") or k in given for k in kwargs):
        raise combination_error("prod", args, named, _PROD_HEADS, tail=False)
    given.update(kwargs)
    dim, keepdim = given.get("dim", _NOT_GIVEN), given.get("keepdim", False)
    if (dim is not _NOT_GIVEN and not is_int(dim)) or not isinstance(keepdim, bool) or (
            dim is _NOT_GIVEN and "keepdim" in given) or not (
            dtype is None or isinstance(dtype, _dtype.dtype) or dtype in (float, int, bool)):
        raise combination_error("prod", args, named, _PROD_HEADS, tail=False)
    data = input._data
    if dtype is not None:
        dt = _dtype.to_dtype(dtype).np
        _check_differentiable_dtype(input, dt)
        data = data.astype(dt, copy=False)
    else:
        dt = data.dtype if data.dtype.kind == "f" else np.dtype(np.int64)
    if dim is _NOT_GIVEN:
        # (inf times 0 is nan, silently, as in PyTorch)
        out = Tensor._make(np.asarray(quietly(np.prod, data, dtype=dt), dt))
        node = record(ProdBackward0, out, input)
    else:
        d = _wrap_dim(dim, data.ndim)
        axis = d if data.ndim else None
        reduced = quietly(np.prod, data, axis=axis, keepdims=keepdim and data.ndim > 0, dtype=dt)
        out = Tensor._make(row_major(np.asarray(reduced, dt)))  # (as PyTorch's)
        node = record(ProdBackward1, out, input)
        if node is not None:
            node._saved.update({"dim": u64(dim), "keepdim": keepdim, "_dim": d})
    if node is not None:
        node._saved.update({"result": SavedTensor(out, is_output=True),
                            "self": SavedTensor(input)})
    return out


# -- cumsum -----------------------------------------------------------------------------------


class CumsumBackward0(ArrayFormulaNode):
    """cumsum(x, dim): every input element reaches the outputs at and after it, so
    its gradient is the sum of their gradients: a cumulative sum from the end."""

    tangent = Tangent("self_t.cumsum(dim)", linear=True)

    saves = {"dim": VALUE}
    unshown = ("self_dtype",)  # (the input's dtype: `cumsum(x, dtype=...)` may change it)
    formulas = (Formula("self", "cumsum_backward(grad.to(self_dtype), dim)"),)



def _cumsum_data(x: np.ndarray, d: int, dt=None) -> np.ndarray:
    """PyTorch's cumulative sum: float32 accumulates in double, each partial sum
    rounded to float32."""
    dt = x.dtype if dt is None else dt
    acc = np.float64 if dt.kind == "f" else dt
    return np.ascontiguousarray(np.cumsum(x, axis=d, dtype=acc).astype(dt, copy=False))


def cumsum(input: Tensor, *args, dtype=None, **kwargs) -> Tensor:  # noqa: A002
    """cumsum(input, dim, *, dtype=None): the running sum along `dim` (integers and
    bools give int64 unless `dtype`)."""
    dim = args[0] if args else kwargs.get("dim", _NOT_GIVEN)
    if dim is _NOT_GIVEN:
        raise TypeError('cumsum() missing 1 required positional arguments: "dim"')
    if not is_int(dim):
        where = " (position 1)" if args else ""
        raise TypeError(f"cumsum(): argument 'dim'{where} must be int, not {type_name(dim)}")
    data = input._data
    d = _wrap_dim(dim, data.ndim)
    if dtype is not None:
        dt = dtype.np
        _check_differentiable_dtype(input, dt)
    else:
        dt = data.dtype if data.dtype.kind == "f" else np.dtype(np.int64)
    out_data = _cumsum_data(data, d, dt) if data.ndim else data.astype(dt)
    out = Tensor._make(out_data)
    if dt.kind == "f":
        node = record(CumsumBackward0, out, input)
        if node is not None:
            node._saved.update({"dim": u64(dim), "_dim": d, "_self_dtype": input.dtype})
    return out


class FlipBackward0(ArrayFormulaNode):
    """flip(x, dims): the gradient flipped back. (minigrad flips only in cumsum's
    gradient.)"""

    tangent = Tangent("flip(self_t, dims)", linear=True)

    saves = {"dims": VALUE}
    formulas = (Formula("self", "flip(grad, dims)"),)
    exact = True



def flip(x: Tensor, dims: tuple) -> Tensor:
    """`x` reversed along `dims`: a copy (PyTorch's aten::flip)."""
    axes = tuple(_wrap_dim(d, x._data.ndim) for d in dims)
    out = Tensor._make(np.ascontiguousarray(np.flip(x._data, axes)))
    node = record(FlipBackward0, out, x)
    if node is not None:
        node._saved.update({"dims": tuple(u64(d) for d in dims), "_axes": axes})
    return out


def _where_scalars(condition: Tensor, a: float, b: float) -> Tensor:
    """`at::where(condition, a, b)` with two numbers (a tensor of the default dtype)."""
    return Tensor._make(np.where(condition._data, a, b).astype(_dtype.get_default_dtype().np))


# -- declarations: each op's public names (see `declaration.py`) ----------------------------



declare("var", nodes=(VarBackward0,), function=var, method=True)
declare("std", nodes=(StdBackward0,), function=std, method=True)
declare("prod", nodes=(ProdBackward0, ProdBackward1), function=prod, method=True)
declare("cumsum", nodes=(CumsumBackward0,), function=cumsum, method=True)
declare("var_backward", aten=var_backward)
declare("prod_backward", aten=prod_backward)
declare("where_scalars", aten=_where_scalars)
declare("flip", nodes=(FlipBackward0,), aten=flip)


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


@helper
def std_backward(result: Tensor, grad: Tensor, self: Tensor, dim, correction,
                 keepdim: bool) -> Tensor:
    """The gradient of std: var's, of grad / (2 * std), zeroed in place where the std
    is zero."""
    grad_var = (grad / (result * Scalar(2))).masked_fill_(result == 0, 0)
    return BACKWARD_OPS["var_backward"](grad_var, self, dim, correction, keepdim)


@helper
def cumsum_backward(grad: Tensor, dim: int) -> Tensor:
    """The gradient of cumsum: a cumulative sum from the end (flip, cumsum, flip)."""
    if grad.numel() <= 1 or grad.shape[dim] == 1:
        return grad
    flip = BACKWARD_OPS["flip"]
    return flip(flip(grad, (dim,)).cumsum(dim), (dim,))


def _unsqueeze_multiple(t: Tensor, dims, ndim: int) -> Tensor:
    """`t` with the reduced `dims` (all, when None or empty) put back as size 1."""
    return t if dims is None or dims == () else unsqueeze_multiple(t, dims, ndim)


@helper
def linalg_vector_norm_backward(grad: Tensor, self: Tensor, ord, norm: Tensor, dim,  # noqa: A002
                                keepdim: bool) -> Tensor | None:
    """The gradient of a vector norm of order `ord` (PyTorch's norm_backward)."""
    p = float(ord)
    if not keepdim and self.dim() != 0:
        grad = _unsqueeze_multiple(grad, dim, self.dim())
        norm = _unsqueeze_multiple(norm, dim, self.dim())
    if p == 0.0:
        return None
    if p == 1.0:
        return self.sgn() * grad
    if p == 2.0:
        return grad * (self / norm).masked_fill_(norm == 0, 0)
    if math.isinf(p):
        self_abs = self.abs()
        mask = (self_abs == norm) | (self_abs != self_abs)  # (or NaN)
        dims = tuple(range(self.dim())) if dim is None or dim == () else dim
        # (C++ evaluates the right operand of `*` first: so does this, for the nodes'
        # numbers)
        shared = (grad / mask.sum(dims, True)) * mask
        return self.sgn() * shared
    if p < 1.0:
        powered = self.abs().pow_(p - 1).masked_fill_(self == 0, 0)
        self_scaled = self.sgn() * powered
        scale = norm.pow(1 - p)
        return self_scaled * grad * scale
    if p < 2.0:
        powered = self.abs().pow_(p - 1)
        self_scaled = self.sgn() * powered
    else:
        self_scaled = self * self.abs().pow_(p - 2)
    scale_v = grad / norm.pow(p - 1)
    scale_v.masked_fill_(norm == 0, 0)
    return self_scaled * scale_v


# -- the helpers this family's tangent formulas call (PyTorch's `*_jvp`) -----------------


@helper
def prod_jvp(self_t: Tensor, self_p: Tensor, result: Tensor, dims: tuple | None = None,
             keepdim: bool = False) -> Tensor:
    """prod's tangent: `(prod_backward(ones, self_p, result[, dim, keepdim]) *
    self_t).sum([dim, keepdim])`. prod_backward records only for factors none of
    which is zero (minigrad's recordable form); with a zero factor and nothing to
    record, prod's own backward kernel gives the same slope."""
    unit = ones((), dtype=result.dtype).expand_as(result)
    dim = None if dims is None else dims[0]
    records = STATE.grad_enabled and (self_p.requires_grad or self_t.requires_grad)
    if records or not (self_p._data == 0).any():
        slope = BACKWARD_OPS["prod_backward"](unit, self_p.to(result.dtype), result,
                                              *(() if dim is None else (dim, keepdim)))
    else:
        data = _prod_backward_on_arrays(np.ones(result._data.shape, result._data.dtype),
                                        self_p._data, result._data,
                                        *(() if dim is None else (dim, keepdim)))
        slope = Tensor._make(np.ascontiguousarray(data))
    if dim is None:
        return (slope * self_t).sum()
    return (slope * self_t).sum(dim, keepdim) if self_p.dim() else (slope * self_t).sum()


@helper
def var_jvp(self_t: Tensor, self_p: Tensor, dim, correction, dims: tuple,
            keepdim: bool) -> Tensor:
    """var's tangent: var_backward of the tangent (its dims kept), summed over them."""
    slope = BACKWARD_OPS["var_backward"](self_t, self_p, dim, correction, True)
    return sum_over(slope, dims, keepdim)


def _unsqueeze_reduced(t: Tensor, dims: tuple, ndim: int) -> Tensor:
    """`t` with its reduced dims (all of them when `dims` is empty) put back as 1s."""
    for d in sorted(dims or range(ndim)):
        t = t.unsqueeze(d)
    return t


@helper
def norm_jvp(self_p: Tensor, self_t: Tensor, ord, norm: Tensor, dims: tuple,  # noqa: A002
             keepdim: bool) -> Tensor:
    """vector_norm's tangent, PyTorch's `norm_jvp` for real tensors."""
    p = float(ord)
    if p == 0.0:
        return zeros_like(norm)
    if p == 1.0:
        return sum_over(self_p.sgn() * self_t, dims, keepdim)
    if p == 2.0:
        out = sum_over(self_p * self_t, dims, keepdim) / norm
        return out.masked_fill_(norm == 0, 0)
    if p in (np.inf, -np.inf):
        if not keepdim and self_p.dim() != 0:
            norm = _unsqueeze_reduced(norm, dims, self_p.dim())
        both_nan = (self_p != self_p) & (norm != norm)  # (nan: the norm of a nan is one)
        is_eq_max = ((self_p.abs() == norm) | both_nan).to(norm.dtype)
        count = is_eq_max.sum(tuple(dims), True) if self_p.dim() and dims else is_eq_max.sum()
        return sum_over(self_p.sgn() * self_t * is_eq_max / count, dims, keepdim)
    if p < 1.0:
        scaled = self_p.abs().pow(p - 1).masked_fill_(self_p == 0, 0)
        return sum_over(scaled * (self_p.sgn() * self_t), dims, keepdim) * norm.pow(1 - p)
    if p < 2.0:
        total = sum_over(self_p.abs().pow(p - 1) * (self_p.sgn() * self_t), dims, keepdim)
    else:
        total = sum_over(self_p.abs().pow(p - 2) * (self_p * self_t), dims, keepdim)
    return (total / norm.pow(p - 1)).masked_fill_(norm == 0, 0)


# -- the helpers' array versions, for the plain backwards (each the same operations as
# its helper, on arrays; `tests/minigrad/test_formulas_equal_backwards.py` checks them)


@on_arrays("var_backward")
def _var_backward_on_arrays(grad: np.ndarray, x: np.ndarray, dim, correction,
                            keepdim: bool) -> np.ndarray:
    return np.asarray(_var_backward_data(grad, x, _dims(dim, x.ndim), dim is not None,
                                         correction, keepdim), grad.dtype)


@on_arrays("std_backward")
def _std_backward_on_arrays(result: np.ndarray, grad: np.ndarray, x: np.ndarray, dim,
                            correction, keepdim: bool) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        grad_var = np.where(result == 0, grad.dtype.type(0), grad / (result * 2))
    return _var_backward_on_arrays(grad_var, x, dim, correction, keepdim)


@on_arrays("linalg_vector_norm_backward")
def _linalg_vector_norm_backward_on_arrays(grad: np.ndarray, x: np.ndarray, ord, norm,  # noqa: A002
                                           dim, keepdim: bool) -> np.ndarray | None:
    p, dims = float(ord), _dims(dim, x.ndim)
    if p == 0:
        return None  # (PyTorch's formula gives no gradient at all)
    grad = _unsqueeze_dims(grad, dims, x.ndim, keepdim)
    norm = _unsqueeze_dims(norm, dims, x.ndim, keepdim)
    one = grad.dtype.type
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if p == 1:
            out = np.sign(x) * grad
        elif p == 2:
            out = grad * np.where(norm == 0, one(0), x / norm)
        elif math.isinf(p):
            a = np.abs(x)
            mask = (a == norm) | np.isnan(a)
            count = mask.sum(axis=dims if x.ndim else None, keepdims=True)
            out = np.sign(x) * ((grad / count.astype(grad.dtype)) * mask)
        elif p < 1:
            scaled = np.sign(x) * np.where(x == 0, one(0), np.abs(x) ** one(p - 1))
            out = scaled * grad * norm ** one(1 - p)
        elif p < 2:
            scaled = np.sign(x) * np.abs(x) ** one(p - 1)
            out = scaled * np.where(norm == 0, one(0), grad / norm ** one(p - 1))
        else:
            scaled = x * np.abs(x) ** one(p - 2)
            out = scaled * np.where(norm == 0, one(0), grad / norm ** one(p - 1))
    return np.asarray(out, grad.dtype)


@on_arrays("prod_backward")
def _prod_backward_on_arrays(grad: np.ndarray, x: np.ndarray, result: np.ndarray,
                             dim=None, keepdim: bool = False) -> np.ndarray:
    if x.ndim == 0:
        return grad
    if dim is None:  # (all of it: as one flat row)
        flat = _prod_safe_zeros(grad.reshape(1), x.reshape(-1), 0) if (x == 0).any() else None
        if flat is None:
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.asarray(grad * (result / x), grad.dtype)
        if (x == 0).sum() > 1:
            return np.zeros(x.shape, grad.dtype)
        return np.asarray(flat.reshape(x.shape), grad.dtype)
    d = dim % x.ndim
    if not keepdim:
        grad, result = np.expand_dims(grad, d), np.expand_dims(result, d)
    with np.errstate(invalid="ignore", divide="ignore"):
        if not (x == 0).any():  # (each step laid out as PyTorch's `grad * (result / x)`)
            ratio = in_result_layout(np.asarray(result / x), result, x)
            return in_result_layout(np.asarray(grad * ratio, grad.dtype), grad, ratio)
        return np.asarray(_prod_safe_zeros(grad, x, d), grad.dtype)


@on_arrays("cumsum_backward")
def _cumsum_backward_on_arrays(grad: np.ndarray, dim: int) -> np.ndarray:
    if grad.size <= 1 or grad.ndim == 0 or grad.shape[dim] == 1:
        return grad
    d = dim % grad.ndim
    backwards = (slice(None),) * d + (slice(None, None, -1),)
    # (a fresh array, as PyTorch's last flip makes one)
    return np.ascontiguousarray(_cumsum_data(grad[backwards], d)[backwards])


@on_arrays("flip")
def _flip_on_arrays(a: np.ndarray, dims: tuple) -> np.ndarray:
    return np.ascontiguousarray(np.flip(a, tuple(d % a.ndim for d in dims) if a.ndim else ()))
