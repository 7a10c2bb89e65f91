"""How a hand-written op becomes a public function, method or operator.

An op's own function (`arithmetic.mul(self, other)`) returns NotImplemented for an
operand it cannot take, as Python asks of an operator (`t * "a"`: Python then tries
the other operand and raises its own TypeError). Called by name, PyTorch raises its
TypeError instead, and `minigrad.mul(2, t)` takes a number first: these wrappers give
the op those forms once, when it is declared (`declaration.declare`), never per call.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

import numpy as np

from .. import _args, _dtype
from ..tensor import Tensor, as_tensor_arg, not_an_operand

# What an operator like `t == x` or `t & x` accepts as `x`; for anything else it
# returns NotImplemented, so Python decides (`t == None` is False, `t < "a"` a TypeError).
OPERANDS = (Tensor, int, builtins.float, complex, np.generic, np.ndarray)


def _wrap_number(x) -> Tensor:
    """A Python number as the first argument of `minigrad.add(2, t)`: as in PyTorch, a
    0-d tensor (float64, int64 or bool) that promotes as the number itself would."""
    x = as_tensor_arg(x)
    if isinstance(x, Tensor):
        return x
    t = Tensor._make(np.array(x, _dtype.of_number(x).np))
    t._wrapped_number = True
    return t


def number_first(op: Callable) -> Callable:
    """The function form of `op`, which also takes a number first (`minigrad.mul(2, t)`)."""
    def fn(input, other, *args, **kwargs):  # noqa: A002 - PyTorch's argument name
        if not isinstance(input, Tensor):
            input = _wrap_number(input)
        result = op(input, other, *args, **kwargs)
        if result is NotImplemented:  # (the function's `other` comes second)
            raise not_an_operand(op.__name__, other, position=2)
        return result

    fn.__name__, fn.__qualname__, fn.__doc__ = op.__name__, op.__name__, op.__doc__
    return fn


def as_method(op: Callable, name: str | None = None, heads: list | None = None) -> Callable:
    """`op` as a method (`t.add(x)`): the operators take the op itself, which
    returns NotImplemented for an operand it cannot take, so Python can ask the
    other operand; called by name, that is PyTorch's TypeError."""
    name = name or op.__name__

    def call(self, other, *args, **kwargs):
        result = op(self, other, *args, **kwargs)
        if result is NotImplemented:
            if heads:  # (an overloaded op: PyTorch lists its signatures)
                raise _args.combination_error(name, (other,), {}, heads, tail=False)
            raise not_an_operand(name, other)
        return result

    call.__name__ = call.__qualname__ = name
    call.__doc__ = op.__doc__
    return call


def operator_of(fn: Callable, arrays: bool = True) -> Callable:
    """`fn` as an operator method: NotImplemented for operands it does not take (and,
    unless `arrays`, for a numpy array: see `not_with_ndarray`)."""
    takes = OPERANDS if arrays else tuple(t for t in OPERANDS if t is not np.ndarray)
    return lambda self, other: fn(self, other) if isinstance(other, takes) else NotImplemented


def not_with_ndarray(fn: Callable) -> Callable:
    """`fn` as an operator method PyTorch declines for a numpy array: a reflected
    `ndarray + t` (and `-`, `*`, `**`, `&`, ...) or an order comparison either way
    is then a TypeError, as in PyTorch; `t + ndarray`, `ndarray / t` and `==` work."""
    return lambda self, other: NotImplemented if isinstance(other, np.ndarray) else fn(self, other)


def reflected(fn: Callable) -> Callable:
    """`fn` with its operands swapped, for a reflected operator (`__rmatmul__`)."""
    return lambda self, other: fn(other, self) if isinstance(other, Tensor) else NotImplemented


def tensor_first(op: Callable, name: str, heads: list[str] | None = None,
                 alone_named: bool = False) -> Callable:
    """The function form of `op`, whose input must be a tensor: anything else is
    PyTorch's TypeError, the list of `heads` (an overloaded op's signatures) or, for
    an op of one signature, "argument 'input' must be Tensor" (and so, with
    `alone_named`, for an overloaded op given nothing else: `max(3)`)."""
    def fn(input, *args, **kwargs):  # noqa: A002 - PyTorch's argument name
        if not isinstance(input, Tensor):
            if heads is None or (alone_named and not args and not kwargs):
                raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, "
                                f"not {type(input).__name__}")
            raise _args.combination_error(name, (input, *args), kwargs, heads, tail=False)
        return op(input, *args, **kwargs)

    fn.__name__, fn.__qualname__, fn.__doc__ = op.__name__, op.__name__, op.__doc__
    fn.__wrapped__ = op
    return fn


def input_checked(op: Callable, name: str, argument: str = "input") -> Callable:
    """The function form of an op whose first parameter is a tensor: called with
    something else (`minigrad.exp(2.0)`), it gives PyTorch's TypeError, not the
    AttributeError the op meets on its first look at the input. The check runs only
    once the op has failed, so a call with a tensor pays one frame and nothing more.
    (A method needs none: its `self` is a tensor.)"""
    first = op.__code__.co_varnames[0]

    def fn(*args, **kwargs):
        try:
            return op(*args, **kwargs)
        except AttributeError:
            given = args[0] if args else kwargs.get(first, Tensor)
            if isinstance(given, Tensor) or given is Tensor:
                raise
            where = " (position 1)" if args else ""
            raise TypeError(f"{name}(): argument '{argument}'{where} must be Tensor, not "
                            f"{type(given).__name__}") from None

    fn.__name__, fn.__qualname__, fn.__doc__ = name, name, op.__doc__
    fn.__module__, fn.__wrapped__ = op.__module__, op
    return fn


def checked_input(input, name: str) -> Tensor:  # noqa: A002 - PyTorch's argument name
    """`input` itself, once it is a tensor (PyTorch's TypeError otherwise), for an op
    that would not otherwise look at it (`conj` of a real tensor, a dropout that is
    not training)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    return input


def takes_a_tensor_first(fn: Callable) -> bool:
    """Whether `fn`'s first parameter is declared a Tensor (and `fn` is not a wrapper
    that checks it already)."""
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_argcount or hasattr(fn, "__wrapped__"):
        return False
    return fn.__annotations__.get(code.co_varnames[0]) in ("Tensor", Tensor)
