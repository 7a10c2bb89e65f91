"""Float sums and means against PyTorch's: whole-tensor sums, sums along any dims of
contiguous, transposed and sliced tensors, keepdim, mean, sums large enough for PyTorch
to split between its threads, and the sums backward does to undo broadcasting (a bias's
gradient). PyTorch adds in an order it chooses by vector width and thread count, so
these are compared as the float policy's `SUM`: within a few ulps of the sum of the
terms' magnitudes. Sums of zeros, infinities and NaNs are exact (signs of zero too).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from float_policy import SUM, outside

import minigrad
from minigrad._cpu import SUM_VECTOR_BYTES
from minigrad.arrays.summing import GRAIN_SIZE, cascade_sum
from minigrad.kernels.cascade import _cascade, _row_sum, _row_sums

DTYPES = ["float64", "float32"]


def _same_bits(mine, theirs) -> bool:
    a = np.ascontiguousarray(np.asarray(mine))
    b = np.ascontiguousarray(np.asarray(theirs))
    return a.dtype == b.dtype and a.shape == b.shape and \
        a.reshape(-1).view(np.uint8).tobytes() == b.reshape(-1).view(np.uint8).tobytes()


def _close_sum(mine, theirs, terms) -> bool:
    """Within the policy's SUM of PyTorch's, `terms` the magnitudes summed."""
    mine, theirs = np.asarray(mine), np.asarray(theirs)
    return mine.dtype == theirs.dtype and mine.shape == theirs.shape and \
        not outside(mine, theirs, SUM, scale=terms).any()


def _sizes() -> list[int]:
    """Lengths around the kernel's boundaries: one vector, four vectors (one row of
    the four interleaved runs), 16 and 64 (cascade levels), the grain size."""
    sizes = set(range(0, 40))
    for edge in (16, 64, 256, 1024, 4 * 4, 4 * 8, 4 * 16, 16 * 16, 16 * 64, GRAIN_SIZE):
        sizes.update(range(max(edge - 3, 0), edge + 4))
    sizes.update({101, 999, 4097, 40000, 65537, 70000})
    return sorted(sizes)


@pytest.mark.parametrize("dtype", DTYPES)
def test_whole_sums_and_means_of_many_lengths(torch, dtype):
    rng = np.random.default_rng(0)
    bad = []
    for n in _sizes():
        a = rng.standard_normal(n).astype(dtype)
        for op in ("sum", "mean"):
            mine = getattr(minigrad.from_numpy(a), op)().numpy()
            theirs = getattr(torch.from_numpy(a), op)().numpy()
            terms = getattr(np.abs(a.astype(np.float64)), op)() if n else 0.0
            if not _close_sum(mine, theirs, terms):
                bad.append((op, n, mine, theirs))
    assert not bad, bad[:5]


SHAPES = [(40, 37), (37, 40), (3, 5), (16, 64), (64, 16), (7, 9, 11), (4, 33, 17),
          (2, 3, 4, 5), (1, 50), (33, 1, 9), (300, 200), (5, 20000), (20000, 5),
          (3, 300, 200)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sums_along_dims_of_any_layout(torch, dtype, shape):
    rng = np.random.default_rng(len(shape) * 1000 + shape[0])
    data = rng.standard_normal(shape).astype(dtype)
    layouts = {"contiguous": lambda t: t, "transposed": lambda t: t.t() if t.dim() == 2
               else t.permute(*reversed(range(t.dim()))),
               "sliced": lambda t: t[::2] if t.shape[0] > 2 else t[:, ::2]}
    bad = []
    for name, layout in layouts.items():
        mine, theirs = layout(minigrad.from_numpy(data)), layout(torch.from_numpy(data))
        for r in range(1, len(shape) + 1):
            for dims in itertools.combinations(range(len(shape)), r):
                for keepdim in (False, True):
                    for op in ("sum", "mean"):
                        got = getattr(mine, op)(dims, keepdim=keepdim).numpy()
                        want = getattr(theirs, op)(dims, keepdim=keepdim).numpy()
                        terms = getattr(layout(torch.from_numpy(np.abs(data))).double(),
                                        op)(dims, keepdim=keepdim).numpy()
                        if not _close_sum(got, want, terms):
                            bad.append((name, op, dims, keepdim))
    assert not bad, bad[:10]


def test_the_motivating_examples(torch):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(7)
    assert _close_sum(minigrad.from_numpy(a).sum().item(), torch.from_numpy(a).sum().item(),
                      np.abs(a).sum())
    b = rng.standard_normal((40, 37))
    for op in (lambda t: t.sum(0), lambda t: t.sum(1), lambda t: t.mean()):
        assert _close_sum(op(minigrad.from_numpy(b)).numpy(), op(torch.from_numpy(b)).numpy(),
                          op(torch.from_numpy(np.abs(b))).numpy())


def test_signed_zeros_empty_and_nonfinite(torch):
    cases = [[-0.0], [[-0.0, -0.0]], [], [[]], [1.0, float("nan")], [float("inf"), 1.0],
             [float("inf"), float("-inf")]]
    for values in cases:
        for op in ("sum", "mean"):
            mine = getattr(minigrad.tensor(values, dtype=minigrad.float64), op)().numpy()
            theirs = getattr(torch.tensor(values, dtype=torch.float64), op)().numpy()
            assert _same_bits(mine, theirs), (values, op)
    assert _same_bits(minigrad.tensor([[-0.0]], dtype=minigrad.float64).sum(0).numpy(),
                      torch.tensor([[-0.0]], dtype=torch.float64).sum(0).numpy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_gradients_are_summed_as_torchs(torch, dtype):
    """The engine sums a broadcast gradient back (PyTorch's `sum_to`): a bias added
    to a batch, a (1, n) and an (m, 1) operand, and Linear's bias."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((300, 37)).astype(dtype)
    seed = rng.standard_normal((300, 37)).astype(dtype)
    for other_shape in [(37,), (1, 37), (300, 1), ()]:
        other = np.asarray(rng.standard_normal(other_shape)).astype(dtype)
        grads = []
        for lib in (minigrad, torch):
            a = lib.tensor(x, requires_grad=True)
            b = lib.tensor(other, requires_grad=True)
            (a + b).backward(lib.tensor(seed))
            grads.append(b.grad.numpy())
        terms = np.abs(seed.astype(np.float64))
        terms = terms.sum(0) if other.ndim == 1 else terms.sum() if other.ndim == 0 else \
            terms.sum(0, keepdims=True) if other_shape[0] == 1 else terms.sum(1, keepdims=True)
        assert _close_sum(*grads, terms), other_shape
    weight = rng.standard_normal((5, 37)).astype(dtype)
    bias = rng.standard_normal(5).astype(dtype)
    batch = rng.standard_normal((1000, 37)).astype(dtype)
    # (seeded with a fixed gradient: the matrix product itself may differ in the last
    # bit, numpy's BLAS against PyTorch's)
    out_grad = rng.standard_normal((1000, 5)).astype(dtype)
    grads = []
    for lib in (minigrad, torch):
        layer = lib.nn.Linear(37, 5, dtype=getattr(lib, dtype))
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(weight))
            layer.bias.copy_(lib.tensor(bias))
        layer(lib.tensor(batch)).backward(lib.tensor(out_grad))
        grads.append(layer.bias.grad.numpy())
    assert _close_sum(*grads, np.abs(out_grad.astype(np.float64)).sum(0))


