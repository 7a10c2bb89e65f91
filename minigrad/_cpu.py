"""Which of PyTorch's CPU kernels this machine runs, and how many threads it uses, for
the few results whose last bits depend on them.

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


# The width of the SIMD vectors PyTorch's sum kernel adds with: 32 bytes on every x86
# machine. Its AVX512 vectors are 64 bytes, but a kernel runs them only when registered
# with ALSO_REGISTER_AVX512_DISPATCH; the sum kernel is registered with plain
# REGISTER_DISPATCH, whose AVX512 slot is left empty, so AVX512 machines run its AVX2
# build (the portable build's vectors are 32 bytes too).
SUM_VECTOR_BYTES = 32


def default_num_threads() -> int:
    """The number of threads PyTorch's CPU ops use unless told otherwise
    (`torch.get_num_threads()`): OMP_NUM_THREADS, or MKL_NUM_THREADS, when set to a
    positive number; else one per physical core (a core's hyper-threads count once)."""
    threads = 0
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            threads = int(value)
    return threads or _physical_cores() or os.cpu_count() or 1


def _physical_cores() -> int:
    """Distinct (package, core) pairs in /proc/cpuinfo; 0 where it cannot be read."""
    try:
        with open("/proc/cpuinfo") as info:
            text = info.read()
    except OSError:
        return 0
    cores = set()
    package = core = None
    for line in text.splitlines() + [""]:
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "physical id":
            package = value.strip()
        elif key == "core id":
            core = value.strip()
        elif not key:  # a blank line ends one processor's block
            if core is not None:
                cores.add((package, core))
            package = core = None
    return len(cores)


THREADS = default_num_threads()
