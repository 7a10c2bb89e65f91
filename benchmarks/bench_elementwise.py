"""Large element-wise work: forward + backward of exp, mul and sum over 10 million
float32 values, where the kernels' loops (not bookkeeping) decide the time."""

from __future__ import annotations

import numpy as np

from ._common import Row, best_times, try_import_torch


def library_step(lib, values):
    x = lib.tensor(values, requires_grad=True)

    def step():
        x.grad = None
        e = x.exp()
        (e * x).sum().backward()
        return x.grad

    return step


def numpy_step(values):
    """The same arithmetic: forward exp, mul, sum; backward through mul and exp."""

    def step():
        e = np.exp(values)
        total = (e * values).sum(dtype=np.float64)
        g_e = values  # d(e * x)/de times the incoming ones
        grad = g_e * e + e  # through exp, plus the direct path d(e * x)/dx = e
        return total, grad

    return step


def run(quick: bool) -> list[Row]:
    import minigrad

    n = 1_000_000 if quick else 10_000_000
    repeat = 3 if quick else 10
    values = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    steps = {"minigrad": library_step(minigrad, values)}
    torch = try_import_torch()
    if torch is not None:
        steps["torch"] = library_step(torch, values)
    steps["numpy"] = numpy_step(values)
    times = {name: t * 1e3 for name, t in best_times(steps, repeat, warm=1).items()}
    return [Row("large element-wise", f"exp, mul, sum fwd+bwd, {n:,} x float32", "ms", times)]
