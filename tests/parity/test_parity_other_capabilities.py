"""The host-dependent parity tests, run again as a host with fewer instruction sets.

A few results depend on which of its CPU kernel builds PyTorch runs (portable, AVX2
or AVX-512; see `minigrad/_cpu.py`): whether `a * b + c` is one fused multiply-add,
how wide the vectors its sum adds with are, which normal sampler it uses. minigrad
reads the same choice PyTorch makes, and `ATEN_CPU_CAPABILITY` lowers it for both. So
a host with AVX-512 can check here what an AVX2 host and a host without AVX2 would
get: each file below runs again in a fresh process (PyTorch picks its kernels once,
when it loads) for every capability below this host's. A host without AVX2 has nothing
below it to run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# the tests whose expected bits depend on the kernels PyTorch picks
HOST_DEPENDENT = [
    "tests/parity/test_parity_sums.py",
    "tests/parity/test_parity_random.py",
    "tests/parity/test_parity_declared_ops.py",
    "tests/parity/test_parity_ops.py",
    "tests/parity/test_parity_optim_float32.py",
    "tests/parity/test_parity_optim_adamw_rmsprop.py",
    "tests/parity/test_parity_nn.py",
    "tests/parity/test_parity_softmax_bits.py",
    "tests/parity/test_parity_softmax.py",
    "tests/parity/test_parity_cross_entropy.py",
    "tests/parity/test_parity_losses.py",
    "tests/minigrad/test_random.py",
]
ORDER = ("default", "avx2", "avx512")


def _capabilities_below_this_host(torch) -> list[str]:
    host = torch.backends.cpu.get_cpu_capability().lower()
    if host not in ORDER:
        return []
    return list(ORDER[:ORDER.index(host)])


def test_the_host_dependent_files_exist():
    missing = [f for f in HOST_DEPENDENT if not (REPO / f).is_file()]
    assert not missing


@pytest.mark.parametrize("capability", ["default", "avx2"])
def test_parity_holds_for_the_kernels_of_a_smaller_host(torch, capability):
    if capability not in _capabilities_below_this_host(torch):
        pytest.skip(f"this host runs PyTorch's {capability} kernels already, or cannot run "
                    f"them: the other parity tests check it")
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-W", "ignore::pytest.PytestAssertRewriteWarning", *HOST_DEPENDENT],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    tail = "\n".join(done.stdout.splitlines()[-30:])
    assert done.returncode == 0, f"under ATEN_CPU_CAPABILITY={capability}:\n{tail}"
    assert " passed" in tail and "skipped" not in tail.splitlines()[-1], tail
