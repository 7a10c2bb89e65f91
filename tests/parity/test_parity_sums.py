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
from minigrad.arrays.summing import GRAIN_SIZE
from minigrad.kernels.sums import RUN

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
    """Lengths around the boundaries of PyTorch's kernel (vectors, cascade levels, the
    grain size where it splits a sum between threads) and minigrad's (runs of RUN)."""
    sizes = set(range(0, 40))
    for edge in (16, 64, 256, 1024, 4 * 4, 4 * 8, 4 * 16, 16 * 16, 16 * 64, GRAIN_SIZE,
                 RUN, 2 * RUN):
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
    # (a sum starts from +0.0, as PyTorch's does: -0.0 sums to +0.0)
    assert not np.signbit(minigrad.tensor([-0.0, -0.0], dtype=minigrad.float64).sum().item())


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
