"""exp, log and log1p of float32 values as PyTorch's vectorised CPU kernels compute them.

The float32 companion of `sleef.py`: PyTorch's AVX2 and AVX-512 kernels call SLEEF's
`Sleef_expf8_u10`, `Sleef_logf8_u10` and `Sleef_log1pf8_u10` (and their 16-lane
versions), which are within 1 ulp of the truth but not always the correctly rounded
float the C library's expf and logf give. Each lane is computed on its own, so one
value at a time gives the same bits. Every `fma` below is one fused multiply-add, as
in SLEEF's AVX2 and AVX-512 builds; every constant is a float32 (numba would compute
in float64 if a Python float slipped in, and round differently).

(PyTorch also has a faster, less exact float32 exp, `Vectorized<float>::exp_u20`, a
degree-5 polynomial; its softmax, log_softmax and log_sigmoid kernels do not call it,
as comparing their results with both shows: every one of their float32 exps is
SLEEF's, or the C library's expf in the portable build and the scalar tail loops.)

The algorithms are those of `sleef.py`, with fewer terms:

* exp: x = q ln2 + s (q the nearest integer to x / ln2, ln2 split in two parts so
  that s is nearly exact), exp(s) by a degree-7 polynomial in Horner's form, then
  times 2**q, in two factors so that subnormal results survive.
* log: x = 2**e m with m in [0.75, 1.5); log(x) = e ln2 + 2 atanh(y), y = (m - 1) /
  (m + 1); the big terms are kept as float pairs hi + lo ("double-float") so that the
  result is rounded once at the end.
* log1p: the same, with m formed from x without rounding 1 + x first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .bits import bits, from_bits
from .fused import fma

F = np.float32
ZERO, HALF, ONE, TWO = F(0.0), F(0.5), F(1.0), F(2.0)
INF, NAN = F(np.inf), F(np.nan)
L2U = F(0.693145751953125)  # ln2 = L2U + L2L; q * L2U is exact for the q that matter
L2L = F(1.428606765330187045e-06)
R_LN2 = F(1.442695040888963407359924681001892137426645954152985934135449406931)
LN2_HI, LN2_LO = F(0.69314718246459960938), F(-1.904654323148236017e-09)  # ln2 = hi + lo
FOUR_THIRDS = F(1.0 / 0.75)
FLT_MIN = F(2.0**-126)  # the smallest normal float32
TWO_64 = F(2.0**64)
LOG1P_BOUND = F(1e38)  # above it, log1p(x) is log(x)
# exp's polynomial for (exp(s) - 1 - s) / s**2 - 1/2, highest power first
EXP_COEFFS = (F(0.000198527617612853646278381), F(0.00139304355252534151077271),
              F(0.00833336077630519866943359), F(0.0416664853692054748535156),
              F(0.166666671633720397949219))
# log's odd series after 2y: (atanh(y) - y) * 2 / y**3 in y**2, highest power first
LOG_COEFFS = (F(0.3027294874), F(0.3996108174), F(0.6666694880))


@njit(cache=True, nogil=True)
def _pow2(q):
    """2**q for an int32 q in the normal range, built from its exponent bits."""
    return from_bits(np.int32((q + 127) << 23))


@njit(cache=True, nogil=True)
def exp(x):
    """e**x as SLEEF's `expf_u10` computes it, for a float32 x."""
    q = np.int32(np.rint(x * R_LN2))
    qf = F(q)
    s = fma(qf, -L2U, x)
    s = fma(qf, -L2L, s)
    u = EXP_COEFFS[0]
    for c in EXP_COEFFS[1:]:
        u = fma(u, s, c)
    u = fma(u, s, HALF)
    u = ONE + fma(s * s, u, s)
    half = q >> 1
    u = u * _pow2(half) * _pow2(q - half)
    if x < F(-104.0):
        return ZERO
    if x > F(100.0):
        return INF
    return u


# -- double-float helpers: a value as hi + lo -----------------------------------------------


@njit(cache=True, nogil=True)
def _divide(n_hi, n_lo, d_hi, d_lo):
    """(n_hi + n_lo) / (d_hi + d_lo) as hi + lo: one division, then fused corrections."""
    t = ONE / d_hi
    s = n_hi * t
    u = fma(t, n_hi, -s)
    v = fma(-d_lo, t, fma(-d_hi, t, ONE))
    return s, fma(s, v, fma(n_lo, t, u))


@njit(cache=True, nogil=True)
def _log_of_parts(e, y_hi, y_lo):
    """e ln2 + 2 y + y**3 P(y**2), y = y_hi + y_lo, summed as hi + lo and then rounded
    once: log(2**e m) when y = (m - 1) / (m + 1)."""
    y2 = y_hi * y_hi
    t = fma(fma(LOG_COEFFS[0], y2, LOG_COEFFS[1]), y2, LOG_COEFFS[2])
    s_hi = LN2_HI * e  # e ln2 as hi + lo
    s_lo = fma(LN2_LO, e, fma(LN2_HI, e, -s_hi))
    a_hi, a_lo = y_hi * TWO, y_lo * TWO  # plus 2y
    hi = s_hi + a_hi
    lo = (((s_hi - hi) + a_hi) + s_lo) + a_lo
    b = (y2 * y_hi) * t  # plus y**3 P(y**2), one float
    hi2 = hi + b
    lo2 = ((hi - hi2) + b) + lo
    return hi2 + lo2


@njit(cache=True, nogil=True)
def _exponent(x):
    """The unbiased exponent field of a positive normal float32."""
    return ((bits(x) >> 23) & 0xFF) - 127


@njit(cache=True, nogil=True)
def log(x):
    """The natural logarithm as SLEEF's `logf_u10` computes it, for a float32 x."""
    if x != x or x < ZERO:
        return NAN
    if x == ZERO:
        return -INF
    if x == INF:
        return INF
    shift = 0
    if x < FLT_MIN:  # a subnormal: scale it up by 2**64 first (exactly)
        x = x * TWO_64
        shift = 64
    e = _exponent(x * FOUR_THIRDS)  # 2**e the power of two that puts m in [0.75, 1.5)
    m = from_bits(np.int32(bits(x) - (e << 23)))  # x / 2**e, exactly
    n_hi = -ONE + m  # m - 1 and m + 1 as hi + lo (two-sums)
    v = n_hi + ONE
    n_lo = (-ONE - (n_hi - v)) + (m - v)
    d_hi = ONE + m
    v = d_hi - ONE
    d_lo = (ONE - (d_hi - v)) + (m - v)
    y_hi, y_lo = _divide(n_hi, n_lo, d_hi, d_lo)
    return _log_of_parts(F(e - shift), y_hi, y_lo)


@njit(cache=True, nogil=True)
def log1p(x):
    """log(1 + x) as SLEEF's `log1pf_u10` computes it, for a float32 x: 1 + x is reduced
    to 2**e m without being rounded (m = x 2**-e + (2**-e - 1) in one fused step)."""
    if x != x or x < -ONE:
        return NAN
    if x == -ONE:
        return -INF
    if x > LOG1P_BOUND:
        return log(x)
    if x == ZERO:
        return x  # (keeps the sign of -0.0)
    e = _exponent((x + ONE) * FOUR_THIRDS)
    t = _pow2(np.int32(-e))
    m = fma(x, t, t - ONE)
    d_hi = TWO + m  # the divisor 2 + m as hi + lo
    d_lo = (TWO - d_hi) + m
    y_hi, y_lo = _divide(m, ZERO, d_hi, d_lo)
    return _log_of_parts(F(e), y_hi, y_lo)
