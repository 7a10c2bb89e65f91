"""Loss functions: `mse_loss`, the loss of the course's training loops."""

from __future__ import annotations

import warnings

import numpy as np

from .._dtype import result_type
from ..autograd.graph import INPUT, Node, SavedTensor
from ..tensor import Size, Tensor, record
from . import views

VALUE = "value"

# PyTorch stores the reduction as an enum number in `_saved_reduction`.
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


class MseLossBackward0(Node):
    """mean((input - target) ** 2): 2 * (input - target) * grad, divided by the number
    of elements for "mean"; the target gets the negative of that."""

    saves = {"self": INPUT, "target": INPUT, "reduction": VALUE}

    def backward(self, grad):
        diff = self.saved("self") - self.saved("target")
        scale = 2.0 / diff.size if self._saved["reduction"] == REDUCTIONS["mean"] else 2.0
        g = (scale * grad) * diff
        g = g.astype(grad.dtype, copy=False)
        return (g if self.needs_grad(0) else None, -g if self.needs_grad(1) else None)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    """The mean (or sum, or none) of squared differences, as `F.mse_loss`."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if input._data.shape != target._data.shape:
        warnings.warn(
            f"Using a target size ({Size(target._data.shape)!r}) that is different to the "
            f"input size ({Size(input._data.shape)!r}). This will likely lead to incorrect "
            "results due to broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )
        # Like PyTorch, broadcast both first: the graph shows two ExpandBackward0.
        from ._util import broadcast_shape

        shape = broadcast_shape(input._data.shape, target._data.shape)
        input, target = views.expand(input, shape), views.expand(target, shape)
    dt = result_type(input, target)
    diff = input._data.astype(dt.np, copy=False) - target._data.astype(dt.np, copy=False)
    sq = diff * diff
    if reduction == "none":
        data = sq
    else:
        data = np.asarray(sq.mean() if reduction == "mean" else sq.sum(), dt.np)
    out = Tensor._make(data)
    node = record(MseLossBackward0, out, input, target)
    if node is not None:
        node._saved.update({"self": SavedTensor(input), "target": SavedTensor(target),
                            "reduction": REDUCTIONS[reduction]})
    return out
