"""Factory functions: tensor, zeros, ones, full, eye, arange, randn, rand, *_like."""

from __future__ import annotations

import warnings

import numpy as np

from . import _dtype
from . import _generator as _gen
from .ops._util import copy_like, layout_matters
from .tensor import Tensor, warn_scalar_conversion


def _finish(data: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(data)
    if requires_grad:
        t._set_requires_grad(
            True, "Only Tensors of floating point and complex dtype can require gradients"
        )
    return t


def _shape(size, name: str) -> tuple:
    """The shape given to factory `name` (as `f(2, 3)` or `f((2, 3))`), checked like PyTorch."""
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    elif len(size) == 1 and not isinstance(size[0], (int, np.integer)):
        raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                        f"not {type(size[0]).__name__}")
    for i, s in enumerate(size):
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{type(s).__name__}\"")
    if any(s < 0 for s in size):
        if name == "zeros":  # PyTorch checks zeros with its own message
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: "
                           f"[{', '.join(map(str, size))}]")
    return tuple(int(s) for s in size)


def _scalar_dtype(v, top: bool) -> _dtype.dtype:
    """The dtype PyTorch infers for one element (`top`: it is the whole `data`)."""
    if isinstance(v, bool):
        return _dtype.bool_
    if isinstance(v, np.generic):  # a numpy scalar keeps its own type (np.float64 too)
        if v.dtype.kind in "biuf":
            return _numpy_dtype(v.dtype)
    elif isinstance(v, int):
        return _dtype.int64
    elif isinstance(v, float):
        return _dtype.get_default_dtype()
    elif isinstance(v, Tensor):
        return v.dtype
    elif isinstance(v, str):  # PyTorch treats a string as a sequence of characters
        if top:
            raise TypeError("new(): invalid data type 'str'")
        raise ValueError("too many dimensions 'str'")
    if isinstance(v, (complex, np.complexfloating)):
        raise _no_complex()
    raise RuntimeError(f"Could not infer dtype of {type(v).__name__}")


_PYTHON_SCALARS = (bool, int, float)


def _no_complex() -> NotImplementedError:
    return NotImplementedError("minigrad supports float32, float64, int64 and bool tensors, "
                               "not complex numbers")


def _numpy_dtype(np_dtype: np.dtype) -> _dtype.dtype:
    """The dtype of numpy data, which PyTorch keeps as it is: another width (int32,
    uint8, float16, ...) is refused rather than quietly widened."""
    try:
        return _dtype.from_numpy_dtype(np_dtype)
    except TypeError:
        raise NotImplementedError(
            f"minigrad supports the dtypes float32, float64, int64 and bool; numpy {np_dtype} "
            f"data would keep its dtype in PyTorch: convert it first (for example with "
            f"`.astype(np.{'float32' if np_dtype.kind == 'f' else 'int64'})`) or pass dtype="
        ) from None


def _leaf_types(seq, out: set) -> None:
    """Add the types of the non-list elements of nested lists `seq` to `out` (one C-level
    pass per innermost list: this runs on every `tensor([...])`)."""
    types = set(map(type, seq))
    if list in types or tuple in types:
        for v in seq:
            if isinstance(v, (list, tuple)):
                _leaf_types(v, out)
            else:
                out.add(type(v))
    else:
        out |= types


def _infer_dtype(data) -> _dtype.dtype:
    """PyTorch's dtype for `tensor(data)`: the highest of bool < int64 < float32 <
    float64 over the elements. A Python float counts as the default dtype; a numpy
    float64 scalar as float64."""
    if isinstance(data, np.ndarray):
        if data.dtype.kind in "biuf":
            return _numpy_dtype(data.dtype)
        if data.dtype.kind == "c":
            raise _no_complex()
        raise TypeError(f"Could not infer dtype of numpy {data.dtype}")
    if not isinstance(data, (list, tuple)):
        return _scalar_dtype(data, top=True)
    types: set = set()
    _leaf_types(data, types)
    return _list_dtype(data, types)


def _list_dtype(data, types: set) -> _dtype.dtype:
    """`_infer_dtype` of nested lists whose element types (`_leaf_types`) are `types`."""
    if not types.issubset(_PYTHON_SCALARS):  # numpy scalars, tensors, or an error to report
        return _walk_dtype(data)
    if float in types or not types:
        return _dtype.get_default_dtype()
    return _dtype.int64 if int in types else _dtype.bool_


def _walk_dtype(data) -> _dtype.dtype:
    """`_infer_dtype` element by element (needed once numpy scalars or tensors appear)."""
    best = None
    pending = [data]
    while pending:
        for v in pending.pop():
            if isinstance(v, (list, tuple)):
                pending.append(v)
                continue
            d = _scalar_dtype(v, top=False)
            if best is None or d._rank > best._rank:
                best = d
    return best or _dtype.get_default_dtype()


def _ragged_error(data, dt: _dtype.dtype) -> Exception | None:
    """PyTorch's error for a nested list that is not a box, or None if it is one."""
    shape = []
    v = data
    while isinstance(v, (list, tuple)):
        shape.append(len(v))
        if not v:
            break
        v = v[0]

    def check(seq, dim: int) -> Exception | None:
        if len(seq) != shape[dim]:
            return ValueError(f"expected sequence of length {shape[dim]} at dim {dim} "
                              f"(got {len(seq)})")
        for item in seq:
            if dim + 1 < len(shape):
                if not isinstance(item, (list, tuple)):
                    return TypeError("not a sequence")
                err = check(item, dim + 1)
                if err is not None:
                    return err
            elif isinstance(item, (list, tuple)):
                name = type(item).__name__
                return TypeError(f"must be real number, not {name}" if dt.is_floating_point
                                 else f"'{name}' object cannot be interpreted as an integer")
        return None

    return check(data, 0) if isinstance(data, (list, tuple)) else None


