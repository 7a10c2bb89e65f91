"""Timing helpers and the row format shared by the benchmarks."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Row:
    benchmark: str
    case: str
    unit: str  # "us", "ms", "s" or "MB"
    times: dict[str, float] = field(default_factory=dict)
    note: str = ""

    def ratio(self, other: str) -> float | None:
        if "minigrad" in self.times and other in self.times and self.times[other] > 0:
            return self.times["minigrad"] / self.times[other]
        return None


SCALE = {"s": 1.0, "ms": 1e3, "us": 1e6}


def best_time(fn: Callable[[], object], repeat: int, number: int = 1) -> float:
    """The median of the fastest half of `repeat` timings of `number` calls, in seconds
    per call: robust against a busy machine without hiding a slow library."""
    fn()  # warm-up: jit compilation, caches, allocator
    gc.collect()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    samples.sort()
    return statistics.median(samples[: max(1, len(samples) // 2)])


def best_times(fns: dict[str, Callable[[], object]], repeat: int, per_turn: int = 5,
               warm: int = 3) -> dict[str, float]:
    """`best_time` for several libraries doing the same work, timed in turns: each
    library in turn makes `warm` untimed calls (its data and code back in the caches,
    as in a real training loop) and then `per_turn` timed ones, until each has
    `repeat` timings. On a shared machine whose load changes from one second to the
    next, every library then sees the same load, so the ratios are steadier than
    when each library runs all its repeats in one block. (With fewer warm-up calls
    per turn, a library is slowed by the caches the previous one left behind.)"""
    for fn in fns.values():
        fn()  # warm-up: jit compilation, caches, allocator
    gc.collect()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(max(1, -(-repeat // per_turn))):
        for name, fn in fns.items():
            for _ in range(warm):
                fn()
            for _ in range(per_turn):
                start = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - start)
    result = {}
    for name, values in samples.items():
        values.sort()
        result[name] = statistics.median(values[: max(1, len(values) // 2)])
    return result


def try_import_torch():
    """Real PyTorch with one thread, or None."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch
