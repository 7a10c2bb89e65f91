"""float64 and float32 softmax, log_softmax, cross_entropy,
binary_cross_entropy_with_logits and sigmoid against PyTorch, forward and backward, on
many values: along the last and other dims, rows of every length around the vector
widths, large and threaded shapes, edge values (huge, tiny, subnormal, infinite, NaN),
and rows whose log covers millions of values.
PyTorch computes these with a vector math library (SLEEF) whose last bit depends on the
processor and the vector width, and sums rows in an order of its choosing, so they are
compared as the float policy says (`float_policy.py`): values of one vector-math op
(sigmoid, exp) within VECTOR_MATH, softmax's values, which divide by the row's running
sum, within `running_sum` of the row's length, values that subtract or sum (log_softmax,
losses, every gradient) within SUM of the array's largest magnitude; infinities and
NaNs where PyTorch has them. `test_parity_other_capabilities.py` runs this file again
under each lower ATEN_CPU_CAPABILITY.
"""

from __future__ import annotations

import numpy as np
import pytest
from float_policy import SUM, VECTOR_MATH, Tolerance, outside, running_sum

import minigrad

F = minigrad.nn.functional
DTYPES = ["float64", "float32"]


def _same(mine, theirs, how: Tolerance = SUM, scale=None) -> bool:
    """The same shape and dtype, and values within `how` of PyTorch's (by default SUM
    of the array's largest magnitude: a value that subtracts or sums)."""
    a, b = np.asarray(mine), np.asarray(theirs)
    return a.shape == b.shape and a.dtype == b.dtype and \
        not outside(a, b, how, scale).any()


SHAPES = ([(1, n) for n in range(1, 71)] + [(3, n) for n in (1, 4, 7, 8, 9, 16, 17, 33)]
          + [(2, n, m) for n in (1, 2, 5, 9) for m in (1, 3, 4, 7, 8, 9, 15, 16, 17, 24, 33)]
          + [(9, 1), (5000, 7), (40, 30, 31), (3, 40, 900), (2, 3000, 5), (1, 70000)])


def _both(torch, shape, dim, scale, seed, log, dtype="float64"):
    rng = np.random.default_rng(seed)
    x, g = rng.normal(0.0, scale, shape), rng.normal(0.0, 1.0, shape)
    x, g = x.astype(dtype), g.astype(dtype)
    name = "log_softmax" if log else "softmax"
    xt = torch.tensor(x, requires_grad=True)
    yt = getattr(torch, name)(xt, dim)
    yt.backward(torch.tensor(g))
    xm = minigrad.tensor(x, requires_grad=True)
    ym = getattr(minigrad, name)(xm, dim)
    ym.backward(minigrad.tensor(g))
    return (ym.detach().numpy(), yt.detach().numpy()), (xm.grad.numpy(), xt.grad.numpy()), g


