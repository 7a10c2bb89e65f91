"""exp, log and log1p of float64 values as PyTorch's vectorised CPU kernels compute them.

PyTorch's AVX2 and AVX-512 kernels do not call the C library for these: they call
SLEEF, a library of vectorised math functions (`Sleef_expd4_u10`, `Sleef_logd4_u10`,
`Sleef_log1pd4_u10`, and the 8-lane versions), whose results are within 1 ulp of the
truth but not always the correctly rounded value the C library mostly gives. To agree
with PyTorch to the last bit, minigrad computes them the same way, one value at a
time (SLEEF computes each lane on its own, so 4 or 8 lanes give the same bits). Every
`fma` below is one fused multiply-add, as in SLEEF's AVX2 and AVX-512 builds.

How such a function works, on exp as the example:

* range reduction: write x = q ln2 + s with an integer q and |s| <= ln2 / 2. Then
  exp(x) = 2**q exp(s). ln2 is split into a long part whose product with q is exact
  and a small correction, so s is computed with almost no rounding error.
* a polynomial: on that small interval exp(s) is approximated by a polynomial of
  degree 12 in s, evaluated by Estrin's scheme (pairs of terms, then pairs of pairs,
  with s**2, s**4 and s**8), which is what fixes the exact bits.
* scaling: multiply by 2**q, in two halves so that results near the underflow
  threshold come out as subnormal numbers instead of zero.

log works the other way round: x = 2**e m with m in [0.75, 1.5), then
log(x) = e ln2 + log(m), where log(m) = 2 atanh(y) with y = (m - 1) / (m + 1), an
odd series in y. The leading terms are carried in "double-double" arithmetic (a value
as the unevaluated sum hi + lo of two floats), so the one rounding that counts is
the last one. log1p(x) reduces 1 + x the same way without forming it inexactly.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .bits import bits, from_bits
from .fused import fma

# ln2 in two parts: L2U has few enough bits that q * L2U is exact for |q| < 2**11
L2U = 0.69314718055966295651160180568695068359375
L2L = 0.28235290563031577122588448175013436025525412068e-12
R_LN2 = 1.442695040888963407359924681001892137426645954152985934135449406931
LOG_DBL_MAX = 709.782712893384  # exp overflows beyond this
LN2_HI, LN2_LO = 0.693147180559945286226764, 2.319046813846299558417771e-17  # ln2 as hi + lo
LOG1P_BOUND = 1e307  # above it, log1p(x) is log(x)
DBL_MIN = 2.2250738585072014e-308  # the smallest normal float64


@njit(cache=True, nogil=True)
def _pow2(q):
    """2**q for an integer q in the normal range, built from its exponent bits."""
    return from_bits((q + 1023) << 52)


@njit(cache=True, nogil=True)
def _exp_polynomial(s):
    """exp(s) - 1 - s - s**2/2 divided by s**3, for |s| <= ln2 / 2: SLEEF's degree-9
    polynomial, evaluated by Estrin's scheme (its terms paired with s**2, s**4, s**8)."""
    s2 = s * s
    s4 = s2 * s2
    s8 = s4 * s4
    high = fma(s, 0.2081276378237164457e-8, 0.2511210703042288022e-7)
    p4 = fma(s2, fma(s, 0.2755762628169491192e-6, 0.2755723402025388239e-5),
             fma(s, 0.2480158687479686264e-4, 0.1984126989855865850e-3))
    p0 = fma(s2, fma(s, 0.1388888888914497797e-2, 0.8333333333314938210e-2),
             fma(s, 0.4166666666666602598e-1, 0.1666666666666669072e+0))
    return fma(s8, high, fma(s4, p4, p0))


@njit(cache=True, nogil=True)
def exp(x: float) -> float:
    """e**x as SLEEF's `expd_u10` computes it (error below 1 ulp)."""
    if x > LOG_DBL_MAX:
        return math.inf
    if x < -1000.0:
        return 0.0
    if x != x:
        return x
    u = np.rint(x * R_LN2)  # q, the multiple of ln2 nearest x
    q = int(u)
    s = fma(u, -L2U, x)  # s = x - q ln2, in two exact-ish steps
    s = fma(u, -L2L, s)
    p = _exp_polynomial(s)
    p = fma(p, s, 0.5)  # the last terms, Horner's way: ((p s + 1/2) s + 1) s + 1
    p = fma(p, s, 1.0)
    p = fma(p, s, 1.0)
    half = q >> 1  # 2**q in two factors: either alone stays a normal number
    return p * _pow2(half) * _pow2(q - half)


