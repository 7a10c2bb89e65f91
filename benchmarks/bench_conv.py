"""A 2-D convolution's forward and backward (input, weight and bias gradients): a batch
of 32 images, 3 -> 16 channels, 32x32, 3x3 kernel, padding 1, float32. The same code
runs under minigrad and PyTorch; numpy gets a hand-written version over sliding
windows (`tensordot`), the floor a library without its own kernels could reach."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ._common import Row, best_times, try_import_torch

BATCH, IN, OUT, SIZE, K = 32, 3, 16, 32, 3


def make_data(dtype):
    rng = np.random.default_rng(0)
    return {
        "x": rng.standard_normal((BATCH, IN, SIZE, SIZE)).astype(dtype),
        "w": (rng.standard_normal((OUT, IN, K, K)) * 0.2).astype(dtype),
        "b": rng.standard_normal(OUT).astype(dtype),
        "g": rng.standard_normal((BATCH, OUT, SIZE, SIZE)).astype(dtype),
    }


def library_step(lib, data):
    """Forward and backward of `conv2d` with a fixed output gradient."""
    x, w, b = (lib.tensor(data[k], requires_grad=True) for k in ("x", "w", "b"))
    g = lib.tensor(data["g"])

    def step():
        x.grad = w.grad = b.grad = None
        out = lib.nn.functional.conv2d(x, w, b, padding=1)
        out.backward(g)
        return out

    return step


def numpy_step(data):
    """The same by hand: the windows of the padded input times the weight; the input's
    gradient the windows of the padded output gradient times the flipped weight."""
    x, w, b, g = data["x"], data["w"], data["b"], data["g"]
    pad = K // 2

    def step():
        windows = sliding_window_view(np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))),
                                      (K, K), axis=(2, 3))
        out = np.tensordot(windows, w, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2) \
            + b[:, None, None]
        gw = np.tensordot(g, windows, axes=([0, 2, 3], [0, 2, 3]))
        g_windows = sliding_window_view(
            np.pad(g, ((0, 0), (0, 0), (K - 1 - pad,) * 2, (K - 1 - pad,) * 2)), (K, K),
            axis=(2, 3))
        gx = np.tensordot(g_windows, w[:, :, ::-1, ::-1], axes=([1, 4, 5], [0, 2, 3]))
        gb = g.sum(axis=(0, 2, 3))
        return out, gx.transpose(0, 3, 1, 2), gw, gb

    return step


def run(quick: bool) -> list[Row]:
    import minigrad

    repeat = 5 if quick else 20
    torch = try_import_torch()
    data = make_data(np.float32)
    steps = {"minigrad": library_step(minigrad, data)}
    if torch is not None:
        steps["torch"] = library_step(torch, data)
    steps["numpy"] = numpy_step(data)
    times = {name: t * 1e3 for name, t in best_times(steps, repeat).items()}
    return [Row("convolution", f"conv2d fwd+bwd, {BATCH}x{IN}x{SIZE}x{SIZE} -> {OUT}, 3x3, "
                "float32", "ms", times)]
