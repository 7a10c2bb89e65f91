"""Memory: the peak of one MLP training step, and whether a long training-style loop
keeps memory flat (graphs freed by reference counting, garbage collector off)."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np

from ._common import Row, try_import_torch
from .bench_mlp import library_step, make_data, numpy_step


def _peak_mb(step) -> float:
    step()  # warm-up allocations (optimizer state, caches)
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return (peak - base) / 2**20


WARM_UP = 2_000  # numpy fills its small internal caches during the first steps


def _loop_growth_mb(lib, iterations: int) -> float:
    """Memory held after `iterations` more small training steps than after the warm-up."""
    w = lib.nn.Parameter(lib.tensor(np.linspace(-1, 1, 16)))
    x = lib.tensor(np.linspace(0, 1, 16))
    opt = lib.optim.SGD([w], lr=0.01)
    def step():
        opt.zero_grad()
        loss = ((w * x).tanh() - 0.5).pow(2).sum()
        loss.backward()
        opt.step()

    gc.disable()
    try:
        for _ in range(WARM_UP):
            step()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(iterations):
            step()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    finally:
        gc.enable()
    return (after - before) / 2**20


def run(quick: bool) -> list[Row]:
    import minigrad

    data = make_data(np.float64)
    peak = {"minigrad": _peak_mb(library_step(minigrad, data))}
    torch = try_import_torch()
    peak["numpy"] = _peak_mb(numpy_step(data))
    rows = [Row("memory", "MLP step peak (Python-visible allocations), float64", "MB", peak,
                note="torch allocates outside tracemalloc's view, so it is not listed")]
    iterations = 1_000 if quick else 10_000
    growth = {"minigrad": _loop_growth_mb(minigrad, iterations)}
    rows.append(Row("memory", f"growth over {iterations:,} training steps, gc disabled", "MB",
                    growth, note="flat memory = 0.00"))
    _ = torch
    return rows
