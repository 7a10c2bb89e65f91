"""Kernels: readable loops that give the same numbers jitted and interpreted."""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from minigrad.arrays.dispatch import (
    PARALLEL_MIN,
    VECTORISED,
    VECTORISED_BACKWARD,
    VECTORISED_MIN,
    backward2,
    run_kernel,
    unary,
)
from minigrad.arrays.layout import flat
from minigrad.arrays.summing import float_sum
from minigrad.kernels import elementwise as K

PROGRAM = """
import json, numpy as np, minigrad as torch
x = torch.tensor(np.linspace(-2, 2, 7), dtype=torch.float64, requires_grad=True)
y = torch.tensor(np.linspace(1, 3, 7), dtype=torch.float32, requires_grad=True)
loss = ((x.exp() * x.sin()).tanh() / (x.abs() + 1)).sum() + (y.sigmoid() ** 2).relu().mean()
loss.backward()
print(json.dumps([loss.item(), x.grad.tolist(), y.grad.tolist()]))
"""


def _run(env_extra: dict) -> list:
    env = {**os.environ, **env_extra}
    out = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                         text=True, check=True, timeout=300)
    return json.loads(out.stdout)


def test_interpreted_kernels_give_the_jitted_results():
    jitted = _run({})
    interpreted = _run({"NUMBA_DISABLE_JIT": "1"})
    np.testing.assert_allclose(interpreted[0], jitted[0], rtol=1e-6)
    np.testing.assert_allclose(interpreted[1], jitted[1], rtol=1e-12)
    np.testing.assert_allclose(interpreted[2], jitted[2], rtol=1e-6)


def test_kernels_follow_ieee_like_pytorch():
    a = np.array([1.0, 0.0, -1.0])
    out = np.empty(3)
    K.div(a, np.zeros(3), out)
    assert np.isposinf(out[0]) and np.isnan(out[1]) and np.isneginf(out[2])
    K.log(np.array([0.0, -1.0, 1.0]), out)
    assert np.isneginf(out[0]) and np.isnan(out[1]) and out[2] == 0.0
    assert np.isnan(float_sum(np.array([1.0, np.nan]), (0,)))


def test_float32_kernels_compute_in_float32():
    x = np.array([1e-8, 1.0], np.float32)
    out = np.empty(2, np.float32)
    K.add_scalar(x, np.float32(1.0), out)
    assert out.dtype == np.float32 and out[0] == np.float32(1.0)


def test_large_arrays_split_across_cores_match_one_pass():
    n = PARALLEL_MIN * 2 + 3
    x = np.linspace(-3, 3, n)
    split = np.empty(n)
    run_kernel(K.tanh, x, split)
    whole = np.empty(n)
    K.tanh(x, whole)
    np.testing.assert_array_equal(split, whole)


def test_flat_views_what_it_can_and_copies_in_row_major_order_otherwise():
    rows = np.arange(12.0).reshape(3, 4)
    assert np.shares_memory(flat(rows), rows)  # row-major: a view
    strided = np.arange(10.0)[::3]
    assert flat(strided) is strided  # 1-D arrays go to the kernels as they are
    spread = np.broadcast_to(np.array(2.5), (3, 4))
    assert np.shares_memory(flat(spread), spread)  # a spread value is not copied out
    assert flat(spread).tolist() == [2.5] * 12
    cols = rows.T
    copied = flat(cols)
    assert not np.shares_memory(copied, rows)
    assert copied.tolist() == cols.reshape(-1).tolist()  # row-major order of the view


def test_kernels_take_strided_1d_arrays():
    a = np.arange(20.0)
    out = np.zeros(10)
    K.mul(a[::2], a[1::2], out[::1])
    assert out.tolist() == (a[::2] * a[1::2]).tolist()
    written = np.zeros(20)
    K.add(a[::2], a[1::2], written[::2])  # strided output: written in place
    assert written[::2].tolist() == (a[::2] + a[1::2]).tolist()
    assert not written[1::2].any()


def _ulps(a: np.ndarray, b: np.ndarray) -> int:
    ints = np.int32 if a.dtype == np.float32 else np.int64
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    return int(np.max(np.where(same, 0, np.abs(a.view(ints) - b.view(ints)))))


def test_long_arrays_use_numpys_vectorised_functions_and_agree_with_the_kernels():
    import warnings

    for dtype in (np.float32, np.float64):
        x = np.linspace(-20, 20, VECTORISED_MIN * 3, dtype=dtype)
        x[:4] = [0.0, -1.0, np.inf, np.nan]  # log(0), log(-1), exp(inf), nan: no warnings
        x[4] = 1000.0  # exp overflows to inf silently, as in PyTorch
        for kernel in VECTORISED:
            one_by_one = np.empty_like(x)
            kernel(x, one_by_one)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                vectorised = unary(kernel, x)
            assert vectorised.dtype == dtype
            assert _ulps(vectorised, one_by_one) <= 4, kernel


def test_long_backward_passes_use_numpys_vectorised_functions_and_agree_with_the_kernels():
    import warnings

    for dtype in (np.float32, np.float64):
        x = np.linspace(-20, 20, VECTORISED_MIN * 3, dtype=dtype)
        x[:3] = [np.inf, -np.inf, np.nan]
        grad = np.linspace(-2, 2, x.size, dtype=dtype)
        for kernel in VECTORISED_BACKWARD:
            one_by_one = np.empty_like(x)
            kernel(grad, x, one_by_one)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # sin(inf) is nan silently, as in PyTorch
                vectorised = backward2(kernel, grad, x)
            assert vectorised.dtype == dtype
            assert _ulps(vectorised, one_by_one) <= 4, kernel


