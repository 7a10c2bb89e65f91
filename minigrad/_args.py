"""Argument checks for the factories, with PyTorch's exception types and texts.

PyTorch parses every argument of a factory before it runs: a string where a number
belongs, a float where a size belongs or a number no int64 can hold is refused with
a TypeError naming the argument, never converted the way numpy would convert it.
These helpers say what PyTorch says, so a learner's search for the message finds
PyTorch's answers.
"""

from __future__ import annotations

import numpy as np

from . import _dtype
from .tensor import Tensor

REQUIRED = object()  # the default of an argument the caller must give

# The keyword arguments every factory signature ends with, as PyTorch prints them.
FACTORY_TAIL = ("minigrad.dtype dtype = None, minigrad.layout layout = None, "
                "minigrad.device device = None, bool pin_memory = False, "
                "bool requires_grad = False")


def type_name(value) -> str:
    return type(value).__name__


def flag(value, fn: str, name: str = "requires_grad", none_ok: bool = True) -> bool:
    """A bool argument: `requires_grad="yes"` is refused, not truth-tested. (PyTorch's
    factories take None for the default; `tensor()` does not.)"""
    if value is None and none_ok:
        return False
    if not isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type_name(value)}")
    return value


def is_int(value) -> bool:
    """Whether PyTorch takes `value` as an int: a Python or numpy integer (not a bool),
    or a 0-d integer tensor."""
    if isinstance(value, Tensor):
        return value._data.ndim == 0 and value.dtype is _dtype.int64
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value) -> bool:
    """Whether PyTorch takes `value` as a Number: a Python or numpy number, or a
    one-element tensor."""
    if isinstance(value, Tensor):
        return value._data.size == 1
    return isinstance(value, (int, float, complex, np.number, np.bool_))


def as_number(value):
    """A Number argument as a Python number."""
    return value.item() if isinstance(value, (Tensor, np.generic)) else value


def fits_int64(value: int) -> bool:
    return -(2**63) <= value < 2**63


def unpack_error(fn: str, arg: str, pos: int, error: str) -> TypeError:
    return TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {pos} "
                     f'with error "{error}"')


def int_list_arg(values: tuple, fn: str, name: str) -> tuple:
    """An int-list argument given as `f(2, 3)` or `f((2, 3))` (a shape), parsed as
    PyTorch parses one: ints only (numpy ints and 0-d int tensors too), each fitting
    an int64."""
    if len(values) == 1 and not is_int(values[0]):
        seq = values[0]
        if not isinstance(seq, (tuple, list)):  # (minigrad.Size is a tuple)
            raise TypeError(f"{fn}(): argument '{name}' (position 1) must be tuple of ints, "
                            f"not {type_name(seq)}")
        if seq and not is_int(seq[0]):  # PyTorch looks at the first element first
            raise TypeError(f"{fn}(): argument '{name}' (position 1) must be tuple of ints, but "
                            f"found element of type {type_name(seq[0])} at pos 0")
        values = tuple(seq)
    elif len(values) > 1 and isinstance(values[0], (tuple, list)):
        raise TypeError(f"{fn}() takes 1 positional argument but {len(values)} were given")
    ints = []
    for i, v in enumerate(values):
        if not (is_int(v) or isinstance(v, bool)):
            raise unpack_error(fn, name, i + 1,
                               f"type must be tuple of ints,but got {type_name(v)}")
        v = int(v)
        if not fits_int64(v):
            raise unpack_error(fn, name, i + 1, "Overflow when unpacking long long")
        ints.append(v)
    return tuple(ints)


def size_arg(size: tuple, fn: str) -> tuple:
    """The shape given to factory `fn` as `f(2, 3)` or `f((2, 3))`: an int list
    (`int_list_arg`) with no negative size."""
    if not size:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')
    dims = int_list_arg(size, fn, "size")
    if any(s < 0 for s in dims):
        if fn == "zeros":  # PyTorch checks zeros with its own message
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(dims)}: "
                           f"[{', '.join(map(str, dims))}]")
    return dims


