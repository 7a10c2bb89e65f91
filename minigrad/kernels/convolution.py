"""Convolution as a matrix product: `unfold` copies every window of the input into a
column, and `fold` adds columns back into an image (the adjoint of `unfold`).

A 2-D convolution of an input (N, C, H, W) with a weight (O, C, kh, kw) gives, at each
output position (y, x), the dot product of the weight with the input's window there.
`unfold` writes each window as one column of a matrix (C * kh * kw rows, one column per
output position), so the whole convolution is one matrix product,
`weight.reshape(O, -1) @ columns`, which numpy's BLAS computes fast.

Backward is made of the same two pieces:
* the weight's gradient is `grad @ columns.T`: the input's windows weighted by the
  output gradient (itself a convolution: of the input, with the gradient as kernel);
* the input's gradient is `fold(weight.T @ grad)`: every output gradient sent back
  through the weights into the window it came from, windows that overlap adding up
  (a *transposed* convolution of the gradient with the same weight).

Windows that reach past the input's edge (padding) read zeros, and `fold` drops
what falls there. A 1-D convolution is the 2-D one with a height of 1.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def unfold(x: np.ndarray, kh: int, kw: int, sh: int, sw: int, ph: int, pw: int,
           dh: int, dw: int, oh: int, ow: int, cols: np.ndarray) -> None:
    """Write every window of each image of `x` (N, C, H, W) into `cols`
    (N, C * kh * kw, oh * ow): row (c, i, j) of column (y, x) is
    x[n, c, y * sh - ph + i * dh, x * sw - pw + j * dw], or 0 where that falls in the
    padding."""
    batch, channels, height, width = x.shape
    for n in range(batch):
        for c in range(channels):
            for i in range(kh):
                for j in range(kw):
                    row = (c * kh + i) * kw + j
                    for oy in range(oh):
                        iy = oy * sh - ph + i * dh
                        inside_y = 0 <= iy < height
                        for ox in range(ow):
                            ix = ox * sw - pw + j * dw
                            if inside_y and 0 <= ix < width:
                                cols[n, row, oy * ow + ox] = x[n, c, iy, ix]
                            else:
                                cols[n, row, oy * ow + ox] = 0


@numba.njit(cache=True, nogil=True)
def fold(cols: np.ndarray, kh: int, kw: int, sh: int, sw: int, ph: int, pw: int,
         dh: int, dw: int, oh: int, ow: int, x: np.ndarray) -> None:
    """The adjoint of `unfold`: add each column of `cols` (N, C * kh * kw, oh * ow)
    back into the window of `x` (N, C, H, W, zeros to start with) it was read from;
    what falls in the padding is dropped."""
    batch, channels, height, width = x.shape
    for n in range(batch):
        for c in range(channels):
            for i in range(kh):
                for j in range(kw):
                    row = (c * kh + i) * kw + j
                    for oy in range(oh):
                        iy = oy * sh - ph + i * dh
                        if iy < 0 or iy >= height:
                            continue
                        for ox in range(ow):
                            ix = ox * sw - pw + j * dw
                            if 0 <= ix < width:
                                x[n, c, iy, ix] += cols[n, row, oy * ow + ox]
