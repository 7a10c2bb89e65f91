"""Calling the kernels: every numba kernel runs on flat arrays; these helpers
flatten, broadcast and lay out results, switch long arrays to numpy's vectorised
forms, and split very long ones across the cores (the kernels release the GIL)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._dtype import float64
from ..kernels import elementwise as K
from .broadcasting import _row_of, broadcast_shape
from .direct import PLAIN, THREE_VECTORS, VECTOR_SCALAR, VECTOR_VECTOR
from .layout import (
    element_strides,
    empty_result,
    fresh_result,
    layout_matters,
    odd_unit_stride,
    plain,
    result_empty,
    result_order,
)
from .scalars import scalar_of
from .summing import IN_FLOAT64_MAX

# Arrays at least this long are split across the cores (the kernels release the
# GIL); below it, starting threads would cost more than it saves.
PARALLEL_MIN = 1 << 18


_WORKERS = os.cpu_count() or 1


_pool: ThreadPoolExecutor | None = None


def run_kernel(kernel, *args) -> None:
    """Call `kernel(*args)`; the last argument is the flat output. For long arrays,
    each core runs the same kernel on its own slice of every flat array argument."""
    n = args[-1].size
    if n < IN_FLOAT64_MAX and kernel in IN_FLOAT64 and args[-1].dtype is _FLOAT32:
        _run_in_float64(kernel, args)
        return
    if n < PARALLEL_MIN or _WORKERS == 1:
        kernel(*args)
        return
    jobs = [
        _thread_pool().submit(kernel, *(a[part] if isinstance(a, np.ndarray) and a.size == n
                                        else a for a in args))
        for part in _per_core(n)
    ]
    for job in jobs:
        job.result()


def _per_core(n: int) -> list[slice]:
    """`n` elements cut into one slice per core."""
    step = -(-n // _WORKERS)
    return [slice(i, i + step) for i in range(0, n, step)]


def _thread_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(_WORKERS, thread_name_prefix="minigrad-kernel")
    return _pool


def _broadcast_scalar(a: np.ndarray) -> bool:
    """A broadcast single value (every stride 0), as `sum`'s backward produces."""
    return a.ndim > 0 and a.size > 1 and not any(a.strides)


# Commutative kernels and their array-op-scalar twins (see `binary`).
SCALAR_FORMS = {K.add: K.add_scalar, K.mul: K.mul_scalar}


# Kernels doing one exactly rounded IEEE operation, and numpy's ufunc for it.
EXACT_UFUNCS = {K.add: np.add, K.sub: np.subtract, K.mul: np.multiply}


# Their batch-of-rows op row forms (`x @ w.t() + bias`), and which may swap sides.
ROW_FORMS = {K.add: K.add_rows, K.sub: K.sub_rows, K.mul: K.mul_rows}


COMMUTATIVE = {K.add, K.mul}


# Kernels of one correctly rounded operation per element (+ - * / sqrt) or of none (a
# sign, a choice). A short row-major float32 input (`IN_FLOAT64_MAX`) runs through their
# float64 version: float64 holds a float32 result so closely that rounding it to
# float32 gives the bits the float32 kernel gives (53 >= 2 * 24 + 2 bits: rounding
# twice never differs from rounding once). A lesson using both dtypes then compiles
# these kernels once, not twice (about 0.1 s each on a first run).
IN_FLOAT64 = {K.add, K.sub, K.mul, K.div, K.add_scalar, K.mul_scalar, K.div_scalar,
              K.rsub_scalar, K.neg, K.abs, K.relu, K.sqrt, K.add_into}


_FLOAT32 = np.dtype(np.float32)  # (compared by identity: cheaper than ==, on every op)
_FLOAT64 = np.dtype(np.float64)


