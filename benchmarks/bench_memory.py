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


def checkpointed_step(lib, data, checkpointed: bool):
    """`bench_mlp.library_step`'s MLP step, its two layers optionally run under
    `utils.checkpoint.checkpoint` (non-reentrant): the same code for both libraries."""
    x, y = lib.tensor(data["x"]), lib.tensor(data["y"])
    params = [lib.tensor(data[k], requires_grad=True) for k in ("w1", "b1", "w2", "b2")]
    w1, b1, w2, b2 = params
    opt = lib.optim.SGD(params, lr=0.01)

    def layers(inp):
        hidden = (inp @ w1.t() + b1).relu()
        return hidden @ w2.t() + b2

    def step():
        opt.zero_grad()
        if checkpointed:
            out = lib.utils.checkpoint.checkpoint(layers, x, use_reentrant=False)
        else:
            out = layers(x)
        diff = out - y
        loss = (diff * diff).mean()
        loss.backward()
        opt.step()
        return loss

    return step


def saved_mb(lib, step) -> float:
    """MB of tensor data the step's graph keeps for backward: what saved-tensor hooks
    see packed (each tensor once). Under checkpointing the checkpoint's own hooks
    take the layers' tensors, so only what the graph really keeps is counted."""
    seen: dict = {}

    def pack(t):
        seen[id(t)] = t.numel() * t.element_size()
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        step()
    return sum(seen.values()) / 2**20


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
    for checkpointed in (False, True):
        kept = {"minigrad": saved_mb(minigrad, checkpointed_step(minigrad, data, checkpointed))}
        if torch is not None:
            kept["torch"] = saved_mb(torch, checkpointed_step(torch, data, checkpointed))
        what = "checkpointed (non-reentrant)" if checkpointed else "plain"
        rows.append(Row("memory", f"MLP step, tensors saved for backward, {what}", "MB", kept,
                        note="counted by saved-tensor hooks"))
    peak_ck = {"minigrad": _peak_mb(checkpointed_step(minigrad, data, True))}
    rows.append(Row("memory", "MLP step peak, checkpointed (non-reentrant), float64", "MB",
                    peak_ck, note="recomputation included"))
    iterations = 1_000 if quick else 10_000
    growth = {"minigrad": _loop_growth_mb(minigrad, iterations)}
    rows.append(Row("memory", f"growth over {iterations:,} training steps, gc disabled", "MB",
                    growth, note="flat memory = 0.00"))
    _ = torch
    return rows
