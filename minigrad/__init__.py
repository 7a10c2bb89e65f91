"""minigrad: a small autograd library that behaves like PyTorch.

`import minigrad as torch` and forum snippets about autograd run unchanged: the same
values and gradients, `grad_fn` names, `next_functions`, `_saved_*` attributes,
`_version` numbers and error messages (with "minigrad" where PyTorch says "torch").
"""

from __future__ import annotations

import builtins as _builtins
import re as _re
import sys as _sys

import numpy as _np

from . import _args, _dtype
from ._creation import (
    BoolTensor,
    DoubleTensor,
    FloatTensor,
    LongTensor,
    arange,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    get_rng_state,
    initial_seed,
    linspace,
    manual_seed,
    normal_,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
    tensor,
    uniform_,
    zeros,
    zeros_like,
)
from ._dtype import dtype, get_default_dtype
from ._generator import Generator, default_generator
from .arrays.broadcasting import broadcast_shape as _broadcast_shape
from .arrays.broadcasting import check_inplace_shape as _check_inplace_shape
from .autograd.inplace import check_inplace as _check_inplace
from .autograd.inplace import check_no_overlap as _check_no_overlap
from .autograd.inplace import check_no_partial_overlap as _check_no_partial_overlap
from .autograd.inplace import finish_inplace as _finish_inplace
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops import arithmetic as _ar
from .ops import batched as _bt
from .ops import copies as _cp
from .ops import declaration as _declared
from .ops import einsum as _es
from .ops import indexing as _ix
from .ops import joining as _jn
from .ops import linalg as _la
from .ops import reductions as _rd
from .ops import softmax as _sm
from .ops import statistics as _st
from .ops import unary as _un
from .ops import views as _vw
from .tensor import Size, Tensor, device
from .tensor import as_tensor_arg as _as_tensor_arg
from .tensor import not_an_operand as _not_an_operand

float32 = float = _dtype.float32
float64 = double = _dtype.float64
int64 = long = _dtype.int64
bool = _dtype.bool_  # noqa: A001 - mirrors torch.bool

__version__ = "0.1.0"


# -- comparisons (never differentiable) -------------------------------------------------


# What an operator like `t == x` or `t & x` accepts as `x`; for anything else it
# returns NotImplemented, so Python decides (`t == None` is False, `t < "a"` a TypeError).
# (`float` and `bool` in this module are minigrad's dtypes, so the types come from builtins.)
_OPERANDS = (Tensor, int, _builtins.float, complex, _np.generic, _np.ndarray)


def _compare(np_op, name: str):
    def compare(self: Tensor, other) -> Tensor:
        if isinstance(other, Tensor):
            _broadcast_shape(self._data.shape, other._data.shape)
            other = other._data
        elif isinstance(other, int):
            _dtype.check_int_range(other)
        elif not isinstance(other, _OPERANDS):
            raise TypeError(f"{name}(): argument 'other' must be Tensor or Number, "
                            f"not {type(other).__name__}")
        return Tensor._make(_np.asarray(np_op(self._data, other)))

    compare.__name__ = name
    return compare


eq, ne = _compare(_np.equal, "eq"), _compare(_np.not_equal, "ne")
lt, le = _compare(_np.less, "lt"), _compare(_np.less_equal, "le")
gt, ge = _compare(_np.greater, "gt"), _compare(_np.greater_equal, "ge")


def _operator(fn, arrays: bool = True):
    """`fn` as an operator method: NotImplemented for operands it does not take (and,
    unless `arrays`, for a numpy array: see `_not_with_ndarray`)."""
    takes = _OPERANDS if arrays else tuple(t for t in _OPERANDS if t is not _np.ndarray)
    return lambda self, other: fn(self, other) if isinstance(other, takes) else NotImplemented


