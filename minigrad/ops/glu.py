"""glu, the gated linear unit: the input split in two halves a, b along `dim`, and
a * sigmoid(b) (node GluBackward0).

Its gradient is an op of its own in PyTorch, glu_backward (node
GluBackwardBackward0): with s = sigmoid(b), the gradient of a is grad * s and that of
b is grad * a * s * (1 - s), the two halves put back together. Its own gradient
(`glu_double_backward`, `glu_double_backward_grad_output`) is written with minigrad
ops, so a third derivative records PyTorch's graph.
"""

from __future__ import annotations

import numpy as np

from .._creation import ones
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, helper, named, on_arrays
from .joining import cat
from .tangent_formulas import Tangent
from .unary import sigmoid

OP_FAMILY = "activations"


def _halves(a: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    n = a.shape[d] // 2
    return np.take(a, np.arange(n), d), np.take(a, np.arange(n, 2 * n), d)


def _sigmoid(b: np.ndarray) -> np.ndarray:
    return sigmoid(Tensor._make(b))._data


def _check(input: Tensor, dim: int) -> int:  # noqa: A002
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    if input._data.dtype.kind != "f":
        kind = "Long" if input._data.dtype.kind == "i" else "Bool"
        raise NotImplementedError(f"\"glu_cpu\" not implemented for '{kind}'")
    return d


class GluBackward0(ArrayFormulaNode):
    """glu(x, dim): PyTorch's glu_backward of the gradient. Saves its INPUT."""

    tangent = Tangent("glu_jvp(result, self_p, self_t, dim)")
    saves = {"dim": VALUE, "self": INPUT}
    formulas = (Formula("self", "glu_backward(grad, self, dim)"),)


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """a * sigmoid(b), for a and b the two halves of `input` along `dim`."""
    d = _check(input, dim)
    a, b = _halves(input._data, d)
    out = Tensor._make(np.asarray(a * _sigmoid(b), input._data.dtype))
    node = record(GluBackward0, out, input)
    if node is not None:
        node._saved.update({"dim": u64(int(dim)), "self": SavedTensor(input)})
    return out


def _glu_backward_array(grad: np.ndarray, x: np.ndarray, dim: int) -> np.ndarray:
    """glu's gradient on arrays: (grad * s, (1 - s) * s * a * grad), s = sigmoid(b)."""
    d = dim % x.ndim
    a, b = _halves(x, d)
    s = _sigmoid(b)
    one = x.dtype.type(1)
    return np.concatenate([s * grad, (one - s) * s * a * grad], axis=d)


on_arrays("glu_backward")(_glu_backward_array)


class GluBackwardBackward0(FormulaNode):
    """glu_backward(grad_output, x, dim): its gradients are PyTorch's
    glu_double_backward_grad_output and glu_double_backward."""

    saves = {"dim": VALUE, "grad_output": INPUT, "self": INPUT}
    formulas = (Formula("grad_output", "glu_double_backward_grad_output(grad, self, dim)"),
                Formula("self", "glu_double_backward(grad, grad_output, self, dim)"))


def glu_backward(grad_output: Tensor, input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """glu's gradient of its input (PyTorch's aten op of that name)."""
    out = Tensor._make(_glu_backward_array(grad_output._data, input._data, dim))
    node = record(GluBackwardBackward0, out, grad_output, input)
    if node is not None:
        node._saved.update({"dim": u64(int(dim)), "grad_output": SavedTensor(grad_output),
                            "self": SavedTensor(input)})
    return out


@helper
def glu_double_backward(grad: Tensor, grad_output: Tensor, input: Tensor,  # noqa: A002
                        dim: int) -> Tensor:
    """The gradient of glu_backward with respect to glu's input."""
    n = input.shape[dim] // 2
    first_half, second_half = input.narrow(dim, 0, n), input.narrow(dim, n, n)
    sig_second_half = second_half.sigmoid()
    one_sub_sig_second_half = 1 - sig_second_half
    sig_one_sub_sig = sig_second_half * one_sub_sig_second_half
    ggi_first_half, ggi_second_half = grad.narrow(dim, 0, n), grad.narrow(dim, n, n)
    ggi_second_half_times_first_half = ggi_second_half * first_half
    gi_first_half = ggi_second_half * grad_output * sig_one_sub_sig
    second_order_sh = (sig_one_sub_sig * one_sub_sig_second_half
                       - sig_second_half * sig_one_sub_sig)
    gi_second_half = (ggi_second_half_times_first_half * grad_output * second_order_sh
                      + ggi_first_half * grad_output * sig_one_sub_sig)
    return cat([gi_first_half, gi_second_half], dim)


@helper
def glu_double_backward_grad_output(grad: Tensor, input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """The gradient of glu_backward with respect to its grad_output."""
    d = _wrap_dim(dim, input.ndim)
    sizes = list(input.shape)
    sizes[d] //= 2
    tmp = grad * glu_backward(ones(sizes, dtype=input.dtype), input, d)
    return tmp.narrow(d, 0, sizes[d]) + tmp.narrow(d, sizes[d], sizes[d])


@helper
def glu_jvp(result: Tensor, x: Tensor, dx, dim: int):
    """glu's tangent: sigmoid(b) * da + glu * (1 - sigmoid(b)) * db."""
    d = _wrap_dim(dim, x.ndim)
    n = result.shape[d]
    b = x.narrow(d, n, n)
    da, db = dx.narrow(d, 0, n), dx.narrow(d, n, n)
    sig_b = named("sigmoid")(b)
    return sig_b * da + result * (1 - sig_b) * db


declare("glu", nodes=(GluBackward0,))
declare("glu_backward", nodes=(GluBackwardBackward0,), aten=glu_backward)
