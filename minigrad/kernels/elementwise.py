"""Element-wise kernels: forward formulas and their fused derivatives.

Every kernel is a plain loop over flat, contiguous arrays, writing into `out`
(which may be one of the inputs: that is how in-place ops work). The caller
(`minigrad.ops._elementwise`) flattens, broadcasts and allocates; the kernels only
do arithmetic. numba compiles one version per dtype on first use and caches it on
disk, so float32 and float64 share one readable definition.

Backward formulas are fused: sigmoid's `grad * y * (1 - y)` is one pass over
memory, not three temporary arrays.
"""

import math

import numpy as np
from numba import njit

from .fused import fma

# Every kernel uses IEEE arithmetic, like PyTorch: 1 / 0 is inf and 0 / 0 is nan
# (numba's default "python" error model raises ZeroDivisionError instead).

# -- arithmetic: array op array ----------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def add(a, b, out):
    for i in range(out.size):
        out[i] = a[i] + b[i]


@njit(cache=True, nogil=True, error_model="numpy")
def add_into(total, x):
    # total += x, for summing gradient streams. (`add(total, x, total)` would be 2-3x
    # slower: when the output is also an input, the compiled loop's overlap check
    # sends it down the path that adds one element at a time.)
    for i in range(total.size):
        total[i] += x[i]


@njit(cache=True, nogil=True, error_model="numpy")
def sub(a, b, out):
    for i in range(out.size):
        out[i] = a[i] - b[i]


@njit(cache=True, nogil=True, error_model="numpy")
def mul(a, b, out):
    for i in range(out.size):
        out[i] = a[i] * b[i]


@njit(cache=True, nogil=True, error_model="numpy")
def div(a, b, out):
    for i in range(out.size):
        out[i] = a[i] / b[i]


@njit(cache=True, nogil=True, error_model="numpy")
def pow(a, b, out):  # noqa: A001 - the kernel is named after its op
    for i in range(out.size):
        out[i] = a[i] ** b[i]


# -- arithmetic: a batch of rows op one row ------------------------------------------
# `x @ w.t() + bias`: the row is used as it is for every row of the 2-D batch, never
# spread out into a full array first.


@njit(cache=True, nogil=True, error_model="numpy")
def add_rows(a, row, out):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] + row[j]


@njit(cache=True, nogil=True, error_model="numpy")
def sub_rows(a, row, out):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] - row[j]


@njit(cache=True, nogil=True, error_model="numpy")
def mul_rows(a, row, out):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * row[j]


@njit(cache=True, nogil=True, error_model="numpy")
def add_scaled(a, b, alpha, out):
    """a + alpha * b in one pass: `add(other, alpha=...)` and optimizer updates."""
    for i in range(out.size):
        out[i] = a[i] + alpha * b[i]


# -- arithmetic: array op scalar ---------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def add_scalar(a, s, out):
    for i in range(out.size):
        out[i] = a[i] + s


@njit(cache=True, nogil=True, error_model="numpy")
def mul_scalar(a, s, out):
    for i in range(out.size):
        out[i] = a[i] * s


@njit(cache=True, nogil=True, error_model="numpy")
def div_scalar(a, s, out):
    for i in range(out.size):
        out[i] = a[i] / s


@njit(cache=True, nogil=True, error_model="numpy")
def rsub_scalar(s, a, out):
    """s - a."""
    for i in range(out.size):
        out[i] = s - a[i]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def power_of_number(x, p):
    """x ** p for a number p, as PyTorch computes it: a few exponents by their own
    formulas, which also decide edge cases ((-inf) ** 0.5 is nan as sqrt(-inf) is,
    (-0.0) ** 0.5 is -0.0, (-0.0) ** -0.5 is -inf)."""
    if p == 0.5:
        return math.sqrt(x) if x >= 0 else math.nan
    if p == -0.5:
        return 1 / math.sqrt(x) if x >= 0 else math.nan
    if p == -1:
        return 1 / x
    if p == 2:
        return x * x
    if p == 3:
        return x * x * x
    if p == -2:
        return 1 / (x * x)
    return x ** p


