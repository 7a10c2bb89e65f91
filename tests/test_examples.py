"""The example scripts in examples/ print the same under PyTorch and under minigrad.

Each script is run twice, as written (`import torch`) and through
`examples/run_with_minigrad.py` (which makes `import torch` import minigrad), and the
two outputs are compared: identical for the float64 scripts, and for the float32 ones
identical but for their numbers, which may differ by `FLOAT32_RTOL`. Why a tolerance
there: minigrad's float32 matrix products run through numpy's BLAS and PyTorch's
through its own, which add the products in another order, so the last bit of a
float32 product differs (float32 carries about 7 digits: one unit in the last place
is 6e-8 relative); a training loop then carries those differences along (measured on
two_layer_net.py, printed to 6 places: the first loss, 1.258785 against 1.258784, 8e-7
relative; the rest the same). 1e-5 relative, or one unit in the sixth place for numbers
near 0, leaves room for hosts whose BLAS picks other kernels, and still catches any real
difference, which shows in the first few digits.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FLOAT32_RTOL = 1e-5
# script -> the relative tolerance of its numbers (0: the output must be identical)
SCRIPTS = {"autograd_basics": 0.0, "custom_function": 0.0, "micrograd_check": 0.0,
           "two_layer_net": FLOAT32_RTOL, "classifier": FLOAT32_RTOL,
           "small_cnn": FLOAT32_RTOL}
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          cwd=EXAMPLES.parent, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_example_is_compared():
    assert {p.stem for p in EXAMPLES.glob("*.py")} - {"run_with_minigrad"} == set(SCRIPTS)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_example_prints_the_same_under_both_libraries(torch, script):
    path = str(EXAMPLES / f"{script}.py")
    under_torch = _run(path).replace("torch", "minigrad")
    under_minigrad = _run(str(EXAMPLES / "run_with_minigrad.py"), path)
    rtol = SCRIPTS[script]
    if rtol == 0:
        assert under_minigrad == under_torch
        return
    # the same text around the numbers, and numbers within the tolerance
    assert NUMBER.sub("#", under_minigrad) == NUMBER.sub("#", under_torch)
    for got, want in zip(NUMBER.findall(under_minigrad), NUMBER.findall(under_torch)):
        assert float(got) == pytest.approx(float(want), rel=rtol, abs=1e-6), (got, want)
