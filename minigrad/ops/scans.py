"""cummax, cummin and logcumsumexp: running reductions along a dim (cumsum and cumprod
are with the statistics).

cummax and cummin return the running extreme and the index it was found at (a later
equal element, or a NaN, takes over); each input's gradient is the sum of the
gradients of the outputs that picked it (`scatter_add` into zeros). logcumsumexp is
the running log(sum(exp(x))), whose gradient is written, as PyTorch's, with
logcumsumexp itself run backwards over the gradient's logarithm.
"""

from __future__ import annotations

import numpy as np

from .._creation import tensor, zeros
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor, bump_version
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import BACKWARD_OPS, ArrayFormulaNode, Formula, helper, named, on_arrays
from .reductions import _return_type
from .tangent_formulas import Tangent

cummax_result = _return_type("cummax")
cummin_result = _return_type("cummin")


# -- cummax and cummin ------------------------------------------------------------------


@helper
def cummaxmin_backward(grad: Tensor, input: Tensor, indices: Tensor,  # noqa: A002
                       dim: int) -> Tensor:
    """cummax's and cummin's gradient: each output's gradient added to the input it
    picked (scatter_add into zeros)."""
    if input.numel() == 0:
        return input
    result = zeros(tuple(input.shape), dtype=input.dtype)
    result._version_counter.value += 1  # (PyTorch's zeros are filled with zero_)
    return BACKWARD_OPS["scatter_add_"](result, dim, indices, grad)


@on_arrays("cummaxmin_backward")
def _cummaxmin_backward(grad: np.ndarray, input: np.ndarray, indices: np.ndarray,  # noqa: A002
                        dim: int) -> np.ndarray:
    if input.size == 0:
        return input
    out = np.zeros(input.shape, input.dtype)
    if input.ndim == 0:
        out[()] = grad
    else:
        d = dim % input.ndim
        places = list(np.indices(indices.shape, sparse=True))
        places[d] = indices
        np.add.at(out, tuple(places), grad)
    bump_version(out, 2)  # (zero_, then scatter_add_)
    return out


class _RunningExtreme(ArrayFormulaNode):
    """cummax/cummin: each input's gradient is the sum of the gradients of the outputs
    that picked it. Saves the dim, the INDICES (an output) and its INPUT."""

    tangent = Tangent("gather(self_t, dim, indices)", linear=True)
    saves = {"dim": VALUE, "indices": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "cummaxmin_backward(grad, self, indices, dim)"),)


class CummaxBackward0(_RunningExtreme):
    __doc__ = _RunningExtreme.__doc__


class CumminBackward0(_RunningExtreme):
    __doc__ = _RunningExtreme.__doc__


def _running_extreme(a: np.ndarray, d: int, is_max: bool) -> tuple[np.ndarray, np.ndarray]:
    """The running extreme along `d` and where it was found: element i takes over when
    it is a NaN, or when the extreme so far is not NaN and element i is at least as
    large (cummax) or as small (cummin), PyTorch's rule."""
    rows = np.moveaxis(a, d, 0)
    values, indices = np.empty_like(rows), np.empty(rows.shape, np.int64)
    best, where = rows[0].copy(), np.zeros(rows.shape[1:], np.int64)
    better = np.greater_equal if is_max else np.less_equal
    for i in range(rows.shape[0]):
        x = rows[i]
        if i:
            takes = better(x, best)
            if a.dtype.kind == "f":
                takes = np.isnan(x) | (~np.isnan(best) & takes)
            best, where = np.where(takes, x, best), np.where(takes, i, where)
        values[i], indices[i] = best, where
    return np.moveaxis(values, 0, d), np.moveaxis(indices, 0, d)


def _cummaxmin(name: str, input: Tensor, dim: int, node_cls, result_type):  # noqa: A002
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        values, indices = a.copy(), np.array(0, np.int64)
    elif a.size == 0:
        values, indices = a.copy(), np.zeros(a.shape, np.int64)
    else:
        values, indices = _running_extreme(a, d, name == "cummax")
    out = Tensor._make(np.array(values, order="C"))
    idx = Tensor._make(np.array(indices, np.int64, order="C"))
    node = record(node_cls, out, input)
    if node is not None:
        # (the indices saved as themselves, as in `sorting._record_pick`)
        node._saved.update({"dim": u64(dim), "indices": SavedTensor(idx),
                            "self": SavedTensor(input)})
    return result_type(out, idx)


def cummax(input: Tensor, dim: int):  # noqa: A002
    """The running maximum along `dim`, and the index each was found at."""
    return _cummaxmin("cummax", input, dim, CummaxBackward0, cummax_result)


