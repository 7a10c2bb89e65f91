"""PyTorch's CPU random number generator, step by step: an mt19937 engine and the
transforms PyTorch applies to its 32- and 64-bit words.

The engine's whole state is one int64 array `mt` of 626 entries: the 624 32-bit words
of the Mersenne Twister (each held in an int64, masked to 32 bits), then how many
words are left before the next twist (`mt[LEFT]`) and the index of the next word
(`mt[NEXT]`). PyTorch's generator also caches the second value of a Box-Muller pair
for its element-by-element normal sampler; that cache is the two-entry float64 array
`cache` (`cache[0]` is 1.0 when it holds a value, `cache[1]` the value).

Every kernel writes into a flat array, in the order PyTorch fills the tensor. float32
kernels compute in float32 (their constants are float32 too), as PyTorch's do. The
small helpers are inlined into their callers (`inline="always"`): numba compiles
every function a kernel calls as a kernel of its own otherwise, about 0.1 s each on
a first run.
"""

import math

import numpy as np
from numba import njit

from .fused import fma, mul_add

N = 624  # words of state
M = 397  # the twist's offset
LEFT = 624  # mt[LEFT]: words left before the next twist (1 after seeding: twist first)
NEXT = 625  # mt[NEXT]: index of the next word to hand out
STATE_SIZE = 626
_MASK32 = 0xFFFFFFFF


# -- the engine (seeding is in minigrad._generator: plain Python, run at import) ----


@njit(cache=True, inline="always")
def _twist(mt):
    """Regenerate all 624 words (mt19937's next_state)."""
    for k in range(N):
        upper = mt[k] & 0x80000000
        lower = mt[(k + 1) % N] & 0x7FFFFFFF
        y = upper | lower
        mixed = y >> 1
        if mt[(k + 1) % N] & 1:
            mixed ^= 0x9908B0DF
        mt[k] = mt[(k + M) % N] ^ mixed
    mt[LEFT] = N
    mt[NEXT] = 0


@njit(cache=True)
def next_u32(mt):
    """The next 32-bit word (PyTorch's generator->random())."""
    mt[LEFT] -= 1
    if mt[LEFT] == 0:
        _twist(mt)
    y = mt[mt[NEXT]]
    mt[NEXT] += 1
    # tempering
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & _MASK32


@njit(cache=True, inline="always")
def next_u64_parts(mt):
    """random64() as its two halves (hi, lo): the first word drawn is the high one."""
    hi = next_u32(mt)
    lo = next_u32(mt)
    return hi, lo


@njit(cache=True, inline="always")
def _u53(mt):
    """The low 53 bits of random64(), as an integer (a double's mantissa)."""
    hi, lo = next_u64_parts(mt)
    return ((hi & 0x1FFFFF) << 32) | lo


# -- uniform -----------------------------------------------------------------------


@njit(cache=True)
def uniform_f64(mt, out, lo, hi, fused):
    """U[lo, hi) in float64: 53 random bits scaled by 2**-53, then x * (hi - lo) + lo.

    A value that rounds up to `hi` is replaced by `lo`, as PyTorch does.
    """
    scale = 1.0 / 9007199254740992.0  # 2**-53
    span = hi - lo
    for i in range(out.size):
        v = mul_add(_u53(mt) * scale, span, lo, fused)
        out[i] = lo if v == hi else v


@njit(cache=True)
def uniform_f32(mt, out, lo, hi, fused):
    """U[lo, hi) in float32: the low 24 bits of one word scaled by 2**-24, in float32."""
    scale = np.float32(1.0 / 16777216.0)  # 2**-24
    lo32 = np.float32(lo)
    hi32 = np.float32(hi)
    span = hi32 - lo32
    for i in range(out.size):
        v = mul_add(np.float32(next_u32(mt) & 0xFFFFFF) * scale, span, lo32, fused)
        out[i] = lo32 if v == hi32 else v


@njit(cache=True)
def bernoulli_fill(mt, out, p):
    """1 with probability p, else 0: a float64 U[0, 1) from 53 random bits, compared
    with p (PyTorch's CPU `bernoulli_(p)`, for every dtype)."""
    scale = 1.0 / 9007199254740992.0  # 2**-53
    for i in range(out.size):
        out[i] = 1 if _u53(mt) * scale < p else 0


# -- normal: element by element (fewer than 16 values, or a non-contiguous tensor) --


@njit(cache=True)
def normal_serial(mt, cache, out, mean, std, fused):
    """N(mean, std**2), one value at a time, in float64 (then stored in out's dtype).

    Box-Muller makes two values from two uniforms: the cosine one is used now, the
    sine one is kept in `cache` for the next call, even the next factory call.
    """
    scale = 1.0 / 9007199254740992.0
    for i in range(out.size):
        if cache[0] != 0.0:
            z = cache[1]
            cache[0] = 0.0
        else:
            u1 = _u53(mt) * scale
            u2 = _u53(mt) * scale
            r = math.sqrt(-2.0 * math.log1p(-u2))
            theta = 2.0 * math.pi * u1
            cache[1] = r * math.sin(theta)
            cache[0] = 1.0
            z = r * math.cos(theta)
        out[i] = mul_add(z, std, mean, fused)


