"""cumprod, and the gradient of prod with a zero factor, which is built from it.

The gradient of each factor of a product is the product of all the others. Without
a zero, that is `result / x`; with one, PyTorch's `prod_safe_zeros_backward` takes
it without dividing: the running product of the factors before each one (a
cumprod of `[1, x0, x1, ...]`) times the running product of those after it (the same
from the other end, flipped back). With `create_graph=True` those steps are
recorded (CatBackward0, CumprodBackward0, FlipBackward0, ...), so the second
derivative of a product with a zero factor is PyTorch's; and CumprodBackward0's own
formula, `cumprod_backward`, records PyTorch's O(n^2) graph in turn, so the third one is
too. Forward mode goes through `cumprod_jvp` (below).
"""

from __future__ import annotations

import numpy as np

from .._creation import ones, zeros
from .._dtype import bool_, to_dtype
from ..arrays.layout import laid_out_as, row_major, step_layout
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..grad_mode import STATE
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, named, on_arrays
from .joining import cat
from .statistics import flip, prod
from .tangent_formulas import Tangent
from .views import SliceBackward0, slice_dim

# (The op table, `widgets.op_table` and docs/ops.md, lists it with the statistics.)
OP_FAMILY = "statistics"


class CumprodBackward0(ArrayFormulaNode):
    """cumprod(x, dim): out_j = x_0 * ... * x_j, so x_k's gradient is the sum over
    j >= k of grad_j times the product of the factors up to j but x_k. Saves its
    INPUT and its OUTPUT."""

    tangent = Tangent("cumprod_jvp(self_t, self_p, result, dim)")
    saves = {"dim": VALUE, "result": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "cumprod_backward(grad, self, dim, result)"),)



@on_arrays("cumprod_backward")
def _cumprod_backward_on_arrays(grad: np.ndarray, x: np.ndarray, dim: int,
                                out: np.ndarray) -> np.ndarray:
    """cumprod's gradient on arrays (the plain backward, recording nothing)."""
    return _cumprod_backward_array(grad, x, out, dim % x.ndim if x.ndim else 0)


def _cumprod_backward_array(grad: np.ndarray, x: np.ndarray, out: np.ndarray,
                            d: int | None) -> np.ndarray:
    if x.size <= 1 or x.shape[d] == 1:
        return grad
    if not (x == 0).any():  # (PyTorch's: a cumsum from the end, over the input)
        with np.errstate(all="ignore"):
            w = np.flip(np.cumsum(np.flip(out * grad, d), axis=d), d)
            # (laid out as PyTorch's `reversed_cumsum(w).div(input)`: its cumsum is
            # row-major, and flip keeps that, so the division lays it out)
            return laid_out_as(np.asarray(w / x, grad.dtype),
                               step_layout(np.empty(x.shape, grad.dtype), x, dtype=grad.dtype))
    # With a zero, without dividing: for each k, the products with x_k left out.
    xs, gs = np.moveaxis(x, d, -1), np.moveaxis(grad, d, -1)
    result = np.empty_like(gs)
    for k in range(xs.shape[-1]):
        others = xs.copy()
        others[..., k] = 1
        with np.errstate(all="ignore"):
            partial = np.cumprod(others, axis=-1)[..., k:]
            result[..., k] = (gs[..., k:] * partial).sum(-1)
    # (row-major, as PyTorch's, which it builds in `zeros(input.sizes())`)
    return row_major(np.asarray(np.moveaxis(result, -1, d), grad.dtype))


def _slice_from(x: Tensor, dim: int, start: int) -> Tensor:
    """C++'s `x.slice(dim, start)`: from `start` to the end along `dim`. Its end is
    not given, so its SliceBackward0 keeps `_saved_end` None (Python's `x[start:]`
    gives INT64_MAX)."""
    out = slice_dim(x, dim, start, None, None)
    node = out.grad_fn
    if isinstance(node, SliceBackward0) and node._saved.get("end") is not None:
        node._saved["end"] = None
    return out


