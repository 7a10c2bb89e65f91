"""Numbers as kernels and PyTorch's saved attributes want them."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .._dtype import float32, float64

if TYPE_CHECKING:
    from ..tensor import Tensor


def u64(dim: int) -> int:
    """PyTorch stores a negative dim in a saved attribute as an unsigned 64-bit wrap
    (`-1` reads back as 18446744073709551615); minigrad reports the same value."""
    return dim + 2**64 if dim < 0 else dim


def signed_dims(value):
    """`u64` undone: a saved value with its unsigned dims (an int, or ints in a tuple)
    back as the signed ints they are; anything else as it is. (Backward formulas read
    saved dims this way.)"""
    if type(value) is int and value >= 2**63:
        return value - 2**64
    if type(value) is tuple and any(type(v) is int and v >= 2**63 for v in value):
        return tuple(signed_dims(v) for v in value)
    return value


def scalar_of(value, dtype) -> np.generic | float:
    """A Python number as a numpy scalar of the computation dtype, so kernels do
    float32 arithmetic in float32, as PyTorch does (a Python float already is a
    float64)."""
    if dtype is float64 and type(value) is float:
        return value
    if dtype is float32 and isinstance(value, (int, float)) and abs(value) >= _F32_OVERFLOW:
        # Rounds to inf in float32; numpy's cast would say so with a RuntimeWarning,
        # PyTorch silently gives inf.
        return np.float32(math.copysign(math.inf, value))
    return dtype.np.type(value)


# The smallest magnitude that rounds to inf in float32: 2**128 less half an ulp.
_F32_OVERFLOW = 2.0**128 * (1 - 2.0**-25)


def as_float_data(x: Tensor) -> np.ndarray:
    d = x._data
    return d if d.dtype.kind == "f" else d.astype(np.float32)