# -- normal: 16 at a time (16 or more values in a contiguous tensor) ---------------


@njit(cache=True)
def _box_muller_16_f64(data, start, mean, std):
    """Turn 16 uniforms at data[start:start+16] into 16 normals, in place: pairs
    (j, j + 8) give the cosine and the sine values."""
    for j in range(8):
        u1 = 1.0 - data[start + j]  # [0, 1) -> (0, 1] for the log
        u2 = data[start + j + 8]
        radius = math.sqrt(-2.0 * math.log(u1))
        theta = 2.0 * math.pi * u2
        data[start + j] = fma(radius * math.cos(theta), std, mean)
        data[start + j + 8] = fma(radius * math.sin(theta), std, mean)


@njit(cache=True)
def _box_muller_16_f32(data, start, mean, std):
    """The float32 version of `_box_muller_16_f64`, in float32 with the C library's
    logf, cosf and sinf (PyTorch's scalar code, used by its default and AVX512 builds).
    The angle is 2*pi*u2 computed in double and rounded to float32, as in PyTorch."""
    for j in range(8):
        u1 = np.float32(1.0) - data[start + j]
        u2 = data[start + j + 8]
        radius = math.sqrt(np.float32(-2.0) * math.log(u1))
        theta = np.float32(2.0 * math.pi * np.float64(u2))
        data[start + j] = fma(radius * math.cos(theta), std, mean)
        data[start + j + 8] = fma(radius * math.sin(theta), std, mean)


@njit(cache=True)
def normal_fill_f64(mt, out, mean, std):
    """N(mean, std**2) for 16 or more float64 values, PyTorch's way: fill `out` with
    uniforms, transform each whole block of 16; if the size is not a multiple of 16,
    draw 16 new uniforms into the last 16 places and transform those again."""
    n = out.size
    uniform_f64(mt, out, 0.0, 1.0, False)
    for start in range(0, n - 15, 16):
        _box_muller_16_f64(out, start, mean, std)
    if n % 16 != 0:
        uniform_f64(mt, out[n - 16:], 0.0, 1.0, False)
        _box_muller_16_f64(out, n - 16, mean, std)


@njit(cache=True)
def normal_fill_f32(mt, out, mean, std, vectorised):
    """`normal_fill_f64` for float32. `vectorised` picks PyTorch's AVX2 code (its own
    approximations of log, sin and cos) instead of the C library's functions."""
    n = out.size
    mean32 = np.float32(mean)
    std32 = np.float32(std)
    uniform_f32(mt, out, 0.0, 1.0, False)
    last = n - 16 if n % 16 != 0 else -1
    for start in range(0, n - 15, 16):
        _box_muller_16_any_f32(out, start, mean32, std32, vectorised)
    if last >= 0:
        uniform_f32(mt, out[last:], 0.0, 1.0, False)
        _box_muller_16_any_f32(out, last, mean32, std32, vectorised)


@njit(cache=True)
def _box_muller_16_any_f32(data, start, mean, std, vectorised):
    if vectorised:
        _avx2_box_muller_16(data, start, mean, std)
    else:
        _box_muller_16_f32(data, start, mean, std)


# -- PyTorch's AVX2 Box-Muller: Cephes-style logf and sincosf in float32 ------------
# PyTorch's AVX2 build (what an AVX2-only CPU runs) transforms 16 float32 uniforms
# with vectorised approximations of log, sin and cos, not the C library's. The lane
# arithmetic below repeats them one lane at a time, rounding where they round: the
# compiler turned each product whose only use is an addition into a fused multiply-add
# (`fma` here), so a plain `a * b + c` would differ in the last bit now and then.

_F = np.float32
_LOG_P = (_F(7.0376836292e-2), _F(-1.1514610310e-1), _F(1.1676998740e-1),
          _F(-1.2420140846e-1), _F(1.4249322787e-1), _F(-1.6668057665e-1),
          _F(2.0000714765e-1), _F(-2.4999993993e-1), _F(3.3333331174e-1))
_LOG_Q1 = _F(-2.12194440e-4)
_LOG_Q2 = _F(0.693359375)
_SQRTHF = _F(0.707106781186547524)
_DP1 = _F(-0.78515625)
_DP2 = _F(-2.4187564849853515625e-4)
_DP3 = _F(-3.77489497744594108e-8)
_SIN_P = (_F(-1.9515295891e-4), _F(8.3321608736e-3), _F(-1.6666654611e-1))
_COS_P = (_F(2.443315711809948e-5), _F(-1.388731625493765e-3), _F(4.166664568298827e-2))
_FOPI = _F(1.27323954473516)  # 4 / pi


