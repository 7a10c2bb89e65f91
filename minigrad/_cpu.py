"""Which of PyTorch's CPU kernels this machine runs, for the few results whose last bits
depend on it.

PyTorch compiles its CPU kernels several times (portable, AVX2, AVX512) and picks one
set at start-up from the CPU's features, or from the ATEN_CPU_CAPABILITY environment
variable. Its AVX2 and AVX512 sets are compiled so that `a * b + c` is one fused
multiply-add (rounded once); the portable set rounds twice. minigrad reads the same
features and the same variable, so it rounds as the PyTorch on this machine does.
"""

from __future__ import annotations

import os


def cpu_capability() -> str:
    """The kernels PyTorch would run on this CPU: "avx512", "avx2" or "default" (its
    choice by the CPU's features, or the ATEN_CPU_CAPABILITY environment variable)."""
    try:
        import llvmlite.binding as llvm

        features = llvm.get_host_cpu_features()
    except Exception:  # noqa: BLE001 - no way to ask: the portable kernels
        features = {}
    has_avx2 = bool(features.get("avx2")) and bool(features.get("fma"))
    has_avx512 = has_avx2 and all(
        features.get(f) for f in ("avx512f", "avx512bw", "avx512vl", "avx512dq"))
    best = "avx512" if has_avx512 else "avx2" if has_avx2 else "default"
    forced = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    order = ("default", "avx2", "avx512")
    if forced in order and order.index(forced) <= order.index(best):
        return forced
    return best


CAPABILITY = cpu_capability()
FUSED_MULTIPLY_ADD = CAPABILITY != "default"
