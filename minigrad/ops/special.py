"""The error function and its relatives: erf, erfc, erfinv.

erf(x) = 2 / sqrt(pi) * integral of exp(-t**2) from 0 to x, the normal distribution's
cumulative function in disguise. Its derivative 2 / sqrt(pi) * exp(-x**2) needs the
input, so ErfBackward0 saves its INPUT; so does erfinv's, whose derivative
sqrt(pi) / 2 * exp(erfinv(x)**2) PyTorch computes from the input again.

The forwards are numba loops (`kernels/special.py`: numpy has no erf); the fused
backwards run exp through minigrad's own kernel, as the formula's `exp()` does, so the
two agree to the bit.
"""

from __future__ import annotations

import numpy as np

from ..arrays.dispatch import unary
from ..kernels import elementwise as K
from ..kernels import special as S
from .declaration import unary_op

# 2 / sqrt(pi) and sqrt(pi) / 2, as PyTorch's formulas compute them in double
_TWO_OVER_SQRT_PI = 1.1283791670955126
_HALF_SQRT_PI = 0.8862269254527579


def _times_gaussian(factor: float):
    """grad * factor * exp(-x**2) (erf's factor 2 / sqrt(pi), erfc's its negative)."""
    def fused(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            np.multiply(x, x, out=out)
            np.negative(out, out=out)
            out[...] = unary(K.exp, out)
            np.multiply(out, out.dtype.type(factor), out=out)
            np.multiply(out, grad, out=out)
    return fused


def erfinv_backward(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """sqrt(pi) / 2 * exp(erfinv(x)**2) * grad."""
    with np.errstate(all="ignore"):
        y = unary(S.erfinv, x)
        np.multiply(y, y, out=out)
        out[...] = unary(K.exp, out)
        np.multiply(out, out.dtype.type(_HALF_SQRT_PI), out=out)
        np.multiply(out, grad, out=out)


unary_op("erf", node="ErfBackward0", kernel=S.erf,
         formula="1.1283791670955126 * (-self.pow(2)).exp() * grad",
         fused=_times_gaussian(_TWO_OVER_SQRT_PI),
         doc="The error function, from -1 to 1. Its derivative 2 / sqrt(pi) * exp(-x**2) "
             "needs the input, so it saves its input.")

unary_op("erfc", node="ErfcBackward0", kernel=S.erfc,
         formula="-1.1283791670955126 * (-self.pow(2)).exp() * grad",
         fused=_times_gaussian(-_TWO_OVER_SQRT_PI),
         doc="1 - erf(x), exact where erf(x) is near 1. Its derivative "
             "-2 / sqrt(pi) * exp(-x**2) needs the input, so it saves its input.")

unary_op("erfinv", node="ErfinvBackward0", kernel=S.erfinv,
         formula="0.8862269254527579 * self.erfinv().pow(2).exp() * grad",
         fused=erfinv_backward, function_inplace=False,
         doc="The inverse of erf, on [-1, 1] (+-inf at +-1). Its derivative "
             "sqrt(pi) / 2 * exp(erfinv(x)**2) is computed from the input again, so it "
             "saves its input.")