def test_sigmoid_of_long_arrays_saturates_without_overflow_warnings():
    import warnings

    import minigrad

    x = np.full(VECTORISED_MIN, -1000.0)
    x[1::2] = 1000.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = minigrad.tensor(x).sigmoid().numpy()
    np.testing.assert_array_equal(y[::2], 0.0)
    np.testing.assert_array_equal(y[1::2], 1.0)


def test_short_arrays_keep_the_numba_kernel():
    x = np.linspace(-3, 3, VECTORISED_MIN - 1)
    expected = np.empty_like(x)
    K.sin(x, expected)
    np.testing.assert_array_equal(unary(K.sin, x), expected)


def test_in_place_functions_take_the_same_path_as_out_of_place():
    import minigrad

    values = np.linspace(-5, 5, PARALLEL_MIN + 7, dtype=np.float32)
    t = minigrad.tensor(values.copy())
    expected = minigrad.tensor(values).exp()
    t.exp_()
    np.testing.assert_array_equal(t.numpy(), expected.numpy())


def test_broadcast_arithmetic_overflows_quietly_as_in_pytorch():
    import warnings

    import minigrad

    col = minigrad.tensor([[1e308], [np.inf]], dtype=minigrad.float64)
    row = minigrad.tensor([10.0, -np.inf, 1.0], dtype=minigrad.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarnings would fail the test
        product, total = col * row, col + row
    assert product[0, 0].item() == np.inf and np.isnan(total[1, 1].item())


def test_result_order_follows_the_operands_strides():
    # The layout rule element-wise results follow (PyTorch's): outermost dim first.
    from minigrad.arrays.layout import empty_in_order, result_order

    m = np.ones((2, 3))
    assert result_order((2, 3), m) is None  # row-major stays row-major
    assert result_order((3, 2), m.T) == [1, 0]  # a transpose gives a transpose
    assert result_order((3, 2), m.T, np.ones((3, 2))) == [1, 0]  # the first one decides
    assert result_order((3, 2), np.ones((3, 2)), m.T) is None
    # A row stretched over the rows has no say about the dims: the transpose decides.
    assert result_order((3, 2), np.ones(2), m.T) == [1, 0]
    cube = np.ones((2, 3, 4)).transpose(2, 0, 1)  # memory runs through dims 1, 2, 0
    assert result_order(cube.shape, cube) == [1, 2, 0]
    out = empty_in_order(cube.shape, np.float64, [1, 2, 0])
    assert out.strides == cube.strides
    assert out.base is None  # (owns its memory, as a fresh PyTorch tensor does)
    flipped = empty_in_order((3, 2), np.float32, [1, 0])
    assert flipped.base is None and flipped.flags.f_contiguous
    assert empty_in_order((2, 0, 3), np.float64, [2, 0, 1]).shape == (2, 0, 3)


def test_add_into_adds_in_place():
    for dtype in (np.float32, np.float64):
        total = np.arange(5, dtype=dtype)
        K.add_into(total, np.full(5, 0.5, dtype))
        np.testing.assert_array_equal(total, np.arange(5, dtype=dtype) + dtype(0.5))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2,), (7,), (33,), (3, 5), (64, 100), (700, 3), (4, 3, 2),
                                   (3, 300, 5)])
def test_sums_of_every_layout_are_within_a_few_ulps_of_the_exact_sum(dtype, shape):
    # rows (trailing dims), columns (leading dims), the middle dims and a transposed
    # array (both copied into rows): each within 4 ulps of the terms' magnitudes of
    # the exact sum (math.fsum), whichever kernel adds them
    from minigrad.arrays.summing import float_sum

    a = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    eps = np.finfo(dtype).eps
    for b in (a, a.T):
        for r in range(1, b.ndim + 1):
            for dims in itertools.combinations(range(b.ndim), r):
                got = float_sum(b, dims)
                moved = np.moveaxis(b.astype(np.float64), dims, range(-r, 0))
                terms = moved.reshape(got.shape + (-1,))
                exact = np.array([math.fsum(t) for t in terms.reshape(-1, terms.shape[-1])])
                size = np.abs(terms).sum(-1).reshape(-1)
                assert got.dtype == dtype
                assert np.all(np.abs(got.reshape(-1) - exact) <= 4 * eps * size + 1e-300), dims


@pytest.mark.parametrize("dims", [(0,), (1,)])
def test_long_sums_do_not_grow_their_rounding_error_with_their_length(dims):
    # a million positive terms: a running total in the array's dtype would be off by
    # about 1% in float32 and 1e-11 in float64; runs added on their own, in float64,
    # stay within a few ulps
    from minigrad.arrays.summing import float_sum

    n = 1_000_000
    shape = (n, 1) if dims == (0,) else (1, n)
    for dtype in (np.float32, np.float64):
        a = np.full(shape, 0.1, dtype)
        exact = math.fsum([float(dtype(0.1))] * n)
        got = float(float_sum(a, dims)[0])
        assert abs(got - exact) <= 4 * np.finfo(dtype).eps * exact
