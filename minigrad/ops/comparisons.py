"""Comparisons (`==`, `<`, ...) and bitwise ops (`&`, `|`, `^`, `~`): never
differentiable, so they record no node; their results are bool (or integer) tensors."""

from __future__ import annotations

import builtins

import numpy as np

from .. import _dtype
from .._args import combination_error, is_int, type_name
from ..arrays.broadcasting import broadcast_shape, check_inplace_shape
from ..arrays.layout import WRAPPED_NUMBER, in_result_layout
from ..autograd.inplace import (
    check_inplace,
    check_no_overlap,
    check_no_partial_overlap,
    finish_inplace,
)
from ..tensor import Tensor, as_tensor_arg
from .arithmetic import _check_out_dtype
from .declaration import declare
from .public_forms import OPERANDS, operator_of, tensor_first
from .reductions import _dims


def _compare(np_op, name: str):
    def compare(self: Tensor, other) -> Tensor:
        if isinstance(other, Tensor):
            broadcast_shape(self._data.shape, other._data.shape)
            other = other._data
        elif isinstance(other, int):
            _dtype.check_int_range(other)
        elif not isinstance(other, OPERANDS):
            raise TypeError(f"{name}(): argument 'other' must be Tensor or Number, "
                            f"not {type(other).__name__}")
        values = np.asarray(np_op(self._data, other))
        if isinstance(other, np.ndarray):  # (laid out by both operands, as PyTorch's)
            return Tensor._make(in_result_layout(values, self._data, other))
        return Tensor._make(in_result_layout(values, self._data, WRAPPED_NUMBER))

    compare.__name__ = name
    return compare


eq, ne = _compare(np.equal, "eq"), _compare(np.not_equal, "ne")
lt, le = _compare(np.less, "lt"), _compare(np.less_equal, "le")
gt, ge = _compare(np.greater, "gt"), _compare(np.greater_equal, "ge")


def _bitwise(np_op, name: str):
    """`&`, `|`, `^`: bitwise on integers, logical on bools; never differentiable."""
    def op(self: Tensor, other) -> Tensor:
        other = as_tensor_arg(other)
        dt = _dtype.result_type(self, other)
        if dt.is_floating_point:
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{dt.type_name}\'')
        if isinstance(other, Tensor):
            broadcast_shape(self._data.shape, other._data.shape)
            other = other._data.astype(dt.np, copy=False)
        elif other >= 2**63:  # PyTorch reads a uint64-sized int modulo 2**64
            other -= 2**64
        a = self._data.astype(dt.np, copy=False)
        values = np.asarray(np_op(a, other))
        arrays = (a, other) if isinstance(other, np.ndarray) else (a,)
        return Tensor._make(in_result_layout(values, *arrays))  # (as PyTorch lays it out)

    op.__name__ = name
    return op


bitwise_and = _bitwise(np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor")


def _bitwise_inplace(op):
    """`t &= x` (and `|=`, `^=`): `op`'s result written into t, which keeps its dtype
    and shape; its version goes up by one, as for every in-place op."""
    def op_(self: Tensor, other) -> Tensor:
        other = as_tensor_arg(other)
        check_inplace(self)
        _check_out_dtype(self, _dtype.result_type(self, other))
        if isinstance(other, Tensor):
            check_inplace_shape(self._data.shape, other._data.shape)
        check_no_overlap(self)
        check_no_partial_overlap(self, other)
        self._data[...] = op(self, other)._data
        finish_inplace(self, None)
        return self

    op_.__name__ = op.__name__ + "_"
    return op_


bitwise_and_ = _bitwise_inplace(bitwise_and)
bitwise_or_ = _bitwise_inplace(bitwise_or)
bitwise_xor_ = _bitwise_inplace(bitwise_xor)


def bitwise_not(self: Tensor) -> Tensor:
    """`~x`: bitwise not of an integer tensor, logical not of a bool one."""
    if self.dtype.is_floating_point:
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
        )
    return Tensor._make(~self._data)


# -- all, any: logical reductions ---------------------------------------------------------

# The signatures PyTorch lists when a call fits none: the method's, then the function's.
_LOGICAL_HEADS = ["", "tuple of ints dim = None, bool keepdim = False",
                  "int dim, bool keepdim = False"]
_LOGICAL_FUNCTION_HEADS = ["Tensor input, *, Tensor out = None",
                           "Tensor input, tuple of ints dim = None, bool keepdim = False, *, "
                           "Tensor out = None",
                           "Tensor input, int dim, bool keepdim = False, *, Tensor out = None"]
_ALL_DIMS = object()


def _logical_reduction(np_op, name: str):
    """all/any: whether every (any) element is nonzero, over every dim or along `dim`
    (an int, or a tuple or list of ints; None or () as for sum). A bool result,
    whatever the input's dtype (PyTorch keeps uint8 for uint8, a dtype minigrad does
    not have); never differentiable."""
    def reduce(input: Tensor, *args, dim=_ALL_DIMS, keepdim=False,  # noqa: A002
               out=None, **unknown) -> Tensor:
        if not isinstance(input, Tensor):
            raise combination_error(name, (input, *args), {}, _LOGICAL_FUNCTION_HEADS,
                                    tail=False)
        if out is not None:
            raise NotImplementedError(f"minigrad's {name} takes no out= tensor")
        named = {k: v for k, v in (("dim", dim), ("keepdim", keepdim))
                 if v is not _ALL_DIMS and v is not False}
        named.update(unknown)
        if (len(args) > 2 or unknown
                or builtins.any(k in named for k in ("dim", "keepdim")[:len(args)])):
            raise combination_error(name, args, named, _LOGICAL_HEADS, tail=False)
        if args:
            dim = args[0]
            keepdim = args[1] if len(args) == 2 else keepdim
        ints = isinstance(dim, (tuple, list)) and builtins.all(is_int(d) for d in dim)
        if not (dim is _ALL_DIMS or dim is None or is_int(dim) or ints) or not isinstance(
                keepdim, bool):
            raise combination_error(name, args, named, _LOGICAL_HEADS, tail=False)
        data = input._data
        if dim is _ALL_DIMS or dim is None:
            dims = tuple(range(data.ndim))
        else:
            dims = _dims(dim, data.ndim) if (is_int(dim) or dim) else ()
        return Tensor._make(np.asarray(np_op(data, axis=dims, keepdims=keepdim)))

    reduce.__name__ = reduce.__qualname__ = name
    return reduce


