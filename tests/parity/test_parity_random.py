"""Random numbers: after the same `manual_seed`, minigrad's samplers give PyTorch's
values bit for bit (float32 and float64), for every size class PyTorch treats apart:
fewer than 16 normal values (one at a time, with Box-Muller's cached second value),
16 or more (16 at a time, the last block redrawn), non-contiguous tensors, and the
integer samplers' narrow and wide ranges.

PyTorch's AVX2 and AVX512 builds round some of these differently (see `minigrad._cpu`
and `minigrad._generator`); minigrad follows the machine, so these tests hold on both.
`test_forced_capability_matches_torch` also checks the kernels of the other kinds of
machine that can be forced here with ATEN_CPU_CAPABILITY, in fresh processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

SEEDS = [0, 1, 2, 7, 42, 1234, 2**31 - 1, 2**32 + 5, 2**63 + 11, 2**64 - 1, -1, -(2**63)]
SIZES = [1, 2, 3, 5, 15, 16, 17, 18, 31, 32, 33, 47, 48, 100, 1000, 4099]
DTYPES = ["float32", "float64"]


def same_bits(a, b) -> None:
    """Equal arrays, bit for bit (so -0.0 != 0.0 and a 1-ulp difference fails)."""
    a = np.ascontiguousarray(a.detach().numpy() if hasattr(a, "detach") else a)
    b = np.ascontiguousarray(b.detach().numpy() if hasattr(b, "detach") else b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    if a.dtype.kind == "f":
        a, b = a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}")
    bad = np.flatnonzero(a.reshape(-1) != b.reshape(-1))
    assert bad.size == 0, f"{bad.size} of {a.size} differ, first at {bad[:5].tolist()}"


def both(torch, program):
    """Run `program(lib)` under each library; pair up the tensors they return."""
    import minigrad

    return list(zip(program(torch), program(minigrad)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_randn_rand_every_size(torch, seed, dtype):
    def program(lib):
        lib.manual_seed(seed)
        dt = getattr(lib, dtype)
        out = []
        for n in SIZES:
            out += [lib.randn(n, dtype=dt), lib.rand(n, dtype=dt)]
        return out

    for t, m in both(torch, program):
        same_bits(t, m)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", SIZES + [(4, 4), (3, 5), (2, 3, 4), (0,), (8, 0)])
def test_normal_and_uniform_with_parameters(torch, size, dtype):
    """mean/std and [a, b) other than 0 and 1: where PyTorch's kernels round a * b + c
    once or twice shows in the last bit."""
    def program(lib):
        lib.manual_seed(size if isinstance(size, int) else sum(size))
        dt = getattr(lib, dtype)
        shape = size if isinstance(size, tuple) else (size,)
        return [lib.empty(*shape, dtype=dt).normal_(0.3, 1.7),
                lib.empty(*shape, dtype=dt).normal_(-2.5, 0.01),
                lib.empty(*shape, dtype=dt).uniform_(-0.13, 0.71),
                lib.empty(*shape, dtype=dt).uniform_(2.5, 3.1),
                lib.empty(*shape, dtype=dt).normal_(),
                lib.empty(*shape, dtype=dt).uniform_()]

    for t, m in both(torch, program):
        same_bits(t, m)


def test_box_muller_cache_carries_across_calls(torch):
    """Fewer than 16 normal values are made in pairs; the unused second value of a pair
    is kept by the generator and used first by the next call, even of another dtype.
    A call of 16 or more neither uses nor clears it; manual_seed clears it."""
    def program(lib):
        lib.manual_seed(3)
        out = [lib.randn(3), lib.randn(1, dtype=lib.float64), lib.randn(20), lib.randn(1),
               lib.rand(2), lib.randn(2, 2), lib.empty(5).normal_(1.0, 2.0), lib.randn(1)]
        lib.manual_seed(3)
        out += [lib.randn(1), lib.randn(1)]
        lib.manual_seed(3)
        lib.randn(1)
        lib.manual_seed(3)
        out += [lib.randn(1)]
        return out

    for t, m in both(torch, program):
        same_bits(t, m)


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_targets(torch, dtype):
    """A non-contiguous tensor is filled one value at a time in memory order (so 16 or
    more values of a transposed tensor take the one-at-a-time normal sampler)."""
    def program(lib):
        lib.manual_seed(11)
        dt = getattr(lib, dtype)
        a = lib.zeros(6, 5, dtype=dt)
        b = lib.zeros(4, 10, dtype=dt)
        c = lib.zeros(7, 3, dtype=dt)
        d = lib.zeros(3, 4, 5, dtype=dt)
        a.t().normal_()
        b[:, ::2].normal_(0.5, 2.0)
        c.t().uniform_(-1.0, 3.0)
        d.permute(2, 0, 1).normal_()
        d[1].t().uniform_()
        return [a, b, c, d]

    for t, m in both(torch, program):
        same_bits(t, m)


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_randint(torch, seed):
    """Ranges below 2**28 take one 32-bit word modulo the range, wider ones random64()."""
    ranges = [(0, 1), (0, 2), (0, 10), (-5, 5), (0, 2**28 - 1), (0, 2**28), (3, 2**28 + 3),
              (0, 2**31), (0, 2**32 + 1), (-(2**40), 2**40), (-(2**62), 2**62), (0, 2**63 - 1)]

    def program(lib):
        lib.manual_seed(seed)
        out = [lib.randint(low, high, (37,)) for low, high in ranges]
        out += [lib.randint(10, (3, 4)), lib.randint(-3, 3, (2, 2), dtype=lib.float32),
                lib.randint(0, 1000, (5,), dtype=lib.float64)]
        return out

    for t, m in both(torch, program):
        same_bits(t, m)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 16, 1000, 100_003])
def test_randperm(torch, n):
    def program(lib):
        lib.manual_seed(n)
        return [lib.randperm(n), lib.randperm(n, dtype=lib.float32), lib.randn(3)]

    for t, m in both(torch, program):
        same_bits(t, m)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 2), (5, 3), (16, 4), (7, 33), (64, 128)])
def test_linear_and_init(torch, shape, dtype):
    """nn.Linear's weights and bias, and the init functions' bounds (computed in
    PyTorch's order: a different rounding of the bound changes every sample)."""
    def program(lib):
        lib.manual_seed(shape[0] * 100 + shape[1])
        dt = getattr(lib, dtype)
        layer = lib.nn.Linear(shape[1], shape[0], dtype=dt)
        w = lib.empty(*shape, dtype=dt)
        init = lib.nn.init
        out = [layer.weight, layer.bias]
        for fill in (lambda: init.kaiming_uniform_(w), lambda: init.kaiming_normal_(w),
                     lambda: init.kaiming_uniform_(w, a=0.2, mode="fan_out", nonlinearity="relu"),
                     lambda: init.xavier_uniform_(w), lambda: init.xavier_normal_(w, gain=1.5),
                     lambda: init.uniform_(w, -0.1, 0.3), lambda: init.normal_(w, 1.0, 0.5)):
            out.append(fill().clone())
        return out

    for t, m in both(torch, program):
        same_bits(t, m)


def test_generators_are_independent(torch):
    def program(lib):
        lib.manual_seed(5)
        g = lib.Generator().manual_seed(9)
        h = lib.Generator()  # PyTorch's fixed default seed for a new generator
        out = [lib.randn(4, generator=g), lib.randn(3), lib.rand(20, generator=h),
               lib.randint(0, 7, (5,), generator=g), lib.randperm(6, generator=g),
               lib.empty(3).normal_(generator=h), lib.empty(18).uniform_(-1, 1, generator=g),
               lib.randn(2)]
        lib.manual_seed(5)
        out += [lib.randn(3)]
        return out

    for t, m in both(torch, program):
        same_bits(t, m)


def test_seeds_and_generator_surface(torch):
    import minigrad

    def describe(lib):
        g = lib.Generator()
        out = {"new generator seed": g.initial_seed(), "returns itself": g.manual_seed(3) is g}
        for s in (0, 7, 2**64 - 1, -1, -(2**63), 2**40 + 3, True, 2.9):
            out[f"seed {s!r}"] = lib.manual_seed(s).initial_seed()
        out["default generator"] = lib.manual_seed(1) is lib.default_generator
        out["initial_seed()"] = lib.initial_seed()
        for bad in (2**64, -(2**63) - 1, "a"):
            try:
                lib.manual_seed(bad)
                out[f"bad {bad!r}"] = None
            except Exception as exc:  # noqa: BLE001 - the error is what is compared
                out[f"bad {bad!r}"] = (type(exc).__name__, str(exc))
        return out

    assert describe(minigrad) == describe(torch)


def test_errors(torch):
    import minigrad

    def errors(lib):
        cases = {
            "normal std": lambda: lib.empty(3).normal_(0, -1),
            "normal std float": lambda: lib.empty(3).normal_(0, -0.5),
            "uniform range": lambda: lib.empty(3).uniform_(1, 0),
            "uniform range float": lambda: lib.empty(3).uniform_(0.5, 0.25),
            "uniform long": lambda: lib.empty(3, dtype=lib.int64).uniform_(0, 1),
            "normal long": lambda: lib.empty(3, dtype=lib.int64).normal_(),
            "randn long": lambda: lib.randn(3, dtype=lib.int64),
            "rand long": lambda: lib.rand(3, dtype=lib.int64),
            "randint empty range": lambda: lib.randint(5, 5, (3,)),
            "randint reversed": lambda: lib.randint(5, 3, (3,)),
            "randint grad": lambda: lib.randint(3, (2,), requires_grad=True),
            "randperm negative": lambda: lib.randperm(-1),
        }
        out = {}
        for name, fn in cases.items():
            try:
                fn()
                out[name] = None
            except Exception as exc:  # noqa: BLE001
                out[name] = (type(exc).__name__, str(exc).replace("torch", "minigrad"))
        return out

    assert errors(minigrad) == errors(torch)


def test_inplace_samplers_bump_the_version(torch):
    import minigrad

    def versions(lib):
        t = lib.zeros(20)
        v = t[2:]
        t.normal_()
        v.uniform_()
        w = lib.nn.Linear(3, 2).weight
        return t._version, v._version, w._version

    assert versions(minigrad) == versions(torch)


_CHILD = r"""
import json, sys
lib = __import__(sys.argv[1])
out = []
for seed in (0, 3, 99):
    lib.manual_seed(seed)
    for dt in (lib.float32, lib.float64):
        for n in (5, 16, 21, 100):
            for t in (lib.randn(n, dtype=dt), lib.empty(n, dtype=dt).normal_(0.3, 1.7),
                      lib.empty(n, dtype=dt).uniform_(-0.13, 0.71)):
                out.append(t.numpy().view("u%d" % t.numpy().itemsize).tolist())
print(json.dumps(out))
"""


def _forcible_capabilities() -> list[str]:
    from minigrad import _cpu

    return ["default"] + (["avx2"] if _cpu.CAPABILITY in ("avx2", "avx512") else [])


@pytest.mark.parametrize("capability", _forcible_capabilities())
def test_forced_capability_matches_torch(torch, capability):
    """Under ATEN_CPU_CAPABILITY (read by PyTorch and by minigrad) both libraries run
    the kernels of another kind of machine: the portable ones (no fused multiply-add,
    the C library's log/sin/cos), or the AVX2 ones on an AVX512 machine."""
    env = dict(os.environ, ATEN_CPU_CAPABILITY=capability)

    def run(name):
        done = subprocess.run([sys.executable, "-c", _CHILD, name], env=env, check=True,
                              capture_output=True, text=True)
        return json.loads(done.stdout)

    assert run("minigrad") == run("torch")
