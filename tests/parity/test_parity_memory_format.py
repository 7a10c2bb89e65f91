"""`contiguous_format` and `preserve_format`, the memory formats of a strided tensor,
where PyTorch takes them: `contiguous`, `clone` and the `*_like` factories."""

from __future__ import annotations

import pytest
from parity_harness import check, raised

import minigrad

FORMATS = ["contiguous_format", "preserve_format", None]

# Each op of a transposed (and of a permuted 3-D) tensor, with memory format `f`.
OPS = {
    "clone": lambda m, x, f: x.clone(memory_format=f),
    "minigrad.clone": lambda m, x, f: m.clone(x, memory_format=f),
    "empty_like": lambda m, x, f: m.empty_like(x, memory_format=f).zero_(),
    "zeros_like": lambda m, x, f: m.zeros_like(x, memory_format=f),
    "ones_like": lambda m, x, f: m.ones_like(x, memory_format=f),
    "full_like": lambda m, x, f: m.full_like(x, 2.5, memory_format=f),
    "rand_like": lambda m, x, f: m.rand_like(x, memory_format=f).zero_(),
    "randn_like": lambda m, x, f: m.randn_like(x, memory_format=f).zero_(),
}


def _fmt(m, name):
    return None if name is None else getattr(m, name)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("op", list(OPS))
def test_memory_format_lays_the_result_out(torch, op, fmt):
    def program(c):
        x = c.leaf([[0.5, -1.5, 2.0], [0.25, 1.0, -0.75]])
        y = c.leaf([float(i) for i in range(12)])
        out = OPS[op](c.m, x.t(), _fmt(c.m, fmt))
        out3 = OPS[op](c.m, y.view(2, 3, 2).permute(2, 0, 1), _fmt(c.m, fmt))
        return c.keep(out), c.keep(out3)

    check(torch, program)


def test_contiguous_with_contiguous_format(torch):
    def program(c):
        x = c.leaf([[0.5, -1.5, 2.0], [0.25, 1.0, -0.75]])
        row_major = x * 2
        same = c.m.tensor(row_major.contiguous(memory_format=c.m.contiguous_format)
                          is row_major)
        return c.keep(x.t().contiguous(memory_format=c.m.contiguous_format)), c.keep(same)

    check(torch, program)


BAD = {
    "contiguous with preserve_format": lambda m, x: x.contiguous(
        memory_format=m.preserve_format),
    "contiguous with None": lambda m, x: x.contiguous(memory_format=None),
    "contiguous with a number": lambda m, x: x.contiguous(memory_format=1),
    "clone with a string": lambda m, x: x.clone(memory_format="contiguous"),
    "empty_like with a number": lambda m, x: m.empty_like(x, memory_format=0),
    "full_like with a dtype": lambda m, x: m.full_like(x, 1.0, memory_format=m.float32),
    "zeros_like with a tensor": lambda m, x: m.zeros_like(x, memory_format=x),
}


@pytest.mark.parametrize("case", list(BAD))
def test_memory_format_errors(torch, case):
    def attempt(m):
        return raised(lambda: BAD[case](m, m.ones(2, 3).t()))

    assert attempt(minigrad) == attempt(torch) != ("no error", "")


def test_memory_formats_print_as_pytorchs(torch):
    for name in ("contiguous_format", "preserve_format"):
        assert repr(getattr(minigrad, name)) == repr(getattr(torch, name)).replace(
            "torch", "minigrad")
        assert isinstance(getattr(minigrad, name), minigrad.memory_format)


# `to` copies where asked to (`copy=True`, or positionally after the device and dtype),
# laid out by `memory_format`; else it returns the tensor itself where nothing changes
# (a 4-D channels-last tensor asked for contiguous_format is copied).
TO = {
    "copy=True": lambda m, x: x.to(m.float64, copy=True),
    "copy, positional": lambda m, x: x.to("cpu", m.float64, False, True),
    "copy, non_blocking, positional": lambda m, x: x.to(m.float64, True, True),
    "copy, contiguous_format": lambda m, x: x.to(copy=True, memory_format=m.contiguous_format),
    "copy, preserve_format": lambda m, x: x.to(m.float64, copy=True,
                                               memory_format=m.preserve_format),
    "no copy, contiguous_format": lambda m, x: x.to(memory_format=m.contiguous_format),
    "no copy, positional": lambda m, x: x.to("cpu", m.float64, True, False),
    "another dtype, contiguous_format": lambda m, x: x.to(m.float32,
                                                          memory_format=m.contiguous_format),
    "channels-last, contiguous_format": lambda m, x: (x.reshape(1, 3, 2, 1) * 1).permute(
        0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).to(memory_format=m.contiguous_format),
}


@pytest.mark.parametrize("case", list(TO))
def test_to_copies_as_asked(torch, case):
    def program(c):
        x = c.leaf([[0.5, -1.5, 2.0], [0.25, 1.0, -0.75]])
        t = x.t()
        y = TO[case](c.m, t)
        return c.keep(y), c.keep(c.m.tensor(y is t))

    check(torch, program)


@pytest.mark.parametrize("fmt", ["contiguous_format", "preserve_format"])
@pytest.mark.parametrize("method", ["float", "double", "long", "bool"])
def test_dtype_methods_take_a_memory_format(torch, method, fmt):
    def program(c):
        x = c.leaf([[0.5, -1.5, 2.0], [0.25, 1.0, -0.75]])
        t = x.t()
        y = getattr(t, method)(memory_format=getattr(c.m, fmt))
        return c.keep(y), c.keep(c.m.tensor(y is t))

    check(torch, program)
