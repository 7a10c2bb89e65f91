"""One training step of a 256x64 -> 128 -> 10 MLP with ReLU and MSE loss: forward,
backward, SGD update. The same code runs under minigrad and PyTorch; numpy gets a
hand-written forward and backward (the floor a library could reach)."""

from __future__ import annotations

import numpy as np

from ._common import Row, best_times, try_import_torch

BATCH, IN, HIDDEN, OUT = 256, 64, 128, 10
LR = 0.01


def make_data(dtype):
    rng = np.random.default_rng(0)
    return {
        "x": rng.standard_normal((BATCH, IN)).astype(dtype),
        "y": rng.standard_normal((BATCH, OUT)).astype(dtype),
        "w1": (rng.standard_normal((HIDDEN, IN)) * 0.1).astype(dtype),
        "b1": np.zeros(HIDDEN, dtype),
        "w2": (rng.standard_normal((OUT, HIDDEN)) * 0.1).astype(dtype),
        "b2": np.zeros(OUT, dtype),
    }


def library_step(lib, data):
    """Build the model's tensors and return a function doing one training step.

    The model is written with plain tensor ops (no `nn.functional`), so the same code
    runs under `import minigrad as torch` and real PyTorch, op for op."""
    x, y = lib.tensor(data["x"]), lib.tensor(data["y"])
    params = [lib.tensor(data[k], requires_grad=True) for k in ("w1", "b1", "w2", "b2")]
    w1, b1, w2, b2 = params
    opt = lib.optim.SGD(params, lr=LR)

    def step():
        opt.zero_grad()
        hidden = (x @ w1.t() + b1).relu()
        diff = hidden @ w2.t() + b2 - y
        loss = (diff * diff).mean()
        loss.backward()
        opt.step()
        return loss

    return step


def numpy_step(data):
    """The same step by hand, updating copies of the weights in place."""
    x, y = data["x"], data["y"]
    w1, b1, w2, b2 = (data[k].copy() for k in ("w1", "b1", "w2", "b2"))

    def step():
        pre = x @ w1.T + b1
        hidden = np.maximum(pre, 0)
        out = hidden @ w2.T + b2
        diff = out - y
        loss = (diff * diff).mean()
        g_out = diff * (2.0 / diff.size)
        g_w2 = g_out.T @ hidden
        g_b2 = g_out.sum(axis=0)
        g_hidden = g_out @ w2
        g_pre = g_hidden * (pre > 0)
        g_w1 = g_pre.T @ x
        g_b1 = g_pre.sum(axis=0)
        for w, g in ((w1, g_w1), (b1, g_b1), (w2, g_w2), (b2, g_b2)):
            w -= LR * g
        return loss

    return step


def run(quick: bool) -> list[Row]:
    import minigrad

    repeat = 5 if quick else 40
    torch = try_import_torch()
    rows = []
    for dtype in (np.float64, np.float32):
        data = make_data(dtype)
        steps = {"minigrad": library_step(minigrad, data)}
        if torch is not None:
            steps["torch"] = library_step(torch, data)
        steps["numpy"] = numpy_step(data)
        times = {name: t * 1e3 for name, t in best_times(steps, repeat).items()}
        rows.append(Row("MLP training step", f"256x64 -> 128 -> 10, {np.dtype(dtype).name}",
                        "ms", times))
    return rows
