"""`python -m minigrad.warmup [--again]`: compile the course's kernels once, ahead of
the lessons.

numba compiles a kernel the first time it runs with a new dtype, then loads it from its
cache (see `minigrad.kernels.cache` for where that is). A fresh runtime starts with an
empty cache; this runs small programs that call the kernels the lessons call, in
float32 and float64, forward and backward, on every core (one program a process), with
a progress bar. Run it after installing (`make lab` does), or once when building an
image for many learners (Binder's `postBuild`, a hub image): see the README, "What a
first run costs and why".
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context


def _arithmetic(m, dt) -> None:
    a = m.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], dtype=dt, requires_grad=True)
    b = m.tensor([0.25, -3.0, 2.0], dtype=dt, requires_grad=True)
    y = ((a + b) * a - b / (a + 5.0) + 1.0 - a * 2.0 + a / 3.0 - (1 - a) + a ** 2 + 2 ** a
         + (-a))
    (y.sum() + y.mean() + y.sum(0).sum() + y.mean(1).sum()).backward()
    (a * b).sum(1).pow(2).sum().backward()
    with m.no_grad():
        c = a.detach().clone()
        c.add_(1.0).mul_(2.0).sub_(b).div_(4.0).zero_()
        c.copy_(a).add_(c).mul_(c)


def _unary(m, dt) -> None:
    x = m.tensor([0.5, 1.5, 2.0, 3.0], dtype=dt, requires_grad=True)
    ops = ["exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "sigmoid", "relu",
           "sqrt", "abs", "reciprocal", "sinh", "cosh", "floor", "ceil", "sign", "round"]
    for name in ops:
        y = getattr(x, name)()
        if y.requires_grad:
            y.sum().backward()
    x.clamp(0.6, 2.5).sum().backward()
    # a sum's gradient reaches the op below it as a read-only broadcast array: another
    # kernel signature for each op it meets first
    for f in (lambda: x * 3.0, lambda: x + 1.0, x.sqrt, lambda: x.clamp(min=1e-12),
              lambda: x.clamp(min=1e-12).sqrt(), x.tanh, x.exp, lambda: x * x):
        f().sum().backward()
        f().mean().backward()
    m.atan2(x, x + 1).sum().backward()
    x.norm().backward()
    m.where(x > 1, x, x * 2).sum().backward()


def _reductions_and_views(m, dt) -> None:
    x = m.arange(12, dtype=dt).reshape(3, 4).requires_grad_()
    parts = [x.max(), x.min(), x.max(1)[0].sum(), x.argmax(), x.argmin(), x.t().sum(0).sum(),
             x.unsqueeze(0).sum(), m.stack(x.unbind(0)).sum(), m.cat([x, x]).mean(),
             x[1:, ::2].sum(), x.view(12)[3], x.flatten().split(5)[1].sum(),
             x.std(), x.var(1).sum()]
    sum(parts[1:], parts[0]).backward()
    m.eye(3, dtype=dt).sum()
    m.linspace(0, 1, 5, dtype=dt).sum()


def _layers_and_losses(m, dt) -> None:
    m.manual_seed(0)
    net = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.Tanh(), m.nn.Linear(8, 8), m.nn.ReLU(),
                          m.nn.Sigmoid(), m.nn.Linear(8, 3)).to(dt)
    x = m.randn(5, 4, dtype=dt)
    target = m.tensor([0, 2, 1, 1, 0])
    out = net(x)
    losses = [m.nn.functional.mse_loss(out, m.zeros_like(out)),
              m.nn.functional.cross_entropy(out, target),
              m.nn.functional.binary_cross_entropy_with_logits(out, m.ones_like(out)),
              m.nn.functional.l1_loss(out, m.zeros_like(out)),
              out.softmax(1).sum(), out.log_softmax(0).sum()]
    sum(losses[1:], losses[0]).backward()
    norm = m.nn.Sequential(m.nn.LayerNorm(4), m.nn.BatchNorm1d(4), m.nn.Dropout(0.5)).to(dt)
    norm(x).sum().backward()


def _optimizers(m, dt) -> None:
    for name, kw in [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
                     ("Adam", {}), ("AdamW", {}), ("RMSprop", {})]:
        w = m.nn.Parameter(m.ones(6, dtype=dt))
        opt = getattr(m.optim, name)([w], **kw)
        for _ in range(2):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()


def _random(m, dt) -> None:
    m.manual_seed(0)
    m.randn(20, dtype=dt)
    m.randn(5, dtype=dt)  # (fewer than 16: PyTorch's other sampler)
    m.rand(20, dtype=dt)
    m.randint(0, 10, (20,))
    m.randperm(20)
    m.Generator().manual_seed(1)


PROGRAMS: dict[str, Callable] = {
    "arithmetic": _arithmetic, "unary ops": _unary,
    "reductions and views": _reductions_and_views, "layers and losses": _layers_and_losses,
    "optimizers": _optimizers, "random numbers": _random,
}
TASKS = [(name, dt) for name in PROGRAMS for dt in ("float32", "float64")]


def run_task(task: tuple[str, str]) -> tuple[str, str, float]:
    """Run one program in one dtype (in a worker process); seconds it took."""
    import warnings

    import minigrad

    start = time.perf_counter()
    name, dt = task
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PROGRAMS[name](minigrad, getattr(minigrad, dt))
    return name, dt, time.perf_counter() - start


def _bar(done: int, total: int, label: str, width: int = 30) -> str:
    filled = width * done // total
    return f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<32}"


def _stamp():
    """A file in the cache saying this install's kernels were warmed up: named after the
    kernels' sources and numba's version, so that an update warms them up again."""
    import hashlib

    import numba

    from minigrad.kernels.cache import KERNELS, cache_dir

    digest = hashlib.sha1(numba.__version__.encode())
    for source in sorted(KERNELS.glob("*.py")):
        digest.update(source.read_bytes())
    return cache_dir() / f".warmed-up-{digest.hexdigest()[:16]}"


def main(workers: int | None = None, again: bool = False) -> int:
    """Compile the kernels, `workers` processes at a time (one per core by default);
    nothing to do when this install was warmed up already (unless `again`)."""
    stamp = _stamp()
    if stamp.exists() and not again:
        print(f"minigrad: the kernels are compiled already ({stamp.parent})", file=sys.stderr)
        return 0
    workers = workers or os.cpu_count() or 1
    start = time.perf_counter()
    os.environ["MINIGRAD_COMPILE_NOTICE"] = "off"  # (the workers inherit it: this says it)
    print("minigrad: compiling the course's kernels for this machine (once)",
          file=sys.stderr)
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(run_task, task) for task in TASKS]
        for done, future in enumerate(as_completed(futures), 1):
            name, dt, _ = future.result()
            print(_bar(done, len(TASKS), f"{name}, {dt}"), end="", file=sys.stderr, flush=True)
    try:
        stamp.touch()
    except OSError:  # (a cache folder we may read but not write: nothing to remember)
        pass
    print(f"\nminigrad: done in {time.perf_counter() - start:.0f} s; kernels cached in "
          f"{stamp.parent}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(again="--again" in sys.argv[1:]))
