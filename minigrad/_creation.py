"""Factory functions: tensor, zeros, ones, full, eye, arange, randn, rand, *_like."""

from __future__ import annotations

import warnings

import numpy as np

from . import _args, _device, _dtype, _memory_format
from ._registry import attach
from ._warn import Once, warn_user
from .arrays.layout import copy_like, keeps_strides, layout_matters
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
    return _args.size_arg(size, name)


def _scalar_dtype(v) -> _dtype.dtype:
    """The dtype PyTorch infers for one element of the data (or the whole of it)."""
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
    elif isinstance(v, (str, bytes)):  # (a string at the head of the data: `_first_path`)
        raise TypeError(f"new(): invalid data type '{type(v).__name__}'")
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
    return _dtype.from_numpy_dtype(np_dtype)


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
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{data.dtype.type.__name__}. The only "
            "supported types are: float64, float32, float16, complex64, complex128, int64, "
            "int32, int16, int8, uint64, uint32, uint16, uint8, and bool.")
    if not isinstance(data, (list, tuple)):
        return _scalar_dtype(data)
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
            d = _scalar_dtype(v)
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
    for v in (_flatten(data) if isinstance(data, (list, tuple)) else [data]):
        if not isinstance(v, (int, float, np.generic)):  # a string or None in the data
            name = type(v).__name__
            return TypeError(f"must be real number, not {name}" if dt.is_floating_point
                             else f"'{name}' object cannot be interpreted as an integer")
    return ValueError(f"could not build a tensor from {type(data).__name__}: {err}")


_COPY_CONSTRUCT = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
    "or sourceTensor.detach().clone().requires_grad_(True), rather than "
    "minigrad.tensor(sourceTensor).")