@helper
def cumprod_backward(grad: Tensor, input: Tensor, dim: int,  # noqa: A002 - PyTorch's name
                     output: Tensor) -> Tensor:
    """cumprod's gradient as PyTorch's cumprod_backward computes it, in minigrad ops.

    Without a zero factor: `reversed_cumsum(output * grad) / input`. With one and
    grad mode off (a plain backward), the numpy kernel. With one and grad mode on (a
    create_graph=True backward), PyTorch's O(n^2) form, whose graph is differentiable
    again: for each k, the products with x_k left out (`prod` of the factors before
    k times the `cumprod` of those after it), summed against `grad` from k on, copied
    into row k of a zero tensor."""
    if input.numel() <= 1:
        return grad
    d = _wrap_dim(dim, input.dim())
    size = input.shape[d]
    if size == 1:
        return grad
    # (PyTorch computes `w` before looking for zeros, and records it even when the
    # loop below does not use it; it numbers the nodes after it)
    w = output * grad
    if not (input._data == 0).any():
        # (reversed_cumsum: flip, cumsum, flip)
        return flip(flip(w, (d,)).cumsum(d), (d,)).div(input)
    if not STATE.grad_enabled:
        data = _cumprod_backward_array(grad._data, input._data, output._data, d)
        return Tensor._make(row_major(data))
    grad_input = zeros(*input.shape, dtype=grad.dtype)
    ones_size = list(input.shape)
    ones_size[d] = 1
    one = ones(1, dtype=grad.dtype).expand(*ones_size)
    for k in range(size):
        if k == 0:
            prods_from_next = cumprod(_slice_from(input, d, k + 1), d)
            omitted = cat([one, prods_from_next], d)
        elif k == size - 1:
            omitted = prod(slice_dim(input, d, 0, k, None), d, True)
        else:
            prods_until_k = prod(slice_dim(input, d, 0, k, None), d, True)
            prods_from_next = cumprod(_slice_from(input, d, k + 1), d)
            omitted = prods_until_k.expand_as(prods_from_next) * prods_from_next
            omitted = cat([prods_until_k, omitted], d)
        grad_slice = (_slice_from(grad, d, k) * omitted).sum(d)
        grad_input.select(d, k).copy_(grad_slice)
    return grad_input


def cumprod(x: Tensor, dim: int, *, dtype=None) -> Tensor:
    """The running product along `dim`; integers and bools give int64, unless `dtype`,
    which the input is converted to first."""
    d = _wrap_dim(dim, x._data.ndim)
    a = x._data
    if dtype is not None:
        a = a.astype(to_dtype(dtype).np, copy=False)
    elif a.dtype.kind != "f":
        a = a.astype(np.int64)
    # (PyTorch's CPU scans keep the running product of floats in double, then round)
    wide = a.astype(np.float64) if a.dtype.kind == "f" else a
    with np.errstate(invalid="ignore", over="ignore"):  # (inf * 0 is nan, as in PyTorch)
        data = np.cumprod(wide, axis=d) if a.ndim else a.copy()
    out = Tensor._make(row_major(np.asarray(data, a.dtype)))  # (as PyTorch allocates it)
    node = record(CumprodBackward0, out, x)
    if node is not None:
        node._saved.update({"dim": u64(dim), "result": SavedTensor(out, is_output=True),
                            "self": SavedTensor(x), "_dim": d})
    return out


def prod_safe_zeros_backward(grad: Tensor, inp: Tensor, dim: int) -> Tensor:
    """The gradient of a product along `dim` without dividing: grad times the running
    product of the factors before each one and of those after it (PyTorch's
    prod_safe_zeros_backward)."""
    if inp.numel() == 0:
        return grad.expand_as(inp)
    size = inp.shape[dim]
    ones_size = list(inp.shape)
    ones_size[dim] = 1
    one = ones(tuple(ones_size), dtype=grad.dtype)
    exclusive_normal = cumprod(cat([one, inp.narrow(dim, 0, size - 1)], dim), dim)
    narrow_reverse = flip(inp.narrow(dim, 1, size - 1), (dim,))
    exclusive_reverse = flip(cumprod(cat([one, narrow_reverse], dim), dim), (dim,))
    return grad * (exclusive_normal * exclusive_reverse)


declare("cumprod", nodes=(CumprodBackward0,), function=cumprod, method=True)
declare("prod_safe_zeros_backward", aten=prod_safe_zeros_backward)


# -- the helpers this family's tangent formulas call (PyTorch's `*_jvp`) -----------------


@helper
def cumprod_jvp(self_t: Tensor, self_p: Tensor, result: Tensor, dim: int) -> Tensor:
    """cumprod's tangent (PyTorch's cumprod_jvp): `cumsum(self_t / self_p) * result`
    where no zero came before; from the first zero on (where that formula divides by
    zero), the cumprod of the factors with the first zero's tangent in its place:
    for x = (a, 0, b, 0, c) and t = (t0, ..., t4), (., a*t1, a*b*t1, 0, 0)."""
    where = named("where")
    gradient = (self_t / self_p).cumsum(dim) * result
    if self_p.dim() == 0:
        return gradient.masked_fill_(self_p == 0, self_t)
    mask_zeros = self_p == 0
    mask_first_zero = mask_zeros & (mask_zeros.cumsum(dim) == 1)
    new_grad = named("cumprod")(where(mask_first_zero, self_t, self_p), dim)
    mask_after_first_zero = mask_first_zero.cumsum(dim)
    return where(mask_after_first_zero.to(bool_), new_grad, gradient)
