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


def test_short_float32_arithmetic_and_sums_share_the_float64_kernels(tmp_path):
    program = ("x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
               "for t in (x, x.double()):\n"
               "    (t * t - t / 3.0 + t.sqrt()).sum().backward(retain_graph=True)\n")
    compiled = compiled_by("", program, tmp_path)
    for kernel in ("mul", "sub", "div_scalar", "sqrt", "sum_rows"):
        assert compiled.count(kernel) == 1, (kernel, compiled)


def _bits_equal(got: np.ndarray, want: np.ndarray) -> bool:
    return got.dtype == want.dtype and bool(np.all(
        (got.view(np.int32) == want.view(np.int32)) | (np.isnan(got) & np.isnan(want))))


def test_float32_through_float64_gives_the_float32_kernels_bits():
    from minigrad.arrays import dispatch as D
    from minigrad.arrays.summing import float_sum
    from minigrad.kernels.sums import levels, sum_rows

    rng = np.random.default_rng(0)
    f = np.float32
    magnitudes = f(10) ** rng.integers(-40, 38, 2000).astype(f)
    a = np.concatenate([rng.standard_normal(2000).astype(f) * magnitudes,
                        np.array([0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, -3.4e38, 1e-45,
                                  -1e-45, 1.1754942e-38], f)])
    b = rng.permutation(a)
    for kernel in (K.add, K.sub, K.mul, K.div):
        want = np.empty_like(a)
        kernel(a, b, want)
        assert _bits_equal(D.binary(kernel, a, b, np.dtype(f)), want), kernel
    for kernel in (K.neg, K.abs, K.relu, K.sqrt):
        want = np.empty_like(a)
        kernel(a, want)
        assert _bits_equal(D.unary(kernel, a), want), kernel
    for kernel, s, reverse in ((K.mul_scalar, 0.1, False), (K.add_scalar, 3.3, False),
                               (K.div_scalar, 7.1, False), (K.rsub_scalar, 2.5, True)):
        want = np.empty_like(a)
        kernel(*((f(s), a) if reverse else (a, f(s))), want)
        got = D.scalar_op(kernel, a, s, minigrad.float32, reverse=reverse)
        assert _bits_equal(got, want), kernel
    x = (rng.standard_normal((30, 40)) * 1e3).astype(f)
    want = np.empty(30, f)
    sum_rows(x.reshape(-1), 30, 40, want, np.empty(levels(1)))
    assert _bits_equal(float_sum(x, (1,)), want)


def test_a_spread_out_stream_adds_into_a_sum_with_the_same_kernel(tmp_path):
    # x's gradient streams, in the order they arrive: two dense ones from `x * x`,
    # added with `add_into`, then `x.sum()`'s (read-only, spread out: every stride 0)
    program = ("x = minigrad.tensor([1.0, 2.0, 3.0], dtype=minigrad.float64, requires_grad=True)\n"
               "(x.sum() + (x * x).sum()).backward()\n"
               "assert x.grad.tolist() == [3.0, 5.0, 7.0]\n")
    assert compiled_by("", program, tmp_path).count("add_into") == 1