def _not_with_ndarray(fn):
    """`fn` as an operator method PyTorch declines for a numpy array: a reflected
    `ndarray + t` (and `-`, `*`, `**`, `&`, ...) or an order comparison either way
    is then a TypeError, as in PyTorch; `t + ndarray`, `ndarray / t` and `==` work."""
    return lambda self, other: NotImplemented if isinstance(other, _np.ndarray) else fn(self, other)


def _bitwise(np_op, name: str):
    """`&`, `|`, `^`: bitwise on integers, logical on bools; never differentiable."""
    def op(self: Tensor, other) -> Tensor:
        other = _as_tensor_arg(other)
        dt = _dtype.result_type(self, other)
        if dt.is_floating_point:
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{dt.type_name}\'')
        if isinstance(other, Tensor):
            _broadcast_shape(self._data.shape, other._data.shape)
            other = other._data.astype(dt.np, copy=False)
        elif other >= 2**63:  # PyTorch reads a uint64-sized int modulo 2**64
            other -= 2**64
        return Tensor._make(_np.asarray(np_op(self._data.astype(dt.np, copy=False), other)))

    op.__name__ = name
    return op


bitwise_and = _bitwise(_np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(_np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(_np.bitwise_xor, "bitwise_xor")


def _bitwise_inplace(op):
    """`t &= x` (and `|=`, `^=`): `op`'s result written into t, which keeps its dtype
    and shape; its version goes up by one, as for every in-place op."""
    def op_(self: Tensor, other) -> Tensor:
        other = _as_tensor_arg(other)
        _check_inplace(self)
        _ar._check_out_dtype(self, _dtype.result_type(self, other))
        if isinstance(other, Tensor):
            _check_inplace_shape(self._data.shape, other._data.shape)
        _check_no_overlap(self)
        _check_no_partial_overlap(self, other)
        self._data[...] = op(self, other)._data
        _finish_inplace(self, None)
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


def _positive(self: Tensor) -> Tensor:
    """`+x`: x itself (refused for bool, as PyTorch does)."""
    if self._data.dtype == _np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def allclose(a: Tensor, b: Tensor, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> bool:
    return _builtins.bool(_np.allclose(a._data, b._data, rtol, atol, equal_nan))


def equal(a: Tensor, b: Tensor) -> bool:
    return _builtins.bool(a._data.shape == b._data.shape and _np.array_equal(a._data, b._data))


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(x: Tensor) -> int:
    return x.numel()


def from_numpy(arr: _np.ndarray) -> Tensor:
    """A tensor sharing memory with a numpy array (float32/float64/int64/bool)."""
    if not isinstance(arr, _np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    _dtype.from_numpy_dtype(arr.dtype)
    return Tensor._make(arr)




# -- the namespace functions -------------------------------------------------------------


def _wrap_number(x) -> Tensor:
    """A Python number as the first argument of `minigrad.add(2, t)`: as in PyTorch, a
    0-d tensor (float64, int64 or bool) that promotes as the number itself would."""
    x = _as_tensor_arg(x)
    if isinstance(x, Tensor):
        return x
    t = Tensor._make(_np.array(x, _dtype.of_number(x).np))
    t._wrapped_number = True
    return t


def _number_first(op):
    """The function form of `op`, which also takes a number first (`minigrad.mul(2, t)`)."""
    def fn(input, other, *args, **kwargs):  # noqa: A002 - PyTorch's argument name
        if not isinstance(input, Tensor):
            input = _wrap_number(input)
        result = op(input, other, *args, **kwargs)
        if result is NotImplemented:  # (the function's `other` comes second)
            raise _not_an_operand(op.__name__, other, position=2)
        return result

    fn.__name__, fn.__qualname__, fn.__doc__ = op.__name__, op.__name__, op.__doc__
    return fn


add, sub, mul, div = (_number_first(op) for op in (_ar.add, _ar.sub, _ar.mul, _ar.div))
subtract, multiply, divide, true_divide = sub, mul, div, div


def pow(input, exponent) -> Tensor:  # noqa: A001,A002 - PyTorch's names
    """input ** exponent; either may be a number (`minigrad.pow(2, t)` is `2 ** t`)."""
    if not isinstance(input, Tensor) and isinstance(exponent, Tensor):
        result = _ar.rpow(exponent, input)
    else:
        result = _ar.pow(input, exponent)
    if result is NotImplemented:
        raise _args.combination_error("pow", (input, exponent), {}, [
            "Tensor input, Tensor exponent, *, Tensor out = None",
            "Number self, Tensor exponent, *, Tensor out = None",
            "Tensor input, Number exponent, *, Tensor out = None"], tail=False)
    return result

# Every declared op (`exp`, `atan2`, ...: see `ops/declaration.py`) under its names.
globals().update(_declared.namespace())
clamp = clip = _un.clamp
round = _un.round
where = _ix.where
masked_fill = _ix.masked_fill
sum, mean, max, min = _rd.sum, _rd.mean, _rd.max, _rd.min
argmax, argmin = _rd.argmax, _rd.argmin
maximum, minimum = _rd.maximum, _rd.minimum
mm, mv, dot, bmm = _la.mm, _la.mv, _la.dot, _bt.bmm
softmax, log_softmax = _sm.softmax, _sm.log_softmax
cat = concat = concatenate = _jn.cat
stack = _jn.stack
einsum, diagonal = _es.einsum, _es.diagonal
var, std, prod, cumsum, norm = _st.var, _st.std, _st.prod, _st.cumsum, _st.norm


def matmul(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """`input @ other` (the function form: a non-tensor `other` is its 2nd argument)."""
    if not isinstance(other, Tensor):
        raise TypeError("matmul(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    return _bt.matmul(input, other)
reshape, flatten, squeeze, unsqueeze = _vw.reshape, _vw.flatten, _vw.squeeze, _vw.unsqueeze
transpose, t, permute = _vw.transpose, _vw.t, _vw.permute
swapaxes = swapdims = _vw.transpose
unbind, split, chunk, clone, narrow, select = (
    _vw.unbind, _vw.split, _vw.chunk, _cp.clone, _vw.narrow, _vw.select,
)


def detach(x: Tensor) -> Tensor:
    return x.detach()


# -- Tensor methods and operators ---------------------------------------------------------


def _attach_methods() -> None:
    T = Tensor
    declared = _declared.namespace()

    def rev(fn):
        return lambda self, other: fn(other, self) if isinstance(other, Tensor) else NotImplemented

    def method(op, name: str | None = None, heads: list | None = None):
        """`op` as a method (`t.add(x)`): the operators take the op itself, which
        returns NotImplemented for an operand it cannot take, so Python can ask the
        other operand; called by name, that is PyTorch's TypeError."""
        name = name or op.__name__

        def call(self, other, *args, **kwargs):
            result = op(self, other, *args, **kwargs)
            if result is NotImplemented:
                if heads:  # (an overloaded op: PyTorch lists its signatures)
                    raise _args.combination_error(name, (other,), {}, heads, tail=False)
                raise _not_an_operand(name, other)
            return result

        call.__name__ = call.__qualname__ = name
        call.__doc__ = op.__doc__
        return call

    def tensors_only(fn):  # (`@` takes no numbers: `t @ 2` is Python's TypeError)
        return lambda self, other: fn(self, other) if isinstance(other, Tensor) else NotImplemented

    methods = {
        "add": method(_ar.add), "sub": method(_ar.sub), "mul": method(_ar.mul),
        "div": method(_ar.div),
        "pow": method(_ar.pow, heads=["Tensor exponent", "Number exponent"]),
        # (the aliases are overloaded in PyTorch: a bad operand lists their signatures)
        "subtract": method(_ar.sub, "subtract", ["Tensor other, *, Number alpha = 1",
                                                 "Number other, Number alpha = 1"]),
        "multiply": method(_ar.mul, "multiply", ["Tensor other", "Number other"]),
        "divide": method(_ar.div, "divide", [
            "Tensor other", "Tensor other, *, str rounding_mode", "Number other",
            "Number other, *, str rounding_mode"]),
        "true_divide": method(_ar.div, "true_divide", ["Tensor other", "Number other"]),
        "add_": method(_ar.add_), "sub_": method(_ar.sub_), "mul_": method(_ar.mul_),
        "div_": method(_ar.div_),
        "pow_": method(_ar.pow_, heads=["Tensor exponent", "Number exponent"]),
        **_declared.methods(),  # (every declared op: exp, exp_, atan2, neg, ...)
        "clamp": _un.clamp, "clip": _un.clamp, "clamp_": _un.clamp_, "clip_": _un.clamp_,
        "round": _un.round, "round_": _un.round_,
        "where": lambda self, condition, other: _ix.where(condition, self, other),
        "masked_fill": _ix.masked_fill, "masked_fill_": _ix.masked_fill_,
        "sum": _rd.sum, "sum_to_size": _rd.sum_to_size, "mean": _rd.mean, "max": _rd.max,
        "min": _rd.min,
        "argmax": argmax, "argmin": argmin, "maximum": maximum, "minimum": minimum,
        "softmax": _sm.softmax_method, "log_softmax": _sm.log_softmax_method,
        "var": _st.var, "std": _st.std, "prod": _st.prod, "cumsum": _st.cumsum,
        "norm": _st.norm, "diagonal": _es.diagonal,
        "matmul": _bt.matmul, "bmm": _bt.bmm, "mm": _la.mm, "mv": _la.mv, "dot": _la.dot,
        "view": _vw.view, "view_as": _vw.view_as, "reshape": _vw.reshape,
        "reshape_as": _vw.reshape_as, "flatten": _vw.flatten, "transpose": _vw.transpose,
        "swapaxes": _vw.transpose, "swapdims": _vw.transpose, "t": _vw.t,
        "permute": _vw.permute, "unsqueeze": _vw.unsqueeze, "squeeze": _vw.squeeze,
        "t_": _vw.t_, "transpose_": _vw.transpose_, "swapaxes_": _vw.transpose_,
        "swapdims_": _vw.transpose_, "unsqueeze_": _vw.unsqueeze_, "squeeze_": _vw.squeeze_,
        "expand": _vw.expand,
        "expand_as": _vw.expand_as, "select": _vw.select, "narrow": _vw.narrow,
        "unbind": _vw.unbind, "split": _vw.split, "chunk": _vw.chunk, "clone": _cp.clone,
        "cpu": _tensor_cpu, "contiguous": _cp.contiguous, "copy_": _cp.copy_, "fill_": _cp.fill_,
        "zero_": _cp.zero_, "to": _to, "type": _type,
        "float": lambda self: _cp.to_dtype(self, _dtype.float32),
        "double": lambda self: _cp.to_dtype(self, _dtype.float64),
        "long": lambda self: _cp.to_dtype(self, _dtype.int64),
        "bool": lambda self: _cp.to_dtype(self, _dtype.bool_),
        "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge,
        "uniform_": uniform_, "normal_": normal_,
        "new_zeros": lambda self, *s, **kw: zeros(*s, dtype=kw.get("dtype", self.dtype)),
        "new_ones": lambda self, *s, **kw: ones(*s, dtype=kw.get("dtype", self.dtype)),
        "new_tensor": lambda self, data, **kw: tensor(data, dtype=kw.get("dtype", self.dtype)),
        "__getitem__": _ix.getitem, "__setitem__": _ix.setitem,
        "__add__": _ar.add, "__radd__": _not_with_ndarray(_ar.add), "__iadd__": _ar.add_,
        "__sub__": _ar.sub, "__rsub__": _not_with_ndarray(_ar.rsub), "__isub__": _ar.sub_,
        "__mul__": _ar.mul, "__rmul__": _not_with_ndarray(_ar.mul), "__imul__": _ar.mul_,
        "__truediv__": _ar.div, "__rtruediv__": _ar.rdiv, "__itruediv__": _ar.div_,
        "__floordiv__": _ar.floor_divide,
        "__rfloordiv__": _not_with_ndarray(_ar.floor_divide),
        "__mod__": _ar.remainder, "__rmod__": _not_with_ndarray(_ar.remainder),
        "floor_divide": _ar.floor_divide, "remainder": _ar.remainder,
        "__pow__": _ar.pow, "__rpow__": _not_with_ndarray(_ar.rpow), "__ipow__": _ar.pow_,
        "__matmul__": tensors_only(_bt.matmul), "__rmatmul__": rev(_bt.matmul),
        "__neg__": declared["neg"], "__abs__": declared["abs"],
        "__pos__": _positive, "positive": _positive,
        # (PyTorch declines `!=` with a numpy array, either way round: Python then
        # compares identities, and `t != array` is True.)
        "__eq__": _operator(eq), "__ne__": _operator(ne, arrays=False),
        "__lt__": _operator(lt, arrays=False), "__le__": _operator(le, arrays=False),
        "__gt__": _operator(gt, arrays=False), "__ge__": _operator(ge, arrays=False),
        "__invert__": bitwise_not, "bitwise_not": bitwise_not,
        "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
        # `&`, `|` and `^` commute, so the reflected forms (`3 & t`) are the same ops.
        "__and__": _operator(bitwise_and), "__rand__": _operator(bitwise_and, arrays=False),
        "__or__": _operator(bitwise_or), "__ror__": _operator(bitwise_or, arrays=False),
        "__xor__": _operator(bitwise_xor), "__rxor__": _operator(bitwise_xor, arrays=False),
        "bitwise_and_": bitwise_and_, "bitwise_or_": bitwise_or_, "bitwise_xor_": bitwise_xor_,
        "__iand__": _operator(bitwise_and_), "__ior__": _operator(bitwise_or_),
        "__ixor__": _operator(bitwise_xor_),
    }
    for name, fn in methods.items():
        setattr(T, name, fn)
    T.T = property(_vw.T)
    T.mT = property(_matrix_transpose)
    T.__getattr__ = _missing_tensor_attribute


def _missing_tensor_attribute(self: Tensor, name: str):
    """Only reached when a Tensor has no attribute `name` (`t.floor_()`)."""
    raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'"
                         f"{_subset_hint(name)}")


def _matrix_transpose(self: Tensor) -> Tensor:
    """`x.mT`: swap the last two dims (matrices only, as in PyTorch)."""
    if self.ndim < 2:
        raise RuntimeError(
            "tensor.mT is only supported on matrices or batches of matrices. "
            f"Got {self.ndim}-D tensor."
        )
    return _vw.transpose(self, -2, -1)


# This module's own `float` and `bool` are dtypes; these are Python's types.
_PYTHON_TYPES = (_builtins.float, _builtins.int, _builtins.bool)


def _tensor_cpu(self: Tensor, memory_format=None) -> Tensor:
    """`x.cpu()`: x itself, already on the only device minigrad has."""
    return self


def _to(self: Tensor, *args, **kwargs) -> Tensor:
    """`to(dtype)` converts; `to("cpu")` is a no-op; any other device is refused."""
    target = kwargs.get("dtype")
    if target is not None and not isinstance(target, _dtype.dtype):
        raise _args.combination_error("to", args, kwargs, _TO_HEADS, tail=False)
    for a in args:
        if isinstance(a, _dtype.dtype):
            target = a
        elif isinstance(a, Tensor):  # `to(other)`: other's dtype (and device: the CPU)
            target = a.dtype
        elif a in _PYTHON_TYPES:  # `float` means float64, as in PyTorch
            target = _dtype.to_dtype(a)
        elif isinstance(a, (str, int, device)) and not isinstance(a, _builtins.bool):
            _check_device(a)
    where = kwargs.get("device")
    if where is not None:
        _check_device(where)
    return self if target is None else _cp.to_dtype(self, target)


_TO_TAIL = ("bool non_blocking = False, bool copy = False, *, "
            "minigrad.memory_format memory_format = None")
_TO_HEADS = [f"minigrad.device device = None, minigrad.dtype dtype = None, {_TO_TAIL}",
             f"minigrad.dtype dtype, {_TO_TAIL}", f"Tensor tensor, {_TO_TAIL}"]
# The device types PyTorch knows by name (only "cpu" is one minigrad has).
_DEVICE_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, "
                 "xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone")


def _check_device(where) -> None:
    """A device argument, read as PyTorch reads it: "cpu" or "cpu:0" is this machine;
    a device index, a malformed string or an unknown type gets PyTorch's error; any
    other device, minigrad's own refusal."""
    if isinstance(where, int):
        raise RuntimeError("Device index must not be negative" if where < 0 else
                           "Cannot access accelerator device when none is available.")
    text = str(where)
    found = _re.fullmatch(r"([a-zA-Z_]+)(?::([1-9]\d*|0))?", text)
    if found is None:
        raise RuntimeError(f"Invalid device string: '{text}'")
    if found.group(1) not in _DEVICE_TYPES.split(", "):
        raise RuntimeError(f"Expected one of {_DEVICE_TYPES} device type at start of device "
                           f"string: {text}")
    if found.group(1) != "cpu":
        raise RuntimeError(f"minigrad runs on the CPU only (got device={where!r})")


def _type(self: Tensor, dtype=None):
    if dtype is None:
        return f"minigrad.{self.dtype.tensor_type}"
    return _cp.to_dtype(self, dtype)


_attach_methods()

_UNSUPPORTED_DTYPES = {
    "float16", "half", "bfloat16", "int32", "int", "int16", "short", "int8", "uint8",
    "complex64", "complex128", "cfloat", "cdouble",
}


def __getattr__(name: str):
    # A clear refusal for the dtypes PyTorch has and minigrad deliberately lacks.
    if name in _UNSUPPORTED_DTYPES:
        raise NotImplementedError(
            f"minigrad supports the dtypes float32, float64, int64 and bool; "
            f"'{name}' is not available"
        )
    raise AttributeError(f"module 'minigrad' has no attribute '{name}'{_subset_hint(name)}")


def _subset_hint(name: str) -> str:
    """What an AttributeError adds for a public name: a PyTorch name minigrad lacks is
    not a typo on the learner's part."""
    if name.startswith("_"):  # (Python, numpy and IPython probe for those)
        return ""
    return " (minigrad has part of PyTorch's API: see the README's list)"


from . import (  # noqa: E402,F401
    _checkpoint,
    accelerator,
    autograd,
    backends,
    cuda,
    linalg,
    nn,
    optim,
    serialization,
    utils,
)
from .serialization import load, save  # noqa: E402

# `minigrad.utils.checkpoint` is `_checkpoint`: it stands above autograd, while the rest
# of `minigrad.utils` sits at the bottom of minigrad's layers (docs/architecture.md).
utils.checkpoint = _checkpoint
_sys.modules["minigrad.utils.checkpoint"] = _checkpoint

__all__ = [
    "Size", "Tensor", "device", "dtype", "float32", "float64", "int64", "bool", "float",
    "double", "long",
    "tensor", "zeros", "ones", "full", "eye", "arange", "randn", "rand", "randint", "empty",
    "linspace", "zeros_like", "ones_like", "full_like", "empty_like", "randn_like",
    "rand_like", "manual_seed", "randperm", "initial_seed", "seed", "get_rng_state",
    "set_rng_state", "Generator", "default_generator", "no_grad", "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_inference_mode_enabled",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "autograd", "nn", "optim",
    "get_default_dtype", "FloatTensor", "DoubleTensor", "LongTensor", "BoolTensor", "cuda",
    "accelerator", "backends", "save", "load", "serialization", "linalg",
]

del annotations  # (the __future__ switch above; not part of the namespace)