@njit(cache=True)
def _avx2_logf(x):
    """log(x) for x in (0, 1] as PyTorch's AVX2 log256_ps computes it."""
    one = _F(1.0)
    m, ex = math.frexp(np.float64(x))  # x = m * 2**ex, m in [0.5, 1): exact
    f = _F(m)
    e = _F(ex)
    if f < _SQRTHF:
        e = e - one
        f = (f - one) + f
    else:
        f = f - one
    z = f * f
    y = _LOG_P[0]
    for k in range(1, 9):
        y = fma(y, f, _LOG_P[k])
    y = y * f
    y = fma(y, z, e * _LOG_Q1)
    y = fma(-z, _F(0.5), y)
    r = f + y
    return fma(e, _LOG_Q2, r)


@njit(cache=True)
def _avx2_sincosf(x):
    """(sin x, cos x) as PyTorch's AVX2 sincos256_ps computes them."""
    sign_sin = x < 0
    x = abs(x)
    j = int(x * _FOPI)  # truncation, as cvttps
    j = (j + 1) & ~1
    y = _F(j)
    swap_sin = (j & 4) != 0
    use_sin_poly = (j & 2) == 0
    # extended-precision reduction: x - y * pi/4 in three parts
    x = fma(y, _DP1, x)
    x = fma(y, _DP2, x)
    x = fma(y, _DP3, x)
    neg_cos = ((~(j - 2)) & 4) != 0
    if swap_sin:
        sign_sin = not sign_sin
    z = x * x
    c = fma(_COS_P[0], z, _COS_P[1])
    c = fma(c, z, _COS_P[2])
    c = c * z
    c = fma(c, z, -(z * _F(0.5)))  # the compiler fused the second product into the sub
    c = c + _F(1.0)
    s = fma(_SIN_P[0], z, _SIN_P[1])
    s = fma(s, z, _SIN_P[2])
    s = s * z
    s = fma(s, x, x)
    if use_sin_poly:
        sin_v, cos_v = s, c
    else:
        sin_v, cos_v = c, s
    if sign_sin:
        sin_v = -sin_v
    if neg_cos:
        cos_v = -cos_v
    return sin_v, cos_v


@njit(cache=True)
def _avx2_box_muller_16(data, start, mean, std):
    for j in range(8):
        u1 = _F(1.0) - data[start + j]
        u2 = data[start + j + 8]
        radius = math.sqrt(_F(-2.0) * _avx2_logf(u1))
        theta = _F(6.2831854820251465) * u2  # (float)(2 * pi)
        s, c = _avx2_sincosf(theta)
        data[start + j] = fma(radius * c, std, mean)
        data[start + j + 8] = fma(radius * s, std, mean)


# -- integers ----------------------------------------------------------------------


@njit(cache=True)
def _umod64(hi, lo, r):
    """((hi << 32) | lo) % r in unsigned 64-bit arithmetic (r: a uint64), returned as
    an int64 with the same bits. (Every operand is a uint64: numba would turn a mix of
    signed and unsigned 64-bit integers into floats.)"""
    v = (np.uint64(hi) << np.uint64(32)) | np.uint64(lo)
    return np.int64(v % r)


@njit(cache=True)
def randint_fill(mt, out, low, span):
    """Integers in [low, low + span) (`span`: a uint64, up to 2**64 - 1): one word
    modulo span, or random64() modulo span when span >= 2**28 (PyTorch's cut-off, to
    keep the modulo bias small). The sum wraps around as PyTorch's does."""
    if span >= np.uint64(1 << 28):
        for i in range(out.size):
            hi, lo = next_u64_parts(mt)
            out[i] = _umod64(hi, lo, span) + low
    else:
        narrow = np.int64(span)
        for i in range(out.size):
            out[i] = next_u32(mt) % narrow + low


@njit(cache=True)
def randperm_fill(mt, out, inside_out):
    """A permutation of 0..n-1. For n below 2**32 / 20 PyTorch swaps each position i
    with one of positions i..n-1 picked by one word modulo (n - i); above that
    (`inside_out`) it builds the permutation inside out, position i taking a place
    picked by random64() modulo (i + 1), so the modulo's bias stays negligible."""
    n = out.size
    if not inside_out:
        for i in range(n):
            out[i] = i
        for i in range(n - 1):
            z = next_u32(mt) % (n - i)
            out[i], out[z + i] = out[z + i], out[i]
    else:
        for i in range(n):
            hi, lo = next_u64_parts(mt)
            z = _umod64(hi, lo, np.uint64(i + 1))
            out[i] = out[z]
            out[z] = i
