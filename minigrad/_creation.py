"""Factory functions: tensor, zeros, ones, full, eye, arange, randn, rand, *_like."""

from __future__ import annotations

import numpy as np

from . import _dtype
from .tensor import Tensor

_rng = np.random.Generator(np.random.PCG64(0))


def manual_seed(seed: int) -> None:
    """Seed minigrad's random generator (its numbers differ from PyTorch's)."""
    global _rng
    _rng = np.random.Generator(np.random.PCG64(int(seed)))


def _finish(data: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(data)
    if requires_grad:
        t._set_requires_grad(
            True, "Only Tensors of floating point and complex dtype can require gradients"
        )
    return t


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"size must contain ints, got {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"[{', '.join(map(str, size))}]")
    return tuple(int(s) for s in size)


def _infer_dtype(data) -> _dtype.dtype:
    arr = np.asarray(data)
    if arr.dtype == np.bool_:
        return _dtype.bool_
    if arr.dtype.kind in "iu":
        return _dtype.int64
    if arr.dtype.kind == "f":
        if isinstance(data, np.ndarray) and arr.dtype in (np.float32, np.float64):
            return _dtype.from_numpy_dtype(arr.dtype)
        return _dtype.get_default_dtype()
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def tensor(data, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A new leaf tensor holding a copy of `data` (nested lists, numbers, arrays)."""
    _check_device(device)
    if isinstance(data, Tensor):
        data = data._data
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flatten(data)):
        data = [x.tolist() if isinstance(x, Tensor) else x for x in data]
    dt = _dtype.to_dtype(dtype) if dtype is not None else _infer_dtype(data)
    try:
        arr = np.array(data, dtype=dt.np)
    except (ValueError, TypeError) as err:
        raise ValueError(f"could not build a tensor from {type(data).__name__}: {err}") from None
    return _finish(arr, requires_grad)


def _flatten(xs):
    for x in xs:
        if isinstance(x, (list, tuple)):
            yield from _flatten(x)
        else:
            yield x


def _check_device(device) -> None:
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"minigrad runs on the CPU only (got device={device!r})")


def _dt(dtype) -> _dtype.dtype:
    return _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()


def zeros(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    _check_device(device)
    return _finish(np.zeros(_shape(size), _dt(dtype).np), requires_grad)


def ones(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    _check_device(device)
    return _finish(np.ones(_shape(size), _dt(dtype).np), requires_grad)


def empty(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    return zeros(*size, dtype=dtype, requires_grad=requires_grad, device=device)


def full(size, fill_value, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    _check_device(device)
    if dtype is None:
        dtype = (_dtype.bool_ if isinstance(fill_value, bool) else
                 _dtype.int64 if isinstance(fill_value, int) else _dtype.get_default_dtype())
    return _finish(np.full(_shape((size,)), fill_value, _dt(dtype).np), requires_grad)


def eye(n: int, m: int | None = None, dtype=None, requires_grad: bool = False,
        device=None) -> Tensor:
    _check_device(device)
    return _finish(np.eye(n, m, dtype=_dt(dtype).np), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad: bool = False,
           device=None) -> Tensor:
    """Evenly spaced values in [start, end); integer arguments give int64."""
    _check_device(device)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        is_int = all(isinstance(v, int) for v in (start, end, step))
        dtype = _dtype.int64 if is_int else _dtype.get_default_dtype()
    dt = _dt(dtype)
    n = max(int(np.ceil((end - start) / step)), 0)
    data = (start + np.arange(n, dtype=np.float64) * step).astype(dt.np) \
        if dt.is_floating_point else np.arange(start, end, step, dtype=dt.np)
    return _finish(data, requires_grad)


def linspace(start, end, steps: int, dtype=None, requires_grad: bool = False) -> Tensor:
    return _finish(np.linspace(start, end, steps).astype(_dt(dtype).np), requires_grad)


def randn(*size, dtype=None, requires_grad: bool = False, generator=None, device=None) -> Tensor:
    """Standard normal samples from minigrad's generator (see `manual_seed`)."""
    _check_device(device)
    return _finish(_rng.standard_normal(_shape(size)).astype(_dt(dtype).np), requires_grad)


def rand(*size, dtype=None, requires_grad: bool = False, generator=None, device=None) -> Tensor:
    """Uniform samples in [0, 1)."""
    _check_device(device)
    return _finish(_rng.random(_shape(size)).astype(_dt(dtype).np), requires_grad)


def randint(low, high=None, size=(), dtype=None) -> Tensor:
    if high is None:
        low, high = 0, low
    return _finish(_rng.integers(low, high, size=tuple(size)).astype(
        _dtype.to_dtype(dtype or _dtype.int64).np), False)


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill `t` in place with uniform samples (one in-place op: version + 1)."""
    from .tensor import check_inplace

    check_inplace(t)
    t._data[...] = _rng.uniform(a, b, t._data.shape)
    t._version_counter.value += 1
    return t


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    from .tensor import check_inplace

    check_inplace(t)
    t._data[...] = _rng.normal(mean, std, t._data.shape)
    t._version_counter.value += 1
    return t


def _like(fn):
    def like(t: Tensor, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
        return fn(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, device=device)

    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = f"Like `{fn.__name__}`, with the shape (and dtype) of `t`."
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
randn_like = _like(randn)
rand_like = _like(rand)


def full_like(t: Tensor, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    return full(tuple(t.shape), fill_value, dtype=dtype or t.dtype, requires_grad=requires_grad)