def cummin(input: Tensor, dim: int):  # noqa: A002
    """The running minimum along `dim`, and the index each was found at."""
    return _cummaxmin("cummin", input, dim, CumminBackward0, cummin_result)


# -- logcumsumexp ---------------------------------------------------------------------


def _reverse_logcumsumexp(x: Tensor, dim: int) -> Tensor:
    flip = BACKWARD_OPS["flip"]
    return flip(logcumsumexp(flip(x, (dim,)), dim), (dim,))


@helper
def logcumsumexp_backward(grad: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    """logcumsumexp's gradient (PyTorch's): the positive and the negative parts of the
    gradient, each as a logarithm, run through logcumsumexp from the end."""
    if grad.dim() == 0 or grad.numel() == 0:
        return grad
    where = named("where")
    grad_min = tensor(float(np.finfo(grad._data.dtype).min), dtype=grad.dtype)
    log_abs_grad = grad.abs().log()
    log_grad_positive = where(grad > 0, log_abs_grad, grad_min)
    log_grad_negative = where(grad < 0, log_abs_grad, grad_min)
    output_pos = (_reverse_logcumsumexp(log_grad_positive - result, dim) + self).exp()
    output_neg = (_reverse_logcumsumexp(log_grad_negative - result, dim) + self).exp()
    return output_pos - output_neg


def _logcumsumexp_data(a: np.ndarray, d: int) -> np.ndarray:
    if a.ndim == 0 or a.size == 0:
        return a.copy()
    # (PyTorch's CPU scans keep the running value in double, then round)
    with np.errstate(all="ignore"):
        return np.logaddexp.accumulate(a.astype(np.float64), axis=d).astype(a.dtype)


@on_arrays("logcumsumexp_backward")
def _logcumsumexp_backward(grad: np.ndarray, self: np.ndarray, result: np.ndarray,
                           dim: int) -> np.ndarray:
    if grad.ndim == 0 or grad.size == 0:
        return grad
    d = dim % grad.ndim
    lowest = np.finfo(grad.dtype).min
    with np.errstate(all="ignore"):
        log_abs_grad = np.log(np.abs(grad))
        parts = []
        for keep in (grad > 0, grad < 0):
            logs = np.where(keep, log_abs_grad, lowest) - result
            back = np.flip(_logcumsumexp_data(np.flip(logs, d), d), d)
            parts.append(np.exp(back + self))
        return np.asarray(parts[0] - parts[1], grad.dtype)


class LogcumsumexpBackward0(ArrayFormulaNode):
    """logcumsumexp(dim): each input's gradient gathers the gradients of the outputs
    from it on, weighted by exp(self - result). Saves the dim, its INPUT and its
    OUTPUT."""

    tangent = Tangent("logcumsumexp_jvp(self_p, self_t, dim)")
    saves = {"dim": VALUE, "result": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "logcumsumexp_backward(grad, self, result, dim)"),)


@helper
def logcumsumexp_jvp(self_p: Tensor, self_t: Tensor, dim: int) -> Tensor:
    """logcumsumexp's tangent (PyTorch's): the running sum of exp(x - max) * t over the
    running sum of exp(x - max) (0 where that sum is below 1e-13), in place as
    PyTorch's."""
    self_p_exp = (self_p - self_p.max(dim, keepdim=True).values).exp()
    cumsumexp_p = self_p_exp.cumsum(dim)
    self_p_exp.mul_(self_t)
    cumsumexp_t = self_p_exp.cumsum(dim)
    cumsumexp_t.masked_fill_(cumsumexp_p < 1e-13, 0.0)
    return cumsumexp_t.div_(cumsumexp_p)


def logcumsumexp(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """The running log(sum(exp(x))) along `dim`."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    if a.dtype.kind != "f":
        name = {"int64": "Long", "bool": "Bool"}[a.dtype.name]
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{name}'")
    out = Tensor._make(np.array(_logcumsumexp_data(a, d), a.dtype, order="C"))
    node = record(LogcumsumexpBackward0, out, input)
    if node is not None:
        node._saved.update({"dim": u64(dim), "result": SavedTensor(out, is_output=True),
                            "self": SavedTensor(input)})
    return out


# -- declarations: each op's public names (see `declaration.py`) ----------------------------

declare("cummax", nodes=(CummaxBackward0,), function=cummax, method=True)
declare("cummin", nodes=(CumminBackward0,), function=cummin, method=True)
declare("logcumsumexp", nodes=(LogcumsumexpBackward0,), function=logcumsumexp, method=True)
