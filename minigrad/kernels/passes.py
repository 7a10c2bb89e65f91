"""Element-wise kernels written as numpy passes, not numba loops.

An op that no lesson calls should cost no compile time: these kernels are plain numpy,
one ufunc call per step of the formula, each step rounded in the arrays' dtype, in the
order PyTorch's formula rounds them. Each takes flat arrays and writes into `out`,
as the numba kernels do (`kernel(x, out)`, `fused(grad, saved, out)`), so an op
declaration cannot tell them apart.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def in_double(ufunc: np.ufunc) -> Callable[[np.ndarray, np.ndarray], None]:
    """`ufunc(x)` computed in double and rounded to x's dtype: a float32 result comes
    out correctly rounded (numpy's own float32 versions may be an ulp or two off)."""
    def forward(x: np.ndarray, out: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            ufunc(x, out=out, dtype=np.float64, casting="same_kind")
    forward.__name__ = forward.__qualname__ = ufunc.__name__
    return forward


def rsqrt_into(x: np.ndarray, out: np.ndarray) -> None:
    """1 / sqrt(x), two roundings, as PyTorch computes rsqrt (nan below 0, inf at 0)."""
    with np.errstate(all="ignore"):
        np.sqrt(x, out=out)
        np.divide(1, out, out=out)


def rsqrt(x: np.ndarray, out: np.ndarray) -> None:
    """The forward of `rsqrt`."""
    rsqrt_into(x, out)


def scaled(factor: float) -> Callable[[np.ndarray, np.ndarray], None]:
    """x * factor (deg2rad, rad2deg): the factor rounded to x's dtype first, as
    PyTorch's Scalar is."""
    def forward(x: np.ndarray, out: np.ndarray) -> None:
        np.multiply(x, x.dtype.type(factor), out=out)
    return forward


def times_factor(factor: float) -> Callable[[np.ndarray, np.ndarray], None]:
    """grad * factor, the fused backward of a linear op (`fused(grad, out)`)."""
    def fused(grad: np.ndarray, out: np.ndarray) -> None:
        np.multiply(grad, grad.dtype.type(factor), out=out)
    return fused
