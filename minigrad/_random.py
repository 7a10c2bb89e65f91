"""Random factories and seeds: `randn`, `rand`, `randint`, `randperm`, their `*_like`
forms, `uniform_`/`normal_`, and the default generator's seed.

Each gives PyTorch's numbers for the same seed, bit for bit (`minigrad._generator`
holds the generator; the non-random factories are in `_creation`).
"""

from __future__ import annotations

import numpy as np

from . import _dtype
from . import _generator as _gen
from ._creation import _check_device, _dt, _finish, _like, _shape
from .tensor import Tensor


def _signatures_error(name: str, got: str, *heads: str) -> TypeError:
    """PyTorch's "invalid combination of arguments" error for the random factories,
    whose signatures end in the same keyword arguments (with and without generator)."""
    tail = ("Tensor out = None, minigrad.dtype dtype = None, minigrad.layout layout = None, "
            "minigrad.device device = None, bool pin_memory = False, bool requires_grad = False")
    lines = [f" * ({head}, *, {gen}{tail})"
             for head in heads for gen in ("minigrad.Generator generator, ", "")]
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     "but expected one of:\n" + "\n".join(lines) + "\n")


def manual_seed(seed: int) -> _gen.Generator:
    """Seed the default generator: the random factories then give PyTorch's numbers
    after `torch.manual_seed(seed)`, bit for bit (see `minigrad._generator`)."""
    return _gen.default_generator.manual_seed(seed)


def initial_seed() -> int:
    """The seed the default generator started from."""
    return _gen.default_generator.initial_seed()


def seed() -> int:
    """Seed the default generator from the operating system's randomness."""
    return _gen.default_generator.seed()


def get_rng_state():
    raise NotImplementedError(_gen._NO_STATE)


def set_rng_state(new_state) -> None:
    raise NotImplementedError(_gen._NO_STATE)


def _float_dt(dtype, kernel: str) -> _dtype.dtype:
    """The dtype of a sampled tensor; PyTorch's samplers refuse integer dtypes."""
    dt = _dt(dtype)
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dt.type_name}\'')
    return dt


def randn(*size, generator=None, dtype=None, requires_grad: bool = False,
          device=None) -> Tensor:
    """Samples from N(0, 1), PyTorch's numbers for the same seed."""
    _check_device(device)
    if not size:
        raise _signatures_error("randn", "", "tuple of ints size")
    data = np.empty(_shape(size, "randn"), _float_dt(dtype, "normal_kernel_cpu").np)
    _gen.normal_into(data, 0.0, 1.0, generator)
    return _finish(data, requires_grad)


def rand(*size, generator=None, dtype=None, requires_grad: bool = False,
         device=None) -> Tensor:
    """Samples from U[0, 1), PyTorch's numbers for the same seed."""
    _check_device(device)
    if not size:
        raise _signatures_error("rand", "", "tuple of ints size")
    data = np.empty(_shape(size, "rand"), _float_dt(dtype, "check_uniform_bounds").np)
    _gen.uniform_into(data, 0.0, 1.0, generator)
    return _finish(data, requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None,
            requires_grad: bool = False, device=None) -> Tensor:
    """Random integers in [low, high): `randint(high, size)` or `randint(low, high, size)`."""
    _check_device(device)
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high  # the randint(high, size) form
    elif high is None and size is not None:
        low, high = 0, low
    if size is None:
        got = ", ".join(type(v).__name__ for v in (low, high) if v is not None)
        raise _signatures_error("randint", got, "int high, tuple of ints size",
                                "int low, int high, tuple of ints size")
    shape = _shape((size,), "randint")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    data = np.empty(shape, _dtype.to_dtype(dtype or _dtype.int64).np)
    _gen.randint_into(data, low, high, generator)
    return _finish(data, requires_grad)


def randperm(n: int, *, generator=None, dtype=None, requires_grad: bool = False,
             device=None) -> Tensor:
    """A random permutation of 0..n-1 (int64 unless `dtype` says otherwise)."""
    _check_device(device)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    data = _gen.randperm_array(int(n), generator)
    return _finish(data.astype(_dtype.to_dtype(dtype or _dtype.int64).np, copy=False),
                   requires_grad)


def _sample_inplace(t: Tensor, fill, kernel: str, *args, generator=None) -> Tensor:
    """Fill `t` with `fill(data, *args, generator)`: one in-place op (version + 1)."""
    from .autograd.inplace import check_inplace

    check_inplace(t)
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{t.dtype.type_name}\'')
    fill(t._data, *args, generator)
    t._version_counter.value += 1
    return t


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    """Fill `t` in place with samples from U[a, b), PyTorch's numbers for the same seed."""
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_num_text(a)} > to={_num_text(b)}")
    return _sample_inplace(t, _gen.uniform_into, "check_uniform_bounds", a, b,
                           generator=generator)


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill `t` in place with samples from N(mean, std**2), PyTorch's numbers."""
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num_text(std)}")
    return _sample_inplace(t, _gen.normal_into, "normal_kernel_cpu", mean, std,
                           generator=generator)


def _num_text(v) -> str:
    """A number as PyTorch's C++ prints it in these messages (1.0 as 1, 0.5 as 0.5)."""
    return f"{v:g}"


randn_like = _like(randn)
rand_like = _like(rand)