all = _logical_reduction(np.all, "all")  # noqa: A001 - PyTorch's name
all.__doc__ = "Whether every element is nonzero, over every dim or along `dim`: a bool tensor."
any = _logical_reduction(np.any, "any")  # noqa: A001
any.__doc__ = "Whether some element is nonzero, over every dim or along `dim`: a bool tensor."


def allclose(a: Tensor, b: Tensor, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> bool:
    return builtins.bool(np.allclose(a._data, b._data, rtol, atol, equal_nan))


def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002 - PyTorch's names
    """Whether two tensors have the same shape and equal elements (compared after
    type promotion; nan equals nothing)."""
    for i, (arg, t) in enumerate((("input", input), ("other", other))):
        if not isinstance(t, Tensor):
            raise TypeError(f"equal(): argument '{arg}' (position {i + 1}) must be Tensor, "
                            f"not {type_name(t)}")
    return builtins.bool(input._data.shape == other._data.shape
                         and np.array_equal(input._data, other._data))


def equal_method(self: Tensor, other: Tensor) -> bool:
    """`x.equal(y)`: `equal(x, y)`."""
    if not isinstance(other, Tensor):
        raise TypeError(f"equal(): argument 'other' (position 1) must be Tensor, not "
                        f"{type_name(other)}")
    return equal(self, other)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------
# (PyTorch declines `!=` with a numpy array, either way round: Python then compares
# identities, and `t != array` is True.)

# (A number first fits none of PyTorch's signatures: its TypeError lists them.)
_COMPARE_HEADS = ["Tensor input, Tensor other, *, Tensor out = None",
                  "Tensor input, Number other, *, Tensor out = None"]
_BITWISE_HEADS = ["Tensor input, Tensor other, *, Tensor out = None", "Number self, Tensor other",
                  "Tensor input, Number other, *, Tensor out = None"]


def _number_first_bitwise(op):
    """The function form of `&`, `|` or `^`: a number first is PyTorch's `Number self`
    overload, the same op with its operands swapped (they commute)."""
    def fn(input, other):  # noqa: A002 - PyTorch's argument name
        if isinstance(input, Tensor):
            return op(input, other)
        if isinstance(input, (int, builtins.float)) and isinstance(other, Tensor):
            return op(other, input)
        raise combination_error(op.__name__, (input, other), {}, _BITWISE_HEADS, tail=False)

    fn.__name__ = fn.__qualname__ = op.__name__
    return fn


declare("eq", function=tensor_first(eq, "eq", _COMPARE_HEADS), method=eq,
        attributes={"__eq__": operator_of(eq)})
declare("ne", function=tensor_first(ne, "ne", _COMPARE_HEADS), method=ne,
        attributes={"__ne__": operator_of(ne, arrays=False)})
declare("lt", function=tensor_first(lt, "lt", _COMPARE_HEADS), method=lt,
        attributes={"__lt__": operator_of(lt, arrays=False)})
declare("le", function=tensor_first(le, "le", _COMPARE_HEADS), method=le,
        attributes={"__le__": operator_of(le, arrays=False)})
declare("gt", function=tensor_first(gt, "gt", _COMPARE_HEADS), method=gt,
        attributes={"__gt__": operator_of(gt, arrays=False)})
declare("ge", function=tensor_first(ge, "ge", _COMPARE_HEADS), method=ge,
        attributes={"__ge__": operator_of(ge, arrays=False)})
# `&`, `|` and `^` commute, so the reflected forms (`3 & t`) are the same ops.
declare("bitwise_and", function=_number_first_bitwise(bitwise_and), method=bitwise_and,
        inplace=bitwise_and_,
        function_inplace=True,
        attributes={"__and__": operator_of(bitwise_and),
                    "__rand__": operator_of(bitwise_and, arrays=False),
                    "__iand__": operator_of(bitwise_and_)})
declare("bitwise_or", function=_number_first_bitwise(bitwise_or), method=bitwise_or,
        inplace=bitwise_or_,
        function_inplace=True,
        attributes={"__or__": operator_of(bitwise_or),
                    "__ror__": operator_of(bitwise_or, arrays=False),
                    "__ior__": operator_of(bitwise_or_)})
declare("bitwise_xor", function=_number_first_bitwise(bitwise_xor), method=bitwise_xor,
        inplace=bitwise_xor_,
        function_inplace=True,
        attributes={"__xor__": operator_of(bitwise_xor),
                    "__rxor__": operator_of(bitwise_xor, arrays=False),
                    "__ixor__": operator_of(bitwise_xor_)})
declare("bitwise_not", function=bitwise_not, method=True, attributes={"__invert__": bitwise_not})
declare("allclose", function=allclose)
declare("equal", function=equal, method=equal_method)
declare("all", function=all, method=True)
declare("any", function=any, method=True)