@njit(cache=True, nogil=True, error_model="numpy")
def pow_scalar(a, p, out):
    """a ** p for a Python-number exponent (floating point)."""
    for i in range(out.size):
        out[i] = power_of_number(a[i], p)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def int_power(base, exp):
    """base ** exp for integers as PyTorch computes it: by repeated squaring, wrapping
    around on overflow; a negative exp gives 1 / base ** -exp cut to an integer (0
    unless base is 1 or -1, even for base 0)."""
    if exp < 0:
        if base == 1:
            return 1
        if base == -1:
            return 1 if exp % 2 == 0 else -1
        return 0
    result = 1
    while exp > 0:
        if exp & 1:
            result *= base
        base *= base
        exp >>= 1
    return result


@njit(cache=True, nogil=True, error_model="numpy")
def pow_int(a, b, out):
    for i in range(out.size):
        out[i] = int_power(a[i], b[i])


@njit(cache=True, nogil=True, error_model="numpy")
def pow_scalar_int(a, p, out):
    for i in range(out.size):
        out[i] = int_power(a[i], p)


@njit(cache=True, nogil=True, error_model="numpy")
def rpow_scalar_int(base, a, out):
    for i in range(out.size):
        out[i] = int_power(base, a[i])


@njit(cache=True, nogil=True, error_model="numpy")
def rpow_scalar(base, a, out):
    """base ** a for a Python-number base."""
    for i in range(out.size):
        out[i] = base ** a[i]


@njit(cache=True, nogil=True, error_model="numpy")
def neg(a, out):
    for i in range(out.size):
        out[i] = -a[i]