def _build_error(data, dt: _dtype.dtype, err: Exception) -> Exception:
    """PyTorch's error for `data` numpy could not turn into an array of `dt`."""
    ragged = _ragged_error(data, dt)
    if ragged is not None:
        return ragged
    if dt is _dtype.int64 and (isinstance(err, OverflowError) or "NaN" in str(err)):
        items = _flatten(data) if isinstance(data, (list, tuple)) else [data]
        if any(isinstance(v, float) for v in items):  # nan, inf or too large
            return RuntimeError("value cannot be converted to type int64 without overflow")
        return ValueError("Overflow when unpacking long long")
    return ValueError(f"could not build a tensor from {type(data).__name__}: {err}")


_COPY_CONSTRUCT = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
    "or sourceTensor.detach().clone().requires_grad_(True), rather than "
    "minigrad.tensor(sourceTensor).")


def tensor(data, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A new leaf tensor holding a copy of `data` (nested lists, numbers, arrays)."""
    _check_device(device)
    if isinstance(data, Tensor):
        warnings.warn(_COPY_CONSTRUCT, UserWarning, stacklevel=2)
        data = data._data
    if isinstance(data, (list, tuple)):
        types: set = set()
        _leaf_types(data, types)
        dt = _dtype.to_dtype(dtype) if dtype is not None else _list_dtype(data, types)
        if any(issubclass(t, Tensor) for t in types):
            for x in _flatten(data):
                if isinstance(x, Tensor):
                    warn_scalar_conversion(x, stacklevel=3)
            data = [x.tolist() if isinstance(x, Tensor) else x for x in data]
    else:
        dt = _dtype.to_dtype(dtype) if dtype is not None else _infer_dtype(data)
    if dt is _dtype.int64 and isinstance(data, float) and not -2.0**63 <= data < 2.0**63:
        # numpy would cast a nan or out-of-range float scalar silently
        raise RuntimeError("value cannot be converted to type int64 without overflow")
    try:
        arr = np.array(data, dtype=dt.np)
    except (ValueError, TypeError, OverflowError) as err:
        raise _build_error(data, dt, err) from None
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
    return _finish(np.zeros(_shape(size, "zeros"), _dt(dtype).np), requires_grad)


def ones(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    _check_device(device)
    return _finish(np.ones(_shape(size, "ones"), _dt(dtype).np), requires_grad)


def empty(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """Like `zeros` (minigrad fills "uninitialised" memory with zeros)."""
    _check_device(device)
    return _finish(np.zeros(_shape(size, "empty"), _dt(dtype).np), requires_grad)


def full(size, fill_value, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    _check_device(device)
    if not isinstance(size, (tuple, list)):
        raise TypeError("full(): argument 'size' (position 1) must be tuple of ints, "
                        f"not {type(size).__name__}")
    if dtype is None:
        dtype = (_dtype.bool_ if isinstance(fill_value, bool) else
                 _dtype.int64 if isinstance(fill_value, int) else _dtype.get_default_dtype())
    return _finish(np.full(_shape((size,), "full"), fill_value, _dt(dtype).np), requires_grad)


def eye(n: int, m: int | None = None, dtype=None, requires_grad: bool = False,
        device=None) -> Tensor:
    _check_device(device)
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    return _finish(np.eye(n, m, dtype=_dt(dtype).np), requires_grad)


def _number(v):
    """A one-element tensor or numpy scalar as a Python number (PyTorch accepts both)."""
    return v.item() if isinstance(v, (Tensor, np.generic)) else v


def arange(start, end=None, step=1, dtype=None, requires_grad: bool = False,
           device=None) -> Tensor:
    """Evenly spaced values in [start, end); integer arguments give int64."""
    _check_device(device)
    start, end, step = _number(start), _number(end), _number(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_int = all(isinstance(v, int) for v in (start, end, step))
        dtype = _dtype.int64 if is_int else _dtype.get_default_dtype()
    dt = _dt(dtype)
    n = max(int(np.ceil((end - start) / step)), 0)
    data = (start + np.arange(n, dtype=np.float64) * step).astype(dt.np) \
        if dt.is_floating_point else np.arange(start, end, step, dtype=dt.np)
    return _finish(data, requires_grad)


def linspace(start, end, steps: int, dtype=None, requires_grad: bool = False) -> Tensor:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return _finish(np.linspace(start, end, steps).astype(_dt(dtype).np), requires_grad)


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
    from .tensor import check_inplace

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


def _laid_out_like(t: Tensor, out: Tensor) -> Tensor:
    """`out` (fresh, of t's shape) in t's memory layout: PyTorch's `*_like` factories
    keep it, so the zeros like a transposed tensor are transposed too."""
    if layout_matters(t._data):
        out._data = copy_like(out._data, t._data)
    return out


def _like(fn):
    def like(t: Tensor, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
        out = fn(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, device=device)
        return _laid_out_like(t, out)

    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = f"Like `{fn.__name__}`, with the shape (and dtype) of `t`."
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
randn_like = _like(randn)
rand_like = _like(rand)


def full_like(t: Tensor, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    out = full(tuple(t.shape), fill_value, dtype=dtype or t.dtype, requires_grad=requires_grad)
    return _laid_out_like(t, out)
