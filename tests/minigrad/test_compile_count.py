"""What a first run compiles: numba compiles a kernel once for each new combination of
argument types, and every jitted function a kernel calls as a kernel of its own, about
0.1 s each on an empty cache. These check that a program compiles only the kernels it
calls, once each (benchmarks/README.md, "A fresh runtime").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
from numba import types

import minigrad
from minigrad.kernels import elementwise as K

# `setup`, then `program`, run in a fresh process on an empty numba cache; prints what
# `program` compiled (kernel names), from numba's compile events
RECORD = """
import json, sys
from numba.core import event
compiled = []
class Compiles(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
import minigrad
exec(sys.argv[1])
event.register("numba:compile", Compiles())
exec(sys.argv[2])
print(json.dumps(compiled))
"""


def compiled_by(setup: str, program: str, tmp_path) -> list:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "MINIGRAD_COMPILE_NOTICE": "off"}
    done = subprocess.run([sys.executable, "-c", RECORD, setup, program], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_a_first_sgd_step_compiles_one_kernel(tmp_path):
    setup = ("w = minigrad.nn.Parameter(minigrad.ones(4))\n"
             "(w * w).sum().backward()\n"
             "opt = minigrad.optim.SGD([w], lr=0.1)\n")
    compiled = compiled_by(setup, "opt.step()\nopt.step()", tmp_path)
    assert compiled in (["_sgd_common_fused"], ["_sgd_common"])


def test_random_numbers_compile_the_sampler_and_the_engine_only(tmp_path):
    # (700 numbers: more than the 624 words of one twist)
    compiled = compiled_by("", "minigrad.manual_seed(0)\nminigrad.rand(700)", tmp_path)
    assert sorted(compiled) == ["next_u32", "uniform_f32"]


def _plain(signature) -> bool:
    """Every array argument of a kernel's signature is contiguous and writable."""
    return all(a.layout == "C" and a.mutable for a in signature if isinstance(a, types.Array))


KERNELS = (K.mul_scalar, K.mul, K.sqrt_backward, K.clamp_backward, K.pow_scalar_backward,
           K.add_into)


def test_a_spread_out_gradient_reaches_the_kernels_contiguous():
    # sum's gradient is a read-only view of one value (every stride 0): the kernels
    # below it get a contiguous copy, not a second compilation for that layout
    before = {kernel: set(kernel.signatures) for kernel in KERNELS}
    for dt in (minigrad.float32, minigrad.float64):
        x = minigrad.tensor([0.5, 2.0, 4.0], dtype=dt, requires_grad=True)
        (x * 3.0 + x.sqrt() * x + x.clamp(min=1.0) + x ** 2).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 3 + 1.5 * np.sqrt([0.5, 2.0, 4.0])
                                   + [0.0, 1.0, 1.0] + 2 * np.array([0.5, 2.0, 4.0]),
                                   rtol=1e-6)
    for kernel in KERNELS:
        new = set(kernel.signatures) - before[kernel]
        assert all(map(_plain, new)), (kernel.py_func.__name__, new)