def _in_float64(kernel, a: np.ndarray) -> bool:
    """Whether `kernel` on `a` runs in float64 (see `IN_FLOAT64`): when the result is
    row-major either way (`a` 1-D, row-major with row-major strides on its dims of size 1
    too, see `layout.reorders`, or one value spread out, which has no say about the
    layout)."""
    return (a.dtype is _FLOAT32 and 0 < a.size < IN_FLOAT64_MAX and kernel in IN_FLOAT64
            and (a.ndim == 1 or (a.flags.c_contiguous and (1 not in a.shape
                                                           or not odd_unit_stride(a)))
                 or not any(a.strides)))


def _run_in_float64(kernel, args: tuple) -> None:
    """`kernel(*args)` on float32 arrays, through its float64 version (see
    `IN_FLOAT64`); `add_into` writes its first argument, the others their last."""
    wide = [a.astype(np.float64) if isinstance(a, np.ndarray) else float(a) for a in args]
    kernel(*wide)
    written = 0 if kernel is K.add_into else -1
    with np.errstate(over="ignore"):  # (beyond float32's range: inf, as in PyTorch)
        args[written][...] = wide[written]


def _as_float32(a: np.ndarray) -> np.ndarray:
    """A float64 result rounded to float32 (beyond float32's range: inf, silently, as
    PyTorch gives it)."""
    with np.errstate(over="ignore"):
        return a.astype(np.float32)


def _as_rows(a: np.ndarray, row: np.ndarray):
    """`a` as a 2-D batch of rows and `row` as one flat row, when `row` is a single
    row repeated over `a`'s leading dims (a bias added to a batch); else None."""
    shape = _row_of(row.shape, a.shape)
    if (shape is None or a.size == 0 or not a.flags.c_contiguous
            or not row.flags.c_contiguous):
        return None
    batch = a if a.ndim == 2 and len(shape) == 1 else a.reshape(-1, row.size)
    return batch, row if row.ndim == 1 else row.reshape(-1)


