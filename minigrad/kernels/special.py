"""Kernels of the special functions numpy has no ufunc for: erf, erfc, erfinv.

Plain loops, compiled on first use (no signatures given ahead). Each computes in
double and stores in `out`'s dtype.
"""

import math

from numba import njit

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
# Winitzki's constant: a closed form within 0.2% of erfinv, the first guess Newton's
# method refines
_WINITZKI = 0.147


@njit(cache=True, nogil=True, error_model="numpy")
def erf(x, out):
    for i in range(out.size):
        out[i] = math.erf(float(x[i]))


@njit(cache=True, nogil=True, error_model="numpy")
def erfc(x, out):
    for i in range(out.size):
        out[i] = math.erfc(float(x[i]))


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def inverse_erf(y):
    """The x with erf(x) = y, for y in (-1, 1): Winitzki's closed form, then Newton's
    method on erf(x) - y. Near |y| = 1 erf is flat, so there it solves
    erfc(|x|) = 1 - |y| instead, which keeps its relative precision."""
    a = math.fabs(y)
    log_term = math.log((1 - a) * (1 + a))
    first = 2 / (math.pi * _WINITZKI) + log_term / 2
    x = math.sqrt(math.sqrt(first * first - log_term / _WINITZKI) - first)
    for _ in range(4):
        slope = _TWO_OVER_SQRT_PI * math.exp(-x * x)
        miss = math.erf(x) - a if a < 0.5 else (1 - a) - math.erfc(x)
        x -= miss / slope
    return math.copysign(x, y)


@njit(cache=True, nogil=True, error_model="numpy")
def erfinv(x, out):
    """The inverse error function: +-inf at +-1, nan outside [-1, 1]."""
    for i in range(out.size):
        y = float(x[i])
        if y == 1 or y == -1:
            out[i] = math.copysign(math.inf, y)
        elif -1 < y < 1:
            out[i] = inverse_erf(y)
        else:
            out[i] = math.nan
