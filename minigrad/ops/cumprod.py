"""cumprod, and the gradient of prod with a zero factor, which is built from it.

The gradient of each factor of a product is the product of all the others. Without
a zero, that is `result / x`; with one, PyTorch's `prod_safe_zeros_backward` takes
it without dividing: the running product of the factors before each one (a
cumprod of `[1, x0, x1, ...]`) times the running product of those after it (the same
from the other end, flipped back). With `create_graph=True` those steps are
recorded (CatBackward0, CumprodBackward0, FlipBackward0, ...), so the second
derivative of a product with a zero factor is PyTorch's.
"""

from __future__ import annotations

import numpy as np

from .._creation import ones
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, OUTPUT, Node, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import Formula
from .joining import cat
from .statistics import flip

# (The op table, `widgets.op_table` and docs/ops.md, lists it with the statistics.)
OP_FAMILY = "statistics"

VALUE = "value"


class CumprodBackward0(Node):
    """cumprod(x, dim): out_j = x_0 * ... * x_j, so x_k's gradient is the sum over
    j >= k of grad_j times the product of the factors up to j but x_k. Saves its
    INPUT and its OUTPUT."""

    saves = {"dim": VALUE, "result": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "cumprod_backward(grad, self, dim, result)"),)
    recordable = False  # (PyTorch's cumprod_backward is not written as minigrad code)

    def backward(self, grad):
        x, out = self.saved("self"), self.saved("result")
        d = self._saved["_dim"]
        if x.size <= 1 or x.shape[d] == 1:
            return (grad,)
        if not (x == 0).any():  # (PyTorch's: a cumsum from the end, over the input)
            w = np.flip(np.cumsum(np.flip(out * grad, d), axis=d), d)
            with np.errstate(all="ignore"):
                return (np.asarray(w / x, grad.dtype),)
        # With a zero, without dividing: for each k, the products with x_k left out.
        xs, gs = np.moveaxis(x, d, -1), np.moveaxis(grad, d, -1)
        result = np.empty_like(gs)
        for k in range(xs.shape[-1]):
            others = xs.copy()
            others[..., k] = 1
            partial = np.cumprod(others, axis=-1)[..., k:]
            result[..., k] = (gs[..., k:] * partial).sum(-1)
        return (np.asarray(np.moveaxis(result, -1, d), grad.dtype),)


def cumprod(x: Tensor, dim: int) -> Tensor:
    """The running product along `dim` (PyTorch's aten::cumprod, for floating
    tensors)."""
    d = _wrap_dim(dim, x._data.ndim)
    data = np.cumprod(x._data, axis=d) if x._data.ndim else x._data.copy()
    out = Tensor._make(np.asarray(data, x._data.dtype))
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


declare("cumprod", nodes=(CumprodBackward0,), aten=cumprod)
declare("prod_safe_zeros_backward", aten=prod_safe_zeros_backward)