def _grad_scale(y, g, dim, log):
    """The magnitudes of the terms of the gradient from the output y (PyTorch's) and the
    output's gradient g along `dim`, as the float policy asks tolerances to be scaled:
    softmax's y * (g - sum(g * y)): |y| * (|g| + sum|g * y|); log_softmax's
    g - exp(y) * sum(g): |g| + exp(y) * sum|g| * (1 + |y|), the last factor because
    exp turns y's absolute rounding error (some units of |y|) into a relative one."""
    y, g = np.asarray(y, np.float64), np.asarray(g, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        if not log:
            return np.abs(y) * (np.abs(g) + np.abs(g * y).sum(axis=dim, keepdims=True))
        return np.abs(g) + np.exp(y) * np.abs(g).sum(axis=dim, keepdims=True) * (1 + np.abs(y))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("scale", [1.0, 30.0, 1e-3])
def test_softmax_bits_every_dim(torch, log, scale, dtype):
    bad = []
    for k, shape in enumerate(SHAPES):
        for dim in range(len(shape)):
            (y, yt), (gx, gt), g = _both(torch, shape, dim, scale, k, log, dtype)
            how = running_sum(shape[dim])
            if not (_same(y, yt, SUM if log else how)
                    and _same(gx, gt, how, _grad_scale(yt, g, dim, log))):
                bad.append((shape, dim))
    assert not bad, bad[:10]


EDGES = [0.0, -0.0, 1e-320, -1e-310, 1e-300, 700.0, -700.0, 745.0, -745.0, 1e300, -1e300,
         float("inf"), float("-inf"), float("nan"), 1.0, 2.0]


EDGES32 = [0.0, -0.0, 1e-45, -1e-40, 1e-30, 80.0, -80.0, 88.8, -88.0, 104.0, -104.0, 3e38,
           -3e38, float("inf"), float("-inf"), float("nan"), 1.0, 2.0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_softmax_bits_edge_values(torch, log, dtype):
    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 5, 9, 17, 33):
        x = rng.choice(EDGES if dtype == "float64" else EDGES32, size=(200, n)).astype(dtype)
        g = rng.normal(0, 1, x.shape).astype(dtype)
        for dim in (0, 1):
            name = "log_softmax" if log else "softmax"
            xt, xm = torch.tensor(x, requires_grad=True), minigrad.tensor(x, requires_grad=True)
            yt, ym = getattr(torch, name)(xt, dim), getattr(minigrad, name)(xm, dim)
            yt.backward(torch.tensor(g))
            ym.backward(minigrad.tensor(g))
            how = running_sum(n if dim else 200)
            assert _same(ym.detach().numpy(), yt.detach().numpy(), SUM if log else how), (n, dim)
            assert _same(xm.grad.numpy(), xt.grad.numpy(), how,
                         _grad_scale(yt.detach().numpy(), g, dim, log)), (n, dim)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_methods_and_modules_bits(torch, dtype):
    x = np.random.default_rng(2).normal(0, 3, (6, 13)).astype(dtype)
    xt, xm = torch.tensor(x), minigrad.tensor(x)
    pairs = [(xm.softmax(1), xt.softmax(1)), (xm.log_softmax(0), xt.log_softmax(0)),
             (F.softmax(xm, dim=-1), torch.nn.functional.softmax(xt, dim=-1)),
             (F.log_softmax(xm, dim=1), torch.nn.functional.log_softmax(xt, dim=1)),
             (minigrad.nn.Softmax(dim=0)(xm), torch.nn.Softmax(dim=0)(xt)),
             (minigrad.nn.LogSoftmax(dim=1)(xm), torch.nn.LogSoftmax(dim=1)(xt))]
    for mine, theirs in pairs:
        assert _same(mine.detach().numpy(), theirs.detach().numpy(), SUM)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["indices", "weight", "smoothing", "probabilities",
                                  "probabilities-smoothing", "sum", "none", "ignore",
                                  "weight-smoothing"])
def test_cross_entropy_bits(torch, case, dtype):
    rng = np.random.default_rng(len(case))
    for batch, classes in ((1, 3), (7, 5), (64, 10), (33, 17), (300, 9), (128, 100)):
        shape = (batch, classes)
        x = rng.normal(0, 4, shape).astype(dtype)
        if case.startswith("probabilities"):
            p = rng.uniform(0, 1, shape)
            target = (p / p.sum(axis=1, keepdims=True)).astype(dtype)
        else:
            target = rng.integers(0, classes, batch)
        kwargs = {"label_smoothing": 0.1} if "smoothing" in case else {}
        if "weight" in case:
            kwargs["weight"] = rng.uniform(0.5, 2, classes).astype(dtype)
        if case in ("sum", "none"):
            kwargs["reduction"] = case
        if case == "ignore":
            kwargs["ignore_index"] = 1
        g = rng.normal(0, 1, batch).astype(dtype) if case == "none" else None
        results = []
        for lib, fn in ((torch, torch.nn.functional.cross_entropy), (minigrad, F.cross_entropy)):
            xx = lib.tensor(x, requires_grad=True)
            kw = {k: lib.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
            loss = fn(xx, lib.tensor(target), **kw)
            loss.backward(None if g is None else lib.tensor(g))
            results.append((loss.detach().numpy(), xx.grad.numpy()))
        (lt, gt), (lm, gm) = results
        # The loss is -log_softmax's value (terms of |x| at most, and the log of the
        # row's sum) weighted; its gradient log_softmax's, g - exp(y) * sum(g), where the
        # row's g (the gradient of the loss by log_softmax's output) adds up to at most
        # `row`: as `_grad_scale` scales it, with |g| <= row.
        y = torch.log_softmax(torch.tensor(x), 1).numpy().astype(np.float64)
        w = kwargs.get("weight", np.ones(classes))
        spread = float(np.abs(y).max()) + np.abs(x).max() + 1
        if case == "none":
            row = (np.abs(g) * w.max())[:, None]
        elif case == "sum" or case.startswith("probabilities"):
            row = w.max() / (1 if case == "sum" else batch)
        else:  # (a mean over the rows' weights)
            kept = target != kwargs.get("ignore_index", -100)
            row = w.max() / max(w[target[kept]].sum(), w.min())
        assert _same(lm, lt, SUM, scale=spread * np.max(row)), (case, batch, classes)
        assert _same(gm, gt, running_sum(classes),
                     scale=row * (1 + np.exp(y) * (1 + np.abs(y)))), (case, batch, classes)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("extra", ["plain", "pos_weight", "weight", "both"])
def test_bce_with_logits_bits(torch, reduction, extra, dtype):
    rng = np.random.default_rng(3)
    for n in list(range(1, 40)) + [100, 1000, 40000, 70001]:
        x, t = rng.normal(0, 5, (n,)).astype(dtype), rng.uniform(0, 1, (n,)).astype(dtype)
        pw = rng.uniform(0.5, 2, (n,)).astype(dtype)
        w = rng.uniform(0.5, 2, (n,)).astype(dtype)
        g = rng.normal(0, 1, (n,) if reduction == "none" else ()).astype(dtype)
        results = []
        for lib in (torch, minigrad):
            xx, tt = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
            kw = {"reduction": reduction}
            if extra in ("pos_weight", "both"):
                kw["pos_weight"] = lib.tensor(pw)
            if extra in ("weight", "both"):
                kw["weight"] = lib.tensor(w)
            loss = lib.nn.functional.binary_cross_entropy_with_logits(xx, tt, **kw)
            loss.backward(lib.tensor(g))
            results.append((loss.detach().numpy(), xx.grad.numpy(), tt.grad.numpy()))
        for theirs, mine in zip(*results):
            assert _same(mine, theirs), (n, reduction, extra)


def _log_sigmoid_all(x):
    """minigrad's log_sigmoid of x and its buffer, exp(-|x|)."""
    from minigrad.ops.loss import log_sigmoid_and_buffer

    return log_sigmoid_and_buffer(x)


def _many_values() -> np.ndarray:
    rng = np.random.default_rng(0)
    n = 300_000
    return np.concatenate([
        rng.uniform(-750, 710, n), rng.normal(0, 3, n), rng.normal(0, 1e-8, n),
        np.exp(rng.uniform(-745, 709, n)), -np.exp(rng.uniform(-745, 709, n)),
        np.array(EDGES + [5e-324, -5e-324, 709.78, 709.79, -708.4, -1000.0, -1000.1, 1e307,
                          2e307, 1.7e308, -1 + 2.0**-53, 2.0**-1022, 2.0**-1023])])


def test_log_sigmoid_and_its_buffer_against_torch(torch):
    """log_sigmoid keeps exp(-|x|) as its buffer (PyTorch: SLEEF's exp, or the C
    library's in its portable kernels) and subtracts its log1p: both compared with
    PyTorch's on 1.5 million values."""
    x = _many_values()
    out_t, buffer_t = torch.ops.aten.log_sigmoid_forward(torch.tensor(x))
    out, buffer = _log_sigmoid_all(x)
    assert _same(buffer, buffer_t.numpy(), VECTOR_MATH)
    # (-max(-x, 0) - log1p(exp(-|x|)): terms of |x| at most, and log 2)
    assert _same(out, out_t.numpy(), SUM, scale=np.abs(x) + 1)


def test_log_through_log_softmax(torch):
    """The log shows in log_softmax along the last dim: x - max - log(sum); a row
    [0, a] sums to 1 + exp(a - max), so many sums cover log's reduction well."""
    rng = np.random.default_rng(4)
    x = np.stack([np.zeros(200_000), rng.uniform(-40, 40, 200_000)], axis=1)
    mine = minigrad.log_softmax(minigrad.tensor(x), 1).numpy()
    # (x - max - log(sum): terms of |x| at most, and log 2)
    assert _same(mine, torch.log_softmax(torch.tensor(x), 1).numpy(), SUM,
                 scale=np.abs(x) + 1)


# -- float32 ------------------------------------------------------------------------------


def _many_floats() -> np.ndarray:
    rng = np.random.default_rng(0)
    n = 300_000
    return np.concatenate([
        rng.uniform(-110, 90, n), rng.normal(0, 3, n), rng.normal(0, 1e-4, n),
        np.exp(rng.uniform(-103, 88, n)), -np.exp(rng.uniform(-103, 88, n)),
        np.array(EDGES32 + [1.4e-45, -1.4e-45, 88.72, 88.73, -87.3, -103.9, -104.1, 1e38,
                            2e38, 3.4e38, 2.0**-126, 2.0**-127])]).astype(np.float32)


def test_float_log_sigmoid_and_its_buffer_against_torch(torch):
    """As for float64, in float32."""
    x = _many_floats()
    out_t, buffer_t = torch.ops.aten.log_sigmoid_forward(torch.tensor(x))
    out, buffer = _log_sigmoid_all(x)
    assert _same(buffer, buffer_t.numpy(), VECTOR_MATH)
    assert _same(out, out_t.numpy(), SUM, scale=np.abs(x) + 1)


def test_float_log_through_log_softmax(torch):
    """float32's log, seen through float32 log_softmax of rows [0, a]."""
    rng = np.random.default_rng(4)
    a = rng.uniform(-30, 30, 300_000)
    x = np.stack([np.zeros_like(a), a], axis=1).astype(np.float32)
    mine = minigrad.log_softmax(minigrad.tensor(x), 1).numpy()
    # (x - max - log(sum): terms of |x| at most, and log 2)
    assert _same(mine, torch.log_softmax(torch.tensor(x), 1).numpy(), SUM,
                 scale=np.abs(x) + 1)


SIGMOID_SIZES = [*range(1, 70), 4095, 4096, 4097, 32768, 32769, 70001, 300001]


@pytest.mark.parametrize("dtype", DTYPES)
def test_sigmoid_bits(torch, dtype):
    """`sigmoid` (and `sigmoid_`, and a transposed input) is PyTorch's within
    VECTOR_MATH (PyTorch: SLEEF's exp a vector at a time, the C library's for the last
    values of each thread's share), whatever the length; its gradient y * (1 - y)
    within SUM (1 - y cancels)."""
    rng = np.random.default_rng(7)
    bad = []
    for n in SIGMOID_SIZES:
        x = (rng.standard_normal(n) * 12).astype(dtype)
        x[: min(n, 6)] = np.array([0.0, -0.0, 100.0, -100.0, np.inf, np.nan])[: min(n, 6)]
        xm, xt = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ym, yt = xm.sigmoid(), xt.sigmoid()
        ym.backward(minigrad.ones_like(ym))
        yt.backward(torch.ones_like(yt))
        if not (_same(ym.detach().numpy(), yt.detach().numpy(), VECTOR_MATH)
                and _same(xm.grad.numpy(), xt.grad.numpy())):
            bad.append(n)
    m = (rng.standard_normal((37, 70)) * 5).astype(dtype)
    inplace = minigrad.tensor(m)
    inplace.sigmoid_()
    if not _same(inplace.numpy(), torch.tensor(m).sigmoid().numpy(), VECTOR_MATH):
        bad.append("sigmoid_")
    if not _same(minigrad.tensor(m).t().sigmoid().numpy(), torch.tensor(m).t().sigmoid().numpy(),
                 VECTOR_MATH):
        bad.append("transposed")
    assert not bad, bad