def quietly(ufunc):
    """numpy's `ufunc(x, out)` without numpy's warnings about overflow, log(0) or
    log(-1): PyTorch gives inf and nan silently. (Each thread sets its own error
    state, so this goes inside what each core runs.)"""
    def run(x: np.ndarray, out: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            ufunc(x, out=out)

    return run


# numba calls the C library once per element for these (the pip build of llvmlite
# has no vector math library), numpy's ufuncs run several elements per instruction:
# 3-12x faster on long float arrays. Short arrays keep the numba kernel, whose call
# costs less. As in PyTorch, whose vectorised loops and scalar tails differ the
# same way, a result can then differ in its last bits with the array's length.
# Filled by the op declarations (`vectorised=`, see `ops/declaration.py`): kernel ->
# its vectorised form for long arrays, forward kernels of (x, out) ...
VECTORISED: dict = {}


# ... and backward kernels of (grad, x, out) that call the C library per element.
VECTORISED_BACKWARD: dict = {}


VECTORISED_MIN = 4096


# -- short vectors: a kernel's compiled code, called directly ----------------------------
# The commonest operands of a long chain of small ops are a short, row-major,
# aligned, writable float64 vector and perhaps a Python float. The three functions
# below check exactly that (`PLAIN`: the flags in one go) and then call the kernel's
# machine code without numba's dispatcher (see `direct.py`), into a fresh vector.
# They return None for anything else, which then goes the general way. "Short" is
# what needs neither numpy's vectorised form nor the threads.

def short_vector_and_number(kernel, a: np.ndarray, s: float) -> np.ndarray | None:
    """`kernel(a, s, out)` for a short plain float64 vector `a`; `s` must be a Python
    float (the caller checks it). None when `a` is anything else."""
    if a.dtype is not _FLOAT64 or a.ndim != 1:
        return None
    n = a.size
    if not 0 < n < PARALLEL_MIN or a.flags.num & PLAIN != PLAIN:  # (no vectorised form)
        return None
    out = np.empty(n, _FLOAT64)
    VECTOR_SCALAR[kernel](a, s, out)
    return out


def short_vector(kernel, x: np.ndarray) -> np.ndarray | None:
    """`kernel(x, out)` for a short plain float64 vector `x`; else None."""
    if x.dtype is not _FLOAT64 or x.ndim != 1:
        return None
    n = x.size
    if not 0 < n < VECTORISED_MIN or x.flags.num & PLAIN != PLAIN:
        return None
    out = np.empty(n, _FLOAT64)
    VECTOR_VECTOR[kernel](x, out)
    return out


def short_vectors(kernel, grad: np.ndarray, x: np.ndarray) -> np.ndarray | None:
    """`kernel(grad, x, out)` (a fused backward kernel) for two short plain float64
    vectors of one length; else None."""
    if grad.dtype is not _FLOAT64 or x.dtype is not _FLOAT64 or grad.ndim != 1 or x.ndim != 1:
        return None
    n = grad.size
    if not 0 < n < VECTORISED_MIN or x.size != n or grad.flags.num & x.flags.num & PLAIN != PLAIN:
        return None
    out = np.empty(n, _FLOAT64)
    THREE_VECTORS[kernel](grad, x, out)
    return out


def unary_into(kernel, x: np.ndarray, out: np.ndarray) -> None:
    """Run a one-input kernel from flat `x` into flat `out` (which may be `x`)."""
    n = out.size
    if n >= VECTORISED_MIN:
        kernel = VECTORISED.get(kernel, kernel)
    if n < PARALLEL_MIN:  # small: call the kernel directly
        kernel(x, out)
    else:
        run_kernel(kernel, x, out)


def unary(kernel, x: np.ndarray) -> np.ndarray:
    """Run a one-input kernel into a fresh array of the same shape and dtype."""
    if x.dtype is _FLOAT64:
        out = short_vector(kernel, x)
        if out is not None:
            return out
    elif x.dtype is _FLOAT32 and _in_float64(kernel, x):
        return _as_float32(unary(kernel, x.astype(np.float64)))
    if x.ndim == 1:
        n = x.size
        flags = x.flags
        if 0 < n < VECTORISED_MIN and flags.c_contiguous and flags.writeable:
            # (a short flat vector of another dtype, spelled out: `plain` has nothing
            # to do)
            out = np.empty(n, x.dtype)
            kernel(x, out)
            return out
        x = plain(x)
        out = np.empty(x.size, x.dtype)
        if out.size < VECTORISED_MIN:  # short: straight to the kernel
            kernel(x, out)
        else:
            unary_into(kernel, x, out)
        return out
    if x.flags.c_contiguous:  # (the usual case, spelled out)
        out = np.empty(x.shape, x.dtype)
        unary_into(kernel, plain(x), out.ravel())
        return out
    out, flat_out, (flat_x,) = fresh_result(x.shape, x.dtype, x)  # (`x.t().exp()` is
    unary_into(kernel, flat_x, flat_out)                         # transposed too)
    return out


def binary(kernel, a: np.ndarray, b: np.ndarray, out_dtype) -> np.ndarray:
    """Run a two-input kernel, broadcasting first (the kernels see equal-length
    flat arrays). The result is laid out as PyTorch lays it out (`result_order`)."""
    if a.dtype != out_dtype:
        a = a.astype(out_dtype)
    if b.dtype != out_dtype:
        b = b.astype(out_dtype)
    shape = a.shape
    if not (a.size and b.size):  # (no elements: only the layout is PyTorch's to decide)
        return _empty_binary(a, b, out_dtype)
    if (shape == b.shape and _in_float64(kernel, a) and b.flags.c_contiguous
            and (1 not in shape or not odd_unit_stride(b))):  # (both laid out row-major)
        return _as_float32(binary(kernel, a.astype(np.float64), b.astype(np.float64),
                                  np.float64))
    if shape == b.shape and a.flags.c_contiguous and b.flags.c_contiguous:
        # The common case: nothing to broadcast, both already flat in memory.
        if len(shape) == 1:
            out = flat_out = np.empty(a.size, out_dtype)
        else:  # (flat views: the result owns its memory)
            out = np.empty(shape, out_dtype)
            flat_out = out.ravel()
        a, b = plain(a), plain(b)
        if out.size < PARALLEL_MIN:
            kernel(a, b, flat_out)
        else:
            run_kernel(kernel, a, b, flat_out)
        return out
    if (len(shape) == 2 and b.ndim == 1 and shape[1] == b.shape[0] and shape[0]
            and a.flags.c_contiguous and b.flags.c_contiguous and kernel in ROW_FORMS
            and 1 not in shape):
        # The next most common: a bias for a batch of rows (`x @ w.t() + b`).
        out = np.empty(shape, out_dtype)
        ROW_FORMS[kernel](a, b, out)
        return out
    if a.shape != b.shape:
        shape = broadcast_shape(a.shape, b.shape)
    if (not (a.flags.c_contiguous and b.flags.c_contiguous) and (
            layout_matters(a) or layout_matters(b))) or (
            1 in shape and (odd_unit_stride(a) or odd_unit_stride(b))):
        order = result_order(shape, a, b)
        if order is not None:  # laid out as the operands are: `x.t() + y` is transposed
            out = result_empty(shape, out_dtype, (a, b), order)
            _binary_into(kernel, np.broadcast_to(a, shape).transpose(order),
                         np.broadcast_to(b, shape).transpose(order), out.transpose(order))
            return out
    out = np.empty(shape, out_dtype)
    _binary_into(kernel, a, b, out)
    return out


def _empty_binary(a: np.ndarray, b: np.ndarray, out_dtype) -> np.ndarray:
    """`binary`'s result when an operand has no elements (nor then has the result)."""
    shape = broadcast_shape(a.shape, b.shape) if a.shape != b.shape else a.shape
    return empty_result(shape, out_dtype, (a.shape, element_strides(a)),
                        (b.shape, element_strides(b)))


def _binary_into(kernel, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """`binary`'s work beyond its common case: `a` and `b` broadcast to the shape of
    `out`, a fresh row-major array."""
    shape = out.shape
    if a.shape != b.shape:
        row_form = ROW_FORMS.get(kernel)
        if row_form is not None:
            batch = _as_rows(a, b)
            if batch is None and kernel in COMMUTATIVE:
                batch = _as_rows(b, a)
            if batch is not None:
                rows = batch[0].shape
                row_form(*batch, out if out.shape == rows else out.reshape(rows))
                return
        ufunc = EXACT_UFUNCS.get(kernel)
        if ufunc is not None and out.dtype.kind == "f":
            # Any other broadcast: numpy broadcasts without copying the stretched
            # operand out in full. One IEEE + - * per element is exactly rounded,
            # so the result is bit-identical to the kernel's. (Quietly: PyTorch gives
            # inf and nan without numpy's overflow and invalid-value warnings.)
            with np.errstate(all="ignore"):
                ufunc(a, b, out=out)
            return
        a = np.broadcast_to(a, shape)
        b = np.broadcast_to(b, shape)
    scalar_form = SCALAR_FORMS.get(kernel)
    if scalar_form is not None:
        # One side is a single value spread out: use it as a scalar, never copy it.
        if _broadcast_scalar(a):
            a, b = b, a
        if _broadcast_scalar(b):
            run_kernel(scalar_form, plain(a), b.reshape(-1)[0], out.ravel())
            return
    run_kernel(kernel, plain(a), plain(b), out.ravel())


def scalar_op(kernel, a: np.ndarray, s, dt, reverse: bool = False,
              wrapped: bool = True) -> np.ndarray:
    """Apply `kernel(array, scalar)` (or `kernel(scalar, array)`) in dtype `dt` (a
    minigrad dtype; the Python number `s` is converted to it as PyTorch converts it).
    `wrapped`: PyTorch takes the number as a 0-d tensor operand (`x * 2`), not as a
    parameter of a one-operand op (`x ** 2`), which lays out a result of no elements
    otherwise."""
    if dt is float64 and type(s) is float and not reverse:
        # (the commonest case of all, `y * 0.5` or `grad * 2.0` on a short vector:
        # nothing to convert, lay out or split)
        out = short_vector_and_number(kernel, a, s)
        if out is not None:
            return out
    np_dtype = dt.np
    if a.dtype is not np_dtype:
        a = a.astype(np_dtype)
    if type(s) is not float or dt is not float64:  # (a Python float is a float64 already)
        try:
            s = scalar_of(s, dt)
        except OverflowError:  # an int in [2**63, 2**64): PyTorch wraps it into int64
            s = scalar_of(s - 2**64, dt)
    if not a.size:
        operands = ((a.shape, element_strides(a)),) + (((), ()),) * wrapped
        return empty_result(a.shape, np_dtype, *operands)
    if _in_float64(kernel, a):  # (s is a float32 now: float64 holds it exactly)
        return _as_float32(scalar_op(kernel, a.astype(np.float64), float(s), float64,
                                     reverse, wrapped))
    if a.ndim == 1:
        x = plain(a)
        out = flat_out = np.empty(a.size, np_dtype)
    else:  # laid out as `a` is: `x.t() * 2` is transposed too
        out, flat_out, (x,) = fresh_result(a.shape, np_dtype, a, number=wrapped)
    if out.size >= PARALLEL_MIN:
        run_kernel(kernel, *((s, x, flat_out) if reverse else (x, s, flat_out)))
    elif reverse:
        kernel(s, x, flat_out)
    else:  # small: call the kernel directly
        kernel(x, s, flat_out)
    return out


def backward2(kernel, grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A fused backward kernel of (grad, saved) with grad's shape."""
    if grad.dtype is _FLOAT64:  # (the commonest case: two short float64 vectors)
        out = short_vectors(kernel, grad, x)
        if out is not None:
            return out
    if (grad.dtype is _FLOAT32 and 0 < grad.size < IN_FLOAT64_MAX and kernel in IN_FLOAT64
            and x.dtype is _FLOAT32 and x.flags.c_contiguous
            and (grad.flags.c_contiguous or not any(grad.strides))
            and (1 not in grad.shape or not (odd_unit_stride(x) or odd_unit_stride(grad)))):
        # (row-major operands, or a spread-out grad, which has no say about the layout:
        # the result is row-major either way)
        return _as_float32(backward2(kernel, np.array(grad, np.float64),
                                     x.astype(np.float64)))
    shape = grad.shape
    if x.shape != shape:
        x = np.broadcast_to(x, shape)
    dtype = grad.dtype
    if x.dtype is not dtype:
        x = x.astype(dtype)
    n = grad.size
    if len(shape) == 1:
        out = flat_out = np.empty(n, dtype)
        g_flags, x_flags = grad.flags, x.flags
        # (`plain`, inlined: two row-major writable vectors are what it gives)
        flat_grad = grad if g_flags.c_contiguous and g_flags.writeable else plain(grad)
        flat_x = x if x_flags.c_contiguous and x_flags.writeable else plain(x)
        if n < VECTORISED_MIN:  # short and flat: straight to the kernel
            kernel(flat_grad, flat_x, out)
            return out
    elif grad.flags.c_contiguous and x.flags.c_contiguous:  # (the usual case, spelled out)
        out = np.empty(shape, dtype)
        flat_out, flat_grad, flat_x = out.ravel(), plain(grad), plain(x)
    else:  # laid out as the operands are, like the forward results
        out, flat_out, (flat_grad, flat_x) = fresh_result(shape, dtype, grad, x)
    if n >= VECTORISED_MIN:
        kernel = VECTORISED_BACKWARD.get(kernel, kernel)
    if n < PARALLEL_MIN:
        kernel(flat_grad, flat_x, flat_out)
    else:
        run_kernel(kernel, flat_grad, flat_x, flat_out)
    return out
