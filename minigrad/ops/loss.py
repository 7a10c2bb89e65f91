"""Loss functions: `mse_loss`, the loss of the course's training loops."""

from __future__ import annotations

import warnings

import numpy as np

from .._dtype import result_type
from ..arrays.broadcasting import broadcast_shape
from ..arrays.dispatch import binary, unary
from ..autograd.graph import INPUT, Node, SavedTensor
from ..autograd.record import record
from ..kernels import elementwise as K
from ..tensor import Size, Tensor
from . import views

VALUE = "value"

# PyTorch stores the reduction as an enum number in `_saved_reduction`.
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}

# PyTorch's scalar type names, as its "not implemented for" messages print them.
TYPE_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}


class MseLossBackward0(Node):
    """mean((input - target) ** 2): 2 * (input - target) * grad, divided by the number
    of elements for "mean"; the target gets the negative of that."""

    saves = {"self": INPUT, "target": INPUT, "reduction": VALUE}

    def backward(self, grad):
        diff = self.saved("self") - self.saved("target")
        mean = self._saved["reduction"] == REDUCTIONS["mean"]
        scale = 2.0 / diff.size if mean and diff.size else 2.0  # (no elements: no gradient)
        # (np.asarray: with 0-d operands numpy's arithmetic gives a number, not an array.)
        g = np.asarray((scale * grad) * diff, grad.dtype)
        return (g if self.needs_grad(0) else None,
                unary(K.neg, g) if self.needs_grad(1) else None)


def legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """The reduction PyTorch's deprecated `size_average` / `reduce` arguments stand
    for, with its warning. (A reduction passed third, `mse_loss(a, b, "sum")`, lands in
    `size_average`: it is truthy, so it means "mean", as in PyTorch.)"""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", UserWarning, stacklevel=3)
    return reduction


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """The mean (or sum, or none) of squared differences, as `F.mse_loss` (whose
    deprecated `size_average` and `reduce` still choose the reduction)."""
    if weight is not None:
        raise NotImplementedError("minigrad's mse_loss has no weight argument")
    if input._data.shape != target._data.shape:
        warnings.warn(
            f"Using a target size ({Size(target._data.shape)!r}) that is different to the "
            f"input size ({Size(input._data.shape)!r}). This will likely lead to incorrect "
            "results due to broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=2,  # the line that called mse_loss
        )
        # Like PyTorch, broadcast both first; an operand that already has the broadcast
        # shape is used as it is, the other shows up in the graph as an ExpandBackward0.
        shape = broadcast_shape(input._data.shape, target._data.shape)
        if input._data.shape != shape:
            input = views.expand(input, shape)
        if target._data.shape != shape:
            target = views.expand(target, shape)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    # PyTorch checks the reduction only after broadcasting, and the dtype after that.
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    dt = result_type(input, target)
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{TYPE_NAMES[dt.name]}'")
    diff = binary(K.sub, input._data, target._data, dt.np)
    sq = binary(K.mul, diff, diff, dt.np)
    if reduction == "none":
        data = sq
    elif reduction == "sum":
        data = np.asarray(sq.sum(), dt.np)
    else:
        # The mean of no elements is nan, without numpy's warning (as in PyTorch).
        data = np.asarray(sq.mean() if sq.size else np.nan, dt.np)
    out = Tensor._make(data)
    node = record(MseLossBackward0, out, input, target)
    if node is not None:
        node._saved.update({"self": SavedTensor(input), "target": SavedTensor(target),
                            "reduction": REDUCTIONS[reduction]})
    return out