# 2**53 + 1 is halfway between two doubles and rounds (to even) back to 2**53: a 1
# added alone to 2**53 is lost, 1s summed among themselves first are kept. So these
# sums show the order they were added in.
BIG = 2.0 ** 53


def test_a_cascade_moves_each_run_of_16_up_a_level():
    # rows 0-15: BIG and fifteen 1s, each lost; rows 16-31: sixteen 1s summed to 16 in
    # level 0, then moved onto BIG in level 1 (exact); row 32 after the runs: 1 in
    # level 0; the levels added: 1 + (BIG + 16) = BIG + 17, rounded to even BIG + 16.
    x = np.array([BIG] + [1.0] * 32)
    out = np.empty(1)
    _cascade(x, 0, 1, 1, x.size, 1, out)
    assert out[0] == BIG + 16
    one_by_one = 0.0
    for v in x:
        one_by_one += v
    assert one_by_one == BIG


def test_row_sum_adds_four_interleaved_runs():
    # runs of elements 0,4 / 1,5 / 2,6 / 3,7: BIG (1 lost), 2, 2, 2; the leftover
    # element 8 goes onto the first run (lost); then BIG + 2 + 2 + 2.
    x = np.array([BIG] + [1.0] * 8)
    assert _row_sum(x, 0, 1, x.size) == BIG + 6


@pytest.mark.parametrize("n", [0, 3, 4, 17, 64, 300])
def test_row_sums_of_many_columns_are_each_columns_row_sum(n):
    # the vectorised version, column by column the same bits as `_row_sum`
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 7)) * np.where(rng.random((n, 7)) < 0.1, 1e16, 1.0)
    flat = x.reshape(-1)
    out = np.zeros(7)
    _row_sums(flat, 0, 7, 1, n, 7, out, 0, 1)
    want = [_row_sum(flat, c, 7, n) for c in range(7)]
    assert out.tobytes() == np.array(want).tobytes()


def test_a_contiguous_sum_adds_lane_by_lane_then_the_lanes():
    # 4 whole vectors and one more number: lane 0 sums BIG, 1, 1, 1 (BIG), every
    # other lane 4; the last number starts the total (1), then the lanes in order:
    # 1 + BIG is BIG, then 4 per remaining lane is kept.
    lanes = SUM_VECTOR_BYTES // 8
    x = np.array([BIG] + [1.0] * (4 * lanes))
    assert cascade_sum(x, (0,)) == BIG + 4 * (lanes - 1)
    # the sum starts from +0.0, as PyTorch's does: -0.0 sums to +0.0
    assert np.copysign(1.0, cascade_sum(np.array([-0.0, -0.0]), (0,))) == 1.0
