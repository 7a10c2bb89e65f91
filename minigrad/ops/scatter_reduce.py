"""scatter_reduce: src's values reduced into `self` at the places `index` names along
`dim`, by sum, prod, mean, amax or amin (with `self`'s own value taking part, or not:
`include_self`).

Its gradient is PyTorch's `scatter_reduce_backward`, one formula per reduction: a
sum passes the gradient through (src's picked back with gather); a mean divides it by
how many values met at each place; amax and amin share it evenly among the values
equal to the result; a product multiplies it by the product of the other values
(computed without dividing by a zero).
"""

from __future__ import annotations

import numpy as np

from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import Formula, FormulaNode, helper
from .picking import _places, _save_dim_index, _scatter_checks, _vector
from .tangent_formulas import Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists it with the indexing ops.)
OP_FAMILY = "indexing"

_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _reduced(x: np.ndarray, d: int, index: np.ndarray, src: np.ndarray, reduce: str,
             include_self: bool) -> np.ndarray:
    """The forward on arrays (0-d arrays read as 1-element vectors)."""
    out = np.array(x, order="C")
    if not index.size:
        return out
    view, iv = _vector(out), _vector(index)
    where = _places(iv, d)
    values = _vector(src)[tuple(slice(0, n) for n in iv.shape)]
    count = np.zeros(view.shape, np.int64)
    np.add.at(count, where, 1)
    hit = count > 0
    if not include_self:  # (the places written start from the reduction's identity)
        start = {"sum": 0, "mean": 0, "prod": 1}.get(reduce)
        if start is None:
            start = values.max() if reduce == "amin" else values.min()
        view[hit] = start
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
             "amin": np.minimum}[reduce]
    ufunc.at(view, where, values)
    if reduce == "mean":
        n = count + (1 if include_self else 0)
        n[n == 0] = 1
        if view.dtype.kind == "f":
            view[...] = view / n.astype(view.dtype)
        else:
            view[...] = np.floor_divide(view, n)
    return out


class ScatterReduceBackward0(FormulaNode):
    """scatter_reduce(self, dim, index, src, reduce, include_self): PyTorch's
    scatter_reduce_backward, for each reduction."""

    tangent = Tangent("scatter_reduce_jvp(dense(self_t, self_p), self_p, dim, index, "
                      "dense(src_t, src_p), src_p, reduce, include_self, result)")

    saves = {"dim": VALUE, "include_self": VALUE, "index": INPUT, "reduce": VALUE,
             "result": OUTPUT, "self": INPUT, "src": INPUT}
    formulas = (
        Formula("self", "scatter_reduce_self_backward(grad, self, dim, index, src, reduce, "
                        "include_self, result)"),
        Formula("src", "scatter_reduce_src_backward(grad, self, dim, index, src, reduce, "
                       "include_self, result)"),
    )


def _parts(grad: Tensor, self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
           include_self: bool, result: Tensor) -> tuple:
    """(self's gradient, src's gradient), as PyTorch's scatter_reduce_backward."""
    if reduce == "sum":
        grad_self, grad_src = grad, grad.gather(dim, index)
    elif reduce == "mean":
        n = (grad.new_ones(tuple(grad.shape)) if include_self
             else grad.new_zeros(tuple(grad.shape)))
        n = n.scatter_add(dim, index, src.new_ones(tuple(src.shape)))
        n = n.masked_fill(n == 0, 1)
        grad_self = grad / n
        grad_src = grad.gather(dim, index) / n.gather(dim, index)
    elif reduce in ("amax", "amin"):
        value = result.gather(dim, index)
        self_is_result = (self == result).to(self.dtype)
        src_is_result = (src == value).to(self.dtype)
        distributed = grad / self_is_result.scatter_add(dim, index, src_is_result)
        grad_self = (self == result) * distributed
        grad_src = (src == value) * distributed.gather(dim, index)
    else:  # prod
        masked_self = self.masked_fill(self == 0, 1)
        masked_self_result = masked_self.scatter_reduce(dim, index, src, reduce,
                                                        include_self=include_self)
        grad_self = grad * masked_self_result / masked_self
        src_zero = src == 0
        src_num_zeros = (self.new_zeros(tuple(self.shape))
                         .scatter_add(dim, index, src_zero.to(self.dtype)).gather(dim, index))
        src_single_zero = src_zero & (src_num_zeros == 1)
        masked_src = src.masked_fill(src_single_zero, 1)
        masked_src_result = self.scatter_reduce(dim, index, masked_src, reduce,
                                                include_self=include_self)
        grad_src = ((grad * masked_src_result).gather(dim, index) * src_single_zero
                    + (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1)
                    * ~src_single_zero)
    if not include_self:
        grad_self = grad_self.scatter(dim, index, 0)
    return grad_self, grad_src


@helper
def scatter_reduce_self_backward(grad, self, dim, index, src, reduce, include_self, result):
    """scatter_reduce's gradient for self (PyTorch's scatter_reduce_backward)."""
    return _parts(grad, self, dim, index, src, reduce, include_self, result)[0]


@helper
def scatter_reduce_src_backward(grad, self, dim, index, src, reduce, include_self, result):
    """scatter_reduce's gradient for src (PyTorch's scatter_reduce_backward)."""
    return _parts(grad, self, dim, index, src, reduce, include_self, result)[1]


@helper
def scatter_reduce_jvp(self_t, self_p, dim, index, src_t, src_p, reduce, include_self,
                       result):
    """scatter_reduce's tangent (PyTorch's scatter_reduce_jvp): linear for sum and
    mean; for amax and amin the tangents of the values equal to the result, averaged."""
    if reduce in ("sum", "mean"):
        return self_t.scatter_reduce(dim, index, src_t, reduce, include_self=include_self)
    if reduce in ("amax", "amin"):
        mask_self = self_p == result
        mask_src = src_p == result.gather(dim, index)
        masked_src_t = src_t.where(mask_src, 0.0)
        div = mask_self.to(self_t.dtype).scatter_reduce(dim, index, mask_src.to(self_t.dtype),
                                                        "sum", include_self=include_self)
        return (self_t.where(mask_self, 0.0).scatter_reduce(dim, index, masked_src_t, "sum",
                                                            include_self=include_self) / div)
    raise NotImplementedError("minigrad has no forward-mode tangent for "
                              "scatter_reduce(reduce='prod')")


def scatter_reduce(x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """`x` with src's values reduced in (sum, prod, mean, amax, amin) at the places
    `index` names along `dim`."""
    d = _wrap_dim(dim, x._data.ndim)
    _scatter_checks(x, d, index, src)
    if reduce not in _REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    out = Tensor._make(_reduced(x._data, d, index._data, src._data, reduce, include_self))
    node = record(ScatterReduceBackward0, out, x, src)
    if node is not None:
        _save_dim_index(node, dim, index)
        node._saved.update({"include_self": include_self, "reduce": reduce,
                            "result": SavedTensor(out, is_output=True),
                            "self": SavedTensor(x), "src": SavedTensor(src)})
    return out


declare("scatter_reduce", nodes=(ScatterReduceBackward0,), function=scatter_reduce, method=True)
