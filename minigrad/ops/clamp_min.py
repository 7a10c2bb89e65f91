"""clamp_min(x, min): max(x, min) element by element, with a number `min` (node
ClampMinBackward0). PyTorch's composite losses and distances call it (margin losses
are `clamp_min(margin - ..., 0)`, `normalize` divides by `norm.clamp_min(eps)`), so
their graphs show it. The gradient passes where x >= min (ties included), as
PyTorch's `where(self >= min, grad, 0)`.
"""

from __future__ import annotations

import numpy as np

from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, named, on_arrays
from .tangent_formulas import AUTO_ELEMENT_WISE

OP_FAMILY = "unary"


class ClampMinBackward0(ArrayFormulaNode):
    """clamp_min(x, min): the gradient where x >= min, 0 elsewhere. Saves its INPUT."""

    tangent = AUTO_ELEMENT_WISE
    saves = {"min": VALUE, "self": INPUT}
    formulas = (Formula("self", "clamp_min_backward(grad, self, min)"),)


@helper
def clamp_min_backward(grad: Tensor, self: Tensor, min) -> Tensor:  # noqa: A002
    """PyTorch's `where(self >= min, grad, at::scalar_tensor(0., grad.options()))`."""
    zero = Tensor._make(np.zeros((), grad._data.dtype))
    return named("where")(self >= min, grad, zero)


@on_arrays("clamp_min_backward")
def _clamp_min_backward(grad: np.ndarray, x: np.ndarray, min) -> np.ndarray:  # noqa: A002
    return np.where(x >= min, grad, grad.dtype.type(0))


def _clamped(x: np.ndarray, low) -> np.ndarray:
    """max(x, low), nan staying nan (numpy's `maximum` keeps nan, as PyTorch's does)."""
    return np.maximum(x, x.dtype.type(low))


def clamp_min(input: Tensor, min) -> Tensor:  # noqa: A002
    """max(x, min) element by element, for a number `min` (floating input)."""
    out = Tensor._make(_clamped(input._data, min))
    node = record(ClampMinBackward0, out, input)
    if node is not None:
        node._saved.update({"min": min, "self": SavedTensor(input)})
    return out


def clamp_min_(input: Tensor, min) -> Tensor:  # noqa: A002
    """`clamp_min` in place (the node saves a copy of the input as it was)."""
    node = begin_inplace(ClampMinBackward0, input)
    original = Tensor._make(input._data.copy()) if node is not None else None
    input._data[...] = _clamped(input._data, min)
    finish_inplace(input, node)
    if node is not None:
        node._saved.update({"min": min, "self": SavedTensor(original)})
    return input


declare("clamp_min", nodes=(ClampMinBackward0,), aten=clamp_min)
