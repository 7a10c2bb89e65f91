"""PyTorch's "cascade" sum: floating-point sums added in the order PyTorch's CPU
kernel adds them, so that float32 and float64 sums agree with PyTorch's bit for bit.

Addition of floats is not associative: `(a + b) + c` and `a + (b + c)` can differ in
the last bit, so two libraries agree only if they add in the same order. PyTorch's
order (aten/src/ATen/native/cpu/SumKernel.cpp) is built from one idea, the cascade:

* `_cascade`: add a run of numbers into a level-0 partial sum; after every 16
  numbers (more for very long runs) move that partial into level 1 and start again
  at 0; after every 16 moves into level 1, move level 1 into level 2; and so on up to
  level 3. At the end the levels are added together. Only sums of similar size meet,
  so rounding errors stay small, in one pass with four accumulators.
* PyTorch runs the cascade on several columns at once (the lanes of a SIMD vector,
  and four vectors to keep the CPU busy); every column is its own cascade. So
  `_cascade` takes `width` columns, each a run of `n` numbers `row_stride` apart.
* `_row_sum` (PyTorch's `row_sum`) splits one run into four interleaved runs
  (elements 0, 4, 8, ...; 1, 5, 9, ...; ...), cascades each, adds the leftover
  elements to the first, then adds the four partial sums in order.

Which of these a sum uses depends on its memory layout, see `sum_2d` (one call of
PyTorch's loop) and `sum_strided` (the loop driven over every dimension).

Every partial sum starts at +0.0 and the result is added to an output filled with
zeros, so a sum of -0.0 values is +0.0, as in PyTorch.
"""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def _level_power(n):
    """log2 of the run length moved up a level: 4 (16 numbers) unless the run is longer
    than 2**16, then a quarter of ceil(log2(n)), so four levels always suffice."""
    ceil_log2 = 1
    while (1 << ceil_log2) < n:
        ceil_log2 += 1
    return max(4, ceil_log2 // 4)


@njit(cache=True, nogil=True, error_model="numpy")
def _add_row(acc, x, base, col_stride, width):
    """acc[c] += x[base + c*col_stride] for each column c."""
    if col_stride == 1:  # (contiguous: a slice, whose loop the compiler turns into SIMD adds)
        row = x[base:base + width]
        for c in range(width):
            acc[c] += row[c]
    else:
        for c in range(width):
            acc[c] += x[base + c * col_stride]


@njit(cache=True, nogil=True, error_model="numpy")
def _add_four_rows(acc, x, base, row_stride, col_stride, width):
    """acc[c] += four rows from x[base], one after the other (`_add_row` four times, the
    same sums in the same order), so each partial sum is loaded and stored once per
    four rows rather than once per row: a whole float32 sum of 8192 numbers takes
    about two thirds of the time."""
    if col_stride == 1:
        r0 = x[base:base + width]
        r1 = x[base + row_stride:base + row_stride + width]
        r2 = x[base + 2 * row_stride:base + 2 * row_stride + width]
        r3 = x[base + 3 * row_stride:base + 3 * row_stride + width]
        for c in range(width):
            acc[c] = acc[c] + r0[c] + r1[c] + r2[c] + r3[c]
    else:
        for _ in range(4):
            _add_row(acc, x, base, col_stride, width)
            base += row_stride


@njit(cache=True, nogil=True, error_model="numpy")
def _move_up(low, high, width):
    """high += low, then low = 0: a level's partial sums move up one level."""
    for c in range(width):
        high[c] += low[c]
        low[c] = 0


@njit(cache=True, nogil=True, error_model="numpy")
def _cascade(x, start, row_stride, col_stride, n, width, out):
    """out[c] = the cascade sum of x[start + c*col_stride + i*row_stride], i < n, for
    each of `width` columns c (which share the level counter, as PyTorch's do)."""
    power = _level_power(n)
    step = 1 << power
    mask = step - 1
    acc = np.zeros((4, width), out.dtype)
    level0, level1, level2, level3 = acc[0], acc[1], acc[2], acc[3]
    i = 0
    while i + step <= n:
        for _ in range(step // 4):  # (`step` is 16 or more, a power of two)
            _add_four_rows(level0, x, start + i * row_stride, row_stride, col_stride, width)
            i += 4
        _move_up(level0, level1, width)  # level 0 moves up every `step` rows,
        if i & (mask << power) == 0:
            _move_up(level1, level2, width)  # level 1 every step**2 rows,
            if i & (mask << 2 * power) == 0:
                _move_up(level2, level3, width)  # level 2 every step**3 rows
    while i < n:  # the rows that do not fill a run of `step`
        _add_row(level0, x, start + i * row_stride, col_stride, width)
        i += 1
    for c in range(width):
        out[c] = ((level0[c] + level1[c]) + level2[c]) + level3[c]


@njit(cache=True, nogil=True, error_model="numpy")
def _row_sum(x, start, stride, n):
    """PyTorch's `row_sum` of the n numbers x[start + i*stride]: seen as rows of four,
    the four interleaved runs (elements 0, 4, 8, ...; 1, 5, 9, ...; ...) cascaded,
    the leftover numbers added to the first run's sum, then the four sums added."""
    quads = n // 4
    partial = np.empty(4, x.dtype)
    _cascade(x, start, 4 * stride, stride, quads, 4, partial)
    first = partial[0]
    for i in range(quads * 4, n):
        first += x[start + i * stride]
    return ((first + partial[1]) + partial[2]) + partial[3]


@njit(cache=True, nogil=True, error_model="numpy")
def _row_sums(x, start, row_stride, col_stride, n, cols, out, out_start, out_stride):
    """out[out_start + c*out_stride] += `_row_sum` of column c, for `cols` columns
    `col_stride` apart (n numbers each, `row_stride` apart). The same sums as one
    `_row_sum` per column: every (interleaved run, column) pair is its own cascade,
    with a level counter that depends on n only, so each run goes through one
    `_cascade` for all the columns at once (vectorised across them)."""
    quads = n // 4
    runs = np.empty((4, cols), out.dtype)
    if col_stride == 1 and row_stride == cols:
        # (A whole contiguous matrix: a step of the four runs of all the columns is
        # 4 * cols neighbouring numbers, so one cascade does them all.)
        _cascade(x, start, 4 * row_stride, 1, quads, 4 * cols, runs.reshape(-1))
    else:
        for r in range(4):
            _cascade(x, start + r * row_stride, 4 * row_stride, col_stride, quads, cols,
                     runs[r])
    for c in range(cols):
        first = runs[0, c]
        for i in range(quads * 4, n):
            first += x[start + c * col_stride + i * row_stride]
        out[out_start + c * out_stride] += ((first + runs[1, c]) + runs[2, c]) + runs[3, c]


@njit(cache=True, nogil=True, error_model="numpy")
def _inner_sum(x, start, n, lanes):
    """The sum of the n contiguous numbers from x[start] (PyTorch's
    `vectorized_inner_sum`): `_row_sum`'s order on whole vectors of `lanes` numbers,
    each lane its own sum; then the numbers after the last whole vector are added one
    by one to 0, and the lanes' sums to that, in lane order."""
    vectors = n // lanes
    quads = vectors // 4
    # the four interleaved runs of vectors, every lane of each: 4 * lanes columns
    partial = np.empty(4 * lanes, x.dtype)
    _cascade(x, start, 4 * lanes, 1, quads, 4 * lanes, partial)
    for v in range(quads * 4, vectors):
        for lane in range(lanes):
            partial[lane] += x[start + v * lanes + lane]
    total = x.dtype.type(0)
    for i in range(vectors * lanes, n):
        total += x[start + i]
    for lane in range(lanes):
        total += ((partial[lane] + partial[lanes + lane]) + partial[2 * lanes + lane]) \
            + partial[3 * lanes + lane]
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def _outer_sum(x, start, row_stride, col_stride, rows, cols, block, out, out_start,
               out_stride):
    """out[out_start + c*out_stride] += the sum down column c (rows numbers apart by
    `row_stride`), for `cols` columns `col_stride` apart (PyTorch's
    `vectorized_outer_sum` and `scalar_outer_sum`). Columns in whole blocks of `block`
    (four vectors, or four columns) are cascaded straight down; the rest go through
    `_row_sum` (each remaining vector, then each remaining column, the same way)."""
    # Every column of the whole blocks is its own cascade, and the cascade's steps
    # depend only on the number of rows: so all of them go through one call, whose
    # long inner loop the compiler vectorises (the same sums as block by block).
    c = cols - cols % block
    if c:
        sums = np.empty(c, out.dtype)
        _cascade(x, start, row_stride, col_stride, rows, c, sums)
        for k in range(c):
            out[out_start + k * out_stride] += sums[k]
    if c < cols:  # (the columns left over, each in `_row_sum`'s order)
        _row_sums(x, start + c * col_stride, row_stride, col_stride, rows, cols - c, out,
                  out_start + c * out_stride, out_stride)


@njit(cache=True, nogil=True, error_model="numpy")
def sum_2d(x, start, size0, size1, in0, in1, out, out_start, out0, out1, lanes):
    """One call of PyTorch's sum loop: a (size1, size0) block of x from x[start], with
    element strides in0 (along size0) and in1, added into out from out[out_start] with
    strides out0 and out1 (0 along a summed dimension). Like PyTorch's `cascade_sum`:

    * put the summed dimension first; if neither is summed, just add x into out;
    * summed dimension contiguous and at least one vector long: `_inner_sum` per output;
    * outputs contiguous and at least a vector of them: `_outer_sum` with four-vector
      blocks (the remainder of the columns: a vector at a time, then one by one,
      both giving `_row_sum`'s order);
    * otherwise whichever of the two is closer in memory is walked first: `_row_sum`
      per output, or `_outer_sum` with blocks of four columns.
    """
    if out0 != 0 and out1 == 0:
        size0, size1, in0, in1, out0, out1 = size1, size0, in1, in0, out1, out0
    if out0 != 0:  # nothing summed here: out += x, element by element
        for j in range(size1):
            for i in range(size0):
                out[out_start + j * out1 + i * out0] += x[start + j * in1 + i * in0]
        return
    if in0 == 1 and size0 >= lanes:
        for j in range(size1):
            out[out_start + j * out1] += _inner_sum(x, start + j * in1, size0, lanes)
        return
    if in1 == 1 and size1 >= lanes:
        # (Columns of four vectors; any remaining whole vector gives `_row_sum`'s order
        # column by column, the same as the remaining single columns.)
        _outer_sum(x, start, in0, 1, size0, size1, 4 * lanes, out, out_start, out1)
    elif in0 < in1:
        _row_sums(x, start, in0, in1, size0, size1, out, out_start, out1)
    else:
        _outer_sum(x, start, in0, in1, size0, size1, 4, out, out_start, out1)


@njit(cache=True, nogil=True, error_model="numpy")
def column_cascade(a, lanes, out):
    """out[c] += the sum down column c of the C-contiguous matrix `a` (two or more
    rows and columns), for every column, as `sum_2d` adds a matrix summed over its
    rows. A kernel of its own for a bias's gradient, in every training step: three
    arguments cost numba's dispatcher less than eleven."""
    rows, cols = a.shape
    sum_2d(a.reshape(-1), 0, rows, cols, cols, 1, out, 0, 0, 1, lanes)


@njit(cache=True, nogil=True, error_model="numpy")
def sum_contiguous(x, lanes):
    """The sum of every element of the C-contiguous `x` (at least two), as `sum_2d`
    adds it when the whole array is one run: PyTorch's order for a sum of every
    element on one thread. A kernel of its own because a whole sum (a loss's mean) is
    in every training step: two arguments cost numba's dispatcher less than eleven."""
    flat = x.reshape(-1)
    out = np.zeros(1, x.dtype)  # (+0.0 plus the sum: a sum of -0.0s is +0.0)
    if flat.size >= lanes:
        out[0] += _inner_sum(flat, 0, flat.size, lanes)
    else:  # (what `sum_2d` does with fewer numbers than a vector holds)
        _row_sums(flat, 0, 1, 0, flat.size, 1, out, 0, 0)
    return out[0]


@njit(cache=True, nogil=True, error_model="numpy")
def sum_strided(x, start, shape, in_strides, out, out_start, out_strides, begin, end, lanes):
    """PyTorch's walk over a reduction (`serial_for_each`): the elements `begin` to
    `end` of x, counted with dimension 0 fastest (dims in PyTorch's order, see
    arrays/summing.py), handed to `sum_2d` a block of dims 0 and 1 at a time; the
    remaining dims are counted like an odometer. Each block is added into `out`, so a
    sum over those outer dims adds its blocks' sums one after another."""
    ndim = shape.size
    if ndim <= 1:
        size0 = end - begin
        stride0 = in_strides[0] if ndim else 0
        ostride0 = out_strides[0] if ndim else 0
        sum_2d(x, start + begin * stride0, size0, 1, stride0, 0, out,
               out_start + begin * ostride0, ostride0, 0, lanes)
        return
    values = np.zeros(ndim, np.int64)
    rest = begin
    for d in range(ndim):
        values[d] = rest % shape[d]
        rest //= shape[d]
    offset = begin
    while offset < end:
        at_in = start
        at_out = out_start
        for d in range(ndim):
            at_in += values[d] * in_strides[d]
            at_out += values[d] * out_strides[d]
        step0 = min(shape[0] - values[0], end - offset)
        step1 = 1
        if step0 == shape[0]:  # whole rows: as many as the range holds, in dim 1
            step1 = min(shape[1] - values[1], (end - offset) // shape[0])
        sum_2d(x, at_in, step0, step1, in_strides[0], in_strides[1], out, at_out,
               out_strides[0], out_strides[1], lanes)
        offset += step0 * step1
        # the odometer: a whole block of rows moves dim 1 on, else dim 0 moves
        d = 0
        carry = step0
        if step1 != 1:
            d = 1
            carry = step1
        while d < ndim and carry > 0:
            value = values[d] + carry
            if value >= shape[d]:
                values[d] = value - shape[d]
                carry = 1
            else:
                values[d] = value
                carry = 0
            d += 1
