"""Joining tensors: `stack` puts tensors of one shape side by side along a new dim.

The result is new memory (not a view). Its node, StackBackward0, has one input per
stacked tensor; each one's gradient is its own slice of the incoming gradient, which
a `create_graph=True` backward takes with `select` (as PyTorch's formula does), so
the recorded graph has a SelectBackward0 per input.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from ..arrays.scalars import u64
from ..autograd.graph import Node
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim

VALUE = "value"


class StackBackward0(Node):
    """stack(tensors, dim): tensor i gets grad.select(dim, i), also recorded."""

    saves = {"dim": VALUE}

    def backward(self, grad):
        d = self._saved["_dim"]
        return tuple(grad[(slice(None),) * d + (i, Ellipsis)]
                     for i in range(len(self.next_functions)))

    def apply_recording(self, grads: list, wanted: list | None = None) -> list:
        """The gradient of each stacked tensor is `grad.select(dim, i)`, recorded
        (SelectBackward0), in input order as PyTorch computes them. (Written out
        rather than as `formulas`: the node has as many inputs as were stacked.)"""
        grad, d = grads[0], self._saved["_dim"]
        return [grad.select(d, i) if (self.needs_grad(i) if wanted is None else wanted[i])
                else None for i in range(len(self.next_functions))]


def stack(tensors, dim: int = 0) -> Tensor:
    """Join tensors of one shape along a new dim `dim` (their dtypes promoted as
    PyTorch's `stack` promotes them)."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError("stack(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {_sizes(first)} at "
                f"entry 0 and {_sizes(t._data.shape)} at entry {i}"
            )
    d = _wrap_dim(dim, len(first) + 1)
    dt = _dtype.result_type(*tensors)
    data = np.stack([t._data for t in tensors], axis=d).astype(dt.np, copy=False)
    out = Tensor._make(data)
    node = record(StackBackward0, out, *tensors)
    if node is not None:
        node._saved.update(dim=u64(dim), _dim=d)
    return out


def _sizes(shape: tuple) -> str:
    return f"[{', '.join(map(str, shape))}]"