def view_shape(shape: tuple, fn: str, name: str) -> tuple:
    """The new shape of `view` / `reshape` / `expand` (an int list). `view` also takes
    a dtype, so PyTorch lists both of its signatures when the argument is neither."""
    if fn == "view" and ((len(shape) == 1 and not (is_int(shape[0]) or isinstance(
            shape[0], (tuple, list)))) or (len(shape) > 1 and not is_int(shape[0]))):
        raise combination_error("view", shape, {}, ["minigrad.dtype dtype", "tuple of ints size"],
                                tail=False)
    return int_list_arg(shape, fn, name)


def int_arg(value, fn: str, name: str, pos: int) -> int:
    """An int argument (`eye(n)`, `linspace(..., steps)`)."""
    if not is_int(value):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, "
                        f"not {type_name(value)}")
    value = int(value)
    if not fits_int64(value):
        raise ValueError("Overflow when unpacking long long")
    return value


def number_arg(value, fn: str, name: str, pos: int):
    """A Number argument (`full`'s fill value, `arange`'s bounds), as a Python number.
    Complex numbers are left to the caller (minigrad has no complex dtype)."""
    if not is_number(value):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Number, "
                        f"not {type_name(value)}")
    value = as_number(value)
    if isinstance(value, int) and not isinstance(value, bool):
        _dtype.check_int_range(value)  # beyond int64 and uint64: an OverflowError
    return value


def fill_number(x: Tensor, value):
    """`fill_`'s value: a tensor (checked by `fill_`) or a Number x's dtype can hold."""
    if isinstance(value, Tensor):
        return value
    if not is_number(value):
        why = ("      didn't match because some of the arguments have invalid types: "
               f"(!{type_name(value)}!)\n")
        raise TypeError(f"fill_() received an invalid combination of arguments - got "
                        f"({type_name(value)}), but expected one of:\n"
                        f" * (Tensor value)\n{why} * (Number value)\n{why}")
    number = as_number(value)
    if isinstance(number, int) and not isinstance(number, bool):
        _dtype.check_int_range(number)
    if not isinstance(number, complex):
        _dtype.check_scalar_fits(number, x.dtype)
    return value


# clamp's two signatures, as PyTorch lists them when a call fits neither
CLAMP_HEADS = ["Tensor min = None, Tensor max = None", "Number min = None, Number max = None"]


def clamp_bounds(x: Tensor, fn: str, lo, hi, positional: int = 0) -> None:
    """`clamp`'s bounds: Numbers or tensors (or None); a number x's dtype cannot hold
    is refused, as PyTorch refuses it. (`positional`: how many of them were given
    positionally, which PyTorch's message shows apart.)"""
    bounds = (("min", lo), ("max", hi))
    args = tuple(v for _, v in bounds[:positional])
    given = {k: v for k, v in bounds[positional:] if v is not None}
    for v in (*args, *given.values()):
        if not (v is None or isinstance(v, Tensor) or is_number(v)):
            raise combination_error(fn, args, given, CLAMP_HEADS, tail=False)
    for v in (lo, hi):
        if v is None:
            continue
        if isinstance(v, int) and not isinstance(v, bool):
            _dtype.check_int_range(v)
        if isinstance(v, (int, float)):
            _dtype.check_scalar_fits(v, x.dtype)