# -- unary functions ---------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def exp(x, out):
    for i in range(out.size):
        out[i] = math.exp(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def sigmoid(x, out):
    for i in range(out.size):
        out[i] = 1.0 / (1.0 + math.exp(-x[i]))


@njit(cache=True, nogil=True, error_model="numpy")
def log_sigmoid(x, out, buffer):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), exact for large |x|, with
    exp(-|x|) kept in `buffer` (PyTorch saves it for backward)."""
    for i in range(out.size):
        v = x[i]
        z = math.exp(-math.fabs(v))
        buffer[i] = z
        out[i] = (v if v < 0 else 0.0) - math.log1p(z)


@njit(cache=True, nogil=True, error_model="numpy")
def log(x, out):
    for i in range(out.size):
        v = x[i]
        if v > 0:
            out[i] = math.log(v)
        elif v == 0:
            out[i] = -math.inf
        else:
            out[i] = math.nan


@njit(cache=True, nogil=True, error_model="numpy")
def sin(x, out):
    for i in range(out.size):
        out[i] = math.sin(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def cos(x, out):
    for i in range(out.size):
        out[i] = math.cos(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def cosh(x, out):
    for i in range(out.size):
        out[i] = math.cosh(float(x[i]))  # (in double: float32 correctly rounded)


@njit(cache=True, nogil=True, error_model="numpy")
def sinh(x, out):
    for i in range(out.size):
        out[i] = math.sinh(float(x[i]))  # (in double: float32 correctly rounded)


@njit(cache=True, nogil=True, error_model="numpy")
def tanh(x, out):
    for i in range(out.size):
        out[i] = math.tanh(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def relu(x, out):
    """0 where x < 0, else x itself: NaN stays NaN and -0.0 stays -0.0, as in PyTorch."""
    for i in range(out.size):
        v = x[i]
        out[i] = 0 if v < 0 else v


@njit(cache=True, nogil=True, error_model="numpy")
def sqrt(x, out):
    for i in range(out.size):
        v = x[i]
        out[i] = math.sqrt(v) if v >= 0 else math.nan


@njit(cache=True, nogil=True, error_model="numpy")
def abs(x, out):  # noqa: A001
    """`0 - v`, not `-v`, so that |-0.0| is 0.0 as in PyTorch (-(-0.0) is 0.0 but
    -(0.0) is -0.0). Works for integers too."""
    for i in range(out.size):
        v = x[i]
        out[i] = v if v > 0 else 0 - v


@njit(cache=True, nogil=True, error_model="numpy")
def clamp(x, lo, hi, out):
    """Clip into [lo, hi]; a missing bound is passed as -inf / +inf. NaN stays NaN, and
    a NaN bound makes every element NaN (PyTorch's max and min propagate NaN)."""
    for i in range(out.size):
        v = x[i]
        if v < lo or lo != lo:
            v = lo
        if v > hi or hi != hi:
            v = hi
        out[i] = v


# -- derivatives, fused with the incoming gradient ---------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def sin_backward(grad, x, out):
    for i in range(out.size):
        out[i] = grad[i] * math.cos(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def cosh_backward(grad, x, out):
    """grad * sinh(x), the sinh rounded in the arrays' dtype first (through `out`), as
    PyTorch's two ops round it."""
    for i in range(out.size):
        out[i] = math.sinh(float(x[i]))
        out[i] = grad[i] * out[i]


@njit(cache=True, nogil=True, error_model="numpy")
def sinh_backward(grad, x, out):
    """grad * cosh(x), the cosh rounded in the arrays' dtype first (through `out`), as
    PyTorch's two ops round it."""
    for i in range(out.size):
        out[i] = math.cosh(float(x[i]))
        out[i] = grad[i] * out[i]


@njit(cache=True, nogil=True, error_model="numpy")
def cos_backward(grad, x, out):
    for i in range(out.size):
        out[i] = -grad[i] * math.sin(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def reciprocal_backward(grad, y, out):
    """d (1/x)/dx = -1/x**2, from the saved output y = 1/x: -grad * (y * y), in
    PyTorch's order."""
    for i in range(out.size):
        out[i] = -grad[i] * (y[i] * y[i])


@njit(cache=True, nogil=True, error_model="numpy")
def tanh_backward(grad, y, out):
    """d tanh(x)/dx = 1 - tanh(x)**2, from the saved output y: grad * (1 - y*y).

    PyTorch's AVX2 and AVX-512 kernels compute 1 - y*y with one rounding (a fused
    multiply-add); near |y| = 1 the subtraction cancels, so rounding y*y first would
    change the result visibly. So does this kernel (`fma`; the 1 goes through `out`
    to have y's dtype)."""
    for i in range(out.size):
        out[i] = 1
        out[i] = grad[i] * fma(-y[i], y[i], out[i])


@njit(cache=True, nogil=True, error_model="numpy")
def tanh_backward_rounded_twice(grad, y, out):
    """`tanh_backward` as PyTorch's portable kernel (a machine without AVX2) computes
    it: y*y rounded, then subtracted from 1."""
    for i in range(out.size):
        out[i] = 1
        out[i] = grad[i] * (out[i] - y[i] * y[i])


@njit(cache=True, nogil=True, error_model="numpy")
def sigmoid_backward(grad, y, out):
    """d sigmoid(x)/dx = (1 - y) * y, from the saved output y: grad * (1 - y) * y in
    PyTorch's order, each step rounded in the arrays' dtype (1 - y goes through
    `out`: numba would subtract a float32 from an integer in float64)."""
    for i in range(out.size):
        out[i] = 1 - y[i]
        out[i] = grad[i] * out[i] * y[i]


@njit(cache=True, nogil=True, error_model="numpy")
def relu_backward(grad, y, out):
    """The gradient is blocked where the output is <= 0, so it passes where the
    output is positive or NaN (PyTorch's threshold_backward)."""
    for i in range(out.size):
        out[i] = 0 if y[i] <= 0 else grad[i]


@njit(cache=True, nogil=True, error_model="numpy")
def sqrt_backward(grad, y, out):
    """d sqrt(x)/dx = 1 / (2 sqrt(x)), from the saved output y."""
    for i in range(out.size):
        out[i] = grad[i] / (2 * y[i])


@njit(cache=True, nogil=True, error_model="numpy")
def abs_backward(grad, x, out):
    """The gradient times the sign of x: 1, -1, or 0 at 0 and at nan. A product, as
    in PyTorch's formula, so an infinite or nan gradient at x == 0 gives nan
    (`x.abs().sqrt()` at 0), not 0."""
    for i in range(out.size):
        v = x[i]
        out[i] = grad[i] * (1.0 if v > 0 else (-1.0 if v < 0 else 0.0))


@njit(cache=True, nogil=True, error_model="numpy")
def clamp_backward(grad, x, lo, hi, out):
    """The gradient passes where x was inside [lo, hi], bounds included."""
    for i in range(out.size):
        out[i] = grad[i] if lo <= x[i] <= hi else 0


@njit(cache=True, nogil=True, error_model="numpy")
def log_backward(grad, x, out):
    for i in range(out.size):
        out[i] = grad[i] / x[i]


@njit(cache=True, nogil=True, error_model="numpy")
def pow_scalar_backward(grad, x, p, out):
    """d(x**p)/dx = p * x**(p-1), with x**(p-1) computed as the forward pass would
    (so (-inf) ** 1.5 has the gradient nan, as sqrt(-inf) is); exactly zero when
    p == 0, as in PyTorch."""
    for i in range(out.size):
        if p == 0:
            out[i] = 0
        else:
            out[i] = power_of_number(x[i], p - 1)  # stored first: rounded to out's dtype
            out[i] = grad[i] * (p * out[i])


@njit(cache=True, nogil=True, error_model="numpy")
def pow_backward_self(grad, x, p, out):
    """d(x**p)/dx for a tensor exponent p."""
    for i in range(out.size):
        out[i] = 0 if p[i] == 0 else grad[i] * p[i] * x[i] ** (p[i] - 1)


@njit(cache=True, nogil=True, error_model="numpy")
def pow_backward_exponent(grad, x, p, y, out):
    """d(x**p)/dp = x**p * log(x), from the saved output y. As in PyTorch, 0 where
    x == 0 and p >= 0, and inf * log(0) = -inf where x == 0 and p < 0."""
    for i in range(out.size):
        v = x[i]
        if v == 0 and p[i] >= 0:
            out[i] = grad[i] * 0
        else:
            log_v = math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan)
            out[i] = y[i] * log_v  # stored first: rounded to out's dtype, as PyTorch
            out[i] = grad[i] * out[i]


@njit(cache=True, nogil=True, error_model="numpy")
def rpow_backward(grad, x, y, log_base, base_is_zero, out):
    """d(b**x)/dx = b**x * log(b), from the saved output y. For b == 0, PyTorch
    takes 0 where x >= 0 (so 0 ** x is flat where it is 0 or 1) and
    b**x * log(b) (= inf * -inf) elsewhere."""
    for i in range(out.size):
        if base_is_zero and x[i] >= 0:
            out[i] = grad[i] * 0
        else:
            out[i] = y[i] * log_base  # stored first: rounded to out's dtype, as PyTorch
            out[i] = grad[i] * out[i]


@njit(cache=True, nogil=True, error_model="numpy")
def div_backward_other(grad, a, b, out):
    """d(a / b)/db = -a / b**2, computed as PyTorch's formula writes it,
    -grad * ((a / b) / b), so that it rounds as PyTorch's does."""
    for i in range(out.size):
        out[i] = -grad[i] * ((a[i] / b[i]) / b[i])


# -- log1p, expm1, atan2 -------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def log1p(x, out):
    """log(1 + x), accurate for x near 0 where 1 + x would round x away."""
    for i in range(out.size):
        out[i] = math.log1p(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def log1p_backward(grad, x, out):
    """grad / (x + 1), with x + 1 rounded in the arrays' dtype (through `out`: numba
    would add a float32 and an integer in float64)."""
    for i in range(out.size):
        out[i] = x[i] + 1
        out[i] = grad[i] / out[i]


@njit(cache=True, nogil=True, error_model="numpy")
def expm1(x, out):
    """exp(x) - 1, accurate for x near 0 where exp(x) - 1 cancels."""
    for i in range(out.size):
        out[i] = math.expm1(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def expm1_backward(grad, y, out):
    """grad * (y + 1), from the saved output y = exp(x) - 1 (y + 1 rounded in the
    arrays' dtype, as in `log1p_backward`)."""
    for i in range(out.size):
        out[i] = y[i] + 1
        out[i] = grad[i] * out[i]


@njit(cache=True, nogil=True, error_model="numpy")
def atan2(a, b, out):
    """The angle of the point (b, a): atan2(a, b), in (-pi, pi]."""
    for i in range(out.size):
        out[i] = math.atan2(a[i], b[i])


@njit(cache=True, nogil=True, error_model="numpy")
def atan2_backward_self(grad, a, b, out):
    """grad * b * (1 / (a*a + b*b)), with the reciprocal 0 at the origin (as PyTorch
    masks it there), each step rounded in the arrays' dtype (the reciprocal goes
    through `out`, so a float32 one is rounded as float32)."""
    for i in range(out.size):
        out[i] = a[i] * a[i] + b[i] * b[i]
        out[i] = 0 if out[i] == 0 else 1 / out[i]
        out[i] = grad[i] * b[i] * out[i]


@njit(cache=True, nogil=True, error_model="numpy")
def atan2_backward_other(grad, a, b, out):
    """grad * -a * (1 / (a*a + b*b)), rounded as `atan2_backward_self` is."""
    for i in range(out.size):
        out[i] = a[i] * a[i] + b[i] * b[i]
        out[i] = 0 if out[i] == 0 else 1 / out[i]
        out[i] = grad[i] * -a[i] * out[i]


# -- reciprocal, and the step functions (flat almost everywhere) ----------------------


@njit(cache=True, nogil=True, error_model="numpy")
def reciprocal(x, out):
    """1 / x (1 / 0 is inf)."""
    for i in range(out.size):
        out[i] = 1 / x[i]


@njit(cache=True, nogil=True, error_model="numpy")
def floor(x, out):
    """The largest whole number <= x (nan stays nan, -0.0 stays -0.0)."""
    for i in range(out.size):
        out[i] = np.floor(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def ceil(x, out):
    """The smallest whole number >= x (ceil(-0.5) is -0.0)."""
    for i in range(out.size):
        out[i] = np.ceil(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def sign(x, out):
    """1, -1 or 0; PyTorch's sign of nan (and of -0.0) is 0."""
    for i in range(out.size):
        v = x[i]
        out[i] = 1 if v > 0 else (-1 if v < 0 else 0)


@njit(cache=True, nogil=True, error_model="numpy")
def zero(grad, out):
    """The gradient of a step function: 0 everywhere, whatever came in."""
    for i in range(out.size):
        out[i] = 0


@njit(cache=True, nogil=True, error_model="numpy")
def _erf_flat(x, out):
    for i in range(x.size):
        out[i] = math.erf(x[i])


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, element by element (what `gelu` is made of)."""
    x = np.asarray(x, order="C")  # (ascontiguousarray would make a 0-d x 1-d)
    out = np.empty_like(x)
    if x.size:
        _erf_flat(x.reshape(-1), out.reshape(-1))
    return out


# -- tan -----------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def tan(x, out):
    for i in range(out.size):
        out[i] = math.tan(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def tan_backward(grad, y, out):
    """d tan(x)/dx = 1 + tan(x)**2, from the saved output y: grad * (1 + y*y), each
    step rounded in the arrays' dtype (through `out`)."""
    for i in range(out.size):
        out[i] = y[i] * y[i]
        out[i] = out[i] + 1
        out[i] = grad[i] * out[i]
