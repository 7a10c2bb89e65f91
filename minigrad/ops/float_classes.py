"""Which class of float each element is (isnan, isinf, isfinite, isposinf, isneginf,
isreal, signbit), and nan_to_num, which replaces the non-finite ones.

The tests return bool tensors and are never differentiable: they record no node.
nan_to_num is differentiable: the gradient passes where the input was finite and is 0
where a value was replaced by a constant, so NanToNumBackward0 saves its INPUT.
"""

from __future__ import annotations

import numpy as np

from ..autograd.graph import INPUT, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record_elementwise
from ..tensor import Tensor
from .declaration import declare
from .formulas import Formula, FormulaNode
from .tangent_formulas import AUTO_ELEMENT_WISE


def _test(np_test, name: str, *, integers: bool):
    """A float test as an op: `np_test` on floats; on integers and bools every element
    gives `integers` (they are finite, never nan nor infinite)."""
    def test(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        data = input._data
        if data.dtype.kind != "f":
            return Tensor._make(np.full(data.shape, integers))
        return Tensor._make(np.asarray(np_test(data)))

    test.__name__ = test.__qualname__ = name
    return test


isnan = _test(np.isnan, "isnan", integers=False)
isinf = _test(np.isinf, "isinf", integers=False)
isposinf = _test(np.isposinf, "isposinf", integers=False)
isneginf = _test(np.isneginf, "isneginf", integers=False)
isfinite = _test(np.isfinite, "isfinite", integers=True)
isnan.__doc__ = "Whether each element is nan (a bool tensor; never differentiable)."
isinf.__doc__ = "Whether each element is +inf or -inf (a bool tensor)."
isposinf.__doc__ = "Whether each element is +inf (a bool tensor)."
isneginf.__doc__ = "Whether each element is -inf (a bool tensor)."
isfinite.__doc__ = "Whether each element is neither inf nor nan (a bool tensor)."


def isreal(input: Tensor) -> Tensor:  # noqa: A002
    """Whether each element has no imaginary part: all True, minigrad has no complex
    dtypes."""
    return Tensor._make(np.ones(input._data.shape, np.bool_))


def signbit(input: Tensor) -> Tensor:  # noqa: A002
    """Whether each element's sign bit is set: True for negatives, -0.0 and -inf (and
    a nan whose sign bit is set)."""
    data = input._data
    if data.dtype == np.bool_:
        return Tensor._make(np.zeros(data.shape, np.bool_))
    return Tensor._make(np.asarray(np.signbit(data)))


# -- nan_to_num -------------------------------------------------------------------------------


class NanToNumBackward0(FormulaNode):
    """nan_to_num(x): the gradient passes where x is finite, 0 where it was replaced.
    Saves its INPUT. (Its plain backward runs the formula: a rare op needs no fused
    kernel.)"""

    tangent = AUTO_ELEMENT_WISE
    elementwise = True
    saves = {"self": INPUT}
    formulas = (Formula("self", "grad * self.isfinite()"),)


def _replaced(data: np.ndarray, nan, posinf, neginf) -> np.ndarray:
    """nan -> `nan`, +inf -> `posinf`, -inf -> `neginf`; an infinity replaced by the
    dtype's largest finite value of its sign where no number is given."""
    if data.dtype.kind != "f":
        return data.copy()
    return np.nan_to_num(data, nan=0.0 if nan is None else nan, posinf=posinf,
                         neginf=neginf)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,  # noqa: A002
               neginf: float | None = None) -> Tensor:
    """The input with nan, +inf and -inf replaced by finite numbers."""
    out = Tensor._make(_replaced(input._data, nan, posinf, neginf))
    node = record_elementwise(NanToNumBackward0, out, input)
    if node is not None:
        node._saved["self"] = SavedTensor(input)
    return out


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: float | None = None,  # noqa: A002
                neginf: float | None = None) -> Tensor:
    """`nan_to_num` in place."""
    node = begin_inplace(NanToNumBackward0, input)
    original = input.clone() if node is not None else None  # (PyTorch's recorded clone)
    input._data[...] = _replaced(input._data, nan, posinf, neginf)
    finish_inplace(input, node)
    if node is not None:
        node._saved["self"] = SavedTensor(original)
    return input


for _name, _fn in (("isnan", isnan), ("isinf", isinf), ("isposinf", isposinf),
                   ("isneginf", isneginf), ("isfinite", isfinite), ("isreal", isreal),
                   ("signbit", signbit)):
    declare(_name, function=_fn, method=True)
declare("nan_to_num", nodes=(NanToNumBackward0,), function=nan_to_num, method=True,
        inplace=nan_to_num_, function_inplace=True)
