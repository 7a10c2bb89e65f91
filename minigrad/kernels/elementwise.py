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

from numba import njit

# Every kernel uses IEEE arithmetic, like PyTorch: 1 / 0 is inf and 0 / 0 is nan
# (numba's default "python" error model raises ZeroDivisionError instead).

# -- arithmetic: array op array ----------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def add(a, b, out):
    for i in range(out.size):
        out[i] = a[i] + b[i]


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


@njit(cache=True, nogil=True, error_model="numpy")
def rdiv_scalar(s, a, out):
    """s / a."""
    for i in range(out.size):
        out[i] = s / a[i]


@njit(cache=True, nogil=True, error_model="numpy")
def pow_scalar(a, p, out):
    """a ** p for a Python-number exponent."""
    for i in range(out.size):
        out[i] = a[i] ** p


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
def tanh(x, out):
    for i in range(out.size):
        out[i] = math.tanh(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def sigmoid(x, out):
    for i in range(out.size):
        v = x[i]
        # Two branches, so exp never overflows.
        if v >= 0:
            out[i] = 1.0 / (1.0 + math.exp(-v))
        else:
            z = math.exp(v)
            out[i] = z / (1.0 + z)


@njit(cache=True, nogil=True, error_model="numpy")
def relu(x, out):
    for i in range(out.size):
        v = x[i]
        out[i] = v if v > 0 else 0


@njit(cache=True, nogil=True, error_model="numpy")
def sqrt(x, out):
    for i in range(out.size):
        v = x[i]
        out[i] = math.sqrt(v) if v >= 0 else math.nan


@njit(cache=True, nogil=True, error_model="numpy")
def abs(x, out):  # noqa: A001
    for i in range(out.size):
        v = x[i]
        out[i] = v if v >= 0 else -v


@njit(cache=True, nogil=True, error_model="numpy")
def clamp(x, lo, hi, out):
    """Clip into [lo, hi]; a missing bound is passed as -inf / +inf. NaN stays NaN."""
    for i in range(out.size):
        v = x[i]
        if v < lo:
            v = lo
        if v > hi:
            v = hi
        out[i] = v


# -- derivatives, fused with the incoming gradient ---------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def sin_backward(grad, x, out):
    for i in range(out.size):
        out[i] = grad[i] * math.cos(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def cos_backward(grad, x, out):
    for i in range(out.size):
        out[i] = -grad[i] * math.sin(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def tanh_backward(grad, y, out):
    """d tanh(x)/dx = 1 - tanh(x)**2, from the saved output y."""
    for i in range(out.size):
        out[i] = grad[i] * (1 - y[i] * y[i])


@njit(cache=True, nogil=True, error_model="numpy")
def sigmoid_backward(grad, y, out):
    """d sigmoid(x)/dx = y * (1 - y), from the saved output y."""
    for i in range(out.size):
        out[i] = grad[i] * y[i] * (1 - y[i])


@njit(cache=True, nogil=True, error_model="numpy")
def relu_backward(grad, y, out):
    """The gradient passes where the output was positive."""
    for i in range(out.size):
        out[i] = grad[i] if y[i] > 0 else 0


@njit(cache=True, nogil=True, error_model="numpy")
def sqrt_backward(grad, y, out):
    """d sqrt(x)/dx = 1 / (2 sqrt(x)), from the saved output y."""
    for i in range(out.size):
        out[i] = grad[i] / (2 * y[i])


@njit(cache=True, nogil=True, error_model="numpy")
def abs_backward(grad, x, out):
    """The sign of x times the gradient (0 at x == 0)."""
    for i in range(out.size):
        v = x[i]
        out[i] = grad[i] if v > 0 else (-grad[i] if v < 0 else 0)


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
    """d(x**p)/dx = p * x**(p-1); exactly zero when p == 0, as in PyTorch."""
    for i in range(out.size):
        out[i] = 0 if p == 0 else grad[i] * p * x[i] ** (p - 1)


@njit(cache=True, nogil=True, error_model="numpy")
def pow_backward_self(grad, x, p, out):
    """d(x**p)/dx for a tensor exponent p."""
    for i in range(out.size):
        out[i] = 0 if p[i] == 0 else grad[i] * p[i] * x[i] ** (p[i] - 1)


@njit(cache=True, nogil=True, error_model="numpy")
def pow_backward_exponent(grad, x, y, out):
    """d(x**p)/dp = x**p * log(x), from the saved output y; 0 where x == 0."""
    for i in range(out.size):
        out[i] = 0 if x[i] == 0 else grad[i] * y[i] * math.log(x[i])


@njit(cache=True, nogil=True, error_model="numpy")
def rpow_backward(grad, y, log_base, out):
    """d(b**x)/dx = b**x * log(b), from the saved output y."""
    for i in range(out.size):
        out[i] = grad[i] * y[i] * log_base


@njit(cache=True, nogil=True, error_model="numpy")
def div_backward_other(grad, a, b, out):
    """d(a / b)/db = -a / b**2."""
    for i in range(out.size):
        out[i] = -grad[i] * a[i] / (b[i] * b[i])


@njit(cache=True, nogil=True, error_model="numpy")
def rdiv_scalar_backward(grad, s, a, out):
    """d(s / a)/da = -s / a**2."""
    for i in range(out.size):
        out[i] = -grad[i] * s / (a[i] * a[i])
