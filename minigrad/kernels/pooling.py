"""2-D max and average pooling over planes (N * C, H, W), in PyTorch's order.

Each output element looks at one window of its plane: the rows `oy * sh - ph`,
`+ dh`, ... (kh of them) and the columns likewise. Max pooling keeps the largest value
and where it was (its index within the plane, `row * W + column`), so backward can
send the whole gradient there; average pooling divides the window's sum by a count,
and backward spreads the gradient evenly over the window.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def max_pool(x: np.ndarray, kh: int, kw: int, sh: int, sw: int, ph: int, pw: int,
             dh: int, dw: int, lowest, out: np.ndarray, indices: np.ndarray) -> None:
    """out[p, oy, ox] = the largest element of the window, indices[p, oy, ox] its
    index in the plane. Each window starts from `lowest` (-inf, or an integer dtype's
    smallest value), so a window of only that value keeps its first element's index,
    and a NaN counts as the largest (the last NaN wins), as PyTorch's kernel does."""
    planes, height, width = x.shape
    oh, ow = out.shape[1], out.shape[2]
    for p in range(planes):
        for oy in range(oh):
            y0 = oy * sh - ph
            y1 = min(y0 + (kh - 1) * dh + 1, height)
            while y0 < 0:
                y0 += dh
            for ox in range(ow):
                x0 = ox * sw - pw
                x1 = min(x0 + (kw - 1) * dw + 1, width)
                while x0 < 0:
                    x0 += dw
                best = lowest
                where = y0 * width + x0
                for iy in range(y0, y1, dh):
                    for ix in range(x0, x1, dw):
                        v = x[p, iy, ix]
                        if v > best or np.isnan(v):
                            best = v
                            where = iy * width + ix
                out[p, oy, ox] = best
                indices[p, oy, ox] = where


@numba.njit(cache=True, nogil=True)
def max_pool_backward(grad: np.ndarray, indices: np.ndarray, grad_input: np.ndarray) -> None:
    """Add each output gradient to the input element its window's maximum came from
    (`grad_input` (P, H * W) starts at zero)."""
    planes, oh, ow = grad.shape
    for p in range(planes):
        for oy in range(oh):
            for ox in range(ow):
                where = indices[p, oy, ox]
                if where != -1:
                    grad_input[p, where] += grad[p, oy, ox]


@numba.njit(cache=True, nogil=True)
def _window(o: int, stride: int, pad: int, k: int, size: int) -> tuple:
    """One axis of an average-pooling window: its first and end index inside the
    input, and its length counting the padding it covers (for count_include_pad)."""
    start = o * stride - pad
    end = min(start + k, size + pad)
    padded = end - start
    return max(start, 0), min(end, size), padded


@numba.njit(cache=True, nogil=True)
def _divide_toward_zero(a, b):
    """C++'s a / b of integers: the quotient with its fraction dropped (Python's //
    rounds down instead, so a negative quotient with a remainder is one too small)."""
    q = a // b
    if q < 0 and q * b != a:
        q += 1
    return q


@numba.njit(cache=True, nogil=True)
def avg_pool(x: np.ndarray, kh: int, kw: int, sh: int, sw: int, ph: int, pw: int,
             count_include_pad: bool, divisor: int, integer: bool, out: np.ndarray) -> None:
    """out[p, oy, ox] = the sum of the window divided by `divisor` if it is not 0,
    else by the window's size (with the padding it covers, if `count_include_pad`).
    The sum runs row by row in the input's dtype, as PyTorch's; an `integer` sum
    (which wraps around on overflow) is divided as C++ divides integers: rounded
    towards zero."""
    planes, height, width = x.shape
    oh, ow = out.shape[1], out.shape[2]
    for p in range(planes):
        for oy in range(oh):
            y0, y1, hpad = _window(oy, sh, ph, kh, height)
            for ox in range(ow):
                x0, x1, wpad = _window(ox, sw, pw, kw, width)
                if y0 >= y1 or x0 >= x1:
                    out[p, oy, ox] = 0
                    continue
                # (summed in `out`, so in the input's dtype)
                out[p, oy, ox] = 0
                for iy in range(y0, y1):
                    for ix in range(x0, x1):
                        out[p, oy, ox] += x[p, iy, ix]
                if divisor != 0:
                    count = divisor
                elif count_include_pad:
                    count = hpad * wpad
                else:
                    count = (y1 - y0) * (x1 - x0)
                if integer:
                    out[p, oy, ox] = _divide_toward_zero(out[p, oy, ox], count)
                else:
                    out[p, oy, ox] = out[p, oy, ox] / count


@numba.njit(cache=True, nogil=True)
def avg_pool_backward(grad: np.ndarray, kh: int, kw: int, sh: int, sw: int, ph: int,
                      pw: int, count_include_pad: bool, divisor: int,
                      grad_input: np.ndarray) -> None:
    """Spread each output gradient, divided as forward divided, over its window
    (`grad_input` (P, H, W) starts at zero; overlapping windows add up)."""
    planes, oh, ow = grad.shape
    height, width = grad_input.shape[1], grad_input.shape[2]
    # (the share, rounded to the gradient's dtype before it is added, as PyTorch's)
    share = np.empty(1, grad_input.dtype)
    for p in range(planes):
        for oy in range(oh):
            y0, y1, hpad = _window(oy, sh, ph, kh, height)
            for ox in range(ow):
                x0, x1, wpad = _window(ox, sw, pw, kw, width)
                if y0 >= y1 or x0 >= x1:
                    continue
                if divisor != 0:
                    count = divisor
                elif count_include_pad:
                    count = hpad * wpad
                else:
                    count = (y1 - y0) * (x1 - x0)
                share[0] = grad[p, oy, ox] / count
                for iy in range(y0, y1):
                    for ix in range(x0, x1):
                        grad_input[p, iy, ix] += share[0]
