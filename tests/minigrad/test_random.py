"""The random number generator without PyTorch: the mt19937 engine against its
published reference outputs, PyTorch's well-known first values, and the rules of the
samplers (Box-Muller's cached value, fill order, integer ranges, the machine choice).
Bit-for-bit comparisons with PyTorch itself are in tests/parity/test_parity_random.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import minigrad as torch
from minigrad import _cpu
from minigrad.kernels import random as k


def _engine(seed: int):
    g = torch.Generator().manual_seed(seed)
    return g._mt


def test_mt19937_reference_outputs():
    """mt19937 seeded with 5489: the first outputs of the reference implementation,
    and its 10000th, 4123659995 (the value the C++ standard requires of std::mt19937)."""
    mt = _engine(5489)
    first = [k.next_u32(mt) for _ in range(3)]
    assert first == [3499211612, 581869302, 3890346734]
    for _ in range(10000 - 4):
        k.next_u32(mt)
    assert k.next_u32(mt) == 4123659995


def test_random64_puts_the_first_word_high():
    a, b = _engine(1), _engine(1)
    hi, lo = k.next_u64_parts(a)
    assert (hi, lo) == (k.next_u32(b), k.next_u32(b))


def test_well_known_first_values():
    """torch.manual_seed(0) then rand(1) or randn(1): numbers anyone who has seeded
    PyTorch has seen."""
    torch.manual_seed(0)
    assert torch.rand(1).item() == pytest.approx(0.49625658988952637, abs=0)
    torch.manual_seed(0)
    assert torch.randn(1).item() == pytest.approx(1.5409960746765137, abs=0)


def test_seeds_wrap_to_64_bits_and_use_the_low_32():
    assert torch.manual_seed(-1).initial_seed() == 2**64 - 1
    torch.manual_seed(2**32 + 7)
    a = torch.rand(5)
    torch.manual_seed(7)
    assert torch.equal(a, torch.rand(5))
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        torch.manual_seed(2**64)


def test_box_muller_second_value_is_kept_for_the_next_call():
    torch.manual_seed(4)
    pair = torch.randn(2, dtype=torch.float64)
    torch.manual_seed(4)
    one, two = torch.randn(1, dtype=torch.float64), torch.randn(1, dtype=torch.float64)
    assert [one.item(), two.item()] == pair.tolist()
    # manual_seed drops the kept value
    torch.manual_seed(4)
    torch.randn(1)
    torch.manual_seed(4)
    assert torch.randn(1, dtype=torch.float64).item() == pair[0].item()


def test_sixteen_or_more_normals_come_in_blocks():
    """From 16 values on, the normals are made 16 at a time from uniforms drawn first:
    the first 16 of randn(32) are randn(16)."""
    torch.manual_seed(9)
    a = torch.randn(32, dtype=torch.float64)
    torch.manual_seed(9)
    b = torch.randn(16, dtype=torch.float64)
    assert torch.equal(a[:16], b)
    # 17 values: the last 16 places are drawn again, so position 0 stays block one's
    torch.manual_seed(9)
    c = torch.randn(17, dtype=torch.float64)
    assert c[0].item() == b[0].item() and c[1].item() != b[1].item()


def test_non_contiguous_targets_are_filled_in_memory_order():
    torch.manual_seed(2)
    a = torch.zeros(3, 4)
    a.t().uniform_()
    torch.manual_seed(2)
    b = torch.zeros(12).uniform_()
    assert torch.equal(a.reshape(-1), b)


def test_uniform_bounds_and_version():
    t = torch.zeros(1000, dtype=torch.float64)
    t.uniform_(-2.0, -1.5)
    assert t._version == 1
    assert t.min().item() >= -2.0 and t.max().item() < -1.5
    with pytest.raises(RuntimeError, match=r"found from=1 > to=0"):
        torch.zeros(2).uniform_(1, 0)


def test_unsigned_modulo_of_random64():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        hi, lo = (int(x) for x in rng.integers(0, 2**32, 2))
        r = int(rng.integers(1, 2**63)) if rng.random() < 0.5 else int(rng.integers(1, 1000))
        got = k._umod64(hi, lo, np.uint64(r))
        assert got == ((hi << 32) | lo) % r
    # a range above 2**63 (randint over nearly all int64)
    assert k._umod64(0xFFFFFFFF, 0xFFFFFFFF, np.uint64(2**64 - 1)) == 0


def test_randint_ranges():
    torch.manual_seed(0)
    small = torch.randint(-3, 4, (2000,))
    assert small.dtype is torch.int64
    assert set(small.tolist()) == set(range(-3, 4))
    wide = torch.randint(-(2**62), 2**62, (100,))
    assert wide.min().item() >= -(2**62) and wide.max().item() < 2**62
    full = torch.randint(-(2**63), 2**63 - 1, (100,))
    assert full.min().item() < -(2**61) and full.max().item() > 2**61


@pytest.mark.parametrize("inside_out", [False, True])
def test_randperm_algorithms_give_permutations(inside_out):
    """Both of PyTorch's algorithms (the second runs only from n = 2**32 / 20, so it is
    called directly here on a small n)."""
    mt = _engine(3)
    out = np.empty(500, np.int64)
    k.randperm_fill(mt, out, inside_out)
    assert sorted(out.tolist()) == list(range(500))
    assert out.tolist() != list(range(500))


def test_inside_out_randperm_step_by_step():
    """The inside-out shuffle: place i takes the value at a place z picked by random64()
    modulo (i + 1), and z takes i."""
    mt, ref_mt = _engine(8), _engine(8)
    out = np.empty(40, np.int64)
    k.randperm_fill(mt, out, True)
    ref: list = []
    for i in range(40):
        hi, lo = k.next_u64_parts(ref_mt)
        z = ((hi << 32) | lo) % (i + 1)
        ref.append(i)
        ref[i], ref[z] = ref[z], i
    assert out.tolist() == ref


def test_avx2_approximations_are_close_to_the_functions():
    """The emulated AVX2 log and sincos are float32 approximations of log, sin, cos."""
    for x in np.linspace(1e-6, 1.0, 3001, dtype=np.float32):
        assert k._avx2_logf(x) == pytest.approx(math.log(float(x)), rel=1e-6, abs=1e-7)
    for x in np.linspace(0, 2 * math.pi, 3001, dtype=np.float32):
        s, c = k._avx2_sincosf(x)
        assert s == pytest.approx(math.sin(float(x)), abs=3e-7)
        assert c == pytest.approx(math.cos(float(x)), abs=3e-7)


def test_capability_follows_the_override(monkeypatch):
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    assert _cpu.cpu_capability() == "default"
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "no such thing")
    best = _cpu.cpu_capability()
    monkeypatch.delenv("ATEN_CPU_CAPABILITY")
    assert best == _cpu.cpu_capability() in ("default", "avx2", "avx512")


def test_generators_are_independent_of_the_default():
    g = torch.Generator().manual_seed(1)
    torch.manual_seed(1)
    a = torch.rand(3, generator=g)
    b = torch.rand(3)
    assert torch.equal(a, b)  # same seed, same numbers, and g did not advance the default
    h = torch.Generator()
    assert h.initial_seed() == 67280421310721
    with pytest.raises(TypeError, match="expected a minigrad.Generator"):
        torch.rand(2, generator=3)


def test_state_snapshots_are_refused_clearly():
    with pytest.raises(NotImplementedError, match="uint8"):
        torch.get_rng_state()
    with pytest.raises(NotImplementedError, match="uint8"):
        torch.Generator().get_state()


def test_kaiming_on_an_empty_tensor_warns_at_the_caller():
    t = torch.zeros(0, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.nn.init.kaiming_uniform_(t)
    assert [str(w.message) for w in caught] == ["Initializing zero-element tensors is a no-op"]
    assert caught[0].filename == __file__
    assert t._version == 0
