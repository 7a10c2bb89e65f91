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


def try_import_torch():
    """Real PyTorch with one thread, or None."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch
