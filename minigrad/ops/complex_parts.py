"""The ops of complex numbers, on minigrad's real tensors: conj, conj_physical,
resolve_conj, resolve_neg, real, imag, angle.

minigrad has no complex dtypes, so a tensor is its own conjugate and its own real
part: those ops return the tensor itself (the same object, as PyTorch returns for a
real tensor, so no node is recorded), `imag` refuses as PyTorch does, and `angle` is
0 for x >= 0 and pi below (nan stays nan). angle is flat wherever it has a slope:
AngleBackward0 saves its INPUT (PyTorch's formula reads it to tell complex from real)
and gives zeros.
"""

from __future__ import annotations

import math

import numpy as np

from .._creation import zeros_like
from ..arrays.scalars import as_float_data
from ..autograd.graph import INPUT, SavedTensor
from ..autograd.record import record_elementwise
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, on_arrays
from .public_forms import checked_input
from .tangent_formulas import AUTO_ELEMENT_WISE


def conj(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """The complex conjugate: a real tensor is its own (the tensor itself)."""
    return checked_input(input, "conj")


def conj_physical(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate, computed: for a real tensor, the tensor itself."""
    return checked_input(input, "conj_physical")


def resolve_conj(input: Tensor) -> Tensor:  # noqa: A002
    """The tensor with a pending conjugation applied: a real tensor has none."""
    return checked_input(input, "resolve_conj")


def resolve_neg(input: Tensor) -> Tensor:  # noqa: A002
    """The tensor with a pending negation applied: minigrad's tensors have none."""
    return checked_input(input, "resolve_neg")


def real(input: Tensor) -> Tensor:  # noqa: A002
    """The real part: a real tensor itself."""
    return checked_input(input, "real")


def imag(input: Tensor) -> Tensor:  # noqa: A002
    """The imaginary part, which a real tensor does not have (PyTorch's error)."""
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


class AngleBackward0(ArrayFormulaNode):
    """angle(x) for a real x: 0 or pi, flat, so a zero gradient. Saves its INPUT."""

    tangent = AUTO_ELEMENT_WISE
    elementwise = True
    saves = {"self": INPUT}
    formulas = (Formula("self", "angle_backward(grad, self)"),)


@helper
def angle_backward(grad: Tensor, self: Tensor) -> Tensor:
    """angle's gradient for a real input: zeros shaped like it (PyTorch's)."""
    return zeros_like(self)


@on_arrays("angle_backward")
def _angle_backward_arrays(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.zeros(x.shape, grad.dtype)


def angle(input: Tensor) -> Tensor:  # noqa: A002
    """The angle of each element as a complex number: 0 for x >= 0, pi below (nan
    stays nan); integers and bools give the default float dtype."""
    x = input._data if input._data.dtype.kind == "f" else as_float_data(input)
    with np.errstate(invalid="ignore"):
        values = np.where(x < 0, x.dtype.type(math.pi), x.dtype.type(0))
    values = np.where(np.isnan(x), x, values)
    out = Tensor._make(np.asarray(values, x.dtype))
    node = record_elementwise(AngleBackward0, out, input)
    if node is not None:
        node._saved["self"] = SavedTensor(input)
    return out


declare("conj", function=conj, method=True)
declare("conj_physical", function=conj_physical, method=True)
declare("resolve_conj", function=resolve_conj, method=True)
declare("resolve_neg", function=resolve_neg, method=True)
declare("real", function=real, attributes={"real": property(real)})
declare("imag", function=imag, attributes={"imag": property(imag)})
declare("angle", nodes=(AngleBackward0,), function=angle, method=True)