def tensor(data=_args.REQUIRED, *extra, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of `data` (nested lists, numbers, arrays)."""
    if data is _args.REQUIRED:
        raise TypeError('tensor() missing 1 required positional arguments: "data"')
    if extra:
        raise TypeError(f"tensor() takes 1 positional argument but {1 + len(extra)} were given")
    dtype = _dtype.dtype_arg(dtype, "tensor")
    requires_grad = _args.flag(requires_grad, "tensor", none_ok=False)
    _check_device(device)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, Tensor):
        warnings.warn(_COPY_CONSTRUCT, UserWarning, stacklevel=2)
        data = data._data
    if isinstance(data, range):
        data = list(data)
    if isinstance(data, (list, tuple)):
        depth = _first_path(data)
        types: set = set()
        _leaf_types(data, types)
        dt = dtype if dtype is not None else _list_dtype(data, types)
        if any(issubclass(t, (Tensor, range)) for t in types):
            for x in _flatten(data):
                if isinstance(x, Tensor):
                    warn_scalar_conversion(x, stacklevel=3)
            data = _plain_lists(data, depth)
    else:
        dt = dtype if dtype is not None else _infer_dtype(data)
    if dt is _dtype.int64 and isinstance(data, float) and not -2.0**63 <= data < 2.0**63:
        # numpy would cast a nan or out-of-range float scalar silently
        raise RuntimeError("value cannot be converted to type int64 without overflow")
    try:
        # PyTorch stores 1e40 as float32 inf, and casts an array's nan to int64, silently
        with np.errstate(over="ignore", invalid="ignore"):
            arr = np.array(data, dtype=dt.np)
    except (ValueError, TypeError, OverflowError) as err:
        raise _build_error(data, dt, err) from None
    if not arr.size and isinstance(data, np.ndarray) and arr.ndim:
        arr = _numpy_strides(arr, data)
    return _finish(arr, requires_grad)


def _numpy_strides(arr: np.ndarray, source: np.ndarray) -> np.ndarray:
    """An array of no elements with `source`'s strides: PyTorch keeps a numpy array's
    strides (`tensor(np.zeros((0, 3))).stride()` is numpy's (0, 0))."""
    return np.lib.stride_tricks.as_strided(
        arr, strides=[s // source.itemsize * arr.itemsize for s in source.strides])


def _first_path(data) -> int:
    """How deep the nested lists go along their first elements (PyTorch reads the
    shape there). A string on that path is a sequence without end to PyTorch."""
    depth, v = 0, data
    while isinstance(v, (list, tuple, range)):
        depth += 1
        if not len(v):
            break
        v = v[0]
    if isinstance(v, str):
        raise ValueError("too many dimensions 'str'")
    return depth


def _plain_lists(seq, depth: int) -> list:
    """`seq` with tensors and ranges turned into lists and numbers: a tensor where the
    shape has lists stands for its elements; where it has numbers, it must be one
    number (PyTorch calls `item()` on it)."""
    out = []
    for v in seq:
        if isinstance(v, Tensor):
            if depth > 1:
                v = v.tolist()
            elif v._data.size != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            else:
                v = v.item()
        if isinstance(v, (list, tuple, range)):
            v = _plain_lists(v, depth - 1)
        out.append(v)
    return out


def _flatten(xs):
    for x in xs:
        if isinstance(x, (list, tuple)):
            yield from _flatten(x)
        else:
            yield x


_check_device = _device.check


def _dt(dtype) -> _dtype.dtype:
    return _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()


def _options(fn: str, dtype, requires_grad, device) -> tuple[_dtype.dtype, bool]:
    """The keyword arguments every factory takes, checked as PyTorch checks them; the
    dtype defaults to the default float dtype."""
    d = _dtype.dtype_arg(dtype, fn)
    requires_grad = _args.flag(requires_grad, fn)
    _check_device(device)
    return d or _dtype.get_default_dtype(), requires_grad


def _filled(fn: str, size: tuple, make, dtype, requires_grad, device) -> Tensor:
    """A new tensor of the shape `size` (as given to `fn`), made by `make(shape, np_dtype)`."""
    d, requires_grad = _options(fn, dtype, requires_grad, device)
    shape = _shape(size, fn)
    return _finish(_args.allocate(lambda: make(shape, d.np), shape, d), requires_grad)


def zeros(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A tensor of zeros: `zeros(2, 3)` or `zeros((2, 3))`."""
    return _filled("zeros", size, np.zeros, dtype, requires_grad, device)


def ones(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A tensor of ones: `ones(2, 3)` or `ones((2, 3))`."""
    return _filled("ones", size, np.ones, dtype, requires_grad, device)


def empty(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """Like `zeros` (minigrad fills "uninitialised" memory with zeros)."""
    return _filled("empty", size, np.zeros, dtype, requires_grad, device)


def _fill_value(value, fn: str, dtype) -> tuple:
    """`full`'s fill value and the dtype of the result: the value's own kind (bool,
    int64, default float) unless `dtype` is given; a value the dtype cannot hold is
    PyTorch's error, not numpy's silent wrap-around or inf."""
    value = _args.number_arg(value, fn, "fill_value", 2)
    if isinstance(value, complex):
        raise _no_complex()
    if dtype is None:
        dtype = (_dtype.bool_ if isinstance(value, bool) else
                 _dtype.int64 if isinstance(value, int) else _dtype.get_default_dtype())
    _dtype.check_scalar_fits(value, dtype)
    return value, dtype


def full(size=_args.REQUIRED, fill_value=_args.REQUIRED, *, dtype=None,
         requires_grad: bool = False, device=None) -> Tensor:
    """A tensor of shape `size` filled with `fill_value`."""
    for name, v in (("size", size), ("fill_value", fill_value)):
        if v is _args.REQUIRED:
            raise TypeError(f'full() missing 1 required positional arguments: "{name}"')
    if not isinstance(size, (tuple, list)):
        raise TypeError("full(): argument 'size' (position 1) must be tuple of ints, "
                        f"not {type(size).__name__}")
    shape = _shape((size,), "full")
    value, dtype = _fill_value(fill_value, "full", _dtype.dtype_arg(dtype, "full"))
    d, requires_grad = _options("full", dtype, requires_grad, device)
    return _finish(_args.allocate(lambda: np.full(shape, value, d.np), shape, d), requires_grad)


def eye(n=_args.REQUIRED, m=_args.REQUIRED, *, dtype=None, requires_grad: bool = False,
        device=None) -> Tensor:
    """The identity matrix (`n` x `m`, square by default)."""
    if m is _args.REQUIRED:
        n, m = _args.int_arg(n, "eye", "n", 1), None
    elif not (_args.is_int(n) and _args.is_int(m)):
        raise _args.combination_error("eye", (n, m), {}, [
            "int n, *, Tensor out = None", "int n, int m, *, Tensor out = None"])
    else:
        n, m = _args.int_arg(n, "eye", "n", 1), _args.int_arg(m, "eye", "m", 2)
    d, requires_grad = _options("eye", dtype, requires_grad, device)
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    shape = (n, n if m is None else m)
    return _finish(_args.allocate(lambda: np.eye(n, m, dtype=d.np), shape, d), requires_grad)


_ARANGE_HEADS = ["Number end, *, Tensor out = None", "Number start, Number end, *",
                 "Number start, Number end, Number step = 1, *, Tensor out = None"]


def _arange_bounds(args: tuple, kwargs: dict) -> tuple:
    """`arange`'s (start, end, step) from its one to three positional Numbers.

    PyTorch names the bad argument when a single signature takes that many arguments
    (only `arange(end)` takes one), and lists every signature otherwise."""
    if not 1 <= len(args) <= 3 or not all(map(_args.is_number, args)):
        if len(args) == 1 and not kwargs:
            _args.number_arg(args[0], "arange", "end", 1)
        raise _arange_error(args, kwargs)
    values = [_args.number_arg(v, "arange", "end", 1) for v in args]
    if len(values) == 1:
        return 0, values[0], 1
    return values[0], values[1], (values[2] if len(values) == 3 else 1)


def _arange_error(args: tuple, kwargs: dict) -> TypeError:
    return _args.combination_error("arange", args, kwargs, _ARANGE_HEADS)


def _bounds_by_keyword(args: tuple, bounds: dict, given: dict) -> tuple:
    """`arange`'s positional bounds with those given by keyword put in their places
    (`arange(0, end=3)`): the one signature they complete, `(end)`, `(start, end)` or
    `(start, end, step)`, else PyTorch's errors."""
    for params in (("end",), ("start", "end"), ("start", "end", "step")):
        named = params[len(args):]
        required = [p for p in named if p != "step"]
        if (len(args) <= len(params) and set(bounds) <= set(named)
                and all(p in bounds for p in required)):
            return (*args, *(bounds[p] for p in named if p in bounds))
    if not args and "end" not in bounds:
        raise TypeError('arange() missing 1 required positional arguments: "end"')
    raise _arange_error(args, {**bounds, **given})


def arange(*args, dtype=None, requires_grad: bool = False, device=None, **bounds) -> Tensor:
    """Evenly spaced values in [start, end): `arange(end)`, `arange(start, end)` or
    `arange(start, end, step)`, each bound positional or by name (`start=`, `end=`,
    `step=`, kept in the order given: PyTorch's errors list them); integer arguments
    give int64."""
    for name in bounds:
        if name not in ("start", "end", "step"):
            raise TypeError(f"arange() got an unexpected keyword argument '{name}'")
    given = {k: v for k, v in (("dtype", dtype),) if v is not None}
    if bounds:
        args = _bounds_by_keyword(args, bounds, given)
    if dtype is not None and not isinstance(dtype, _dtype.dtype) and \
            dtype not in (float, int, bool):
        raise _arange_error(args, given)
    start, end, step = _arange_bounds(args, given)
    for v in (start, end, step):
        if isinstance(v, complex):
            raise _no_complex()
    if dtype is None:
        is_int = all(isinstance(v, int) for v in (start, end, step))
        dtype = _dtype.int64 if is_int else _dtype.get_default_dtype()
    d, requires_grad = _options("arange", dtype, requires_grad, device)
    if d is _dtype.bool_:
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\'')
    if not step or step != step:
        raise RuntimeError("step must be nonzero")
    if not all(np.isfinite([start, end])):
        raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if d is _dtype.int64:  # checked as given, then PyTorch counts in int64: truncated
        for v in (start, end, step):
            _dtype.check_scalar_fits(v, d)
        if not int(step):  # (a fractional step)
            raise ValueError("step must be nonzero")
        start, end, step = int(start), int(end), int(step)
    n = max(int(np.ceil((end - start) / step)), 0)
    shape = (n,)
    if d.is_floating_point:
        data = _args.allocate(
            lambda: (start + np.arange(n, dtype=np.float64) * step).astype(d.np), shape, d)
    else:
        data = _args.allocate(lambda: np.arange(start, end, step, dtype=d.np), shape, d)
    return _finish(data, requires_grad)


def _linspace_error(args: tuple, kwargs: dict) -> TypeError:
    heads = ["Tensor start, Tensor end, int steps", "Number start, Tensor end, int steps",
             "Tensor start, Number end, int steps", "Number start, Number end, int steps"]
    return _args.combination_error("linspace", args, kwargs,
                                   [f"{h}, *, Tensor out = None" for h in heads])


def linspace(start=_args.REQUIRED, end=_args.REQUIRED, steps=_args.REQUIRED, *, dtype=None,
             requires_grad: bool = False, device=None) -> Tensor:
    """`steps` evenly spaced values from `start` to `end`, both included."""
    args = tuple(v for v in (start, end, steps) if v is not _args.REQUIRED)
    given = {k: v for k, v in (("dtype", dtype),) if v is not None}
    bounds = [(name, v) for name, v in (("start", start), ("end", end)) if isinstance(v, Tensor)]
    if any(v.dim() for _, v in bounds):
        got = " and ".join(f"{name} with {v.dim()} dimension(s)" for name, v in bounds)
        raise RuntimeError("linspace only supports 0-dimensional start and end tensors, "
                           f"but got {got}.")
    if (len(args) < 3 or not (_args.is_number(start) and _args.is_number(end))
            or not _args.is_int(steps) or (given and not isinstance(dtype, _dtype.dtype))):
        raise _linspace_error(args, given)
    start, end = _args.as_number(start), _args.as_number(end)
    steps = _args.int_arg(steps, "linspace", "steps", 3)
    d, requires_grad = _options("linspace", dtype, requires_grad, device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if d is _dtype.bool_:
        raise NotImplementedError('"linspace_cpu" not implemented for \'Bool\'')
    if d.is_floating_point:
        data = _args.allocate(lambda: np.linspace(start, end, steps).astype(d.np), (steps,), d)
    else:
        data = _args.allocate(lambda: _int_linspace(start, end, steps, d), (steps,), d)
    return _finish(data, requires_grad)


def _int_linspace(start, end, steps: int, d: _dtype.dtype) -> np.ndarray:
    """PyTorch's integer linspace: the bounds truncated to integers, the points computed
    in float64 from the start for the first half and from the end for the second, each
    then truncated."""
    start, end = int(start), int(end)
    if steps == 1:
        return np.array([start], dtype=d.np)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    i = np.arange(steps)
    half = steps // 2
    points = np.where(i < half, start + step * i, end - step * (steps - i - 1))
    return np.trunc(points).astype(d.np)


_READ_ONLY = Once()  # (PyTorch warns once per process)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing memory with a numpy array (float32/float64/int64/bool). A
    read-only array is shared too, with PyTorch's warning (once): an in-place op on
    the tensor then fails."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    _dtype.from_numpy_dtype(arr.dtype)
    if not arr.flags.writeable and _READ_ONLY.due():
        warn_user(
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior. You "
            "may want to copy the array to protect its data or make it writable before "
            "converting it to a tensor. This type of warning will be suppressed for the rest "
            "of this program.")
    return Tensor._make(arr)


def _laid_out_like(t: Tensor, out: Tensor, fn: str = "",
                   memory_format: _memory_format.memory_format = _memory_format.preserve_format
                   ) -> Tensor:
    """`out` (fresh, of t's shape) in t's memory layout: PyTorch's `*_like` factories
    keep it (`preserve_format`), so the zeros like a transposed tensor are transposed
    too; with `contiguous_format`, row-major as made."""
    if memory_format is not _memory_format.preserve_format and \
            _memory_format.row_major(fn, memory_format):
        return out
    if layout_matters(t._data) or keeps_strides(t._data):
        out._data = copy_like(out._data, t._data)
    return out


def _like_input(t, fn: str, dtype) -> _dtype.dtype:
    """`*_like`'s checks: `t` must be a tensor; the dtype defaults to its own."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(t).__name__}")
    return _dtype.dtype_arg(dtype, fn) or t.dtype


def _like(fn):
    name = fn.__name__ + "_like"

    def like(t: Tensor, dtype=None, requires_grad: bool = False, device=None, *,
             memory_format: _memory_format.memory_format = _memory_format.preserve_format
             ) -> Tensor:
        d = _like_input(t, name, dtype)
        out = fn(tuple(t.shape), dtype=d, requires_grad=requires_grad, device=device)
        return _laid_out_like(t, out, name, memory_format)

    like.__name__ = name
    like.__doc__ = f"Like `{fn.__name__}`, with the shape (and dtype) of `t`."
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(t: Tensor, fill_value, dtype=None, requires_grad: bool = False,
              device=None, *,
              memory_format: _memory_format.memory_format = _memory_format.preserve_format
              ) -> Tensor:
    """Like `full`, with the shape (and dtype) of `t`."""
    d = _like_input(t, "full_like", dtype)
    value, d = _fill_value(fill_value, "full_like", d)
    out = full(tuple(t.shape), value, dtype=d, requires_grad=requires_grad, device=device)
    return _laid_out_like(t, out, "full_like", memory_format)


# -- the legacy constructors: Tensor(...), FloatTensor(...), ... ----------------------------


def legacy_tensor(*args, dtype=None, device=None) -> Tensor:
    """`Tensor(data)` (a copy of a list, or of a numpy array), `Tensor(*sizes)` (an
    uninitialised tensor; minigrad's are zeros) or `Tensor()` (empty), in float32,
    the way old tutorials and micrograd's tests make tensors. (`Tensor.__new__`.)"""
    d = _dtype.float32 if dtype is None else dtype
    _check_device(device)
    if not args:
        return empty(0, dtype=d)
    if all(_args.is_int(a) for a in args):
        return empty(*args, dtype=d)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, Tensor):
            if data.dtype is not d:
                raise TypeError(f"expected {_options_text(d)} (got {_options_text(data.dtype)})")
            return data.detach()  # (PyTorch's alias: the same memory)
        if isinstance(data, (list, tuple, np.ndarray)):
            return tensor(data, dtype=d)
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    bad = next(i for i, a in enumerate(args) if not _args.is_int(a))
    raise _args.unpack_error("new", "size", bad + 1,
                             f"type must be tuple of ints,but got {_args.type_name(args[bad])}")


def _options_text(d: _dtype.dtype) -> str:
    """How PyTorch's message shows a tensor's options (C++'s names for the dtype)."""
    name = {"float32": "float", "float64": "double", "int64": "long int"}.get(d.name, d.name)
    return (f"TensorOptions(dtype={name}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


attach(Tensor, "_legacy_new", staticmethod(legacy_tensor))


def _typed_constructor(name: str, d: _dtype.dtype):
    def make(*args, device=None) -> Tensor:
        return legacy_tensor(*args, dtype=d, device=device)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"`{name}(data)` / `{name}(*sizes)`: the legacy constructor, in {d.name}."
    make.dtype = d
    return make


FloatTensor = _typed_constructor("FloatTensor", _dtype.float32)
DoubleTensor = _typed_constructor("DoubleTensor", _dtype.float64)
LongTensor = _typed_constructor("LongTensor", _dtype.int64)
BoolTensor = _typed_constructor("BoolTensor", _dtype.bool_)
