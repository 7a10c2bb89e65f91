"""One training step of a classifier: a 256x64 -> 128 -> 10 MLP built from `nn`
(`Linear`, `ReLU`, `Sequential`), `cross_entropy` on class indices and `optim.Adam`,
float32. The same code runs under minigrad and PyTorch (no numpy column: the point is
the library's whole path, modules and optimizer included)."""

from __future__ import annotations

import numpy as np

from ._common import Row, best_times, try_import_torch

BATCH, IN, HIDDEN, CLASSES = 256, 64, 128, 10


def library_step(lib):
    """A model, data and optimizer, and a function doing one training step."""
    lib.manual_seed(0)
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((BATCH, IN)).astype(np.float32))
    labels = lib.tensor(rng.integers(0, CLASSES, BATCH))
    model = lib.nn.Sequential(lib.nn.Linear(IN, HIDDEN), lib.nn.ReLU(),
                              lib.nn.Linear(HIDDEN, CLASSES))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    cross_entropy = lib.nn.functional.cross_entropy

    def step():
        opt.zero_grad()
        loss = cross_entropy(model(x), labels)
        loss.backward()
        opt.step()
        return loss

    return step


def run(quick: bool) -> list[Row]:
    import minigrad

    repeat = 5 if quick else 40
    torch = try_import_torch()
    steps = {"minigrad": library_step(minigrad)}
    if torch is not None:
        steps["torch"] = library_step(torch)
    times = {name: t * 1e3 for name, t in best_times(steps, repeat).items()}
    return [Row("classifier step", "MLP 256x64 -> 128 -> 10, cross_entropy, Adam, float32",
                "ms", times)]
