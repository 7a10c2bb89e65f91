"""Print which host a test or benchmark run comes from.

Some float32 results of PyTorch (vectorised kernels, BLAS) depend on the processor and
on the instruction set PyTorch picks at run time, so a failure report should say both.
`make test` prints this line first.
"""

from __future__ import annotations

import importlib
import os
import platform


def processor() -> str:
    """The processor's model name (from /proc/cpuinfo on Linux)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def torch_capability() -> str:
    """PyTorch's version and the CPU kernels it chose (AVX2, AVX512, ...), if installed."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return "torch not installed"
    return f"torch {torch.__version__} (CPU capability {torch.backends.cpu.get_cpu_capability()})"


def describe() -> str:
    """One line: processor, cores, Python, numpy and PyTorch with its CPU capability."""
    import numpy

    return (f"host: {processor()}, {os.cpu_count()} cores; python {platform.python_version()}, "
            f"numpy {numpy.__version__}, {torch_capability()}")


if __name__ == "__main__":
    print(describe())
