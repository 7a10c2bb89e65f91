"""Higher-order gradients and checkpointing, timed.

* A Hessian-vector product by double backward: the gradients of an MLP's loss taken
  with `create_graph=True`, then the gradient of their dot product with a fixed
  vector. The same code runs under minigrad and PyTorch; numpy gets Pearlmutter's
  R-operator written by hand (the same product without any graph: the floor a library
  could reach). `run` checks that all three agree before timing them.
* An MLP training step whose layers run under `utils.checkpoint.checkpoint`
  (non-reentrant): the forward keeps nothing, backward runs it again
  (`bench_memory.checkpointed_step`, whose saved memory `bench_memory` counts). No
  numpy column: checkpointing is about a library's graph, and numpy has none.
"""

from __future__ import annotations

import numpy as np

from . import bench_mlp
from ._common import Row, best_times, try_import_torch
from .bench_memory import checkpointed_step

BATCH, IN, HIDDEN = 256, 64, 32


def make_data() -> dict:
    rng = np.random.default_rng(1)
    return {
        "x": rng.standard_normal((BATCH, IN)),
        "y": rng.standard_normal((BATCH, 1)),
        "w1": rng.standard_normal((HIDDEN, IN)) * 0.1,
        "w2": rng.standard_normal((1, HIDDEN)) * 0.1,
        "v1": rng.standard_normal((HIDDEN, IN)),  # the vector the Hessian multiplies
        "v2": rng.standard_normal((1, HIDDEN)),
    }


def library_hvp(lib, data):
    """H v for the loss mean((tanh(x w1^T) w2^T - y)^2) as a function of (w1, w2)."""
    x, y, v1, v2 = (lib.tensor(data[k]) for k in ("x", "y", "v1", "v2"))
    w1, w2 = (lib.tensor(data[k], requires_grad=True) for k in ("w1", "w2"))

    def hvp():
        diff = (x @ w1.t()).tanh() @ w2.t() - y
        loss = (diff * diff).mean()
        g1, g2 = lib.autograd.grad(loss, (w1, w2), create_graph=True)
        return lib.autograd.grad((g1 * v1).sum() + (g2 * v2).sum(), (w1, w2))

    return hvp


def numpy_hvp(data):
    """The same product by hand: the backward pass, and its derivative in the
    direction (v1, v2) (the `r_` arrays) carried alongside."""
    x, y, w1, w2, v1, v2 = (data[k] for k in ("x", "y", "w1", "w2", "v1", "v2"))

    def hvp():
        h = np.tanh(x @ w1.T)
        slope = 1 - h * h
        diff = h @ w2.T - y
        r_h = slope * (x @ v1.T)
        r_diff = r_h @ w2.T + h @ v2.T
        g_out = diff * (2.0 / diff.size)
        r_g_out = r_diff * (2.0 / diff.size)
        g_h = g_out @ w2
        r_g_h = r_g_out @ w2 + g_out @ v2
        r_g_pre = r_g_h * slope - g_h * 2 * h * r_h
        return r_g_pre.T @ x, r_g_out.T @ h + g_out.T @ r_h

    return hvp


def _same_products(fns: dict) -> None:
    """Every implementation computes the same H v (a benchmark of a wrong product
    would mean nothing)."""
    results = {name: [np.asarray(r) for r in fn()] for name, fn in fns.items()}
    expected = results["numpy"]
    for name, got in results.items():
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=name)


def run(quick: bool) -> list[Row]:
    import minigrad

    repeat = 5 if quick else 40
    torch = try_import_torch()
    libs = {"minigrad": minigrad} | ({"torch": torch} if torch is not None else {})

    data = make_data()
    hvps = {name: library_hvp(lib, data) for name, lib in libs.items()}
    hvps["numpy"] = numpy_hvp(data)
    _same_products(hvps)
    hvp_times = {name: t * 1e3 for name, t in best_times(hvps, repeat).items()}

    mlp = bench_mlp.make_data(np.float64)
    steps = {name: checkpointed_step(lib, mlp, checkpointed=True) for name, lib in libs.items()}
    step_times = {name: t * 1e3 for name, t in best_times(steps, repeat).items()}
    return [
        Row("higher-order", f"Hessian-vector product, MLP {BATCH}x{IN} -> {HIDDEN} -> 1 tanh, "
            "MSE, float64", "ms", hvp_times, note="double backward; numpy: by hand"),
        Row("checkpointing", "MLP training step 256x64 -> 128 -> 10, float64", "ms", step_times,
            note="utils.checkpoint, non-reentrant"),
    ]