def combination_error(fn: str, args: tuple, kwargs: dict, heads: list[str],
                      tail: bool = True) -> TypeError:
    """PyTorch's error when no signature of an overloaded function fits: what it got,
    and every signature (`heads`: each one up to the keyword arguments the factories
    all share, which `tail` adds). Under a signature that takes as many arguments as
    were given, PyTorch says why it still did not match: a keyword it lacks, or the
    arguments of the wrong type (marked `!str!`)."""
    lines = []
    for head in heads:
        option = f"{head}, {FACTORY_TAIL}" if tail else head
        lines.append(f" * ({option})")
        why = _why_not(option, args, kwargs)
        if why:
            lines.append(f"      didn't match because {why}")
    return TypeError(f"{fn}() received an invalid combination of arguments - got "
                     f"{_given(args, kwargs)}, but expected one of:\n" + "\n".join(lines) + "\n")


def _given(args: tuple, kwargs: dict) -> str:
    """`(float, int)`, `(dim=str, )`: what a call got, in PyTorch's formatting (which
    lists the keyword arguments last given first)."""
    parts = [f"{type_name(a)}, " for a in args] + [f"{k}={type_name(v)}, "
                                                   for k, v in reversed(kwargs.items())]
    text = "".join(parts)
    return f"({text[:-2] if args else text})"


def _why_not(option: str, args: tuple, kwargs: dict) -> str | None:
    """PyTorch's reading of one signature, as its message shows it. The signature is
    cut at ", " into arguments, each "type name" split at its last space (so `*` and
    the empty `()` count as one argument, and `bool keepdim = False` is named
    "False"): only a signature with as many arguments as were given gets a reason."""
    params = [(p[:p.rfind(" ")] if " " in p else "", p[p.rfind(" ") + 1:])
              for p in option.split(", ")]
    if len(params) != len(args) + len(kwargs):
        return None
    start = max(len(params) - len(kwargs), 0)
    names = [name for _, name in params[start:]]
    unmatched = [k for k in reversed(kwargs) if k not in names]  # (last given first)
    if unmatched:
        return "some of the keywords were incorrect: " + ", ".join(unmatched)
    given = list(args) + [kwargs[name] for _, name in params[len(args):len(args) + len(kwargs)]]
    text = ""
    for i, ((kind, name), value) in enumerate(zip(params, given)):
        shown = (f"{name}=" if i >= len(args) else "") + type_name(value)
        text += (shown if _matches(kind, value) else f"!{shown}!") + ", "
    return f"some of the arguments have invalid types: ({text[:-2] if args else text})"


def _matches(kind: str, value) -> bool:
    """Whether PyTorch's message counts `value` as of type `kind` (by type name only)."""
    accepted = {"float": ("float", "int"), "int": ("int",)}.get(kind, (kind,))
    return type_name(value) in accepted


def storage_check(shape: tuple, itemsize: int) -> None:
    """PyTorch's overflow checks on a new tensor's strides and byte size (before it
    asks for any memory)."""
    stride = 1
    for n in reversed(shape[1:]):
        stride *= max(n, 1)
        if stride >= 2**63:
            raise RuntimeError("Stride calculation overflowed")
    numel = 1
    for n in shape:
        numel *= n
    if numel * itemsize >= 2**63:
        raise RuntimeError("Storage size calculation overflowed with sizes="
                           f"[{', '.join(map(str, shape))}]")


def allocation_error(nbytes: int) -> RuntimeError:
    """PyTorch's CPU allocator's error when the system refuses the memory."""
    return RuntimeError(
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        f"memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)"
    )


def allocate(make, shape: tuple, d: _dtype.dtype) -> np.ndarray:
    """`make()` (a numpy constructor for an array of `shape` and dtype `d`) with
    PyTorch's errors instead of numpy's when the size is impossible."""
    storage_check(shape, d.itemsize)
    try:
        return make()
    except (MemoryError, ValueError) as err:
        # (numpy says "array is too big" or "Maximum allowed size exceeded" for sizes
        # past its own limit, below PyTorch's overflow checks.)
        if isinstance(err, ValueError) and not ("exceeded" in str(err) or "big" in str(err)):
            raise
        nbytes = int(np.prod(shape, dtype=object)) * d.itemsize
        raise allocation_error(nbytes) from None
