"""`Generator`: PyTorch's CPU random number generator (mt19937), so that
`manual_seed(s)` followed by `randn`, `rand`, `randint`, `randperm`, `normal_` or
`uniform_` gives the numbers PyTorch gives, bit for bit. The arithmetic is in
`minigrad.kernels.random`; this module holds the state, picks the kernel PyTorch
picks for a size and layout, and fills numpy arrays (the factories in `_creation`
wrap them in tensors).
"""

from __future__ import annotations

import secrets

import numpy as np

from ._cpu import CAPABILITY, FUSED_MULTIPLY_ADD
from .kernels import on_demand

_k = on_demand("random")  # (the generators' kernels, loaded at the first draw)

# PyTorch's float32 normal sampler for 16 or more values takes log, sin and cos from
# vectorised approximations in its AVX2 kernels, from the C library in its portable
# ones (and its AVX2 and AVX512 kernels round x * span + low once, see
# `minigrad._cpu`): the last bits of these samples differ between kinds of machine, as
# PyTorch's do. An AVX512 machine runs the AVX2 sampler: the sampler is registered
# without an AVX512 build (see `_cpu.SUM_VECTOR_BYTES`). minigrad follows the machine
# it runs on.
VECTORISED_FLOAT32_NORMAL = CAPABILITY in ("avx2", "avx512")
RANDPERM_INSIDE_OUT_FROM = 0xFFFFFFFF // 20  # PyTorch's randperm changes algorithm here


_NO_STATE = ("PyTorch keeps a generator's state in a uint8 tensor, a dtype minigrad does not "
             "have: to repeat a sequence, call manual_seed again")


class Generator:
    """A CPU random number generator with PyTorch's algorithm and state."""

    def __init__(self, device: str = "cpu") -> None:
        if str(device) != "cpu":
            raise RuntimeError(f"minigrad runs on the CPU only (got device={device!r})")
        self.device = "cpu"
        self._mt = np.zeros(_k.STATE_SIZE, np.int64)
        # [1.0, value] while a Box-Muller sine value waits to be used
        self._normal_cache = np.zeros(2, np.float64)
        self.manual_seed(67280421310721)  # PyTorch's seed for a new Generator()

    def manual_seed(self, seed: int) -> Generator:
        """Restart the sequence from `seed` (any int from -2**63 to 2**64 - 1)."""
        seed = _check_seed(seed)
        self._seed = seed
        self._mt[:] = _seeded_state(seed & 0xFFFFFFFF)
        self._normal_cache[:] = 0.0
        return self

    def seed(self) -> int:
        """Seed from the operating system's randomness and return the seed."""
        s = secrets.randbits(63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the sequence started from."""
        return self._seed

    def get_state(self):
        raise NotImplementedError(_NO_STATE)

    def set_state(self, new_state) -> None:
        raise NotImplementedError(_NO_STATE)

    def __repr__(self) -> str:
        return f"<minigrad.Generator object at {hex(id(self))}>"


def snapshot(generator: Generator) -> tuple:
    """The generator's whole state (what PyTorch's `get_rng_state` holds), for
    `restore`: checkpointing replays a forward's random numbers with it."""
    return (generator._mt.copy(), generator._normal_cache.copy(), generator._seed)


def restore(generator: Generator, state: tuple) -> None:
    mt, cache, seed = state
    generator._mt[:] = mt
    generator._normal_cache[:] = cache
    generator._seed = seed


def _seeded_state(s: int) -> list:
    """mt19937's state after seeding with the 32-bit `s` (its init_genrand), followed
    by the two counters: one word left, so the first draw twists first."""
    words = [s]
    for j in range(1, _k.N):
        prev = words[-1]
        words.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF)
    return words + [1, 0]  # mt[LEFT], mt[NEXT]


def _check_seed(seed) -> int:
    """`seed` as PyTorch stores it: int(seed), a negative one wrapped to 64 bits."""
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError("Overflow when unpacking long long")
    return seed % 2**64


default_generator = Generator()
default_generator.seed()


def resolve(generator: Generator | None) -> Generator:
    """The generator a sampling function uses: the one given, else the default."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a minigrad.Generator, got {type(generator).__name__}")
    return generator


# -- filling arrays ------------------------------------------------------------------


def _fill_order(arr: np.ndarray) -> np.ndarray:
    """A view of `arr` whose C order is the order PyTorch's element-by-element kernels
    visit its elements: memory order (axes by decreasing stride), not index order."""
    if arr.flags.c_contiguous:
        return arr
    axes = sorted(range(arr.ndim), key=lambda d: -abs(arr.strides[d]))
    return arr.transpose(axes)


def _fill(arr: np.ndarray, kernel, *args) -> None:
    """Run `kernel(flat, *args)` on `arr`'s elements in PyTorch's fill order."""
    view = _fill_order(arr)
    if view.flags.c_contiguous:
        kernel(view.reshape(-1), *args)
    else:
        flat = np.empty(view.size, arr.dtype)
        kernel(flat, *args)
        view[...] = flat.reshape(view.shape)


def uniform_into(arr: np.ndarray, low: float, high: float, generator=None) -> None:
    """Fill a float32 or float64 array with U[low, high) samples."""
    gen = resolve(generator)
    kernel = _k.uniform_f32 if arr.dtype == np.float32 else _k.uniform_f64
    _fill(arr, lambda flat: kernel(gen._mt, flat, float(low), float(high),
                                   FUSED_MULTIPLY_ADD))


def normal_into(arr: np.ndarray, mean: float, std: float, generator=None) -> None:
    """Fill a float32 or float64 array with N(mean, std**2) samples: 16 at a time for
    a contiguous array of 16 or more, else one by one (see `kernels.random`)."""
    gen = resolve(generator)
    mean, std = float(mean), float(std)
    if arr.size >= 16 and arr.flags.c_contiguous:
        flat = arr.reshape(-1)
        if arr.dtype == np.float32:
            _k.normal_fill_f32(gen._mt, flat, mean, std, VECTORISED_FLOAT32_NORMAL)
        else:
            _k.normal_fill_f64(gen._mt, flat, mean, std)
        return
    _fill(arr, lambda flat: _k.normal_serial(gen._mt, gen._normal_cache, flat, mean, std,
                                             FUSED_MULTIPLY_ADD))


def bernoulli_into(arr: np.ndarray, p: float, generator=None) -> None:
    """Fill an array with 1 (probability p) or 0, in PyTorch's fill order."""
    gen = resolve(generator)
    _fill(arr, lambda flat: _k.bernoulli_fill(gen._mt, flat, float(p)))


def randint_into(arr: np.ndarray, low: int, high: int, generator=None) -> None:
    """Fill an array with integers from [low, high), computed in int64."""
    gen = resolve(generator)
    flat = np.empty(arr.size, np.int64)
    _k.randint_fill(gen._mt, flat, int(low), np.uint64(int(high) - int(low)))
    view = _fill_order(arr)
    view[...] = flat.reshape(view.shape)


def randperm_array(n: int, generator=None) -> np.ndarray:
    """A random permutation of 0..n-1 as an int64 array."""
    gen = resolve(generator)
    out = np.empty(n, np.int64)
    _k.randperm_fill(gen._mt, out, n >= RANDPERM_INSIDE_OUT_FROM)
    return out
