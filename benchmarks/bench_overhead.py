"""Per-op overhead: forward + backward of a chain of 200 element-wise ops on a
10-element float64 tensor. What dominates here is the Python (or C++) bookkeeping
per op, not arithmetic."""

from __future__ import annotations

import numpy as np

from ._common import Row, best_times, try_import_torch

N_OPS = 200


def chain(lib, x):
    """200 ops alternating *, +, sin, exp-free to keep values bounded, then sum."""
    y = x
    for i in range(N_OPS - 1):
        k = i % 4
        if k == 0:
            y = y * 1.001
        elif k == 1:
            y = y + 0.5
        elif k == 2:
            y = y.sin()
        else:
            y = y - 0.25
    return y.sum()


def numpy_chain(x):
    """The same chain with the backward pass written by hand."""
    values, y = [], x
    for i in range(N_OPS - 1):
        k = i % 4
        if k == 2:
            values.append(y)
            y = np.sin(y)
        elif k == 0:
            y = y * 1.001
        elif k == 1:
            y = y + 0.5
        else:
            y = y - 0.25
    total = y.sum()
    grad = np.ones_like(x)
    for i in reversed(range(N_OPS - 1)):
        k = i % 4
        if k == 0:
            grad = grad * 1.001
        elif k == 2:
            grad = grad * np.cos(values.pop())
    return total, grad


def run(quick: bool) -> list[Row]:
    import minigrad

    repeat = 5 if quick else 30
    data = np.linspace(-1.0, 1.0, 10)

    def step(lib):
        x = lib.tensor(data, requires_grad=True)
        chain(lib, x).backward()
        return x.grad

    steps = {"minigrad": lambda: step(minigrad)}
    torch = try_import_torch()
    if torch is not None:
        steps["torch"] = lambda: step(torch)
    steps["numpy"] = lambda: numpy_chain(data)
    times = {name: t / N_OPS * 1e6 for name, t in best_times(steps, repeat).items()}
    return [Row("per-op overhead", "chain of 200 ops, 10 x float64, fwd+bwd, per op", "us",
                times)]