# -- double-double helpers: a value as hi + lo, |lo| tiny next to hi ---------------------


@njit(cache=True, nogil=True)
def _two_sum(x, y):
    """x + y as hi + lo exactly, whatever the sizes of x and y."""
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


@njit(cache=True, nogil=True)
def _divide(n_hi, n_lo, d_hi, d_lo):
    """(n_hi + n_lo) / (d_hi + d_lo) as hi + lo: one division, then fused corrections."""
    t = 1.0 / d_hi
    s = n_hi * t
    u = fma(t, n_hi, -s)
    v = fma(-d_lo, t, fma(-d_hi, t, 1.0))
    return s, fma(s, v, fma(n_lo, t, u))


@njit(cache=True, nogil=True)
def _log_polynomial(y2):
    """The series 2/3 + 2/5 y**2 + ... of log's reduction (SLEEF's coefficients), in
    y**2, by Estrin's scheme."""
    y4 = y2 * y2
    y8 = y4 * y4
    high = fma(y4, 0.1532076988502701353e+0,
               fma(y2, 0.1525629051003428716e+0, 0.1818605932937785996e+0))
    low = fma(y4, fma(y2, 0.2222214519839380009e+0, 0.2857142932794299317e+0),
              fma(y2, 0.3999999999635251990e+0, 0.6666666666667333541e+0))
    return fma(y8, high, low)


@njit(cache=True, nogil=True)
def _log_of_parts(e, y_hi, y_lo):
    """e ln2 + 2 y + y**3 P(y**2), with y = y_hi + y_lo, summed as hi + lo and then
    rounded once: log(2**e m) when y = (m - 1) / (m + 1)."""
    y2 = y_hi * y_hi
    t = _log_polynomial(y2)
    s_hi = LN2_HI * e  # e ln2 as hi + lo
    s_lo = fma(LN2_LO, e, fma(LN2_HI, e, -s_hi))
    a_hi, a_lo = 2.0 * y_hi, 2.0 * y_lo  # plus 2y (the larger term first)
    hi = s_hi + a_hi
    lo = (((s_hi - hi) + a_hi) + s_lo) + a_lo
    b = (y2 * y_hi) * t  # plus y**3 P(y**2), one float
    hi2 = hi + b
    lo2 = ((hi - hi2) + b) + lo
    return hi2 + lo2


@njit(cache=True, nogil=True)
def _exponent(x):
    """The unbiased exponent field of a positive normal float64."""
    return ((bits(x) >> 52) & 0x7FF) - 1023


@njit(cache=True, nogil=True)
def log(x: float) -> float:
    """The natural logarithm as SLEEF's `logd_u10` computes it (error below 1 ulp)."""
    if x != x or x < 0.0:
        return math.nan
    if x == 0.0:
        return -math.inf
    if x == math.inf:
        return math.inf
    shift = 0
    if x < DBL_MIN:  # a subnormal: scale it up by 2**64 first (exactly)
        x *= 18446744073709551616.0
        shift = 64
    e = _exponent(x * (1.0 / 0.75))  # 2**e the power of two that puts m in [0.75, 1.5)
    m = from_bits(bits(x) - (e << 52))  # x / 2**e, exactly
    n_hi, n_lo = _two_sum(-1.0, m)
    d_hi, d_lo = _two_sum(1.0, m)
    y_hi, y_lo = _divide(n_hi, n_lo, d_hi, d_lo)
    return _log_of_parts(float(e - shift), y_hi, y_lo)


@njit(cache=True, nogil=True)
def log1p(x: float) -> float:
    """log(1 + x) as SLEEF's `log1pd_u10` computes it: 1 + x is reduced to 2**e m
    without being rounded (m = x 2**-e + (2**-e - 1) in one fused step)."""
    if x != x or x < -1.0:
        return math.nan
    if x == -1.0:
        return -math.inf
    if x > LOG1P_BOUND:
        return log(x)
    if x == 0.0:
        return x  # (keeps the sign of -0.0)
    e = _exponent((x + 1.0) * (1.0 / 0.75))
    t = _pow2(-e)
    m = fma(x, t, t - 1.0)
    d_hi = 2.0 + m  # the divisor 2 + m as hi + lo
    d_lo = (2.0 - d_hi) + m
    y_hi, y_lo = _divide(m, 0.0, d_hi, d_lo)
    return _log_of_parts(float(e), y_hi, y_lo)
