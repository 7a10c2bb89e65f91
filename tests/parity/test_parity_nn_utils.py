"""nn.Identity, nn.Flatten, gradient clipping and StepLR against PyTorch: values,
node names, `.grad` versions, learning rates and warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from float_policy import CHAIN, SUM, assert_floats
from parity_harness import check, translate

import minigrad


def _layers(lib, which: str):
    x = lib.tensor([[[1.0, -2.0], [3.0, 0.5]], [[0.25, 4.0], [-1.0, 2.0]]],
                   dtype=lib.float64, requires_grad=True)
    layer = {"identity": lib.nn.Identity(3, unused=True), "flatten": lib.nn.Flatten(),
             "flatten all": lib.nn.Flatten(0, -1), "flatten last": lib.nn.Flatten(-2)}[which]
    y = layer(x)
    (y * y).sum().backward()
    return (repr(layer), y.shape, y.tolist(), y is x, type(y.grad_fn).__name__,
            y._base is x if y is not x else None, x.grad.tolist())


@pytest.mark.parametrize("which", ["identity", "flatten", "flatten all", "flatten last"])
def test_identity_and_flatten_as_in_torch(torch, which):
    assert _layers(minigrad, which) == _layers(torch, which)


def _grads(lib, dtype: str, scale: float):
    rng = np.random.default_rng(5)
    params = [lib.tensor(rng.normal(0, 1, s), dtype=getattr(lib, dtype), requires_grad=True)
              for s in [(3, 4), (4,), (2,)]]
    loss = sum(((p * scale) ** 2).sum() for p in params)
    loss.backward()
    return params


# The norm sums squares in an order of its own in each library (PyTorch's vectorised
# reduction, numpy's pairwise sum): the float policy's SUM. The gradients scaled by it
# inherit that: CHAIN.


@pytest.mark.parametrize("norm_type", [2.0, float("inf"), 1.0])
@pytest.mark.parametrize("scale", [0.1, 10.0])  # below the max norm (coef 1) and above
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_clip_grad_norm_as_in_torch(torch, dtype, scale, norm_type):
    results = []
    for lib in (minigrad, torch):
        params = _grads(lib, dtype, scale)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm=1.5, norm_type=norm_type)
        results.append((total.item(), str(total.dtype).split(".")[1], total.shape,
                        [p.grad.numpy().copy() for p in params],
                        [p.grad._version for p in params]))
    (mt, md, ms, mg, mv), (tt, td, ts, tg, tv) = results
    assert (md, ms, mv) == (td, ts, tv)
    assert_floats(mt, tt, SUM)  # (a norm: a sum of many elements)
    for a, b in zip(mg, tg):
        assert_floats(a, b, CHAIN)


def test_clip_grad_norm_edges_as_in_torch(torch):
    def run(lib):
        empty = lib.nn.utils.clip_grad_norm_([lib.ones(2, requires_grad=True)], 1.0)
        p = lib.tensor([float("inf"), 1.0], requires_grad=True)
        (p * 1).sum().backward()
        p.grad.mul_(p.detach())
        try:
            lib.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
            error = None
        except RuntimeError as e:
            error = translate(str(e))
        return empty.item(), str(empty.dtype).split(".")[1], error

    assert run(minigrad) == run(torch)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_clip_grad_value_as_in_torch(torch, dtype):
    def run(lib):
        params = _grads(lib, dtype, 3.0)
        lib.nn.utils.clip_grad_value_(params, 2)
        return [(p.grad.tolist(), p.grad._version) for p in params]

    assert run(minigrad) == run(torch)


def _schedule(lib, order: str):
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    b = lib.tensor([0.5], requires_grad=True)
    opt = lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(5):
            (w * w).sum().add(b.sum()).backward()
            if order == "scheduler first":
                sched.step()
                opt.step()
            else:
                opt.step()
                sched.step()
            opt.zero_grad()
            seen.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups],
                         w.tolist(), b.tolist(), sched.last_epoch))
    return seen, [(w.category.__name__, str(w.message)) for w in caught], \
        [sorted(g) for g in opt.param_groups]


@pytest.mark.parametrize("order", ["optimizer first", "scheduler first"])
def test_step_lr_as_in_torch(torch, order):
    assert _schedule(minigrad, order) == _schedule(torch, order)


def test_flatten_records_what_torch_records(torch):
    check(torch, lambda c: c.m.nn.Flatten()(c.leaf([[[1.0, 2.0], [3.0, 4.0]]])))
