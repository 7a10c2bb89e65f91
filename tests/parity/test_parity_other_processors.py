"""A few parity and kernel tests, run again as if on another processor.

The last bits of a float result can depend on the machine: numpy picks its SIMD loops
(exp, tanh, sums on long arrays) by the CPU's features, OpenBLAS its matrix kernels
(and so the order it adds in), MKL (PyTorch's BLAS) its code path, and PyTorch its
vectorised kernels. A test that compares such a value exactly, or tighter than the
float policy (`float_policy.py`), passes on the machine it was written on and fails on
another, an Intel Xeon with AVX-512 where this one is an AMD with AVX2, say. No switch
turns on instructions a processor lacks, but each library can be told to use fewer,
which changes the same last bits; docs/architecture.md ("Testing on other processors")
lists the switches and how to run every test under them. This file runs a small,
representative part of the suite that way, in a fresh process (each library reads its
switch once, when it loads): convolutions, matrix products and reductions (summation
order), numpy's long-array ufuncs against minigrad's short kernels (vector math), and
PyTorch's portable kernels (`ATEN_CPU_CAPABILITY=default`, see `minigrad/_cpu.py`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FILES = [
    "tests/parity/test_parity_conv_pool.py",
    "tests/parity/test_parity_linalg.py",
    "tests/parity/test_parity_opinfo.py::test_opinfo_samples",
    "tests/minigrad/test_short_lane.py",
    "tests/minigrad/test_declarations.py",
]
# the OpInfo samples of ops whose values a vector math library or a summation order
# decides (the rest of that file is structure, the same on every machine)
OPINFO = ("logsumexp or softmax or matmul or mm or mv or dot or tanh or exp or log or sin "
          "or cos or sum or mean or conv or linear or norm")


def _numpy_umath():
    try:
        from numpy._core import _multiarray_umath
    except ImportError:  # (numpy 1.x)
        from numpy.core import _multiarray_umath
    return _multiarray_umath


def other_processor_env() -> dict:
    """This environment with every library told to run the code paths of a processor
    without AVX2 (numpy: each of its dispatch targets off, down to its baseline)."""
    return {**os.environ,
            "NPY_DISABLE_CPU_FEATURES": " ".join(_numpy_umath().__cpu_dispatch__),
            "OPENBLAS_CORETYPE": "Sandybridge",
            "MKL_CBWR": "COMPATIBLE",
            "ATEN_CPU_CAPABILITY": "default"}


# what the child process reports, to show the switches took effect
REPORT = """
import ctypes, glob, os
import numpy, torch
try:
    from numpy._core import _multiarray_umath as umath
except ImportError:
    from numpy.core import _multiarray_umath as umath
on = [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]
core = "unknown"
for lib in glob.glob(os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs",
                                  "libscipy_openblas*")):
    get = getattr(ctypes.CDLL(lib), "scipy_openblas_get_corename64_", None)
    if get is not None:
        get.restype = ctypes.c_char_p
        core = get().decode()
print(on, core, torch.backends.cpu.get_cpu_capability())
"""


def test_the_switches_take_effect(torch):
    done = subprocess.run([sys.executable, "-c", REPORT], env=other_processor_env(),
                          capture_output=True, text=True, timeout=120, check=True)
    dispatch_on, core, capability = done.stdout.rsplit(" ", 2)
    assert dispatch_on == "[]", done.stdout  # numpy: its baseline loops only
    assert core.lower() in ("sandybridge", "unknown"), done.stdout
    assert capability.strip() == "DEFAULT", done.stdout


def test_tests_hold_on_another_processors_code_paths(torch):
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-W", "ignore::pytest.PytestAssertRewriteWarning", *FILES,
         "-k", f"not test_opinfo_samples or {OPINFO}"],
        cwd=REPO, env=other_processor_env(), capture_output=True, text=True, timeout=900)
    tail = "\n".join(done.stdout.splitlines()[-30:])
    assert done.returncode == 0, f"under another processor's code paths:\n{tail}"
    assert " passed" in tail and "skipped" not in tail.splitlines()[-1], tail
