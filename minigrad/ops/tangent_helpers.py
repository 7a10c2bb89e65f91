"""The helpers tangent formulas call: PyTorch's `*_jvp` functions (FunctionsManual.cpp)
and the like, in minigrad code, so that a tangent computed while grad mode records
has a graph of its own.

Each is registered by name in `tangent_formulas.HELPERS`, which `apply_tangent` puts
beside a formula's names. A helper receives `ZERO` for an input without a tangent.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from .._dtype import result_type
from ..grad_mode import STATE
from ..tensor import Tensor
from .activations import GeluBackward0
from .formulas import BACKWARD_OPS
from .tangent_formulas import HELPERS


def _helper(fn: Callable) -> Callable:
    HELPERS[fn.__name__] = fn
    return fn


def _ns():
    """minigrad's namespace (the ops sit below it, so it is looked up, not imported)."""
    return sys.modules["minigrad"]


# -- element-wise -------------------------------------------------------------------------


class _SavedInput:
    """What GeluBackward0's kernel reads off its node: the input and `approximate`."""

    def __init__(self, x: np.ndarray, approximate: str) -> None:
        self._x = x
        self._saved = {"approximate": approximate}

    def saved(self, name: str) -> np.ndarray:
        return self._x


@_helper
def gelu_backward(grad: Tensor, self: Tensor, approximate: str) -> Tensor:
    """aten::gelu_backward: `grad` times gelu's derivative at `self`. The op itself
    where minigrad has it (it records its own node); until then, gelu's backward
    kernel, which records nothing, so it refuses a `self` whose graph it would lose."""
    op = BACKWARD_OPS.get("gelu_backward")
    if op is not None:
        return op(grad, self, approximate)
    if STATE.grad_enabled and self.requires_grad:
        raise NotImplementedError(
            "the tangent of gelu for an input that requires grad needs gelu_backward's "
            "own node, which minigrad does not have yet")
    ones = np.ones(self._data.shape, self._data.dtype)
    slope = GeluBackward0.backward(_SavedInput(self._data, approximate), ones)[0]
    return grad * Tensor._make(np.ascontiguousarray(slope))


@_helper
def share(wins: Tensor, self: Tensor, other: Tensor) -> Tensor:
    """maximum's and minimum's share of `self_t - other_t` in the tangent: 1 where
    self wins, 0.5 where it ties, else 0 (`where(self_p == other_p, 0.5, (self_p >
    other_p).to(result.scalar_type()))`, PyTorch's formula)."""
    return _ns().where(self == other, 0.5, wins.to(result_type(self, other)))
